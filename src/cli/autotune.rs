//! `fxray autotune PATH [--json]`: the AscendC autotune table, one row per fused kernel, as the
//! app's Autotune tab shows it. PATH is a folder (debug tree, cache, logs) or one log file.

use super::emit;
use crate::app::autotune::build_report;
use crate::error::{Error, Result};
use crate::model::autotune::AutotuneReport;
use crate::sources::load;
use std::fmt::Write;
use std::path::Path;

pub fn run(path: &Path, json: bool) -> Result<()> {
    let index = load::index(path)?;
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
        let internal = |e: serde_json::Error| Error::Internal(e.to_string());
        let mut s = serde_json::to_string_pretty(&report).map_err(internal)?;
        s.push('\n');
        s
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
