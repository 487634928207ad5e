//! Module inference on files of a debug tree: the context a pass needs besides itself (its
//! model's Dynamo graph for parameter names, the forward's first pass for a backward's saved
//! activations), read and handed to `analysis::modules`. The window (fold tree of a phase) and
//! the CLI (`export`, `msprobe`, `bench modules`) assemble it here, once.

use crate::analysis::fold::{self, FoldTree};
use crate::analysis::layout::UnionGraph;
use crate::analysis::modules::{self, GraphModules, PhaseInput, PhaseModules};
use crate::analysis::phase_layout::PhaseLayout;
use crate::model::compile::GuardedModule;
use crate::model::fx::FxFile;
use crate::model::index::{BackwardOf, Model, Phase, PhaseKind, Run};
use crate::pipeline::backward_owner;
use crate::pipeline::failure::Failure;
use crate::pipeline::module_guards;
use crate::sources::{discover, load, names};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// The files module inference reads besides the passes: the model's Dynamo graph (parameter
/// names) and, for a backward, the forward's first pass (saved activations).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct ModuleContext {
    pub dynamo: Option<PathBuf>,
    pub forward_first: Option<PathBuf>,
}

impl ModuleContext {
    /// The context of `phase` of `model`, one of its run's `models`. A backward's is its own
    /// forward's model's (`Phase::backward_of`, docs/formats.md §1.2): another model's when it
    /// was written into this folder lazily, none when whose it is cannot be told.
    pub fn of(models: &[Model], model: &Model, phase: &Phase) -> Self {
        let owner = match &phase.backward_of {
            None => Some(model),
            Some(BackwardOf::Model { path, .. }) => models.iter().find(|m| m.path == *path),
            Some(BackwardOf::CannotTell { .. }) => None,
        };
        let Some(owner) = owner else {
            return ModuleContext::default();
        };
        ModuleContext {
            dynamo: owner.dynamo_graph.clone(),
            forward_first: owner
                .forward_of(phase)
                .and_then(|f| f.passes.first())
                .map(|p| p.path.clone()),
        }
    }

    /// The context of the phase holding `pass`, found on disk around it: whatever folder was
    /// opened (the run, the model, the phase, the pass alone), the model's files are the same.
    pub fn around(pass: &Path) -> Self {
        Around::of(pass)
            .and_then(|a| a.phase().map(|(phase, _)| a.context(phase)))
            .unwrap_or_default()
    }

    fn is_empty(&self) -> bool {
        self.dynamo.is_none() && self.forward_first.is_none()
    }

    /// Its files parsed side by side, with the modules the guards of the Dynamo graph's
    /// compile name: once for a phase whose first view and union both need them.
    pub fn parse(&self) -> ParsedContext {
        // Context that cannot be read only lowers the inference's evidence; the passes still speak.
        let ((dynamo, guards), forward_first) = rayon::join(
            || {
                rayon::join(
                    || self.dynamo.as_deref().and_then(parse),
                    || self.dynamo.as_deref().and_then(module_guards::of_model),
                )
            },
            || self.forward_first.as_deref().and_then(parse),
        );
        ParsedContext {
            dynamo,
            forward_first,
            guards,
        }
    }
}

/// The model a graph file belongs to, indexed from the folder around its phase (npugraph_ex's
/// `model__N`, Inductor's backend folder), names only and read-only: a phase folder or a pass
/// opened on its own does not list its model's Dynamo graph nor its forward. For a backward of
/// npugraph_ex, the models beside it too, and the backward paired with its forward: it may be
/// another model's (docs/formats.md §1.2).
struct Around {
    /// The models found; the graph's is `models[model]`.
    models: Vec<Model>,
    model: usize,
    /// Where the graph is in the model: `None` for its Dynamo graph, else the phase and the
    /// pass's position in it.
    at: Option<(usize, usize)>,
}

