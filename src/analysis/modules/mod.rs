//! The module of every node (`layers.3.attn.q_proj`), inferred from the text dumps alone.
//!
//! Torch knows each node's module (`node.meta["nn_module_stack"]`), but `print_readable()` does
//! not print it; after a run on the NPU the text is all a user has. What the text does carry:
//! the Dynamo graph's placeholder names (they spell the owner of every parameter and buffer),
//! the AOT graphs' placeholders in the same order, a `# File: …:LINE in FUNC, code: …` comment
//! over every statement, the backward's `# Backward of forward node: File: …` comments, and node
//! names that survive from pass to pass and from the forward into the backward. The rules, in the
//! order they are applied, and why each holds:
//!
//! 1. **Parameters and buffers.** A Dynamo placeholder is named after the attribute path Dynamo
//!    read it from: `L_self_modules_layers_modules_3_modules_attn_modules_q_proj_parameters_weight_`
//!    is `self.layers[3].attn.q_proj.weight`, so its owner is `layers.3.attn.q_proj`
//!    ([`params::decode`]; the compiled module is `L_args_0_` when a decorator passed it on
//!    through `*args`). A flattened segment (`self_attn_rotary_emb`, a buffer read through a
//!    plain attribute) is split where a known sibling module's name ends, unless the code calls the
//!    whole segment by name (`self.self_attn_layer_norm(x)` beside `self.self_attn`). AOT Autograd lifts the
//!    same inputs in the same order: `primals_k` (training) and `argk_1` (inference) are Dynamo
//!    placeholder k-1 and k; the mapping is kept only where the annotated shapes agree, so a
//!    graph from another model maps nothing rather than something wrong. `get_attr` nodes name
//!    their tensor's path directly.
//! 2. **Weight anchors** (`anchors.rs`). A node computed from one module's weights only (`t(w)`,
//!    `w.to(bf16)`) is that module's, and so is a node that consumes such a value (`mm(x, t)`,
//!    `embedding(w, ids)`, `native_layer_norm(x, …, w, b)` and its `getitem`s): a module's
//!    weights are used by its own forward only. Of two modules' weights on one node (a tied
//!    weight and its user's bias), the one the line names wins. `F.linear` decomposes into
//!    `view(x)` → `mm`/`addmm` → a view back to `x`'s leading dims (`_unsafe_view`, or a plain
//!    `view` through a decomposition table: 2-D in, more dims out, the same columns): the
//!    flattening view whose only user is that matmul, and the view back after it, join the
//!    matmul's module; so does a backward's view back recomputed from the saved product. A norm a
//!    decomposition table split (`var_mean`, `rsqrt`, `sub`, `mul`) reads its weight last: the
//!    norm arithmetic under the same line that feeds only the norm's weighted nodes is the
//!    norm's (two norms of one input share it once common subexpressions are merged: the first
//!    norm's line keeps it).
//! 3. **Statements and frames.** Nodes under one source comment come from one source line run
//!    once, in one module's forward (its *frame*). For a statement with anchored nodes, the frame
//!    is the anchor's module when the code reads one of that module's own attributes
//!    (`return self.weight * x`: the line is in the module's forward), its parent when the code
//!    names it (`q = self.q_proj(x).view(…)`: torch's own modules have no comment of their own,
//!    so the caller's line is printed over their nodes; `self.experts[i](x)`: the list's
//!    parent), and the anchor itself in a helper handed the weights (`_grouped_mm(x, w)`). A
//!    weight the code does not name is tied to another module's (`self.lm_head(x)` reading the
//!    embedding's) and says nothing of the frame. A line that reads a child's weight without
//!    calling the child (`self.dt_proj.weight @ x`, `conv1d.weight.squeeze(1)`) is the caller's
//!    code, and so are its nodes: torch records a module only when it is called.
//! 4. **Runs** (`runs.rs`): the statements one call of one function made. A statement continues
//!    the open call of its file and function when its line comes after, not far on, the call
//!    did not `return`, they share a value, and the line is not known to run in another kind of
//!    module; calls of one function nest (an MoE block's loop around an expert's `forward`).
//!    Helpers calling helpers are one run. A run whose anchored statements agree on a frame
//!    gives it to its others (the first lines of an RMSNorm before `self.weight * …`).
//! 5. **Statements without weights** take, in this order: their run's frame; the parent of the
//!    modules their line calls (`x = x + self.attn(self.norm(x))`); for a helper (any function
//!    but a `forward`: `apply_rotary_pos_emb`, `sdpa_attention_forward`, a cache's `update`),
//!    the module that called it, from the statement before (`callers.rs`; a forward graph runs
//!    in call order); the frame the same source line ran in elsewhere (the same line in another
//!    layer, or in the forward for the backward), moved to the layer of what the statement reads
//!    (`layers.0.attn` read from `layers.5.…` is `layers.5.attn`): layers repeat, so one
//!    anchored layer teaches every other; the caller's module for a module's `forward` without
//!    weights (an activation module), or the child it calls when the caller's line calls one
//!    child no weight names and the statement takes what that line made
//!    (`self.gelu_impl(self.dense_h_to_4h(x))`); the common module of what it reads. A frame read from
//!    the statement's run, the statement before or the same line elsewhere is refuted when the
//!    statement reads what that frame was never handed (a value that came into its caller and
//!    went to another child, or one another module made after the frame's call began): the
//!    call has returned, and the statement is the caller's (`x + attn(ln1(x)) + mlp(ln2(x))`,
//!    `residual + hidden_states` after the attention's last line). A `forward`'s lines are one run
//!    of lines in its file: a statement whose nearest line with a frame from weights is a
//!    caller's code, with none of its frame's own lines that near, is the caller's (BART's
//!    residual sum beside the layer's norm, far from the attention's projections).
//! 6. **Children without weights, or tied** (`children.rs`). A line that is one call of a child
//!    no weight names (`x = self.dropout(x)`) puts its nodes in that child; a line that calls it
//!    among other things gives it the nodes that do what such modules do (dropout,
//!    activations). A tied weight's nodes go to the one child the line calls that no weight
//!    names, under the root when nothing else on the line says where the line runs (the output
//!    head shares the embedding's weight).
//! 7. **Nodes without a comment** (made by a pass, or a dump without stack traces) take the
//!    module of the nodes they feed when those agree, else the common module of their inputs;
//!    the views AOT's partitioner adds at the forward's end to save for the backward are their
//!    input's.
//! 8. **From pass to pass.** A node keeps its module while its name lives (passes rename
//!    nothing they keep). A node a pass creates takes the module of the node it replaces (the
//!    node that fed its users in the previous pass and is gone), else rule 7 on its users, else
//!    its own evidence.
//! 9. **Backward** (`backward.rs`). Its placeholders are the forward's: `primals_k` as in rule
//!    1, saved activations by name (`view_3`, `rsqrt_1`) with the module the forward's first
//!    pass gave them, a saved `t(w)` still counting as a weight. Its output `k` is the gradient
//!    of forward input `k`: for a parameter, the nodes computing only that gradient are its
//!    module's. Its statements carry the forward line they differentiate, so the forward's
//!    frames of that line are the candidates (rule 5), and what the statement reads votes for
//!    the layer (a saved activation twice, four times when its own module is one of the line's
//!    frames: the final norm's `rsqrt` beside the last layer's output it scales). The gradient of a line that called one child is that
//!    child's, and so is that of a line whose forward nodes all landed in one child (a norm's
//!    call as one argument of a longer call). A forward view the backward recomputes from a
//!    saved activation is read by the caller's code, not by the child's gradient.
//! 10. **Dynamo graph**: rules 2–7 on its own placeholders. **Inductor** `fx_graph_readable.py`
//!     / `fx_graph_transformed.py` have no Dynamo graph beside them: only their source comments
//!     and data flow speak (rules 3–7), and most nodes stay at the root with no confidence.
//! 11. **No Dynamo graph** (a tree that kept only the pass dumps): nothing names the modules, but
//!     the layers still repeat. The source lines that run the same number of times K (the
//!     commonest such count, K ≥ 2) are one block's; each time the first of them comes round,
//!     the next block starts. Their nodes are `layers.0` … `layers.K-1` (a backward runs them
//!     last to first) with `Low` confidence: the attribute name is a guess, the grouping is not.
//!     An input (weight, saved activation) whose users all lie in one block joins it.
//! 12. **Guards** (`classes.rs`), when the model's trace log is at hand (`PhaseInput::guards`,
//!     read by `pipeline::module_guards`, docs/formats.md §8). A weightless child called on a
//!     line that prints no node (`h = self.act(self.c_fc(x))`: the Conv1D's and the
//!     activation's own lines print the nodes) leaves its name in no pass file, and rule 5 puts
//!     its `forward` in the caller. Dynamo guarded every module it read, by path from the
//!     compiled module (torch's `nn_module_stack` names) and class, and a class's Python
//!     module is the file its `forward` is in: a statement without weights in a `forward` of
//!     file F, placed in P by the rules above, goes to P's child C when C is the one child of P
//!     whose class is defined in F and P's own class is not (else the line may be P's own:
//!     BLOOM's MLP and its `gelu_impl` share a file). Two such children, no guards, or a module
//!     the guards do not name: nothing moves. Its backward follows through the frames of the
//!     same line (rule 9).
//!
//! [`Confidence`] says which rule placed a node: `High` weights (rules 1–2, 9's gradients),
//! `Medium` a frame from weights, calls or the same line elsewhere (3–6, 9; 12 keeps the
//! confidence of the frame it moves down), `Low` a caller, a
//! neighbour or data flow (5, 7–8), `None` nothing (the node is at the root because nothing says
//! otherwise).
//!
//! Measured against torch's own `nn_module_stack` on four models written here and 22
//! `transformers` cases (18 architectures), see `tests/it/modules.rs`, `tests/it/modules_hf.rs`,
//! `tests/e2e/module_truth.py` and `tests/e2e/module_truth_hf.py`.

