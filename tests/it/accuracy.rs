//! Accuracy compare against msprobe itself: `tests/fixtures/accuracy/<case>/` holds real
//! msprobe dumps (tensor and statistics mode) of a small model, golden fp32 against a target with
//! one fault, and `msprobe compare`'s own CSV of each (made by `tests/e2e/accuracy_faults.py`).
//! fxray's metrics must equal msprobe's on every paired tensor row, its Result column must
//! agree, and its first divergence must name the faulty op, where msprobe passes it too.

use crate::common::fixture;
use fxray::analysis::accuracy::{
    Comparison, Level, Metric, Mode, Pair, msprobe_csv, stats::StatVal,
};
use fxray::pipeline::compare::{self, Options};
use std::path::Path;

/// The three faults and the call each one starts at.
pub const CASES: [(&str, &str); 3] = [
    // the target's gelu returns its output plus noise
    ("perturb", "Functional.gelu.0.forward"),
    // a bf16 target: the centring subtraction cancels catastrophically
    ("bf16", "Tensor.__sub__.0.forward"),
    // an extra op, `torch.mul(h, 1.3)`, only the target runs
    ("scale", "Torch.mul.0.forward"),
];

/// msprobe rounds to 12 decimals (`format_value`), and a cosine above 0.9999 to 6.
fn close(what: &str, a: f64, b: f64) {
    let tol = 1e-5 * a.abs().max(b.abs()) + 1e-12;
    assert!(
        (a - b).abs() <= tol || (a.is_infinite() && a == b),
        "{what}: fxray {a} vs msprobe {b}"
    );
}

fn same_metric(what: &str, a: Metric, b: Metric) {
    match (a, b) {
        (Metric::Value(x), Metric::Value(y)) => close(what, x, y),
        _ => assert_eq!(a, b, "{what}"),
    }
}

fn same_stat(what: &str, a: StatVal, b: StatVal) {
    match (a, b) {
        (StatVal::Num(x), StatVal::Num(y)) => close(what, x, y),
        _ => assert_eq!(a, b, "{what}"),
    }
}