impl Around {
    fn of(graph: &Path) -> Option<Self> {
        let me = canonical(graph);
        let parent = graph.parent()?;
        let parent_name = parent.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let is_phase =
            names::phase_dir(parent_name) || names::inductor_model_dir(parent_name).is_some();
        let folder = if is_phase { parent.parent()? } else { parent };
        let around = Around::find(folder, &me)?;
        let Some((model, phase)) = around.at.map(|(k, _)| (&around.models[around.model], k)) else {
            return Some(around);
        };
        let backend = folder.parent().filter(|b| {
            b.file_name()
                .and_then(|n| n.to_str())
                .and_then(names::backend_dir)
                .is_some()
        });
        match backend {
            Some(b) if model.phases[phase].kind() == PhaseKind::Backward => {
                let mut wide = Around::find(b, &me).unwrap_or(around);
                if let Some((k, _)) = wide.at {
                    backward_owner::pair_one(&mut wide.models, wide.model, k);
                }
                Some(wide)
            }
            _ => Some(around),
        }
    }

    /// The models under `folder` and where `me` (canonical) is among them.
    fn find(folder: &Path, me: &Path) -> Option<Self> {
        let index = discover::discover(folder).ok()?;
        index
            .runs
            .into_iter()
            .find_map(|run| Around::in_run(run, me))
    }

    fn in_run(run: Run, me: &Path) -> Option<Self> {
        let (model, at) = run.models.iter().enumerate().find_map(|(mi, model)| {
            if model.dynamo_graph.as_deref().map(canonical).as_deref() == Some(me) {
                return Some((mi, None));
            }
            let at = model.phases.iter().enumerate().find_map(|(k, p)| {
                let i = p.passes.iter().position(|f| canonical(&f.path) == me)?;
                Some((k, i))
            })?;
            Some((mi, Some(at)))
        })?;
        Some(Around {
            models: run.models,
            model,
            at,
        })
    }

    /// The phase holding the graph and the graph's position among its passes.
    fn phase(&self) -> Option<(&Phase, usize)> {
        let (k, i) = self.at?;
        Some((&self.models[self.model].phases[k], i))
    }

    /// The module context of `phase`, one of the graph's model's.
    fn context(&self, phase: &Phase) -> ModuleContext {
        ModuleContext::of(&self.models, &self.models[self.model], phase)
    }
}

/// Infers every pass's modules (with the model's Dynamo graph and, for a backward, the
/// forward's first pass) and groups the layout's union nodes by them.
pub fn module_tree(layout: &PhaseLayout, passes: &[&FxFile], ctx: &ModuleContext) -> FoldTree {
    let paths = module_paths(&layout.union, passes, ctx);
    FoldTree::new(&paths, layout.union.edges())
}

/// The box of each node of `union` (the union of `passes`) in the folded view: its dotted
/// module, inferred as [`module_tree`] does, or the group of loose nodes it falls in.
pub fn module_paths(union: &UnionGraph, passes: &[&FxFile], ctx: &ModuleContext) -> Vec<String> {
    module_paths_in(union, passes, &ctx.parse())
}

/// The files of a [`ModuleContext`], parsed; `None` for one that cannot be read.
#[derive(Debug, Default)]
pub struct ParsedContext {
    pub dynamo: Option<FxFile>,
    pub forward_first: Option<FxFile>,
    /// The modules the guards of the Dynamo graph's compile name (`module_guards`).
    pub guards: Option<Vec<GuardedModule>>,
}

/// [`module_paths`] with its context already parsed.
pub fn module_paths_in(union: &UnionGraph, passes: &[&FxFile], ctx: &ParsedContext) -> Vec<String> {
    let mut paths = fold::union_modules(union, passes, &infer(passes, ctx));
    fold::group_loose(union, passes, &mut paths);
    paths
}

/// Every pass's modules with the context's files read.
fn infer(passes: &[&FxFile], ctx: &ParsedContext) -> PhaseModules {
    let fw: Option<Vec<&FxFile>> = ctx.forward_first.as_ref().map(|f| vec![f]);
    modules::infer_phase(&PhaseInput {
        dynamo: ctx.dynamo.as_ref(),
        passes,
        forward: fw.as_deref(),
        guards: ctx.guards.as_deref(),
    })
}

/// `ctx`, or when it names nothing, the context found around `passes` ([`ModuleContext::around`]).
pub fn context_or_around(ctx: &ModuleContext, passes: &[PathBuf]) -> ModuleContext {
    match passes.first() {
        Some(first) if ctx.is_empty() => ModuleContext::around(first),
        _ => ctx.clone(),
    }
}

