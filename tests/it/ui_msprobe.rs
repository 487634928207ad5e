//! msprobe statistics on the graph: clicking a node shows the msprobe records linked to it
//! (every step, `null` in red), and clicking an msprobe table row selects its node.

use crate::common::ui::{click_at, harness_sized, opened, selected, settle, shoot};
use crate::common::{fixture, run_dir};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fxray::ui::Fxray;

/// The showcase with its last pass on screen and the msprobe links computed; tall enough for
/// the inspector to show the msprobe table without scrolling.
fn showcase() -> Harness<'static, Fxray> {
    let mut h = harness_sized(opened(&fixture("showcase")), egui::vec2(1500., 2400.));
    settle(&mut h);
    let last = run_dir("showcase").join(
        "npugraph_ex/model__0/forward/018_aot_forward_graph_after_resolve_default_stream_markers.txt",
    );
    h.state_mut().app.select_graph(&last);
    settle(&mut h);
    settle(&mut h);
    h
}

/// The node msprobe's entry `key` (step 0) was linked to.
fn node_of(h: &Harness<'static, Fxray>, key: &str) -> String {
    let links = h
        .state()
        .app
        .tensors
        .links
        .as_ref()
        .expect("links asked for");
    let s0 = links.step(0).expect("links computed");
    s0.links
        .iter()
        .find(|l| *l.key == *key)
        .and_then(|l| l.node.as_deref().map(str::to_string))
        .unwrap_or_else(|| panic!("{key} not linked"))
}

#[test]
fn clicking_a_node_shows_its_msprobe_records() {
    let mut h = showcase();
    let key = "Module.layers.0.mlp.down_proj.Linear.forward.0";
    let node = node_of(&h, key);
    h.state_mut().app.reveal_node(node.clone());
    h.run_steps(3);
    h.state_mut().app.select_node(None);
    h.run_steps(2);
    assert!(h.query_by_label(&format!("msprobe of {node}")).is_none());
    let pos = h
        .state()
        .view
        .graph()
        .screen_pos_of(&h.ctx, &node)
        .expect("laid out");
    click_at(&mut h, pos);
    assert_eq!(selected(&h).as_deref(), Some(node.as_str()));
    h.run_steps(2);
    h.get_by_label(&format!("msprobe of {node}"));
    // The row of each step (the table of entries is folded: these are the inspector's).
    let rows = h.get_all_by_label(key).count();
    assert_eq!(rows, 2, "one row per step");
    // Step 1 holds NaN downstream of add_6: msprobe wrote null for down_proj's output.
    assert!(h.get_all_by_label("null").count() >= 2);
    shoot(&mut h, "msprobe_node");
}

#[test]
fn clicking_an_msprobe_row_selects_its_node() {
    let mut h = showcase();
    let key = "Module.layers.1.self_attn.v_proj.BiasedLinear.forward.0";
    let node = node_of(&h, key);
    h.get_by_label_contains("msprobe step 0 · pid3064 · 32 entries")
        .click();
    h.run_steps(2);
    // Its input row and its output row both select the node.
    let row = h.get_all_by_label(key).next().expect("a row");
    row.click();
    h.run_steps(3);
    assert_eq!(selected(&h).as_deref(), Some(node.as_str()));
    h.get_by_label(&format!("msprobe of {node}"));
}

/// The links follow the pass on screen, and a result computed for a pass left behind is
/// dropped: pass 000 still has the matmul and bias add apart (`add_1` is q_proj's output),
/// the last pass has them fused (`_unsafe_view_default` after `addmm_default`).
#[test]
fn links_follow_the_pass_on_screen() {
    let dir = run_dir("showcase").join("npugraph_ex/model__0/forward");
    let first = dir.join("000_aot_forward_graph.txt");
    let last = dir.join("018_aot_forward_graph_after_resolve_default_stream_markers.txt");
    let mut app = opened(&fixture("showcase"));
    assert!(app.wait_idle(crate::common::ui::WAIT));
    let q = "Module.layers.0.self_attn.q_proj.BiasedLinear.forward.0";
    let q_node = |app: &fxray::app::App| {
        let l = app.tensors.links.as_ref()?.step(0)?;
        l.links.iter().find(|l| *l.key == *q)?.node.clone()
    };
    app.select_graph(&last);
    assert!(app.wait_idle(crate::common::ui::WAIT));
    assert_eq!(q_node(&app).as_deref(), Some("_unsafe_view_default"));
    // Ask for the last pass's links again (a new key), then move before they arrive.
    app.select_graph(&first);
    app.poll();
    app.select_graph(&last);
    app.poll();
    app.select_graph(&first);
    assert!(app.wait_idle(crate::common::ui::WAIT));
    assert_eq!(q_node(&app).as_deref(), Some("add_1"));
}

