//! Crossing reduction: the layer-by-layer sweep. Going down, each layer is sorted by the
//! barycenter of its neighbours' positions in the layer above (going up, below); a node with
//! no such neighbour keeps its place. After every sweep the crossings are counted and the best
//! order is kept, so the result is never worse than the initial order. Sweeps stop early once
//! a few of them in a row bring no improvement.
//!
//! Each sweep is followed by [`Transposer`] (swaps of neighbours that remove crossings).
//!
//! With groups, the sort key of a grouped node is first the mean key of its group in that
//! layer, then its own key: the group moves as a block and stays contiguous.

use super::crossings::{CrossingCounter, total};
use super::dummies::Layered;
use super::order::Order;
use super::transpose::Transposer;
use super::{Cancelled, GraphLayout, check};
use std::sync::atomic::AtomicBool;

/// Sweeps without improvement before giving up.
const PATIENCE: usize = 4;

pub(crate) fn reduce_crossings(
    graph: &Layered,
    groups: Option<&[Option<u32>]>,
    seed_keys: Option<&[f32]>,
    max_sweeps: usize,
    cancel: &AtomicBool,
) -> Result<Order, Cancelled> {
    let mut ord = initial_order(graph, seed_keys, cancel)?;
    let group_of = groups.map(|g| dummy_groups(graph, g));
    let mut sorter = Sorter::default();
    if let Some(g) = &group_of {
        // Sweeps keep groups together only in the layers they sort; start gathered so that
        // any order kept is.
        gather_groups(&mut ord, g, &mut sorter);
    }
    let mut counter = CrossingCounter::default();
    let count = |o: &Order, c: &mut CrossingCounter| {
        total(c, &o.order, &o.layer_start, &o.pos, &graph.down)
    };
    ord.initial = count(&ord, &mut counter);
    ord.best = ord.initial;
    let mut best_order = ord.order.clone();
    let mut since_best = 0;
    let mut transposer = Transposer::default();
    while ord.sweeps < max_sweeps && ord.best > 0 && since_best < PATIENCE {
        check(cancel)?;
        let downward = ord.sweeps % 2 == 0;
        sweep(
            graph,
            &mut ord,
            group_of.as_deref(),
            downward,
            &mut sorter,
            cancel,
        )?;
        transposer.run(graph, &mut ord, group_of.as_deref(), cancel)?;
        ord.sweeps += 1;
        let c = count(&ord, &mut counter);
        if c < ord.best {
            ord.best = c;
            best_order.copy_from_slice(&ord.order);
            since_best = 0;
        } else {
            since_best += 1;
        }
    }
    ord.order = best_order;
    ord.refresh_pos();
    Ok(ord)
}

/// Orders each layer by `seed_keys` when given, else by a depth-first discovery from the
/// graph's tops: a DFS keeps a producer's consumers (and their subtrees) next to each other,
/// which is already close to crossing-free on tree-like FX graphs.
fn initial_order(
    graph: &Layered,
    seed_keys: Option<&[f32]>,
    cancel: &AtomicBool,
) -> Result<Order, Cancelled> {
    let n = graph.node_count();
    let rank: Vec<f32> = match seed_keys {
        Some(k) => k.to_vec(),
        None => dfs_ranks(graph, cancel)?,
    };
    let mut counts = vec![0u32; graph.layer_count + 1];
    for &l in &graph.layer {
        counts[l as usize + 1] += 1;
    }
    for l in 0..graph.layer_count {
        counts[l + 1] += counts[l];
    }
    let layer_start = counts;
    let mut order = vec![0u32; n];
    let mut fill = layer_start.clone();
    for v in 0..n {
        let l = graph.layer[v] as usize;
        order[fill[l] as usize] = v as u32;
        fill[l] += 1;
    }
    for l in 0..graph.layer_count {
        let slice = &mut order[layer_start[l] as usize..layer_start[l + 1] as usize];
        // Index breaks ties (and orders nodes without a key, NaN sorted last) deterministically.
        slice.sort_unstable_by(|&a, &b| {
            rank[a as usize]
                .total_cmp(&rank[b as usize])
                .then(a.cmp(&b))
        });
    }
    let mut ord = Order {
        order,
        layer_start,
        pos: vec![0; n],
        initial: 0,
        best: 0,
        sweeps: 0,
    };
    ord.refresh_pos();
    Ok(ord)
}

/// Preorder rank of an iterative DFS over the proper graph, roots in index order.
fn dfs_ranks(graph: &Layered, cancel: &AtomicBool) -> Result<Vec<f32>, Cancelled> {
    let n = graph.node_count();
    let mut rank = vec![f32::NAN; n];
    let mut next = 0u32;
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let roots = (0..n as u32).filter(|&v| graph.up.row(v).is_empty());
    for root in roots.chain(0..n as u32) {
        if !rank[root as usize].is_nan() {
            continue;
        }
        rank[root as usize] = next as f32;
        next += 1;
        stack.push((root, 0));
        while let Some(top) = stack.last_mut() {
            if next.is_multiple_of(4096) {
                check(cancel)?;
            }
            let (v, cursor) = *top;
            let Some(&w) = graph.down.row(v).get(cursor as usize) else {
                stack.pop();
                continue;
            };
            top.1 += 1;
            if rank[w as usize].is_nan() {
                rank[w as usize] = next as f32;
                next += 1;
                stack.push((w, 0));
            }
        }
    }
    Ok(rank)
}

