//! A uniform grid over canvas rectangles, so a view finds what is on screen without walking the
//! whole graph: a frame costs what is visible, not what exists.
//!
//! Items are inserted once (when a layout or a fold changes); a query reuses the caller's
//! buffers, so a frame allocates nothing in proportion to the graph.

/// Canvas rectangle `[x0, y0, x1, y1]`.
pub type Bounds = [f32; 4];

#[derive(Debug, Clone, Default)]
pub struct Grid {
    origin: [f32; 2],
    cell: f32,
    cols: usize,
    rows: usize,
    /// Items of each cell, row-major.
    cells: Vec<Vec<u32>>,
    bounds: Vec<Bounds>,
}

/// Per-query scratch: which items were already returned (by stamp), reused frame to frame.
#[derive(Debug, Clone, Default)]
pub struct Scratch {
    seen: Vec<u32>,
    stamp: u32,
}

/// Cells at most this many per side: a very wide graph gets coarser cells, not a huge table.
const MAX_SIDE: usize = 1024;

impl Grid {
    /// A grid over `extent` with cells about `cell` canvas units wide.
    pub fn new(extent: Bounds, cell: f32) -> Self {
        let w = (extent[2] - extent[0]).max(1.0);
        let h = (extent[3] - extent[1]).max(1.0);
        let cell = cell
            .max(w / MAX_SIDE as f32)
            .max(h / MAX_SIDE as f32)
            .max(1.0);
        let cols = ((w / cell).ceil() as usize).max(1);
        let rows = ((h / cell).ceil() as usize).max(1);
        Grid {
            origin: [extent[0], extent[1]],
            cell,
            cols,
            rows,
            cells: vec![Vec::new(); cols * rows],
            bounds: Vec::new(),
        }
    }

    /// Adds item number `self.len()` covering `b`; returns its id. Non-finite bounds are kept
    /// (so ids stay dense) but never returned by a query.
    pub fn push(&mut self, b: Bounds) -> u32 {
        let id = self.bounds.len() as u32;
        self.bounds.push(b);
        if b.iter().all(|v| v.is_finite()) {
            self.cells_of(b, id);
        }
        id
    }

    /// Adds a polyline as one item: its bounds are the whole line's, but it sits only in the
    /// cells its segments cross. A long edge across the graph (a saved activation of a
    /// backward) would otherwise fill every cell of its bounding box: cols × rows entries.
    pub fn push_path(&mut self, points: &[[f32; 2]]) -> u32 {
        let id = self.bounds.len() as u32;
        let mut b = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
        for p in points {
            b = [
                b[0].min(p[0]),
                b[1].min(p[1]),
                b[2].max(p[0]),
                b[3].max(p[1]),
            ];
        }
        if points.is_empty() || !b.iter().all(|v| v.is_finite()) {
            self.bounds.push([f32::NAN; 4]);
            return id;
        }
        self.bounds.push(b);
        for w in points.windows(2) {
            let (a, z) = (w[0], w[1]);
            let len = ((z[0] - a[0]).abs()).max((z[1] - a[1]).abs());
            // Pieces no longer than half a cell: each piece's box spans at most 2 × 2 cells.
            let steps = ((len / (self.cell * 0.5)).ceil() as usize).max(1);
            let mut prev = a;
            for k in 1..=steps {
                let t = k as f32 / steps as f32;
                let p = [a[0] + (z[0] - a[0]) * t, a[1] + (z[1] - a[1]) * t];
                let piece = [
                    prev[0].min(p[0]),
                    prev[1].min(p[1]),
                    prev[0].max(p[0]),
                    prev[1].max(p[1]),
                ];
                if let Some((c0, r0, c1, r1)) = self.span(piece) {
                    for r in r0..=r1 {
                        for c in c0..=c1 {
                            let cell = &mut self.cells[r * self.cols + c];
                            if cell.last() != Some(&id) {
                                cell.push(id);
                            }
                        }
                    }
                }
                prev = p;
            }
        }
        if points.len() == 1 {
            self.cells_of(b, id);
        }
        id
    }

    fn cells_of(&mut self, b: Bounds, id: u32) {
        if let Some((c0, r0, c1, r1)) = self.span(b) {
            for r in r0..=r1 {
                for c in c0..=c1 {
                    self.cells[r * self.cols + c].push(id);
                }
            }
        }
    }

    pub fn len(&self) -> usize {
        self.bounds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bounds.is_empty()
    }

    pub fn bounds(&self, id: u32) -> Option<Bounds> {
        self.bounds.get(id as usize).copied()
    }

