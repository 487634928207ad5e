//! An npy dump against an msprobe dump of the same model, paired through the msprobe→node links
//! (issue 23). `tests/fixtures/accuracy/mixed` (`tests/e2e/accuracy_mixed.py`): real msprobe
//! (tensor and statistics mode) of the eager MLP as golden; the same model compiled (npugraph_ex
//! layout, real FX passes) and its last forward graph dumped in TorchAir's npy layout with the
//! gelu node's output perturbed. `truth.json` holds torch's answer: which node of the graph holds
//! each msprobe output (max |Δ| < 1e-5 on the unperturbed run).

use crate::common::{fixture, fxray, stdout_json};
use fxray::analysis::accuracy::{Comparison, Level, Mode, PairedBy};
use fxray::pipeline::compare::{self, CompareError, Options};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    fixture("accuracy/mixed")
}

fn truth(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).unwrap()).unwrap()
}

fn graph(dir: &Path) -> PathBuf {
    dir.join(truth(dir)["graph"].as_str().unwrap())
}

fn with_graph(dir: &Path) -> Options {
    Options {
        graph: Some(graph(dir)),
        ..Default::default()
    }
}

/// (npy key, msprobe key) of every pair, whichever side is the target.
fn pairs(c: &Comparison, npy_is_target: bool) -> Vec<(String, String)> {
    c.pairs
        .iter()
        .map(|p| {
            assert_eq!(p.paired_by, PairedBy::Link, "{}", p.key);
            if npy_is_target {
                (p.key.clone(), p.golden_key.clone())
            } else {
                (p.golden_key.clone(), p.key.clone())
            }
        })
        .collect()
}

/// Every msprobe output the links reach pairs with the output of the node torch says holds it;
/// inputs pair by shape within the call; the perturbed gelu is the first divergence.
fn check(c: &Comparison, dir: &Path, npy_is_target: bool) {
    let t = truth(dir);
    let got = pairs(c, npy_is_target);
    let holders = t["msprobe_output_nodes"].as_object().unwrap();
    assert_eq!(holders.len(), 5, "linear, gelu, linear, silu, linear");
    for (key, nodes) in holders {
        let node = nodes[0].as_str().unwrap();
        let want = (format!("{node}.OUTPUT.0"), key.clone());
        // silu: the pattern pass split it into `x * sigmoid(x)`; no silu node to link it to.
        assert_eq!(
            got.contains(&want),
            !key.contains("silu"),
            "{want:?} in {got:?}"
        );
    }
    // linear(x, w, b) against addmm(b, x, wᵀ): x and b pair, the transposed weight does not.
    for want in [
        ("addmm.INPUT.0", "Functional.linear.0.forward.input.2"),
        ("addmm.INPUT.1", "Functional.linear.0.forward.input.0"),
        ("gelu.INPUT.0", "Functional.gelu.0.forward.input.0"),
        ("addmm_2.INPUT.1", "Functional.linear.2.forward.input.0"),
    ] {
        let want = (want.0.to_string(), want.1.to_string());
        assert!(got.contains(&want), "{want:?} in {got:?}");
    }
    assert_eq!(
        got.len(),
        4 + 2 * 3 + 1,
        "4 outputs; x and b of 3 linears; gelu's input"
    );
    let (npy_left, probe_left) = if npy_is_target {
        (&c.unpaired_target, &c.unpaired_golden)
    } else {
        (&c.unpaired_golden, &c.unpaired_target)
    };
    // What the compiler made that no eager call names, listed with its node.
    for key in [
        "t.OUTPUT.0",
        "t_1.OUTPUT.0",
        "t_2.OUTPUT.0",
        "sigmoid_default.OUTPUT.0",
        "mul_tensor.OUTPUT.0",
    ] {
        let u = npy_left
            .iter()
            .find(|u| u.key == key)
            .unwrap_or_else(|| panic!("{key} unpaired"));
        assert_eq!(u.node.as_deref(), key.split('.').next());
    }
    // The three weights (transposed on the npy side) with the node of their call, and silu.
    let left: Vec<(&str, Option<&str>)> = probe_left
        .iter()
        .map(|u| (u.key.as_str(), u.node.as_deref()))
        .collect();
    assert_eq!(
        left,
        [
            ("Functional.linear.0.forward.input.1", Some("addmm")),
            ("Functional.linear.1.forward.input.1", Some("addmm_1")),
            ("Functional.silu.0.forward.input.0", None),
            ("Functional.silu.0.forward.output.0", None),
            ("Functional.linear.2.forward.input.1", Some("addmm_2")),
        ]
    );
    let f = c.first_divergence.as_ref().expect("a divergence");
    assert_eq!(
        f.node.as_deref(),
        Some(t["gelu_node"].as_str().unwrap()),
        "{}",
        f.why
    );
    // Before gelu the two runs agree (compiled addmm against eager linear: rounding only).
    let linear0 = c
        .pairs
        .iter()
        .find(|p| p.node.as_deref() == Some("addmm"))
        .unwrap();
    assert!(linear0.error.unwrap() < 1e-5, "{linear0:?}");
    // `<f4` and `torch.float32` are one dtype: msprobe's dtype check does not fail the pair.
    assert_eq!(linear0.result, Level::Pass, "{}", linear0.reason);
}

