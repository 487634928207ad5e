//! One pair's difference as pictures (issue 23): a histogram of target − golden over every
//! element, and |target − golden| on a 2-D slice, pooled to the cells a heatmap shows, with where
//! the largest difference is.
//!
//! Two parallel passes over both arrays in place (no copy) make the histogram (numpy's binning,
//! as `tensor_stats`); the slice reads only its own elements, at most `limit` of them. By
//! default the slice is the one holding the tensor's largest difference.
//!
//! A place where one side is NaN or ±Inf and the other is not the same has no difference to
//! count: it is counted apart, and its heatmap cell is NaN (drawn as such). The same NaN or
//! infinity on both sides is no difference (msprobe counts those places as equal).

use super::metrics::{CHUNK, fill, squeeze};
use crate::analysis::tensor_stats::{ShapesDiffer, SliceAt, bin_of, edges, hist_range, slice_at};
use crate::model::npy::{NpyArray, unravel};
use crate::model::tensor::Histogram;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// |Δ| on one 2-D slice (the last two dimensions at fixed leading indices; a 1-D tensor is
/// one row, a 0-d one a single cell), pooled to at most `cells × cells`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeltaSlice {
    /// Leading indices fixed, in the target's shape.
    pub lead: Vec<u64>,
    pub rows: usize,
    pub cols: usize,
    /// The picture: `cell_rows × cell_cols` cells, row-major, each the largest |Δ| of the block
    /// of the slice it covers, NaN where the block holds a NaN/Inf only one side has.
    pub cell_rows: usize,
    pub cell_cols: usize,
    pub cells: Vec<f64>,
    /// The largest finite |Δ| of the slice: its (row, column) in the slice, its cell, and
    /// the value.
    pub peak: Option<Peak>,
    /// Only the first values of a huge slice were read.
    pub cut: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Peak {
    pub row: usize,
    pub col: usize,
    pub cell: (usize, usize),
    pub value: f64,
}

/// The difference target − golden of one pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Delta {
    /// Of every finite Δ; `None` when there is none.
    pub histogram: Option<Histogram>,
    pub elements: u64,
    /// Places whose Δ is not a number: a NaN/Inf on one side only (or different ones).
    pub non_finite: u64,
    /// The largest finite |Δ| of the whole tensor: its index (target's shape) and value.
    pub largest: Option<(Vec<u64>, f64)>,
    pub slice: DeltaSlice,
}

/// Δ of two values: `None` where it is not a number.
#[inline]
fn diff(t: f64, g: f64) -> Option<f64> {
    if t.is_finite() && g.is_finite() {
        Some(t - g)
    } else if t == g || (t.is_nan() && g.is_nan()) {
        Some(0.0)
    } else {
        None
    }
}

#[derive(Clone, Copy)]
struct Pass1 {
    min: f64,
    max: f64,
    non_finite: u64,
    /// Flat index and |Δ| of the largest.
    top: Option<(u64, f64)>,
}

impl Pass1 {
    const EMPTY: Pass1 = Pass1 {
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
        non_finite: 0,
        top: None,
    };

    fn merge(self, o: Pass1) -> Pass1 {
        let top = match (self.top, o.top) {
            // The first of equal maxima, as numpy's argmax.
            (Some(a), Some(b)) => Some(if b.1 > a.1 || (b.1 == a.1 && b.0 < a.0) {
                b
            } else {
                a
            }),
            (a, b) => a.or(b),
        };
        Pass1 {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
            non_finite: self.non_finite + o.non_finite,
            top,
        }
    }
}

/// Runs `f` over every chunk of Δ (its start index and values, `None` where not a number).
fn chunks<R: Send>(
    t: &NpyArray,
    g: &NpyArray,
    n: u64,
    f: impl Fn(u64, &mut dyn Iterator<Item = Option<f64>>) -> R + Sync,
) -> Vec<R> {
    (0..n.div_ceil(CHUNK as u64))
        .into_par_iter()
        .map_init(
            || (vec![0.0f64; CHUNK], vec![0.0f64; CHUNK]),
            |(bt, bg), c| {
                let start = c * CHUNK as u64;
                let len = (n - start).min(CHUNK as u64) as usize;
                fill(t, start, &mut bt[..len]);
                fill(g, start, &mut bg[..len]);
                let mut it = bt[..len].iter().zip(&bg[..len]).map(|(&x, &y)| diff(x, y));
                f(start, &mut it)
            },
        )
        .collect()
}

