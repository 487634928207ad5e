//! Compressed adjacency lists: one allocation per graph instead of one `Vec` per node, which
//! matters when a phase walks 20,000 nodes dozens of times.

/// Rows `0..rows`, each a slice of `u32` items, in the order the pairs were given.
#[derive(Debug, Clone, Default)]
pub(crate) struct Csr {
    start: Vec<u32>,
    items: Vec<u32>,
}

impl Csr {
    /// Builds from `(row, item)` pairs; rows out of range are skipped. Stable: items keep
    /// their input order within a row, so everything built on top stays deterministic.
    pub(crate) fn build<I>(rows: usize, pairs: I) -> Csr
    where
        I: Iterator<Item = (u32, u32)> + Clone,
    {
        let mut start = vec![0u32; rows + 1];
        for (r, _) in pairs.clone() {
            if (r as usize) < rows {
                start[r as usize + 1] += 1;
            }
        }
        for i in 0..rows {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut items = vec![0u32; start[rows] as usize];
        for (r, item) in pairs {
            if (r as usize) < rows {
                let slot = &mut fill[r as usize];
                items[*slot as usize] = item;
                *slot += 1;
            }
        }
        Csr { start, items }
    }

    /// Where row `r` starts among all the items (an item's place is its row's start plus its
    /// index in the row).
    pub(crate) fn start(&self, r: u32) -> usize {
        self.start
            .get(r as usize)
            .map_or(self.items.len(), |&a| a as usize)
    }

    /// All the rows' items.
    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    pub(crate) fn row(&self, r: u32) -> &[u32] {
        let r = r as usize;
        match (self.start.get(r), self.start.get(r + 1)) {
            (Some(&a), Some(&b)) => &self.items[a as usize..b as usize],
            _ => &[],
        }
    }
}
