//! fxray's verdict: the first call, in the target's call order, whose outputs part from the
//! golden while its inputs do not; and the error each call adds.
//!
//! Each tensor's error (`Pair::error`: ‖t − g‖ / max(‖t‖, ‖g‖), or the statistics error) is
//! measured against a tolerance of its dtype, the wider of the two sides' (a bf16 target
//! against an fp32 golden is held to bf16's tolerance): a dtype difference is information, not
//! an error by itself. Walking the calls in order:
//!
//! - a call whose inputs are within tolerance and an output is not is where the error starts;
//! - a call whose *inputs* already differ, with nothing flagged before it, got the difference
//!   from something the other side lacks: the nearest op before it that only one side runs (the
//!   extra `mul` of a scale error, unpaired) is named; otherwise the call itself, with its input
//!   as the reason (a graph input, a parameter, or an op neither dump holds).
//!
//! The added error of an output is its error minus the worst error among its call's inputs.

use super::{Comparison, DtypeClass, FirstDivergence, Metric, Pair, Role, Side, Unpaired};
use std::collections::BTreeMap;

/// Relative error a tensor may carry from rounding alone, per dtype class. bf16 keeps 8
/// significant bits (unit roundoff 2^-9 ≈ 0.002): a few roundings through an op stay near 1 %;
/// fp16 keeps 11; fp32 results of one op on two machines differ by ~1e-6 at most.
pub fn tolerance(class: DtypeClass) -> f64 {
    match class {
        DtypeClass::F64 => 1e-9,
        DtypeClass::F32 => 1e-4,
        DtypeClass::F16 => 1e-2,
        DtypeClass::Bf16 => 5e-2,
        DtypeClass::Exact => 0.0,
        DtypeClass::Other => 1e-4,
    }
}

/// The tolerance of a pair: the wider of its two dtypes'.
pub fn pair_tolerance(p: &Pair) -> f64 {
    tolerance(DtypeClass::of(&p.dtype)).max(tolerance(DtypeClass::of(&p.golden_dtype)))
}

/// How far over its tolerance a pair's error is (> 1: beyond).
fn over(p: &Pair) -> Option<f64> {
    let e = p.error?;
    let tol = pair_tolerance(p);
    Some(if tol > 0.0 {
        e / tol
    } else if e > 0.0 {
        f64::INFINITY
    } else {
        0.0
    })
}

struct CallView {
    pairs: Vec<usize>,
    golden_order: usize,
}

/// Fills `added_error` of every output pair and `first_divergence`.
pub fn judge(c: &mut Comparison) {
    let mut calls: BTreeMap<usize, CallView> = BTreeMap::new();
    for (i, p) in c.pairs.iter().enumerate() {
        calls
            .entry(p.order)
            .or_insert(CallView {
                pairs: Vec::new(),
                golden_order: p.golden_order,
            })
            .pairs
            .push(i);
    }
    // Added error of each output.
    for view in calls.values() {
        let e_in = worst(&c.pairs, &view.pairs, Role::Input, |p| p.error).map(|x| x.1);
        for &i in &view.pairs {
            let p = &mut c.pairs[i];
            if p.role == Role::Output {
                p.added_error = p.error.map(|e| e - e_in.unwrap_or(0.0).min(e));
            }
        }
    }
    c.first_divergence = first(c, &calls);
}

fn worst(
    pairs: &[Pair],
    idx: &[usize],
    role: Role,
    f: impl Fn(&Pair) -> Option<f64>,
) -> Option<(usize, f64)> {
    idx.iter()
        .filter(|&&i| pairs[i].role == role)
        .filter_map(|&i| f(&pairs[i]).map(|v| (i, v)))
        .fold(None, |best: Option<(usize, f64)>, (i, v)| match best {
            Some((_, b)) if b >= v => best,
            _ => Some((i, v)),
        })
}