/// Real msprobe output (tests/fixtures/msprobe_real): the selected node's inspector names the
/// line that made the linked call, from stack.json (`var = x.pow(2)…` is module_truth.py:63).
#[test]
fn the_inspector_shows_the_call_site_of_a_real_msprobe_entry() {
    let root = fixture("msprobe_real");
    let mut h = harness_sized(opened(&root), egui::vec2(1500., 2400.));
    settle(&mut h);
    let forward = std::fs::read_dir(root.join("torch_compile_debug"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("npugraph_ex/model__0/forward/003_aot_forward_graph_after_eliminate_dead_code.txt");
    h.state_mut().app.select_graph(&forward);
    settle(&mut h);
    settle(&mut h);
    let key = "Tensor.pow.0.forward";
    let node = {
        let links = h
            .state()
            .app
            .tensors
            .links
            .as_ref()
            .expect("links asked for");
        (0..h.state().app.tensors.msprobe.len())
            .filter_map(|k| links.step(k))
            .flat_map(|s| &s.links)
            .find(|l| *l.key == *key && l.node.is_some())
            .and_then(|l| l.node.clone())
            .expect("the L1 and mix dumps link the pow")
    };
    h.state_mut().app.reveal_node(node.to_string());
    h.run_steps(3);
    let pos = h
        .state()
        .view
        .graph()
        .screen_pos_of(&h.ctx, &node)
        .expect("laid out");
    click_at(&mut h, pos);
    h.run_steps(3);
    assert_eq!(selected(&h).as_deref(), Some(node.as_str()));
    h.get_by_label("msprobe call site");
    h.get_by_label(&format!("module_truth.py:63 in forward · {key}"));
    // The same code twice: the node's own source comment, and msprobe's frame.
    let code = h
        .get_all_by_label("var = x.pow(2).mean(-1, keepdim=True)")
        .count();
    assert_eq!(code, 2);
}

/// msprobe's tensor mode: the record's `.pt` opens in the tensor panel as a slice, read
/// through the same door as `.npy` (q_proj's output is f32[2, 8, 16]: an 8 × 16 slice).
#[test]
fn a_tensor_mode_record_opens_its_pt_values() {
    let root = fixture("msprobe_real");
    let mut h = harness_sized(opened(&root), egui::vec2(1500., 3000.));
    settle(&mut h);
    let forward = std::fs::read_dir(root.join("torch_compile_debug"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("npugraph_ex/model__0/forward/003_aot_forward_graph_after_eliminate_dead_code.txt");
    h.state_mut().app.select_graph(&forward);
    settle(&mut h);
    settle(&mut h);
    let key = "Module.layers.0.self_attn.q_proj.Linear.forward.0";
    let node = {
        let app = &h.state().app;
        let links = app.tensors.links.as_ref().expect("links asked for");
        let k = (0..app.tensors.msprobe.len())
            .find(|&k| app.tensors.msprobe[k].tensor_dir.is_some())
            .expect("the tensor_L0 dump is found");
        links
            .step(k)
            .unwrap()
            .links
            .iter()
            .find(|l| *l.key == *key)
            .unwrap()
            .node
            .clone()
            .unwrap()
    };
    h.state_mut().app.reveal_node(node.to_string());
    h.run_steps(3);
    let pos = h
        .state()
        .view
        .graph()
        .screen_pos_of(&h.ctx, &node)
        .expect("laid out");
    click_at(&mut h, pos);
    h.run_steps(3);
    h.get_by_label_contains("step 0 output.0 values").click();
    settle(&mut h);
    settle(&mut h);
    let view = h
        .state()
        .app
        .tensors
        .slice
        .as_ref()
        .expect("a slice asked for");
    assert!(
        view.path
            .to_string_lossy()
            .ends_with(".forward.0.output.0.pt"),
        "{:?}",
        view.path
    );
    let sl = view.result.ready().expect("read");
    assert_eq!((sl.rows, sl.cols), (8, 16));
}
