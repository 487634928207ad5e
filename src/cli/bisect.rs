//! `fxray bisect RUN`: replays every pass of a phase on the graph's inputs and names the pass
//! that broke the numbers and the node where it did (`pipeline::bisect`). A line per pass goes
//! to stderr while it runs; the answer to stdout.

use super::emit;
use crate::error::Result;
use crate::pipeline::bisect::{self, Bisect, Note};
use std::fmt::Write;
use std::path::Path;

pub struct Options<'a> {
    pub inputs: Option<&'a Path>,
    pub phase: Option<&'a str>,
    pub step: Option<u32>,
    pub python: Option<&'a Path>,
    pub references: &'a [std::path::PathBuf],
    pub json: bool,
}

pub fn run(run: &Path, o: &Options) -> Result<()> {
    let ask = bisect::Ask {
        run: run.to_path_buf(),
        inputs: o.inputs.map(Path::to_path_buf),
        phase: o.phase.map(str::to_string),
        step: o.step,
        python: o.python.map(Path::to_path_buf),
        references: o.references.to_vec(),
    };
    let b = bisect::ask(&ask, &Default::default(), |n| match n {
        Note::Pass(line) => eprintln!("{line}"),
        Note::Problem(line) => eprintln!("note: {line}"),
    })?;
    let text = if o.json {
        super::json_text(&b)?
    } else {
        text(&b)
    };
    emit(&text, None)
}

fn text(b: &Bisect) -> String {
    let mut s = String::new();
    let dir = b
        .pass_files
        .first()
        .and_then(|p| p.parent())
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let _ = writeln!(s, "passes     {} files in {dir}", b.pass_files.len());
    let _ = writeln!(s, "inputs     {}", b.inputs.display());
    for (placeholder, file) in &b.fed {
        let _ = writeln!(s, "  {placeholder:<10} {file}");
    }
    let _ = writeln!(s, "replayed   {}", b.replayed_with);
    let _ = writeln!(s);
    let _ = writeln!(s, "{}", b.answer);
    for p in &b.problems {
        let _ = writeln!(s, "note: {p}");
    }
    s
}

/// `fxray bench bisect RUN`: see `BenchCommand::Bisect`.
pub fn bench(run: &Path, rounds: usize, python: Option<&Path>) -> Result<()> {
    use super::measure;
    let t = std::time::Instant::now();
    let mut spec = bisect::find(run, None, None)?;
    spec.python = python.map(Path::to_path_buf);
    let find_s = t.elapsed().as_secs_f64();
    let t = std::time::Instant::now();
    let plan = bisect::plan(&spec)?;
    let plan_s = t.elapsed().as_secs_f64();
    let measure::Rounds {
        last: b,
        mut times,
        before_kib: before,
        peak_kib: peak,
    } = measure::rounds(rounds, || {
        bisect::bisect(&spec, &Default::default(), |_| {})
    })?;
    let child = crate::platform::children_usage();
    let nodes: usize = b
        .passes
        .iter()
        .filter(|p| p.replayed)
        .map(|p| p.nodes)
        .sum();
    println!(
        "passes={} replayed={} nodes_replayed={nodes} plan_bytes={}",
        b.pass_files.len(),
        b.passes.iter().filter(|p| p.replayed).count(),
        plan.to_string().len()
    );
    println!("answer: {}", b.answer);
    println!(
        "find_s={find_s:.3} plan_s={plan_s:.3} bisect_best_s={:.3} bisect_median_s={:.3}",
        measure::min(&times).as_secs_f64(),
        measure::median(&mut times).as_secs_f64()
    );
    if let (Some(b), Some(p)) = (before, peak) {
        println!(
            "rss_before_mib={:.0} fxray_peak_rss_mib={:.0} replay_peak_rss_mib={:.0}",
            b / 1024.0,
            p / 1024.0,
            child.peak_mib()
        );
    }
    // The stage compare of the same run, for the ratio.
    if let Ok(s) = crate::pipeline::stages::find(run) {
        let t = std::time::Instant::now();
        let c = crate::pipeline::stages::compare(&s, &Default::default())?;
        println!(
            "stage_compare_s={:.3} stage_answer: {}",
            t.elapsed().as_secs_f64(),
            c.answer
        );
    }
    Ok(())
}
