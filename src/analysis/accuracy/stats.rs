//! Statistics mode: the two sides' max, min, mean and L2 norm side by side.
//!
//! msprobe's diffs (`acc_compare.py`, `CalcStatsDiff`), for each statistic: equal as text →
//! `0` and `0`; two numbers → `target − golden` and `|diff / golden| · 100` as a percentage
//! (`inf` where the golden is 0); a NaN on either side → `Nan`; ±Inf against a number → the
//! sign of the difference as `inf`/`-inf`; a side without the value → `N/A`.
//!
//! fxray's own error for the verdict is the worst of the four, each relative to the tensor's
//! scale: |Δnorm| / max(‖t‖, ‖g‖), and |Δmax|, |Δmin|, |Δmean| over the largest magnitude of
//! either side's max and min (a mean near 0 does not blow it up).

use serde::Serialize;

/// The four statistics a dump records for a tensor (msprobe's `Max`/`Min`/`Mean`/`Norm`).
/// `None` where the dump wrote `null`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub max: Option<f64>,
    pub min: Option<f64>,
    pub mean: Option<f64>,
    pub norm: Option<f64>,
}

impl Summary {
    pub fn empty() -> Summary {
        Summary {
            max: None,
            min: None,
            mean: None,
            norm: None,
        }
    }

    fn get(&self, k: usize) -> Option<f64> {
        [self.max, self.min, self.mean, self.norm][k]
    }

    /// A NaN or ±Inf in its max or min (msprobe's InfNan check).
    pub fn max_min_not_finite(&self) -> bool {
        [self.max, self.min]
            .iter()
            .any(|v| v.is_some_and(|v| !v.is_finite()))
    }
}

/// One cell of msprobe's statistics diff: a number or the word it writes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StatVal {
    Num(f64),
    Word(&'static str),
}

impl StatVal {
    pub fn num(self) -> Option<f64> {
        match self {
            StatVal::Num(v) => Some(v),
            StatVal::Word("inf") => Some(f64::INFINITY),
            StatVal::Word("-inf") => Some(f64::NEG_INFINITY),
            StatVal::Word(_) => None,
        }
    }

    /// msprobe's text (`0.5`, `Nan`, `N/A`); relative errors get their `%` from the caller.
    pub fn parse(s: &str) -> StatVal {
        let t = s.trim().trim_end_matches('%');
        match t {
            "inf" => StatVal::Word("inf"),
            "-inf" => StatVal::Word("-inf"),
            "Nan" | "nan" | "NaN" => StatVal::Word("Nan"),
            "N/A" => StatVal::Word("N/A"),
            "Diff" => StatVal::Word("Diff"),
            _ => t.parse().map(StatVal::Num).unwrap_or(StatVal::Word("N/A")),
        }
    }
}

impl Serialize for StatVal {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.num().filter(|v| v.is_finite()) {
            Some(v) => s.serialize_f64(v),
            None => s.serialize_none(),
        }
    }
}

/// A statistic's difference and relative error (in percent, as msprobe writes it).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StatCell {
    pub diff: StatVal,
    pub rel_pct: StatVal,
}

/// msprobe's `Max diff` … `NormRelativeErr` columns.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StatsDiff {
    pub max: StatCell,
    pub min: StatCell,
    pub mean: StatCell,
    pub norm: StatCell,
}

impl StatsDiff {
    pub fn cells(&self) -> [StatCell; 4] {
        [self.max, self.min, self.mean, self.norm]
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Num,
    Nan,
    Inf,
    NegInf,
    Na,
}

fn kind(v: Option<f64>) -> Kind {
    match v {
        None => Kind::Na,
        Some(x) if x.is_nan() => Kind::Nan,
        Some(x) if x == f64::INFINITY => Kind::Inf,
        Some(x) if x == f64::NEG_INFINITY => Kind::NegInf,
        Some(_) => Kind::Num,
    }
}

fn cell(t: Option<f64>, g: Option<f64>) -> StatCell {
    let word = |w: &'static str| StatCell {
        diff: StatVal::Word(w),
        rel_pct: StatVal::Word(w),
    };
    match (t, g) {
        // Equal as msprobe prints them: the same float, NaN and NaN, `None` and `None`.
        (None, None) => StatCell {
            diff: StatVal::Num(0.0),
            rel_pct: StatVal::Num(0.0),
        },
        (Some(a), Some(b)) if a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()) => {
            StatCell {
                diff: StatVal::Num(0.0),
                rel_pct: StatVal::Num(0.0),
            }
        }
        _ => match (kind(t), kind(g)) {
            (Kind::Num, Kind::Num) => {
                let (a, b) = (t.unwrap_or(0.0), g.unwrap_or(0.0));
                let diff = a - b;
                StatCell {
                    diff: StatVal::Num(diff),
                    rel_pct: if b == 0.0 {
                        StatVal::Word("inf")
                    } else {
                        StatVal::Num((diff / b * 100.0).abs())
                    },
                }
            }
            // msprobe reads a `null` as the text `None`, which differs from any number.
            (Kind::Na, _) | (_, Kind::Na) => word("Diff"),
            (Kind::Nan, _) | (_, Kind::Nan) => word("Nan"),
            (Kind::Inf, _) | (Kind::Num, Kind::NegInf) => word("inf"),
            (Kind::NegInf, _) | (Kind::Num, Kind::Inf) => word("-inf"),
        },
    }
}

