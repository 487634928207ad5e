//! The folded view at model scale, driven in the real app on `stress_20k` (11,309-node forward,
//! 20,048-node backward, 83 decoder layers): it opens folded by layer, a layer opens in place,
//! search and `n` open the boxes that hide their node, and a window at rest stops painting.

use crate::common::fixture;
use crate::common::ui::{
    first_pass_of, harness_sized, opened, selected, settle, shoot, smallest_title_px,
};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fxray::ui::{Fxray, Viewport};

/// A full-HD window.
const SCREEN: egui::Vec2 = egui::vec2(1920.0, 1200.0);

/// The stress run with its forward phase on screen at `pass`, as it opens.
fn stress_forward_at_open(pass: usize) -> Harness<'static, Fxray> {
    let mut app = opened(&fixture("npugraph_ex/stress_20k"));
    let first = first_pass_of(&app, "forward");
    app.select_graph(&first);
    assert!(app.wait_idle(crate::common::ui::WAIT));
    if let Some(ph) = app.phase.as_mut() {
        ph.current = pass;
    }
    let mut h = harness_sized(app, SCREEN);
    // These tests are about a box per layer (the snaking rows): repeat groups off, as the
    // toolbar's `Repeats` toggle sets it (ui_repeat tests them on).
    h.state_mut().view.graph_mut().group_repeats = false;
    settle(&mut h);
    h
}

/// The same with the `layers` box opened: its 83 decoder layers folded in rows. (At open, the
/// 83 layer boxes fitted to the canvas would draw their titles under 11 px: the graph opens
/// one level up, where they read.)
fn stress_forward(pass: usize) -> Harness<'static, Fxray> {
    let mut h = stress_forward_at_open(pass);
    h.get_by_label("layers").click();
    h.run_steps(3);
    h.get_by_label("Fit").click();
    h.run_steps(3);
    h
}

#[test]
fn stress_graph_opens_where_its_box_titles_read() {
    let mut h = stress_forward_at_open(0);
    assert!(h.state().view.graph().is_folded(), "11k nodes open folded");
    let px = smallest_title_px(&h);
    assert!(px >= 11.0, "box titles at {px} px");
    // At open: `layers` is one box (its 83 layers would read at under 11 px).
    let b = boxes(&h);
    assert!(
        b.iter()
            .any(|(p, n, folded)| p == "layers" && *folded && *n > 11_000),
        "{b:?}"
    );
    h.run();
}

fn boxes(h: &Harness<'static, Fxray>) -> Vec<(String, u32, bool)> {
    h.state().view.graph().module_boxes()
}

/// Union names of the nodes module `path` holds directly.
fn nodes_of(h: &Harness<'static, Fxray>, path: &str) -> Vec<String> {
    let ph = h.state().app.phase.as_ref().expect("phase");
    let (layout, tree) = ph.fold.as_ref().expect("module tree built");
    let m = tree
        .find(path)
        .unwrap_or_else(|| panic!("no module {path}"));
    tree.modules[m as usize]
        .nodes
        .iter()
        .map(|&n| layout.union.names()[n as usize].clone())
        .collect()
}

#[test]
fn stress_graph_folds_by_layer_and_settles() {
    let mut h = stress_forward(0);
    assert!(h.state().view.graph().is_folded(), "11k nodes stay folded");
    let b = boxes(&h);
    let layers: Vec<&(String, u32, bool)> = b
        .iter()
        .filter(|(p, _, _)| p.starts_with("layers.") && p.matches('.').count() == 1)
        .collect();
    assert_eq!(layers.len(), 83, "one box per decoder layer: {b:?}");
    assert!(layers.iter().all(|(_, n, folded)| *folded && *n > 100));
    // Each box is a widget named after its module: labelled and clickable.
    h.get_by_label("layers.0");
    h.get_by_label("layers.82");
    // The fit shows all of it: no node is drawn one by one.
    assert_eq!(h.state().view.graph().counts().0, 11_309);
    // At rest, the window stops asking for frames (egui_kittest's `run` fails otherwise).
    h.run();
    let shot = shoot(&mut h, "fold_stress_20k");
    drop(shot);
}

