//! The proper layered graph: every edge joins adjacent layers, long edges pass through dummy
//! nodes.
//!
//! Blow-up guard. Backward graphs reuse saved activations across thousands of layers, and a
//! forward graph returns hundreds of activations from all over the graph to one `output` node;
//! one dummy per layer per edge would create hundreds of thousands of dummies and draw fans of
//! long, parallel edges. Two rules keep the count bounded and the picture readable:
//! - Long edges are bundled into *trunks*: one chain of dummies per node and direction. A long
//!   edge either leaves through its source's fan-out trunk (which runs down to the deepest of
//!   those consumers, each branching off in the layer above it) or arrives through its target's
//!   fan-in trunk (which rises to the highest of those producers); it takes the side with more
//!   long edges, so `output` gets one collecting bus. A trunk costs `longest span - 1` dummies
//!   however many edges share it, and bundled edges stay unambiguous: they share an endpoint.
//! - The budget (`dummy_budget x nodes`) is spent in two rounds. First 60% goes to the
//!   shortest edges, which carry the local structure: the cut-off `K` is the largest span whose
//!   trunks fit, found by bisection (at most `max_edge_span` when set). The rest then extends
//!   whole trunks past `K`, those carrying the most edges per extra dummy first: the `output`
//!   bus costs one dummy per layer however many edges join it, and a bus is far easier on the
//!   eye than a fan of long lines. Edges still longer than their trunk's cut-off are not routed
//!   ([`Route::Direct`]) but drawn as straight segments.

use super::csr::Csr;
use super::{Cancelled, check};
use std::sync::atomic::AtomicBool;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// Between adjacent layers.
    Adjacent,
    /// Through the fan-out trunk of its source.
    OutTrunk,
    /// Through the fan-in trunk of its target.
    InTrunk,
    /// Straight segment, no dummies.
    Direct,
}

/// A chain of dummies of one node, one per layer in `top..top + len`.
#[derive(Debug, Clone, Copy)]
struct Trunk {
    first: u32,
    top: u32,
    len: u32,
}

const NO_TRUNK: Trunk = Trunk {
    first: u32::MAX,
    top: 0,
    len: 0,
};

pub(crate) struct Layered {
    /// Nodes `0..n_real` are the input's; the rest are dummies.
    pub n_real: usize,
    /// Layer of every node, dummies included.
    pub layer: Vec<u32>,
    pub layer_count: usize,
    /// Width and height of every node (0 for dummies).
    pub size: Vec<(f32, f32)>,
    /// Successors in the next layer.
    pub down: Csr,
    /// Predecessors in the previous layer.
    pub up: Csr,
    /// Per DAG edge.
    pub route: Vec<Route>,
    pub max_routed_span: u32,
    /// Per dummy (index `- n_real`): the real node whose trunk it belongs to.
    owner: Vec<u32>,
    out_trunk: Vec<Trunk>,
    in_trunk: Vec<Trunk>,
}

impl Layered {
    pub(crate) fn node_count(&self) -> usize {
        self.layer.len()
    }

    pub(crate) fn dummy_count(&self) -> usize {
        self.layer.len() - self.n_real
    }

    pub(crate) fn is_dummy(&self, v: u32) -> bool {
        v as usize >= self.n_real
    }

    /// The real node a node stands for: itself, or the owner of its trunk.
    pub(crate) fn real_of(&self, v: u32) -> u32 {
        match (v as usize).checked_sub(self.n_real) {
            Some(d) => self.owner[d],
            None => v,
        }
    }

    /// Every trunk as its range of dummy ids, top to bottom (one dummy per layer).
    pub(crate) fn trunks(&self) -> impl Iterator<Item = std::ops::Range<u32>> + '_ {
        self.out_trunk
            .iter()
            .chain(&self.in_trunk)
            .filter(|t| t.len > 0)
            .map(|t| t.first..t.first + t.len)
    }

    /// The dummies a routed DAG edge `a -> b` passes through, top to bottom: consecutive ids
    /// of one trunk, one per layer strictly between `a` and `b`.
    pub(crate) fn bends(&self, route: Route, a: u32, b: u32) -> std::ops::Range<u32> {
        let (la, lb) = (self.layer[a as usize], self.layer[b as usize]);
        let trunk = match route {
            Route::OutTrunk => self.out_trunk[a as usize],
            Route::InTrunk => self.in_trunk[b as usize],
            Route::Adjacent | Route::Direct => NO_TRUNK,
        };
        if trunk.len == 0 || lb <= la + 1 {
            return 0..0;
        }
        let first = trunk.first + (la + 1 - trunk.top);
        first..first + (lb - la - 1)
    }
}

