//! msprobe's own `compare_result_*.csv` (docs/formats.md §4.3): read into a [`Comparison`], so
//! msprobe's answer shows like a computed compare, and written from one (`fxray compare --csv`)
//! with msprobe's column names and number formats, so spreadsheets built on msprobe's files
//! keep working.
//!
//! Tensor mode has `Cosine` … `Five Thousandths Err Ratio` columns, statistics mode `Max diff`
//! … `NormRelativeErr` (percentages); both have the two sides' name, dtype, shape, max, min,
//! mean and l2norm, then `Result` and `Err_message` (a JSON list). A row whose `Bench Name` is
//! `N/A` is a target tensor msprobe found no golden for.

use super::metrics::{Metric, TensorMetrics};
use super::stats::{StatCell, StatVal, StatsDiff, Summary};
use super::{Comparison, Level, Mode, Pair, PairedBy, Role, Unpaired, rules, stats, verdict};
use std::collections::HashMap;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CsvError {
    #[error("empty file, not an msprobe compare result")]
    Empty,
    #[error("not an msprobe compare result: no `{0}` column")]
    MissingColumn(&'static str),
    #[error(
        "not an msprobe compare result: neither tensor-mode (`Cosine`) nor statistics-mode (`Max diff`) columns"
    )]
    UnknownMode,
}

const BASIC: [&str; 8] = [
    "NPU Name",
    "Bench Name",
    "NPU Dtype",
    "Bench Dtype",
    "NPU Tensor Shape",
    "Bench Tensor Shape",
    "NPU Requires_grad",
    "Bench Requires_grad",
];
const TENSOR: [&str; 6] = [
    "Cosine",
    "EucDist",
    "MaxAbsErr",
    "MaxRelativeErr",
    "One Thousandth Err Ratio",
    "Five Thousandths Err Ratio",
];
const STATS: [&str; 8] = [
    "Max diff",
    "Min diff",
    "Mean diff",
    "L2norm diff",
    "MaxRelativeErr",
    "MinRelativeErr",
    "MeanRelativeErr",
    "NormRelativeErr",
];
const SUMMARY: [&str; 8] = [
    "NPU max",
    "NPU min",
    "NPU mean",
    "NPU l2norm",
    "Bench max",
    "Bench min",
    "Bench mean",
    "Bench l2norm",
];
const EXTRACT: [&str; 3] = ["Requires_grad Consistent", "Result", "Err_message"];

/// `Functional.linear.0.forward.input.0` → (`Functional.linear.0.forward`, `input.0`);
/// `Module.fc.Linear.forward.0.output.0` → (`Module.fc.Linear.forward.0`, `output.0`);
/// `Module.fc.Linear.parameters_grad.0.weight` → (`Module.fc.Linear.parameters_grad.0`, `weight`).
pub fn split_key(name: &str) -> (String, String) {
    let parts: Vec<&str> = name.split('.').collect();
    let Some(dir) = parts
        .iter()
        .rposition(|p| matches!(*p, "forward" | "backward" | "parameters_grad"))
    else {
        return (name.to_string(), String::new());
    };
    let mut end = dir + 1;
    if parts[0] == "Module" && parts.get(end).is_some_and(|p| p.parse::<u32>().is_ok()) {
        end += 1;
    }
    (parts[..end].join("."), parts[end..].join("."))
}

/// The op a call computes, without its call number: `Functional.linear.0.forward` →
/// `Functional.linear`; `Module.fc.Linear.forward.0` → `Module.fc.Linear`.
pub fn call_op(call: &str) -> String {
    // Both grammars end in two parts to drop: `<n>.forward` or `forward.<n>`.
    let parts: Vec<&str> = call.split('.').collect();
    parts[..parts.len().saturating_sub(2)].join(".")
}

