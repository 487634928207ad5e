//! Cycle removal. FX graphs are acyclic, but the union of several passes is not always: a pass
//! may rewire `a -> b` into `b -> a`. A depth-first search from the nodes in index order (file
//! order, roughly topological) marks its back edges; reversing them leaves a DAG.

use super::csr::Csr;
use super::{Cancelled, check};
use std::sync::atomic::AtomicBool;

const UNSEEN: u8 = 0;
const ON_STACK: u8 = 1;
const DONE: u8 = 2;

/// For each edge, whether it must be reversed. `edges` must be in range and loop-free.
pub(crate) fn feedback_edges(
    n: usize,
    edges: &[(u32, u32)],
    cancel: &AtomicBool,
) -> Result<Vec<bool>, Cancelled> {
    let out = Csr::build(
        n,
        edges.iter().enumerate().map(|(i, &(s, _))| (s, i as u32)),
    );
    let mut reversed = vec![false; edges.len()];
    let mut state = vec![UNSEEN; n];
    // Explicit stack of (node, next out-edge cursor): a 20,000-deep chain must not recurse.
    let mut stack: Vec<(u32, u32)> = Vec::new();
    let mut steps = 0u32;
    for root in 0..n as u32 {
        if state[root as usize] != UNSEEN {
            continue;
        }
        state[root as usize] = ON_STACK;
        stack.push((root, 0));
        while let Some(top) = stack.last_mut() {
            steps = steps.wrapping_add(1);
            if steps.is_multiple_of(4096) {
                check(cancel)?;
            }
            let (v, cursor) = *top;
            let Some(&e) = out.row(v).get(cursor as usize) else {
                state[v as usize] = DONE;
                stack.pop();
                continue;
            };
            top.1 += 1;
            let w = edges[e as usize].1;
            match state[w as usize] {
                UNSEEN => {
                    state[w as usize] = ON_STACK;
                    stack.push((w, 0));
                }
                ON_STACK => reversed[e as usize] = true,
                _ => {}
            }
        }
    }
    Ok(reversed)
}
