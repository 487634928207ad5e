//! Coordinates.
//!
//! x: each layer in turn is placed as close as possible, in the weighted least-squares sense,
//! to the mean x of its neighbours in the layer above (sweeping down) or below (sweeping up),
//! subject to its order and spacing: `x[i+1] - x[i] >= (w[i] + w[i+1]) / 2 + gap`. With
//! `y[i] = x[i] - offset[i]` the constraints become `y` non-decreasing, which pool-adjacent-
//! violators solves exactly in linear time. A sweep is `O(V + E)`; a dozen sweeps settle the
//! picture. Edge weights follow dot (1 between real nodes, 2 real-dummy, 8 dummy-dummy) so
//! that long edges come out straight.
//!
//! y: layer bands as tall as their tallest node, `layer_gap` apart; nodes centred in the band.

use super::dummies::Layered;
use super::ordering::Order;
use super::{Cancelled, check};
use std::sync::atomic::AtomicBool;

/// Weight of "stay where you are" for a node without neighbours on the side being looked at.
const IDLE_WEIGHT: f64 = 1e-3;

pub(crate) struct Spacing {
    pub node_gap: f32,
    pub edge_gap: f32,
    pub layer_gap: f32,
}

pub(crate) struct Placed {
    /// Centre of every node, dummies included.
    pub centre: Vec<[f32; 2]>,
    /// Top of each layer band.
    pub layer_top: Vec<f32>,
    pub layer_height: Vec<f32>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Look {
    Up,
    Down,
    Both,
}

pub(crate) fn place(
    graph: &Layered,
    ord: &Order,
    spacing: &Spacing,
    sweeps: usize,
    seed: Option<&[[f32; 2]]>,
    cancel: &AtomicBool,
) -> Result<Placed, Cancelled> {
    let mut x = initial_x(graph, ord, spacing, seed);
    let mut pav = Pav::default();
    for s in 0..sweeps {
        check(cancel)?;
        let look = if s + 1 == sweeps {
            Look::Both
        } else if s % 2 == 0 {
            Look::Up
        } else {
            Look::Down
        };
        sweep(graph, ord, spacing, look, &mut x, &mut pav, cancel)?;
    }
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

/// Minimum distance between the centres of two neighbours in a layer.
fn separation(graph: &Layered, spacing: &Spacing, a: u32, b: u32) -> f64 {
    let gap = if graph.is_dummy(a) || graph.is_dummy(b) {
        spacing.edge_gap
    } else {
        spacing.node_gap
    };
    f64::from((graph.size[a as usize].0 + graph.size[b as usize].0) / 2.0 + gap)
}

/// Each layer packed tightly and centred on 0; or, when seeded, as near the previous x as the
/// spacing allows (new nodes start at their seed-ordered slot).
fn initial_x(
    graph: &Layered,
    ord: &Order,
    spacing: &Spacing,
    seed: Option<&[[f32; 2]]>,
) -> Vec<f64> {
    let mut x = vec![0f64; graph.node_count()];
    let mut pav = Pav::default();
    for l in 0..ord.layer_count() {
        let nodes = ord.layer(l);
        let mut at = 0f64;
        for (k, &v) in nodes.iter().enumerate() {
            if k > 0 {
                at += separation(graph, spacing, nodes[k - 1], v);
            }
            x[v as usize] = at;
        }
        let shift = at / 2.0;
        nodes.iter().for_each(|&v| x[v as usize] -= shift);
        if let Some(seed) = seed {
            pav.clear();
            for (k, &v) in nodes.iter().enumerate() {
                let real = graph.real_of(v) as usize;
                let sep = if k > 0 {
                    separation(graph, spacing, nodes[k - 1], v)
                } else {
                    0.0
                };
                match seed.get(real) {
                    Some(p) if p[0].is_finite() => pav.push(f64::from(p[0]), 1.0, sep),
                    _ => pav.push(x[v as usize], IDLE_WEIGHT, sep),
                }
            }
            pav.solve_into(nodes, &mut x);
        }
    }
    x
}

fn sweep(
    graph: &Layered,
    ord: &Order,
    spacing: &Spacing,
    look: Look,
    x: &mut [f64],
    pav: &mut Pav,
    cancel: &AtomicBool,
) -> Result<(), Cancelled> {
    let layers = ord.layer_count();
    for step in 0..layers {
        if step % 1024 == 1023 {
            check(cancel)?;
        }
        // Looking up, go top-down so each layer follows its freshly placed parents.
        let l = if look == Look::Down {
            layers - 1 - step
        } else {
            step
        };
        let nodes = ord.layer(l);
        pav.clear();
        for (k, &v) in nodes.iter().enumerate() {
            let (target, weight) = target_of(graph, look, v, x);
            let sep = if k > 0 {
                separation(graph, spacing, nodes[k - 1], v)
            } else {
                0.0
            };
            pav.push(target, weight, sep);
        }
        pav.solve_into(nodes, x);
    }
    Ok(())
}

/// Weighted mean x of the neighbours looked at, and the total weight.
fn target_of(graph: &Layered, look: Look, v: u32, x: &[f64]) -> (f64, f64) {
    let (mut sum, mut weight) = (0f64, 0f64);
    let mut add = |nbrs: &[u32]| {
        for &w in nbrs {
            let omega = match (graph.is_dummy(v), graph.is_dummy(w)) {
                (false, false) => 1.0,
                (true, true) => 8.0,
                _ => 2.0,
            };
            sum += omega * x[w as usize];
            weight += omega;
        }
    };
    if look != Look::Down {
        add(graph.up.row(v));
    }
    if look != Look::Up {
        add(graph.down.row(v));
    }
    if weight == 0.0 {
        (x[v as usize], IDLE_WEIGHT)
    } else {
        (sum / weight, weight)
    }
}

/// Pool adjacent violators for `min sum w (x - t)^2` subject to `x[i+1] - x[i] >= sep[i+1]`.
#[derive(Default)]
struct Pav {
    /// Per node: its cumulative separation from the first node.
    offsets: Vec<f64>,
    /// Blocks of pooled nodes: (weight sum, weighted target sum, number of nodes).
    blocks: Vec<(f64, f64, usize)>,
    offset: f64,
}

impl Pav {
    fn clear(&mut self) {
        self.offsets.clear();
        self.blocks.clear();
        self.offset = 0.0;
    }

    /// Adds the next node to the right: its target, weight, and separation from the previous.
    fn push(&mut self, target: f64, weight: f64, sep: f64) {
        self.offset += sep;
        self.offsets.push(self.offset);
        let mut block = (weight, weight * (target - self.offset), 1usize);
        // Merge while the block on the left wants to sit further right than this one.
        while let Some(&prev) = self.blocks.last() {
            if prev.1 / prev.0 <= block.1 / block.0 {
                break;
            }
            self.blocks.pop();
            block = (prev.0 + block.0, prev.1 + block.1, prev.2 + block.2);
        }
        self.blocks.push(block);
    }

    fn solve_into(&self, nodes: &[u32], x: &mut [f64]) {
        let mut i = 0;
        for &(w, wy, count) in &self.blocks {
            let y = wy / w;
            for _ in 0..count {
                x[nodes[i] as usize] = y + self.offsets[i];
                i += 1;
            }
        }
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
