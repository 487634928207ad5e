//! Pool adjacent violators: the exact solution, in linear time, of
//! `min sum w[i] (x[i] - t[i])^2` subject to `x[i+1] - x[i] >= sep[i+1]` for one row of nodes.
//! With `y[i] = x[i] - offset[i]` (`offset` the cumulative separation) the constraints say `y`
//! is non-decreasing: isotonic regression, solved by merging adjacent blocks that violate it.

/// Pool adjacent violators for `min sum w (x - t)^2` subject to `x[i+1] - x[i] >= sep[i+1]`.
#[derive(Default)]
pub(crate) struct Pav {
    /// Per node: its cumulative separation from the first node.
    offsets: Vec<f64>,
    /// Blocks of pooled nodes: (weight sum, weighted target sum, number of nodes).
    blocks: Vec<(f64, f64, usize)>,
    /// Cumulative separation of the last node pushed.
    pub(crate) offset: f64,
}

impl Pav {
    pub(crate) fn clear(&mut self) {
        self.offsets.clear();
        self.blocks.clear();
        self.offset = 0.0;
    }

    /// Adds the next node to the right: its target, weight, and separation from the previous.
    pub(crate) fn push(&mut self, target: f64, weight: f64, sep: f64) {
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

    pub(crate) fn solve_into(&self, nodes: &[u32], x: &mut [f64]) {
        self.solve_clamped(nodes, f64::NEG_INFINITY, f64::INFINITY, x);
    }

    /// The solution with every shifted value also kept within `lo..=hi`.
    pub(crate) fn solve_clamped(&self, nodes: &[u32], lo: f64, hi: f64, x: &mut [f64]) {
        let mut i = 0;
        for &(w, wy, count) in &self.blocks {
            let y = (wy / w).clamp(lo, hi);
            for _ in 0..count {
                x[nodes[i] as usize] = y + self.offsets[i];
                i += 1;
            }
        }
    }
}
