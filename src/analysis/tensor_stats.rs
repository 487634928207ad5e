//! Statistics of a tensor read in place (`model::npy`, opened by `sources::npy`): two streaming passes over the mapped
//! bytes, in parallel chunks, with no copy of the data. Pass 1 counts NaN/±Inf/zeros and finds
//! min, max and the sum; pass 2 fills the histogram and the squared deviations from the mean
//! (two passes keep the standard deviation exact where a one-pass sum of squares would not).

use crate::model::npy::{Elem, NpyArray, unravel};
use crate::model::tensor::{Histogram, TensorCompare, TensorStats, TensorSummary};
use rayon::prelude::*;

/// Histogram bins the app and the CLI show.
pub const BINS: usize = 64;
/// Elements per parallel chunk: big enough to amortise rayon, small enough to balance 2+ cores.
const CHUNK: usize = 1 << 18;

#[derive(Clone, Copy)]
struct Partial {
    n: u64,
    nan: u64,
    pos_inf: u64,
    neg_inf: u64,
    zero: u64,
    min: f64,
    max: f64,
    sum: f64,
}

impl Partial {
    const EMPTY: Partial = Partial {
        n: 0,
        nan: 0,
        pos_inf: 0,
        neg_inf: 0,
        zero: 0,
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
        sum: 0.0,
    };

    fn merge(self, o: Partial) -> Partial {
        Partial {
            n: self.n + o.n,
            nan: self.nan + o.nan,
            pos_inf: self.pos_inf + o.pos_inf,
            neg_inf: self.neg_inf + o.neg_inf,
            zero: self.zero + o.zero,
            min: self.min.min(o.min),
            max: self.max.max(o.max),
            sum: self.sum + o.sum,
        }
    }
}

/// Independent accumulators per chunk: a single running sum is bound by the add latency
/// (~4 cycles per element); four lanes let the CPU overlap them.
const LANES: usize = 4;

fn pass1<const N: usize>(data: &[u8], f: impl Fn([u8; N]) -> f64 + Sync) -> Partial {
    data.par_chunks(CHUNK * N)
        .map(|chunk| {
            let mut min = [f64::INFINITY; LANES];
            let mut max = [f64::NEG_INFINITY; LANES];
            let mut sum = [0.0f64; LANES];
            let mut zero = [0u64; LANES];
            // NaN and ±Inf are rare: counted off the hot path.
            let mut odd = Partial::EMPTY;
            let mut lane = |j: usize, x: f64| {
                if x.is_finite() {
                    zero[j] += (x == 0.0) as u64;
                    min[j] = if x < min[j] { x } else { min[j] };
                    max[j] = if x > max[j] { x } else { max[j] };
                    sum[j] += x;
                } else if x.is_nan() {
                    odd.nan += 1;
                } else if x > 0.0 {
                    odd.pos_inf += 1;
                } else {
                    odd.neg_inf += 1;
                }
            };
            let mut blocks = chunk.chunks_exact(LANES * N);
            for block in &mut blocks {
                for j in 0..LANES {
                    let b: [u8; N] = block[j * N..(j + 1) * N].try_into().unwrap_or([0; N]);
                    lane(j, f(b));
                }
            }
            for b in blocks.remainder().chunks_exact(N) {
                lane(0, f(b.try_into().unwrap_or([0; N])));
            }
            let mut p = odd;
            p.n = (chunk.len() / N) as u64;
            for j in 0..LANES {
                p.zero += zero[j];
                p.min = p.min.min(min[j]);
                p.max = p.max.max(max[j]);
                p.sum += sum[j];
            }
            p
        })
        .reduce(|| Partial::EMPTY, Partial::merge)
}

/// Bin edges as numpy's `linspace(lo, hi, bins + 1)` computes them.
pub(crate) fn edges(lo: f64, hi: f64, bins: usize) -> Vec<f64> {
    let step = (hi - lo) / bins as f64;
    let mut e: Vec<f64> = (0..=bins).map(|k| k as f64 * step + lo).collect();
    e[bins] = hi;
    e
}

/// numpy's range for a histogram of constant data: `[x − 0.5, x + 0.5]`.
pub(crate) fn hist_range(min: f64, max: f64) -> (f64, f64) {
    if min == max {
        (min - 0.5, max + 0.5)
    } else {
        (min, max)
    }
}

/// The bin of `x` with numpy's rules (the last bin is closed; edge corrections as
/// `np.histogram` does them, so counts equal numpy's exactly).
#[inline]
pub(crate) fn bin_of(x: f64, lo: f64, norm: f64, e: &[f64]) -> usize {
    let bins = e.len() - 1;
    let mut k = (((x - lo) * norm) as usize).min(bins);
    if k == bins {
        k -= 1;
    }
    if x < e[k] && k > 0 {
        k -= 1;
    } else if k + 1 < bins && x >= e[k + 1] {
        k += 1;
    }
    k
}

