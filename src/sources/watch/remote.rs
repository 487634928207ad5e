//! Watching a tree on a server: its agent watches it there (OS events or polling, as a local
//! watcher would) and streams the changes; here they are applied to the file set and the index
//! rebuilt, so the app sees the same `WatchEvent`s as for a local folder.
//!
//! A dropped link is retried every second; once back, one walk of the tree finds what changed
//! meanwhile.

use super::tracker::{Change, ChangeKind};
use super::{Backend, Update, WatchEvent, index_of};
use crate::sources::discover::{self, FileSet};
use crate::sources::remote::proto::{Reply, Request, WatchNews};
use crate::sources::remote::{self, target};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, SystemTime};

pub(super) fn run(mut set: FileSet, stop: &AtomicBool, sink: &dyn Fn(WatchEvent)) {
    let Some((host, root)) = target::split(&set.abs_root) else {
        return;
    };
    let authority = host.authority();
    let mut names = HashMap::new();
    let mut ever_linked = false;
    while !stop.load(Ordering::Relaxed) {
        let link = match remote::link(&host) {
            Ok(l) => l,
            // A link its owner closed is not coming back.
            Err(e) if !ever_linked || matches!(e, remote::RemoteError::Closed { .. }) => {
                sink(WatchEvent::Failed(e.to_string()));
                return;
            }
            Err(_) => {
                std::thread::sleep(Duration::from_secs(1));
                continue;
            }
        };
        ever_linked = true;
        let Ok((id, rx)) = link.stream(Request::Watch {
            root: root.to_string(),
        }) else {
            continue;
        };
        loop {
            if stop.load(Ordering::Relaxed) {
                link.cancel(id);
                return;
            }
            let news = match rx.recv_timeout(Duration::from_millis(100)) {
                Ok((Reply::Watch(news), _)) => news,
                Ok((Reply::Failed { message, .. }, _)) => WatchNews::Failed(message),
                Ok(_) => continue,
                Err(RecvTimeoutError::Timeout) => continue,
                // The link dropped: connect again and catch up.
                Err(RecvTimeoutError::Disconnected) => break,
            };
            match news {
                WatchNews::Started(how) => {
                    sink(WatchEvent::Started(Backend::Remote {
                        host: authority.clone(),
                        how,
                    }));
                    // What changed between the caller's walk (or the link's drop) and now.
                    if let Ok(now) = discover::scan(&set.abs_root) {
                        let changes = catch_up(&mut set, &now);
                        if !changes.is_empty() {
                            let index = index_of(&set, &mut names, &changes);
                            sink(update(index, changes, Vec::new()));
                        }
                    }
                }
                WatchNews::Changes { changes, writing } => {
                    let changes = apply(&mut set, &host, changes);
                    let writing = writing
                        .iter()
                        .map(|p| target::mount_path(&host, p))
                        .collect();
                    let index = index_of(&set, &mut names, &changes);
                    sink(update(index, changes, writing));
                }
                WatchNews::Failed(m) => {
                    sink(WatchEvent::Failed(m));
                    return;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn update(
    index: crate::model::index::DebugIndex,
    changes: Vec<Change>,
    writing: Vec<PathBuf>,
) -> WatchEvent {
    WatchEvent::Update(Box::new(Update {
        index,
        changes,
        writing,
    }))
}

fn kind_of(s: &str) -> Option<ChangeKind> {
    [
        ChangeKind::Added,
        ChangeKind::Modified,
        ChangeKind::Removed,
        ChangeKind::Settled,
    ]
    .into_iter()
    .find(|k| k.as_str() == s)
}

/// The agent's changes applied to `set`, as changes of mount paths.
fn apply(set: &mut FileSet, host: &target::Host, wire: Vec<(String, String, u64)>) -> Vec<Change> {
    let time = SystemTime::now();
    let mut out = Vec::with_capacity(wire.len());
    for (kind, path, size) in wire {
        let Some(kind) = kind_of(&kind) else {
            continue;
        };
        let path = target::mount_path(host, &path);
        match kind {
            ChangeKind::Removed => {
                set.remove(&path);
            }
            _ => set.insert(path.clone(), size),
        }
        out.push(Change { kind, path, time });
    }
    out
}

/// What differs between `set` and a fresh walk `now`, applied to `set`. Files found whole are
/// reported added and settled: nothing is known of their writer.
fn catch_up(set: &mut FileSet, now: &FileSet) -> Vec<Change> {
    let time = SystemTime::now();
    let mut out = Vec::new();
    let gone: Vec<PathBuf> = set
        .files
        .keys()
        .filter(|p| !now.files.contains_key(*p))
        .cloned()
        .collect();
    for path in gone {
        set.remove(&path);
        out.push(Change {
            kind: ChangeKind::Removed,
            path,
            time,
        });
    }
    for (path, info) in &now.files {
        let kind = match set.files.get(path) {
            None => ChangeKind::Added,
            Some(f) if f.size != info.size => ChangeKind::Modified,
            Some(_) => continue,
        };
        set.insert(path.clone(), info.size);
        for kind in [kind, ChangeKind::Settled] {
            out.push(Change {
                kind,
                path: path.clone(),
                time,
            });
        }
    }
    out
}
