//! Layer assignment.
//!
//! Longest path from the top gives the fewest layers, but it leaves every graph input on layer
//! 0: FX graphs have hundreds of weights, each used once deep in the graph, and each would
//! draw a long edge down the whole picture. Backward graphs are worse: everything computed
//! from saved activations alone (`pow(saved, 1.0)`) would sit on layer 1. So bottom-up passes
//! then sink a node to just above its first consumer when that shortens the edges in total
//! (what the network-simplex ranking of dot optimises, approximated greedily):
//! - sources (placeholders, constants, `get_attr`) always sink;
//! - a node whose whole input tree is private to it (`weight -> permute -> mm`) sinks, the tree
//!   following it down, so nothing gets longer;
//! - any other node sinks, with a block of inputs worth taking along (`neg(alias(saved))`),
//!   when the edges shorten in total, counting that the sources the block reads re-sink
//!   behind it.
//!
//! Each pass is linear up to small factors (blocks of at most `BLOCK_CAP` nodes, inputs of at
//! most `FOLLOW_FANOUT` consumers); a few passes reach a fixed point on FX graphs. Empty layers
//! left behind are squeezed out.

use super::csr::Csr;
use super::{Cancelled, check};
use std::sync::atomic::AtomicBool;

/// Layer of each node; every edge of `dag` goes from a lower to a higher layer, and the
/// layers used are exactly `0..=max`.
pub(crate) fn assign_layers(
    n: usize,
    dag: &[(u32, u32)],
    cancel: &AtomicBool,
) -> Result<Vec<u32>, Cancelled> {
    let out = Csr::build(n, dag.iter().copied());
    let topo = topological_order(n, dag, &out, cancel)?;
    let mut layer = longest_path(n, &topo, &out);
    check(cancel)?;
    sink_producers(dag, &topo, &out, &mut layer);
    squeeze(&mut layer);
    Ok(layer)
}

/// Kahn's algorithm, taking ready nodes in index order (FIFO) so the result is deterministic.
fn topological_order(
    n: usize,
    dag: &[(u32, u32)],
    out: &Csr,
    cancel: &AtomicBool,
) -> Result<Vec<u32>, Cancelled> {
    let mut indeg = vec![0u32; n];
    for &(_, t) in dag {
        indeg[t as usize] += 1;
    }
    let mut order: Vec<u32> = (0..n as u32).filter(|&v| indeg[v as usize] == 0).collect();
    let mut head = 0;
    while head < order.len() {
        if head % 4096 == 4095 {
            check(cancel)?;
        }
        let v = order[head];
        head += 1;
        for &w in out.row(v) {
            indeg[w as usize] -= 1;
            if indeg[w as usize] == 0 {
                order.push(w);
            }
        }
    }
    // A cycle would leave nodes out; the caller guarantees a DAG, but stay total anyway.
    if order.len() < n {
        let mut seen = vec![false; n];
        order.iter().for_each(|&v| seen[v as usize] = true);
        order.extend((0..n as u32).filter(|&v| !seen[v as usize]));
    }
    Ok(order)
}

fn longest_path(n: usize, topo: &[u32], out: &Csr) -> Vec<u32> {
    let mut layer = vec![0u32; n];
    for &v in topo {
        let next = layer[v as usize] + 1;
        for &w in out.row(v) {
            layer[w as usize] = layer[w as usize].max(next);
        }
    }
    layer
}

/// Passes of [`sink_pass`] at most; each pass only moves nodes down, so this bounds the work.
const SINK_PASSES: usize = 4;

/// Inputs with more consumers than this are pinned by one of them anyway; treating them as
/// fixed keeps the cost of a move bounded.
const FOLLOW_FANOUT: usize = 64;

/// Largest block of nodes moved together.
const BLOCK_CAP: usize = 32;

struct Graph<'a> {
    out: &'a Csr,
    preds: Csr,
    indeg: Vec<u32>,
}

impl Graph<'_> {
    fn is_source(&self, v: u32) -> bool {
        self.indeg[v as usize] == 0
    }

    fn outdeg(&self, v: u32) -> usize {
        self.out.row(v).len()
    }
}

fn sink_producers(dag: &[(u32, u32)], topo: &[u32], out: &Csr, layer: &mut [u32]) {
    let n = layer.len();
    let mut indeg = vec![0u32; n];
    for &(_, t) in dag {
        indeg[t as usize] += 1;
    }
    let g = Graph {
        out,
        preds: Csr::build(n, dag.iter().map(|&(s, t)| (t, s))),
        indeg,
    };
    let private = private_trees(topo, out);
    let mut block = Block::default();
    for _ in 0..SINK_PASSES {
        if !sink_pass(topo, &g, &private, &mut block, layer) {
            break;
        }
    }
}

/// `private[v]`: every input of `v` feeds only `v`, recursively, so the inputs can follow `v`.
fn private_trees(topo: &[u32], out: &Csr) -> Vec<bool> {
    let mut private = vec![true; topo.len()];
    for &v in topo {
        let feeds_only_one = out.row(v).len() == 1 && private[v as usize];
        if !feeds_only_one {
            for &w in out.row(v) {
                private[w as usize] = false;
            }
        }
    }
    private
}