/// Reads msprobe's compare CSV. Rows it cannot understand are listed in `notes`, one line each.
pub fn read(text: &str) -> Result<Comparison, CsvError> {
    let mut rows = parse(text).into_iter();
    let header = rows.next().ok_or(CsvError::Empty)?;
    let col: HashMap<&str, usize> = header
        .iter()
        .enumerate()
        .map(|(i, h)| (h.trim_start_matches('\u{feff}'), i))
        .collect();
    for c in ["NPU Name", "Bench Name", "Result"] {
        if !col.contains_key(c) {
            return Err(CsvError::MissingColumn(c));
        }
    }
    let mode = if col.contains_key("Cosine") {
        Mode::Tensor
    } else if col.contains_key("Max diff") {
        Mode::Statistics
    } else {
        return Err(CsvError::UnknownMode);
    };
    let mut c = Comparison {
        mode: Some(mode),
        pairing: "read from msprobe's compare CSV".into(),
        ..Default::default()
    };
    let mut order: HashMap<String, usize> = HashMap::new();
    for (n, row) in rows.enumerate() {
        if row.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        let get = |name: &str| col.get(name).and_then(|&i| row.get(i)).map(String::as_str);
        let name = get("NPU Name").unwrap_or("").trim();
        if name.is_empty() || name == "N/A" {
            c.notes.push(format!("row {}: no NPU Name, skipped", n + 2));
            continue;
        }
        let (call, slot) = split_key(name);
        let next = order.len();
        let k = *order.entry(call.clone()).or_insert(next);
        let role = if name.contains(".output.") {
            Role::Output
        } else {
            Role::Input
        };
        let bench = get("Bench Name").unwrap_or("N/A").trim();
        if bench == "N/A" || bench.is_empty() {
            c.unpaired_target.push(Unpaired {
                key: name.to_string(),
                call,
                node: None,
                slot,
                role,
                dtype: get("NPU Dtype").unwrap_or("").trim().to_string(),
                order: k,
            });
            continue;
        }
        let summary = |side: &str| Summary {
            max: value(get(&format!("{side} max"))),
            min: value(get(&format!("{side} min"))),
            mean: value(get(&format!("{side} mean"))),
            norm: value(get(&format!("{side} l2norm"))),
        };
        let (ts, gs) = (summary("NPU"), summary("Bench"));
        let metrics = (mode == Mode::Tensor).then(|| {
            let m = |k: &str| {
                get(k)
                    .and_then(Metric::parse)
                    .unwrap_or(Metric::Unsupported)
            };
            tensor_metrics(
                [
                    m("Cosine"),
                    m("EucDist"),
                    m("MaxAbsErr"),
                    m("MaxRelativeErr"),
                    m("One Thousandth Err Ratio"),
                    m("Five Thousandths Err Ratio"),
                ],
                &ts,
                &gs,
            )
        });
        let stats = (mode == Mode::Statistics).then(|| {
            let cell = |d: &str, r: &str| StatCell {
                diff: StatVal::parse(get(d).unwrap_or("N/A")),
                rel_pct: StatVal::parse(get(r).unwrap_or("N/A")),
            };
            StatsDiff {
                max: cell("Max diff", "MaxRelativeErr"),
                min: cell("Min diff", "MinRelativeErr"),
                mean: cell("Mean diff", "MeanRelativeErr"),
                norm: cell("L2norm diff", "NormRelativeErr"),
            }
        });
        let messages = err_messages(get("Err_message").unwrap_or(""));
        let (golden_call, _) = split_key(bench);
        let error = match &metrics {
            Some(m) => m.rel_err,
            None => Some(stats::error(&ts, &gs)),
        };
        c.pairs.push(Pair {
            key: name.to_string(),
            golden_key: bench.to_string(),
            call,
            golden_call,
            node: None,
            slot,
            role,
            dtype: get("NPU Dtype").unwrap_or("").trim().to_string(),
            golden_dtype: get("Bench Dtype").unwrap_or("").trim().to_string(),
            shape: shape(get("NPU Tensor Shape").unwrap_or("")),
            golden_shape: shape(get("Bench Tensor Shape").unwrap_or("")),
            requires_grad: flag(get("NPU Requires_grad")),
            golden_requires_grad: flag(get("Bench Requires_grad")),
            paired_by: PairedBy::Key,
            files: None,
            order: k,
            golden_order: k,
            norm_ratio: stats::norm_ratio(&ts, &gs),
            metrics,
            target_summary: Some(ts),
            golden_summary: Some(gs),
            stats,
            error,
            added_error: None,
            result: get("Result").and_then(Level::parse).unwrap_or(Level::Pass),
            reason: messages.join("; "),
            messages,
        });
    }
    verdict::judge(&mut c);
    c.index();
    Ok(c)
}

