//! Layered top-to-bottom layout of FX graphs (the Sugiyama framework), built for deep, narrow
//! DAGs of up to ~20,000 ops: every phase is linear or `O(E log E)` in the size of the graph,
//! nothing recurses on graph depth, and the cancel flag is polled between phases and inside
//! every long loop. Pure computation: no I/O, no UI.
//!
//! Phases, one file each:
//! 1. `edges`: drop out-of-range edges, set self-loops aside, merge duplicates.
//! 2. `acyclic`: iterative DFS from the nodes in index order; back edges (a feedback arc set)
//!    are reversed and reported.
//! 3. `layering`: longest path from the top, then bottom-up passes sink nodes to just above
//!    their first consumer when that shortens the edges: graph inputs and weights always, and
//!    subgraphs computed from saved activations alone, moved as blocks.
//! 4. `dummies`: edges spanning several layers pass through dummy nodes, bundled into one
//!    *trunk* per producer (fan-out) or consumer (fan-in, e.g. `output`); a budget caps the
//!    dummies and leaves the longest edges unrouted ([`EdgeKind::Direct`]).
//! 5. `ordering`: barycenter sweeps down and up, each followed by `transpose` (swaps of
//!    neighbours), keeping the order with the fewest crossings (`crossings`, see
//!    [`count_crossings`]); optional groups stay contiguous within each layer.
//! 6. `coords`: x by Brandes–Köpf (`bk`, trunks vertical), relaxed towards neighbours and
//!    projected onto the spacing constraints; y from the layer heights.
//! 7. `routing`: one polyline per input edge through its trunk.
//!
//! `union` builds one graph from all passes of a phase ([`UnionGraph`], [`build_union`]) so
//! that a node keeps its place while the user scrubs from pass to pass; [`relayout`] lays out a
//! grown union starting from the previous layout.

mod acyclic;
mod bk;
mod coords;
mod crossings;
mod csr;
mod dummies;
mod edges;
mod layering;
mod order;
mod ordering;
mod pav;
mod routing;
mod spacing;
mod transpose;
mod union;

use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::time::{Duration, Instant};

pub use crossings::count_crossings;
pub use union::{UnionGraph, build_union};

/// What to lay out. Node `i` has size `sizes[i]`; edges name nodes by index.
#[derive(Debug, Clone, Default)]
pub struct LayoutInput {
    /// Width and height of each node. Negative or non-finite values count as 0.
    pub sizes: Vec<(f32, f32)>,
    /// `producer -> consumer`. Out-of-range indices, self-loops, duplicates and cycles are
    /// all tolerated (see [`GraphLayout::edge_kinds`] and [`GraphLayout::reversed_edges`]).
    pub edges: Vec<(u32, u32)>,
    /// Optional group of each node (e.g. the branch of a `cond`): nodes of one group are kept
    /// contiguous within every layer. Empty means no groups; missing entries mean "none".
    pub groups: Vec<Option<u32>>,
}

/// Tuning knobs. `Default` suits FX graphs drawn with ~150x40 boxes.
#[derive(Debug, Clone)]
pub struct LayoutParams {
    /// Vertical gap between two layer bands.
    pub layer_gap: f32,
    /// Horizontal gap between two real nodes of a layer.
    pub node_gap: f32,
    /// Horizontal gap next to an edge passing through a layer (a dummy node).
    pub edge_gap: f32,
    /// Crossing-reduction sweeps (one sweep = one pass down or up); 0 keeps the initial order.
    pub max_sweeps: usize,
    /// Relaxation sweeps after Brandes–Köpf (each node towards its neighbours, trunks kept).
    pub coord_sweeps: usize,
    /// Dummy nodes allowed, as a multiple of the node count. Edges too long to fit are drawn
    /// as direct segments instead of being routed around the nodes.
    pub dummy_budget: f32,
    /// Edges spanning more layers than this are always drawn direct (0: no limit but the
    /// budget). A routed edge this long is unreadable anyway and widens the whole graph.
    pub max_edge_span: u32,
}