/// Compares `<dir>/target_<task>` with `<dir>/golden_<task>` and checks every tensor row of
/// msprobe's CSV beside them. Returns fxray's comparison and msprobe's, read from its CSV.
pub fn check_against_msprobe(dir: &Path, task: &str) -> (Comparison, Comparison) {
    let (c, _) = compare::compare(
        &dir.join(format!("target_{task}")),
        &dir.join(format!("golden_{task}")),
        &Options::default(),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let want_mode = if task == "tensor" {
        Mode::Tensor
    } else {
        Mode::Statistics
    };
    assert_eq!(c.mode, Some(want_mode));
    let csv = dir.join(format!("msprobe_{task}/compare_result_{task}.csv"));
    let truth = msprobe_csv::read(&std::fs::read_to_string(&csv).expect("msprobe csv"))
        .unwrap_or_else(|e| panic!("{}: {e}", csv.display()));
    // Every row, scalar arguments (`<class 'int'>`) included.
    assert!(truth.pairs.len() >= 10, "{}", csv.display());
    assert_eq!(
        c.pairs.len(),
        truth.pairs.len(),
        "pairs of {}",
        dir.display()
    );
    for t in &truth.pairs {
        let key = &t.key;
        let p = c
            .pairs
            .iter()
            .find(|p| &p.key == key)
            .unwrap_or_else(|| panic!("{key}: msprobe pairs it, fxray does not"));
        same_row(p, t, want_mode);
    }
    // What msprobe could not pair (its `N/A` rows) fxray lists as the target's.
    let mut theirs: Vec<&str> = truth
        .unpaired_target
        .iter()
        .map(|u| u.key.as_str())
        .collect();
    let mut ours: Vec<&str> = c.unpaired_target.iter().map(|u| u.key.as_str()).collect();
    theirs.sort_unstable();
    ours.sort_unstable();
    assert_eq!(ours, theirs, "unpaired target tensors of {}", dir.display());
    (c, truth)
}

/// fxray's pair `p` says what msprobe's row `t` says: names, dtypes, Result, messages, and
/// every metric (tensor mode) or statistic difference (statistics mode).
fn same_row(p: &Pair, t: &Pair, want_mode: Mode) {
    let key = &t.key;
    assert_eq!(p.golden_key, t.golden_key, "{key}");
    assert_eq!(
        (&p.dtype, &p.golden_dtype),
        (&t.dtype, &t.golden_dtype),
        "{key}"
    );
    assert_eq!(
        p.result, t.result,
        "{key}: Result ({:?} vs {:?})",
        p.messages, t.messages
    );
    assert_eq!(p.messages, t.messages, "{key}: Err_message");
    match want_mode {
        Mode::Tensor => {
            let (a, b) = (
                p.metrics.as_ref().expect("fxray metrics"),
                t.metrics.as_ref().expect("csv"),
            );
            same_metric(&format!("{key} Cosine"), a.cosine, b.cosine);
            same_metric(&format!("{key} EucDist"), a.euc_dist, b.euc_dist);
            same_metric(&format!("{key} MaxAbsErr"), a.max_abs_err, b.max_abs_err);
            same_metric(
                &format!("{key} MaxRelativeErr"),
                a.max_rel_err,
                b.max_rel_err,
            );
            same_metric(
                &format!("{key} 1‰"),
                a.one_thousandth_ratio,
                b.one_thousandth_ratio,
            );
            same_metric(
                &format!("{key} 5‰"),
                a.five_thousandths_ratio,
                b.five_thousandths_ratio,
            );
        }
        Mode::Statistics => {
            let (a, b) = (p.stats.expect("fxray stats"), t.stats.expect("csv stats"));
            for (k, (x, y)) in a.cells().iter().zip(b.cells()).enumerate() {
                same_stat(&format!("{key} stat {k} diff"), x.diff, y.diff);
                same_stat(&format!("{key} stat {k} rel"), x.rel_pct, y.rel_pct);
            }
        }
    }
}

fn case_dir(case: &str) -> std::path::PathBuf {
    fixture("accuracy").join(case)
}

/// fxray's first divergence is the faulty call, in both modes and from msprobe's own CSV.
pub fn check_first_divergence(c: &Comparison, case: &str, call: &str) {
    let f = c
        .first_divergence
        .as_ref()
        .unwrap_or_else(|| panic!("{case}: no first divergence"));
    assert_eq!(f.call, call, "{case}: {}", f.why);
    assert!(f.key.starts_with(call), "{case}: {}", f.key);
    assert!(!f.why.is_empty());
}

#[test]
fn statistics_mode_metrics_and_results_equal_msprobes() {
    for (case, call) in CASES {
        let (c, truth) = check_against_msprobe(&case_dir(case), "statistics");
        check_first_divergence(&c, case, call);
        check_first_divergence(&truth, &format!("{case} (msprobe's csv)"), call);
    }
}

#[test]
fn tensor_mode_metrics_and_results_equal_msprobes() {
    for (case, call) in CASES {
        let (c, truth) = check_against_msprobe(&case_dir(case), "tensor");
        check_first_divergence(&c, case, call);
        check_first_divergence(&truth, &format!("{case} (msprobe's csv)"), call);
    }
}

#[test]
fn msprobe_passes_every_tensor_of_the_scale_fault_and_flags_bf16_for_its_dtype() {
    // The premise of the verdict, as msprobe's own files show it.
    for task in ["tensor", "statistics"] {
        let csv = case_dir("scale").join(format!("msprobe_{task}/compare_result_{task}.csv"));
        let truth = msprobe_csv::read(&std::fs::read_to_string(csv).expect("csv")).expect("read");
        assert!(
            truth.pairs.iter().all(|p| p.result == Level::Pass),
            "{task}"
        );
        let csv = case_dir("bf16").join(format!("msprobe_{task}/compare_result_{task}.csv"));
        let truth = msprobe_csv::read(&std::fs::read_to_string(csv).expect("csv")).expect("read");
        let floats = truth.pairs.iter().filter(|p| p.dtype == "torch.bfloat16");
        for p in floats {
            assert_eq!(p.result, Level::Error, "{}", p.key);
            assert!(p.messages.iter().any(|m| m.contains("dtype")), "{}", p.key);
        }
    }
}

#[test]
fn the_scale_error_is_named_with_its_factor() {
    let (c, _) = check_against_msprobe(&case_dir("scale"), "tensor");
    let f = c.first_divergence.expect("divergence");
    assert!(
        f.why.contains("only the target runs Torch.mul.0.forward"),
        "{}",
        f.why
    );
    assert!(f.why.contains("1.300"), "{}", f.why);
    let next = c
        .pairs
        .iter()
        .find(|p| p.key == "Functional.linear.1.forward.input.0")
        .expect("pair");
    assert!((next.norm_ratio.expect("ratio") - 1.3).abs() < 1e-6);
}

#[test]
fn a_bf16_target_is_held_to_bf16_tolerance_not_failed_for_its_dtype() {
    let (c, _) = check_against_msprobe(&case_dir("bf16"), "tensor");
    let f = c.first_divergence.as_ref().expect("divergence");
    assert!(f.why.contains("cancellation"), "{}", f.why);
    // Before the faulty call every output stays within bf16's tolerance: the dtype alone is
    // information.
    let first = c.pairs.iter().position(|p| p.call == f.call).expect("call");
    // (Scalar arguments, `Tensor.mean`'s dim and keepdim, are compared by value alone.)
    for p in c.pairs[..first]
        .iter()
        .filter(|p| p.dtype.starts_with("torch."))
    {
        assert!(p.error.expect("error") < 0.05, "{}: {:?}", p.key, p.error);
        assert!(p.reason.contains("dtypes differ"), "{}", p.reason);
    }
}

#[test]
fn fxrays_csv_reads_back_as_msprobes_does() {
    for task in ["tensor", "statistics"] {
        let (c, _) = check_against_msprobe(&case_dir("scale"), task);
        let back = msprobe_csv::read(&msprobe_csv::write(&c)).expect("our csv reads back");
        assert_eq!(back.pairs.len(), c.pairs.len());
        assert_eq!(back.unpaired_target.len(), c.unpaired_target.len());
        for (a, b) in c.pairs.iter().zip(&back.pairs) {
            assert_eq!(
                (&a.key, a.result, &a.messages),
                (&b.key, b.result, &b.messages)
            );
        }
        check_first_divergence(&back, "scale (fxray's csv)", "Torch.mul.0.forward");
    }
}

#[test]
fn a_pt_that_is_not_a_tensor_or_is_hostile_is_one_line_and_the_rest_compared() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("scale");
    crate::common::copy_tree(&case_dir("scale"), &dir);
    let data = dir.join("target_tensor/step0/proc2002/dump_tensor_data");
    let pt = fixture("../data/pt");
    let swap = [
        ("Functional.linear.1.forward.input.1.pt", "dict.pt"),
        ("Functional.linear.2.forward.input.1.pt", "hostile.pt"),
        ("Functional.silu.0.forward.input.0.pt", "f32.pt"),
    ];
    for (file, with) in swap {
        std::fs::copy(pt.join(with), data.join(file)).expect("swap");
    }
    // A cut .pt: its last kilobyte gone.
    let cut = data.join("Functional.gelu.0.forward.output.0.pt");
    let bytes = std::fs::read(&cut).expect("read");
    std::fs::write(&cut, &bytes[..bytes.len() - 1024]).expect("cut");
    let (c, _) = compare::compare(
        &dir.join("target_tensor"),
        &dir.join("golden_tensor"),
        &Options::default(),
    )
    .expect("the rest is compared");
    let pair = |k: &str| {
        c.pairs
            .iter()
            .find(|p| p.key == k)
            .unwrap_or_else(|| panic!("{k}"))
    };
    for (key, says) in [
        ("Functional.linear.1.forward.input.1", "not a tensor"),
        ("Functional.linear.2.forward.input.1", "refused"),
        ("Functional.gelu.0.forward.output.0", "cut short"),
    ] {
        let p = pair(key);
        assert_eq!(p.result, Level::Error, "{key}: {}", p.reason);
        assert!(
            p.reason.starts_with("not compared: target"),
            "{key}: {}",
            p.reason
        );
        assert!(p.reason.contains(says), "{key}: {}", p.reason);
        assert!(!p.reason.contains('\n'), "{key}");
    }
    // A tensor of another shape where silu's input was: compared as msprobe does, shape unmatched.
    let p = pair("Functional.silu.0.forward.input.0");
    assert_eq!(
        p.metrics.as_ref().expect("metrics").cosine,
        Metric::ShapeUnmatched
    );
    // Everything else compares as before.
    let ok = c
        .pairs
        .iter()
        .filter(|p| {
            p.metrics
                .as_ref()
                .is_some_and(|m| m.cosine != Metric::ShapeUnmatched)
        })
        .count();
    assert_eq!(ok, c.pairs.len() - 4);
}

