//! Coordinates.
//!
//! x: Brandes–Köpf (see `bk`), linear time, long-edge trunks vertical. A seeded re-layout then
//! pulls the nodes that were laid out before back to their previous x. Each layer is projected
//! onto its spacing constraints `x[i+1] - x[i] >= (w[i] + w[i+1]) / 2 + gap` by
//! pool-adjacent-violators (exact weighted least squares in linear time: with
//! `y[i] = x[i] - offset[i]` the constraints say `y` is non-decreasing), which guarantees that
//! no two nodes overlap whatever came before. A few relaxation sweeps then move each real node
//! towards its neighbours (the same projection, dummies fixed), which undoes the odd block
//! that Brandes–Köpf packing leaves far from its inputs.
//!
//! Then each trunk (a chain of dummies, see `dummies`) is straightened: within the slack its
//! neighbours leave it, it is cut into the fewest vertical runs (greedy interval stabbing).
//!
//! y: layer bands as tall as their tallest node, `layer_gap` apart; nodes centred in the band.

use super::bk;
use super::dummies::Layered;
use super::order::Order;
use super::pav::Pav;
use super::spacing::{Spacing, separation};
use super::{Cancelled, check};
use std::sync::atomic::AtomicBool;

/// Weight of nodes that should make room rather than move others (new nodes in a re-layout).
const IDLE_WEIGHT: f64 = 1e-3;

pub(crate) struct Placed {
    /// Centre of every node, dummies included.
    pub centre: Vec<[f32; 2]>,
    /// Top of each layer band.
    pub layer_top: Vec<f32>,
    pub layer_height: Vec<f32>,
}

pub(crate) fn place(
    graph: &Layered,
    ord: &Order,
    spacing: &Spacing,
    sweeps: usize,
    seed: Option<&[[f32; 2]]>,
    cancel: &AtomicBool,
) -> Result<Placed, Cancelled> {
    let mut x = bk::place(graph, ord, spacing, cancel)?;
    check(cancel)?;
    let anchors = match seed {
        Some(seed) => pull_towards_seed(graph, seed, &mut x),
        None => vec![f64::NAN; x.len()],
    };
    // Anchored nodes hold on to their place; without a seed all weigh the same.
    let weights: Vec<f64> = anchors
        .iter()
        .map(|a| if a.is_nan() { IDLE_WEIGHT } else { 1.0 })
        .collect();
    project(graph, ord, spacing, &weights, &mut x);
    for s in 0..sweeps {
        check(cancel)?;
        relax(graph, ord, spacing, &anchors, s % 2 == 0, &mut x);
    }
    check(cancel)?;
    straighten_trunks(graph, ord, spacing, &mut x);
    if seed.is_none() {
        normalise_left(graph, &mut x);
    }
    let (layer_top, layer_height) = layer_bands(graph, spacing.layer_gap);
    let centre = (0..graph.node_count())
        .map(|v| {
            let l = graph.layer[v] as usize;
            [x[v] as f32, layer_top[l] + layer_height[l] / 2.0]
        })
        .collect();
    Ok(Placed {
        centre,
        layer_top,
        layer_height,
    })
}

/// Moves the nodes that have a previous position back to it (the new layout shifted so the
/// two agree at the median) and returns those anchors (NaN for new nodes and dummies).
fn pull_towards_seed(graph: &Layered, seed: &[[f32; 2]], x: &mut [f64]) -> Vec<f64> {
    let old = seed.len().min(graph.n_real);
    let mut offsets: Vec<f64> = (0..old)
        .filter(|&v| seed[v][0].is_finite())
        .map(|v| f64::from(seed[v][0]) - x[v])
        .collect();
    let mut anchors = vec![f64::NAN; x.len()];
    if offsets.is_empty() {
        return anchors;
    }
    let mid = offsets.len() / 2;
    let shift = *offsets.select_nth_unstable_by(mid, f64::total_cmp).1;
    x.iter_mut().for_each(|v| *v += shift);
    for v in 0..old {
        if seed[v][0].is_finite() {
            x[v] = f64::from(seed[v][0]);
            anchors[v] = x[v];
        }
    }
    anchors
}

/// One Gauss–Seidel sweep of "each real node towards the mean of its neighbours" (or towards
/// its anchor, its previous place in a re-layout), layer by layer under the spacing
/// constraints, dummies fixed. Brandes–Köpf packs blocks against each other, which can leave
/// an op on a bus far from its other inputs, or a short block at the far end of an empty
/// stretch; a few sweeps bring them back without bending the trunks.
fn relax(
    graph: &Layered,
    ord: &Order,
    spacing: &Spacing,
    anchors: &[f64],
    downward: bool,
    x: &mut [f64],
) {
    let mut pav = Pav::default();
    let layers = ord.layer_count();
    for step in 0..layers {
        let l = if downward { step } else { layers - 1 - step };
        let nodes = ord.layer(l);
        // Runs of real nodes between fixed dummies (or the layer ends).
        let mut start = 0;
        while start < nodes.len() {
            if graph.is_dummy(nodes[start]) {
                start += 1;
                continue;
            }
            let end = (start..nodes.len())
                .find(|&k| graph.is_dummy(nodes[k]))
                .unwrap_or(nodes.len());
            relax_run(graph, spacing, anchors, nodes, start..end, &mut pav, x);
            start = end;
        }
    }
}