pub(crate) fn build(
    layer: &[u32],
    dag: &[(u32, u32)],
    budget: usize,
    max_edge_span: u32,
    sizes: &[(f32, f32)],
    cancel: &AtomicBool,
) -> Result<Layered, Cancelled> {
    let n = layer.len();
    let span = |&(s, t): &(u32, u32)| layer[t as usize].saturating_sub(layer[s as usize]);
    let spans: Vec<u32> = dag.iter().map(span).collect();
    let fan_in = fan_in_sides(n, dag, &spans);
    let slot_of = |e: usize| {
        let (a, b) = dag[e];
        if fan_in[e] {
            n + b as usize
        } else {
            a as usize
        }
    };
    let slots: Vec<usize> = (0..dag.len()).map(slot_of).collect();
    let cap = if max_edge_span == 0 {
        u32::MAX
    } else {
        max_edge_span
    };
    // Short edges carry the local structure: they get most of the budget whatever it costs.
    let cut = routed_span_limit(&spans, &slots, 2 * n, budget * 3 / 5, cap);
    let cutoff = extend_trunks(&spans, &slots, 2 * n, budget, cut, cap);
    check(cancel)?;

    let route: Vec<Route> = (0..dag.len())
        .map(|e| match spans[e] {
            0 | 1 => Route::Adjacent,
            s if s > cutoff[slots[e]] => Route::Direct,
            _ if fan_in[e] => Route::InTrunk,
            _ => Route::OutTrunk,
        })
        .collect();
    let mut graph = Layered {
        n_real: n,
        layer: layer.to_vec(),
        layer_count: layer.iter().max().map_or(0, |&m| m as usize + 1),
        size: sizes.to_vec(),
        down: Csr::default(),
        up: Csr::default(),
        route,
        max_routed_span: 0,
        owner: Vec::new(),
        out_trunk: vec![NO_TRUNK; n],
        in_trunk: vec![NO_TRUNK; n],
    };
    let mut proper = make_trunks(&mut graph, dag);
    for (e, &(a, b)) in dag.iter().enumerate() {
        let r = graph.route[e];
        if r == Route::Direct {
            continue;
        }
        graph.max_routed_span = graph.max_routed_span.max(spans[e]);
        // The edge joins its trunk in the layer below its source (fan-in) or leaves it in the
        // layer above its target (fan-out); the trunk's own chain edges are already in.
        match r {
            Route::Adjacent => proper.push((a, b)),
            Route::OutTrunk => proper.push((graph.bends(r, a, b).last().unwrap_or(a), b)),
            Route::InTrunk => proper.push((a, graph.bends(r, a, b).next().unwrap_or(b))),
            Route::Direct => {}
        }
    }
    let total = graph.node_count();
    graph.size.resize(total, (0.0, 0.0));
    graph.down = Csr::build(total, proper.iter().copied());
    graph.up = Csr::build(total, proper.iter().map(|&(a, b)| (b, a)));
    Ok(graph)
}

/// Per DAG edge: route it through its target's fan-in trunk (true) or its source's fan-out
/// trunk (false)? The side where more long edges meet wins; ties go to the source.
fn fan_in_sides(n: usize, dag: &[(u32, u32)], spans: &[u32]) -> Vec<bool> {
    let mut long_out = vec![0u32; n];
    let mut long_in = vec![0u32; n];
    for (&(a, b), &s) in dag.iter().zip(spans) {
        if s >= 2 {
            long_out[a as usize] += 1;
            long_in[b as usize] += 1;
        }
    }
    dag.iter()
        .map(|&(a, b)| long_in[b as usize] > long_out[a as usize])
        .collect()
}

