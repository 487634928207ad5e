//! Accuracy compare of two TorchAir npy dumps: the showcase's step 0 as golden, and a copy as
//! target with `_softmax_1`'s output perturbed (the files `tests/e2e/accuracy_npy_truth.py`
//! wrote into `tests/fixtures/accuracy/showcase_npy/target_overrides/`, beside msprobe's own
//! metric code's numbers for every pair). Also renumbered node names, and bad input: each bad
//! pair gets one line and the rest is still compared.

use crate::common::{copy_tree, fixture};
use fxray::analysis::accuracy::{Comparison, Level, Metric, PairedBy};
use fxray::pipeline::compare::{self, CompareError, Options};
use std::path::{Path, PathBuf};

const NODE: &str = "_softmax_1";

fn showcase_rank() -> PathBuf {
    fixture("showcase/data_dump/worldsize1_global_rank0")
}

fn truth_dir() -> PathBuf {
    fixture("accuracy/showcase_npy")
}

/// `<tmp>/golden` and `<tmp>/target`: the showcase's rank folder twice, the target with the
/// perturbed files of `overrides` copied over step 0.
pub fn perturbed_pair(tmp: &Path, overrides: &Path) -> (PathBuf, PathBuf) {
    let golden = tmp.join("golden/worldsize1_global_rank0");
    let target = tmp.join("target/worldsize1_global_rank0");
    copy_tree(&showcase_rank(), &golden);
    copy_tree(&showcase_rank(), &target);
    for e in std::fs::read_dir(overrides).expect("overrides") {
        let e = e.expect("entry");
        std::fs::copy(e.path(), target.join("graph_1/0").join(e.file_name())).expect("copy");
    }
    (tmp.join("target"), tmp.join("golden"))
}

fn step0() -> Options {
    Options {
        step: Some(0),
        ..Default::default()
    }
}

/// Checks every pair against the numbers msprobe's code computed (`msprobe_metrics.json`).
pub fn check_against_truth(c: &Comparison, truth: &serde_json::Value) {
    let metrics = truth["metrics"].as_object().expect("metrics");
    let mut checked = 0;
    for p in &c.pairs {
        let Some(want) = metrics.get(&p.key) else {
            continue;
        };
        let m = p
            .metrics
            .as_ref()
            .unwrap_or_else(|| panic!("{}: {}", p.key, p.reason));
        let ours = m.msprobe_six();
        for (k, (a, w)) in ours.iter().zip(want.as_array().expect("six")).enumerate() {
            let w = Metric::parse(w.as_str().expect("text")).expect("metric");
            match (a, w) {
                (Metric::Value(x), Metric::Value(y)) => {
                    let tol = 1e-5 * x.abs().max(y.abs()) + 1e-12;
                    assert!(
                        (x - y).abs() <= tol,
                        "{} column {k}: {x} vs msprobe {y}",
                        p.key
                    );
                }
                // msprobe writes `Nan` where a 0-d max error is NaN; both sides agree on words.
                _ => assert_eq!(*a, w, "{} column {k}", p.key),
            }
        }
        checked += 1;
    }
    // Every file msprobe could load is a pair of fxray's (object arrays are neither).
    assert_eq!(
        checked,
        metrics.len(),
        "pairs checked against msprobe's numbers"
    );
}

#[test]
fn a_perturbed_node_is_the_first_divergence_and_metrics_equal_msprobes() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (target, golden) = perturbed_pair(tmp.path(), &truth_dir().join("target_overrides"));
    let (c, _) = compare::compare(&target, &golden, &step0()).expect("compare");
    let truth: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(truth_dir().join("msprobe_metrics.json")).expect("truth"),
    )
    .expect("json");
    assert_eq!(truth["node"], NODE);
    check_against_truth(&c, &truth);
    let f = c.first_divergence.as_ref().expect("a divergence");
    assert_eq!(f.node.as_deref(), Some(NODE), "{}", f.why);
    assert_eq!(f.key, format!("{NODE}.OUTPUT.0"));
    // Pairs by node name, all of them, nothing left over; the index finds the node's pairs.
    assert!(c.pairs.iter().all(|p| p.paired_by == PairedBy::Key));
    assert!(c.unpaired_target.is_empty() && c.unpaired_golden.is_empty());
    assert_eq!(c.pairs_of(NODE).count(), 4, "3 inputs and the output");
    assert!(c.node_error(NODE).expect("error") > 0.005);
    // Without --step, the first step both sides have is compared, and the other named.
    let (d, _) = compare::compare(&target, &golden, &Options::default()).expect("compare");
    assert_eq!(d.pairs.len(), c.pairs.len());
    assert!(
        d.notes
            .iter()
            .any(|n| n.starts_with("steps 0, 1 are on both sides: step 0 compared")),
        "{:?}",
        d.notes
    );
}

