//! Tensor-mode metrics of one pair, in one parallel pass over both arrays in place.
//!
//! msprobe's definitions (mindstudio-probe 26.2, `msprobe/core/compare/npy_compare.py`,
//! `algorithm/builtin_algorithm/*`, `utils.py`), reproduced exactly:
//!
//! - Both tensors are squeezed; different squeezed shapes give `shape unmatched` everywhere, an
//!   empty one `unsupported`. bf16 is read as f32, every value compared as f64.
//! - NaN/±Inf: when both sides hold them at the same places (NaN masks equal, Inf masks equal,
//!   whatever the sign), those places count as 0 on both sides; otherwise every metric is `N/A`.
//! - Cosine: dot / (‖t‖·‖g‖) in f64; both norms ≤ f64 ε → 1, one of them → `Nan`.
//! - EucDist ‖t − g‖₂; MaxAbsErr max |t − g|.
//! - MaxRelativeErr and the one-thousandth / five-thousandths ratios use |(t − g) / g| computed
//!   in f32 when both sides are f16/bf16/f32 (numpy's `result_type(t, g, float32)`), in f64
//!   otherwise; where g = 0, ε of that type is added to both sides first. The ratios are the
//!   share of elements with that error below 0.001 / 0.005.
//! - A one-element tensor squeezes to 0-d: cosine, EucDist and the ratios are `unsupported`,
//!   MaxAbsErr and MaxRelativeErr are computed (without the NaN handling).
//!
//! fxray adds: RMSE, the norm ratio ‖t‖/‖g‖ (a scale error), the relative error
//! ‖t − g‖ / max(‖t‖, ‖g‖) that the verdict uses, where the largest |t − g| sits, and both
//! sides' statistics (npy dumps record none).

use super::stats::Summary;
use crate::model::npy::{Elem, NpyArray, decode, unravel};
use rayon::prelude::*;
use serde::{Serialize, Serializer};

/// Elements decoded per parallel chunk (two f64 buffers of 512 KiB).
pub(super) const CHUNK: usize = 1 << 16;
const THOUSANDTH: f64 = 0.001;
const FIVE_THOUSANDTHS: f64 = 0.005;

/// One metric as msprobe reports it: a number, or the word it writes instead.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Metric {
    Value(f64),
    /// `unsupported`: 0-d, empty, unreadable or not a tensor.
    Unsupported,
    /// `Nan`: cosine of an all-zero side, a NaN result.
    Nan,
    /// `N/A`: NaN/Inf at different places on the two sides.
    NotApplicable,
    /// `shape unmatched`.
    ShapeUnmatched,
}

impl Metric {
    pub fn value(self) -> Option<f64> {
        match self {
            Metric::Value(v) => Some(v),
            _ => None,
        }
    }

    /// The word msprobe writes for a metric it has no number for.
    pub fn word(self) -> Option<&'static str> {
        match self {
            Metric::Value(_) => None,
            Metric::Unsupported => Some("unsupported"),
            Metric::Nan => Some("Nan"),
            Metric::NotApplicable => Some("N/A"),
            Metric::ShapeUnmatched => Some("shape unmatched"),
        }
    }

    /// msprobe's text back into a metric (`1.0`, `unsupported`, `Nan`, ` inf`).
    pub fn parse(s: &str) -> Option<Metric> {
        let t = s.trim();
        Some(match t {
            "unsupported" | "None" | "No data" | "No real data" | "api unmatched" | "" => {
                Metric::Unsupported
            }
            "Nan" | "nan" | "NaN" => Metric::Nan,
            "N/A" => Metric::NotApplicable,
            "shape unmatched" => Metric::ShapeUnmatched,
            _ => Metric::Value(t.parse().ok()?),
        })
    }
}

