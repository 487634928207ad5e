//! The rank matrix against a launch made fresh with real PyTorch: `tests/e2e/launch_ranks.py`
//! spawns 4 ranks over gloo on 127.0.0.1 (rank 2 takes another branch in forward) into a temp
//! folder, and `fxray ranks` must give exactly the node counts and differing ranks of the
//! `truth.json` torch wrote beside it.

#[test]
#[ignore = "needs PyTorch: tests/run.sh installs it and runs this"]
fn a_fresh_four_rank_launch_matches_torchs_truth() {
    let out_dir = tempfile::tempdir().expect("temp");
    crate::common::run_e2e_script("launch_ranks.py", out_dir.path());
    let truth: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.path().join("truth.json")).expect("truth.json"),
    )
    .expect("truth JSON");
    assert_eq!(truth["ranks"], serde_json::json!([0, 1, 2, 3]));
    // torch's own record: only the diverging rank differs, and only in some graph files
    let differing = truth["differing_files"]
        .as_object()
        .expect("differing_files");
    assert_eq!(differing.keys().collect::<Vec<_>>(), vec!["2"]);
    // NaN injected into rank 3's input at step 1 shows first there, then on every rank through
    // the all-reduce (its output is saved before `wait_tensor`: whether the reduced NaN is in it
    // yet depends on gloo's timing)
    let nan = &truth["nan"];
    assert_eq!(nan["first"]["rank"], 3);
    assert_eq!(nan["first"]["step"], 1);
    for r in ["0", "1", "2"] {
        let n = nan["first_per_rank"][r].as_str().unwrap_or_default();
        assert!(n == "all_reduce" || n == "wait_tensor", "{nan}");
    }
    super::ranks::check_against_truth(out_dir.path());
}
