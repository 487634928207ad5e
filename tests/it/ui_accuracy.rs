//! Accuracy compare in the window (issue 23), driven like a user on the showcase: the run's
//! data dump with `_softmax_1`'s output perturbed (the files `tests/e2e/accuracy_npy_truth.py`
//! wrote) against the showcase's own dump as golden. Attaching the golden colours the graph;
//! *First divergence* selects the node inside its folded box; a row of the Accuracy table
//! selects its node; the inspector shows both sides.

use crate::common::ui::{accuracy, compare_with_golden, harness, opened, selected, settle, shoot};
use crate::common::{copy_tree, fixture};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fxray::ui::Fxray;

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

/// The window on the perturbed showcase, compared with its golden at step 0.
fn compared(tmp: &std::path::Path) -> Harness<'static, Fxray> {
    let (run, golden) = perturbed_showcase(tmp);
    let mut app = opened(&run);
    app.part::<fxray::app::accuracy::AccuracyState>().0.step = Some(0);
    compare_with_golden(&mut app, &golden);
    let mut h = harness(app);
    settle(&mut h);
    h
}

/// The compare the window holds.
fn comparison(
    h: &Harness<'static, Fxray>,
) -> std::sync::Arc<fxray::analysis::accuracy::Comparison> {
    accuracy(&h.state().app)
        .comparison()
        .cloned()
        .expect("compared")
}

#[test]
fn a_golden_colours_the_graph_and_first_divergence_selects_the_perturbed_node() {
    let tmp = tempfile::tempdir().unwrap();
    let mut h = compared(tmp.path());
    settle(&mut h);
    let c = comparison(&h);
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
    // The folded box hiding the perturbed node takes its worst node's colour: the top of the
    // ramp (the largest error of the pass).
    let [r, g, b] = fxray::ui::palette::RAMP_HIGH;
    assert_eq!(
        h.state().view.graph().box_tint("layers"),
        Some(egui::Color32::from_rgb(r as u8, g as u8, b as u8))
    );
    assert_ne!(
        h.state().view.graph().box_tint("embed_tokens"),
        h.state().view.graph().box_tint("layers"),
        "a box of exact nodes is not coloured as the worst"
    );
    // The Accuracy tab: First divergence selects the node and opens the boxes around it.
    h.state_mut().view.tabs.show(fxray::app::TabId::ACCURACY);
    h.run_steps(2);
    h.get_by_label("First divergence").click();
    h.run_steps(4);
    assert_eq!(h.state().view.central(), fxray::app::TabId::GRAPH);
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
    let mut h = compared(tmp.path());
    h.state_mut().view.tabs.show(fxray::app::TabId::ACCURACY);
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
    assert_eq!(h.state().view.central(), fxray::app::TabId::GRAPH);
}

/// The tensor panel's step picker acts on both sides: picking step 1 compares step 1 of the run
/// with step 1 of the golden.
#[test]
fn the_step_picker_compares_that_step_on_both_sides() {
    let tmp = tempfile::tempdir().unwrap();
    let mut h = compared(tmp.path());
    h.get_by_label("step 1").click();
    h.run_steps(2);
    settle(&mut h);
    let acc = accuracy(&h.state().app);
    assert_eq!(acc.step, Some(1));
    let c = acc.comparison().expect("compared again");
    // Step 1 of both sides is the showcase's own: nothing was perturbed there.
    assert!(c.first_divergence.is_none(), "{:?}", c.first_divergence);
}