mod anchors;
mod backward;
mod callers;
mod children;
mod classes;
mod code;
mod evidence;
mod frames;
mod infer;
mod ops;
pub mod params;
mod paths;
mod repeat;
mod runs;
mod statements;
mod tree;

pub use tree::{ModuleEntry, ModuleTree};

use crate::model::compile::GuardedModule;
use crate::model::fx::{FxFile, FxGraph, OpKind};
use classes::Classes;
use evidence::{Evidence, Saved};
use frames::LineFrames;
use params::ParamMap;
use paths::{ModId, Paths, ROOT};
use rustc_hash::FxHashMap as HashMap;
use serde::Serialize;

/// How a node's module was decided (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Nothing says: the node is at the root.
    #[default]
    None,
    /// A neighbour statement or the data flow.
    Low,
    /// The frame of its statement, from weights or from the same line elsewhere.
    Medium,
    /// Its own weights (or it is one).
    High,
}

/// The modules of one graph file's nodes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GraphModules {
    /// Modules holding the top-level graph's nodes, with their ancestors.
    pub tree: ModuleTree,
    /// Per node of the top-level graph (`file.graphs[0].nodes`): index into `tree.modules`.
    pub node_module: Vec<usize>,
    /// Per node of the top-level graph.
    pub confidence: Vec<Confidence>,
}