fn tensor_metrics(m: [Metric; 6], ts: &Summary, gs: &Summary) -> TensorMetrics {
    let big = ts.norm.unwrap_or(0.0).max(gs.norm.unwrap_or(0.0));
    let rel_err = match m[1] {
        Metric::Value(e) if big > 0.0 => Some(e / big),
        Metric::Value(_) => Some(0.0),
        Metric::NotApplicable => Some(f64::INFINITY),
        _ => None,
    };
    TensorMetrics {
        cosine: m[0],
        euc_dist: m[1],
        max_abs_err: m[2],
        max_rel_err: m[3],
        one_thousandth_ratio: m[4],
        five_thousandths_ratio: m[5],
        rmse: None,
        norm_ratio: stats::norm_ratio(ts, gs),
        rel_err,
        elements: 0,
        argmax: None,
        at_max: None,
        nonfinite: (0, 0),
        note: None,
    }
}

/// A statistic as msprobe wrote it: a number, ` inf`, `nan`; `None`/`N/A` → absent.
fn value(s: Option<&str>) -> Option<f64> {
    let t = s?.trim();
    match t {
        "inf" => Some(f64::INFINITY),
        "-inf" => Some(f64::NEG_INFINITY),
        "nan" | "NaN" | "Nan" => Some(f64::NAN),
        _ => t.parse().ok(),
    }
}

/// `[4, 16]` → [4, 16]; `[]` → [].
fn shape(s: &str) -> Vec<u64> {
    s.trim()
        .trim_start_matches(['[', '('])
        .trim_end_matches([']', ')'])
        .split(',')
        .filter_map(|d| d.trim().parse().ok())
        .collect()
}

/// `["error: …", "warning: …"]` (a JSON list), or older files' plain text.
fn err_messages(s: &str) -> Vec<String> {
    let t = s.trim();
    if t.is_empty() || t == "[]" {
        return Vec::new();
    }
    serde_json::from_str::<Vec<String>>(t).unwrap_or_else(|_| vec![t.to_string()])
}

