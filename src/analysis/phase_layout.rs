//! One layout for all passes of a model/phase, so a node keeps its place while the user scrubs
//! from pass to pass (a pass shows the union's positions of its own nodes).
//!
//! Nodes are keyed by name; nodes of nested sub-graphs (the branches of `cond`, …) by
//! `<subgraph>/<name>`, grouped so the view can draw a box around each branch.

use crate::analysis::layout::{self, Cancelled, GraphLayout, LayoutParams, UnionGraph};
use crate::model::fx::{FxFile, FxNode};
use crate::model::fx_fmt::{meta_text, short_target};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

/// Node box height: two text lines (name, target) and a subtitle (dtype/shape).
pub const NODE_HEIGHT: f32 = 46.0;
const MIN_WIDTH: f32 = 96.0;
const MAX_WIDTH: f32 = 280.0;
/// Average advance of the 12–13 px proportional font the view draws labels with.
const CHAR_WIDTH: f32 = 6.6;

/// Where every node of every pass of one phase goes.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PhaseLayout {
    pub union: UnionGraph,
    pub layout: GraphLayout,
    /// Box size of each union node.
    pub sizes: Vec<(f32, f32)>,
    /// Sub-graph of each union node: `None` for the top-level graph, else the class name.
    pub groups: Vec<Option<String>>,
}

impl PhaseLayout {
    /// True when every per-node and per-edge list matches the union: what a layout received
    /// over a link must be before it is drawn.
    pub fn is_well_formed(&self) -> bool {
        let n = self.union.names().len();
        let e = self.union.edges().len();
        self.sizes.len() == n
            && self.groups.len() == n
            && self.layout.pos.len() == n
            && self.layout.layer.len() == n
            && self.layout.edge_paths.len() == e
            && self.layout.edge_kinds.len() == e
    }
}

/// A pass's node list as the union sees it: qualified name and qualified input names. A
/// top-level name is the node's own (no string made per node of a 100k-node pass).
pub fn pass_entries(file: &FxFile) -> Vec<(Cow<'_, str>, Vec<Cow<'_, str>>)> {
    let prefixes: Vec<String> = (0..file.graphs.len()).map(|g| qualifier(file, g)).collect();
    let name = |(g, i): (usize, usize)| -> Cow<'_, str> {
        let own = file.graphs[g].nodes[i].name.as_str();
        match prefixes[g].as_str() {
            "" => Cow::Borrowed(own),
            p => Cow::Owned(format!("{p}{own}")),
        }
    };
    let mut out = Vec::new();
    for_each_entry(file, |at, inputs| {
        out.push((name(at), inputs.map(name).collect()))
    });
    out
}

/// Each node of `file` with its inputs, as (graph, node) positions: the inputs it names, and
/// for a sub-graph's placeholder the node that runs the sub-graph (`cond`, …).
fn for_each_entry(
    file: &FxFile,
    mut f: impl FnMut((usize, usize), &mut dyn Iterator<Item = (usize, usize)>),
) {
    for (gi, g) in file.graphs.iter().enumerate() {
        let caller = g
            .parent
            .zip(g.used_by)
            .filter(|&(p, u)| file.graphs.get(p).is_some_and(|pg| u < pg.nodes.len()));
        for (ni, n) in g.nodes.iter().enumerate() {
            let own = n
                .inputs
                .iter()
                .filter(|&&i| i < g.nodes.len())
                .map(|&i| (gi, i));
            let called = caller.filter(|_| n.op == crate::model::fx::OpKind::Placeholder);
            f((gi, ni), &mut own.chain(called));
        }
    }
}

/// `""` for the top-level graph, `"<class>/"` for a nested one.
fn qualifier(file: &FxFile, graph: usize) -> String {
    match (graph, file.graphs.get(graph)) {
        (0, _) | (_, None) => String::new(),
        (_, Some(g)) => format!("{}/", g.name),
    }
}

