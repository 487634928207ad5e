//! Pairing that names cannot fool (issue 34): `tests/e2e/accuracy_renamed.py` traces a target
//! with an identity pair (`* 1.0`, `+ 0.0`) inserted among six scales, so the target's later
//! `mul`s are renamed while four of six same-named `mul`s still agree; its softmax output is
//! perturbed. Names alone paired the identity `mul_4` (× 1.0) with the golden's `mul_4` (× 1.5)
//! and reported the first divergence there; the inputs' values pair each call with the one
//! computing on the same numbers. Checked in both directions against the traced graphs' truth.

use crate::common::fixture;
use fxray::pipeline::compare::{self, Options};
use serde_json::Value;
use std::path::Path;

pub fn check(dir: &Path) {
    let truth: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).expect("truth"))
            .expect("json");
    let faulty = truth["faulty"].as_str().expect("faulty");
    let mut extra: Vec<&str> = truth["only_in_target"]
        .as_array()
        .expect("extra")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    extra.sort_unstable();
    let (t, g) = (dir.join("target"), dir.join("golden"));
    for (a, b, extra_is_target) in [(&t, &g, true), (&g, &t, false)] {
        let (c, _) = compare::compare(a, b, &Options::default()).expect("compare");
        let d = c.first_divergence.as_ref().expect("a divergence");
        assert_eq!(d.node.as_deref(), Some(faulty), "{}: {d:?}", a.display());
        // The identity pair is what only one side runs; nothing else is left unpaired.
        let (only, other) = if extra_is_target {
            (&c.unpaired_target, &c.unpaired_golden)
        } else {
            (&c.unpaired_golden, &c.unpaired_target)
        };
        let mut calls: Vec<&str> = only.iter().map(|u| u.call.as_str()).collect();
        calls.sort_unstable();
        calls.dedup();
        assert_eq!(calls, extra, "{}", a.display());
        assert!(other.is_empty(), "{other:?}");
        // The renamed scale pairs with the one computing on the same numbers.
        let (tk, gk) = if extra_is_target {
            ("mul_5.OUTPUT.0", "mul_4.OUTPUT.0")
        } else {
            ("mul_4.OUTPUT.0", "mul_5.OUTPUT.0")
        };
        let p = c.pairs.iter().find(|p| p.key == tk).expect("paired");
        assert_eq!(p.golden_key, gk);
        assert!(
            c.pairing.contains("paired by their inputs' values"),
            "{}",
            c.pairing
        );
    }
}

#[test]
fn renamed_nodes_pair_by_their_inputs_values_in_both_directions() {
    check(&fixture("accuracy/renamed"));
}

#[test]
#[ignore = "needs PyTorch: tests/run.sh installs it and runs this"]
fn e2e_torch_renamed_nodes_pair_by_values() {
    let out = tempfile::tempdir().expect("temp");
    crate::common::run_e2e_script("accuracy_renamed.py", out.path());
    check(out.path());
}