impl GraphModules {
    /// Dotted path of top-level node `i` (`""`: root or unknown).
    pub fn path(&self, i: usize) -> &str {
        self.node_module
            .get(i)
            .map_or("", |&m| self.tree.modules[m].path.as_str())
    }

    /// The module of node `node` of `file.graphs[graph]`: nested graphs (the branches of
    /// `cond`, …) are in the module of the node that uses them.
    pub fn path_in<'a>(&'a self, file: &FxFile, graph: usize, node: usize) -> &'a str {
        let (mut g, mut n) = (graph, node);
        while g > 0 {
            let Some(sub) = file.graphs.get(g) else {
                return "";
            };
            match (sub.parent, sub.used_by) {
                (Some(p), Some(u)) => (g, n) = (p, u),
                _ => return "",
            }
        }
        self.path(n)
    }

    /// Node `i`'s module by name.
    pub fn path_of(&self, g: &FxGraph, name: &str) -> Option<&str> {
        g.by_name.get(name).map(|i| self.path(i))
    }

    fn build(paths: &Paths, modules: &[(ModId, Confidence)]) -> GraphModules {
        let tree = ModuleTree::build(modules.iter().map(|&(m, _)| paths.path(m)));
        let index: HashMap<&str, usize> = tree
            .modules
            .iter()
            .enumerate()
            .map(|(i, e)| (e.path.as_str(), i))
            .collect();
        GraphModules {
            node_module: modules
                .iter()
                .map(|&(m, _)| index.get(paths.path(m)).copied().unwrap_or(0))
                .collect(),
            confidence: modules.iter().map(|&(_, c)| c).collect(),
            tree,
        }
    }
}