#[test]
fn clicking_a_layer_opens_it_in_place() {
    let mut h = stress_forward(0);
    let inside = nodes_of(&h, "layers.5");
    assert!(inside.len() > 20, "layers.5 holds {} nodes", inside.len());
    assert!(
        h.state()
            .view
            .graph()
            .screen_pos_of(&h.ctx, &inside[0])
            .is_none(),
        "hidden while folded"
    );
    let before: Vec<(String, u32, bool)> = boxes(&h);
    h.get_by_label("layers.5").click();
    h.run_steps(3);
    let after = boxes(&h);
    let l5 = after.iter().find(|b| b.0 == "layers.5").expect("layers.5");
    assert!(!l5.2, "layers.5 is open");
    for name in &inside {
        assert!(
            h.state().view.graph().screen_pos_of(&h.ctx, name).is_some(),
            "{name} drawn inside layers.5"
        );
    }
    // The other layers keep their order (and stay folded).
    let order = |v: &[(String, u32, bool)]| -> Vec<String> {
        v.iter()
            .filter(|b| b.0 != "layers.5")
            .map(|b| b.0.clone())
            .collect()
    };
    assert_eq!(order(&before), order(&after));
    // Clicking its title folds it again.
    h.get_by_label("layers.5").click();
    h.run_steps(3);
    assert!(boxes(&h).iter().any(|b| b.0 == "layers.5" && b.2));
}

#[test]
fn search_opens_the_box_that_hides_the_node() {
    let mut h = stress_forward(0);
    let target = nodes_of(&h, "layers.40")
        .into_iter()
        .find(|n| n.starts_with("mm"))
        .expect("a matmul in layers.40");
    h.key_press(egui::Key::Slash);
    h.run_steps(2);
    h.get_by_role_and_label(Role::TextInput, "graph search")
        .type_text(&target);
    h.run_steps(2);
    h.key_press(egui::Key::Enter);
    h.run_steps(4);
    assert_eq!(selected(&h).as_deref(), Some(target.as_str()));
    assert!(
        boxes(&h).iter().any(|b| b.0 == "layers.40" && !b.2),
        "layers.40 opened to show {target}"
    );
    let pos = h.state().view.graph().screen_pos_of(&h.ctx, &target);
    let canvas = h.state().view.graph().canvas.expect("canvas");
    assert!(
        pos.is_some_and(|p| canvas.contains(p)),
        "{target} on screen"
    );
}

#[test]
fn n_jumps_to_the_one_change_of_a_pass() {
    // Forward pass 002 (optimize_noop_ops) removes 416 aliases and changes one node of 10,312.
    let mut h = stress_forward(2);
    assert_eq!(
        h.state().view.graph().diff_counts.1,
        1,
        "one changed node drawn"
    );
    h.key_press(egui::Key::N);
    h.run_steps(4);
    let sel = selected(&h).expect("n selects the change");
    let canvas = h.state().view.graph().canvas.expect("canvas");
    let pos = h.state().view.graph().screen_pos_of(&h.ctx, &sel);
    assert!(pos.is_some_and(|p| canvas.contains(p)), "{sel} revealed");
    // Its box says what the pass did there.
    let changed: Vec<_> = boxes(&h).into_iter().filter(|b| !b.2).collect();
    assert!(!changed.is_empty());
    h.get_by_label_contains("Changes: 1");
}