/// The difference of `t` against `g`, with `bins` histogram bins and the slice at `lead`
/// (default: the one holding the largest difference) pooled to `cells` a side, reading at most
/// `limit` of its values. Both arrays must be complete (the pipeline refuses cut files).
pub fn delta(
    t: &NpyArray,
    g: &NpyArray,
    lead: Option<&[u64]>,
    bins: usize,
    cells: usize,
    limit: usize,
) -> Result<Delta, ShapesDiffer> {
    if squeeze(&t.info.shape) != squeeze(&g.info.shape) {
        return Err(ShapesDiffer(t.info.shape.clone(), g.info.shape.clone()));
    }
    let n = t.info.elements().min(t.available).min(g.available);
    let p = chunks(t, g, n, |start, it| {
        let mut p = Pass1::EMPTY;
        for (k, d) in it.enumerate() {
            let Some(d) = d else {
                p.non_finite += 1;
                continue;
            };
            p.min = p.min.min(d);
            p.max = p.max.max(d);
            if p.top.is_none_or(|(_, v)| d.abs() > v) {
                p.top = Some((start + k as u64, d.abs()));
            }
        }
        p
    })
    .into_iter()
    .fold(Pass1::EMPTY, Pass1::merge);
    let histogram = p.top.and_then(|_| {
        let (lo, hi) = hist_range(p.min, p.max);
        let bins = bins.max(1);
        let e = edges(lo, hi, bins);
        if !(hi - lo).is_finite() || !e.windows(2).all(|w| w[0] < w[1]) {
            return None;
        }
        let norm = bins as f64 / (hi - lo);
        let counts = chunks(t, g, n, |_, it| {
            let mut c = vec![0u64; bins];
            for d in it.flatten() {
                c[bin_of(d, lo, norm, &e)] += 1;
            }
            c
        })
        .into_iter()
        .fold(vec![0u64; bins], |mut a, b| {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
            a
        });
        Some(Histogram { lo, hi, counts })
    });
    let shape = &t.info.shape;
    let largest = p.top.map(|(i, v)| (unravel(i, shape), v));
    let nlead = shape.len().saturating_sub(2);
    let lead: Vec<u64> = match lead {
        Some(l) => l.to_vec(),
        None => largest
            .as_ref()
            .map(|(at, _)| at[..nlead].to_vec())
            .unwrap_or_default(),
    };
    Ok(Delta {
        histogram,
        elements: n,
        non_finite: p.non_finite,
        largest,
        slice: slice(t, g, &lead, cells.max(1), limit),
    })
}