impl Default for LayoutParams {
    fn default() -> Self {
        LayoutParams {
            layer_gap: 40.0,
            node_gap: 20.0,
            edge_gap: 10.0,
            max_sweeps: 24,
            coord_sweeps: 4,
            dummy_budget: 3.0,
            max_edge_span: 0,
        }
    }
}

/// How an input edge was drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum EdgeKind {
    /// Through its layers, around the nodes (adjacent layers, or via dummy nodes).
    Routed,
    /// A straight segment: the edge spans more layers than the dummy budget allows. The UI
    /// may draw it faded or as stubs.
    Direct,
    /// Source equals target: a small loop on the right of the node.
    SelfLoop,
    /// An endpoint is out of range: empty path.
    Invalid,
}

/// The result: positions of the input nodes and one polyline per input edge.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GraphLayout {
    /// Node centres, x to the right, y downwards.
    pub pos: Vec<[f32; 2]>,
    /// Layer of each node, 0 at the top.
    pub layer: Vec<u32>,
    /// Per input edge: from the bottom of its source to the top of its target through its
    /// bend points. A reversed (cycle-breaking) edge runs upward: from the top of its source
    /// to the bottom of its target. Empty for [`EdgeKind::Invalid`].
    pub edge_paths: Vec<Vec<[f32; 2]>>,
    /// Per input edge: how it was drawn.
    pub edge_kinds: Vec<EdgeKind>,
    /// Input edges reversed to break cycles, ascending.
    pub reversed_edges: Vec<u32>,
    /// `[min x, min y, max x, max y]` of nodes and edge paths.
    pub bounds: [f32; 4],
    pub stats: LayoutStats,
}

/// Figures for benchmarks, tests and the status bar. `==` ignores `phase_times`, so that two
/// runs on the same input compare equal.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct LayoutStats {
    pub layers: usize,
    pub dummies: usize,
    /// Edges drawn [`EdgeKind::Direct`].
    pub direct_edges: usize,
    /// Longest span (in layers) of a routed edge.
    pub max_routed_span: u32,
    /// Edge crossings (between adjacent layers, dummies included) of the initial order.
    pub crossings_initial: u64,
    /// Edge crossings of the order kept.
    pub crossings_final: u64,
    pub sweeps_run: usize,
    /// Wall time of each phase (where it was measured: not sent over a link).
    #[serde(skip)]
    pub phase_times: Vec<(&'static str, Duration)>,
}

impl PartialEq for LayoutStats {
    fn eq(&self, other: &Self) -> bool {
        let key = |s: &Self| {
            (
                s.layers,
                s.dummies,
                s.direct_edges,
                s.max_routed_span,
                s.crossings_initial,
                s.crossings_final,
                s.sweeps_run,
            )
        };
        key(self) == key(other)
    }
}

/// The cancel flag was set; the layout was abandoned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("layout cancelled")]
pub struct Cancelled;

/// Polls the cancel flag; phases call it between steps and every few thousand loop iterations.
pub(crate) fn check(cancel: &AtomicBool) -> Result<(), Cancelled> {
    if cancel.load(AtomicOrdering::Relaxed) {
        Err(Cancelled)
    } else {
        Ok(())
    }
}

/// Lays out `input` from scratch. Deterministic: the same input gives the same output.
pub fn layout(
    input: &LayoutInput,
    params: &LayoutParams,
    cancel: &AtomicBool,
) -> Result<GraphLayout, Cancelled> {
    run(input, params, None, cancel)
}

/// Lays out `input` starting from `previous`, a layout of a graph whose nodes are a prefix of
/// this one's (what [`UnionGraph`] produces when a pass is appended). The whole pipeline runs
/// again (it is fast enough), but each layer starts in the previous left-to-right order and
/// the nodes laid out before are pulled back to their previous x, new nodes making room; with
/// few `max_sweeps` (e.g. 0 to 4) the picture moves little. Layers are recomputed, so a node
/// whose inputs changed may move up or down.
pub fn relayout(
    input: &LayoutInput,
    params: &LayoutParams,
    previous: &GraphLayout,
    cancel: &AtomicBool,
) -> Result<GraphLayout, Cancelled> {
    run(input, params, Some(previous), cancel)
}