#[test]
fn an_open_layer_among_folded_ones_shows_what_the_pass_removed() {
    // Forward pass 002 drops the `alias` ops: five in every layer.
    let mut h = stress_forward(2);
    h.get_by_label("layers.5").click();
    h.run_steps(3);
    let g = h.state().view.graph();
    let (open, (a, r, c)) = g.module_box("layers.5").expect("layers.5 box");
    assert_eq!((a, r, c), (0, 5, 0), "layers.5: −5");
    let (_, around) = g.module_box("layers.6").expect("layers.6 box");
    assert_eq!(around, (0, 5, 0));
    // Look at the top of the open layer and its folded neighbours.
    let canvas = g.canvas.expect("canvas");
    Viewport {
        zoom: 0.55,
        pan: egui::Vec2::ZERO,
    }
    .centred_on(egui::pos2(open.center().x, open.min.y + 420.0), canvas)
    .save_ctx(&h.ctx);
    h.run_steps(3);
    let shot = shoot(&mut h, "fold_expanded_layer");
    // The removed aliases are drawn as red ghosts inside the open box.
    let g = h.state().view.graph();
    let (open, _) = g.module_box("layers.5").expect("layers.5 box");
    let vp = Viewport::load_ctx(&h.ctx);
    let top = vp.to_screen(egui::pos2(open.center().x, open.min.y + 420.0), canvas);
    assert!(
        shot.count_near(top, 400.0, fxray::ui::palette::REMOVED, 30) > 50,
        "red ghosts of the removed aliases and the neighbours' −5 frames"
    );
}

#[test]
fn the_backward_opens_folded_by_layer_too() {
    let mut app = opened(&fixture("npugraph_ex/stress_20k"));
    let first = first_pass_of(&app, "backward");
    app.select_graph(&first);
    assert!(app.wait_idle(crate::common::ui::WAIT));
    let mut h = harness_sized(app, SCREEN);
    h.state_mut().view.graph_mut().group_repeats = false;
    settle(&mut h);
    assert!(smallest_title_px(&h) >= 11.0);
    h.get_by_label("layers").click();
    h.run_steps(3);
    assert_eq!(h.state().view.graph().counts().0, 20_048);
    let layers = boxes(&h)
        .into_iter()
        .filter(|(p, _, folded)| *folded && p.starts_with("layers."))
        .count();
    assert!(layers >= 83, "{layers} layer boxes");
    shoot(&mut h, "fold_stress_backward");
}

/// What is written smallest at open: box titles when grouped (see `smallest_title_px`), else
/// node names (12 px at zoom 1).
fn smallest_text_px(h: &Harness<'static, Fxray>) -> f32 {
    if h.state().view.graph().is_folded() {
        smallest_title_px(h)
    } else {
        Viewport::load_ctx(&h.ctx).zoom * 12.0
    }
}

/// Issue 24: the first view reads. The 280-node sample, a 982-node MoE backward and the 11k-node
/// stress forward, each opened in the app's own window size, draw their box titles (or, shown
/// whole, their node names) at 11 px or more at the opening fit.
#[test]
fn every_graph_opens_with_text_that_reads() {
    let cases = [
        ("showcase", "forward"),
        ("module_truth/moe", "backward"),
        ("npugraph_ex/stress_20k", "forward"),
    ];
    for (case, phase) in cases {
        let mut app = opened(&fixture(case));
        let first = first_pass_of(&app, phase);
        app.select_graph(&first);
        assert!(app.wait_idle(crate::common::ui::WAIT));
        let mut h = crate::common::ui::harness(app);
        settle(&mut h);
        let px = smallest_text_px(&h);
        let g = h.state().view.graph();
        eprintln!(
            "{case} {phase}: {} nodes, folded {}, {} boxes, smallest text {px:.1} px",
            g.counts().0,
            g.is_folded(),
            g.module_boxes().len()
        );
        assert!(px >= 11.0, "{case} {phase}: {px} px");
        if case == "showcase" {
            assert!(g.is_folded(), "280 nodes do not read whole at fit: grouped");
            shoot(&mut h, "first_view_sample");
        }
    }
}
