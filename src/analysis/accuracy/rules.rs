//! msprobe's Result column (mindstudio-probe 26.2, `core/compare/indicator_analysis`): each
//! row starts as `pass` and each checker can raise it, per API/module call. Rows are a call's
//! tensors; inputs are every row whose name has no `.output.` (parameters and keyword arguments
//! included).
//!
//! Tensor mode: InfNan, OneThousandth, RequiresGrad, Parameters, DType, Shape (errors), Cosine
//! (warning). Statistics mode: InfNan, RelativeErr, RequiresGrad, Parameters, DType, Shape
//! (errors), RelativeWarn (warning).
//!
//! - **InfNan** (every row): the golden's max and min are finite, the target's are not.
//! - **OneThousandth**: the smallest input one-thousandth ratio > 0.9 and the smallest output
//!   one < 0.1 → the first output row.
//! - **Cosine**: the smallest input cosine > 0.9 and it exceeds the smallest output cosine by
//!   more than 0.1 → the first output row (a warning).
//! - **RelativeErr**: the largest input NormRelativeErr < 10 % and an output's > 50 % → that
//!   output row.
//! - **RelativeWarn**: the largest output NormRelativeErr is more than 10× the largest input one
//!   (or > 10 % when the inputs have none) → the first output row (a warning).
//! - **RequiresGrad** (every row): both sides dumped `requires_grad` and it differs.
//! - **Parameters** (input rows): a scalar argument (`<class 'int'>`, shape `[]`) whose value
//!   differs.
//! - **DType** / **Shape** (every row): the two sides' dtype / shape differ as written.
//!
//! Calls of `to`, `empty*`, `numpy`, `__setitem__`, … are not judged; for collective calls
//! (`all_to_all_single`, …) only the outputs are.

use super::stats::StatVal;
use super::{Level, Mode, Pair, Role};
use crate::model::tensor::{fx_dtype_of_torch, short_dtype};

const ALL_IGNORE: &[&str] = &[
    "empty",
    "empty_like",
    "numpy",
    "to",
    "__setitem__",
    "empty_with_format",
    "new_empty_strided",
    "new_empty",
    "empty_strided",
];
const INPUT_IGNORE: &[&str] = &[
    "_reduce_scatter_base",
    "_all_gather_base",
    "all_to_all_single",
    "batch_isend_irecv",
];

pub const MSG_INF_NAN: &str =
    "error: There is nan/inf/-inf in the maximum or minimum value of NPU.";
pub const MSG_ONE_THOUSANDTH: &str =
    "error: The input/parameters of One Thousandth Err Ratio > 0.9 while the output < 0.6.";
pub const MSG_REQUIRES_GRAD: &str = "error: The Required_Grad of NPU and Bench are inconsistent";
pub const MSG_PARAMETERS: &str = "error: The scalar parameters of NPU and Bench are inconsistent.";
pub const MSG_DTYPE: &str = "error: The dtype of NPU and Bench are inconsistent.";
pub const MSG_SHAPE: &str = "error: The shape of NPU and Bench are inconsistent.";
pub const MSG_COSINE: &str =
    "warning: The input/parameters of Cosine > 0.9, and input/parameters - output > 0.1";
pub const MSG_RELATIVE_ERR: &str = "error: The NormRelativeErr of output is greater than 0.5.";
pub const MSG_RELATIVE_WARN: &str =
    "warning: The norm relative error of output is 10 times that of input.";

#[derive(Clone, Copy, PartialEq)]
enum Ignore {
    None,
    Inputs,
    All,
}

/// Sets `result` and `messages` of every pair, judging the pairs of each call together.
/// Pairs of one call need not be adjacent.
pub fn apply(pairs: &mut [Pair], mode: Mode) {
    let mut calls: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut at: std::collections::HashMap<String, usize> = Default::default();
    let keys: Vec<String> = pairs.iter().map(|p| p.call.clone()).collect();
    for (i, c) in keys.iter().enumerate() {
        let k = *at.entry(c.clone()).or_insert_with(|| {
            calls.push((c.as_str(), Vec::new()));
            calls.len() - 1
        });
        calls[k].1.push(i);
    }
    for p in pairs.iter_mut() {
        p.result = Level::Pass;
        p.messages.clear();
    }
    for (_, rows) in calls {
        judge(pairs, &rows, mode);
    }
}

fn set(p: &mut Pair, level: Level, msg: &str) {
    p.result = p.result.max(level);
    p.messages.push(msg.to_string());
}

fn ignore_of(pairs: &[Pair], rows: &[usize]) -> Ignore {
    let Some(first_in) = rows.iter().find(|&&i| pairs[i].role == Role::Input) else {
        return Ignore::None;
    };
    let api = pairs[*first_in].key.split('.').nth(1).unwrap_or("");
    if ALL_IGNORE.contains(&api) {
        Ignore::All
    } else if INPUT_IGNORE.contains(&api) {
        Ignore::Inputs
    } else {
        Ignore::None
    }
}