/// |Δ| of the slice at `lead`, pooled to at most `cells × cells`.
fn slice(t: &NpyArray, g: &NpyArray, lead: &[u64], cells: usize, limit: usize) -> DeltaSlice {
    let SliceAt {
        lead,
        rows,
        cols,
        base,
    } = slice_at(&t.info.shape, lead);
    let (rows, cols) = (
        usize::try_from(rows).unwrap_or(usize::MAX),
        usize::try_from(cols).unwrap_or(usize::MAX),
    );
    let (cr, cc) = (rows.clamp(1, cells), cols.clamp(1, cells));
    // Cell of each column (row) of the slice: block k covers [k·n/c, (k+1)·n/c).
    let cell_of =
        |i: usize, n: usize, c: usize| ((i as u128 * c as u128) / n.max(1) as u128) as usize;
    let mut out = DeltaSlice {
        lead,
        rows,
        cols,
        cell_rows: cr,
        cell_cols: cc,
        cells: vec![0.0; cr * cc],
        peak: None,
        cut: false,
    };
    let want = rows.saturating_mul(cols);
    let read = want.min(limit);
    out.cut = read < want;
    for k in 0..read {
        let i = base.saturating_add(k as u64);
        let (Some(x), Some(y)) = (t.get_c(i), g.get_c(i)) else {
            out.cut = true;
            break;
        };
        let (r, c) = (k / cols.max(1), k % cols.max(1));
        let cell = (cell_of(r, rows, cr), cell_of(c, cols, cc));
        let at = &mut out.cells[cell.0 * cc + cell.1];
        match diff(x, y) {
            Some(d) => {
                let d = d.abs();
                if !at.is_nan() {
                    *at = at.max(d);
                }
                if out.peak.is_none_or(|p| d > p.value) {
                    out.peak = Some(Peak {
                        row: r,
                        col: c,
                        cell,
                        value: d,
                    });
                }
            }
            None => *at = f64::NAN,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arr(shape: &[u64], v: &[f32]) -> NpyArray {
        let dims: Vec<String> = shape.iter().map(|d| format!("{d},")).collect();
        let mut h = format!(
            "{{'descr': '<f4', 'fortran_order': False, 'shape': ({}), }}",
            dims.join(" ")
        );
        while !(10 + h.len() + 1).is_multiple_of(64) {
            h.push(' ');
        }
        h.push('\n');
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
        b.extend_from_slice(h.as_bytes());
        for x in v {
            b.extend_from_slice(&x.to_le_bytes());
        }
        NpyArray::from_vec(b).expect("npy")
    }

    #[test]
    fn histogram_counts_every_difference_and_the_slice_holds_the_largest() {
        // [2, 3, 4]: the largest difference at [1, 2, 3] (flat 23), a NaN on one side at 9.
        let g: Vec<f32> = (0..24).map(|i| i as f32).collect();
        let mut t = g.clone();
        t[23] += 4.0;
        t[0] -= 1.0;
        t[9] = f32::NAN;
        let (t, g) = (arr(&[2, 3, 4], &t), arr(&[2, 3, 4], &g));
        let d = delta(&t, &g, None, 8, 2, 1 << 20).expect("same shapes");
        assert_eq!(d.elements, 24);
        assert_eq!(d.non_finite, 1);
        let h = d.histogram.expect("histogram");
        assert_eq!((h.lo, h.hi), (-1.0, 4.0));
        assert_eq!(h.counts.iter().sum::<u64>(), 23);
        assert_eq!((h.counts[0], h.counts[1], h.counts[7]), (1, 21, 1));
        assert_eq!(d.largest, Some((vec![1, 2, 3], 4.0)));
        // The slice holding it (d0 = 1), 3 × 4 pooled to 2 × 2: rows {0, 1}, {2}; columns
        // {0, 1}, {2, 3}.
        let s = &d.slice;
        assert_eq!((s.lead.as_slice(), s.rows, s.cols), (&[1u64][..], 3, 4));
        assert_eq!((s.cell_rows, s.cell_cols), (2, 2));
        assert_eq!(s.cells, vec![0.0, 0.0, 0.0, 4.0]);
        let p = s.peak.expect("peak");
        assert_eq!((p.row, p.col, p.cell, p.value), (2, 3, (1, 1), 4.0));
        // Slice 0 holds the −1 (row 0, column 0) and the one-sided NaN (row 2, column 1).
        let d0 = delta(&t, &g, Some(&[0]), 8, 2, 1 << 20).expect("same shapes");
        assert!(d0.slice.cells[2].is_nan(), "{:?}", d0.slice.cells);
        assert_eq!(d0.slice.cells[0], 1.0);
        assert_eq!(d0.slice.peak.map(|p| (p.row, p.col)), Some((0, 0)));
        // A slice larger than the limit is read in part, and says so.
        assert!(delta(&t, &g, Some(&[0]), 8, 2, 5).expect("ok").slice.cut);
    }

    #[test]
    fn shapes_that_differ_once_squeezed_have_no_difference() {
        let a = arr(&[2, 2], &[0.0; 4]);
        let b = arr(&[4], &[0.0; 4]);
        assert!(delta(&a, &b, None, 8, 8, 100).is_err());
        let c = arr(&[1, 4], &[1.0; 4]);
        let d = delta(&c, &b, None, 8, 8, 100).expect("squeezed equal");
        assert_eq!(d.largest, Some((vec![0, 0], 1.0)));
        assert_eq!(d.slice.cells, vec![1.0; 4]);
    }
}
