//! UI tests of the diff panels, driving the real app on the showcase fixture with egui_kittest:
//! the compare bar (its counts checked against the diff engine on the same files, another A
//! picked in its menu), the text diff window, the inspector's node history and "Find first
//! pass…".

use crate::common::ui::{current_pass, harness, opened, selected, settle};
use crate::common::{fixture, pass_files};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use fxray::analysis::diff::{self, LineTag};
use fxray::sources::load;

/// The compare bar's counts of pass `a` → pass `b`, as the diff engine makes them.
fn counts(a: usize, b: usize) -> String {
    let files = pass_files("showcase", "forward");
    let fa = load::graph(&files[a]).unwrap();
    let fb = load::graph(&files[b]).unwrap();
    diff::diff(&fa, &fb).counts().to_string()
}

#[test]
fn compare_bar_counts_other_a_and_text_diff() {
    let mut h = harness(opened(&fixture("showcase")));
    settle(&mut h);
    h.get_by_label("004 apply_pattern_passes").click();
    settle(&mut h);
    assert_eq!(current_pass(&h), 4);

    // Default A: the previous pass.
    let prev = counts(3, 4);
    assert!(prev.starts_with("+12 "), "pass 004 adds 12 nodes: {prev}");
    h.get_by_label(&prev);
    let menu = "Compared with: previous pass (003 recover_view_inplace_pattern) ⏷";
    h.get_by_label(menu).click();
    h.run_steps(2);

    // Pick pass 000 as A: the counts are those of 000 → 004.
    h.get_by_label("compare with 000 graph").click();
    settle(&mut h);
    let from0 = counts(0, 4);
    assert_ne!(from0, prev);
    h.get_by_label(&from0);
    assert!(h.query_by_label(&prev).is_none(), "the old counts are gone");
    h.get_by_label_contains("Compared with: model__0 · forward · 000 graph");

    // The text diff of 000 → 004 lists a changed line, unchanged stretches folded.
    h.get_by_label("Text diff").click();
    settle(&mut h);
    assert!(h.state().view.show_text_diff);
    let files = pass_files("showcase", "forward");
    let ta = std::fs::read_to_string(&files[0]).unwrap();
    let tb = std::fs::read_to_string(&files[4]).unwrap();
    let lines = diff::text_diff(&ta, &tb);
    let first = lines
        .iter()
        .find(|l| l.tag != LineTag::Equal)
        .expect("a changed line");
    let needle = first.text.trim();
    assert!(
        !h.query_all_by_label_contains(needle)
            .collect::<Vec<_>>()
            .is_empty(),
        "the first changed line is listed: {needle}"
    );
    let hunks = diff::hunks(&lines, 3);
    if hunks[0].start > 0 {
        h.get_by_label(&format!("… {} unchanged lines …", hunks[0].start));
    }
    // Side by side lists it too.
    h.get_by_label("Side by side (text diff)").click();
    h.run_steps(3);
    assert!(h.state().view.text_diff.side_by_side);
    assert!(
        !h.query_all_by_label_contains(needle)
            .collect::<Vec<_>>()
            .is_empty(),
        "side by side lists {needle}"
    );

    h.get_by_label("Close window").click();
    h.run_steps(2);
    assert!(!h.state().view.show_text_diff);

    // The chosen A stays while scrubbing: pass 005 is now compared with 000 too.
    h.key_press(egui::Key::CloseBracket);
    settle(&mut h);
    assert_eq!(current_pass(&h), 5);
    h.get_by_label(&counts(0, 5));

    // Back to the previous pass.
    h.get_by_label_contains("Compared with: model__0 · forward · 000 graph")
        .click();
    h.run_steps(2);
    h.get_by_label("compare with previous pass").click();
    settle(&mut h);
    h.get_by_label(&counts(4, 5));
    h.get_by_label_contains("Compared with: previous pass (004 apply_pattern_passes)");
}

#[test]
fn node_history_lists_the_passes_that_changed_it_and_jumps_there() {
    let mut h = harness(opened(&fixture("showcase")));
    settle(&mut h);
    assert_eq!(current_pass(&h), 0);
    // expected.json: view_to_reshape (005) retargets `view` (aten.view → aten.reshape).
    h.state_mut().app.select_node(Some("view".into()));
    h.run_steps(3);
    h.get_by_label("History");
    h.get_by_label("000 graph (history)");
    let link = h.get_by_role_and_label(Role::Link, "005 view_to_reshape (history)");
    link.click();
    h.run_steps(3);
    assert_eq!(current_pass(&h), 5, "the history link shows pass 005");
    assert_eq!(selected(&h).as_deref(), Some("view"));
    // The pass on screen changed it: before → after of its target.
    h.get_by_label("Changed by this pass");
    h.get_by_label("aten.view");
    h.get_by_label("aten.reshape");
    h.get_by_label_contains("changed: target");
}

#[test]
fn find_first_pass_where_a_node_disappears() {
    let mut h = harness(opened(&fixture("showcase")));
    settle(&mut h);
    h.get_by_label("Find first pass…").click();
    h.run_steps(2);
    let query = h.get_by_role_and_label(Role::TextInput, "first pass query");
    query.click();
    h.run_steps(1);
    h.get_by_role_and_label(Role::TextInput, "first pass query")
        .type_text("alias");
    h.run_steps(2);
    h.get_by_label("node disappears").click();
    // The search runs in the background.
    settle(&mut h);
    // expected.json: optimize_noop_ops (002) removes `alias` and `alias_1`.
    assert_eq!(current_pass(&h), 2);
    assert_eq!(selected(&h).as_deref(), Some("alias"));
    h.get_by_label("alias: node disappears in 002 optimize_noop_ops");
    // The inspector says where it went.
    h.get_by_label("alias is not in this pass");
    h.get_by_label("Removed by this pass");
    h.get_by_label("002 optimize_noop_ops (history)");
    h.get_by_label("vanished");

    // A node that is never there: not found, and the pass stays.
    h.get_by_label("node appears").click();
    settle(&mut h);
    assert_eq!(current_pass(&h), 0, "alias is in pass 000");
    let q = h.get_by_role_and_label(Role::TextInput, "first pass query");
    q.click();
    h.run_steps(1);
    for _ in 0..5 {
        h.key_press(egui::Key::Backspace);
    }
    h.get_by_role_and_label(Role::TextInput, "first pass query")
        .type_text("no_such_node");
    h.run_steps(2);
    h.get_by_label("node appears").click();
    settle(&mut h);
    assert_eq!(current_pass(&h), 0);
    h.get_by_label("no_such_node: node appears: not found");
}