fn judge(pairs: &mut [Pair], rows: &[usize], mode: Mode) {
    let ignore = ignore_of(pairs, rows);
    if ignore == Ignore::All {
        return;
    }
    let (ins, outs): (Vec<usize>, Vec<usize>) =
        rows.iter().partition(|&&i| pairs[i].role == Role::Input);
    let checked: Vec<usize> = if ignore == Ignore::Inputs {
        outs.clone()
    } else {
        rows.to_vec()
    };
    let combine = ignore == Ignore::None;
    // InfNan.
    for &i in &checked {
        let p = &pairs[i];
        let golden_bad = p.golden_summary.is_some_and(|s| s.max_min_not_finite());
        let target_bad = p.target_summary.is_some_and(|s| s.max_min_not_finite());
        if !golden_bad && target_bad {
            set(&mut pairs[i], Level::Error, MSG_INF_NAN);
        }
    }
    match mode {
        Mode::Tensor if combine && !outs.is_empty() => {
            let ratio = |p: &Pair| p.metrics.as_ref()?.one_thousandth_ratio.value();
            let min_in = min_of(pairs, &ins, ratio);
            let min_out = min_of(pairs, &outs, ratio);
            if min_in > 0.9 && min_out < 0.1 {
                set(&mut pairs[outs[0]], Level::Error, MSG_ONE_THOUSANDTH);
            }
        }
        Mode::Statistics if combine => {
            let in_max = max_of(pairs, &ins, norm_rel).abs();
            if in_max < 0.1 {
                for &o in &outs {
                    if out_norm_rel(&pairs[o]).abs() > 0.5 {
                        set(&mut pairs[o], Level::Error, MSG_RELATIVE_ERR);
                    }
                }
            }
        }
        _ => {}
    }
    // RequiresGrad: both sides dumped the flag and it differs (an npy dump has none).
    for &i in &checked {
        let p = &pairs[i];
        if let (Some(a), Some(b)) = (p.requires_grad, p.golden_requires_grad)
            && a != b
        {
            set(&mut pairs[i], Level::Error, MSG_REQUIRES_GRAD);
        }
    }
    // Parameters: a scalar argument whose value differs.
    if ignore == Ignore::None {
        for &i in &ins {
            let p = &pairs[i];
            let scalar = p.dtype.contains("class") && p.golden_dtype.contains("class");
            let value = |s: &Option<super::Summary>| s.and_then(|s| s.max);
            if scalar && p.shape.is_empty() && value(&p.target_summary) != value(&p.golden_summary)
            {
                set(&mut pairs[i], Level::Error, MSG_PARAMETERS);
            }
        }
    }
    for &i in &checked {
        let p = &pairs[i];
        let bench_merged = p.golden_key.contains("qkv") || p.golden_key.contains("gate_up");
        if !bench_merged
            && !p.dtype.is_empty()
            && !p.golden_dtype.is_empty()
            && dtypes_differ(&p.dtype, &p.golden_dtype)
        {
            set(&mut pairs[i], Level::Error, MSG_DTYPE);
        }
    }
    for &i in &checked {
        if pairs[i].shape != pairs[i].golden_shape {
            set(&mut pairs[i], Level::Error, MSG_SHAPE);
        }
    }
    if !combine || outs.is_empty() {
        return;
    }
    match mode {
        Mode::Tensor => {
            let cos = |p: &Pair| p.metrics.as_ref()?.cosine.value();
            let min_in = min_of(pairs, &ins, cos);
            let min_out = min_of(pairs, &outs, cos);
            if min_in > 0.9 && min_in - min_out > 0.1 {
                set(&mut pairs[outs[0]], Level::Warning, MSG_COSINE);
            }
        }
        Mode::Statistics => {
            let in_max = max_of(pairs, &ins, norm_rel).abs();
            let out_max = max_of(pairs, &outs, norm_rel).abs();
            let warn = if in_max == 0.0 {
                out_max > 0.1
            } else {
                out_max / in_max > 10.0
            };
            if warn {
                set(&mut pairs[outs[0]], Level::Warning, MSG_RELATIVE_WARN);
            }
        }
    }
}

/// msprobe's `get_min_or_max_value`: numbers only (words skipped), default 1.0.
fn min_of(pairs: &[Pair], rows: &[usize], f: impl Fn(&Pair) -> Option<f64>) -> f64 {
    rows.iter()
        .filter_map(|&i| f(&pairs[i]))
        .filter(|v| !v.is_nan())
        .fold(1.0, f64::min)
}

/// The same for a maximum, default 0.0.
fn max_of(pairs: &[Pair], rows: &[usize], f: impl Fn(&Pair) -> Option<f64>) -> f64 {
    rows.iter()
        .filter_map(|&i| f(&pairs[i]))
        .filter(|v| !v.is_nan())
        .fold(0.0, f64::max)
}

/// NormRelativeErr as a fraction where msprobe wrote a percentage; `inf`, `N/A` and an exact
/// `0` are words to msprobe's min/max and are skipped.
fn norm_rel(p: &Pair) -> Option<f64> {
    match p.stats?.norm.rel_pct {
        StatVal::Num(v) if v != 0.0 => Some(v / 100.0),
        _ => None,
    }
}

/// msprobe's `str2float` of one output's NormRelativeErr: `inf` stays infinite, other words 0.
fn out_norm_rel(p: &Pair) -> f64 {
    match p.stats.map(|s| s.norm.rel_pct) {
        Some(StatVal::Num(v)) => v / 100.0,
        Some(StatVal::Word("inf")) | Some(StatVal::Word("-inf")) => f64::INFINITY,
        _ => 0.0,
    }
}

/// Whether two dtypes differ: as written when both sides write them alike (msprobe compares its
/// strings); a numpy descriptor (an npy dump's `<f4`) against a torch name (`torch.float32`) by
/// what they mean.
fn dtypes_differ(a: &str, b: &str) -> bool {
    if a.starts_with("torch.") == b.starts_with("torch.") {
        return a != b;
    }
    let canon = |d: &str| match fx_dtype_of_torch(d) {
        Some(s) => s.to_string(),
        None => match short_dtype(d).as_str() {
            "bool" => "b8".to_string(),
            s => s.to_string(),
        },
    };
    canon(a) != canon(b)
}