fn run(
    input: &LayoutInput,
    params: &LayoutParams,
    seed: Option<&GraphLayout>,
    cancel: &AtomicBool,
) -> Result<GraphLayout, Cancelled> {
    let mut timer = PhaseTimer::new();
    check(cancel)?;
    // Dummies get ids after the nodes; keep room for them in `u32` (nodes beyond are ignored,
    // which no real graph comes near).
    let n = input.sizes.len().min(u32::MAX as usize / 4);
    let sizes: Vec<(f32, f32)> = input.sizes[..n]
        .iter()
        .map(|&(w, h)| (sane(w), sane(h)))
        .collect();
    let clean = edges::sanitize(n, &input.edges);
    timer.lap("edges");

    let reversed = acyclic::feedback_edges(n, &clean.unique, cancel)?;
    let dag = edges::orient(&clean.unique, &reversed);
    timer.lap("acyclic");

    let layers = layering::assign_layers(n, &dag.edges, cancel)?;
    timer.lap("layering");

    let budget = (params.dummy_budget.max(0.0) * n as f32) as usize;
    let graph = dummies::build(
        &layers,
        &dag.edges,
        budget,
        params.max_edge_span,
        &sizes,
        cancel,
    )?;
    timer.lap("dummies");

    let groups = node_groups(&input.groups, n);
    let seed_x = seed.map(|s| ordering::seed_keys(&graph, &dag.edges, s));
    let order = ordering::reduce_crossings(
        &graph,
        groups.as_deref(),
        seed_x.as_deref(),
        params.max_sweeps,
        cancel,
    )?;
    timer.lap("ordering");

    let spacing = spacing::Spacing {
        node_gap: sane(params.node_gap),
        edge_gap: sane(params.edge_gap),
        layer_gap: sane(params.layer_gap),
    };
    let seed_pos = seed.map(|s| &s.pos[..]);
    let placed = coords::place(
        &graph,
        &order,
        &spacing,
        params.coord_sweeps,
        seed_pos,
        cancel,
    )?;
    timer.lap("coords");

    let loop_gap = spacing.layer_gap / 4.0;
    let routes = routing::route(&graph, &placed, &clean, &dag, &reversed, loop_gap, cancel)?;
    timer.lap("routing");

    let stats = LayoutStats {
        layers: graph.layer_count,
        dummies: graph.dummy_count(),
        direct_edges: routes
            .kinds
            .iter()
            .filter(|&&k| k == EdgeKind::Direct)
            .count(),
        max_routed_span: graph.max_routed_span,
        crossings_initial: order.initial,
        crossings_final: order.best,
        sweeps_run: order.sweeps,
        phase_times: timer.laps,
    };
    Ok(GraphLayout {
        pos: placed.centre[..n].to_vec(),
        layer: graph.layer[..n].to_vec(),
        bounds: routing::bounds(&graph, &placed, n, &routes.paths),
        edge_paths: routes.paths,
        edge_kinds: routes.kinds,
        reversed_edges: routes.reversed,
        stats,
    })
}

/// Sizes and gaps come from the UI's text measurement; a NaN must not poison the layout.
fn sane(v: f32) -> f32 {
    if v.is_finite() { v.max(0.0) } else { 0.0 }
}

/// `None` when no node has a group, so the ordering can skip the group logic entirely.
fn node_groups(groups: &[Option<u32>], n: usize) -> Option<Vec<Option<u32>>> {
    if groups.iter().all(Option::is_none) {
        return None;
    }
    let mut g = groups[..groups.len().min(n)].to_vec();
    g.resize(n, None);
    Some(g)
}

struct PhaseTimer {
    last: Instant,
    laps: Vec<(&'static str, Duration)>,
}

impl PhaseTimer {
    fn new() -> Self {
        PhaseTimer {
            last: Instant::now(),
            laps: Vec::new(),
        }
    }

    fn lap(&mut self, name: &'static str) {
        let now = Instant::now();
        self.laps.push((name, now - self.last));
        self.last = now;
    }
}
