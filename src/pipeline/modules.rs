//! Module inference on files of a debug tree: the context a pass needs besides itself (its
//! model's Dynamo graph for parameter names, the forward's first pass for a backward's saved
//! activations), read and handed to `analysis::modules`. The window (fold tree of a phase) and
//! the CLI (`export`, `msprobe`, `bench modules`) assemble it here, once.

use crate::analysis::fold::{self, FoldTree};
use crate::analysis::layout::UnionGraph;
use crate::analysis::modules::{self, GraphModules, PhaseInput};
use crate::analysis::phase_layout::PhaseLayout;
use crate::model::fx::FxFile;
use crate::model::index::{Model, Phase};
use crate::sources::{load, names};
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// The files module inference reads besides the passes: the model's Dynamo graph (parameter
/// names) and, for a backward, the forward's first pass (saved activations).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ModuleContext {
    pub dynamo: Option<PathBuf>,
    pub forward_first: Option<PathBuf>,
}

impl ModuleContext {
    /// The context of `phase` of `model`.
    pub fn of(model: &Model, phase: &Phase) -> Self {
        ModuleContext {
            dynamo: model.dynamo_graph.clone(),
            forward_first: model
                .forward_of(phase)
                .and_then(|f| f.passes.first())
                .map(|p| p.path.clone()),
        }
    }
}

/// Infers every pass's modules (with the model's Dynamo graph and, for a backward, the
/// forward's first pass) and groups the layout's union nodes by them.
pub fn module_tree(layout: &PhaseLayout, passes: &[&FxFile], ctx: &ModuleContext) -> FoldTree {
    let paths = module_paths(&layout.union, passes, ctx);
    FoldTree::new(&paths, layout.union.edges())
}

/// The dotted module of each node of `union` (the union of `passes`), inferred as
/// [`module_tree`] does.
pub fn module_paths(union: &UnionGraph, passes: &[&FxFile], ctx: &ModuleContext) -> Vec<String> {
    // Context that cannot be read only lowers the inference's evidence; the passes still speak.
    let dynamo = ctx.dynamo.as_deref().and_then(parse);
    let forward = ctx.forward_first.as_deref().and_then(parse);
    let fw: Option<Vec<&FxFile>> = forward.as_ref().map(|f| vec![f]);
    let pm = modules::infer_phase(&PhaseInput {
        dynamo: dynamo.as_ref(),
        passes,
        forward: fw.as_deref(),
    });
    fold::union_modules(union, passes, &pm)
}

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
    if model.dynamo_graph.as_deref().map(canonical) == Some(me.clone()) {
        let input = PhaseInput {
            dynamo: Some(file),
            ..PhaseInput::default()
        };
        return modules::infer_phase(&input).dynamo;
    }
    let dynamo = model.dynamo_graph.as_deref().and_then(parse);
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
    let forward_first = model
        .forward_of(phase)
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

/// A graph file parsed, or `None` when it cannot be read or holds no graph.
pub fn parse(p: &Path) -> Option<FxFile> {
    load::graph(p).ok().filter(|f| !f.graphs.is_empty())
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}
