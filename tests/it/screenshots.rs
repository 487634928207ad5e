//! Renders the real app on the fixtures (egui_kittest + wgpu on the CPU) and checks the
//! pictures are not blank. With `UPDATE_SCREENSHOTS=1` it also writes them to `screenshots/`,
//! which is how the README's pictures are made:
//!
//! ```sh
//! UPDATE_SCREENSHOTS=1 cargo test --test it screenshots::
//! ```

use crate::common::fixture;
use crate::common::ui::{first_pass_of, harness_sized, opened, settle, shoot};
use egui::Color32;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fxray::ui::palette::{SELECTED, UPSTREAM};
use fxray::ui::{Fxray, Viewport};
use std::path::Path;

fn harness(path: &Path, size: egui::Vec2) -> Harness<'static, Fxray> {
    let mut h = harness_sized(opened(path), size);
    settle(&mut h);
    h
}

#[test]
fn tree_and_pass_graph() {
    let mut h = harness(&fixture("showcase"), egui::vec2(1500., 900.));
    // Pass 004 rewrote mm+add into addmm: look at the attention block at a readable zoom.
    h.state_mut().app.select_graph(
        &crate::common::run_dir("showcase").join(
            "npugraph_ex/model__0/forward/004_aot_forward_graph_after_apply_pattern_passes.txt",
        ),
    );
    settle(&mut h);
    h.state_mut().app.reveal_node("bmm".into());
    h.run_steps(3);
    h.state_mut().app.select_node(None);
    h.run_steps(3);
    let shot = shoot(&mut h, "tree_and_graph");
    // What the picture must show: pass 004 picked in the tree, its diff summary against 003
    // (+12 −0 ~6), and `bmm` drawn where the view put it, filled with the matmul colour.
    assert_eq!(crate::common::ui::current_pass(&h), 4);
    assert!(h.query_all_by_label("004 apply_pattern_passes").count() >= 1);
    assert!(
        h.query_all_by_label_contains("+12").count() >= 1,
        "the pass's diff summary"
    );
    let canvas = h.state().view.graph().canvas.expect("a canvas");
    let bmm = h
        .state()
        .view
        .graph()
        .screen_pos_of(&h.ctx, "bmm")
        .expect("bmm laid out");
    assert!(
        canvas.contains(bmm),
        "bmm at {bmm:?} is on the canvas {canvas:?}"
    );
    let [r, g, b] = fxray::analysis::op_family::OpFamily::MatmulConv.rgb();
    let matmul = Color32::from_rgb(r, g, b);
    assert!(
        shot.count_near(bmm, 10.0, matmul, 12) > 100,
        "bmm is not drawn at {bmm:?}"
    );
    // …and not elsewhere: 150 points to the left there is no node of that colour.
    let aside = bmm - egui::vec2(150.0, 0.0);
    assert_eq!(
        shot.count_near(aside, 10.0, matmul, 12),
        0,
        "matmul colour at {aside:?}"
    );
}

#[test]
fn inspector_with_a_node_selected() {
    let mut h = harness(&fixture("showcase"), egui::vec2(1500., 900.));
    h.state_mut().app.reveal_node("mul_1".into());
    h.state_mut().view.graph_mut().cone = true;
    h.run_steps(4);
    let shot = shoot(&mut h, "inspector");
    // The selected node is drawn where the view says, with the gold selection outline, its
    // producers in the cone's blue; the inspector names it.
    assert_eq!(crate::common::ui::selected(&h).as_deref(), Some("mul_1"));
    let at = h
        .state()
        .view
        .graph()
        .screen_pos_of(&h.ctx, "mul_1")
        .expect("mul_1 laid out");
    assert!(
        shot.count_near(at, 60.0, SELECTED, 30) > 20,
        "no selection outline near mul_1 at {at:?}"
    );
    let producer = {
        let phase = h.state().app.phase.as_ref().expect("a phase");
        let (graph, node) = phase.selected_node().expect("mul_1 found");
        let first = *node.inputs.first().expect("mul_1 has a producer");
        graph.nodes[first].name.clone()
    };
    let p = h
        .state()
        .view
        .graph()
        .screen_pos_of(&h.ctx, &producer)
        .expect("producer laid out");
    assert!(
        shot.count_near(p, 60.0, UPSTREAM, 30) > 20,
        "{producer} at {p:?} is not drawn as upstream"
    );
    assert!(
        h.query_all_by_label_contains("mul_1").count() >= 1,
        "the inspector names mul_1"
    );
}

#[test]
fn stress_graph_zoomed_out() {
    let root = fixture("npugraph_ex/stress_24layer");
    let mut h = harness(&root, egui::vec2(1500., 900.));
    let backward = first_pass_of(&h.state().app, "backward");
    h.state_mut().app.select_graph(&backward);
    // The flat layout (5.8k nodes open folded by module otherwise: see ui_fold).
    h.state_mut().view.graph_mut().fold_mode = Some(false);
    settle(&mut h);
    let (total, present) = h.state().view.graph().counts();
    assert!(present > 5000, "{present}/{total} nodes on screen");
    let zoom = Viewport::load_ctx(&h.ctx).zoom;
    assert!(zoom < 0.04, "fitted below the dot zoom: zoom {zoom}");
    let shot = shoot(&mut h, "stress_zoomed_out");
    // Nodes are binned into dots at this zoom: the matmuls still show where they are, in
    // their family's colour (a dot's cell takes the colour of one of its nodes).
    let [r, g, b] = fxray::analysis::op_family::OpFamily::MatmulConv.rgb();
    let matmul = Color32::from_rgb(r, g, b);
    let shown = ["mm_169", "mm_229", "mm_289", "mm_349", "mm_409", "mm_469"]
        .iter()
        .filter(|n| {
            let p = h.state().view.graph().screen_pos_of(&h.ctx, n);
            p.is_some_and(|p| shot.count_near(p, 4.0, matmul, 12) > 0)
        })
        .count();
    assert_eq!(
        shown, 6,
        "matmuls drawn as matmul dots (from top to bottom of the graph)"
    );
}

#[test]
fn cond_branches_as_groups() {
    let mut h = harness(&fixture("npugraph_ex/torch_cond"), egui::vec2(1300., 800.));
    h.state_mut().app.reveal_node("cond".into());
    h.run_steps(4);
    assert_eq!(h.state().view.graph().groups().len(), 2);
    shoot(&mut h, "cond_subgraphs");
}

#[test]
fn autotune_candidates_and_winner() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/autotune/topn");
    let mut h = harness(&root, egui::vec2(1500., 900.));
    h.state_mut().view.tabs.show(fxray::app::TabId::AUTOTUNE);
    settle(&mut h);
    let chart = h.state().view.autotune().chart().cloned().expect("a chart");
    assert_eq!(chart.winner, Some(1));
    shoot(&mut h, "autotune");
}