/// One phase of one model, as the debug tree has it.
#[derive(Debug, Clone, Copy, Default)]
pub struct PhaseInput<'a> {
    /// The model's `dynamo_out_graph.txt`: the parameters' owners.
    pub dynamo: Option<&'a FxFile>,
    /// The phase's passes in execution order (`000_aot_…_graph`, `001_…_after_…`, …).
    pub passes: &'a [&'a FxFile],
    /// For a backward phase: the forward phase's passes (its first pass made the activations
    /// the backward reads).
    pub forward: Option<&'a [&'a FxFile]>,
    /// The modules the guards of the model's compile name, with their classes (torch's trace
    /// log, `pipeline::module_guards`): rule 12.
    pub guards: Option<&'a [GuardedModule]>,
}

/// Modules of every pass of a phase.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhaseModules {
    /// Parallel to [`PhaseInput::passes`].
    pub passes: Vec<GraphModules>,
    /// The Dynamo graph's own nodes, when it was given.
    pub dynamo: Option<GraphModules>,
}

/// The modules of every node of every pass of a phase (see the module docs for the rules).
pub fn infer_phase(input: &PhaseInput<'_>) -> PhaseModules {
    let mut paths = Paths::default();
    let params = input
        .dynamo
        .and_then(|d| d.graphs.first())
        .map(|g| ParamMap::from_dynamo(g, &mut paths))
        .unwrap_or_default();
    let attrs = params.attrs();
    let classes = input.guards.map(Classes::new);
    let classes = classes.as_ref();
    let dynamo = input
        .dynamo
        .and_then(|d| d.graphs.first())
        .map(|g| infer_dynamo(g, &params, &attrs, classes, &mut paths));

    // A backward reads the forward's first graph: its nodes by name, and its frames by line.
    let mut by_name: HashMap<String, Saved> = HashMap::default();
    let mut frames = LineFrames::default();
    if let Some(fw) = input
        .forward
        .and_then(|f| f.first())
        .and_then(|f| f.graphs.first())
    {
        let ev = Evidence {
            params: params.for_aot(fw),
            attrs: Some(&attrs),
            classes,
            ..Evidence::default()
        };
        let r = infer::infer(fw, &ev, &mut paths);
        for (i, n) in fw.nodes.iter().enumerate() {
            // A value several matmuls read (the flattened input of q, k and v) says the layer,
            // not which of them a backward node differentiates.
            let matmuls = n
                .users
                .iter()
                .filter(|&&u| {
                    let t = &fw.nodes[u].target;
                    t.contains(".mm.") || t.contains(".addmm.") || t.contains(".bmm.")
                })
                .count();
            let m = if matmuls >= 2 {
                paths.parent(r.modules[i].0)
            } else {
                r.modules[i].0
            };
            if n.op != OpKind::Output {
                let matmul =
                    r.modules[i].1 == Confidence::High && matches!(ops::op_name(n), "mm" | "addmm");
                by_name.insert(
                    n.name.to_string(),
                    Saved {
                        module: m,
                        weight: r.weight[i],
                        matmul,
                    },
                );
            }
        }
        frames = r.frames;
    }
    let have_forward = input.forward.is_some();
    let named = params.by_position.iter().any(Option::is_some);
    // A backward returns one gradient per forward input, in order.
    let grad_of: Vec<Option<ModId>> = if have_forward {
        params
            .by_position
            .iter()
            .map(|o| o.as_ref().map(|o| o.module))
            .collect()
    } else {
        Vec::new()
    };

    let mut passes = Vec::with_capacity(input.passes.len());
    let mut prev: Option<(&FxGraph, Vec<(ModId, Confidence)>)> = None;
    for file in input.passes {
        let Some(g) = file.graphs.first() else {
            passes.push(GraphModules::default());
            continue;
        };
        let ev = Evidence {
            params: params.for_aot(g),
            by_name: have_forward.then_some(&by_name),
            frames: have_forward.then_some(&frames),
            attrs: Some(&attrs),
            grad_of: &grad_of,
            classes,
        };
        // A pass that changed nothing shares the previous pass's parse: every node carries its
        // module over, so its own inference would be thrown away.
        let own = match &prev {
            Some((pg, pm)) if std::ptr::eq(*pg, g) => pm.clone(),
            _ => {
                let mut own = infer::infer(g, &ev, &mut paths).modules;
                if !named {
                    unnamed_layers(g, &mut own, &mut paths);
                }
                own
            }
        };
        let modules = match &prev {
            Some((pg, pm)) => carry(pg, pm, g, &own),
            None => own,
        };
        passes.push(GraphModules::build(&paths, &modules));
        prev = Some((g, modules));
    }
    PhaseModules { passes, dynamo }
}

