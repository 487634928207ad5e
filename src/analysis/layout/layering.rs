//! Layer assignment.
//!
//! Longest path from the top gives the fewest layers, but it leaves every graph input on layer
//! 0: FX graphs have hundreds of weights, each used once deep in the graph, and each would
//! draw a long edge down the whole picture. So a second, bottom-up pass sinks a node to just
//! above its first consumer when that shortens edges:
//! - sources (placeholders, constants, `get_attr`) always;
//! - nodes whose whole input tree is private to them (`weight -> permute -> mm`): the tree
//!   follows the node down, so nothing gets longer;
//! - nodes with more out-edges than in-edges: the out-edges shorten more than the in-edges
//!   lengthen.
//!
//! Both passes are linear; empty layers left behind are squeezed out.

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

fn sink_producers(dag: &[(u32, u32)], topo: &[u32], out: &Csr, layer: &mut [u32]) {
    let n = layer.len();
    let mut indeg = vec![0u32; n];
    for &(_, t) in dag {
        indeg[t as usize] += 1;
    }
    let outdeg = |v: u32| out.row(v).len();
    // private[v]: every input of v feeds only v, recursively, so the inputs can follow v.
    let mut private = vec![true; n];
    for &v in topo {
        let feeds_only_one = outdeg(v) == 1 && private[v as usize];
        if !feeds_only_one {
            for &w in out.row(v) {
                private[w as usize] = false;
            }
        }
    }
    for &v in topo.iter().rev() {
        let Some(first) = out.row(v).iter().map(|&w| layer[w as usize]).min() else {
            continue;
        };
        let i = v as usize;
        let sink = indeg[i] == 0 || private[i] || outdeg(v) > indeg[i] as usize;
        if sink && first > 0 {
            // Consumers were finalised first (reverse topological order), and moving down
            // keeps every input above: the constraints of the first pass still hold.
            layer[i] = layer[i].max(first - 1);
        }
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