/// The box a node needs for its label, target and subtitle.
pub fn node_size(node: &FxNode) -> (f32, f32) {
    let chars = [
        node.name.chars().count(),
        short_target(node).chars().count(),
        meta_text(node).map_or(0, |m| m.chars().count()),
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    let w = (chars as f32 * CHAR_WIDTH + 18.0).clamp(MIN_WIDTH, MAX_WIDTH);
    (w, NODE_HEIGHT)
}

/// Union ids of the nodes of `file`, in its graphs' node order; `None` for a node `union` does
/// not know.
fn union_ids(union: &UnionGraph, file: &FxFile) -> Vec<Vec<Option<u32>>> {
    // One key buffer: the pass on screen is looked up on the UI thread, 100k names a pass.
    let mut key = String::new();
    file.graphs
        .iter()
        .enumerate()
        .map(|(gi, g)| {
            let prefix = qualifier(file, gi);
            g.nodes
                .iter()
                .map(|n| {
                    if prefix.is_empty() {
                        return union.id(&n.name);
                    }
                    key.clear();
                    key.push_str(&prefix);
                    key.push_str(&n.name);
                    union.id(&key)
                })
                .collect()
        })
        .collect()
}

/// The union of `passes` (in execution order), not laid out: what a pass's node ids refer to.
pub fn union_of(passes: &[&FxFile]) -> UnionGraph {
    let mut union = UnionGraph::new();
    let mut seen = Vec::new();
    for file in passes {
        add_pass(&mut union, file, &mut seen);
    }
    union
}

/// Adds `file` to `union`; `false` when it is a pass already added (the same parse: passes
/// with the same text share one, and half the passes of a phase change nothing).
fn add_pass(union: &mut UnionGraph, file: &FxFile, seen: &mut Vec<(*const FxFile, usize)>) -> bool {
    if let Some(&(_, k)) = seen.iter().find(|(p, _)| std::ptr::eq(*p, file)) {
        union.repeat_pass(k);
        return false;
    }
    seen.push((file, union.pass_count()));
    add_entries(union, file);
    true
}

fn add_entries(union: &mut UnionGraph, file: &FxFile) {
    let entries = pass_entries(file);
    let refs: Vec<(&str, Vec<&str>)> = entries
        .iter()
        .map(|(n, ins)| (n.as_ref(), ins.iter().map(Cow::as_ref).collect()))
        .collect();
    let slices: Vec<(&str, &[&str])> = refs.iter().map(|(n, ins)| (*n, ins.as_slice())).collect();
    union.add_pass(&slices);
}

/// Lays out the union of `passes` (in execution order).
pub fn build(passes: &[&FxFile], cancel: &AtomicBool) -> Result<PhaseLayout, Cancelled> {
    grow(None, passes, cancel)
}

/// The layout of `previous`'s passes followed by `more` (passes written since): nodes already
/// placed keep their places as far as the new nodes allow, so a watched phase does not jump
/// about each time a pass lands.
pub fn extend(
    previous: &PhaseLayout,
    more: &[&FxFile],
    cancel: &AtomicBool,
) -> Result<PhaseLayout, Cancelled> {
    grow(Some(previous), more, cancel)
}

fn grow(
    previous: Option<&PhaseLayout>,
    passes: &[&FxFile],
    cancel: &AtomicBool,
) -> Result<PhaseLayout, Cancelled> {
    let mut union = previous.map_or_else(UnionGraph::new, |p| p.union.clone());
    // By union id: a table keyed by 100k names no longer fits the cache.
    let mut sizes: Vec<Option<(f32, f32)>> =
        previous.map_or_else(Vec::new, |p| p.sizes.iter().copied().map(Some).collect());
    let mut groups: Vec<Option<String>> = previous.map_or_else(Vec::new, |p| p.groups.clone());
    let mut seen = Vec::new();
    for file in passes {
        if !add_pass(&mut union, file, &mut seen) {
            continue;
        }
        sizes.resize(union.names().len(), None);
        groups.resize(union.names().len(), None);
        for (gi, (g, ids)) in file.graphs.iter().zip(union_ids(&union, file)).enumerate() {
            for (n, id) in g.nodes.iter().zip(ids) {
                let Some(id) = id.map(|i| i as usize) else {
                    continue;
                };
                let s = node_size(n);
                let e = sizes[id].get_or_insert(s);
                e.0 = e.0.max(s.0);
                if gi > 0 {
                    groups[id] = Some(g.name.clone());
                }
            }
        }
    }
    let mut input = union.to_input(|_| (MIN_WIDTH, NODE_HEIGHT));
    for (s, known) in input.sizes.iter_mut().zip(&sizes) {
        *s = known.unwrap_or(*s);
    }
    let mut group_ids: HashMap<&str, u32> = HashMap::new();
    input.groups = groups
        .iter()
        .map(|g| {
            g.as_deref().map(|name| {
                let next = group_ids.len() as u32;
                *group_ids.entry(name).or_insert(next)
            })
        })
        .collect();
    let params = LayoutParams::default();
    let layout = match previous {
        // Few sweeps: the previous order is already good, and every sweep may move old nodes.
        Some(p) => {
            let params = LayoutParams {
                max_sweeps: 4,
                ..params
            };
            layout::relayout(&input, &params, &p.layout, cancel)?
        }
        None => layout::layout(&input, &params, cancel)?,
    };
    Ok(PhaseLayout {
        sizes: input.sizes,
        union,
        layout,
        groups,
    })
}

impl PhaseLayout {
    /// Union ids of the nodes of `file` (a pass of this phase), in its graphs' node order;
    /// `None` for a node the union does not know.
    pub fn ids_of(&self, file: &FxFile) -> Vec<Vec<Option<u32>>> {
        union_ids(&self.union, file)
    }

    /// The edges of `file` (producer, consumer) as union ids, given its [`Self::ids_of`]: the
    /// edges of [`pass_entries`], in its order, without a string per node.
    pub fn edges_of(&self, file: &FxFile, ids: &[Vec<Option<u32>>]) -> Vec<(u32, u32)> {
        let id = |(g, i): (usize, usize)| ids.get(g).and_then(|v| v.get(i)).copied().flatten();
        let mut out = Vec::new();
        for_each_entry(file, |at, inputs| {
            if let Some(b) = id(at) {
                out.extend(inputs.filter_map(id).map(|a| (a, b)));
            }
        });
        out
    }
}
