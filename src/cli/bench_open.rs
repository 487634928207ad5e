//! `fxray bench open TREE…`: the real app, headless, from start to the first frame that draws a
//! graph and on to the open phase complete (every pass read, laid out, folded, diffed) and the
//! tree's facts in, with the CPU spent and the peak memory by then. Each round runs in a child
//! process of its own, so one round's memory is not the next one's; several trees are measured
//! side by side, with each figure's ratio to the first tree's.

use super::measure::{median, min};
use crate::error::{Error, Result};
use crate::platform::self_usage;
use crate::ui::Fxray;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// What one open measured.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Round {
    pub first_s: f64,
    first_cpu_s: f64,
    pub ready_s: f64,
    ready_cpu_s: f64,
    peak_mib: f64,
    /// `sample()` of [`measure`] at the first graph and when ready (bench remote: bytes in).
    pub first_sample: u64,
    pub ready_sample: u64,
}

const KEYS: [&str; 5] = [
    "first_graph_s",
    "first_graph_cpu_s",
    "ready_s",
    "ready_cpu_s",
    "peak_mib",
];

impl Round {
    fn values(&self) -> [f64; 5] {
        [
            self.first_s,
            self.first_cpu_s,
            self.ready_s,
            self.ready_cpu_s,
            self.peak_mib,
        ]
    }

    fn parse(line: &str) -> Option<Round> {
        let mut v = [None; 5];
        for kv in line.split_whitespace() {
            let (k, x) = kv.split_once('=')?;
            if let Some(i) = KEYS.iter().position(|&key| key == k) {
                v[i] = x.parse::<f64>().ok();
            }
        }
        Some(Round {
            first_s: v[0]?,
            first_cpu_s: v[1]?,
            ready_s: v[2]?,
            ready_cpu_s: v[3]?,
            peak_mib: v[4]?,
            ..Round::default()
        })
    }
}

/// `once`: measure one open in this process and print its line (what each child runs).
pub fn run(trees: &[PathBuf], rounds: usize, once: bool, timeout: Duration) -> Result<()> {
    if once {
        let [tree] = trees else {
            return Err(Error::user("--once takes one tree"));
        };
        let r = measure(tree, timeout, &|| 0)?;
        let line: Vec<String> = KEYS
            .iter()
            .zip(r.values())
            .map(|(k, v)| format!("{k}={v:.3}"))
            .collect();
        println!("{}", line.join(" "));
        return Ok(());
    }
    let exe = std::env::current_exe()
        .map_err(|e| Error::Internal(format!("cannot find fxray's own binary: {e}")))?;
    let mut best: Vec<[f64; 5]> = Vec::new();
    for tree in trees {
        let mut all: Vec<Round> = Vec::with_capacity(rounds);
        for _ in 0..rounds {
            let out = Command::new(&exe)
                .args(["bench", "open", "--once", "--timeout"])
                .arg(timeout.as_secs().to_string())
                .arg(tree)
                .output()
                .map_err(|e| Error::Internal(format!("running {}: {e}", exe.display())))?;
            let text = String::from_utf8_lossy(&out.stdout);
            let round = text.lines().rev().find_map(Round::parse).ok_or_else(|| {
                Error::user(format!(
                    "{}: the open did not finish: {}",
                    tree.display(),
                    String::from_utf8_lossy(&out.stderr).trim()
                ))
            })?;
            all.push(round);
        }
        let b = summarise(tree, &all);
        best.push(b);
    }
    if best.len() > 1 {
        for (tree, b) in trees.iter().zip(&best).skip(1) {
            let ratios: Vec<String> = KEYS
                .iter()
                .zip(b.iter().zip(&best[0]))
                .map(|(k, (x, base))| format!("{k}={:.2}x", x / base.max(1e-9)))
                .collect();
            println!("ratio {} / first: {}", tree.display(), ratios.join(" "));
        }
    }
    Ok(())
}

/// Prints the best and median of each figure; returns the best.
fn summarise(tree: &Path, all: &[Round]) -> [f64; 5] {
    let mut out = [0.0; 5];
    let mut line = vec![format!("tree={} rounds={}", tree.display(), all.len())];
    for (i, k) in KEYS.iter().enumerate() {
        let mut v: Vec<Duration> = all
            .iter()
            .map(|r| Duration::from_secs_f64(r.values()[i].max(0.0)))
            .collect();
        let b = min(&v).as_secs_f64();
        let m = median(&mut v).as_secs_f64();
        out[i] = b;
        line.push(format!("{k}={b:.3} (median {m:.3})"));
    }
    println!("{}", line.join(" "));
    out
}

/// Opens `tree` in a headless window and paints frames as the window would while it loads, until
/// the phase is complete and the tree's facts are in. `sample` is read at the first graph and
/// when ready.
pub(super) fn measure(tree: &Path, timeout: Duration, sample: &dyn Fn() -> u64) -> Result<Round> {
    let start = Instant::now();
    let cpu0 = self_usage().cpu;
    let mut fx = Fxray::opening(tree);
    let ctx = egui::Context::default();
    let input = || egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(1600.0, 1000.0),
        )),
        ..Default::default()
    };
    let mut round = Round::default();
    let mut first = false;
    loop {
        let mut out = ctx.run_ui(input(), |ui| fx.ui(ui));
        // No GPU: the frame's textures and shapes are dropped, as `bench frame` does.
        out.textures_delta.clear();
        let now = (
            start.elapsed().as_secs_f64(),
            (self_usage().cpu - cpu0).as_secs_f64(),
        );
        let g = fx.view.graph();
        if !first && (g.box_count() > 0 || g.counts().1 > 0) {
            first = true;
            (round.first_s, round.first_cpu_s) = now;
            round.first_sample = sample();
        }
        let complete = fx.app.phase.as_ref().is_some_and(|p| p.complete())
            && fx.app.workspace.as_ref().is_some_and(|w| w.facts_done);
        if first && complete {
            (round.ready_s, round.ready_cpu_s) = now;
            round.ready_sample = sample();
            break;
        }
        if let Some(e) = &fx.app.error {
            return Err(Error::user(format!("{}: {e}", tree.display())));
        }
        if start.elapsed() > timeout {
            return Err(Error::user(format!(
                "{}: not ready after {} s",
                tree.display(),
                timeout.as_secs()
            )));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    round.peak_mib = self_usage().peak_mib();
    Ok(round)
}