/// The inspector pictures the selected node's difference: the histogram of target − golden over
/// its 256 elements, and |Δ| on the slice holding the largest difference, that place ringed and
/// named with the index msprobe's MaxAbsErr is at.
#[test]
fn the_inspector_pictures_the_perturbed_nodes_difference() {
    let tmp = tempfile::tempdir().unwrap();
    let mut h = compared(tmp.path());
    h.state_mut().app.reveal_node(NODE.to_string());
    settle(&mut h);
    settle(&mut h);
    let acc = accuracy(&h.state().app);
    let c = acc.comparison().expect("compared").clone();
    let out = c
        .pairs_of(NODE)
        .find(|p| p.slot == "OUTPUT.0")
        .expect("the output pair");
    let m = out.metrics.as_ref().expect("tensor mode");
    let view = acc.delta.as_ref().expect("a difference asked for");
    assert_eq!(view.key, out.key, "the node's output is pictured first");
    let d = view.result.ready().expect("computed").clone();
    // _softmax_1's output is f32 [2, 2, 8, 8]; the largest difference is where the metrics put
    // MaxAbsErr, and the slice shown is the one holding it.
    assert_eq!(d.elements, 256);
    let (at, v) = d.largest.clone().expect("a largest difference");
    assert_eq!(Some(&at), m.argmax.as_ref());
    assert_eq!(Some(v), m.max_abs_err.value());
    let h_counts: u64 = d.histogram.as_ref().expect("histogram").counts.iter().sum();
    assert_eq!(h_counts, 256);
    assert_eq!(d.slice.lead, at[..2]);
    let peak = d.slice.peak.expect("peak");
    assert_eq!((peak.row as u64, peak.col as u64), (at[2], at[3]));
    // Drawn: both pictures, the place named.
    h.get_by_label_contains("Δ histogram (target − golden), 256 elements");
    let index = format!("[{}, {}, {}, {}]", at[0], at[1], at[2], at[3]);
    let named = format!(
        "largest |Δ| {} at {index}",
        fxray::model::tensor::fmt_value(v)
    );
    h.get_by_label(&named);
    let map = h.get_by_label_contains("|Δ| heatmap: largest");
    map.scroll_to_me();
    h.run_steps(3);
    let rect = h.get_by_label_contains("|Δ| heatmap: largest").rect();
    let shot = shoot(&mut h, "accuracy_inspector");
    // The ring (the selection's gold) sits on the peak's cell, and nowhere far from it.
    let (cw, ch) = (
        rect.width() / d.slice.cell_cols as f32,
        rect.height() / d.slice.cell_rows as f32,
    );
    let centre = rect.min
        + egui::vec2(
            (peak.cell.1 as f32 + 0.5) * cw,
            (peak.cell.0 as f32 + 0.5) * ch,
        );
    let gold = fxray::ui::palette::SELECTED;
    let near = shot.count_near(centre, cw.max(ch) + 6.0, gold, 12);
    assert!(near > 20, "ring around the peak cell: {near} gold pixels");
    let far = egui::pos2(
        if centre.x < rect.center().x {
            rect.max.x - 4.0
        } else {
            rect.min.x + 4.0
        },
        if centre.y < rect.center().y {
            rect.max.y - 4.0
        } else {
            rect.min.y + 4.0
        },
    );
    assert_eq!(
        shot.count_near(far, 4.0, gold, 12),
        0,
        "no ring far from the peak"
    );
    // Another slice, picked with the d0/d1 pickers: its own largest |Δ|, said to be the slice's.
    h.get_by_label("|Δ| slice");
    let other = vec![1 - at[0], at[1]];
    {
        let (acc, cx) = h
            .state_mut()
            .app
            .part::<fxray::app::accuracy::AccuracyState>();
        acc.load_delta(&cx, &out.key, Some(other.clone()));
    }
    settle(&mut h);
    let view = accuracy(&h.state().app).delta.as_ref().expect("asked");
    let d2 = view.result.ready().expect("computed").clone();
    assert_eq!(d2.slice.lead, other);
    assert_eq!(
        d2.largest, d.largest,
        "the histogram and largest are the whole tensor's"
    );
    let p2 = d2.slice.peak.expect("peak");
    assert!(p2.value <= v);
    // The heatmap's own label and the line under it.
    assert_eq!(h.query_all_by_label_contains("(of this slice)").count(), 2);
}

/// The window compares an npy dump with an msprobe dump of the same model (the mixed fixture):
/// the run folder holds the compiled graphs and the npy dump, the golden is real msprobe's
/// tensor dump. The window shows the first pass; the links go through the pass whose nodes the
/// npy dump holds (the last: its passes split `silu`). The first divergence is the perturbed
/// gelu, and its pictures compare an `.npy` with msprobe's `.pt`.
#[test]
fn the_window_compares_an_npy_run_with_an_msprobe_golden() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let mixed = fixture("accuracy/mixed");
    copy_tree(
        &mixed.join("torch_compile_debug"),
        &run.join("torch_compile_debug"),
    );
    copy_tree(&mixed.join("target_npy"), &run.join("data_dump"));
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(mixed.join("truth.json")).unwrap()).unwrap();
    let graph = truth["graph"].as_str().unwrap();
    let mut app = opened(&run);
    compare_with_golden(&mut app, &mixed.join("golden_tensor"));
    let mut h = harness(app);
    settle(&mut h);
    let c = comparison(&h);
    assert!(
        c.pairing.starts_with("npy nodes and msprobe calls"),
        "{}",
        c.pairing
    );
    let last = std::path::Path::new(graph)
        .file_name()
        .unwrap()
        .to_string_lossy();
    assert!(
        c.notes
            .iter()
            .any(|n| n.starts_with(&format!("graph {last}: the pass whose node names"))),
        "{:?}",
        c.notes
    );
    // Through the last pass, silu's output is `mul_tensor`: the last linear's input pairs.
    assert!(
        c.pairs.iter().any(|p| p.key == "addmm_2.INPUT.1"),
        "{}",
        c.pairing
    );
    let f = c.first_divergence.as_ref().expect("a divergence");
    assert_eq!(f.node.as_deref(), Some("gelu"), "{}", f.why);
    h.state_mut().app.reveal_node("gelu".to_string());
    settle(&mut h);
    settle(&mut h);
    let d = accuracy(&h.state().app).delta.as_ref().expect("pictured");
    assert_eq!(d.key, "gelu.OUTPUT.0");
    let d = d.result.ready().expect("computed").clone();
    assert_eq!(d.elements, 8 * 64);
    h.get_by_label_contains("Δ histogram (target − golden), 512 elements");
    h.get_by_label_contains("|Δ| heatmap: largest |Δ|");
}

