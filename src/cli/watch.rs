//! `fxray watch PATH [--json]`: one line per change while a compile writes into PATH, until
//! interrupted (or `--count` changes). The same watcher service the app uses, so its output is
//! also how the app's latency is measured.

use crate::error::{Error, Result};
use crate::sources::discover;
use crate::sources::watch::{Change, WatchConfig, WatchEvent, Watcher};
use std::io::Write;
use std::path::Path;
use std::sync::mpsc::channel;

pub struct WatchArgs {
    pub json: bool,
    pub poll: bool,
    /// Stop after this many changes.
    pub count: Option<usize>,
}

pub fn run(path: &Path, args: &WatchArgs) -> Result<()> {
    if crate::sources::vfs::is_archived(path) {
        return Err(Error::user(format!(
            "{}: an archive is read once, not watched; `fxray summary {}` shows what it holds",
            path.display(),
            path.display()
        )));
    }
    let set = discover::scan(path)?;
    let root = set.abs_root.clone();
    let mut config = WatchConfig::default();
    if args.poll {
        config.force_poll = Some("--poll".into());
    }
    let (tx, rx) = channel();
    let _watcher = Watcher::start(set, config, move |ev| {
        let _ = tx.send(ev);
    });
    let mut printed = 0usize;
    for ev in rx {
        match ev {
            WatchEvent::Started(backend) => {
                eprintln!("fxray: {backend} {} (Ctrl-C stops)", root.display());
            }
            WatchEvent::Failed(e) => return Err(Error::User(e)),
            WatchEvent::Update(u) => {
                let mut out = std::io::stdout().lock();
                for c in &u.changes {
                    let line = if args.json {
                        json_line(c, u.index.role_of(&c.path))
                    } else {
                        text_line(c, u.index.role_of(&c.path), &root)
                    };
                    // A closed pipe ends the watch quietly.
                    if writeln!(out, "{line}").and_then(|_| out.flush()).is_err() {
                        return Ok(());
                    }
                    printed += 1;
                    if args.count.is_some_and(|n| printed >= n) {
                        return Ok(());
                    }
                }
            }
        }
    }
    Ok(())
}

fn text_line(c: &Change, role: &str, root: &Path) -> String {
    let shown = c.path.strip_prefix(root).unwrap_or(&c.path);
    format!(
        "{} {:<8} {:<12} {}",
        humantime::format_rfc3339_millis(c.time),
        c.kind.as_str(),
        role,
        shown.display()
    )
}

fn json_line(c: &Change, role: &str) -> String {
    serde_json::json!({
        "time": humantime::format_rfc3339_millis(c.time).to_string(),
        "kind": c.kind,
        "role": role,
        "path": crate::sources::remote::display(&c.path),
    })
    .to_string()
}