/// msprobe's statistics diff of the target against the golden.
pub fn diff(t: &Summary, g: &Summary) -> StatsDiff {
    let c = |k: usize| cell(t.get(k), g.get(k));
    StatsDiff {
        max: c(0),
        min: c(1),
        mean: c(2),
        norm: c(3),
    }
}

/// ‖t‖ / ‖g‖ from the recorded norms.
pub fn norm_ratio(t: &Summary, g: &Summary) -> Option<f64> {
    match (t.norm, g.norm) {
        (Some(a), Some(b)) if b > 0.0 && a.is_finite() && b.is_finite() => Some(a / b),
        _ => None,
    }
}

/// fxray's statistics error (module doc): 0 for equal summaries, ∞ where one side has a
/// value the other lacks or a non-finite one the other does not share.
pub fn error(t: &Summary, g: &Summary) -> f64 {
    let mut worst = 0.0f64;
    let scale = [t.max, t.min, g.max, g.min]
        .iter()
        .flatten()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    for k in 0..4 {
        let (a, b) = (t.get(k), g.get(k));
        let e = match (a, b) {
            (None, None) => 0.0,
            (Some(a), Some(b)) if a.to_bits() == b.to_bits() => 0.0,
            (Some(a), Some(b)) if a.is_finite() && b.is_finite() => {
                let d = (a - b).abs();
                let s = if k == 3 { a.abs().max(b.abs()) } else { scale };
                if s > 0.0 { d / s } else { 0.0 }
            }
            _ => f64::INFINITY,
        };
        worst = worst.max(e);
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(max: f64, min: f64, mean: f64, norm: f64) -> Summary {
        Summary {
            max: Some(max),
            min: Some(min),
            mean: Some(mean),
            norm: Some(norm),
        }
    }

    #[test]
    fn diffs_as_msprobe_writes_them() {
        let d = diff(&s(2.0, -1.0, 0.5, 13.0), &s(1.0, -1.0, 0.0, 10.0));
        assert_eq!(d.max.diff, StatVal::Num(1.0));
        assert_eq!(d.max.rel_pct, StatVal::Num(100.0));
        assert_eq!(d.min.diff, StatVal::Num(0.0));
        assert_eq!(d.mean.rel_pct, StatVal::Word("inf"));
        assert!((d.norm.rel_pct.num().unwrap() - 30.0).abs() < 1e-9);
        let nan = Summary {
            max: Some(f64::NAN),
            ..s(1.0, 0.0, 0.0, 1.0)
        };
        assert_eq!(
            diff(&nan, &s(1.0, 0.0, 0.0, 1.0)).max.diff,
            StatVal::Word("Nan")
        );
        let inf = Summary {
            max: Some(f64::INFINITY),
            ..s(1.0, 0.0, 0.0, 1.0)
        };
        assert_eq!(
            diff(&inf, &s(1.0, 0.0, 0.0, 1.0)).max.diff,
            StatVal::Word("inf")
        );
        assert_eq!(
            diff(&s(1.0, 0.0, 0.0, 1.0), &inf).max.diff,
            StatVal::Word("-inf")
        );
    }

    #[test]
    fn fxray_error_is_relative_to_the_tensor_scale() {
        let g = s(2.0, -2.0, 0.0, 10.0);
        assert_eq!(error(&g, &g), 0.0);
        let t = s(2.0, -2.0, 0.02, 13.0);
        assert!((error(&t, &g) - 3.0 / 13.0).abs() < 1e-12);
        assert!((norm_ratio(&t, &g).unwrap() - 1.3).abs() < 1e-12);
        let t = s(2.0, -2.0, 0.02, 10.0);
        assert!((error(&t, &g) - 0.01).abs() < 1e-12);
    }
}
