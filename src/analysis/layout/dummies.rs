//! The proper layered graph: every edge joins adjacent layers, long edges pass through dummy
//! nodes.
//!
//! Blow-up guard. Backward graphs reuse saved activations across thousands of layers; one dummy
//! per layer per edge would create hundreds of thousands of dummies. Two rules keep the count
//! bounded:
//! - All long out-edges of a producer share one chain of dummies (a *trunk*) that runs down to
//!   the deepest of them; each consumer branches off the trunk in the layer above it. A
//!   producer costs `max span - 1` dummies, not the sum of its spans, and its edges are drawn
//!   as one bus instead of a fan.
//! - Edges longer than a cut-off span `K` are not routed at all ([`Route::Direct`]): they are
//!   drawn as straight segments. `K` is the largest span whose trunks fit the budget
//!   (`dummy_budget x nodes`), found by bisection, and at most `max_edge_span` when set. So the
//!   longest edges go first, which is also what readability asks for.

use super::csr::Csr;
use super::{Cancelled, check};
use std::sync::atomic::AtomicBool;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    /// Adjacent layers, or through the trunk of its source.
    Routed,
    /// Straight segment, no dummies.
    Direct,
}

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
    /// Per real node: index of its first trunk dummy (one layer below it), if it has a trunk.
    pub trunk_start: Vec<u32>,
    /// Per dummy (index `- n_real`): the real node whose trunk it belongs to.
    pub owner: Vec<u32>,
    /// Per DAG edge.
    pub route: Vec<Route>,
    pub max_routed_span: u32,
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

    /// The trunk dummy of `source` in layer `l` (`layer[source] < l`, within the trunk).
    pub(crate) fn trunk_dummy(&self, source: u32, l: u32) -> u32 {
        self.trunk_start[source as usize] + (l - self.layer[source as usize] - 1)
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
    let cut = routed_span_limit(n, dag, &span, budget, max_edge_span);
    check(cancel)?;

    let route: Vec<Route> = dag
        .iter()
        .map(|e| {
            if span(e) <= cut {
                Route::Routed
            } else {
                Route::Direct
            }
        })
        .collect();
    // Trunk length of each producer: its longest routed edge minus one.
    let mut trunk_len = vec![0u32; n];
    for (e, r) in dag.iter().zip(&route) {
        if *r == Route::Routed {
            let l = &mut trunk_len[e.0 as usize];
            *l = (*l).max(span(e).saturating_sub(1));
        }
    }
    let total: usize = trunk_len.iter().map(|&l| l as usize).sum();
    let mut node_layer = layer.to_vec();
    node_layer.reserve(total);
    let mut size = sizes.to_vec();
    size.resize(n + total, (0.0, 0.0));
    let mut trunk_start = vec![u32::MAX; n];
    let mut owner = Vec::with_capacity(total);
    let mut proper: Vec<(u32, u32)> = Vec::with_capacity(dag.len() + total);
    for v in 0..n {
        if trunk_len[v] == 0 {
            continue;
        }
        trunk_start[v] = node_layer.len() as u32;
        let mut prev = v as u32;
        for k in 1..=trunk_len[v] {
            let d = node_layer.len() as u32;
            node_layer.push(layer[v] + k);
            owner.push(v as u32);
            proper.push((prev, d));
            prev = d;
        }
    }
    let mut graph = Layered {
        n_real: n,
        layer: node_layer,
        layer_count: layer.iter().max().map_or(0, |&m| m as usize + 1),
        size,
        down: Csr::default(),
        up: Csr::default(),
        trunk_start,
        owner,
        route,
        max_routed_span: 0,
    };
    for (e, r) in dag.iter().zip(&graph.route) {
        if *r != Route::Routed {
            continue;
        }
        let s = span(e);
        graph.max_routed_span = graph.max_routed_span.max(s);
        let from = if s <= 1 {
            e.0
        } else {
            graph.trunk_dummy(e.0, layer[e.1 as usize] - 1)
        };
        proper.push((from, e.1));
    }
    let total_nodes = graph.node_count();
    graph.down = Csr::build(total_nodes, proper.iter().copied());
    graph.up = Csr::build(total_nodes, proper.iter().map(|&(a, b)| (b, a)));
    Ok(graph)
}

/// The largest span `K` such that routing every edge of span `<= K` costs at most `budget`
/// dummies (trunks shared per producer), capped by `max_edge_span` when non-zero.
fn routed_span_limit(
    n: usize,
    dag: &[(u32, u32)],
    span: &impl Fn(&(u32, u32)) -> u32,
    budget: usize,
    max_edge_span: u32,
) -> u32 {
    let longest = dag.iter().map(span).max().unwrap_or(1).max(1);
    let hi_cap = if max_edge_span == 0 {
        longest
    } else {
        max_edge_span.min(longest)
    };
    let mut trunk = vec![0u32; n];
    let mut cost = |k: u32| -> usize {
        trunk.iter_mut().for_each(|t| *t = 0);
        for e in dag {
            let s = span(e);
            if s >= 2 && s <= k {
                let t = &mut trunk[e.0 as usize];
                *t = (*t).max(s - 1);
            }
        }
        trunk.iter().map(|&t| t as usize).sum()
    };
    if cost(hi_cap) <= budget {
        return hi_cap.max(1);
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
