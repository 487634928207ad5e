//! Repeat-group truth regenerated with real PyTorch and transformers:
//! `tests/e2e/repeat_truth_hf.py` writes every case into a temp folder, and the groups it
//! computes from each config must be the committed ones (`repeat_truth.rs`).

use super::repeat_truth::{CASES, groups_json, truth_groups};
use crate::common::fixture;

#[test]
#[ignore = "needs PyTorch and transformers: tests/run.sh installs them and runs this"]
fn e2e_torch_repeat_groups() {
    let out_dir = tempfile::tempdir().expect("temp");
    crate::common::run_e2e_script("repeat_truth_hf.py", out_dir.path());
    for case in CASES {
        let fresh = out_dir.path().join(case);
        let committed = fixture("repeat_truth_hf").join(case);
        assert_eq!(truth_groups(&fresh), truth_groups(&committed), "{case}");
        assert_eq!(groups_json(&fresh), groups_json(&committed), "{case}");
        assert!(
            super::modules::model_dir(&fresh)
                .join("backward/003_aot_backward_graph_after_eliminate_dead_code.txt")
                .is_file(),
            "{case}: no backward"
        );
        // fxray's groups on the fresh graphs are the fresh config's, in both phases.
        for pass in [
            "forward/000_aot_forward_graph.txt",
            "backward/000_aot_backward_graph.txt",
            "backward/003_aot_backward_graph_after_eliminate_dead_code.txt",
        ] {
            let pass = super::modules::model_dir(&fresh).join(pass);
            super::repeat_groups::check_layer_groups(case, &fresh, &pass);
        }
    }
}