/// msprobe's RequiresGrad and Parameters checkers, on real dumps made to trip them
/// (`tests/e2e/accuracy_checks.py`): the golden's input requires grad, and its `torch.mul`
/// scales by 1.5 where the target's scales by 1.3. Every row, scalar argument included, equals
/// msprobe's CSV (`check_against_msprobe`); fxray's verdict names the mul.
#[test]
fn requires_grad_and_scalar_arguments_are_judged_as_msprobe_does() {
    use fxray::analysis::accuracy::rules::{MSG_PARAMETERS, MSG_REQUIRES_GRAD};
    for task in ["tensor", "statistics"] {
        let (c, _) = check_against_msprobe(&case_dir("checks"), task);
        let row = |k: &str| {
            c.pairs
                .iter()
                .find(|p| p.key == k)
                .unwrap_or_else(|| panic!("{k}"))
        };
        let x = row("Functional.linear.0.forward.input.0");
        assert_eq!(
            (x.requires_grad, x.golden_requires_grad),
            (Some(false), Some(true))
        );
        assert_eq!(x.messages, [MSG_REQUIRES_GRAD], "{task}");
        let s = row("Torch.mul.0.forward.input.1");
        assert_eq!((s.dtype.as_str(), s.shape.len()), ("<class 'float'>", 0));
        assert_eq!(
            s.target_summary.and_then(|v| v.max),
            Some(1.3),
            "the scalar's value"
        );
        assert_eq!(s.messages, [MSG_PARAMETERS], "{task}");
        assert_eq!(s.error, None, "a scalar has no error of its own");
        check_first_divergence(&c, &format!("checks {task}"), "Torch.mul.0.forward");
    }
}

