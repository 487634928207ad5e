//! Scrubbing passes in the real app: `]` and the pass strip move through the showcase's
//! passes, the overlay marks exactly what each pass changed (checked against the diff engine
//! on the same files), and side by side shows the compared pass next to it.

use crate::common::ui::{harness_sized, opened, settle, shoot};
use crate::common::{fixture, pass_files};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fxray::analysis::diff;
use fxray::sources::load;
use fxray::ui::Fxray;
use fxray::ui::palette::ADDED;

fn harness() -> Harness<'static, Fxray> {
    let mut h = harness_sized(opened(&fixture("showcase")), egui::vec2(1500., 900.));
    settle(&mut h);
    h
}

/// (added, changed, removed) between showcase passes `k-1` and `k`, by the diff engine.
fn expected(k: usize) -> (usize, usize, usize) {
    let files = pass_files("showcase", "forward");
    let a = load::graph(&files[k - 1]).unwrap();
    let b = load::graph(&files[k]).unwrap();
    let c = diff::diff(&a, &b).counts();
    (c.added, c.changed, c.removed)
}

fn current(h: &Harness<'static, Fxray>) -> usize {
    h.state().app.phase.as_ref().unwrap().current
}

#[test]
fn scrubbing_marks_exactly_what_each_pass_changed() {
    let mut h = harness();
    assert_eq!(current(&h), 0);
    assert_eq!(
        h.state().view.graph().diff_counts,
        (0, 0, 0),
        "pass 000 has nothing to compare with"
    );
    let changing: Vec<usize> = (1..19).filter(|&k| expected(k) != (0, 0, 0)).collect();
    // expected.json: seven passes change the graph.
    assert_eq!(changing, [1, 2, 4, 5, 6, 10, 11]);
    for k in 1..=6 {
        h.key_press(egui::Key::CloseBracket);
        h.run_steps(3);
        assert_eq!(current(&h), k);
        assert_eq!(
            h.state().view.graph().diff_counts,
            expected(k),
            "overlay of pass {k}"
        );
    }
    // The strip tells each pass's counts on hover: pass 004's are those of the engine.
    let counts = {
        let files = pass_files("showcase", "forward");
        let a = load::graph(&files[3]).unwrap();
        let b = load::graph(&files[4]).unwrap();
        diff::diff(&a, &b).counts().to_string()
    };
    let shown = |h: &Harness<'static, Fxray>| h.query_all_by_label_contains(&counts).count();
    let before = shown(&h);
    h.get_by_label("pass 004 apply_pattern_passes").hover();
    h.run_steps(3);
    assert_eq!(shown(&h), before + 1, "the strip's tooltip shows {counts}");
    // Pass 002 optimize_noop_ops removed `alias` and `alias_1`: two ghosts.
    assert_eq!(expected(2).2, 2);

    // The strip: click pass 010 (eliminate_dead_code), whose removals show as ghosts.
    h.get_by_label("pass 010 eliminate_dead_code").click();
    h.run_steps(3);
    assert_eq!(current(&h), 10);
    let (_, _, ghosts) = h.state().view.graph().diff_counts;
    assert_eq!(ghosts, expected(10).2);
    assert!(ghosts > 0);

    // Off, the overlay marks nothing; `D` brings it back.
    h.get_by_label("Diff").click();
    h.run_steps(2);
    assert_eq!(h.state().view.graph().diff_counts, (0, 0, 0));
    h.key_press(egui::Key::D);
    h.run_steps(2);
    assert_eq!(h.state().view.graph().diff_counts, expected(10));
}

#[test]
fn side_by_side_shows_the_compared_pass() {
    let mut h = harness();
    h.get_by_label("pass 004 apply_pattern_passes").click();
    h.run_steps(3);
    h.get_by_label("Side by side").click();
    h.run_steps(3);
    assert!(h.state().view.graph().side_by_side);
    // Both halves share the viewport: B's canvas is the right half.
    let canvas = h.state().view.graph().canvas.unwrap();
    assert!(
        canvas.left() > 600.0,
        "B is drawn on the right half: {canvas:?}"
    );
    h.state_mut().app.reveal_node("addmm_default".into());
    h.run_steps(4);
    let shot = shoot(&mut h, "side_by_side");
    // B (right) draws the addmm pass 004 created, outlined in the overlay's green.
    let at = h
        .state()
        .view
        .graph()
        .screen_pos_of(&h.ctx, "addmm_default")
        .unwrap();
    assert!(
        canvas.contains(at),
        "addmm_default at {at:?} is in B {canvas:?}"
    );
    assert!(
        shot.count_near(at, 60.0, ADDED, 24) > 20,
        "no added outline at {at:?}"
    );
}

#[test]
fn overlay_screenshot() {
    let mut h = harness();
    h.get_by_label("pass 004 apply_pattern_passes").click();
    h.run_steps(3);
    h.state_mut().app.reveal_node("addmm_default".into());
    h.run_steps(2);
    h.state_mut().app.select_node(None);
    h.run_steps(3);
    // Pass 004 fuses mm + add into addmm: +12 (addmm_default… and their views), ~6 rewired.
    assert_eq!(h.state().view.graph().diff_counts, (12, 6, 0));
    let shot = shoot(&mut h, "diff_overlay");
    let at = h
        .state()
        .view
        .graph()
        .screen_pos_of(&h.ctx, "addmm_default")
        .unwrap();
    assert!(
        shot.count_near(at, 60.0, ADDED, 24) > 20,
        "no added outline at {at:?}"
    );
}
