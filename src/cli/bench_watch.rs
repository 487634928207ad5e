//! `fxray bench watch`: how long after a pass file is written it is in the watcher's index
//! (and, later, settled), over files written at a steady rate into a temp folder, with the
//! same watcher service the app uses.

use crate::error::{Error, Result};
use crate::sources::discover;
use crate::sources::watch::{ChangeKind, WatchConfig, WatchEvent, Watcher};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

pub fn run(files: usize, rate: f64, poll: bool) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("fxray-bench-watch-{}", std::process::id()));
    let result = measure(&dir, files.max(1), rate.max(0.1), poll);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn measure(dir: &std::path::Path, files: usize, rate: f64, poll: bool) -> Result<()> {
    let io = |p: &std::path::Path, e: std::io::Error| Error::io(p, &e);
    let phase = dir.join(
        "torch_compile_debug/run_2026_01_01_12_00_00_000001-pid_1/npugraph_ex/model__0/forward",
    );
    std::fs::create_dir_all(&phase).map_err(|e| io(&phase, e))?;
    let text = sample_pass();
    let mut config = WatchConfig::default();
    if poll {
        config.force_poll = Some("--poll".into());
    }
    let (tx, rx) = channel();
    let _watcher = Watcher::start(discover::scan(dir)?, config, move |ev| {
        let _ = tx.send((Instant::now(), ev));
    });
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok((_, WatchEvent::Started(b))) => println!("backend: {b}"),
        Ok((_, WatchEvent::Failed(e))) => return Err(Error::user(e)),
        _ => return Err(Error::user("the watcher did not start")),
    }
    let period = Duration::from_secs_f64(1.0 / rate);
    let mut written: HashMap<PathBuf, Instant> = HashMap::new();
    let mut seen = Seen::default();
    let start = Instant::now();
    for i in 0..files {
        let due = start + period * i as u32;
        if let Some(d) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
        let p = phase.join(format!(
            "{:03}_aot_forward_graph_after_bench_{i}.txt",
            i + 1
        ));
        std::fs::write(&p, &text).map_err(|e| io(&p, e))?;
        written.insert(p, Instant::now());
        seen.take(&rx, Duration::ZERO);
    }
    // Let the last ones arrive.
    let deadline = Instant::now() + Duration::from_secs(10);
    while seen.settled.len() < files && Instant::now() < deadline {
        seen.take(&rx, Duration::from_millis(50));
    }
    let lat = |seen: &HashMap<PathBuf, Instant>| -> Vec<Duration> {
        let mut v: Vec<Duration> = written
            .iter()
            .filter_map(|(p, w)| seen.get(p).map(|s| s.saturating_duration_since(*w)))
            .collect();
        v.sort();
        v
    };
    let (a, s) = (lat(&seen.indexed), lat(&seen.settled));
    println!("files={files} rate_per_s={rate}");
    for (name, v) in [("indexed", &a), ("settled", &s)] {
        if v.is_empty() {
            println!("{name}: none seen");
            continue;
        }
        println!(
            "{name}: seen={} median_ms={:.0} p90_ms={:.0} max_ms={:.0}",
            v.len(),
            v[v.len() / 2].as_secs_f64() * 1e3,
            v[v.len() * 9 / 10].as_secs_f64() * 1e3,
            v[v.len() - 1].as_secs_f64() * 1e3,
        );
    }
    if a.len() < files {
        return Err(Error::user(format!(
            "only {} of {files} files reached the index",
            a.len()
        )));
    }
    Ok(())
}

/// When each file was first in the index, and when it settled (as the watcher's sink saw it).
#[derive(Default)]
struct Seen {
    indexed: HashMap<PathBuf, Instant>,
    settled: HashMap<PathBuf, Instant>,
}

impl Seen {
    fn take(&mut self, rx: &Receiver<(Instant, WatchEvent)>, wait: Duration) {
        while let Ok((at, ev)) = rx.recv_timeout(wait) {
            let WatchEvent::Update(u) = ev else { continue };
            for c in u.changes {
                match c.kind {
                    ChangeKind::Added if u.index.role_of(&c.path) == "pass" => {
                        self.indexed.entry(c.path).or_insert(at);
                    }
                    ChangeKind::Settled => {
                        self.settled.entry(c.path).or_insert(at);
                    }
                    _ => {}
                }
            }
        }
    }
}

/// A real pass from the bundled sample, so the files look like what a compile writes.
fn sample_pass() -> Vec<u8> {
    let p = crate::pipeline::sample::sample_path()
        .join("torch_compile_debug/run_2026_11_29_12_04_56_192145-pid_3064/npugraph_ex/model__0/forward/000_aot_forward_graph.txt");
    std::fs::read(p).unwrap_or_else(|_| b"class GraphModule(torch.nn.Module):\n".to_vec())
}