/// Dummies travel with the group of the node whose trunk they belong to, so a group's
/// outgoing edges do not split it.
fn dummy_groups(graph: &Layered, groups: &[Option<u32>]) -> Vec<Option<u32>> {
    (0..graph.node_count() as u32)
        .map(|v| groups.get(graph.real_of(v) as usize).copied().flatten())
        .collect()
}

fn gather_groups(ord: &mut Order, groups: &[Option<u32>], sorter: &mut Sorter) {
    for l in 0..ord.layer_count() {
        let (a, b) = (ord.layer_start[l] as usize, ord.layer_start[l + 1] as usize);
        sorter.keys.clear();
        for &v in &ord.order[a..b] {
            let p = ord.pos[v as usize];
            sorter.keys.push((p as f32, u32::MAX, p as f32, p, v));
        }
        group_keys(&mut sorter.keys, &mut sorter.group_sum, groups);
        sorter.sort_into(&mut ord.order[a..b], &mut ord.pos);
    }
}

/// One node being sorted: `(primary, group tag, own key, old position, node)`. Ungrouped nodes
/// have primary = own key and tag `u32::MAX`.
type SortKey = (f32, u32, f32, u32, u32);

#[derive(Default)]
struct Sorter {
    keys: Vec<SortKey>,
    group_sum: Vec<(u32, f32)>,
}

fn sweep(
    graph: &Layered,
    ord: &mut Order,
    groups: Option<&[Option<u32>]>,
    downward: bool,
    sorter: &mut Sorter,
    cancel: &AtomicBool,
) -> Result<(), Cancelled> {
    let layers = ord.layer_count();
    if layers < 2 {
        return Ok(());
    }
    for step in 0..layers - 1 {
        if step % 1024 == 1023 {
            check(cancel)?;
        }
        let l = if downward {
            step + 1
        } else {
            layers - 2 - step
        };
        let (a, b) = (ord.layer_start[l] as usize, ord.layer_start[l + 1] as usize);
        if b - a < 2 {
            continue;
        }
        let adj = if downward { &graph.up } else { &graph.down };
        sorter.keys.clear();
        for &v in &ord.order[a..b] {
            let p = ord.pos[v as usize];
            let nbrs = adj.row(v);
            let key = if nbrs.is_empty() {
                p as f32
            } else {
                let sum: f32 = nbrs.iter().map(|&w| ord.pos[w as usize] as f32).sum();
                sum / nbrs.len() as f32
            };
            sorter.keys.push((key, u32::MAX, key, p, v));
        }
        if let Some(g) = groups {
            group_keys(&mut sorter.keys, &mut sorter.group_sum, g);
        }
        sorter.sort_into(&mut ord.order[a..b], &mut ord.pos);
    }
    Ok(())
}

impl Sorter {
    /// Sorts the keys and writes the layer's new order and positions.
    fn sort_into(&mut self, layer: &mut [u32], pos: &mut [u32]) {
        self.keys.sort_unstable_by(|x, y| {
            x.0.total_cmp(&y.0)
                .then(x.1.cmp(&y.1))
                .then(x.2.total_cmp(&y.2))
                .then(x.3.cmp(&y.3))
        });
        for (k, key) in self.keys.iter().enumerate() {
            layer[k] = key.4;
            pos[key.4 as usize] = k as u32;
        }
    }
}

/// Gives every grouped node its group's mean key as primary key and the group id as tag, so
/// that a group sorts as one block. `O(k log k)` for a layer of `k` nodes.
fn group_keys(keys: &mut [SortKey], sums: &mut Vec<(u32, f32)>, groups: &[Option<u32>]) {
    sums.clear();
    sums.extend(
        keys.iter()
            .filter_map(|k| groups[k.4 as usize].map(|g| (g, k.2))),
    );
    if sums.is_empty() {
        return;
    }
    sums.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    // Collapse to one (group, mean) per group.
    let mut out = 0;
    let mut i = 0;
    while i < sums.len() {
        let g = sums[i].0;
        let (mut total, mut count) = (0.0f32, 0u32);
        while i < sums.len() && sums[i].0 == g {
            total += sums[i].1;
            count += 1;
            i += 1;
        }
        sums[out] = (g, total / count as f32);
        out += 1;
    }
    sums.truncate(out);
    for key in keys.iter_mut() {
        if let Some(g) = groups[key.4 as usize]
            && let Ok(at) = sums.binary_search_by(|s| s.0.cmp(&g))
        {
            key.0 = sums[at].1;
            key.1 = g;
        }
    }
}

/// Initial keys for [`super::relayout`]: previous x for the nodes already laid out, the mean
/// over already-placed neighbours for new nodes, the owner's key for dummies.
pub(crate) fn seed_keys(graph: &Layered, dag: &[(u32, u32)], previous: &GraphLayout) -> Vec<f32> {
    let n = graph.n_real;
    let mut key = vec![f32::NAN; graph.node_count()];
    let old = previous.pos.len().min(n);
    for (k, p) in key.iter_mut().zip(&previous.pos[..old]) {
        *k = p[0];
    }
    let mut sum = vec![(0.0f32, 0u32); n];
    for &(s, t) in dag {
        let (s, t) = (s as usize, t as usize);
        if s < old && t >= old {
            sum[t].0 += key[s];
            sum[t].1 += 1;
        }
        if t < old && s >= old {
            sum[s].0 += key[t];
            sum[s].1 += 1;
        }
    }
    for v in old..n {
        if sum[v].1 > 0 {
            key[v] = sum[v].0 / sum[v].1 as f32;
        }
    }
    for d in n..graph.node_count() {
        key[d] = key[graph.real_of(d as u32) as usize];
    }
    key
}