fn pass2<const N: usize>(
    data: &[u8],
    f: impl Fn([u8; N]) -> f64 + Sync,
    mean: f64,
    lo: f64,
    hi: f64,
    bins: usize,
) -> (Vec<u64>, f64) {
    let e = edges(lo, hi, bins);
    let norm = bins as f64 / (hi - lo);
    data.par_chunks(CHUNK * N)
        .map(|chunk| {
            // One histogram and one sum per lane: consecutive values often fall in the same
            // bin, and a single counter would serialise on its own store.
            let mut counts = vec![0u64; bins * LANES];
            let mut m2 = [0.0f64; LANES];
            let mut lane = |j: usize, x: f64| {
                if x.is_finite() {
                    let d = x - mean;
                    m2[j] += d * d;
                    counts[j * bins + bin_of(x, lo, norm, &e)] += 1;
                }
            };
            let mut blocks = chunk.chunks_exact(LANES * N);
            for block in &mut blocks {
                for j in 0..LANES {
                    let b: [u8; N] = block[j * N..(j + 1) * N].try_into().unwrap_or([0; N]);
                    lane(j, f(b));
                }
            }
            for b in blocks.remainder().chunks_exact(N) {
                lane(0, f(b.try_into().unwrap_or([0; N])));
            }
            let mut total = vec![0u64; bins];
            for (k, c) in counts.iter().enumerate() {
                total[k % bins] += c;
            }
            (total, m2.iter().sum::<f64>())
        })
        .reduce(
            || (vec![0u64; bins], 0.0),
            |(mut a, ma), (b, mb)| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x += y;
                }
                (a, ma + mb)
            },
        )
}

/// Calls `$func::<N>(data, decoder, args…)` with the decoder of the array's element type,
/// so each inner loop is compiled for one dtype and byte order.
macro_rules! dispatch {
    ($arr:expr, $func:ident ( $($arg:expr),* )) => {{
        let a: &NpyArray = $arr;
        let d = a.data();
        let big = a.big_endian;
        macro_rules! arm {
            ($t:ty, $n:literal) => {
                if big {
                    $func::<$n>(d, |b| <$t>::from_be_bytes(b) as f64 $(, $arg)*)
                } else {
                    $func::<$n>(d, |b| <$t>::from_le_bytes(b) as f64 $(, $arg)*)
                }
            };
        }
        match a.elem {
            Elem::F32 => arm!(f32, 4),
            Elem::F64 => arm!(f64, 8),
            Elem::F16 => {
                if big {
                    $func::<2>(d, |b| half::f16::from_be_bytes(b).to_f64() $(, $arg)*)
                } else {
                    $func::<2>(d, |b| half::f16::from_le_bytes(b).to_f64() $(, $arg)*)
                }
            }
            Elem::BF16 => {
                if big {
                    $func::<2>(d, |b| half::bf16::from_be_bytes(b).to_f64() $(, $arg)*)
                } else {
                    $func::<2>(d, |b| half::bf16::from_le_bytes(b).to_f64() $(, $arg)*)
                }
            }
            Elem::Bool => $func::<1>(d, |b: [u8; 1]| (b[0] != 0) as u8 as f64 $(, $arg)*),
            Elem::I8 => arm!(i8, 1),
            Elem::U8 => arm!(u8, 1),
            Elem::I16 => arm!(i16, 2),
            Elem::U16 => arm!(u16, 2),
            Elem::I32 => arm!(i32, 4),
            Elem::U32 => arm!(u32, 4),
            Elem::I64 => arm!(i64, 8),
            Elem::U64 => arm!(u64, 8),
        }
    }};
}

/// Statistics of every complete element of `arr`, with a `bins`-bin histogram.
pub fn stats(arr: &NpyArray, bins: usize) -> TensorStats {
    let p = dispatch!(arr, pass1());
    let finite = p.n - p.nan - p.pos_inf - p.neg_inf;
    let mut s = TensorStats {
        count: p.n,
        nan: p.nan,
        pos_inf: p.pos_inf,
        neg_inf: p.neg_inf,
        zero: p.zero,
        min: None,
        max: None,
        mean: None,
        std: None,
        histogram: None,
    };
    if finite == 0 {
        return s;
    }
    let mean = p.sum / finite as f64;
    let (lo, hi) = hist_range(p.min, p.max);
    // No finite-width bins (a range past f64, or ±0.5 lost next to 2^63): no histogram, as
    // numpy refuses one.
    let ok = (hi - lo).is_finite() && edges(lo, hi, bins.max(1)).windows(2).all(|w| w[0] < w[1]);
    let bins = if ok { bins.max(1) } else { 0 };
    let (counts, m2) = dispatch!(arr, pass2(mean, lo, hi, bins.max(1)));
    s.min = Some(p.min);
    s.max = Some(p.max);
    s.mean = Some(mean);
    s.std = Some((m2 / finite as f64).sqrt());
    s.histogram = (bins > 0).then_some(Histogram { lo, hi, counts });
    s
}