/// `fxray RUN --golden GOLDEN`: the window opens the run already compared with its golden, as
/// attaching it from the menu does.
#[test]
fn the_command_line_opens_a_run_with_its_golden_attached() {
    use clap::Parser;
    let tmp = tempfile::tempdir().unwrap();
    let (run, golden) = perturbed_showcase(tmp.path());
    let args = [
        "fxray".as_ref(),
        run.as_os_str(),
        "--golden".as_ref(),
        golden.as_os_str(),
    ];
    let cli = fxray::cli::Cli::try_parse_from(args).expect("parses");
    assert_eq!(cli.golden.as_deref(), Some(golden.as_path()));
    let mut h = harness(fxray::app::App::new());
    h.state_mut()
        .launch(cli.path.as_deref().expect("a path"), cli.golden.as_deref());
    settle(&mut h);
    assert_eq!(
        accuracy(&h.state().app).golden.as_deref(),
        Some(golden.as_path())
    );
    let c = comparison(&h);
    assert_eq!(
        c.first_divergence.as_ref().and_then(|d| d.node.as_deref()),
        Some(NODE)
    );
}

/// A golden given for an open that another open replaced is not attached to the second.
#[test]
fn a_golden_goes_with_the_open_it_was_given_for() {
    let tmp = tempfile::tempdir().unwrap();
    let (run, golden) = perturbed_showcase(tmp.path());
    let mut app = fxray::app::App::new();
    app.open_with_golden(&run, Some(&golden));
    app.open(&fxray::app::sample_path());
    let mut h = harness(app);
    settle(&mut h);
    assert!(
        h.state()
            .app
            .peek::<fxray::app::accuracy::AccuracyState>()
            .is_none_or(|a| a.golden.is_none())
    );
}

/// A training step against its golden: the gradients of each module's own parameters (msprobe's
/// `parameters_grad` rows) are on the module's box, with the results msprobe's CSV gives them.
/// The graph is the same MLP compiled (accuracy/mixed), the dumps the `train` case's.
#[test]
fn parameter_gradients_are_on_their_modules_box() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    copy_tree(
        &fixture("accuracy/mixed/torch_compile_debug"),
        &run.join("torch_compile_debug"),
    );
    let train = fixture("accuracy/train");
    copy_tree(&train.join("target_tensor"), &run.join("msprobe"));
    let mut app = opened(&run);
    compare_with_golden(&mut app, &train.join("golden_tensor"));
    let mut h = harness(app);
    settle(&mut h);
    // msprobe's own answer for each parameter's gradient row.
    let csv = train.join("msprobe_tensor/compare_result_tensor.csv");
    let truth =
        fxray::analysis::accuracy::msprobe_csv::read(&std::fs::read_to_string(csv).unwrap())
            .unwrap();
    assert_eq!(comparison(&h).parameter_gradients().len(), 3);
    for module in ["fc1", "fc2", "fc3"] {
        let line = h
            .state()
            .view
            .graph()
            .box_line(module)
            .unwrap_or_else(|| panic!("{module}: no line on its box"))
            .to_string();
        for param in ["weight", "bias"] {
            let key = format!("Module.{module}.Linear.parameters_grad.0.{param}");
            let row = truth
                .pairs
                .iter()
                .find(|p| p.key == key)
                .expect("msprobe row");
            let said = line
                .split(" · ")
                .find(|part| {
                    part.trim_start_matches("∇ ")
                        .split(':')
                        .next()
                        .unwrap()
                        .split(", ")
                        .any(|p| p == param)
                })
                .unwrap_or_else(|| panic!("{module}: {line}"));
            assert!(
                said.ends_with(row.result.as_str()),
                "{module} {param}: {line} vs {:?}",
                row.result
            );
        }
    }
    assert!(h.state().view.graph().is_folded(), "the boxes are drawn");
    shoot(&mut h, "parameter_gradients");
}