    /// Cells covered by `b`, clamped to the grid; `None` when `b` lies wholly outside.
    fn span(&self, b: Bounds) -> Option<(usize, usize, usize, usize)> {
        let to =
            |v: f32, o: f32, n: usize| ((v - o) / self.cell).floor().clamp(0.0, n as f32 - 1.0);
        let right = self.origin[0] + self.cols as f32 * self.cell;
        let bottom = self.origin[1] + self.rows as f32 * self.cell;
        if b[2] < self.origin[0] || b[3] < self.origin[1] || b[0] > right || b[1] > bottom {
            return None;
        }
        Some((
            to(b[0], self.origin[0], self.cols) as usize,
            to(b[1], self.origin[1], self.rows) as usize,
            to(b[2], self.origin[0], self.cols) as usize,
            to(b[3], self.origin[1], self.rows) as usize,
        ))
    }

    /// Items whose bounds intersect `area`, each once, in no particular order, into `out`
    /// (cleared first).
    pub fn query(&self, area: Bounds, scratch: &mut Scratch, out: &mut Vec<u32>) {
        out.clear();
        let Some((c0, r0, c1, r1)) = self.span(area) else {
            return;
        };
        if scratch.seen.len() < self.bounds.len() {
            scratch.seen.resize(self.bounds.len(), 0);
        }
        scratch.stamp = scratch.stamp.wrapping_add(1);
        if scratch.stamp == 0 {
            scratch.seen.iter_mut().for_each(|s| *s = 0);
            scratch.stamp = 1;
        }
        for r in r0..=r1 {
            for c in c0..=c1 {
                for &id in &self.cells[r * self.cols + c] {
                    let seen = &mut scratch.seen[id as usize];
                    if *seen == scratch.stamp {
                        continue;
                    }
                    *seen = scratch.stamp;
                    let b = self.bounds[id as usize];
                    if b[0] <= area[2] && b[2] >= area[0] && b[1] <= area[3] && b[3] >= area[1] {
                        out.push(id);
                    }
                }
            }
        }
    }

    /// The item containing point `p` for which `accept` holds; the smallest when several do
    /// (a node inside a box wins over the box).
    pub fn pick(&self, p: [f32; 2], mut accept: impl FnMut(u32) -> bool) -> Option<u32> {
        let (c, r, _, _) = self.span([p[0], p[1], p[0], p[1]])?;
        self.cells[r * self.cols + c]
            .iter()
            .copied()
            .filter(|&id| {
                let b = self.bounds[id as usize];
                b[0] <= p[0] && p[0] <= b[2] && b[1] <= p[1] && p[1] <= b[3]
            })
            .filter(|&id| accept(id))
            .min_by(|&a, &b| {
                area(self.bounds[a as usize]).total_cmp(&area(self.bounds[b as usize]))
            })
    }
}

/// Items binned into square cells of one size, one value per cell (the item of highest rank
/// wins): what a view draws when items are smaller than a pixel, so that a frame costs the cells
/// on screen, however many items lie behind them.
#[derive(Debug, Clone)]
pub struct Bins<T> {
    cell: f32,
    /// Occupied cells `(row, col, value)`, sorted by row then column.
    cells: Vec<(i32, i32, T)>,
}

impl<T: Copy> Bins<T> {
    /// Bins `items` (bounds, value, rank) into cells `cell` canvas units wide; an item covers
    /// every cell its bounds touch. Non-finite bounds are skipped.
    pub fn build(cell: f32, items: impl IntoIterator<Item = (Bounds, T, u8)>) -> Self {
        let cell = if cell.is_finite() {
            cell.max(1e-3)
        } else {
            1.0
        };
        let mut best: std::collections::HashMap<(i32, i32), (u8, T)> =
            std::collections::HashMap::new();
        let at = |v: f32| cell_index(v, cell);
        for (b, value, rank) in items {
            if !b.iter().all(|v| v.is_finite()) {
                continue;
            }
            let (c0, r0, c1, r1) = (at(b[0]), at(b[1]), at(b[2]), at(b[3]));
            // A huge item (a bad size) must not fill millions of cells: keep its centre cell.
            let cells = (c1 as i64 - c0 as i64 + 1).saturating_mul(r1 as i64 - r0 as i64 + 1);
            let (c0, r0, c1, r1) = if cells > 4096 {
                let (c, r) = (at((b[0] + b[2]) / 2.0), at((b[1] + b[3]) / 2.0));
                (c, r, c, r)
            } else {
                (c0, r0, c1, r1)
            };
            for r in r0..=r1 {
                for c in c0..=c1 {
                    let e = best.entry((r, c)).or_insert((rank, value));
                    if rank > e.0 {
                        *e = (rank, value);
                    }
                }
            }
        }
        let mut cells: Vec<(i32, i32, T)> =
            best.into_iter().map(|((r, c), (_, v))| (r, c, v)).collect();
        cells.sort_unstable_by_key(|&(r, c, _)| (r, c));
        Bins { cell, cells }
    }

    pub fn cell(&self) -> f32 {
        self.cell
    }

