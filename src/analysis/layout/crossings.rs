//! Counting edge crossings between adjacent layers in `O(E log W)` (Barth, Jünger, Mutzel
//! 2004): list the edges in the order of their upper ends, then count inversions of their lower
//! ends with a Fenwick tree.

use super::csr::Csr;

/// Reusable buffers, so that counting every sweep allocates nothing.
#[derive(Default)]
pub(crate) struct CrossingCounter {
    tree: Vec<u32>,
    ends: Vec<u32>,
}

impl CrossingCounter {
    /// Crossings among the edges leaving `upper` (nodes left to right) for the next layer,
    /// whose nodes have positions `pos` in `0..lower_width`.
    pub(crate) fn between(
        &mut self,
        upper: &[u32],
        down: &Csr,
        pos: &[u32],
        lower_width: usize,
    ) -> u64 {
        self.tree.clear();
        self.tree.resize(lower_width + 1, 0);
        let mut inserted = 0u64;
        let mut crossings = 0u64;
        for &u in upper {
            self.ends.clear();
            self.ends
                .extend(down.row(u).iter().map(|&w| pos[w as usize]));
            self.ends.sort_unstable();
            for k in 0..self.ends.len() {
                let q = self.ends[k] as usize;
                if q >= lower_width {
                    continue;
                }
                crossings += inserted - self.prefix(q);
                self.add(q);
                inserted += 1;
            }
        }
        crossings
    }

    /// How many inserted ends are at positions `<= q`.
    fn prefix(&self, q: usize) -> u64 {
        let mut i = q + 1;
        let mut sum = 0u64;
        while i > 0 {
            sum += u64::from(self.tree[i]);
            i &= i - 1;
        }
        sum
    }

    fn add(&mut self, q: usize) {
        let mut i = q + 1;
        while i < self.tree.len() {
            self.tree[i] += 1;
            i += i & i.wrapping_neg();
        }
    }
}

/// Total crossings of a layered order: `order[layer_start[l]..layer_start[l + 1]]` lists layer
/// `l` left to right, `pos[v]` is the index of `v` within its layer.
pub(crate) fn total(
    counter: &mut CrossingCounter,
    order: &[u32],
    layer_start: &[u32],
    pos: &[u32],
    down: &Csr,
) -> u64 {
    let layers = layer_start.len().saturating_sub(1);
    (0..layers.saturating_sub(1))
        .map(|l| {
            let upper = &order[layer_start[l] as usize..layer_start[l + 1] as usize];
            let lower_width = (layer_start[l + 2] - layer_start[l + 1]) as usize;
            counter.between(upper, down, pos, lower_width)
        })
        .sum()
}

/// Crossings of a drawing given as layers of node ids (left to right) and edges. Only edges
/// between adjacent layers count (in either direction); other edges and unknown nodes are
/// ignored. For tests, benchmarks and callers that want to score a layout.
pub fn count_crossings(layers: &[Vec<u32>], edges: &[(u32, u32)]) -> u64 {
    let n = layers
        .iter()
        .flatten()
        .map(|&v| v as usize + 1)
        .max()
        .unwrap_or(0);
    let mut layer_of = vec![u32::MAX; n];
    let mut pos = vec![0u32; n];
    for (l, nodes) in layers.iter().enumerate() {
        for (p, &v) in nodes.iter().enumerate() {
            layer_of[v as usize] = l as u32;
            pos[v as usize] = p as u32;
        }
    }
    let layer = |v: u32| layer_of.get(v as usize).copied().unwrap_or(u32::MAX);
    let down_edges = edges.iter().filter_map(|&(a, b)| {
        let (la, lb) = (layer(a), layer(b));
        if la == u32::MAX || lb == u32::MAX {
            None
        } else if lb == la.wrapping_add(1) {
            Some((a, b))
        } else if la == lb.wrapping_add(1) {
            Some((b, a))
        } else {
            None
        }
    });
    let down = Csr::build(n, down_edges);
    let mut counter = CrossingCounter::default();
    let mut upper = Vec::new();
    let mut sum = 0;
    for l in 0..layers.len().saturating_sub(1) {
        // A node listed twice keeps its last place; skip the stale entry.
        upper.clear();
        upper.extend(
            layers[l]
                .iter()
                .filter(|&&v| layer_of[v as usize] == l as u32),
        );
        sum += counter.between(&upper, &down, &pos, layers[l + 1].len());
    }
    sum
}