/// RFC 4180 fields: quotes, doubled quotes and line breaks inside quotes.
fn parse(text: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(ch) = chars.next() {
        if quoted {
            match ch {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                _ => field.push(ch),
            }
            continue;
        }
        match ch {
            '"' if field.is_empty() => quoted = true,
            ',' => row.push(std::mem::take(&mut field)),
            '\r' => {}
            '\n' => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            _ => field.push(ch),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

fn quote(f: &str) -> String {
    if f.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", f.replace('"', "\"\""))
    } else {
        f.to_string()
    }
}

/// A float as Python's `repr` prints it (`1.0`, `0.25`, `1e-07`, `inf`).
pub fn py_float(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        let s = format!("{v:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        let sign = if e < 0 { '-' } else { '+' };
        return format!("{m}e{sign}{:02}", e.abs());
    }
    let s = format!("{v}");
    if s.contains('.') { s } else { format!("{s}.0") }
}

/// msprobe's `format_value`: rounded to 12 decimals.
fn fmt12(v: f64) -> f64 {
    format!("{v:.12}").parse().unwrap_or(v)
}

fn metric_text(m: Metric, cosine: bool, raw: bool) -> String {
    match m {
        Metric::Value(v) if raw => py_float(v),
        Metric::Value(v) => {
            let mut x = fmt12(v);
            if cosine && x > 0.9999 {
                x = format!("{x:.6}").parse().unwrap_or(x);
            }
            py_float(x)
        }
        other => other.word().unwrap_or("").to_string(),
    }
}

fn stat_text(v: StatVal, pct: bool) -> String {
    match v {
        StatVal::Num(0.0) => "0".into(),
        StatVal::Num(x) if pct => format!("{}%", py_float(x)),
        StatVal::Num(x) => py_float(x),
        StatVal::Word(w) => w.into(),
    }
}

fn summary_text(v: Option<f64>) -> String {
    v.map_or("None".into(), py_float)
}

fn shape_text(s: &[u64]) -> String {
    let d: Vec<String> = s.iter().map(u64::to_string).collect();
    format!("[{}]", d.join(", "))
}

/// A `Requires_grad` cell: `True`, `False`, or `N/A` (a scalar, an npy dump).
fn flag(cell: Option<&str>) -> Option<bool> {
    match cell?.trim() {
        "True" => Some(true),
        "False" => Some(false),
        _ => None,
    }
}

fn flag_text(v: Option<bool>) -> String {
    match v {
        Some(true) => "True",
        Some(false) => "False",
        None => "N/A",
    }
    .into()
}

/// msprobe's CSV of `c`: pairs, then the target tensors without a golden (`N/A`), by order.
pub fn write(c: &Comparison) -> String {
    let mode = c.mode.unwrap_or(Mode::Tensor);
    let mut header: Vec<&str> = BASIC.to_vec();
    header.extend(match mode {
        Mode::Tensor => TENSOR.as_slice(),
        Mode::Statistics => STATS.as_slice(),
    });
    header.extend(SUMMARY);
    header.extend(EXTRACT);
    if mode == Mode::Tensor {
        // msprobe lists the two `.pt` files here; fxray's pairs may come from npy dumps.
        header.push("Data_name");
    }
    let mut out = header.join(",");
    out.push('\n');
    let mut rows: Vec<(usize, usize, Vec<String>)> = Vec::new();
    for (i, p) in c.pairs.iter().enumerate() {
        let mut r = vec![
            p.key.clone(),
            p.golden_key.clone(),
            p.dtype.clone(),
            p.golden_dtype.clone(),
            shape_text(&p.shape),
            shape_text(&p.golden_shape),
            flag_text(p.requires_grad),
            flag_text(p.golden_requires_grad),
        ];
        match mode {
            Mode::Tensor => {
                let m = p.metrics.as_ref();
                let g = |f: fn(&TensorMetrics) -> Metric| m.map_or(Metric::Unsupported, f);
                r.push(metric_text(g(|m| m.cosine), true, false));
                r.push(metric_text(g(|m| m.euc_dist), false, true));
                r.push(metric_text(g(|m| m.max_abs_err), false, false));
                r.push(metric_text(g(|m| m.max_rel_err), false, false));
                r.push(metric_text(g(|m| m.one_thousandth_ratio), false, false));
                r.push(metric_text(g(|m| m.five_thousandths_ratio), false, false));
            }
            Mode::Statistics => {
                let cells = p.stats.map(|s| s.cells());
                for k in 0..4 {
                    r.push(cells.map_or("N/A".into(), |c| stat_text(c[k].diff, false)));
                }
                for k in 0..4 {
                    r.push(cells.map_or("N/A".into(), |c| stat_text(c[k].rel_pct, true)));
                }
            }
        }
        for s in [p.target_summary, p.golden_summary] {
            let s = s.unwrap_or(Summary::empty());
            r.extend([s.max, s.min, s.mean, s.norm].map(summary_text));
        }
        let same = p.requires_grad == p.golden_requires_grad;
        r.push(if same { "True" } else { "False" }.into());
        r.push(p.result.as_str().into());
        r.push(
            serde_json::to_string(&p.messages)
                .unwrap_or_default()
                .replace("\",\"", "\", \""),
        );
        if mode == Mode::Tensor {
            r.push("N/A".into());
        }
        rows.push((p.order, i, r));
    }
    let metric_cols = match mode {
        Mode::Tensor => TENSOR.len(),
        Mode::Statistics => STATS.len(),
    };
    for (i, u) in c.unpaired_target.iter().enumerate() {
        let mut r = vec![u.key.clone(), "N/A".into()];
        r.extend(std::iter::repeat_n("N/A".to_string(), 6 + metric_cols + 8));
        r.extend(["True".into(), Level::Pass.as_str().into(), "[]".into()]);
        if mode == Mode::Tensor {
            r.push("N/A".into());
        }
        rows.push((u.order, c.pairs.len() + i, r));
    }
    rows.sort_by_key(|(o, i, _)| (*o, *i));
    for (.., r) in rows {
        let fields: Vec<String> = r.iter().map(|f| quote(f)).collect();
        out.push_str(&fields.join(","));
        out.push('\n');
    }
    out
}

/// Re-derives msprobe's Result of every pair (what `read` took from the file) — for checking
/// a file against fxray's rules.
pub fn rejudge(c: &mut Comparison) {
    if let Some(mode) = c.mode {
        rules::apply(&mut c.pairs, mode);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_split_into_call_and_slot() {
        assert_eq!(
            split_key("Functional.linear.0.forward.input.0"),
            ("Functional.linear.0.forward".into(), "input.0".into())
        );
        assert_eq!(
            split_key("Module.layers.0.mlp.MLP.forward.0.output.0"),
            (
                "Module.layers.0.mlp.MLP.forward.0".into(),
                "output.0".into()
            )
        );
        assert_eq!(
            split_key("Tensor.mean.0.forward.input.keepdim"),
            ("Tensor.mean.0.forward".into(), "input.keepdim".into())
        );
        assert_eq!(
            split_key("Module.fc1.Linear.parameters_grad.0.weight"),
            (
                "Module.fc1.Linear.parameters_grad.0".into(),
                "weight".into()
            )
        );
        assert_eq!(call_op("Functional.linear.0.forward"), "Functional.linear");
        assert_eq!(call_op("Module.fc.Linear.forward.0"), "Module.fc.Linear");
    }

    #[test]
    fn csv_fields_with_quotes_and_commas() {
        let rows = parse("a,\"b, c\",\"say \"\"hi\"\"\"\n1,\"[4, 16]\",x\n");
        assert_eq!(rows[0], ["a", "b, c", "say \"hi\""]);
        assert_eq!(rows[1], ["1", "[4, 16]", "x"]);
        assert_eq!(shape("[4, 16]"), [4, 16]);
        assert_eq!(quote("[4, 16]"), "\"[4, 16]\"");
    }

    #[test]
    fn floats_print_as_python_does() {
        assert_eq!(py_float(1.0), "1.0");
        assert_eq!(py_float(0.25), "0.25");
        assert_eq!(py_float(1e-7), "1e-07");
        assert_eq!(py_float(3.5e20), "3.5e+20");
        assert_eq!(py_float(f64::INFINITY), "inf");
    }

    #[test]
    fn not_a_compare_csv_is_one_line() {
        assert_eq!(read("").unwrap_err(), CsvError::Empty);
        assert_eq!(
            read("a,b\n1,2\n").unwrap_err(),
            CsvError::MissingColumn("NPU Name")
        );
        assert_eq!(
            read("NPU Name,Bench Name,Result\nx,y,pass\n").unwrap_err(),
            CsvError::UnknownMode
        );
    }
}
