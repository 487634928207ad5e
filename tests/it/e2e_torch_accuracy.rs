//! Accuracy compare against fresh msprobe output: `tests/e2e/accuracy_faults.py` makes new
//! dumps of the three faults with real msprobe (tensor and statistics mode) and runs
//! `msprobe compare` on each; `tests/e2e/accuracy_npy_truth.py` runs msprobe's metric code on a
//! perturbed copy of the showcase's npy dump; `tests/e2e/accuracy_checks.py` trips msprobe's
//! RequiresGrad and Parameters checkers; `tests/e2e/accuracy_mixed.py` makes an npy dump and an
//! msprobe dump of one model. fxray must agree with all of them, as it does with the committed
//! fixtures (`accuracy::`, `accuracy_npy::`, `accuracy_mixed::`).

use super::accuracy::{
    CASES, check_against_msprobe, check_first_divergence, check_parameter_gradients,
};
use super::accuracy_npy::{check_against_truth, perturbed_pair};
use fxray::pipeline::compare::{self, Options};

#[test]
#[ignore = "needs PyTorch and msprobe: tests/run.sh installs them and runs this"]
fn fresh_msprobe_dumps_and_compares_agree_with_fxray() {
    let out = tempfile::tempdir().expect("temp");
    crate::common::run_e2e_script("accuracy_faults.py", out.path());
    for (case, call) in CASES {
        for task in ["tensor", "statistics"] {
            let (c, truth) = check_against_msprobe(&out.path().join(case), task);
            check_first_divergence(&c, case, call);
            check_first_divergence(&truth, &format!("{case} (msprobe's csv)"), call);
        }
    }
    check_parameter_gradients(&out.path().join("train"));
}

#[test]
#[ignore = "needs msprobe: tests/run.sh installs it and runs this"]
fn msprobes_metric_code_agrees_on_a_fresh_npy_perturbation() {
    let out = tempfile::tempdir().expect("temp");
    crate::common::run_e2e_script("accuracy_npy_truth.py", out.path());
    let tmp = tempfile::tempdir().expect("temp");
    let (target, golden) = perturbed_pair(tmp.path(), &out.path().join("target_overrides"));
    let opts = Options {
        step: Some(0),
        ..Default::default()
    };
    let (c, _) = compare::compare(&target, &golden, &opts).expect("compare");
    let truth: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.path().join("msprobe_metrics.json")).expect("truth"),
    )
    .expect("json");
    check_against_truth(&c, &truth);
    let f = c.first_divergence.expect("divergence");
    assert_eq!(f.node.as_deref(), truth["node"].as_str());
}

#[test]
#[ignore = "needs PyTorch and msprobe: tests/run.sh installs them and runs this"]
fn fresh_requires_grad_and_scalar_checks_agree_with_msprobe() {
    let out = tempfile::tempdir().expect("temp");
    crate::common::run_e2e_script("accuracy_checks.py", out.path());
    for task in ["tensor", "statistics"] {
        let (c, _) = check_against_msprobe(&out.path().join("checks"), task);
        check_first_divergence(&c, "checks", "Torch.mul.0.forward");
    }
}

#[test]
#[ignore = "needs PyTorch and msprobe: tests/run.sh installs them and runs this"]
fn a_fresh_npy_and_msprobe_dump_of_one_model_pair_through_the_links() {
    let out = tempfile::tempdir().expect("temp");
    crate::common::run_e2e_script("accuracy_mixed.py", out.path());
    super::accuracy_mixed::check_tensor_mode(out.path());
}