fn first(c: &Comparison, calls: &BTreeMap<usize, CallView>) -> Option<FirstDivergence> {
    // Unpaired calls by order, each with its first tensor (an output if it has one).
    let extra_t = unpaired_calls(&c.unpaired_target);
    let extra_g = unpaired_calls(&c.unpaired_golden);
    for (&order, view) in calls {
        let w_in = worst(&c.pairs, &view.pairs, Role::Input, over);
        let w_out = worst(&c.pairs, &view.pairs, Role::Output, over);
        if let Some((i, x)) = w_in
            && x > 1.0
        {
            let p = &c.pairs[i];
            // The nearest op before it that one side alone runs (a parallel branch may have
            // run clean calls in between).
            let before = |m: &BTreeMap<usize, &Unpaired>, to: usize| {
                m.range(..to).next_back().map(|(_, u)| (*u).clone())
            };
            if let Some(u) = before(&extra_t, order) {
                return Some(extra_op(Side::Target, &u, p));
            }
            if let Some(u) = before(&extra_g, view.golden_order) {
                return Some(extra_op(Side::Golden, &u, p));
            }
            return Some(FirstDivergence {
                key: p.key.clone(),
                node: p.node.clone(),
                call: p.call.clone(),
                why: format!(
                    "{} of {} already differs from the golden ({}), and no compared call before it \
                     produced the difference: a graph input, a parameter, or an op neither dump holds",
                    p.slot,
                    p.call,
                    describe(p)
                ),
                pair: Some(i),
            });
        }
        if let Some((i, x)) = w_out
            && x > 1.0
        {
            let p = &c.pairs[i];
            let e_in = worst(&c.pairs, &view.pairs, Role::Input, |p| p.error);
            let inputs = match e_in {
                Some((_, e)) => format!("its inputs are within tolerance (worst {})", num(e)),
                None => "it has no compared input".to_string(),
            };
            let mut why = format!(
                "{} of {} parts from the golden ({}, tolerance {} for {}) while {inputs}: this call \
                 introduces the error",
                p.slot,
                p.call,
                describe(p),
                num(pair_tolerance(p)),
                dtypes(p)
            );
            if let Some(k) = cancellation(c, view, p) {
                why.push_str(&format!(
                    "; its output is {k:.0}× smaller than its inputs: a cancellation, where the \
                     inputs' rounding dominates"
                ));
            }
            return Some(FirstDivergence {
                key: p.key.clone(),
                node: p.node.clone(),
                call: p.call.clone(),
                why,
                pair: Some(i),
            });
        }
    }
    None
}

fn unpaired_calls(list: &[Unpaired]) -> BTreeMap<usize, &Unpaired> {
    let mut m: BTreeMap<usize, &Unpaired> = BTreeMap::new();
    for u in list {
        let e = m.entry(u.order).or_insert(u);
        if e.role == Role::Input && u.role == Role::Output {
            *e = u;
        }
    }
    m
}

fn extra_op(side: Side, u: &Unpaired, next: &Pair) -> FirstDivergence {
    let who = match side {
        Side::Target => "only the target runs",
        Side::Golden => "only the golden runs",
    };
    let scale = next
        .norm_ratio
        .filter(|r| (r - 1.0).abs() > 0.01)
        .filter(|_| cosine(next).is_some_and(|c| c > 0.9999) || next.metrics.is_none())
        .map(|r| format!(": it scales the activation by {r:.3}"))
        .unwrap_or_default();
    FirstDivergence {
        key: u.key.clone(),
        node: u.node.clone(),
        call: u.call.clone(),
        why: format!(
            "{who} {}; after it, {} of {} differs from the golden ({}){scale}",
            u.call,
            next.slot,
            next.call,
            describe(next)
        ),
        pair: None,
    }
}

fn cosine(p: &Pair) -> Option<f64> {
    p.metrics.as_ref()?.cosine.value()
}

/// `rel. error 0.31, cosine 0.999871, norm ratio 1.300`.
fn describe(p: &Pair) -> String {
    let mut parts = Vec::new();
    match p.error {
        Some(e) if e.is_infinite() => {
            let nf = p.metrics.as_ref().map_or((0, 0), |m| m.nonfinite);
            parts.push(format!(
                "NaN/Inf at different places: {} in the target, {} in the golden",
                nf.0, nf.1
            ));
        }
        Some(e) => parts.push(format!("rel. error {}", num(e))),
        None => {}
    }
    if let Some(m) = &p.metrics {
        match m.cosine {
            Metric::Value(c) => parts.push(format!("cosine {c:.6}")),
            Metric::Nan => parts.push("cosine NaN (one side all zero)".into()),
            _ => {}
        }
    }
    if let Some(r) = p.norm_ratio {
        parts.push(format!("norm ratio {r:.3}"));
    }
    parts.join(", ")
}

fn dtypes(p: &Pair) -> String {
    let (a, b) = (DtypeClass::of(&p.dtype), DtypeClass::of(&p.golden_dtype));
    if a == b {
        a.short().to_string()
    } else {
        format!("target {} vs golden {}", a.short(), b.short())
    }
}

/// How many times smaller the output's norm is than that of an input of the same size, when
/// ≥ 10× (an elementwise op whose result is far smaller than its operands: a cancellation).
fn cancellation(c: &Comparison, view: &CallView, out: &Pair) -> Option<f64> {
    let norm = |p: &Pair| p.golden_summary.and_then(|s| s.norm);
    let size = |p: &Pair| p.golden_shape.iter().product::<u64>();
    let out_norm = norm(out)?;
    let in_norm = view
        .pairs
        .iter()
        .map(|&i| &c.pairs[i])
        .filter(|p| p.role == Role::Input && size(p) == size(out))
        .filter_map(norm)
        .fold(0.0f64, f64::max);
    (out_norm > 0.0 && in_norm / out_norm >= 10.0).then(|| in_norm / out_norm)
}

