//! The first view of a real model, regenerated with real PyTorch and transformers:
//! `tests/e2e/module_truth_hf.py` compiles the 6-layer Qwen3-MoE training step into a temp
//! folder, and the window opens it as `ui_first_view` asks of the committed case.

use super::ui_first_view::{CASE, check_first_view};

#[test]
#[ignore = "needs PyTorch and transformers: tests/run.sh installs them and runs this"]
fn e2e_torch_first_view() {
    let out_dir = tempfile::tempdir().expect("temp");
    crate::common::run_e2e_cases("module_truth_hf.py", out_dir.path(), &[CASE]);
    check_first_view(&out_dir.path().join(CASE));
}