/// The summary the app and the CLI show of one array.
pub fn summarize(arr: &NpyArray) -> TensorSummary {
    TensorSummary {
        info: arr.info.clone(),
        stats: stats(arr, BINS),
        warning: arr.truncation(),
    }
}

/// Two tensors that cannot be compared element by element.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("shapes differ: {0:?} vs {1:?}")]
pub struct ShapesDiffer(pub Vec<u64>, pub Vec<u64>);

/// Compares two dumps of one tensor element by element (C order): `a` against the reference
/// `b`. Pairs with a non-finite value on either side are counted, not compared.
pub fn compare(a: &NpyArray, b: &NpyArray) -> Result<TensorCompare, ShapesDiffer> {
    if a.info.elements() != b.info.elements() {
        return Err(ShapesDiffer(a.info.shape.clone(), b.info.shape.clone()));
    }
    let n = a.available.min(b.available);
    let mut c = TensorCompare {
        compared: 0,
        non_finite: 0,
        max_abs_diff: 0.0,
        max_rel_diff: 0.0,
        cosine: None,
        argmax: None,
        at_max: None,
    };
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    let mut best: Option<(u64, f64, f64)> = None;
    for i in 0..n {
        let (Some(x), Some(y)) = (a.get_c(i), b.get_c(i)) else {
            break;
        };
        if !x.is_finite() || !y.is_finite() {
            c.non_finite += 1;
            continue;
        }
        c.compared += 1;
        let d = (x - y).abs();
        if best.is_none() || d > c.max_abs_diff {
            c.max_abs_diff = d;
            best = Some((i, x, y));
        }
        if y != 0.0 {
            c.max_rel_diff = c.max_rel_diff.max(d / y.abs());
        }
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na > 0.0 && nb > 0.0 {
        c.cosine = Some(dot / (na.sqrt() * nb.sqrt()));
    } else if na == 0.0 && nb == 0.0 && c.compared > 0 {
        c.cosine = Some(1.0);
    }
    if let Some((i, x, y)) = best {
        c.argmax = Some(unravel(i, &a.info.shape));
        c.at_max = Some((x, y));
    }
    Ok(c)
}

/// Where a 2-D slice lies in a tensor of `shape`: its leading indices (clamped to the shape),
/// its size (the last two dims; a 1-D tensor one row, a 0-d one a cell) and its first C-order
/// index.
pub struct SliceAt {
    pub lead: Vec<u64>,
    pub rows: u64,
    pub cols: u64,
    pub base: u64,
}

pub fn slice_at(shape: &[u64], lead: &[u64]) -> SliceAt {
    let (rows, cols) = match shape.len() {
        0 => (1, 1),
        1 => (1, shape[0]),
        n => (shape[n - 2], shape[n - 1]),
    };
    let nlead = shape.len().saturating_sub(2);
    let lead: Vec<u64> = (0..nlead)
        .map(|k| {
            lead.get(k)
                .copied()
                .unwrap_or(0)
                .min(shape[k].saturating_sub(1))
        })
        .collect();
    let base = lead
        .iter()
        .zip(shape)
        .fold(0u64, |b, (i, d)| b.saturating_mul(*d).saturating_add(*i))
        .saturating_mul(rows.saturating_mul(cols));
    SliceAt {
        lead,
        rows,
        cols,
        base,
    }
}

/// The 2-D slice of `arr` at leading indices `lead` (clamped to the shape): the last two dims,
/// a 1-D tensor as one row. At most `limit` values are read.
pub fn slice2d(
    arr: &NpyArray,
    lead: &[u64],
    limit: usize,
) -> Option<crate::model::tensor::Slice2d> {
    if arr.info.shape.is_empty() {
        return None;
    }
    let SliceAt {
        lead,
        rows,
        cols,
        base,
    } = slice_at(&arr.info.shape, lead);
    let area = rows.saturating_mul(cols);
    let want = usize::try_from(area).unwrap_or(usize::MAX);
    let mut values = Vec::with_capacity(want.min(limit));
    for i in 0..want.min(limit) as u64 {
        match arr.get_c(base.saturating_add(i)) {
            Some(v) => values.push(v),
            None => break,
        }
    }
    Some(crate::model::tensor::Slice2d {
        lead,
        rows: usize::try_from(rows).unwrap_or(usize::MAX),
        cols: usize::try_from(cols).unwrap_or(usize::MAX),
        cut: values.len() < want,
        values,
    })
}
