//! UI test of the dumped-tensor panel on the showcase: click a node on the canvas, pick step 1,
//! see its output histogram and the NaN badge; the tracer selects the NaN origin. With
//! `UPDATE_SCREENSHOTS=1` it writes `screenshots/tensors.png` for the README.

use crate::common::ui::{click_node, harness_sized, opened, selected, settle, shoot};
use crate::common::{fixture, run_dir};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fxray::ui::Fxray;

/// The showcase with its last pass (the graph the dump was taken from) on screen.
fn showcase() -> Harness<'static, Fxray> {
    showcase_sized(egui::vec2(1500., 1100.))
}

fn showcase_sized(size: egui::Vec2) -> Harness<'static, Fxray> {
    let mut h = harness_sized(opened(&fixture("showcase")), size);
    settle(&mut h);
    let last = run_dir("showcase").join(
        "npugraph_ex/model__0/forward/018_aot_forward_graph_after_resolve_default_stream_markers.txt",
    );
    h.state_mut().app.select_graph(&last);
    settle(&mut h);
    h
}

#[test]
fn click_a_node_and_see_its_histogram_and_nan_badge_in_step_1() {
    let mut h = showcase();
    // Every dumped file was summarised in the background when the folder opened.
    let t = &h.state().app.tensors;
    assert_eq!(t.pending, 0);
    assert_eq!(t.summaries.len(), 1292);
    assert_eq!(t.msprobe.len(), 2);

    // Bring add_6 on screen, then click it on the canvas.
    click_node(&mut h, "add_6");
    assert_eq!(selected(&h).as_deref(), Some("add_6"));

    // The dump joins this pass fully; step 0 is shown first and holds no NaN.
    h.get_by_label("graph_1 · 213/213 dumped nodes in this graph (100%), 213 of 213 calls dumped");
    h.get_by_label("OUTPUT.0 histogram");
    assert!(h.query_by_label("NaN 16").is_none(), "step 0 is clean");

    h.get_by_label("step 1").click();
    h.run_steps(3);
    assert_eq!(h.state().view.tensors.step, Some(1));
    // The output's NaN badge, the input that carried it in, and the histogram of the rest.
    h.get_by_label("NaN 16");
    h.get_by_label("NaN 8");
    h.get_by_label("OUTPUT.0 histogram");

    // Compare the output with step 0: the difference is found where the values are finite.
    // Inputs are folded: the one button is the output's.
    h.get_by_label("vs step 0").click();
    h.run_steps(2);
    assert!(h.state_mut().app.wait_idle(crate::common::ui::WAIT));
    h.run_steps(2);
    let cmp = h
        .state()
        .app
        .tensors
        .compare
        .as_ref()
        .expect("a comparison");
    let r = cmp.result.ready().expect("ready");
    assert_eq!(r.compared + r.non_finite, 256, "{r:?}");
    assert!(r.non_finite >= 16, "{r:?}");
    h.get_by_label_contains("step 0 vs this: max abs diff");

    shoot(&mut h, "tensors");

    // The heatmap and value table of the output's first 8×8 slice, read on demand.
    h.get_by_label("OUTPUT.0 heatmap and values").click();
    h.run_steps(2);
    assert!(h.state_mut().app.wait_idle(crate::common::ui::WAIT));
    h.run_steps(2);
    let sl = h
        .state()
        .app
        .tensors
        .slice
        .as_ref()
        .expect("a slice asked for");
    let sl = sl.result.ready().expect("ready");
    assert_eq!(
        (sl.rows, sl.cols, sl.values.len(), sl.lead.clone()),
        (8, 8, 64, vec![0, 0])
    );
    h.get_by_label_contains("8×8 slice, colour scale");
    h.get_by_label("rows 0–7 of 8");
}