/// The npy dump of `dir` against its msprobe tensor dump: every check above, and the perturbed
/// gelu's metrics computed from both files.
pub fn check_tensor_mode(dir: &Path) {
    let (c, d) = compare::compare(
        &dir.join("target_npy"),
        &dir.join("golden_tensor"),
        &with_graph(dir),
    )
    .expect("compare");
    assert_eq!(c.mode, Some(Mode::Tensor));
    assert!(
        c.pairing.starts_with("npy nodes and msprobe calls paired"),
        "{}",
        c.pairing
    );
    assert!(d.golden.contains("msprobe tensor dump"), "{}", d.golden);
    check(&c, dir, true);
    // Tensor mode: the gelu output's metrics are computed from both files.
    let g = c
        .pairs
        .iter()
        .find(|p| p.key == "gelu.OUTPUT.0")
        .expect("gelu's output");
    let m = g.metrics.as_ref().expect("metrics");
    assert!(m.max_abs_err.value().unwrap() > 0.05, "{m:?}");
    assert!(g.error.unwrap() > 0.01);
}

#[test]
fn an_npy_dump_against_msprobe_tensors_pairs_through_the_links() {
    check_tensor_mode(&dir());
}

#[test]
fn msprobe_statistics_as_target_against_the_npy_dump() {
    let (c, _) = compare::compare(
        &dir().join("golden_statistics"),
        &dir().join("target_npy"),
        &with_graph(&dir()),
    )
    .expect("compare");
    // The npy side's statistics are computed from its files.
    assert_eq!(c.mode, Some(Mode::Statistics));
    check(&c, &dir(), false);
    assert!(
        c.pairs.iter().all(|p| p.stats.is_some()),
        "every pair has both summaries"
    );
}

#[test]
fn the_cli_compares_mixed_dumps_and_asks_for_the_graph_without_one() {
    let (npy, probe) = (dir().join("target_npy"), dir().join("golden_tensor"));
    let g = graph(&dir());
    let out = fxray(&[
        "compare",
        npy.to_str().unwrap(),
        probe.to_str().unwrap(),
        "--graph",
        g.to_str().unwrap(),
        "--json",
    ]);
    let v = stdout_json(&out);
    assert_eq!(v["first_divergence"]["node"], "gelu");
    let target: Vec<&str> = v["unpaired"]["target"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert!(target.contains(&"t.OUTPUT.0"), "{target:?}");
    let text = fxray(&[
        "compare",
        npy.to_str().unwrap(),
        probe.to_str().unwrap(),
        "--graph",
        g.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("only in target: t.OUTPUT.0 [t]"), "{text}");
    let err = compare::compare(&npy, &probe, &Options::default()).expect_err("no graph");
    assert!(matches!(err, CompareError::Mixed { .. }));
    let out = fxray(&["compare", npy.to_str().unwrap(), probe.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let msg = String::from_utf8_lossy(&out.stderr);
    assert!(
        msg.contains("--graph GRAPH_FILE") && msg.trim().lines().count() == 1,
        "{msg}"
    );
}
