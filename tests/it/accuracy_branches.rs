//! Renumbered node names with parallel branches run in another order: the inputs' pairs rule of
//! the npy pairing (issue 23). Two small dumps are written here in TorchAir's layout
//! (docs/formats.md §3.1): `sin(x)` and `cos(x)`, then a `mul` of each with itself. The golden
//! names them `sin, cos, mul, mul_1`; the target, compiled another way, `sin_1, cos_1, mul_1,
//! mul_2` and runs the cos branch's `mul` first. Order alone would pair the target's first `mul`
//! (cos²) with the golden's first (sin²); the inputs say which is which.

use fxray::analysis::accuracy::PairedBy;
use fxray::pipeline::compare::{self, Options};
use std::path::Path;

/// A little-endian f32 `.npy` (format 1.0) of shape [4, 4].
fn npy(values: &[f32]) -> Vec<u8> {
    let mut h = "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 4), }".to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut v = b"\x93NUMPY\x01\x00".to_vec();
    v.extend_from_slice(&(h.len() as u16).to_le_bytes());
    v.extend_from_slice(h.as_bytes());
    for x in values {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v
}

/// One node call: its inputs and output, at call number `k` (the timestamp orders them).
fn call(step: &Path, k: u32, node: &str, target: &str, inputs: &[&[f32]], out: &[f32]) {
    let ts = format!("2026120300000000{k:04}");
    for (i, x) in inputs.iter().enumerate() {
        let name = format!("{node}-{target}.INPUT.{i}.{ts}.npy");
        std::fs::write(step.join(name), npy(x)).unwrap();
    }
    std::fs::write(
        step.join(format!("{node}-{target}.OUTPUT.0.{ts}.npy")),
        npy(out),
    )
    .unwrap();
}

/// Writes one side; `names` are (sin, cos, mul of sin, mul of cos), `cos_first` runs the cos
/// branch's mul first, `bump` is added to the sin branch's mul output.
fn side(root: &Path, names: [&str; 4], cos_first: bool, bump: f32) {
    let step = root.join("worldsize1_global_rank0/graph_1/0");
    std::fs::create_dir_all(&step).unwrap();
    let x: Vec<f32> = (0..16).map(|i| 0.1 * i as f32 + 0.05).collect();
    let s: Vec<f32> = x.iter().map(|v| v.sin()).collect();
    let c: Vec<f32> = x.iter().map(|v| v.cos()).collect();
    let ss: Vec<f32> = s.iter().map(|v| v * v + bump).collect();
    let cc: Vec<f32> = c.iter().map(|v| v * v).collect();
    call(&step, 0, names[0], "aten.sin.default", &[&x], &s);
    call(&step, 1, names[1], "aten.cos.default", &[&x], &c);
    let (k_ss, k_cc) = if cos_first { (3, 2) } else { (2, 3) };
    call(&step, k_ss, names[2], "aten.mul.Tensor", &[&s, &s], &ss);
    call(&step, k_cc, names[3], "aten.mul.Tensor", &[&c, &c], &cc);
}

#[test]
fn parallel_branches_renumbered_and_reordered_pair_by_their_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let (target, golden) = (tmp.path().join("target"), tmp.path().join("golden"));
    side(&golden, ["sin", "cos", "mul", "mul_1"], false, 0.0);
    // The sin branch's mul is perturbed in the target: the first divergence.
    side(&target, ["sin_1", "cos_1", "mul_2", "mul_1"], true, 0.01);
    let (c, _) = compare::compare(&target, &golden, &Options::default()).expect("compare");
    let outputs: Vec<(&str, &str, PairedBy)> = c
        .pairs
        .iter()
        .filter(|p| p.slot == "OUTPUT.0")
        .map(|p| (p.key.as_str(), p.golden_key.as_str(), p.paired_by))
        .collect();
    assert_eq!(
        outputs,
        [
            ("sin_1.OUTPUT.0", "sin.OUTPUT.0", PairedBy::Order),
            ("cos_1.OUTPUT.0", "cos.OUTPUT.0", PairedBy::Order),
            ("mul_1.OUTPUT.0", "mul_1.OUTPUT.0", PairedBy::Inputs),
            ("mul_2.OUTPUT.0", "mul.OUTPUT.0", PairedBy::Order),
        ],
        "{}",
        c.pairing
    );
    assert!(c.pairing.contains("inputs' pairs"), "{}", c.pairing);
    assert_eq!(c.pairs.len(), 10, "every tensor paired: 2 + 2 + 3 + 3");
    // Pairs of the same tensors: every one exact but the perturbed mul's output.
    for p in &c.pairs {
        let e = p.error.expect("computed");
        if p.key == "mul_2.OUTPUT.0" {
            assert!(e > 1e-3, "{}: {e}", p.key);
        } else {
            assert_eq!(e, 0.0, "{} vs {}", p.key, p.golden_key);
        }
    }
    let f = c.first_divergence.as_ref().expect("a divergence");
    assert_eq!(f.node.as_deref(), Some("mul_2"), "{}", f.why);
}