/// Creates the dummies of every trunk the routes need, and returns the chain edges.
fn make_trunks(graph: &mut Layered, dag: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let n = graph.n_real;
    // Layer range each trunk must cover: (top, bottom), inclusive.
    let mut out_range = vec![(u32::MAX, 0u32); n];
    let mut in_range = vec![(u32::MAX, 0u32); n];
    for (e, &(a, b)) in dag.iter().enumerate() {
        let (la, lb) = (graph.layer[a as usize], graph.layer[b as usize]);
        let range = match graph.route[e] {
            Route::OutTrunk => &mut out_range[a as usize],
            Route::InTrunk => &mut in_range[b as usize],
            Route::Adjacent | Route::Direct => continue,
        };
        *range = (range.0.min(la + 1), range.1.max(lb - 1));
    }
    let mut chains = Vec::new();
    for v in 0..n {
        for (range, fan_in) in [(out_range[v], false), (in_range[v], true)] {
            if range.0 > range.1 {
                continue;
            }
            let trunk = Trunk {
                first: graph.layer.len() as u32,
                top: range.0,
                len: range.1 - range.0 + 1,
            };
            for l in range.0..=range.1 {
                let d = graph.layer.len() as u32;
                graph.layer.push(l);
                graph.owner.push(v as u32);
                if l > range.0 {
                    chains.push((d - 1, d));
                }
            }
            // Fan-out trunks hang below their source; fan-in trunks end above their target.
            if fan_in {
                chains.push((trunk.first + trunk.len - 1, v as u32));
                graph.in_trunk[v] = trunk;
            } else {
                chains.push((v as u32, trunk.first));
                graph.out_trunk[v] = trunk;
            }
        }
    }
    chains
}

/// Dummies needed by the trunks when every edge of span `<= limit[slot]` is routed.
fn trunk_cost(
    spans: &[u32],
    slots: &[usize],
    slot_count: usize,
    limit: impl Fn(usize) -> u32,
) -> usize {
    let mut trunk = vec![0u32; slot_count];
    for (&s, &slot) in spans.iter().zip(slots) {
        if s >= 2 && s <= limit(slot) {
            trunk[slot] = trunk[slot].max(s - 1);
        }
    }
    trunk.iter().map(|&t| t as usize).sum()
}

/// The largest span `K <= cap` such that routing every edge of span `<= K` costs at most
/// `budget` dummies.
fn routed_span_limit(
    spans: &[u32],
    slots: &[usize],
    slot_count: usize,
    budget: usize,
    cap: u32,
) -> u32 {
    let hi_cap = spans
        .iter()
        .copied()
        .max()
        .unwrap_or(1)
        .clamp(1, cap.max(1));
    let cost = |k: u32| trunk_cost(spans, slots, slot_count, |_| k);
    if cost(hi_cap) <= budget {
        return hi_cap;
    }
    // cost(1) == 0 <= budget; invariant: cost(lo) fits, cost(hi) does not.
    let (mut lo, mut hi) = (1u32, hi_cap);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if cost(mid) <= budget {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Per trunk slot, the longest span routed: `k` for most, more for the trunks that the budget
/// left after `k` can extend to all their edges (up to `cap`), best edges-per-dummy first.
fn extend_trunks(
    spans: &[u32],
    slots: &[usize],
    slot_count: usize,
    budget: usize,
    k: u32,
    cap: u32,
) -> Vec<u32> {
    let mut cutoff = vec![k; slot_count];
    // Per slot: current trunk length, full trunk length, edges gained by extending.
    let mut cur = vec![0u32; slot_count];
    let mut full = vec![0u32; slot_count];
    let mut gained = vec![0u32; slot_count];
    for (&s, &slot) in spans.iter().zip(slots) {
        if s < 2 || s > cap {
            continue;
        }
        full[slot] = full[slot].max(s - 1);
        if s <= k {
            cur[slot] = cur[slot].max(s - 1);
        } else {
            gained[slot] += 1;
        }
    }
    let mut used: usize = cur.iter().map(|&c| c as usize).sum();
    let mut candidates: Vec<usize> = (0..slot_count).filter(|&t| gained[t] > 0).collect();
    let extra = |t: usize| u64::from(full[t] - cur[t]).max(1);
    // gained/extra descending, compared by cross-multiplication to stay exact.
    candidates.sort_by(|&a, &b| {
        (u64::from(gained[b]) * extra(a))
            .cmp(&(u64::from(gained[a]) * extra(b)))
            .then(a.cmp(&b))
    });
    for t in candidates {
        let cost = (full[t] - cur[t]) as usize;
        if used + cost <= budget {
            used += cost;
            cutoff[t] = full[t] + 1;
        }
    }
    cutoff
}