/// The modules of `file` (already parsed from `graph`): with its phase and model when it sits in
/// a phase folder (or is the model's `dynamo_out_graph.txt`), else on its own evidence.
pub fn for_graph_file(graph: &Path, file: &FxFile) -> GraphModules {
    in_context(graph, file).unwrap_or_else(|| modules::infer_file(file))
}

fn in_context(graph: &Path, file: &FxFile) -> Option<GraphModules> {
    let around = Around::of(graph)?;
    let Some((phase, upto)) = around.phase() else {
        let guards = module_guards::of_model(graph);
        let input = PhaseInput {
            dynamo: Some(file),
            guards: guards.as_deref(),
            ..PhaseInput::default()
        };
        return modules::infer_phase(&input).dynamo;
    };
    let parsed: Vec<Option<FxFile>> = phase.passes[..upto]
        .par_iter()
        .map(|p| parse(&p.path))
        .collect();
    let mut passes: Vec<&FxFile> = parsed.iter().flatten().collect();
    passes.push(file);
    infer(&passes, &around.context(phase).parse()).passes.pop()
}

/// A graph file parsed, or `None` when it cannot be read or holds no graph.
pub fn parse(p: &Path) -> Option<FxFile> {
    load::graph(p).ok().filter(|f| !f.graphs.is_empty())
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

/// A module of a graph as `fxray modules` reports it: its nodes (own and below), its
/// sub-modules, and its numbered children grouped by structure.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ModuleReport {
    /// Dotted path; `""` for the graph itself.
    pub module: String,
    /// Nodes in it and below.
    pub nodes: u32,
    /// Nodes directly in it.
    pub own: u32,
    /// Sub-modules.
    pub children: usize,
    /// Numbered children (`layers.0` …) by structure: empty when it has none that repeat.
    pub groups: Vec<GroupReport>,
    /// Sub-modules, in the order their first node runs.
    pub modules: Vec<ModuleReport>,
}

impl ModuleReport {
    /// How `fxray modules` and the Module tree name it: `layers  3264 nodes (0 own)`.
    pub fn line(&self) -> String {
        let name = if self.module.is_empty() {
            "(graph)"
        } else {
            &self.module
        };
        format!("{name}  {} nodes ({} own)", self.nodes, self.own)
    }

    /// The sub-modules to list under it: those in no repeat group, and each group's first
    /// member (the others are the same).
    pub fn listed(&self) -> impl Iterator<Item = &ModuleReport> {
        let others: std::collections::HashSet<&str> = self
            .groups
            .iter()
            .flat_map(|g| g.members.iter().skip(1))
            .map(String::as_str)
            .collect();
        self.modules
            .iter()
            .filter(move |c| !others.contains(c.module.as_str()))
    }
}

impl GroupReport {
    /// `layers.0–23 ×24  136 nodes each`, and how it differs when it does.
    pub fn line(&self) -> String {
        let mut line = format!("{}  {} nodes each", self.label, self.nodes);
        if let Some(d) = &self.differs {
            line += &format!("  ({d})");
        }
        if let Some(b) = &self.border {
            line += &format!("  [{b}]");
        }
        line
    }
}

/// Siblings of one structure.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct GroupReport {
    /// `layers.0–414 ×415`.
    pub label: String,
    pub members: Vec<String>,
    /// Nodes in each member.
    pub nodes: u32,
    /// How it differs from the parent's largest group (`null` for that group).
    pub differs: Option<String>,
    /// How its members differ at their boundary, when they do (`null` when they are alike
    /// there too): the member named and how it differs from one of the group's commonest form.
    #[serde(default)]
    pub border: Option<String>,
}