    pub fn len(&self) -> usize {
        self.cells.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The occupied cells meeting `area`, as (cell bounds, value), row by row.
    pub fn query(&self, area: Bounds) -> impl Iterator<Item = (Bounds, T)> + '_ {
        let at = |v: f32| cell_index(v, self.cell);
        let (c0, r0, c1, r1) = (at(area[0]), at(area[1]), at(area[2]), at(area[3]));
        let start = self.cells.partition_point(|&(r, _, _)| r < r0);
        let end = self.cells.partition_point(|&(r, _, _)| r <= r1);
        let cell = self.cell;
        self.cells[start..end]
            .iter()
            .filter(move |&&(_, c, _)| c0 <= c && c <= c1)
            .map(move |&(r, c, v)| {
                let (x, y) = (c as f32 * cell, r as f32 * cell);
                ([x, y, x + cell, y + cell], v)
            })
    }
}

/// The cell of width `cell` holding coordinate `v`, clamped to i32 (a wild coordinate lands in
/// the outermost cell rather than wrapping).
fn cell_index(v: f32, cell: f32) -> i32 {
    (v / cell).floor().clamp(i32::MIN as f32, i32::MAX as f32) as i32
}

fn area(b: Bounds) -> f32 {
    (b[2] - b[0]) * (b[3] - b[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_returns_each_intersecting_item_once() {
        let mut g = Grid::new([0.0, 0.0, 1000.0, 1000.0], 100.0);
        let a = g.push([10.0, 10.0, 20.0, 20.0]);
        // Spans many cells: must come back once.
        let b = g.push([0.0, 0.0, 900.0, 900.0]);
        let c = g.push([950.0, 950.0, 990.0, 990.0]);
        let _nan = g.push([f32::NAN, 0.0, 1.0, 1.0]);
        let (mut s, mut out) = (Scratch::default(), Vec::new());
        g.query([0.0, 0.0, 50.0, 50.0], &mut s, &mut out);
        out.sort();
        assert_eq!(out, vec![a, b]);
        g.query([940.0, 940.0, 2000.0, 2000.0], &mut s, &mut out);
        assert_eq!(out, vec![c]);
        g.query([-500.0, -500.0, -1.0, -1.0], &mut s, &mut out);
        assert!(out.is_empty());
        assert_eq!(g.pick([15.0, 15.0], |_| true), Some(a));
        assert_eq!(g.pick([15.0, 15.0], |i| i != a), Some(b));
        assert_eq!(g.pick([930.0, 930.0], |_| true), None);
    }

    #[test]
    fn bins_keep_the_highest_rank_per_cell_and_answer_by_area() {
        let bins = Bins::build(
            10.0,
            [
                ([0.0, 0.0, 4.0, 4.0], 'a', 0),
                ([2.0, 2.0, 6.0, 6.0], 'b', 2),
                ([1.0, 1.0, 3.0, 3.0], 'c', 1),
                // Spans two cells: both get it.
                ([15.0, 0.0, 25.0, 5.0], 'd', 0),
                ([f32::NAN, 0.0, 1.0, 1.0], 'x', 9),
                ([-15.0, -15.0, -12.0, -12.0], 'e', 0),
            ],
        );
        let all: Vec<_> = bins.query([-100.0, -100.0, 100.0, 100.0]).collect();
        assert_eq!(
            all,
            vec![
                ([-20.0, -20.0, -10.0, -10.0], 'e'),
                ([0.0, 0.0, 10.0, 10.0], 'b'),
                ([10.0, 0.0, 20.0, 10.0], 'd'),
                ([20.0, 0.0, 30.0, 10.0], 'd'),
            ]
        );
        let right: Vec<_> = bins.query([21.0, 1.0, 22.0, 2.0]).map(|c| c.1).collect();
        assert_eq!(right, vec!['d']);
        assert_eq!(bins.query([200.0, 200.0, 300.0, 300.0]).count(), 0);
        // A 1e9-wide item is one cell, not a billion; so is one less than a cell tall, and one
        // whose cells reach past i32.
        let huge = Bins::build(1.0, [([0.0, 0.0, 1.0e9, 1.0], 0u8, 0)]);
        assert_eq!(huge.len(), 1);
        let flat = Bins::build(1.0, [([0.0, 0.2, 1.0e9, 0.4], 0u8, 0)]);
        assert_eq!(flat.len(), 1);
        let vast = Bins::build(1.0, [([-3.0e38, -3.0e38, 3.0e38, 3.0e38], 0u8, 0)]);
        assert_eq!(vast.len(), 1);
    }

    #[test]
    fn huge_extent_keeps_the_table_bounded() {
        let g = Grid::new([0.0, 0.0, 10.0, 5.0e6], 64.0);
        assert!(g.cells.len() <= MAX_SIDE * MAX_SIDE);
    }
}
