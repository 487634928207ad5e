//! `fxray autotune PATH [--json]`: the AscendC autotune table, one row per fused kernel, as the
//! app's Autotune tab shows it. PATH is a folder (debug tree, cache, logs) or one log file.

use super::emit;
use crate::error::{Error, Result};
use crate::model::autotune::AutotuneReport;
use crate::pipeline::autotune::build_report;
use std::fmt::Write;
use std::path::Path;

pub fn run(path: &Path, json: bool) -> Result<()> {
    let index = crate::pipeline::tree::index(path)?;
    let report = build_report(Some(&index), None);
    if report.kernels.is_empty() {
        return Err(Error::user(format!(
            "{}: no AscendC autotune evidence found (looked for autofused_* folders, \
             cache entries with optimize_tiling and inductor_asc log lines in *.log, *.out, \
             console*, stdout*)",
            path.display()
        )));
    }
    let text = if json {
        super::json_text(&report)?
    } else {
        render(&report)
    };
    emit(&text, None)
}

/// The table, then what is missing or wrong, kernel by kernel.
pub fn render(report: &AutotuneReport) -> String {
    let mut out = String::new();
    let s = &report.sources;
    let logs = if s.logs.is_empty() {
        "no log".to_string()
    } else {
        s.logs.join(", ")
    };
    let _ = writeln!(
        out,
        "{} fused kernels ({logs}; {} debug folders; {} cache entries)\n",
        report.kernels.len(),
        s.debug_dirs,
        s.cache_entries
    );
    let width = report
        .kernels
        .iter()
        .map(|k| k.name.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let _ = writeln!(
        out,
        "{:<width$}  {:<5}  {:>10}  {:>14}  {:>10}  {:>8}  key",
        "kernel", "path", "candidates", "winner", "worst", "speed-up"
    );
    for k in &report.kernels {
        let worst = k
            .best_worst_us()
            .map_or_else(|| "-".into(), |(_, w)| format!("{w:.2} us"));
        let _ = writeln!(
            out,
            "{:<width$}  {:<5}  {:>10}  {:>14}  {:>10}  {:>8}  {}",
            k.name,
            k.path.label(),
            k.candidates_label(),
            k.winner_label(),
            worst,
            k.speedup_label(),
            k.key_check_label()
        );
    }
    let with_problems: Vec<_> = report
        .kernels
        .iter()
        .filter(|k| !k.problems.is_empty())
        .collect();
    if !with_problems.is_empty() || !report.problems.is_empty() {
        out.push_str("\nproblems:\n");
        for p in &report.problems {
            let _ = writeln!(out, "  {p}");
        }
        for k in with_problems {
            for p in &k.problems {
                let _ = writeln!(out, "  {}: {p}", k.name);
            }
        }
    }
    out
}

/// `fxray bench autotune`: parse + join time of a log, best of `rounds`. The last line is
/// `autotune_s=<s> mb=<MB> mb_per_s=<MB/s> kernels=<n>`.
pub fn bench(path: Option<&Path>, kernels: usize, rounds: usize) -> Result<()> {
    let text = match path {
        Some(p) => crate::sources::read::read_text(p)?.text,
        None => synthetic_console(kernels),
    };
    let mut best = f64::INFINITY;
    let mut found = 0;
    for _ in 0..rounds {
        let t = std::time::Instant::now();
        let report = build_report(None, Some(&text));
        best = best.min(t.elapsed().as_secs_f64());
        found = report.kernels.len();
    }
    let mb = text.len() as f64 / 1e6;
    let out = format!(
        "autotune_s={best:.4} mb={mb:.1} mb_per_s={:.0} kernels={found}\n",
        mb / best
    );
    emit(&out, None)
}

/// A console of `kernels` Top-8 autotunes in the documented format, each followed by 200 lines
/// of other output (training steps), as a long run prints.
fn synthetic_console(kernels: usize) -> String {
    let mut s = String::new();
    for i in 0..kernels {
        let name = format!("autofused_add_mul_{:032x}", i * 7919 + 1);
        let entry = format!("/home/dev/cache/ascendc/host_h/{name}/{:032x}", i + 5);
        let _ = writeln!(
            s,
            "[2026-01-01 12:00:00] [RANK0] [INFO] Static compile {name}, choice top 8 from 32"
        );
        let _ = writeln!(
            s,
            "[2026-01-01 12:00:05] [RANK0] [INFO] Autotune completed {entry}, best kernel index: {}, detail:",
            i % 8
        );
        for c in 0..8 {
            let _ = writeln!(
                s,
                "[2026-01-01 12:00:05] [RANK0] [INFO] Kernel {entry}/static_kernel/{:032x}/kernel.so: Timing = {}.{:02} us",
                i * 8 + c,
                10 + (i + c) % 13,
                c * 7 % 100
            );
        }
        for step in 0..200 {
            let _ = writeln!(
                s,
                "step {step} loss 0.{:04} lr 1e-4 tokens/s 12345.6",
                (i + step) % 9999
            );
        }
    }
    s
}
