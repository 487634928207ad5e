//! Accuracy compare in the window (issue 23), driven like a user on the showcase: the run's
//! data dump with `_softmax_1`'s output perturbed (the files `tests/e2e/accuracy_npy_truth.py`
//! wrote) against the showcase's own dump as golden. Attaching the golden colours the graph;
//! *First divergence* selects the node inside its folded box; a row of the Accuracy table
//! selects its node; the inspector shows both sides.

use crate::common::ui::{harness, opened, selected, settle, shoot};
use crate::common::{copy_tree, fixture};
use egui_kittest::kittest::Queryable;

const NODE: &str = "_softmax_1";

/// `<tmp>/run`: the showcase, its step-0 dump with the perturbed files; `<tmp>/golden`: the
/// showcase's dump as it is.
fn perturbed_showcase(tmp: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let run = tmp.join("run");
    copy_tree(&fixture("showcase"), &run);
    let step0 = run.join("data_dump/worldsize1_global_rank0/graph_1/0");
    for e in std::fs::read_dir(fixture("accuracy/showcase_npy/target_overrides")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), step0.join(e.file_name())).unwrap();
    }
    let golden = tmp.join("golden/worldsize1_global_rank0");
    copy_tree(
        &fixture("showcase/data_dump/worldsize1_global_rank0"),
        &golden,
    );
    (run, tmp.join("golden"))
}

#[test]
fn a_golden_colours_the_graph_and_first_divergence_selects_the_perturbed_node() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, golden) = perturbed_showcase(tmp.path());
    let mut app = opened(&run);
    app.accuracy_step_for_test(Some(0));
    app.compare_with_golden(&golden);
    let mut h = harness(app);
    settle(&mut h);
    settle(&mut h);
    let c = h
        .state()
        .app
        .accuracy
        .comparison()
        .cloned()
        .expect("compared");
    assert_eq!(
        c.first_divergence.as_ref().and_then(|d| d.node.as_deref()),
        Some(NODE)
    );
    // The graph opens grouped: the perturbed node is inside a folded box.
    assert!(h.state().view.graph().is_folded());
    assert!(
        h.state().view.graph().screen_pos_of(&h.ctx, NODE).is_none(),
        "hidden in its box before"
    );
    // Colour by error vs golden.
    h.get_by_label("error vs golden").click();
    h.run_steps(3);
    h.get_by_label_contains("error vs golden: ‖t−g‖/‖g‖");
    // The Accuracy tab: First divergence selects the node and opens the boxes around it.
    h.state_mut().view.tabs.show("accuracy");
    h.run_steps(2);
    h.get_by_label("First divergence").click();
    h.run_steps(4);
    assert_eq!(h.state().view.central(), "graph");
    assert_eq!(selected(&h).as_deref(), Some(NODE));
    settle(&mut h);
    let canvas = h.state().view.graph().canvas.expect("canvas");
    let pos = h.state().view.graph().screen_pos_of(&h.ctx, NODE);
    assert!(
        pos.is_some_and(|p| canvas.contains(p)),
        "{NODE} revealed on screen"
    );
    // The inspector shows both sides of the selected node.
    h.get_by_label("vs golden");
    assert!(h.query_all_by_label("target").count() >= 1);
    assert!(h.query_all_by_label("golden").count() >= 1);
    assert!(h.query_all_by_label("added by this node").count() >= 1);
    shoot(&mut h, "accuracy_graph");
}

#[test]
fn a_row_of_the_accuracy_table_selects_its_node() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, golden) = perturbed_showcase(tmp.path());
    let mut app = opened(&run);
    app.accuracy_step_for_test(Some(0));
    app.compare_with_golden(&golden);
    let mut h = harness(app);
    settle(&mut h);
    h.state_mut().view.tabs.show("accuracy");
    h.run_steps(2);
    // msprobe's rules pass every pair (the perturbation is small); sorted by the error a node
    // adds, the perturbed node's rows come first.
    h.get_by_label_contains("0 error");
    h.get_by_label("added error").click();
    h.run_steps(2);
    shoot(&mut h, "accuracy_table");
    h.get_all_by_label(NODE)
        .next()
        .expect("a row of the node")
        .click();
    h.run_steps(3);
    assert_eq!(selected(&h).as_deref(), Some(NODE));
    assert_eq!(h.state().view.central(), "graph");
}
