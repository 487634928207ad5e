//! UI tests of the graph view, driving the real app on the fixtures with egui_kittest: open a
//! tree, pick a pass in the run tree, search a node by typing, click it on the canvas, read the
//! inspector, switch pass and check the selection and viewport survived.

use crate::common::fixture;
use crate::common::ui::{
    click_node, current_pass, first_pass_of, harness, opened, selected, settle,
};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fxray::ui::{Fxray, Viewport};
use std::time::Duration;

fn viewport(h: &Harness<'static, Fxray>) -> (f32, egui::Vec2) {
    let vp = Viewport::load_ctx(&h.ctx);
    (vp.zoom, vp.pan)
}

#[test]
fn pick_pass_search_click_and_keep_selection_across_passes() {
    let mut h = harness(opened(&fixture("showcase")));
    settle(&mut h);
    assert_eq!(current_pass(&h), 0);
    // Every node of pass 000 is on the canvas (280 nodes, expected.json).
    assert_eq!(h.state().view.graph().counts().1, 280);

    // Pick pass 004 in the run tree.
    h.get_by_label("004 apply_pattern_passes").click();
    settle(&mut h);
    assert_eq!(current_pass(&h), 4);
    assert_eq!(h.state().view.graph().counts().1, 288);

    // Search by typing: `/` focuses the box, Enter jumps to the first match.
    h.key_press(egui::Key::Slash);
    h.run_steps(2);
    let search = h.get_by_role_and_label(Role::TextInput, "graph search");
    search.type_text("bmm_1");
    h.run_steps(2);
    h.key_press(egui::Key::Enter);
    h.run_steps(3);
    assert_eq!(selected(&h).as_deref(), Some("bmm_1"));
    h.get_by_label_contains("1/1 matches");

    // Click another node on the canvas where the view draws it: `mul` (revealed first).
    let pos = click_node(&mut h, "mul");
    assert_eq!(
        selected(&h).as_deref(),
        Some("mul"),
        "clicking the node selects it"
    );
    // The inspector shows its target and its shape.
    h.get_by_label("torch.ops.aten.mul.Tensor");
    h.get_by_label("[2, 8, 16]");

    // `]` moves to the next pass: the selection and the viewport stay.
    let before = viewport(&h);
    h.key_press(egui::Key::CloseBracket);
    h.run_steps(3);
    assert_eq!(current_pass(&h), 5);
    assert_eq!(selected(&h).as_deref(), Some("mul"));
    h.get_by_label("torch.ops.aten.mul.Tensor");
    let after = viewport(&h);
    assert_eq!(before, after, "the viewport survives a change of pass");
    // And the node is still drawn at the same place.
    assert_eq!(
        h.state().view.graph().screen_pos_of(&h.ctx, "mul"),
        Some(pos)
    );
}

#[test]
fn keyboard_walks_producers_and_users() {
    let mut h = harness(opened(&fixture("showcase")));
    settle(&mut h);
    // pass 000: `rsqrt: ... = aten.rsqrt(add)`, `mul = aten.mul(_to_copy, rsqrt)`.
    h.state_mut().app.reveal_node("rsqrt".into());
    h.run_steps(2);
    h.key_press(egui::Key::ArrowUp);
    h.run_steps(2);
    assert_eq!(
        selected(&h).as_deref(),
        Some("add"),
        "up goes to the producer"
    );
    h.key_press(egui::Key::ArrowDown);
    h.run_steps(2);
    assert_eq!(
        selected(&h).as_deref(),
        Some("rsqrt"),
        "down goes to the user"
    );
    h.key_press(egui::Key::ArrowDown);
    h.run_steps(2);
    assert_eq!(selected(&h).as_deref(), Some("mul"));
    h.key_press(egui::Key::Escape);
    h.run_steps(2);
    assert_eq!(selected(&h), None);
}