/// One bottom-up pass; whether anything moved.
fn sink_pass(
    topo: &[u32],
    g: &Graph,
    private: &[bool],
    block: &mut Block,
    layer: &mut [u32],
) -> bool {
    let mut moved = false;
    for &v in topo.iter().rev() {
        let Some(first) = g.out.row(v).iter().map(|&w| layer[w as usize]).min() else {
            continue;
        };
        let i = v as usize;
        let step = first.saturating_sub(1).saturating_sub(layer[i]);
        if step == 0 {
            continue;
        }
        if g.is_source(v) || private[i] {
            // Consumers were settled first (reverse topological order), and moving down keeps
            // every input above: all constraints still hold. The inputs follow later.
            layer[i] += step;
            moved = true;
        } else {
            let (gain, step) = block.gain(v, step, g, layer);
            if gain > 0 {
                block.nodes.iter().for_each(|&b| layer[b as usize] += step);
                moved = true;
            }
        }
    }
    moved
}

/// `v` with the inputs worth taking along. Moving `neg(alias(saved))` alone changes nothing
/// when it has one input and one output, but moving it with its input lets the saved
/// activation sink too, and shortens the input's other edges: that is the network-simplex move
/// of a whole subtree, grown greedily from `v` upwards.
#[derive(Default)]
struct Block {
    nodes: Vec<u32>,
    /// Sources read by the block (each once) that re-sink behind it.
    sources: Vec<u32>,
}

impl Block {
    /// How much shorter the edges get, in total, when the block of `v` moves down and the
    /// sources it reads re-sink to just above their first consumer; and by how many layers the
    /// block moves (at most `step`, less when an input taken along has less room).
    fn gain(&mut self, v: u32, step: u32, g: &Graph, layer: &[u32]) -> (i64, u32) {
        let step = self.collect(v, step, g, layer);
        let mut gain = 0i64;
        for &u in &self.nodes {
            let leaving = g.out.row(u).iter().filter(|c| !self.nodes.contains(c));
            gain += i64::from(step) * leaving.count() as i64;
            for &p in g.preds.row(u) {
                if !self.nodes.contains(&p) && !self.sources.contains(&p) {
                    gain -= i64::from(step);
                }
            }
        }
        for &s in &self.sources {
            gain += self.source_gain(s, step, g, layer);
        }
        (gain, step)
    }

    /// Grows the block from `v`; returns the step the whole block can take.
    fn collect(&mut self, v: u32, mut step: u32, g: &Graph, layer: &[u32]) -> u32 {
        self.nodes.clear();
        self.sources.clear();
        self.nodes.push(v);
        let mut k = 0;
        while k < self.nodes.len() {
            let c = self.nodes[k];
            k += 1;
            for &p in g.preds.row(c) {
                if self.nodes.contains(&p) || self.sources.contains(&p) {
                    continue;
                }
                if g.is_source(p) {
                    if g.outdeg(p) <= FOLLOW_FANOUT {
                        self.sources.push(p);
                    }
                } else if self.nodes.len() < BLOCK_CAP
                    && g.outdeg(p) <= FOLLOW_FANOUT
                    && let Some(room) = self.worth_taking(p, g, layer)
                {
                    self.nodes.push(p);
                    step = step.min(room);
                }
            }
        }
        step
    }

    /// If taking `p` along does not lengthen more edges than it shortens, judging by its own
    /// edges, how far down it can move before reaching its first consumer outside the block.
    fn worth_taking(&self, p: u32, g: &Graph, layer: &[u32]) -> Option<u32> {
        let mut room = u32::MAX;
        let mut outside = 0;
        for &c in g.out.row(p) {
            if !self.nodes.contains(&c) {
                room = room.min(layer[c as usize].saturating_sub(layer[p as usize] + 1));
                outside += 1;
            }
        }
        let fixed_inputs = g.preds.row(p).iter().filter(|&&q| !g.is_source(q)).count();
        (room > 0 && 1 + outside >= fixed_inputs).then_some(room)
    }

    /// Change in the total length of `s`'s edges when the block moves (a source sits at
    /// `min(consumers) - 1`).
    fn source_gain(&self, s: u32, step: u32, g: &Graph, layer: &[u32]) -> i64 {
        let consumers = g.out.row(s);
        let moved = |c: u32| self.nodes.contains(&c);
        let old_min = consumers.iter().map(|&c| layer[c as usize]).min();
        let new_min = consumers
            .iter()
            .map(|&c| layer[c as usize] + if moved(c) { step } else { 0 })
            .min();
        let (Some(old_min), Some(new_min)) = (old_min, new_min) else {
            return 0;
        };
        let mut gain = 0i64;
        for &c in consumers {
            let old_len = i64::from(layer[c as usize]) - i64::from(old_min) + 1;
            let new_layer = layer[c as usize] + if moved(c) { step } else { 0 };
            let new_len = i64::from(new_layer) - i64::from(new_min) + 1;
            gain += old_len - new_len;
        }
        gain
    }
}

/// Renumbers layers so that none is empty, keeping their order.
fn squeeze(layer: &mut [u32]) {
    let Some(&max) = layer.iter().max() else {
        return;
    };
    let mut used = vec![false; max as usize + 1];
    layer.iter().for_each(|&l| used[l as usize] = true);
    let mut renum = vec![0u32; used.len()];
    let mut next = 0;
    for (l, &u) in used.iter().enumerate() {
        renum[l] = next;
        next += u as u32;
    }
    layer.iter_mut().for_each(|l| *l = renum[*l as usize]);
}
