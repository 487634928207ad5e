//! `fxray modules GRAPH`: the module tree of a graph with its repeat groups; `fxray bench
//! modules`: module inference over every phase of a tree, timed. The context a pass needs is
//! assembled in `pipeline::modules`.

use crate::analysis::modules::{self, PhaseInput};
use crate::error::{Error, Result};
use crate::model::compile::GuardedModule;
use crate::model::fx::FxFile;
use crate::pipeline::module_guards;
use crate::pipeline::modules::{ModuleContext, ModuleReport, parse};
use rayon::prelude::*;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

/// `fxray modules GRAPH [--json]`.
pub fn run(graph: &Path, json: bool) -> Result<()> {
    let report = crate::pipeline::modules::report(graph)?;
    let text = if json {
        super::json_text(&report)?
    } else {
        let mut out = Vec::new();
        // Writing into memory cannot fail.
        let _ = write_tree(&mut out, &report, 0);
        String::from_utf8_lossy(&out).into_owned()
    };
    super::emit(&text, None)
}

/// One line per module, indented; a repeat group is one line, and only its first member's
/// sub-modules follow (the others are the same).
fn write_tree(out: &mut impl Write, m: &ModuleReport, depth: usize) -> std::io::Result<()> {
    let pad = "  ".repeat(depth);
    writeln!(out, "{pad}{}", m.line())?;
    for g in &m.groups {
        writeln!(out, "{pad}  {}", g.line())?;
    }
    for c in m.listed() {
        write_tree(out, c, depth + 1)?;
    }
    Ok(())
}

/// `fxray bench modules PATH`: module inference over every pass of every phase of every model
/// under PATH (files parsed once, beforehand; inference timed, best and median of `rounds`).
pub fn bench(path: &Path, rounds: usize) -> Result<()> {
    let index = crate::pipeline::tree::index(path)?;
    struct Job {
        dynamo: Option<FxFile>,
        passes: Vec<FxFile>,
        forward_first: Option<FxFile>,
        guards: Option<Vec<GuardedModule>>,
    }
    let mut jobs = Vec::new();
    for run in &index.runs {
        for (model, phase) in run
            .models
            .iter()
            .flat_map(|m| m.phases.iter().map(move |p| (m, p)))
        {
            let passes: Vec<FxFile> = phase
                .passes
                .par_iter()
                .filter_map(|p| parse(&p.path))
                .collect();
            if passes.is_empty() {
                continue;
            }
            let ctx = ModuleContext::of(&run.models, model, phase);
            jobs.push(Job {
                dynamo: ctx.dynamo.as_deref().and_then(parse),
                passes,
                forward_first: ctx.forward_first.as_deref().and_then(parse),
                guards: ctx.dynamo.as_deref().and_then(module_guards::of_model),
            });
        }
    }
    if jobs.is_empty() {
        return Err(Error::user(format!(
            "{}: no phase with graph files found",
            path.display()
        )));
    }
    let nodes: usize = jobs
        .iter()
        .flat_map(|j| &j.passes)
        .map(FxFile::node_count)
        .sum();
    let passes: usize = jobs.iter().map(|j| j.passes.len()).sum();
    let mut times = Vec::with_capacity(rounds);
    let mut placed = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        placed = 0;
        // Kept until the clock stops: freeing a round's answers is not inferring them.
        let mut answers = Vec::with_capacity(jobs.len());
        for j in &jobs {
            let refs: Vec<&FxFile> = j.passes.iter().collect();
            let fw: Option<Vec<&FxFile>> = j.forward_first.as_ref().map(|f| vec![f]);
            let out = modules::infer_phase(&PhaseInput {
                dynamo: j.dynamo.as_ref(),
                passes: &refs,
                forward: fw.as_deref(),
                guards: j.guards.as_deref(),
            });
            placed += out
                .passes
                .iter()
                .flat_map(|g| &g.confidence)
                .filter(|c| **c != modules::Confidence::None)
                .count();
            answers.push(out);
        }
        times.push(t.elapsed());
        drop(answers);
    }
    println!(
        "phases={} passes={passes} nodes={nodes} placed={placed} rounds={rounds}",
        jobs.len()
    );
    println!(
        "modules_best_s={:.4} modules_median_s={:.4}",
        super::measure::min(&times).as_secs_f64(),
        super::measure::median(&mut times).as_secs_f64()
    );
    Ok(())
}