/// A number, or `null` where msprobe has a word instead.
impl Serialize for Metric {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.value().filter(|v| v.is_finite()) {
            Some(v) => s.serialize_f64(v),
            None => s.serialize_none(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorMetrics {
    pub cosine: Metric,
    pub euc_dist: Metric,
    pub max_abs_err: Metric,
    pub max_rel_err: Metric,
    pub one_thousandth_ratio: Metric,
    pub five_thousandths_ratio: Metric,
    pub rmse: Option<f64>,
    pub norm_ratio: Option<f64>,
    /// ‖t − g‖ / max(‖t‖, ‖g‖); ∞ when NaN/Inf sit at different places.
    pub rel_err: Option<f64>,
    pub elements: u64,
    /// C-order index (in the target's shape) of the largest |t − g|, and the values there.
    pub argmax: Option<Vec<u64>>,
    pub at_max: Option<(f64, f64)>,
    /// Elements that are NaN or ±Inf on each side.
    pub nonfinite: (u64, u64),
    /// What msprobe says about the pair beside its numbers (0-d, NaN places, empty).
    pub note: Option<String>,
}

impl TensorMetrics {
    /// The six metrics msprobe's CSV has a column for, in its column order: cosine, Euclidean
    /// distance, max absolute error, max relative error, one- and five-thousandths ratios.
    pub fn msprobe_six(&self) -> [Metric; 6] {
        [
            self.cosine,
            self.euc_dist,
            self.max_abs_err,
            self.max_rel_err,
            self.one_thousandth_ratio,
            self.five_thousandths_ratio,
        ]
    }

    /// What msprobe's tensor mode writes for a row it has no data for (a scalar argument):
    /// `unsupported` everywhere.
    pub fn unsupported(note: &str) -> TensorMetrics {
        TensorMetrics::words(Metric::Unsupported, note, 0)
    }

    fn words(m: Metric, note: &str, elements: u64) -> TensorMetrics {
        TensorMetrics {
            cosine: m,
            euc_dist: m,
            max_abs_err: m,
            max_rel_err: m,
            one_thousandth_ratio: m,
            five_thousandths_ratio: m,
            rmse: None,
            norm_ratio: None,
            rel_err: None,
            elements,
            argmax: None,
            at_max: None,
            nonfinite: (0, 0),
            note: Some(note.to_string()),
        }
    }
}

/// The shape without its 1s (numpy's `squeeze`).
pub fn squeeze(shape: &[u64]) -> Vec<u64> {
    shape.iter().copied().filter(|&d| d != 1).collect()
}

/// Compares the target `t` with the golden `g` element by element (C order). Both arrays must
/// be complete (the pipeline refuses cut files first). Returns the metrics and the statistics of
/// each side (computed here: npy dumps record none).
pub fn compare(t: &NpyArray, g: &NpyArray) -> (TensorMetrics, Summary, Summary) {
    let nt = t.info.elements();
    let ng = g.info.elements();
    if nt == 0 || ng == 0 {
        let m = TensorMetrics::words(Metric::Unsupported, "empty tensor, nothing to compare", 0);
        return (m, Summary::empty(), Summary::empty());
    }
    if squeeze(&t.info.shape) != squeeze(&g.info.shape) {
        let m = TensorMetrics::words(
            Metric::ShapeUnmatched,
            &format!(
                "shapes do not match: {:?} vs {:?}",
                t.info.shape, g.info.shape
            ),
            nt,
        );
        let (st, sg) = (summarize(t), summarize(g));
        return (m, st, sg);
    }
    let f32_math = f32_class(t.elem) && f32_class(g.elem);
    if nt == 1 {
        return scalar(t, g, f32_math);
    }
    let chunks = nt.div_ceil(CHUNK as u64);
    let acc = (0..chunks)
        .into_par_iter()
        .map_init(
            || (vec![0.0f64; CHUNK], vec![0.0f64; CHUNK]),
            |(bt, bg), c| {
                let start = c * CHUNK as u64;
                let len = (nt - start).min(CHUNK as u64) as usize;
                fill(t, start, &mut bt[..len]);
                fill(g, start, &mut bg[..len]);
                let mut a = Acc::new();
                if f32_math {
                    a.run::<true>(&bt[..len], &bg[..len], start);
                } else {
                    a.run::<false>(&bt[..len], &bg[..len], start);
                }
                a
            },
        )
        .reduce(Acc::new, Acc::merge);
    let metrics = acc.finish(nt, &t.info.shape);
    (metrics, acc.t.summary(nt), acc.g.summary(nt))
}

/// Statistics of one array alone (a pair whose shapes differ still shows both sides).
pub fn summarize(a: &NpyArray) -> Summary {
    let n = a.info.elements();
    let chunks = n.div_ceil(CHUNK as u64);
    let s = (0..chunks)
        .into_par_iter()
        .map_init(
            || vec![0.0f64; CHUNK],
            |buf, c| {
                let start = c * CHUNK as u64;
                let len = (n - start).min(CHUNK as u64) as usize;
                fill(a, start, &mut buf[..len]);
                let mut s = SideAcc::new();
                for &x in &buf[..len] {
                    s.add(x);
                }
                s
            },
        )
        .reduce(SideAcc::new, SideAcc::merge);
    s.summary(n)
}

/// Element types numpy holds as f16/f32 (bf16 arrives as f32): relative errors in f32.
fn f32_class(e: Elem) -> bool {
    e.is_float() && e != Elem::F64
}

/// A one-element pair: msprobe's 0-d path.
fn scalar(t: &NpyArray, g: &NpyArray, f32_math: bool) -> (TensorMetrics, Summary, Summary) {
    let x = t.get_c(0).unwrap_or(f64::NAN);
    let y = g.get_c(0).unwrap_or(f64::NAN);
    let (abs, rel) = if f32_math {
        let (a, b) = (x as f32, y as f32);
        let abs = (a - b).abs() as f64;
        (abs, rel_f32(a, b) as f64)
    } else {
        ((x - y).abs(), rel_f64(x, y))
    };
    let num = |v: f64| {
        if v.is_nan() {
            Metric::Nan
        } else {
            Metric::Value(v)
        }
    };
    let mut m = TensorMetrics::words(
        Metric::Unsupported,
        "one element (0-d once squeezed): cosine, EucDist and the ratios do not apply",
        1,
    );
    m.max_abs_err = num(abs);
    m.max_rel_err = num(rel);
    let both_finite = x.is_finite() && y.is_finite();
    m.rmse = both_finite.then_some(abs);
    m.rel_err = Some(match (x.abs().max(y.abs()), both_finite) {
        (_, false) if x.to_bits() == y.to_bits() => 0.0,
        (_, false) => f64::INFINITY,
        (0.0, true) => 0.0,
        (d, true) => (x - y).abs() / d,
    });
    m.norm_ratio = (y != 0.0 && both_finite).then(|| x.abs() / y.abs());
    m.argmax = Some(vec![0; t.info.shape.len()]);
    m.at_max = Some((x, y));
    let one = |v: f64| {
        let mut s = SideAcc::new();
        s.add(v);
        s.summary(1)
    };
    (m, one(x), one(y))
}

#[inline]
fn rel_f32(mut a: f32, mut b: f32) -> f32 {
    if b == 0.0 {
        a += f32::EPSILON;
        b += f32::EPSILON;
    }
    ((a - b) / b).abs()
}

#[inline]
fn rel_f64(mut a: f64, mut b: f64) -> f64 {
    if b == 0.0 {
        a += f64::EPSILON;
        b += f64::EPSILON;
    }
    ((a - b) / b).abs()
}

/// Decodes `out.len()` elements from C-order index `start` into f64.
pub(super) fn fill(a: &NpyArray, start: u64, out: &mut [f64]) {
    if a.info.fortran_order && a.info.shape.len() >= 2 {
        for (k, o) in out.iter_mut().enumerate() {
            *o = a.get_c(start + k as u64).unwrap_or(f64::NAN);
        }
        return;
    }
    let s = a.elem.size();
    let from = start as usize * s;
    let bytes = &a.data()[from..from + out.len() * s];
    macro_rules! run {
        ($n:literal, $f:expr) => {
            for (o, b) in out.iter_mut().zip(bytes.chunks_exact($n)) {
                let b: [u8; $n] = b.try_into().unwrap_or([0; $n]);
                *o = $f(b);
            }
        };
    }
    match (a.elem, a.big_endian) {
        (Elem::F32, false) => run!(4, |b| f32::from_le_bytes(b) as f64),
        (Elem::F64, false) => run!(8, f64::from_le_bytes),
        (Elem::F16, false) => run!(2, |b| half::f16::from_le_bytes(b).to_f64()),
        (Elem::BF16, false) => run!(2, |b| half::bf16::from_le_bytes(b).to_f64()),
        (e, big) => {
            for (o, b) in out.iter_mut().zip(bytes.chunks_exact(s)) {
                *o = decode(e, big, b);
            }
        }
    }
}

/// One side's running statistics: finite values, and which non-finite kinds were seen.
#[derive(Clone, Copy)]
struct SideAcc {
    nan: bool,
    pos_inf: bool,
    neg_inf: bool,
    nonfinite: u64,
    max: f64,
    min: f64,
    sum: f64,
    sumsq: f64,
}

impl SideAcc {
    fn new() -> Self {
        SideAcc {
            nan: false,
            pos_inf: false,
            neg_inf: false,
            nonfinite: 0,
            max: f64::NEG_INFINITY,
            min: f64::INFINITY,
            sum: 0.0,
            sumsq: 0.0,
        }
    }

    #[inline]
    fn add(&mut self, x: f64) {
        if x.is_finite() {
            self.max = self.max.max(x);
            self.min = self.min.min(x);
            self.sum += x;
            self.sumsq += x * x;
        } else {
            self.odd(x);
        }
    }

    #[inline]
    fn odd(&mut self, x: f64) {
        self.nonfinite += 1;
        if x.is_nan() {
            self.nan = true;
        } else if x > 0.0 {
            self.pos_inf = true;
        } else {
            self.neg_inf = true;
        }
    }

    fn merge(mut self, o: SideAcc) -> SideAcc {
        self.nan |= o.nan;
        self.pos_inf |= o.pos_inf;
        self.neg_inf |= o.neg_inf;
        self.nonfinite += o.nonfinite;
        self.max = self.max.max(o.max);
        self.min = self.min.min(o.min);
        self.sum += o.sum;
        self.sumsq += o.sumsq;
        self
    }

    /// As torch reports them: NaN anywhere makes every statistic NaN; ±Inf wins max/min.
    fn summary(&self, n: u64) -> Summary {
        if self.nan || (self.pos_inf && self.neg_inf) {
            let nan = Some(f64::NAN);
            let inf = |b: bool, v: f64, f: f64| if b { Some(v) } else { Some(f) };
            return Summary {
                max: if self.nan {
                    nan
                } else {
                    inf(true, f64::INFINITY, self.max)
                },
                min: if self.nan {
                    nan
                } else {
                    inf(true, f64::NEG_INFINITY, self.min)
                },
                mean: nan,
                norm: if self.nan { nan } else { Some(f64::INFINITY) },
            };
        }
        let finite = n - self.nonfinite;
        let fin = |v: f64| (finite > 0).then_some(v);
        Summary {
            max: if self.pos_inf {
                Some(f64::INFINITY)
            } else {
                fin(self.max)
            },
            min: if self.neg_inf {
                Some(f64::NEG_INFINITY)
            } else {
                fin(self.min)
            },
            mean: if self.pos_inf {
                Some(f64::INFINITY)
            } else if self.neg_inf {
                Some(f64::NEG_INFINITY)
            } else {
                (n > 0).then(|| self.sum / n as f64)
            },
            norm: if self.pos_inf || self.neg_inf {
                Some(f64::INFINITY)
            } else {
                Some(self.sumsq.sqrt())
            },
        }
    }
}

/// Running sums of one chunk (merged across chunks).
#[derive(Clone, Copy)]
struct Acc {
    dot: f64,
    tt: f64,
    gg: f64,
    dd: f64,
    max_abs: f64,
    /// Smallest index reaching `max_abs` (numpy's argmax), `u64::MAX` before any.
    argmax: u64,
    at_max: (f64, f64),
    max_rel: f64,
    below_1: u64,
    below_5: u64,
    mismatch: bool,
    t: SideAcc,
    g: SideAcc,
}

impl Acc {
    fn new() -> Self {
        Acc {
            dot: 0.0,
            tt: 0.0,
            gg: 0.0,
            dd: 0.0,
            max_abs: f64::NEG_INFINITY,
            argmax: u64::MAX,
            at_max: (0.0, 0.0),
            max_rel: f64::NEG_INFINITY,
            below_1: 0,
            below_5: 0,
            mismatch: false,
            t: SideAcc::new(),
            g: SideAcc::new(),
        }
    }

    /// `F32`: relative errors in f32 arithmetic, as numpy does for float32 arrays.
    fn run<const F32: bool>(&mut self, tv: &[f64], gv: &[f64], start: u64) {
        for (k, (&x0, &y0)) in tv.iter().zip(gv).enumerate() {
            let (mut x, mut y) = (x0, y0);
            self.t.add(x);
            self.g.add(y);
            if !(x.is_finite() && y.is_finite()) {
                if x.is_nan() != y.is_nan() || x.is_infinite() != y.is_infinite() {
                    self.mismatch = true;
                }
                if !x.is_finite() {
                    x = 0.0;
                }
                if !y.is_finite() {
                    y = 0.0;
                }
            }
            self.dot += x * y;
            self.tt += x * x;
            self.gg += y * y;
            let d = x - y;
            self.dd += d * d;
            let ad = d.abs();
            if ad > self.max_abs {
                self.max_abs = ad;
                self.argmax = start + k as u64;
                self.at_max = (x0, y0);
            }
            let (rel, b1, b5) = if F32 {
                let r = rel_f32(x as f32, y as f32);
                (r as f64, r < THOUSANDTH as f32, r < FIVE_THOUSANDTHS as f32)
            } else {
                let r = rel_f64(x, y);
                (r, r < THOUSANDTH, r < FIVE_THOUSANDTHS)
            };
            if rel > self.max_rel || rel.is_nan() {
                self.max_rel = rel;
            }
            self.below_1 += b1 as u64;
            self.below_5 += b5 as u64;
        }
    }

    fn merge(mut self, o: Acc) -> Acc {
        self.dot += o.dot;
        self.tt += o.tt;
        self.gg += o.gg;
        self.dd += o.dd;
        if o.max_abs > self.max_abs || (o.max_abs == self.max_abs && o.argmax < self.argmax) {
            self.max_abs = o.max_abs;
            self.argmax = o.argmax;
            self.at_max = o.at_max;
        }
        if o.max_rel > self.max_rel || o.max_rel.is_nan() {
            self.max_rel = o.max_rel;
        }
        self.below_1 += o.below_1;
        self.below_5 += o.below_5;
        self.mismatch |= o.mismatch;
        self.t = self.t.merge(o.t);
        self.g = self.g.merge(o.g);
        self
    }

    fn finish(&self, n: u64, shape: &[u64]) -> TensorMetrics {
        let nonfinite = (self.t.nonfinite, self.g.nonfinite);
        let (nt, ng) = (self.tt.sqrt(), self.gg.sqrt());
        let where_max = (self.argmax != u64::MAX).then(|| unravel(self.argmax, shape));
        if self.mismatch {
            let mut m = TensorMetrics::words(
                Metric::NotApplicable,
                &format!(
                    "NaN/Inf at different places: {} in the target, {} in the golden",
                    nonfinite.0, nonfinite.1
                ),
                n,
            );
            m.rel_err = Some(f64::INFINITY);
            m.nonfinite = nonfinite;
            return m;
        }
        let eps = f64::EPSILON;
        let cosine = if nt <= eps && ng <= eps {
            Metric::Value(1.0)
        } else if nt <= eps || ng <= eps {
            Metric::Nan
        } else {
            let c = self.dot / (nt * ng);
            if c.is_nan() {
                Metric::Nan
            } else {
                Metric::Value(c)
            }
        };
        let nan_or = |v: f64| {
            if v.is_nan() {
                Metric::Nan
            } else {
                Metric::Value(v)
            }
        };
        let euc = self.dd.sqrt();
        let big = nt.max(ng);
        TensorMetrics {
            cosine,
            euc_dist: Metric::Value(euc),
            max_abs_err: nan_or(self.max_abs),
            max_rel_err: nan_or(self.max_rel),
            one_thousandth_ratio: Metric::Value(self.below_1 as f64 / n as f64),
            five_thousandths_ratio: Metric::Value(self.below_5 as f64 / n as f64),
            rmse: Some((self.dd / n as f64).sqrt()),
            norm_ratio: (ng > 0.0).then(|| nt / ng),
            rel_err: Some(if big > 0.0 { euc / big } else { 0.0 }),
            elements: n,
            argmax: where_max,
            at_max: (self.argmax != u64::MAX).then_some(self.at_max),
            nonfinite,
            note: (nonfinite != (0, 0)).then(|| {
                format!(
                    "NaN/Inf at the same places on both sides ({}): counted as 0",
                    nonfinite.0
                )
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tensor::TensorInfo;

    fn f32s(v: &[f32], shape: &[u64]) -> NpyArray {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let info = TensorInfo {
            dtype: "<f4".into(),
            shape: shape.to_vec(),
            fortran_order: false,
        };
        NpyArray::new(Box::new(bytes), 0, info, Elem::F32, false)
    }

    #[test]
    fn equal_tensors_pass_everything() {
        let a = f32s(&[1.0, -2.0, 0.0, 4.0], &[2, 2]);
        let (m, st, _) = compare(&a, &a);
        assert_eq!(m.cosine, Metric::Value(1.0));
        assert_eq!(m.euc_dist, Metric::Value(0.0));
        assert_eq!(m.max_rel_err, Metric::Value(0.0));
        assert_eq!(m.one_thousandth_ratio, Metric::Value(1.0));
        assert_eq!(m.rel_err, Some(0.0));
        assert_eq!((st.max, st.min), (Some(4.0), Some(-2.0)));
    }

    #[test]
    fn scale_is_seen_by_the_norm_ratio_not_by_cosine() {
        let g = f32s(&[1.0, 2.0, 3.0], &[3]);
        let t = f32s(&[1.3, 2.6, 3.9], &[3]);
        let (m, ..) = compare(&t, &g);
        assert!((m.cosine.value().unwrap() - 1.0).abs() < 1e-7);
        assert!((m.norm_ratio.unwrap() - 1.3).abs() < 1e-6);
        // Every element 30 % off: none below a thousandth.
        assert_eq!(m.one_thousandth_ratio, Metric::Value(0.0));
    }

    #[test]
    fn zeros_on_the_golden_side_get_epsilon_as_msprobe_does() {
        let g = f32s(&[0.0, 1.0], &[2]);
        let t = f32s(&[0.0, 1.0], &[2]);
        let (m, ..) = compare(&t, &g);
        assert_eq!(m.max_rel_err, Metric::Value(0.0));
        let t = f32s(&[1e-7, 1.0], &[2]);
        let (m, ..) = compare(&t, &g);
        // (1e-7 + ε − ε) / ε in f32.
        let want = rel_f32(1e-7, 0.0) as f64;
        assert_eq!(m.max_rel_err, Metric::Value(want));
        assert!(want > 0.8 && want < 0.9, "{want}");
    }

    #[test]
    fn nan_places_decide_between_zeroing_and_not_applicable() {
        let g = f32s(&[f32::NAN, 1.0, 2.0], &[3]);
        let same = f32s(&[f32::NAN, 1.0, 2.0], &[3]);
        let (m, ..) = compare(&same, &g);
        assert!((m.cosine.value().unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(m.euc_dist, Metric::Value(0.0));
        let moved = f32s(&[1.0, f32::NAN, 2.0], &[3]);
        let (m, ..) = compare(&moved, &g);
        assert_eq!(m.cosine, Metric::NotApplicable);
        assert_eq!(m.rel_err, Some(f64::INFINITY));
    }

    #[test]
    fn one_element_and_shapes() {
        let a = f32s(&[2.0], &[1, 1]);
        let b = f32s(&[1.0], &[1]);
        let (m, ..) = compare(&a, &b);
        assert_eq!(m.cosine, Metric::Unsupported);
        assert_eq!(m.max_abs_err, Metric::Value(1.0));
        assert_eq!(m.max_rel_err, Metric::Value(1.0));
        let c = f32s(&[1.0, 2.0, 3.0, 4.0], &[4]);
        let d = f32s(&[1.0, 2.0, 3.0, 4.0], &[1, 2, 2]);
        assert_eq!(compare(&c, &d).0.cosine, Metric::ShapeUnmatched);
        let e = f32s(&[1.0, 2.0, 3.0, 4.0], &[1, 4]);
        assert_eq!(compare(&c, &e).0.cosine, Metric::Value(1.0));
    }

    #[test]
    fn all_zero_target_gives_nan_cosine() {
        let g = f32s(&[1.0, 2.0], &[2]);
        let t = f32s(&[0.0, 0.0], &[2]);
        assert_eq!(compare(&t, &g).0.cosine, Metric::Nan);
        assert_eq!(compare(&t, &t).0.cosine, Metric::Value(1.0));
    }
}