/// A compare says how far it is (the window's progress line) and stops when called off: a
/// compare replaced by another is not finished for nothing.
#[test]
fn a_compare_counts_its_pairs_and_stops_when_called_off() {
    let dir = fixture("accuracy/perturb");
    let (target, golden) = (dir.join("target_tensor"), dir.join("golden_tensor"));
    let o = Options::default();
    let (c, _) = compare::compare(&target, &golden, &o).expect("compare");
    let n = c.pairs.len();
    assert!(n >= 10);
    assert_eq!(o.progress.line(), format!("computing pairs {n}/{n}"));

    let called_off = Options::default();
    called_off.progress.cancel();
    let err = compare::compare(&target, &golden, &called_off).expect_err("called off");
    assert!(matches!(err, compare::CompareError::Cancelled), "{err}");
}

/// A training step dumped at level `mix` has each module's parameter gradients
/// (`Module.fc1.Linear.parameters_grad.0`); msprobe's compare has a row per parameter
/// (`….parameters_grad.0.weight`), and fxray pairs each under that name with msprobe's numbers.
pub fn check_parameter_gradients(dir: &Path) {
    for (task, mode) in [("tensor", Mode::Tensor), ("statistics", Mode::Statistics)] {
        let (c, _) = compare::compare(
            &dir.join(format!("target_{task}")),
            &dir.join(format!("golden_{task}")),
            &Options::default(),
        )
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let csv = dir.join(format!("msprobe_{task}/compare_result_{task}.csv"));
        let truth =
            msprobe_csv::read(&std::fs::read_to_string(&csv).expect("msprobe csv")).expect("csv");
        let rows: Vec<&Pair> = truth
            .pairs
            .iter()
            .filter(|t| t.key.contains(".parameters_grad."))
            .collect();
        // fc1, fc2 and fc3, each a weight and a bias.
        assert_eq!(rows.len(), 6, "{}", csv.display());
        for t in rows {
            let p = c
                .pairs
                .iter()
                .find(|p| p.key == t.key)
                .unwrap_or_else(|| panic!("{}: msprobe pairs it, fxray does not", t.key));
            same_row(p, t, mode);
        }
    }
}

#[test]
fn parameter_gradients_pair_as_msprobe_names_them() {
    check_parameter_gradients(&case_dir("train"));
}
