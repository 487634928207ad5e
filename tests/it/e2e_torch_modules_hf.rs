//! Module inference on `transformers` architectures, regenerated with real PyTorch and
//! transformers: `tests/e2e/module_truth_hf.py` compiles every case into a temp folder, and the
//! goals the committed fixtures meet (`modules_hf.rs`) must hold on the fresh truth.

use super::modules_hf::check_all;

#[test]
#[ignore = "needs PyTorch and transformers: tests/run.sh installs them and runs this"]
fn e2e_torch_modules_hf() {
    let out_dir = tempfile::tempdir().expect("temp");
    crate::common::run_e2e_script("module_truth_hf.py", out_dir.path());
    check_all(out_dir.path());
}
