//! `fxray compare` through the binary: the JSON shape of docs/formats.md §4.4, msprobe's CSV
//! columns with `--csv`, msprobe's own CSV as input, and one-line errors.

use crate::common::{fixture, fxray, stdout_json};
use std::collections::BTreeSet;

fn keys(v: &serde_json::Value) -> BTreeSet<String> {
    v.as_object().expect("object").keys().cloned().collect()
}

fn set(k: &[&str]) -> BTreeSet<String> {
    k.iter().map(|s| s.to_string()).collect()
}

#[test]
fn json_has_exactly_the_documented_shape() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (target, golden) = super::accuracy_npy::perturbed_pair(
        tmp.path(),
        &fixture("accuracy/showcase_npy/target_overrides"),
    );
    let csv = tmp.path().join("out.csv");
    let out = fxray(&[
        "compare",
        target.to_str().unwrap(),
        golden.to_str().unwrap(),
        "--step",
        "0",
        "--json",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let v = stdout_json(&out);
    assert_eq!(keys(&v), set(&["pairs", "unpaired", "first_divergence"]));
    let pairs = v["pairs"].as_array().expect("pairs");
    assert_eq!(pairs.len(), 646, "every file of step 0 paired");
    let want = set(&[
        "key",
        "golden_key",
        "node",
        "slot",
        "dtype",
        "golden_dtype",
        "shape",
        "cosine",
        "euc_dist",
        "max_abs_err",
        "max_rel_err",
        "one_thousandth_ratio",
        "five_thousandths_ratio",
        "norm_ratio",
        "added_error",
        "result",
        "reason",
    ]);
    for p in pairs {
        assert_eq!(keys(p), want);
        assert!(["pass", "warning", "error"].contains(&p["result"].as_str().unwrap()));
    }
    let out0 = pairs
        .iter()
        .find(|p| p["key"] == "_softmax_1.OUTPUT.0")
        .expect("the perturbed output");
    assert_eq!(out0["node"], "_softmax_1");
    assert_eq!(out0["slot"], "OUTPUT.0");
    assert_eq!(out0["dtype"], "<f4");
    assert!(out0["cosine"].as_f64().unwrap() < 0.99995);
    assert!(out0["added_error"].as_f64().unwrap() > 0.005);
    assert_eq!(keys(&v["unpaired"]), set(&["target", "golden"]));
    assert_eq!(keys(&v["first_divergence"]), set(&["key", "node", "why"]));
    assert_eq!(v["first_divergence"]["node"], "_softmax_1");
    // The CSV has msprobe's tensor-mode header, word for word.
    let msprobe_header = std::fs::read_to_string(fixture(
        "accuracy/perturb/msprobe_tensor/compare_result_tensor.csv",
    ))
    .expect("msprobe csv");
    let ours = std::fs::read_to_string(&csv).expect("--csv written");
    assert_eq!(ours.lines().next(), msprobe_header.lines().next());
    assert_eq!(ours.lines().count(), 647);
}

#[test]
fn msprobes_own_csv_is_read_and_judged() {
    let csv = fixture("accuracy/scale/msprobe_tensor/compare_result_tensor.csv");
    let out = fxray(&["compare", csv.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("first divergence: Torch.mul.0.forward.output.0"),
        "{text}"
    );
    let v = stdout_json(&fxray(&["compare", csv.to_str().unwrap(), "--json"]));
    // msprobe's Result of every row as it wrote it: all pass.
    assert!(
        v["pairs"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["result"] == "pass")
    );
    assert_eq!(v["unpaired"]["target"].as_array().unwrap().len(), 3);
}

#[test]
fn user_errors_are_one_line_with_exit_code_1() {
    let showcase = fixture("showcase/data_dump");
    for args in [
        vec!["compare", showcase.to_str().unwrap()],
        vec!["compare", "/no/such/dump", showcase.to_str().unwrap()],
        vec![
            "compare",
            showcase.to_str().unwrap(),
            showcase.to_str().unwrap(),
            "--step",
            "7",
        ],
    ] {
        let out = fxray(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn with_a_graph_msprobe_pairs_name_their_node() {
    // The showcase's msprobe statistics dump against itself, linked to the graph that ran.
    let dump = fixture("showcase/msprobe_dump");
    let graph = crate::common::pass_files("showcase", "forward")
        .pop()
        .expect("last pass");
    let v = stdout_json(&fxray(&[
        "compare",
        dump.to_str().unwrap(),
        dump.to_str().unwrap(),
        "--graph",
        graph.to_str().unwrap(),
        "--json",
    ]));
    let pairs = v["pairs"].as_array().expect("pairs");
    let named = pairs.iter().filter(|p| p["node"].is_string()).count();
    // 32 of 32 step-0 module entries link to a node (docs/formats.md §4.1).
    assert!(named * 10 >= pairs.len() * 9, "{named} of {}", pairs.len());
    assert!(v["first_divergence"].is_null(), "a dump against itself");
    assert!(pairs.iter().all(|p| p["result"] == "pass"));
}

#[test]
fn an_archive_or_a_run_folder_is_a_side() {
    // The golden packed as a .tar.gz (read in place), the target the showcase's run folder
    // (which holds the npy dump and an msprobe dump: both sides have npy, so npy is compared).
    let tmp = tempfile::tempdir().expect("tmp");
    let tgz = tmp.path().join("golden.tar.gz");
    super::archive::pack_tar_gz(&fixture("showcase/data_dump"), &tgz);
    let v = stdout_json(&fxray(&[
        "compare",
        fixture("showcase").to_str().unwrap(),
        tgz.to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(v["pairs"].as_array().unwrap().len(), 646);
    assert!(v["first_divergence"].is_null());
    for p in v["pairs"].as_array().unwrap() {
        assert!(
            p["cosine"].as_f64().is_none_or(|c| (c - 1.0).abs() < 1e-12),
            "{p}"
        );
        assert!(p["max_abs_err"].as_f64().is_none_or(|e| e == 0.0), "{p}");
    }
}
