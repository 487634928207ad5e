//! `fxray compiles PATH [--json]`: the compile story of a run from torch's trace log — one row
//! per compile attempt, its graph breaks, restarts, failures and recompiles, and the `model__N`
//! each attempt's graph went to.

use crate::analysis::{compile_rows, compiles};
use crate::error::Result;
use crate::pipeline::compiles::{Story, stories};
use serde_json::{Value, json};
use std::path::Path;

pub fn run(path: &Path, json: bool) -> Result<()> {
    let stories = stories(path)?;
    let text = if json {
        let v = to_json(&stories);
        super::json_text(&v)?
    } else {
        to_text(&stories)
    };
    super::emit(&text, None)
}

fn opt_loc(l: Option<crate::model::compile::Loc>) -> Value {
    l.map_or(Value::Null, |l| l.to_string().into())
}

/// Everything wrong across the files: ranks claimed by several files.
fn clashes(stories: &[Story]) -> Vec<String> {
    let traces: Vec<(&Path, &crate::model::compile::CompileTrace)> = stories
        .iter()
        .map(|s| (s.path.as_path(), &s.trace))
        .collect();
    compile_rows::rank_clashes(&traces)
}

/// The JSON of `fxray compiles --json`: one row per compile attempt (`compiles`), the graph
/// breaks, recompiles, restarts and failures, every joined `model__N` with the attempt that
/// wrote it and its note, and per trace file what was read and what is wrong with it.
pub fn to_json(stories: &[Story]) -> Value {
    let mut rows_out = Vec::new();
    let mut breaks_out = Vec::new();
    let mut recompiles_out = Vec::new();
    let mut restarts_out = Vec::new();
    let mut failures_out = Vec::new();
    let mut models_out = Vec::new();
    let mut traces_out = Vec::new();
    for s in stories {
        let t = &s.trace;
        let rank = t.rank.map_or(Value::Null, Value::from);
        let file = s.path.display().to_string();
        for row in compile_rows::attempt_rows(&s.path, t, &s.links) {
            if let Some(r) = &row.restart_reason {
                restarts_out.push(json!({
                    "compile": row.id, "attempt": row.attempt, "label": row.label,
                    "reason": r, "rank": rank, "trace": file,
                }));
            }
            rows_out.push(serde_json::to_value(&row).unwrap_or(Value::Null));
        }
        for (c, b) in t.graph_breaks() {
            breaks_out.push(json!({
                "compile": c.id(),
                "attempt": b.attempt,
                "location": opt_loc(b.location.clone()),
                "reason": b.reason,
                "title": b.title(),
                "inferred": b.inferred,
                "rank": rank,
                "trace": file,
            }));
        }
        for c in t.recompiles() {
            recompiles_out.push(json!({
                "compile": c.id(),
                "reason": c.recompile_reason,
                "rank": rank,
                "trace": file,
            }));
        }
        for c in t.compiles.iter().filter(|c| c.fail_type().is_some()) {
            failures_out.push(json!({
                "compile": c.id(),
                "label": c.label(),
                "type": c.fail_type(),
                "reason": c.fail_reason(),
                "location": opt_loc(c.fail_location()),
                "rank": rank,
                "trace": file,
            }));
        }
        for l in &s.links {
            models_out.push(json!({
                "model": l.model,
                "run": l.run,
                "compile": t.compiles.get(l.compile).map(|c| c.id()),
                "attempt": l.attempt,
                "note": compiles::model_note(t, l),
            }));
        }
        let problems: Vec<String> = t
            .problems
            .iter()
            .map(|(line, why)| format!("line {line}: {why}"))
            .collect();
        traces_out.push(json!({
            "path": file,
            "rank": rank,
            "rank_in_name": t.rank_in_name,
            "ranks_in_records": t.ranks_in_records,
            "pid": t.pid,
            "torch": t.torch_version,
            "lines": t.lines,
            "compiles": t.compiles.len(),
            "attempts": t.compiles.iter().map(|c| c.attempt as usize + 1).sum::<usize>(),
            "spans": t.spans.len(),
            "kinds": t.kinds,
            "problems": t.problems.len() + t.more_problems,
            "problem_lines": problems,
            "md5_mismatches": t.md5_mismatches,
            "warnings": t.rank_warnings(),
            "artifacts_without_compile": t.global_artifacts.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(),
            "stopped": t.stopped,
        }));
    }
    json!({
        "compiles": rows_out,
        "graph_breaks": breaks_out,
        "recompiles": recompiles_out,
        "restarts": restarts_out,
        "failures": failures_out,
        "models": models_out,
        "traces": traces_out,
        "problems": clashes(stories),
    })
}

fn to_text(stories: &[Story]) -> String {
    use std::fmt::Write;
    let mut o = String::new();
    for why in clashes(stories) {
        let _ = writeln!(o, "warning: {why}");
    }
    for s in stories {
        let t = &s.trace;
        let _ = writeln!(
            o,
            "{}{}: {} compiles, {} graph breaks, {} recompiles",
            s.path.display(),
            t.rank.map(|r| format!(" (rank {r})")).unwrap_or_default(),
            t.compiles.len(),
            t.graph_breaks().len(),
            t.recompiles().count()
        );
        if let Some(why) = &t.stopped {
            let _ = writeln!(o, "  stopped: {why}");
        }
        for why in t.rank_warnings() {
            let _ = writeln!(o, "  warning: {why}");
        }
        for (line, why) in &t.problems {
            let _ = writeln!(o, "  line {line}: {why}");
        }
        if t.more_problems > 0 {
            let _ = writeln!(o, "  … and {} more problem lines", t.more_problems);
        }
        for row in compile_rows::attempt_rows(&s.path, t, &s.links) {
            let model = row
                .model
                .as_ref()
                .map(|m| format!(" → {m}"))
                .unwrap_or_default();
            let time = row.time_s.map(|t| format!(" {t:.3} s")).unwrap_or_default();
            let short = row
                .location
                .as_deref()
                .map(crate::model::fx::file_name)
                .unwrap_or_default();
            let _ = writeln!(
                o,
                "  {:<9} {:<11} {} ({short}){time}{model}",
                row.label,
                row.status.label(),
                row.co_name.as_deref().unwrap_or("?"),
            );
            if let Some(r) = &row.restart_reason {
                let first = crate::model::compile::first_line(r);
                let _ = writeln!(o, "            restarted: {first}");
                continue;
            }
            let _ = writeln!(o, "            why: {}", row.why);
            let c = &t.compiles[row.compile];
            for b in &c.breaks {
                let at = b.location.as_ref().map_or("?".into(), |l| l.to_string());
                let how = if b.inferred {
                    " (from the resume frame)"
                } else {
                    ""
                };
                let _ = writeln!(o, "            graph break at {at}{how}: {}", b.title());
            }
            if let (Some(ty), Some(r)) = (&row.fail_type, &row.fail_reason) {
                let at = row
                    .fail_location
                    .as_ref()
                    .map(|l| format!(" at {l}"))
                    .unwrap_or_default();
                let first = r.lines().next().unwrap_or(r);
                let _ = writeln!(o, "            failed{at}: {ty}: {first}");
            }
        }
    }
    o
}