/// Places `nodes[run]` between the fixed nodes around it, as close to their neighbours' mean
/// as the spacing allows: isotonic regression with constant bounds is the clamped
/// unconstrained solution.
fn relax_run(
    graph: &Layered,
    spacing: &Spacing,
    anchors: &[f64],
    nodes: &[u32],
    run: std::ops::Range<usize>,
    pav: &mut Pav,
    x: &mut [f64],
) {
    pav.clear();
    for k in run.clone() {
        let v = nodes[k];
        let sep = if k > run.start {
            separation(graph, spacing, nodes[k - 1], v)
        } else {
            0.0
        };
        let anchor = anchors[v as usize];
        let (target, weight) = if anchor.is_nan() {
            neighbour_mean(graph, v, x)
        } else {
            (anchor, 1.0)
        };
        pav.push(target, weight, sep);
    }
    let first = nodes[run.start];
    let last = nodes[run.end - 1];
    let lo = match run.start.checked_sub(1) {
        Some(k) => x[nodes[k] as usize] + separation(graph, spacing, nodes[k], first),
        None => f64::NEG_INFINITY,
    };
    let hi = match nodes.get(run.end) {
        Some(&d) => x[d as usize] - separation(graph, spacing, last, d) - pav.offset,
        None => f64::INFINITY,
    };
    // The current placement is feasible, so `lo <= hi` up to rounding.
    pav.solve_clamped(&nodes[run], lo, hi.max(lo), x);
}

/// A bus (trunk dummy) pulls an op this much less than a real neighbour: ops cluster with the
/// ops they compute with, and the bus comes to them.
const BUS_PULL: f64 = 0.05;

/// Weighted mean x of `v`'s neighbours in both adjacent layers, with the weight to pull it
/// there; a node without neighbours stays put.
fn neighbour_mean(graph: &Layered, v: u32, x: &[f64]) -> (f64, f64) {
    let nbrs = graph.up.row(v).iter().chain(graph.down.row(v));
    let (sum, total) = nbrs.fold((0.0, 0.0), |(s, t), &w| {
        let pull = if graph.is_dummy(w) { BUS_PULL } else { 1.0 };
        (s + pull * x[w as usize], t + pull)
    });
    if total == 0.0 {
        (x[v as usize], 1.0)
    } else {
        (sum / total, total)
    }
}

/// Each layer onto its spacing constraints, as close to `x` as possible (weighted).
fn project(graph: &Layered, ord: &Order, spacing: &Spacing, weights: &[f64], x: &mut [f64]) {
    let mut pav = Pav::default();
    for l in 0..ord.layer_count() {
        let nodes = ord.layer(l);
        pav.clear();
        for (k, &v) in nodes.iter().enumerate() {
            let sep = if k > 0 {
                separation(graph, spacing, nodes[k - 1], v)
            } else {
                0.0
            };
            pav.push(x[v as usize], weights[v as usize], sep);
        }
        pav.solve_into(nodes, x);
    }
}

/// Cuts every trunk into the fewest vertical runs its neighbours allow, longest trunks first.
fn straighten_trunks(graph: &Layered, ord: &Order, spacing: &Spacing, x: &mut [f64]) {
    let mut trunks: Vec<std::ops::Range<u32>> = graph.trunks().collect();
    trunks.sort_by_key(|t| (std::cmp::Reverse(t.len()), t.start));
    for trunk in trunks {
        let mut run_start = trunk.start;
        let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
        let mut sum = 0.0;
        for d in trunk.clone() {
            let (dlo, dhi) = slack(graph, ord, spacing, x, d);
            if dlo.max(lo) > dhi.min(hi) {
                set_run(x, run_start..d, lo, hi, sum);
                run_start = d;
                (lo, hi, sum) = (dlo, dhi, 0.0);
            } else {
                (lo, hi) = (dlo.max(lo), dhi.min(hi));
            }
            sum += x[d as usize];
        }
        set_run(x, run_start..trunk.end, lo, hi, sum);
    }
}

/// Where dummy `d` may go without moving its neighbours in the layer.
fn slack(graph: &Layered, ord: &Order, spacing: &Spacing, x: &[f64], d: u32) -> (f64, f64) {
    let layer = ord.layer(graph.layer[d as usize] as usize);
    let p = ord.pos[d as usize] as usize;
    let lo = match p.checked_sub(1) {
        Some(q) => x[layer[q] as usize] + separation(graph, spacing, layer[q], d),
        None => f64::NEG_INFINITY,
    };
    let hi = match layer.get(p + 1) {
        Some(&r) => x[r as usize] - separation(graph, spacing, d, r),
        None => f64::INFINITY,
    };
    // Rounding can leave a dummy a hair outside its own slack; never let that split a run.
    (lo.min(x[d as usize]), hi.max(x[d as usize]))
}

/// Puts the dummies of a run on one vertical: their mean x, clamped into the common slack.
fn set_run(x: &mut [f64], run: std::ops::Range<u32>, lo: f64, hi: f64, sum: f64) {
    if run.is_empty() {
        return;
    }
    let at = (sum / run.len() as f64).clamp(lo, hi);
    for d in run {
        x[d as usize] = at;
    }
}

fn normalise_left(graph: &Layered, x: &mut [f64]) {
    let left = (0..graph.node_count())
        .map(|v| x[v] - f64::from(graph.size[v].0) / 2.0)
        .fold(f64::INFINITY, f64::min);
    if left.is_finite() {
        x.iter_mut().for_each(|v| *v -= left);
    }
}

fn layer_bands(graph: &Layered, layer_gap: f32) -> (Vec<f32>, Vec<f32>) {
    let mut height = vec![0f32; graph.layer_count];
    for (v, &l) in graph.layer.iter().enumerate() {
        height[l as usize] = height[l as usize].max(graph.size[v].1);
    }
    let mut top = Vec::with_capacity(graph.layer_count);
    let mut y = 0f32;
    for &h in &height {
        top.push(y);
        y += h + layer_gap;
    }
    (top, height)
}