/// A figure for a sentence: 3 significant digits.
fn num(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        format!("{v}")
    } else if (1e-3..1e4).contains(&v.abs()) {
        let decimals = (2 - v.abs().log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{v:.2e}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::accuracy::{Level, PairedBy};

    fn pair(call: &str, order: usize, role: Role, err: f64, dtype: &str) -> Pair {
        let slot = if role == Role::Input {
            "input.0"
        } else {
            "output.0"
        };
        Pair {
            key: format!("{call}.{slot}"),
            golden_key: format!("{call}.{slot}"),
            call: call.into(),
            golden_call: call.into(),
            node: Some(call.into()),
            slot: slot.into(),
            role,
            dtype: dtype.into(),
            golden_dtype: "torch.float32".into(),
            shape: vec![4],
            golden_shape: vec![4],
            requires_grad: None,
            golden_requires_grad: None,
            paired_by: PairedBy::Key,
            files: None,
            order,
            golden_order: order,
            metrics: None,
            target_summary: None,
            golden_summary: None,
            stats: None,
            norm_ratio: Some(1.0 + err),
            error: Some(err),
            added_error: None,
            result: Level::Pass,
            reason: String::new(),
            messages: Vec::new(),
        }
    }

    fn chain(errs: &[(f64, f64)], dtype: &str) -> Comparison {
        let mut c = Comparison::default();
        for (k, &(i, o)) in errs.iter().enumerate() {
            let call = format!("op{k}");
            c.pairs.push(pair(&call, k * 2, Role::Input, i, dtype));
            c.pairs.push(pair(&call, k * 2, Role::Output, o, dtype));
        }
        c
    }

    #[test]
    fn the_first_call_whose_output_leaves_tolerance_with_clean_inputs() {
        let mut c = chain(&[(0.0, 0.0), (0.0, 3e-4), (3e-4, 3e-4)], "torch.float32");
        judge(&mut c);
        let f = c.first_divergence.expect("divergence");
        assert_eq!(f.call, "op1");
        assert!(f.why.contains("introduces"), "{}", f.why);
        assert_eq!(c.pairs[3].added_error, Some(3e-4));
        assert_eq!(c.pairs[5].added_error, Some(0.0));
    }

    #[test]
    fn bf16_rounding_alone_is_no_divergence() {
        let mut c = chain(&[(2e-3, 4e-3), (4e-3, 6e-3)], "torch.bfloat16");
        judge(&mut c);
        assert!(c.first_divergence.is_none());
        let mut c = chain(&[(2e-3, 4e-3), (4e-3, 6e-3)], "torch.float32");
        judge(&mut c);
        assert_eq!(c.first_divergence.expect("fp32 holds tighter").call, "op0");
    }

    #[test]
    fn inputs_that_already_differ_name_the_op_only_one_side_runs() {
        let mut c = chain(&[(0.0, 0.0), (0.3, 0.3)], "torch.float32");
        c.unpaired_golden.push(Unpaired {
            key: "golden_only.output.0".into(),
            call: "golden_only".into(),
            node: None,
            slot: "output.0".into(),
            role: Role::Output,
            dtype: "torch.float32".into(),
            order: 1,
        });
        judge(&mut c);
        let f = c.first_divergence.expect("divergence");
        assert_eq!(f.call, "golden_only");
        assert!(
            f.why.starts_with("only the golden runs golden_only"),
            "{}",
            f.why
        );
        // Without an unpaired op, the call whose input differs is named, its input the reason.
        let mut c = chain(&[(0.0, 0.0), (0.3, 0.3)], "torch.float32");
        judge(&mut c);
        let f = c.first_divergence.expect("divergence");
        assert_eq!(f.call, "op1");
        assert!(f.why.contains("already differs"), "{}", f.why);
    }

    #[test]
    fn integers_must_match_exactly() {
        let mut c = chain(&[(0.0, 1e-9)], "torch.int64");
        c.pairs
            .iter_mut()
            .for_each(|p| p.golden_dtype = "torch.int64".into());
        judge(&mut c);
        assert!(c.first_divergence.is_some());
    }

    #[test]
    fn figures_keep_three_digits() {
        assert_eq!(num(10.0), "10");
        assert_eq!(num(0.31234), "0.312");
        assert_eq!(num(1.5), "1.5");
        assert_eq!(num(2.5e-6), "2.50e-6");
    }
}