/// The module tree of the graph file `graph` with its repeat groups, modules inferred as the
/// window does (with its model's Dynamo graph and earlier passes when it sits in a phase).
/// On a server, the agent infers them there and only the report crosses.
pub fn report(graph: &Path) -> crate::error::Result<ModuleReport> {
    use crate::analysis::{fold, phase_layout};
    if let Some(r) = super::remote::one_result::<Report, _>(graph.to_path_buf()) {
        return Ok(r?);
    }
    let file = load::graph(graph)?;
    let gm = for_graph_file(graph, &file);
    let union = phase_layout::union_of(&[&file]);
    let pm = modules::PhaseModules {
        passes: vec![gm],
        dynamo: None,
    };
    let paths = fold::union_modules(&union, &[&file], &pm);
    let tree = FoldTree::new(&paths, union.edges());
    // What each union node computes: its op and shape, names left out.
    let mut key: Vec<Option<u64>> = vec![None; union.names().len()];
    let mut look: Vec<Option<(String, String)>> = vec![None; union.names().len()];
    let entries = phase_layout::pass_entries(&file);
    let nodes = file.graphs.iter().flat_map(|g| &g.nodes);
    for ((name, _), node) in entries.iter().zip(nodes) {
        if let Some(id) = union.id(name) {
            let op = crate::model::fx_fmt::short_target(node);
            let meta = crate::model::fx_fmt::meta_text(node).unwrap_or_default();
            key[id as usize] = fold::structure_key(&op, &meta);
            look[id as usize] = Some((op, meta));
        }
    }
    let names = union.names();
    let groups = fold::repeat_groups(
        &tree,
        union.edges(),
        |n| key[n as usize],
        |n| crate::analysis::backward_owner::is_tangent(&names[n as usize]),
    );
    let look: Vec<Option<fold::Look>> = look
        .iter()
        .map(|l| l.as_ref().map(|(o, m)| (o.as_str(), m.as_str())))
        .collect();
    let edges = union.edges();
    let notes = fold::group_notes(&tree, &groups, edges, |n| look[n as usize]);
    let mut by_parent: std::collections::HashMap<fold::ModIx, Vec<usize>> = Default::default();
    for (i, g) in groups.iter().enumerate() {
        by_parent.entry(g.parent).or_default().push(i);
    }
    /// What `build` reads at every level.
    struct Ctx<'a> {
        tree: &'a FoldTree,
        groups: &'a [fold::RepeatGroup],
        notes: &'a [fold::GroupNote],
        by_parent: std::collections::HashMap<fold::ModIx, Vec<usize>>,
        look: &'a [Option<fold::Look<'a>>],
    }
    fn build(cx: &Ctx<'_>, m: fold::ModIx) -> ModuleReport {
        let tree = cx.tree;
        let md = &tree.modules[m as usize];
        let present = |x: fold::ModIx| count(tree, x, cx.look);
        let groups = cx.by_parent.get(&m).map_or_else(Vec::new, |gs| {
            gs.iter()
                .map(|&i| {
                    let g = &cx.groups[i];
                    GroupReport {
                        label: fold::group_label(tree, &g.members),
                        members: g
                            .members
                            .iter()
                            .map(|&x| tree.modules[x as usize].path.clone())
                            .collect(),
                        nodes: present(g.members[0]),
                        differs: cx.notes[i].differs.clone(),
                        border: cx.notes[i].border.clone(),
                    }
                })
                .collect()
        });
        ModuleReport {
            module: md.path.clone(),
            nodes: present(m),
            own: own(md, cx.look),
            children: md.children.len(),
            groups,
            modules: md.children.iter().map(|&c| build(cx, c)).collect(),
        }
    }
    let cx = Ctx {
        tree: &tree,
        groups: &groups,
        notes: &notes,
        by_parent,
        look: &look,
    };
    Ok(build(&cx, fold::ROOT))
}

/// Nodes of the graph directly in module `md` (union nodes of other passes left out).
fn own(md: &crate::analysis::fold::FoldModule, look: &[Option<fold::Look>]) -> u32 {
    md.nodes
        .iter()
        .filter(|&&n| look[n as usize].is_some())
        .count() as u32
}

/// Nodes of the graph in module `m` and below.
fn count(tree: &FoldTree, m: crate::analysis::fold::ModIx, look: &[Option<fold::Look>]) -> u32 {
    let md = &tree.modules[m as usize];
    own(md, look)
        + md.children
            .iter()
            .map(|&c| count(tree, c, look))
            .sum::<u32>()
}

/// `fxray modules` of a graph file on the server it lies on.
pub struct Report;

impl super::remote::Op for Report {
    const NAME: &'static str = "module_report";
    type Args = PathBuf;
    type Item = Result<ModuleReport, Failure>;

    fn paths(graph: &mut PathBuf) -> Vec<&mut PathBuf> {
        vec![graph]
    }

    fn run(graph: PathBuf, _stop: &AtomicBool, send: &(dyn Fn(Self::Item) + Sync)) {
        send(report(&graph).map_err(Failure::unreadable));
    }
}
