//! A left-to-right order of every layer: what crossing reduction (`ordering`, `transpose`)
//! improves and the coordinate passes read.

/// A left-to-right order of every layer.
pub(crate) struct Order {
    /// Nodes layer by layer, each layer left to right.
    pub order: Vec<u32>,
    /// Layer `l` is `order[layer_start[l]..layer_start[l + 1]]`.
    pub layer_start: Vec<u32>,
    /// Index of each node within its layer.
    pub pos: Vec<u32>,
    /// Crossings of the initial order.
    pub initial: u64,
    /// Crossings of the order kept.
    pub best: u64,
    /// Sweeps run.
    pub sweeps: usize,
}

impl Order {
    pub(crate) fn layer(&self, l: usize) -> &[u32] {
        &self.order[self.layer_start[l] as usize..self.layer_start[l + 1] as usize]
    }

    pub(crate) fn layer_count(&self) -> usize {
        self.layer_start.len() - 1
    }

    pub(super) fn refresh_pos(&mut self) {
        for l in 0..self.layer_count() {
            let (a, b) = (
                self.layer_start[l] as usize,
                self.layer_start[l + 1] as usize,
            );
            for (p, &v) in self.order[a..b].iter().enumerate() {
                self.pos[v as usize] = p as u32;
            }
        }
    }
}
