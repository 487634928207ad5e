//! `fxray compiles PATH [--json]`: the compile story of a run from torch's trace log — one row
//! per compile attempt, its graph breaks, restarts, failures and recompiles, and the `model__N`
//! each attempt's graph went to.
//! `fxray bench trace FILE`: parse throughput of a trace log.

use crate::analysis::{compile_rows, compiles};
use crate::error::{Error, Result};
use crate::pipeline::compiles::{Story, stories};
use crate::sources::trace_log;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Instant;

pub fn run(path: &Path, json: bool) -> Result<()> {
    let stories = stories(path)?;
    let text = if json {
        let v = to_json(&stories);
        serde_json::to_string_pretty(&v).map_err(|e| Error::Internal(e.to_string()))? + "\n"
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
                .map(|l| l.rsplit(['/', '\\']).next().unwrap_or(l))
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

/// `fxray bench trace FILE`: read + parse time, best of `rounds`. With `grow_mb`, FILE is
/// first repeated (frame ids renumbered, so every copy is new compiles) into a trace of that
/// size in a temp folder. With `tlparse`, that binary runs on the same file, best of `rounds`.
pub fn bench(
    file: &Path,
    rounds: usize,
    grow_mb: Option<u64>,
    tlparse: Option<&Path>,
) -> Result<()> {
    let tmp = std::env::temp_dir().join(format!("fxray-bench-trace-{}", std::process::id()));
    let result = (|| {
        let file = match grow_mb {
            Some(mb) => grow(file, mb, &tmp)?,
            None => file.to_path_buf(),
        };
        bench_file(&file, rounds, tlparse, &tmp)
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

fn bench_file(file: &Path, rounds: usize, tlparse: Option<&Path>, tmp: &Path) -> Result<()> {
    let size = std::fs::metadata(file)
        .map_err(|e| Error::io(file, &e))?
        .len();
    let mut best = f64::INFINITY;
    let mut compiles = 0;
    let mut spans = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        let trace = trace_log::load(file)?;
        best = best.min(t.elapsed().as_secs_f64());
        compiles = trace.compiles.len();
        spans = trace.spans.len();
    }
    println!("file={}", file.display());
    println!("bytes={size}");
    println!("compiles={compiles} spans={spans}");
    println!(
        "fxray_parse_s={best:.4} mb_per_s={:.1}",
        size as f64 / 1e6 / best.max(1e-9)
    );
    if let Some(bin) = tlparse {
        let out = tmp.join("tl_out");
        let mut tl_best = f64::INFINITY;
        for _ in 0..rounds {
            let t = Instant::now();
            let st = std::process::Command::new(bin)
                .arg(file)
                .arg("-o")
                .arg(&out)
                .args(["--overwrite", "--no-browser"])
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .map_err(|e| Error::user(format!("{}: {e}", bin.display())))?;
            tl_best = tl_best.min(t.elapsed().as_secs_f64());
            if !st.success() {
                println!("tlparse_exit={st}");
            }
        }
        println!(
            "tlparse_s={tl_best:.4} mb_per_s={:.1}",
            size as f64 / 1e6 / tl_best.max(1e-9)
        );
        println!("fxray_vs_tlparse={:.1}x", tl_best / best.max(1e-9));
    }
    Ok(())
}

/// Repeats `file` until it holds `mb` MB, adding a multiple of 100,000 to every `frame_id`
/// (in headers and `compile_id` args) of each copy.
fn grow(file: &Path, mb: u64, tmp: &Path) -> Result<PathBuf> {
    let text = crate::sources::read::read_text(file)?.text;
    if text.is_empty() {
        return Err(Error::user(format!("{}: empty trace", file.display())));
    }
    std::fs::create_dir_all(tmp).map_err(|e| Error::io(tmp, &e))?;
    let out = tmp.join("dedicated_log_torch_trace_grown.log");
    let mut buf = String::with_capacity((mb * 1_000_000) as usize + text.len());
    let mut copy = 0u64;
    while (buf.len() as u64) < mb * 1_000_000 {
        let off = copy * 100_000;
        for line in text.split_inclusive('\n') {
            buf.push_str(&renumber(line, off));
        }
        copy += 1;
    }
    std::fs::write(&out, buf).map_err(|e| Error::io(&out, &e))?;
    Ok(out)
}

fn renumber(line: &str, off: u64) -> std::borrow::Cow<'_, str> {
    if off == 0 || !line.contains("\"frame_id\": ") {
        return line.into();
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut rest = line;
    while let Some(i) = rest.find("\"frame_id\": ") {
        let start = i + "\"frame_id\": ".len();
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[..digits].parse::<u64>() {
            Ok(n) => out.push_str(&(n + off).to_string()),
            Err(_) => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out.into()
}
