//! Local refinement of a layer order: swap two neighbours of a layer whenever that removes
//! crossings with the layers above and below (the `transpose` step of dot). Barycenter sweeps
//! settle after a few rounds; this fixes what they leave, in `O(E)` per pass.

use super::csr::Csr;
use super::dummies::Layered;
use super::order::Order;
use super::{Cancelled, check};
use std::sync::atomic::AtomicBool;

/// Passes over all layers at most; most of the gain comes in the first two.
const PASSES: usize = 4;

#[derive(Default)]
pub(crate) struct Transposer {
    left: Vec<u32>,
    right: Vec<u32>,
}

impl Transposer {
    pub(crate) fn run(
        &mut self,
        graph: &Layered,
        ord: &mut Order,
        groups: Option<&[Option<u32>]>,
        cancel: &AtomicBool,
    ) -> Result<(), Cancelled> {
        for _ in 0..PASSES {
            check(cancel)?;
            let mut improved = false;
            for l in 0..ord.layer_count() {
                improved |= self.layer(graph, ord, groups, l);
            }
            if !improved {
                break;
            }
        }
        Ok(())
    }

    /// One pass over layer `l`; whether any swap was made.
    fn layer(
        &mut self,
        graph: &Layered,
        ord: &mut Order,
        groups: Option<&[Option<u32>]>,
        l: usize,
    ) -> bool {
        let (a, b) = (ord.layer_start[l] as usize, ord.layer_start[l + 1] as usize);
        let mut improved = false;
        for i in a..b.saturating_sub(1) {
            let (u, v) = (ord.order[i], ord.order[i + 1]);
            // Swapping across a group border would split the group.
            if groups.is_some_and(|g| g[u as usize] != g[v as usize]) {
                continue;
            }
            let (up_keep, up_swap) = self.pair(&graph.up, u, v, &ord.pos);
            let (down_keep, down_swap) = self.pair(&graph.down, u, v, &ord.pos);
            if up_swap + down_swap < up_keep + down_keep {
                ord.order.swap(i, i + 1);
                ord.pos[u as usize] += 1;
                ord.pos[v as usize] -= 1;
                improved = true;
            }
        }
        improved
    }

    /// Crossings between the edges of `u` and `v` to one neighbouring layer, with `u` left of
    /// `v` and swapped.
    fn pair(&mut self, adj: &Csr, u: u32, v: u32, pos: &[u32]) -> (u64, u64) {
        self.left.clear();
        self.left
            .extend(adj.row(u).iter().map(|&w| pos[w as usize]));
        self.right.clear();
        self.right
            .extend(adj.row(v).iter().map(|&w| pos[w as usize]));
        self.left.sort_unstable();
        self.right.sort_unstable();
        (
            pairs_above(&self.left, &self.right),
            pairs_above(&self.right, &self.left),
        )
    }
}

/// Number of pairs `(x in xs, y in ys)` with `x > y`; both sorted.
fn pairs_above(xs: &[u32], ys: &[u32]) -> u64 {
    let mut below = 0usize;
    let mut count = 0u64;
    for &x in xs {
        while below < ys.len() && ys[below] < x {
            below += 1;
        }
        count += below as u64;
    }
    count
}