/// `add_3` → `add_4`, `add` → `add_1`: every family's numbers shifted by one, as another
/// torch version's numbering would; the targets and order stay.
fn renumber(dir: &Path) {
    let step = dir.join("graph_1/0");
    let files: Vec<PathBuf> = std::fs::read_dir(&step)
        .expect("step")
        .map(|e| e.expect("entry").path())
        .collect();
    for p in files {
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let (node, rest) = name.split_once('-').expect("node-target");
        let (stem, n) = match node.rsplit_once('_') {
            Some((s, n)) if n.parse::<u32>().is_ok() => {
                (s.to_string(), n.parse::<u32>().unwrap() + 1)
            }
            _ => (node.to_string(), 1),
        };
        let renamed = format!("{stem}_{n}-{rest}");
        std::fs::rename(&p, step.join(renamed)).expect("rename");
    }
}

#[test]
fn renumbered_node_names_pair_by_target_and_order() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (target, golden) = perturbed_pair(tmp.path(), &truth_dir().join("target_overrides"));
    renumber(&target.join("worldsize1_global_rank0"));
    let (c, _) = compare::compare(&target, &golden, &step0()).expect("compare");
    assert!(c.pairing.contains("renumbered"), "{}", c.pairing);
    // Every tensor finds its own: the same number of pairs as files, each to the node it was
    // renamed from, and the metrics those of the original pairs.
    let truth: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(truth_dir().join("msprobe_metrics.json")).expect("truth"),
    )
    .expect("json");
    let files = std::fs::read_dir(golden.join("worldsize1_global_rank0/graph_1/0"))
        .expect("dir")
        .count();
    assert_eq!(c.pairs.len(), files);
    for p in &c.pairs {
        let (node, slot) = p.golden_key.split_once('.').expect("key");
        let (tnode, tslot) = p.key.split_once('.').expect("key");
        assert_eq!(slot, tslot);
        let stem = node
            .rsplit_once('_')
            .filter(|(_, n)| n.parse::<u32>().is_ok());
        let want = match stem {
            Some((s, n)) => format!("{s}_{}", n.parse::<u32>().unwrap() + 1),
            None => format!("{node}_1"),
        };
        assert_eq!(tnode, want, "{} paired with {}", p.key, p.golden_key);
    }
    let f = c.first_divergence.as_ref().expect("divergence");
    assert_eq!(f.node.as_deref(), Some("_softmax_2"), "{}", f.why);
    // msprobe's numbers, keyed by the golden's names.
    let mut renamed = c.clone();
    for p in &mut renamed.pairs {
        p.key = p.golden_key.clone();
    }
    check_against_truth(&renamed, &truth);
}

fn rewrite_npy(path: &Path, f: impl Fn(&[u8], usize) -> Vec<u8>) {
    let bytes = std::fs::read(path).expect("read");
    let header = u16::from_le_bytes([bytes[8], bytes[9]]) as usize + 10;
    std::fs::write(path, f(&bytes, header)).expect("write");
}

fn file_of(dir: &Path, node: &str, slot: &str) -> PathBuf {
    std::fs::read_dir(dir.join("worldsize1_global_rank0/graph_1/0"))
        .expect("dir")
        .map(|e| e.expect("e").path())
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with(&format!("{node}-")) && n.contains(&format!(".{slot}."))
        })
        .unwrap_or_else(|| panic!("{node} {slot}"))
}

