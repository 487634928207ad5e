//! Brandes–Köpf horizontal coordinates ("Fast and Simple Horizontal Coordinate Assignment",
//! 2001), linear time: four times (aligning with upper or lower neighbours, packing to the
//! left or to the right) nodes are grouped into vertical *blocks* by aligning each with a
//! median neighbour, and the blocks are packed; the result is the average of the two middle
//! candidates of each node.
//!
//! Inner segments (dummy to dummy: the trunks of long edges) are aligned first and never
//! broken by an edge joining a trunk halfway, so a bus is a straight vertical line wherever the
//! ordering lets it be. That is what the least-squares placement could not give: there a stiff
//! bus next to a flexible main column drifts a little per layer, across thousands of layers.
//!
//! Packing follows dagre: the block graph (left block -> right block, weighted by the spacing)
//! is placed by longest path, then each block is pulled towards its right neighbours.

use super::csr::Csr;
use super::dummies::Layered;
use super::order::Order;
use super::spacing::{Spacing, separation};
use super::{Cancelled, check};
use std::sync::atomic::AtomicBool;

/// One of the four passes.
#[derive(Clone, Copy)]
struct Direction {
    /// Align with upper neighbours, scanning layers top-down (else lower, bottom-up).
    downward: bool,
    /// Scan layers left to right and pack to the left (else mirrored).
    leftward: bool,
}

pub(crate) fn place(
    graph: &Layered,
    ord: &Order,
    spacing: &Spacing,
    cancel: &AtomicBool,
) -> Result<Vec<f64>, Cancelled> {
    let conflicts = conflicts(graph, ord);
    check(cancel)?;
    let mut candidates = Vec::with_capacity(4);
    for (downward, leftward) in [(true, true), (true, false), (false, true), (false, false)] {
        let dir = Direction { downward, leftward };
        let root = align(graph, ord, &conflicts, dir);
        check(cancel)?;
        candidates.push(compact(graph, ord, &root, spacing, dir));
        check(cancel)?;
    }
    Ok(balance(graph, candidates))
}

/// Edges that must not be aligned, each a flag at its place in `graph.up` (the upper node in
/// the lower node's row): read for every node in each of the four passes, where a hash set of
/// a 100k-node graph's edges missed the cache on every lookup. Parallel edges are one pair:
/// a pair is marked at its first place, and asked for at every place.
struct Conflicts<'g> {
    up: &'g Csr,
    marked: Vec<bool>,
}

impl<'g> Conflicts<'g> {
    fn new(graph: &'g Layered) -> Self {
        Conflicts {
            up: &graph.up,
            marked: vec![false; graph.up.len()],
        }
    }

    fn mark(&mut self, upper: u32, lower: u32) {
        if let Some(j) = self.up.row(lower).iter().position(|&u| u == upper) {
            self.marked[self.up.start(lower) + j] = true;
        }
    }

    fn contains(&self, upper: u32, lower: u32) -> bool {
        let at = self.up.start(lower);
        self.up
            .row(lower)
            .iter()
            .enumerate()
            .any(|(j, &u)| u == upper && self.marked[at + j])
    }
}

/// The dummy above (or below) dummy `v` in its trunk, if any: its inner segment.
fn inner_neighbour(graph: &Layered, v: u32, above: bool) -> Option<u32> {
    if !graph.is_dummy(v) {
        return None;
    }
    let nbrs = if above {
        graph.up.row(v)
    } else {
        graph.down.row(v)
    };
    nbrs.iter().copied().find(|&w| graph.is_dummy(w))
}