/// One graph file on its own (a loose file, or Inductor's dumps): for a Dynamo graph, its
/// placeholder names (rules 1–5); otherwise source comments, `get_attr` paths, data flow and
/// the repeated layers (rule 9).
pub fn infer_file(file: &FxFile) -> GraphModules {
    let mut paths = Paths::default();
    let Some(g) = file.graphs.first() else {
        return GraphModules::default();
    };
    let params = ParamMap::from_dynamo(g, &mut paths);
    if params.by_position.iter().any(Option::is_some) {
        let attrs = params.attrs();
        return infer_dynamo(g, &params, &attrs, None, &mut paths);
    }
    let mut own = infer::infer(g, &Evidence::default(), &mut paths).modules;
    unnamed_layers(g, &mut own, &mut paths);
    GraphModules::build(&paths, &own)
}

/// Rule 9: with no parameter names, the repeated block of source lines is `layers.N`.
fn unnamed_layers(g: &FxGraph, own: &mut [(ModId, Confidence)], paths: &mut Paths) {
    for (i, b) in repeat::blocks(g).into_iter().enumerate() {
        if let Some((k, c)) = b
            && own[i].0 == ROOT
        {
            own[i] = (paths.intern(&format!("layers.{k}")), c);
        }
    }
    // The block's weights and (in a backward) the activations it saved are its inputs: an input
    // whose users all lie in one block is that block's.
    for (i, n) in g.nodes.iter().enumerate() {
        if own[i].0 != ROOT || !matches!(n.op, OpKind::Placeholder | OpKind::GetAttr) {
            continue;
        }
        // A training forward returns its weights for the backward: the output is no user.
        let mut users = n
            .users
            .iter()
            .filter(|&&u| g.nodes[u].op != OpKind::Output)
            .map(|&u| own[u].0);
        let Some(first) = users.next() else { continue };
        let common = users.fold(first, |a, b| paths.common(a, b));
        // One block's (an input two blocks share stays outside both).
        if paths.depth(common) >= 2 {
            own[i] = (common, Confidence::Low);
        }
    }
}

/// A graph whose own placeholders are named after their owners (Dynamo's).
fn infer_dynamo(
    g: &FxGraph,
    params: &ParamMap,
    attrs: &HashMap<ModId, Vec<String>>,
    classes: Option<&Classes>,
    paths: &mut Paths,
) -> GraphModules {
    let ev = Evidence {
        params: dynamo_params(g, params),
        attrs: Some(attrs),
        classes,
        ..Evidence::default()
    };
    let r = infer::infer(g, &ev, paths);
    GraphModules::build(paths, &r.modules)
}

/// The Dynamo graph's own placeholders, by node index.
fn dynamo_params(g: &FxGraph, params: &ParamMap) -> HashMap<usize, ModId> {
    g.nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.op == OpKind::Placeholder)
        .zip(&params.by_position)
        .filter_map(|((i, _), o)| o.as_ref().map(|o| (i, o.module)))
        .collect()
}

/// Rule 6: modules carried from the previous pass.
fn carry(
    prev: &FxGraph,
    prev_mod: &[(ModId, Confidence)],
    g: &FxGraph,
    own: &[(ModId, Confidence)],
) -> Vec<(ModId, Confidence)> {
    let mut out: Vec<Option<(ModId, Confidence)>> = g
        .nodes
        .iter()
        .map(|n| prev.by_name.get(&n.name).map(|j| prev_mod[j]))
        .collect();
    for i in (0..g.nodes.len()).rev() {
        if out[i].is_some() {
            continue;
        }
        let node = &g.nodes[i];
        // The node it replaces: an input of one of its users (in the previous pass) that is gone.
        let replaced = node.users.iter().find_map(|&u| {
            let pu = prev.by_name.get(&g.nodes[u].name)?;
            prev.nodes[pu]
                .inputs
                .iter()
                .find(|&&d| !g.by_name.contains_key(&prev.nodes[d].name))
                .map(|&d| prev_mod[d])
        });
        if let Some(m) = replaced {
            out[i] = Some(m);
            continue;
        }
        if node.source.is_none() {
            let users: Vec<ModId> = node
                .users
                .iter()
                .filter_map(|&u| out[u].map(|o| o.0))
                .collect();
            if let Some(&first) = users.first()
                && users.iter().all(|&u| u == first)
            {
                out[i] = Some((first, Confidence::Low));
                continue;
            }
        }
        out[i] = Some(own[i]);
    }
    out.into_iter()
        .map(|o| o.unwrap_or((ROOT, Confidence::None)))
        .collect()
}