#[test]
fn bad_pairs_get_one_line_each_and_the_rest_is_compared() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (target, golden) = perturbed_pair(tmp.path(), &truth_dir().join("target_overrides"));
    // A cut file: the last 100 bytes gone.
    let cut = file_of(&target, "bmm_3", "OUTPUT.0");
    rewrite_npy(&cut, |b, _| b[..b.len() - 100].to_vec());
    // Another shape: the golden's header says one thing, the target's another.
    let reshaped = file_of(&target, "_softmax", "OUTPUT.0");
    rewrite_npy(&reshaped, |b, h| {
        let text = String::from_utf8_lossy(&b[10..h]).into_owned();
        let (pre, post) = text.split_once("'shape': (").expect("shape");
        let (dims, rest) = post.split_once(')').expect("dims");
        let d: Vec<u64> = dims
            .split(',')
            .filter_map(|x| x.trim().parse().ok())
            .collect();
        let flat: u64 = d.iter().product();
        let mut header = format!("{pre}'shape': ({flat},){rest}");
        while (10 + header.len()) % 64 != 0 {
            header.insert(header.len() - 1, ' ');
        }
        let mut out = b[..8].to_vec();
        out.extend((header.len() as u16).to_le_bytes());
        out.extend(header.as_bytes());
        out.extend(&b[h..]);
        out
    });
    // Garbage where a tensor should be.
    let garbage = file_of(&target, "bmm", "INPUT.0");
    std::fs::write(&garbage, b"not an array").expect("write");
    let (c, _) = compare::compare(&target, &golden, &step0()).expect("compare");
    let pair = |k: &str| {
        c.pairs
            .iter()
            .find(|p| p.key == k)
            .unwrap_or_else(|| panic!("{k}"))
    };
    let p = pair("bmm_3.OUTPUT.0");
    assert_eq!(p.result, Level::Error);
    assert!(
        p.reason.contains("cut file") && !p.reason.contains('\n'),
        "{}",
        p.reason
    );
    let p = pair("_softmax.OUTPUT.0");
    assert_eq!(
        p.metrics.as_ref().expect("metrics").cosine,
        Metric::ShapeUnmatched
    );
    assert!(
        p.messages.iter().any(|m| m.contains("shape")),
        "{:?}",
        p.messages
    );
    let p = pair("bmm.INPUT.0");
    assert_eq!(p.result, Level::Error);
    assert!(p.reason.contains("not a .npy file"), "{}", p.reason);
    // The rest is compared: the perturbed node is still the first divergence found after
    // them in order, and the clean pairs are clean.
    let clean = c.pairs.iter().filter(|p| p.error == Some(0.0)).count();
    assert!(clean > c.pairs.len() / 2, "{clean} of {}", c.pairs.len());
}

#[test]
fn a_step_or_rank_only_one_side_has_is_named() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (target, golden) = perturbed_pair(tmp.path(), &truth_dir().join("target_overrides"));
    std::fs::remove_dir_all(golden.join("worldsize1_global_rank0/graph_1/1")).expect("rm");
    // Asked for a step the golden lacks: one line, nothing to compare.
    let err = compare::compare(
        &target,
        &golden,
        &Options {
            step: Some(1),
            ..Default::default()
        },
    )
    .expect_err("golden has no step 1");
    assert!(matches!(err, CompareError::NoSuch { .. }));
    assert_eq!(err.to_string(), "golden has no step 1 (it has: 0)");
    // Not asked: step 0 is compared and the target's step 1 noted.
    let (c, _) = compare::compare(&target, &golden, &Options::default()).expect("compare");
    assert!(
        c.notes
            .iter()
            .any(|n| n == "step 1: only the target has it, not compared"),
        "{:?}",
        c.notes
    );
    assert!(c.first_divergence.is_some());
    // A second rank on the target only.
    copy_tree(
        &target.join("worldsize1_global_rank0"),
        &target.join("worldsize2_global_rank1"),
    );
    let (c, _) = compare::compare(&target, &golden, &Options::default()).expect("compare");
    assert!(
        c.notes
            .iter()
            .any(|n| n == "rank 1: only the target has it, not compared"),
        "{:?}",
        c.notes
    );
    let err = compare::compare(
        &target,
        &golden,
        &Options {
            rank: Some(1),
            ..Default::default()
        },
    )
    .expect_err("golden has no rank 1");
    assert_eq!(err.to_string(), "golden has no rank 1 (it has: 0)");
}

#[test]
fn no_dump_at_all_is_one_clear_line() {
    let tmp = tempfile::tempdir().expect("tmp");
    let err = compare::compare(tmp.path(), &showcase_rank(), &Options::default())
        .expect_err("empty folder");
    let msg = err.to_string();
    assert!(
        msg.starts_with("target ") && msg.contains("no TorchAir npy dump"),
        "{msg}"
    );
    assert!(!msg.contains('\n'));
    let err = compare::compare(
        &tmp.path().join("nope"),
        &showcase_rank(),
        &Options::default(),
    )
    .expect_err("missing");
    assert!(err.to_string().ends_with("no such file or folder"), "{err}");
    let err = compare::compare(
        &showcase_rank(),
        &fixture("showcase/msprobe_dump"),
        &Options::default(),
    )
    .expect_err("mixed");
    assert!(matches!(err, CompareError::Mixed { .. }), "{err}");
}