/// Edges that must not be aligned: those crossing an inner segment (type 1 conflicts of the
/// paper), and those meeting a trunk halfway, which would otherwise steal the trunk's
/// alignment.
fn conflicts<'g>(graph: &'g Layered, ord: &Order) -> Conflicts<'g> {
    let mut marked = Conflicts::new(graph);
    for l in 1..ord.layer_count() {
        let (upper, lower) = (ord.layer(l - 1), ord.layer(l));
        if upper.is_empty() {
            continue;
        }
        let (mut k0, mut scan) = (0u32, 0usize);
        for (l1, &v) in lower.iter().enumerate() {
            let inner = inner_neighbour(graph, v, true);
            if l1 + 1 < lower.len() && inner.is_none() {
                continue;
            }
            let k1 = inner.map_or(upper.len() as u32 - 1, |u| ord.pos[u as usize]);
            while scan <= l1 {
                let w = lower[scan];
                for &u in graph.up.row(w) {
                    let k = ord.pos[u as usize];
                    if k < k0 || k > k1 {
                        marked.mark(u, w);
                    }
                }
                scan += 1;
            }
            k0 = k1;
        }
    }
    for v in graph.n_real as u32..graph.node_count() as u32 {
        if let Some(u) = inner_neighbour(graph, v, true) {
            for &p in graph.up.row(v).iter().filter(|&&p| p != u) {
                marked.mark(p, v);
            }
        }
        if let Some(w) = inner_neighbour(graph, v, false) {
            for &c in graph.down.row(v).iter().filter(|&&c| c != w) {
                marked.mark(v, c);
            }
        }
    }
    marked
}

/// Vertical alignment: the root (topmost node in scan order) of each node's block.
fn align(graph: &Layered, ord: &Order, conflicts: &Conflicts, dir: Direction) -> Vec<u32> {
    let n = graph.node_count();
    let mut root: Vec<u32> = (0..n as u32).collect();
    // `aligned[v]`: v already has its block successor in the scan direction.
    let mut aligned = vec![false; n];
    let layers = ord.layer_count();
    let vpos = |v: u32| virtual_pos(ord, graph, v, dir.leftward);
    let mut nbrs: Vec<u32> = Vec::new();
    for step in 1..layers {
        let l = if dir.downward {
            step
        } else {
            layers - 1 - step
        };
        let layer = ord.layer(l);
        let mut r: i64 = -1;
        for k in 0..layer.len() {
            let v = if dir.leftward {
                layer[k]
            } else {
                layer[layer.len() - 1 - k]
            };
            nbrs.clear();
            match inner_neighbour(graph, v, dir.downward) {
                Some(u) => nbrs.push(u),
                None if dir.downward => nbrs.extend_from_slice(graph.up.row(v)),
                None => nbrs.extend_from_slice(graph.down.row(v)),
            }
            if nbrs.is_empty() {
                continue;
            }
            nbrs.sort_unstable_by_key(|&u| vpos(u));
            let d = nbrs.len();
            for m in [(d - 1) / 2, d / 2] {
                if root[v as usize] != v {
                    break; // aligned with the first median already
                }
                let u = nbrs[m];
                let (upper, lower) = if dir.downward { (u, v) } else { (v, u) };
                let pu = i64::from(vpos(u));
                if !aligned[u as usize] && r < pu && !conflicts.contains(upper, lower) {
                    aligned[u as usize] = true;
                    root[v as usize] = root[u as usize];
                    r = pu;
                }
                if d % 2 == 1 {
                    break; // one median only
                }
            }
        }
    }
    root
}

/// Position within the layer, counted from the left or, when mirrored, from the right.
fn virtual_pos(ord: &Order, graph: &Layered, v: u32, leftward: bool) -> u32 {
    let p = ord.pos[v as usize];
    if leftward {
        p
    } else {
        let l = graph.layer[v as usize] as usize;
        ord.layer_start[l + 1] - ord.layer_start[l] - 1 - p
    }
}