#[test]
fn fit_shows_the_whole_graph_and_z_zooms_to_the_selection() {
    let mut h = harness(opened(&fixture("showcase")));
    // The whole graph, node by node (it opens grouped by module: its labels do not read at fit).
    h.state_mut().view.graph_mut().fold_mode = Some(false);
    settle(&mut h);
    h.key_press(egui::Key::F);
    h.run_steps(2);
    let (fit_zoom, _) = viewport(&h);
    let canvas = h.state().view.graph().canvas.expect("canvas drawn");
    for name in ["embedding", "output"] {
        let p = h
            .state()
            .view
            .graph()
            .screen_pos_of(&h.ctx, name)
            .expect("laid out");
        assert!(
            canvas.contains(p),
            "{name} at {p:?} is inside {canvas:?} after fit"
        );
    }
    h.state_mut().app.select_node(Some("bmm".into()));
    h.run_steps(1);
    h.key_press(egui::Key::Z);
    h.run_steps(2);
    let (zoom, _) = viewport(&h);
    assert!(zoom > fit_zoom, "Z zooms in ({zoom} > {fit_zoom})");
    let p = h.state().view.graph().screen_pos_of(&h.ctx, "bmm").unwrap();
    assert!(
        (p - canvas.center()).length() < 2.0,
        "bmm centred: {p:?} vs {:?}",
        canvas.center()
    );
}

#[test]
fn cone_highlight_and_subgraphs_of_cond() {
    let mut h = harness(opened(&fixture("npugraph_ex/torch_cond")));
    settle(&mut h);
    // The branches of cond are laid out with the top-level graph.
    for name in ["cond", "true_graph_0/sin", "false_graph_0/cos"] {
        assert!(
            h.state().view.graph().screen_pos_of(&h.ctx, name).is_some(),
            "{name} drawn"
        );
    }
    let groups = h.state().view.graph().groups();
    let names: Vec<&str> = groups.iter().map(|g| g.0.as_str()).collect();
    assert_eq!(names, ["true_graph_0", "false_graph_0"]);
    assert!(groups.iter().all(|g| g.1 >= 3 && !g.2), "{groups:?}");

    // Fold the true branch by its title: its nodes leave the canvas.
    h.get_by_label("fold true_graph_0").click();
    h.run_steps(3);
    let groups = h.state().view.graph().groups();
    assert!(groups[0].2 && !groups[1].2, "{groups:?}");

    h.state_mut().app.select_node(Some("cond".into()));
    h.get_by_label("Cone").click();
    h.run_steps(3);
    assert!(h.state().view.graph().cone);
}

#[test]
fn ui_keeps_drawing_while_a_large_graph_is_laid_out() {
    // stress_20k's backward pass 000 has 20,048 nodes: its union layout takes a while, and
    // the window must keep drawing frames meanwhile.
    let root = fixture("npugraph_ex/stress_20k");
    let mut app = opened(&root);
    let backward = first_pass_of(&app, "backward");
    app.select_graph(&backward);
    let mut h = harness(app);
    let mut frames_while_pending = 0;
    for _ in 0..400 {
        h.step();
        let pending = h
            .state()
            .app
            .phase
            .as_ref()
            .is_some_and(|p| p.layout.is_none());
        if !pending {
            break;
        }
        frames_while_pending += 1;
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(
        frames_while_pending >= 5,
        "frames kept coming during the layout ({frames_while_pending})"
    );
    settle(&mut h);
    assert_eq!(h.state().view.graph().counts().1, 20_048);
}

#[test]
fn export_menu_writes_the_pass_on_screen() {
    let mut h = harness(opened(&fixture("showcase")));
    settle(&mut h);
    // The menu entries are enabled once the pass is laid out.
    h.get_by_label("Export").click();
    h.run_steps(2);
    h.get_by_label("Current pass as SVG…");
    // The dialog is the OS's; drive the command it triggers.
    let tmp = tempfile::tempdir().unwrap();
    let svg = tmp.path().join("pass.svg");
    let png = tmp.path().join("pass.png");
    h.state_mut().app.export_current(svg.clone(), false, true);
    h.state_mut().app.export_current(png.clone(), true, false);
    settle(&mut h);
    let text = std::fs::read_to_string(&svg).expect("svg written");
    assert!(
        text.starts_with("<svg") || text.starts_with("<?xml"),
        "{}",
        &text[..60]
    );
    assert_eq!(
        text.matches("class=\"node\"").count(),
        280,
        "one box per node of pass 000"
    );
    let bytes = std::fs::read(&png).expect("png written");
    assert_eq!(&bytes[1..4], b"PNG");
    let notice = h.state().app.notice.clone().unwrap_or_default();
    assert!(notice.starts_with("exported "), "{notice}");
}
