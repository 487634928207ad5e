//! Module inference against torch's own `nn_module_stack`, regenerated with real PyTorch:
//! `tests/e2e/module_truth.py` compiles its models into a temp folder, and the same
//! thresholds as on the committed fixtures (`modules.rs`) must hold.

use super::modules::{ARCHS, check_thresholds, model_dir, shares};

#[test]
#[ignore = "needs PyTorch: tests/run.sh installs it and runs this"]
fn regenerated_truth_meets_the_thresholds() {
    let out_dir = tempfile::tempdir().expect("temp");
    crate::common::run_e2e_script("module_truth.py", out_dir.path());
    let mut all = Vec::new();
    for arch in ARCHS {
        all.extend(shares(arch, &model_dir(&out_dir.path().join(arch))));
    }
    check_thresholds(&all, super::modules_hf::LEAF_GOAL);
}
