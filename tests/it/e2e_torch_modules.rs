//! Module inference against torch's own `nn_module_stack`, regenerated with real PyTorch:
//! `tests/e2e/module_truth.py` compiles its three models into a temp folder, and the same
//! thresholds as on the committed fixtures (`modules.rs`) must hold.

use super::modules::{check_thresholds, model_dir, shares};
use std::path::Path;

#[test]
#[ignore = "needs PyTorch: tests/run.sh installs it and runs this"]
fn regenerated_truth_meets_the_thresholds() {
    let python = std::env::var("FXRAY_TEST_PYTHON")
        .expect("FXRAY_TEST_PYTHON must name a Python with torch installed (tests/run.sh sets it)");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/module_truth.py");
    let out_dir = tempfile::tempdir().expect("temp");
    let out = std::process::Command::new(python)
        .arg(&script)
        .arg(out_dir.path())
        .output()
        .expect("run module_truth.py");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut all = Vec::new();
    for arch in ["llama", "moe", "tied"] {
        all.extend(shares(arch, &model_dir(&out_dir.path().join(arch))));
    }
    check_thresholds(&all);
}
