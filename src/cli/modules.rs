//! Module inference on files of a debug tree: the context a pass needs (its model's Dynamo
//! graph, the phase's earlier passes, the forward for a backward), and `fxray bench modules`.

use crate::analysis::modules::{self, GraphModules, PhaseInput};
use crate::error::{Error, Result};
use crate::model::fx::FxFile;
use crate::model::index::{Model, Phase};
use crate::sources::{load, names};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The modules of `file` (already parsed from `graph`): with its phase and model when it sits in
/// an npugraph_ex `model__N/<phase>/` folder (or is the model's `dynamo_out_graph.txt`), else on
/// its own evidence.
pub fn for_graph_file(graph: &Path, file: &FxFile) -> GraphModules {
    in_context(graph, file).unwrap_or_else(|| modules::infer_file(file))
}

fn in_context(graph: &Path, file: &FxFile) -> Option<GraphModules> {
    let me = canonical(graph);
    let parent = graph.parent()?;
    let is_phase = parent
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(names::phase_dir);
    let model_dir = if is_phase { parent.parent()? } else { parent };
    let index = load::index(model_dir).ok()?;
    let model = index.runs.iter().flat_map(|r| &r.models).find(|m| {
        m.dynamo_graph.as_deref().map(canonical).as_ref() == Some(&me)
            || m.phases
                .iter()
                .any(|p| p.passes.iter().any(|f| canonical(&f.path) == me))
    })?;
    let dynamo = model
        .dynamo_graph
        .as_deref()
        .filter(|p| canonical(p) != me)
        .and_then(parse);
    if model.dynamo_graph.as_deref().map(canonical) == Some(me.clone()) {
        let input = PhaseInput {
            dynamo: Some(file),
            ..PhaseInput::default()
        };
        return modules::infer_phase(&input).dynamo;
    }
    let phase = model
        .phases
        .iter()
        .find(|p| p.passes.iter().any(|f| canonical(&f.path) == me))?;
    let upto = phase.passes.iter().position(|f| canonical(&f.path) == me)?;
    let parsed: Vec<Option<FxFile>> = phase.passes[..upto]
        .par_iter()
        .map(|p| parse(&p.path))
        .collect();
    let mut passes: Vec<&FxFile> = parsed.iter().flatten().collect();
    passes.push(file);
    let forward_first = forward_of(model, phase)
        .and_then(|f| f.passes.first())
        .and_then(|p| parse(&p.path));
    let forward: Option<Vec<&FxFile>> = forward_first.as_ref().map(|f| vec![f]);
    let input = PhaseInput {
        dynamo: dynamo.as_ref(),
        passes: &passes,
        forward: forward.as_deref(),
    };
    modules::infer_phase(&input).passes.pop()
}

/// The forward phase a backward phase reads its activations from.
fn forward_of<'a>(model: &'a Model, phase: &Phase) -> Option<&'a Phase> {
    (phase.name == "backward")
        .then(|| model.phases.iter().find(|p| p.name == "forward"))
        .flatten()
}

fn parse(p: &Path) -> Option<FxFile> {
    load::graph(p).ok().filter(|f| !f.graphs.is_empty())
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// `fxray bench modules PATH`: module inference over every pass of every phase of every model
/// under PATH (files parsed once, beforehand; inference timed, best and median of `rounds`).
pub fn bench(path: &Path, rounds: usize) -> Result<()> {
    let index = load::index(path)?;
    struct Job {
        dynamo: Option<FxFile>,
        passes: Vec<FxFile>,
        forward_first: Option<FxFile>,
    }
    let mut jobs = Vec::new();
    for model in index.runs.iter().flat_map(|r| &r.models) {
        for phase in &model.phases {
            let passes: Vec<FxFile> = phase
                .passes
                .par_iter()
                .filter_map(|p| parse(&p.path))
                .collect();
            if passes.is_empty() {
                continue;
            }
            jobs.push(Job {
                dynamo: model.dynamo_graph.as_deref().and_then(parse),
                passes,
                forward_first: forward_of(model, phase)
                    .and_then(|f| f.passes.first())
                    .and_then(|p| parse(&p.path)),
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
        for j in &jobs {
            let refs: Vec<&FxFile> = j.passes.iter().collect();
            let fw: Option<Vec<&FxFile>> = j.forward_first.as_ref().map(|f| vec![f]);
            let out = modules::infer_phase(&PhaseInput {
                dynamo: j.dynamo.as_ref(),
                passes: &refs,
                forward: fw.as_deref(),
            });
            placed += out
                .passes
                .iter()
                .flat_map(|g| &g.confidence)
                .filter(|c| **c != modules::Confidence::None)
                .count();
        }
        times.push(t.elapsed());
    }
    println!(
        "phases={} passes={passes} nodes={nodes} placed={placed} rounds={rounds}",
        jobs.len()
    );
    println!(
        "modules_best_s={:.4} modules_median_s={:.4}",
        super::bench::min(&times).as_secs_f64(),
        super::bench::median(&mut times).as_secs_f64()
    );
    Ok(())
}
