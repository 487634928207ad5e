//! No false alarm through any door of `fxray compare` (issue 55 item 1). npugraph_ex's `.pt`
//! tensor dump records neither ops nor inputs: evidence that names were renumbered must come
//! from each side's graph, and without it equal names pair. On the stage fixtures' all-right
//! case every tensor of a common name is bit-identical (`tests/e2e/stage_faults.py`), so no
//! door may report a departure; on `tests/e2e/golden_passes_off.py` (a golden run with passes
//! off, a real fault in one pass of the target) the first divergence is the fault's node, in
//! both directions.

use crate::common::{copy_tree, fixture, fxray};
use fxray::analysis::accuracy::{Comparison, Level};
use fxray::pipeline::compare::{self, Options};
use std::path::{Path, PathBuf};

fn right() -> PathBuf {
    fixture("stage_faults/right")
}

/// The phase's pass files, in order.
fn passes(run: &Path) -> Vec<PathBuf> {
    let index = fxray::pipeline::tree::index(run).expect("index");
    index.runs[0].models[0].phases[0]
        .passes
        .iter()
        .map(|p| p.path.clone())
        .collect()
}

fn no_departure(c: &Comparison, door: &str) {
    let bad: Vec<String> = c
        .pairs
        .iter()
        .filter(|p| p.result != Level::Pass)
        .map(|p| format!("{} ~ {}: {:?} {}", p.key, p.golden_key, p.result, p.reason))
        .collect();
    assert!(
        bad.is_empty(),
        "{door}: {} departures: {bad:?}\n{}",
        bad.len(),
        c.pairing
    );
    assert!(
        c.first_divergence.is_none(),
        "{door}: {:?}",
        c.first_divergence
    );
    assert!(!c.pairs.is_empty(), "{door}: nothing compared");
}

fn golden_compare(target: &Path, golden: &Path, o: &Options) -> Comparison {
    compare::compare(target, golden, o)
        .unwrap_or_else(|e| panic!("{} ~ {}: {e}", target.display(), golden.display()))
        .0
}

/// Every door of the golden compare, on bit-identical tensors: beside the run (each side read
/// through its own pass file), alone (names only), alone with either end's pass as `--graph`,
/// and with the window's list of the phase's passes; both directions.
#[test]
fn bit_identical_stage_tensors_depart_through_no_door() {
    let run = right();
    let (opt, orig) = (run.join("dump_optimized"), run.join("dump_original"));
    let all = passes(&run);
    let alone = tempfile::tempdir().expect("temp");
    for d in ["dump_optimized", "dump_original"] {
        copy_tree(&run.join(d), &alone.path().join(d));
    }
    let (a_opt, a_orig) = (
        alone.path().join("dump_optimized"),
        alone.path().join("dump_original"),
    );
    let first = all.first().cloned();
    let last = all.last().cloned();
    let doors: Vec<(&str, &Path, &Path, Options)> = vec![
        ("beside the run", &opt, &orig, Options::default()),
        ("alone", &a_opt, &a_orig, Options::default()),
        (
            "alone, --graph last pass",
            &a_opt,
            &a_orig,
            Options {
                graph: last.clone(),
                ..Default::default()
            },
        ),
        (
            "alone, --graph first pass",
            &a_opt,
            &a_orig,
            Options {
                graph: first.clone(),
                ..Default::default()
            },
        ),
        (
            "the window's passes",
            &a_opt,
            &a_orig,
            Options {
                graphs: all.clone(),
                ..Default::default()
            },
        ),
    ];
    for (door, t, g, o) in doors {
        no_departure(&golden_compare(t, g, &o), door);
        let back = format!("{door}, the other way");
        no_departure(&golden_compare(g, t, &o), &back);
    }
}

/// With each side's graph, the `.pt` nodes carry their ops and inputs: the dump beside its run
/// is read through its pass file, and says so.
#[test]
fn a_pt_dump_beside_its_run_is_read_through_its_own_pass_file() {
    let run = right();
    let c = golden_compare(
        &run.join("dump_optimized"),
        &run.join("dump_original"),
        &Options::default(),
    );
    let all = passes(&run);
    let said = |side: &str, pass: &Path| {
        c.notes
            .iter()
            .any(|n| n.starts_with(&format!("{side}: ")) && n.contains(&pass.display().to_string()))
    };
    assert!(said("target", all.last().unwrap()), "{:?}", c.notes);
    assert!(said("golden", all.first().unwrap()), "{:?}", c.notes);
    assert!(
        c.notes.iter().any(|n| n.contains("stage dumps of one run")),
        "{:?}",
        c.notes
    );
    // Inputs come from the graph: a pair of an input slot exists.
    assert!(c.pairs.iter().any(|p| p.slot.starts_with("INPUT.")));
}

/// The two stage dumps given as TARGET GOLDEN on the command line are compared as stages, in
/// either order, and it says so; msprobe's CSV keeps the golden compare.
#[test]
fn two_stage_dumps_given_as_target_and_golden_are_compared_as_stages() {
    let run = right();
    let (opt, orig) = (run.join("dump_optimized"), run.join("dump_original"));
    for (t, g) in [(&opt, &orig), (&orig, &opt)] {
        let out = fxray(&["compare", t.to_str().unwrap(), g.to_str().unwrap()]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let note = format!(
            "{} is the optimized and {} the original stage dump of one run",
            opt.display(),
            orig.display()
        );
        assert!(text.starts_with(&note), "{text}");
        assert!(
            text.contains("no pass changed the numbers beyond floating-point noise"),
            "{text}"
        );
    }
    let csv = tempfile::tempdir().expect("temp");
    let file = csv.path().join("c.csv");
    let out = fxray(&[
        "compare",
        opt.to_str().unwrap(),
        orig.to_str().unwrap(),
        "--csv",
        file.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("stage dump of one run"), "{text}");
    assert!(text.contains("first divergence: none"), "{text}");
}

/// A golden run with passes off, a real fault in one pass of the target only: the first
/// divergence is the fault's node, in both directions, each side naming it as its dump does.
pub fn check_golden_passes_off(dir: &Path) {
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).expect("truth"))
            .expect("json");
    assert_eq!(t["node_same"], false, "torch: the fault's node departs");
    let (target, golden) = (
        dir.join("target/dump_optimized"),
        dir.join("golden/dump_optimized"),
    );
    for (a, b, node) in [
        (&target, &golden, &t["target_node"]),
        (&golden, &target, &t["golden_node"]),
    ] {
        let c = golden_compare(a, b, &Options::default());
        let first = c
            .first_divergence
            .as_ref()
            .unwrap_or_else(|| panic!("{}: no divergence\n{}", a.display(), c.pairing));
        assert_eq!(
            first.node.as_deref(),
            node.as_str(),
            "{} ~ {}: {first:?}\n{}\n{:?}",
            a.display(),
            b.display(),
            c.pairing,
            c.notes
        );
    }
}

#[test]
fn a_golden_with_passes_off_diverges_first_at_the_targets_fault() {
    check_golden_passes_off(&fixture("golden_passes_off"));
}

#[test]
#[ignore = "needs PyTorch: tests/run.sh installs it and runs this"]
fn e2e_torch_golden_passes_off() {
    let out = tempfile::tempdir().expect("temp");
    crate::common::run_e2e_script("golden_passes_off.py", out.path());
    check_golden_passes_off(out.path());
}
