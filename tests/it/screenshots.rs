//! Renders the real app on the fixtures (egui_kittest + wgpu on the CPU) and checks the
//! pictures are not blank. With `UPDATE_SCREENSHOTS=1` it also writes them to `screenshots/`,
//! which is how the README's pictures are made:
//!
//! ```sh
//! UPDATE_SCREENSHOTS=1 cargo test --test it screenshots::
//! ```


use crate::common::fixture;
use crate::common::ui::{first_pass_of, harness_sized, opened, settle, shoot};
use egui_kittest::Harness;
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
    shoot(&mut h, "tree_and_graph");
}

#[test]
fn inspector_with_a_node_selected() {
    let mut h = harness(&fixture("showcase"), egui::vec2(1500., 900.));
    h.state_mut().app.reveal_node("mul_1".into());
    h.state_mut().view.graph.cone = true;
    h.run_steps(4);
    shoot(&mut h, "inspector");
}

#[test]
fn stress_graph_zoomed_out() {
    let root = fixture("npugraph_ex/stress_24layer");
    let mut h = harness(&root, egui::vec2(1500., 900.));
    let backward = first_pass_of(&h.state().app, "backward");
    h.state_mut().app.select_graph(&backward);
    settle(&mut h);
    let (total, present) = h.state().view.graph.counts();
    assert!(present > 5000, "{present}/{total} nodes on screen");
    let zoom = Viewport::load_ctx(&h.ctx).zoom;
    assert!(zoom < 0.1, "fitted: zoom {zoom}");
    shoot(&mut h, "stress_zoomed_out");
}

#[test]
fn cond_branches_as_groups() {
    let mut h = harness(&fixture("npugraph_ex/torch_cond"), egui::vec2(1300., 800.));
    h.state_mut().app.reveal_node("cond".into());
    h.run_steps(4);
    assert_eq!(h.state().view.graph.groups().len(), 2);
    shoot(&mut h, "cond_subgraphs");
}

#[test]
fn autotune_candidates_and_winner() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/autotune/topn");
    let mut h = harness(&root, egui::vec2(1500., 900.));
    h.state_mut().view.central = fxray::ui::CentralTab::Autotune;
    settle(&mut h);
    let chart = h.state().view.autotune.chart().cloned().expect("a chart");
    assert_eq!(chart.winner, Some(1));
    shoot(&mut h, "autotune");
}
