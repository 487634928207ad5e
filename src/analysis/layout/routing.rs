//! Edge polylines. A routed edge leaves the bottom of its source, crosses each intermediate
//! layer band vertically at its trunk dummy (so it never cuts through a node's row diagonally)
//! and enters the top of its target. Runs of points on one vertical line are merged: a trunk
//! straight across a thousand layers is two points, not two thousand, and costs one step.

use super::coords::Placed;
use super::dummies::{Layered, Route};
use super::edges::{CleanEdges, Dag, EdgeRef};
use super::{Cancelled, EdgeKind, check};
use std::sync::atomic::AtomicBool;

pub(crate) struct Routes {
    pub paths: Vec<Vec<[f32; 2]>>,
    pub kinds: Vec<EdgeKind>,
    /// Input edges drawn reversed, ascending.
    pub reversed: Vec<u32>,
}

pub(crate) fn route(
    graph: &Layered,
    placed: &Placed,
    clean: &CleanEdges,
    dag: &Dag,
    reversed: &[bool],
    loop_gap: f32,
    cancel: &AtomicBool,
) -> Result<Routes, Cancelled> {
    let mut routes = Routes {
        paths: Vec::with_capacity(clean.map.len()),
        kinds: Vec::with_capacity(clean.map.len()),
        reversed: Vec::new(),
    };
    let runs = vertical_runs(graph, placed);
    for (i, r) in clean.map.iter().enumerate() {
        if i % 4096 == 4095 {
            check(cancel)?;
        }
        let (path, kind) = match *r {
            EdgeRef::Invalid => (Vec::new(), EdgeKind::Invalid),
            EdgeRef::SelfLoop(v) => (self_loop(graph, placed, v, loop_gap), EdgeKind::SelfLoop),
            EdgeRef::Unique(u) => {
                let d = dag.of_unique[u as usize] as usize;
                let (a, b) = dag.edges[d];
                let r = graph.route[d];
                let routed = r != Route::Direct;
                let mut path = if routed {
                    through_bends(graph, placed, &runs, r, a, b)
                } else {
                    vec![bottom(graph, placed, a), top(graph, placed, b)]
                };
                if reversed[u as usize] {
                    path.reverse();
                    routes.reversed.push(i as u32);
                }
                let kind = if routed {
                    EdgeKind::Routed
                } else {
                    EdgeKind::Direct
                };
                (path, kind)
            }
        };
        routes.paths.push(path);
        routes.kinds.push(kind);
    }
    Ok(routes)
}

fn bottom(graph: &Layered, placed: &Placed, v: u32) -> [f32; 2] {
    let [x, y] = placed.centre[v as usize];
    [x, y + graph.size[v as usize].1 / 2.0]
}

fn top(graph: &Layered, placed: &Placed, v: u32) -> [f32; 2] {
    let [x, y] = placed.centre[v as usize];
    [x, y - graph.size[v as usize].1 / 2.0]
}

fn through_bends(
    graph: &Layered,
    placed: &Placed,
    runs: &[u32],
    r: Route,
    a: u32,
    b: u32,
) -> Vec<[f32; 2]> {
    let mut path = vec![bottom(graph, placed, a)];
    let bends = graph.bends(r, a, b);
    let mut d = bends.start;
    // One vertical segment per run of equal x, however many layers it spans: a bus to
    // `output` across 5,000 layers costs a handful of steps, not 5,000.
    while d < bends.end {
        let last = runs[d as usize - graph.n_real].min(bends.end - 1);
        let x = placed.centre[d as usize][0];
        let (first_band, last_band) = (graph.layer[d as usize], graph.layer[last as usize]);
        path.push([x, placed.layer_top[first_band as usize]]);
        let bottom = placed.layer_top[last_band as usize] + placed.layer_height[last_band as usize];
        path.push([x, bottom]);
        d = last + 1;
    }
    path.push(top(graph, placed, b));
    path
}

/// For every dummy, the last dummy of the vertical run (same x, same trunk) it starts.
fn vertical_runs(graph: &Layered, placed: &Placed) -> Vec<u32> {
    let mut runs: Vec<u32> = (graph.n_real as u32..graph.node_count() as u32).collect();
    for trunk in graph.trunks() {
        let mut last = trunk.end - 1;
        for d in trunk.rev() {
            if placed.centre[d as usize][0] != placed.centre[last as usize][0] {
                last = d;
            }
            runs[d as usize - graph.n_real] = last;
        }
    }
    runs
}

/// Out of the bottom, around the right side, into the top.
fn self_loop(graph: &Layered, placed: &Placed, v: u32, gap: f32) -> Vec<[f32; 2]> {
    let [x, y] = placed.centre[v as usize];
    let (w, h) = graph.size[v as usize];
    let (below, above, right) = (y + h / 2.0 + gap, y - h / 2.0 - gap, x + w / 2.0 + gap);
    vec![
        [x, y + h / 2.0],
        [x, below],
        [right, below],
        [right, above],
        [x, above],
        [x, y - h / 2.0],
    ]
}

/// Bounding box of the first `n` (real) nodes and of every path point.
pub(crate) fn bounds(
    graph: &Layered,
    placed: &Placed,
    n: usize,
    paths: &[Vec<[f32; 2]>],
) -> [f32; 4] {
    let mut b = [
        f32::INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
    ];
    let mut grow = |x0: f32, y0: f32, x1: f32, y1: f32| {
        b = [b[0].min(x0), b[1].min(y0), b[2].max(x1), b[3].max(y1)];
    };
    for v in 0..n {
        let [x, y] = placed.centre[v];
        let (w, h) = graph.size[v];
        grow(x - w / 2.0, y - h / 2.0, x + w / 2.0, y + h / 2.0);
    }
    for p in paths.iter().flatten() {
        grow(p[0], p[1], p[0], p[1]);
    }
    if b[0].is_finite() { b } else { [0.0; 4] }
}
