//! Repeated blocks drawn once, in the real app on `stress_20k` (83 decoder layers of one
//! structure): the layers open as one box `layers.0–82 ×83`, opening it draws one layer, its
//! ◀ ▶ draw the others, and a node of a layer not drawn brings its layer on screen. And the
//! first view of a large phase (the pass on screen laid out alone): another pass is said not to
//! be ready, never drawn empty.

use crate::common::fixture;
use crate::common::ui::{first_pass_of, harness_sized, opened, settle};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fxray::ui::Fxray;

const SCREEN: egui::Vec2 = egui::vec2(1600.0, 1000.0);

fn stress_forward() -> Harness<'static, Fxray> {
    let mut app = opened(&fixture("npugraph_ex/stress_20k"));
    let first = first_pass_of(&app, "forward");
    app.select_graph(&first);
    assert!(app.wait_idle(crate::common::ui::WAIT));
    let mut h = harness_sized(app, SCREEN);
    settle(&mut h);
    h
}

/// Layer boxes drawn: (path, folded).
fn layer_boxes(h: &Harness<'static, Fxray>) -> Vec<(String, bool)> {
    h.state()
        .view
        .graph()
        .module_boxes()
        .into_iter()
        .filter(|(p, _, _)| {
            p.strip_prefix("layers.")
                .is_some_and(|r| r.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(|(p, _, folded)| (p, folded))
        .collect()
}

#[test]
fn the_layers_open_as_one_box_drawn_once() {
    let mut h = stress_forward();
    // `layers` opens by itself where its title reads; here (its 21 loose nodes make the graph
    // tall) it is one click away. Inside, the 83 layers are one box.
    if layer_boxes(&h).is_empty() {
        h.get_by_label("layers").click();
        h.run_steps(3);
    }
    assert_eq!(layer_boxes(&h), [("layers.0".to_string(), true)]);
    let group = h.get_by_label("layers.0–82 ×83");
    group.click();
    h.run_steps(3);
    h.get_by_label("Fit").click();
    h.run_steps(3);
    assert_eq!(layer_boxes(&h), [("layers.0".to_string(), false)]);
    // The next member is one click away; what was open stays open.
    h.get_by_label("next of layers.0's group").click();
    h.run_steps(3);
    assert_eq!(layer_boxes(&h), [("layers.1".to_string(), false)]);
    h.get_by_label("previous of layers.1's group").click();
    h.run_steps(3);
    h.get_by_label("previous of layers.0's group").click();
    h.run_steps(3);
    assert_eq!(layer_boxes(&h), [("layers.82".to_string(), false)]);
}

#[test]
fn a_node_of_a_layer_not_drawn_brings_its_layer() {
    let mut h = stress_forward();
    let tree = {
        let ph = h.state().app.phase.as_ref().expect("phase");
        ph.fold.as_ref().expect("module tree").1.clone()
    };
    let l40 = tree.find("layers.40").expect("layers.40");
    let ph = h.state().app.phase.as_ref().expect("phase");
    let layout = ph.layout.clone().expect("layout");
    let node = tree.modules[l40 as usize]
        .nodes
        .first()
        .map(|&n| layout.union.names()[n as usize].clone())
        .expect("a node of layers.40");
    h.state_mut().app.reveal_node(node.clone());
    h.run_steps(4);
    assert_eq!(layer_boxes(&h), [("layers.40".to_string(), false)]);
    assert!(
        h.state()
            .view
            .graph()
            .screen_pos_of(&h.ctx, &node)
            .is_some(),
        "{node} drawn"
    );
}

#[test]
fn a_pass_not_yet_laid_out_says_so() {
    let mut h = stress_forward();
    // As while the phase opens: the layout is the first pass's alone.
    if let Some(ph) = h.state_mut().app.phase.as_mut() {
        ph.preview_of = Some(0);
        ph.current = 2;
    }
    h.run_steps(2);
    let waiting = h.query_all_by_label_contains("is not ready yet").count();
    assert!(waiting >= 1, "the pass on screen says it is not ready");
    if let Some(ph) = h.state_mut().app.phase.as_mut() {
        ph.current = 0;
    }
    h.run_steps(2);
    assert_eq!(
        h.query_all_by_label_contains("is not ready yet").count(),
        0,
        "the preview's own pass is drawn"
    );
}

/// The first view of an LLM-sized tree (`tests/e2e/scale/make_llm_tree.py 415 DIR`, too
/// big to commit): its 415 layers are one box. Run with
/// `FXRAY_SCALE_TREE=DIR UPDATE_SCREENSHOTS=1 cargo test --release --test it -- --ignored
/// first_view_of_415_layers`.
#[test]
#[ignore = "needs FXRAY_SCALE_TREE: a 415-layer tree made by make_llm_tree.py"]
fn first_view_of_415_layers() {
    let Some(tree) = std::env::var_os("FXRAY_SCALE_TREE") else {
        panic!("set FXRAY_SCALE_TREE to a tree made by make_llm_tree.py");
    };
    let mut app = fxray::app::App::new();
    app.open(std::path::Path::new(&tree));
    // A debug build reads 300 MB of graphs slowly: minutes, not the tests' minute.
    let long = std::time::Duration::from_secs(1800);
    assert!(app.wait_idle(long), "opening timed out");
    let mut h = harness_sized(app, SCREEN);
    h.run_steps(2);
    assert!(h.state_mut().app.wait_idle(long));
    h.run_steps(3);
    let n = h.state().view.graph().counts().1;
    assert!(n > 50_000, "{n} nodes in the first pass");
    let boxes = h.state().view.graph().module_boxes();
    eprintln!("first view: {boxes:?}");
    if h.query_by_label("layers.0–414 ×415").is_none() {
        // `layers` opens by itself only where its title reads at fit.
        h.get_by_label("layers").click();
        h.run_steps(3);
        h.get_by_label("Fit").click();
        h.run_steps(3);
    }
    h.get_by_label("layers.0–414 ×415");
    crate::common::ui::shoot(&mut h, "scale_415_first_view");
}

/// A mixture-of-experts model whose layers 0 and 3 are dense (`repeat_truth_hf/
/// qwen2_moe_dense_0_3`), its backward opened in the window: the layer boxes are the config's
/// two kinds, and each says how it differs: the dense group from the other by its experts, and
/// within each group the member whose boundary differs, by what.
#[test]
fn the_backwards_layers_are_the_configs_kinds_and_say_how_they_differ() {
    let case = fixture("repeat_truth_hf/qwen2_moe_dense_0_3");
    let backward = crate::modules::model_dir(&case).join("backward");
    let mut h = harness_sized(opened(&backward), SCREEN);
    settle(&mut h);
    let graph = h.state().view.graph();
    let tip = |p: &str| graph.box_summary(p).unwrap_or_else(|| panic!("no box {p}"));
    let moe = tip("model.layers.1");
    assert!(moe.contains("model.layers.1–2, 4–5 ×4"), "{moe}");
    assert!(moe.contains("at its boundary: "), "{moe}");
    let dense = tip("model.layers.0");
    assert!(dense.contains("model.layers.0, 3 ×2"), "{dense}");
    assert!(
        dense.contains("differs from model.layers.1–2, 4–5 ×4")
            && dense.contains("lacks mlp.experts"),
        "{dense}"
    );
    assert!(dense.contains("at its boundary: "), "{dense}");
}