/// Packs the blocks: x of every node (of its block's root).
fn compact(
    graph: &Layered,
    ord: &Order,
    root: &[u32],
    spacing: &Spacing,
    dir: Direction,
) -> Vec<f64> {
    let n = graph.node_count();
    // Block graph: root of the left block -> root of the right block, with the spacing.
    let mut seps: Vec<(u32, u32, f64)> = Vec::with_capacity(n);
    for l in 0..ord.layer_count() {
        let layer = ord.layer(l);
        for w in layer.windows(2) {
            let (a, b) = if dir.leftward {
                (w[0], w[1])
            } else {
                (w[1], w[0])
            };
            let sep = separation(graph, spacing, a, b);
            seps.push((root[a as usize], root[b as usize], sep));
        }
    }
    let right_of = Csr::build(n, seps.iter().enumerate().map(|(i, s)| (s.0, i as u32)));
    let left_of = Csr::build(n, seps.iter().enumerate().map(|(i, s)| (s.1, i as u32)));
    let topo = block_order(n, root, &seps, &right_of);
    let mut x = vec![0f64; n];
    for &b in &topo {
        let from_left = left_of.row(b).iter().map(|&e| {
            let (a, _, sep) = seps[e as usize];
            x[a as usize] + sep
        });
        x[b as usize] = from_left.fold(0.0, f64::max);
    }
    // Pull each block towards its right neighbours: blocks with slack would otherwise all
    // hug the left border.
    for &b in topo.iter().rev() {
        let to_right = right_of.row(b).iter().map(|&e| {
            let (_, c, sep) = seps[e as usize];
            x[c as usize] - sep
        });
        let limit = to_right.fold(f64::INFINITY, f64::min);
        if limit.is_finite() {
            x[b as usize] = x[b as usize].max(limit);
        }
    }
    let sign = if dir.leftward { 1.0 } else { -1.0 };
    (0..n).map(|v| sign * x[root[v] as usize]).collect()
}

/// Roots in topological order of the block graph (Kahn). Alignment keeps the layer orders, so
/// the block graph is acyclic; should it not be, the leftover blocks come last.
fn block_order(n: usize, root: &[u32], seps: &[(u32, u32, f64)], right_of: &Csr) -> Vec<u32> {
    let mut indeg = vec![0u32; n];
    for s in seps {
        indeg[s.1 as usize] += 1;
    }
    let is_root = |v: usize| root[v] as usize == v;
    let mut topo: Vec<u32> = (0..n)
        .filter(|&v| is_root(v) && indeg[v] == 0)
        .map(|v| v as u32)
        .collect();
    let mut head = 0;
    while head < topo.len() {
        let b = topo[head];
        head += 1;
        for &e in right_of.row(b) {
            let c = seps[e as usize].1 as usize;
            indeg[c] -= 1;
            if indeg[c] == 0 {
                topo.push(c as u32);
            }
        }
    }
    if topo.len() < (0..n).filter(|&v| is_root(v)).count() {
        let mut seen = vec![false; n];
        topo.iter().for_each(|&b| seen[b as usize] = true);
        topo.extend((0..n).filter(|&v| is_root(v) && !seen[v]).map(|v| v as u32));
    }
    topo
}

/// Aligns the four candidates to the narrowest one (left packings by their left border, right
/// packings by their right border) and takes the mean of the two middle values per node.
fn balance(graph: &Layered, mut candidates: Vec<Vec<f64>>) -> Vec<f64> {
    let n = graph.node_count();
    let extent = |xs: &[f64]| {
        (0..n).fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            let half = f64::from(graph.size[v].0) / 2.0;
            (lo.min(xs[v] - half), hi.max(xs[v] + half))
        })
    };
    let extents: Vec<(f64, f64)> = candidates.iter().map(|xs| extent(xs)).collect();
    let Some(narrowest) = (0..candidates.len()).min_by(|&a, &b| {
        let width = |i: usize| extents[i].1 - extents[i].0;
        width(a).total_cmp(&width(b))
    }) else {
        return vec![0.0; n];
    };
    let (lo, hi) = extents[narrowest];
    for (i, xs) in candidates.iter_mut().enumerate() {
        // Candidates 0 and 2 pack leftwards, 1 and 3 rightwards.
        let delta = if i % 2 == 0 {
            lo - extents[i].0
        } else {
            hi - extents[i].1
        };
        if delta.is_finite() {
            xs.iter_mut().for_each(|x| *x += delta);
        }
    }
    (0..n)
        .map(|v| {
            let mut four = [
                candidates[0][v],
                candidates[1][v],
                candidates[2][v],
                candidates[3][v],
            ];
            four.sort_unstable_by(f64::total_cmp);
            (four[1] + four[2]) / 2.0
        })
        .collect()
}