#[test]
fn first_nan_selects_the_origin_node() {
    let mut h = showcase();
    h.state_mut().app.reveal_node("mm_3".into());
    h.run_steps(2);
    h.get_by_label("step 1").click();
    h.run_steps(2);
    h.get_by_label("First NaN").click();
    h.run_steps(3);
    assert_eq!(selected(&h).as_deref(), Some("add_6"));
    h.get_by_label("carried in by INPUT.1 (8 NaN) from arg14_1, a graph input");
    // Inf is traced apart: in step 0 the mask's −Inf first appears at masked_fill.
    h.get_by_label("step 0").click();
    h.run_steps(2);
    h.get_by_label("First Inf").click();
    h.run_steps(3);
    assert_eq!(selected(&h).as_deref(), Some("masked_fill"));
    // Step 0's list of nodes with ±Inf outputs (the expected facts: four of them), clickable.
    h.state_mut().app.select_node(None);
    h.run_steps(2);
    h.get_by_label("±Inf in the outputs of 4 nodes").click();
    h.run_steps(2);
    h.get_by_label("_to_copy_12").click();
    h.run_steps(2);
    assert_eq!(selected(&h).as_deref(), Some("_to_copy_12"));
}

#[test]
fn heatmap_of_softmax_with_its_nan_rows() {
    let mut h = showcase_sized(egui::vec2(1500., 1450.));
    h.state_mut().app.reveal_node("_softmax".into());
    h.run_steps(2);
    h.get_by_label("step 1").click();
    h.run_steps(2);
    // The slice [1, 0, :, :]: batch 1, head 0 (the NaN injected into batch 1's mask).
    h.state_mut().view.tensors.lead = vec![1, 0];
    h.get_by_label("OUTPUT.0 heatmap and values").click();
    h.run_steps(2);
    assert!(h.state_mut().app.wait_idle(crate::common::ui::WAIT));
    h.run_steps(3);
    let sl = h.state().app.tensors.slice.as_ref().unwrap();
    let sl = sl.result.ready().expect("ready");
    assert_eq!(sl.lead, vec![1, 0]);
    // numpy: the NaNs of this slice fill row 5 exactly (8 of the output's 16).
    let nan_rows: Vec<usize> = (0..sl.rows)
        .filter(|r| {
            sl.values[r * sl.cols..(r + 1) * sl.cols]
                .iter()
                .all(|v| v.is_nan())
        })
        .collect();
    assert_eq!(nan_rows, [5], "{sl:?}");
    assert_eq!(sl.values.iter().filter(|v| v.is_nan()).count(), 8);
    h.get_by_label_contains("8×8 slice, colour scale ±");
    shoot(&mut h, "tensors_heatmap");
}

/// The graph coloured by dumped data: NaN/Inf in step 1 as `expected.json` lists them, then
/// max |x| and the step-to-step diff with their scales.
#[test]
fn graph_overlay_colours_nodes_by_nan_inf_max_and_step_diff() {
    let expected: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixture("showcase/expected.json")).expect("expected.json"),
    )
    .expect("json");
    let s1 = &expected["data_dump"]["steps"]["1"];
    let names = |k: &str| -> std::collections::HashSet<String> {
        s1[k]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    let (nan, inf) = (
        names("nodes_with_nan_output"),
        names("nodes_with_inf_output"),
    );
    let inf_only = inf.difference(&nan).count();
    let dumped = s1["nodes_dumped"].as_u64().unwrap() as usize;

    let mut h = showcase();
    let pick = |h: &mut Harness<'static, Fxray>, to: &str| {
        h.get_by_role_and_label(egui::accesskit::Role::ComboBox, "Colour by data")
            .click();
        h.run_steps(2);
        h.get_by_label(to).click();
        h.run_steps(2);
        assert!(h.state_mut().app.wait_idle(crate::common::ui::WAIT));
        h.run_steps(3);
    };
    pick(&mut h, "NaN / Inf");
    h.get_by_label(&format!(
        "step 1: {} node(s) with NaN outputs (magenta), {inf_only} with ±Inf (orange), {} clean (green); undumped nodes keep their colour",
        nan.len(),
        dumped - nan.len() - inf_only
    ));
    h.state_mut().app.reveal_node("add_6".into());
    h.run_steps(4);
    shoot(&mut h, "tensor_overlay");
    pick(&mut h, "max |x|");
    assert!(h.query_by_label_contains("step 1: max |x| from").is_some());
    pick(&mut h, "step-to-step diff");
    assert!(
        h.query_by_label_contains("step 1: step-to-step diff from")
            .is_some(),
        "the diffs of step 0 → 1 were computed"
    );
    pick(&mut h, "off");
    assert!(h.query_by_label_contains("step 1:").is_none());
}
