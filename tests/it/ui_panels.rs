//! UI tests of the inspector, the output_code.py viewer and the logs panel, driving the real
//! app on the showcase fixture (tests/fixtures/showcase). Background jobs (indexing,
//! parsing, layout, log reading) are waited for with `App::wait_idle` between frames.

use crate::common::ui::{WAIT, harness, opened, selected, settle};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fxray::app::App;
use fxray::ui::Fxray;
use std::path::Path;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
const SHOWCASE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/showcase");

/// The showcase opened, its first phase loaded: pass 000 of model__0/forward on screen.
fn showcase_app() -> App {
    let app = opened(Path::new(SHOWCASE));
    let pass = app.phase.as_ref().map(|p| p.current);
    assert_eq!(pass, Some(0), "the first pass is shown");
    app
}

fn current_pass_name(h: &Harness<'static, Fxray>) -> Option<String> {
    let ph = h.state().app.phase.as_ref()?;
    ph.passes.get(ph.current).map(|p| p.name.clone())
}

#[test]
fn nothing_open_shows_a_hint() {
    let mut h = harness(App::new());
    h.run_steps(2);
    h.get_by_label_contains("drop a torch_compile_debug folder or a .tar.gz / .zip of one here");
}

#[test]
fn graph_summary_without_a_selection() {
    let mut h = harness(showcase_app());
    h.run_steps(3);
    // expected.json: 000_aot_forward_graph.txt has 280 nodes, 36 placeholders.
    h.get_by_label("280 nodes");
    h.get_by_label("000_aot_forward_graph.txt");
    h.get_by_label("placeholder");
    h.get_by_label("matmul / conv");
    h.get_by_label("every line understood");
}

#[test]
fn inspector_shows_the_selected_node() {
    let mut app = showcase_app();
    app.select_node(Some("mul".into()));
    let mut h = harness(app);
    h.run_steps(3);
    // mul: "f32[2, 8, 16]" = torch.ops.aten.mul.Tensor(_to_copy, rsqrt), line 16 of pass 000.
    h.get_by_label("mul");
    h.get_by_label("torch.ops.aten.mul.Tensor");
    h.get_by_label("f32");
    h.get_by_label("[2, 8, 16]");
    h.get_by_label("call_function");
    h.get_by_label("elementwise");
    h.get_by_label("showcase_model.py:69 in forward");
    h.get_by_label_contains("hidden_states * torch.rsqrt(variance + self.variance_epsilon)");
    h.get_by_label("line 16 of 000_aot_forward_graph.txt");
    h.get_by_label("inputs (2)");
    h.get_by_label("users (1)");
    // Node links carry the node's name; the first link to a node (here in the args) is found
    // by its bare name, the repeat in the inputs list by its context.
    for name in ["_to_copy", "rsqrt", "_to_copy_1"] {
        h.get_by_role_and_label(Role::Link, name);
    }
    h.get_by_label("rsqrt (input)");
    // output_code.py names mul on lines 28 (its definition) and 29.
    h.get_by_label("In output_code.py (2)");
    h.get_by_label_contains("28: mul = torch.ops.aten.mul.Tensor(_to_copy, rsqrt)");
    h.get_by_label_contains("29: _to_copy_1 = ");
}

#[test]
fn clicking_a_producer_selects_it() {
    let mut app = showcase_app();
    app.select_node(Some("mul".into()));
    let mut h = harness(app);
    h.run_steps(3);
    h.get_by_label("rsqrt (input)").click();
    h.run_steps(2);
    assert_eq!(selected(&h).as_deref(), Some("rsqrt"));
    // rsqrt's own page: its producer `add` is a link, and mul is now among its users.
    h.get_by_label("torch.ops.aten.rsqrt.default");
    h.get_by_label("mul").click();
    h.run_steps(2);
    assert_eq!(selected(&h).as_deref(), Some("mul"));
    // An argument link does the same.
    h.get_by_label("_to_copy").click();
    h.run_steps(2);
    assert_eq!(selected(&h).as_deref(), Some("_to_copy"));
}

#[test]
fn clear_selection_returns_to_the_summary() {
    let mut app = showcase_app();
    app.select_node(Some("mul".into()));
    let mut h = harness(app);
    h.run_steps(3);
    h.get_by_label("✖").click();
    h.run_steps(2);
    assert_eq!(selected(&h), None);
    h.get_by_label("280 nodes");
}

#[test]
fn selection_missing_from_the_pass_is_reported() {
    let mut app = showcase_app();
    // `ones` exists in pass 000 only (post_grad_custom_pre_pass removes it).
    app.select_node(Some("ones".into()));
    app.step_pass(1);
    let mut h = harness(app);
    h.run_steps(3);
    h.get_by_label("ones is not in this pass");
    h.get_by_label("278 nodes");
}

#[test]
fn sub_graph_links_reach_into_the_branches_of_cond() {
    let mut app = App::new();
    app.open(&Path::new(FIXTURES).join("npugraph_ex/torch_cond"));
    assert!(app.wait_idle(WAIT));
    // `cond = torch.ops.higher_order.cond(gt, true_graph_0, false_graph_0, (addmm,))`
    app.select_node(Some("cond".into()));
    let mut h = harness(app);
    h.run_steps(3);
    h.get_by_label("torch.ops.higher_order.cond");
    h.get_by_label("sub-graphs (2)");
    // `true_graph_0` names both the get_attr node (an argument) and the branch class.
    h.get_by_label("true_graph_0 (sub-graph)").click();
    h.run_steps(2);
    assert_eq!(selected(&h).as_deref(), Some("true_graph_0/output"));
    h.get_by_label("in sub-graph true_graph_0");
    // Links inside the branch stay inside it.
    let input = h
        .state()
        .app
        .phase
        .as_ref()
        .and_then(|p| p.selected_node())
        .and_then(|(g, n)| n.inputs.first().and_then(|&i| g.nodes.get(i)))
        .map(|n| n.name.clone())
        .expect("the branch output has an input");
    h.get_by_label(&format!("{input} (input)")).click();
    h.run_steps(2);
    assert_eq!(selected(&h), Some(format!("true_graph_0/{input}")));
}

#[test]
fn code_line_click_opens_the_viewer_at_that_line() {
    let mut app = showcase_app();
    app.select_node(Some("mul".into()));
    let mut h = harness(app);
    h.run_steps(3);
    assert!(!h.state().view.show_code);
    h.get_by_label_contains("28: mul = ").click();
    h.run_steps(3);
    let s = h.state();
    assert!(s.view.show_code, "the code window opened");
    assert_eq!(s.view.code.highlighted_line(), Some(28));
    assert!(
        !s.app.nav.has(|r| matches!(r, fxray::app::Nav::CodeLine(_))),
        "the viewer took the jump"
    );
    // The window shows the file, with line numbers; line 28 is on screen.
    h.get_by_label("362 lines"); // wc -l output_code.py
    h.get_by_label(" 28 ");
}

#[test]
fn code_viewer_find_moves_between_matches() {
    let mut app = showcase_app();
    app.nav.push(fxray::app::Nav::CodeLine(1));
    let mut h = harness(app);
    h.state_mut().view.show_code = true;
    h.run_steps(2);
    assert_eq!(h.state().view.code.highlighted_line(), Some(1));
    h.state_mut().view.code.query = "fx_graph_name".into();
    h.run_steps(2);
    let matches = h.state().view.code.matches().to_vec();
    assert!(!matches.is_empty(), "output_code.py names fx_graph_name");
    assert_eq!(
        h.state().view.code.highlighted_line(),
        matches.first().copied()
    );
    if matches.len() > 1 {
        h.get_by_label("⏷").click();
        h.run_steps(2);
        assert_eq!(
            h.state().view.code.highlighted_line(),
            matches.get(1).copied()
        );
        h.get_by_label("⏶").click();
        h.run_steps(2);
    }
    assert_eq!(
        h.state().view.code.highlighted_line(),
        matches.first().copied()
    );
}

/// The logs panel open on the showcase; it opens the backend's debug.log by itself.
fn logs_harness() -> Harness<'static, Fxray> {
    let mut h = harness(showcase_app());
    h.state_mut().view.show_logs = true;
    settle(&mut h);
    h
}

#[test]
fn logs_panel_lists_debug_log_and_filters_by_level() {
    let mut h = logs_harness();
    let log = h
        .state()
        .app
        .peek::<fxray::app::logs::LogState>()
        .and_then(|s| s.view.as_ref())
        .map(|l| l.path.clone());
    assert!(
        log.is_some_and(|p| p.ends_with("npugraph_ex/debug.log")),
        "debug.log auto-opened"
    );
    // The showcase debug.log: 1722 DEBUG, 4 INFO and 1 EVENT records.
    assert_eq!(h.state().view.logs.shown(), Some((1727, 1727)));
    h.get_by_label("1727/1727 records");
    h.get_by_label_contains("npugraph_ex backend called for model__0");
    h.get_by_label("DEBUG").click();
    h.run_steps(2);
    assert_eq!(h.state().view.logs.shown(), Some((5, 1727)));
    h.get_by_label("5/1727 records");
    h.get_by_label("INFO").click();
    h.run_steps(2);
    assert_eq!(
        h.state().view.logs.shown(),
        Some((1, 1727)),
        "only the EVENT record is left"
    );
}

#[test]
fn logs_text_filter_and_pass_chip() {
    let mut h = logs_harness();
    h.state_mut().view.logs.text = "pass [view_to_reshape]".into();
    h.run_steps(2);
    assert_eq!(h.state().view.logs.shown(), Some((1, 1727)));
    assert_eq!(current_pass_name(&h).as_deref(), Some("graph"));
    h.get_by_label("pass: view_to_reshape").click();
    settle(&mut h);
    assert_eq!(current_pass_name(&h).as_deref(), Some("view_to_reshape"));
}

#[test]
fn logs_path_chip_opens_the_graph_file() {
    let mut h = logs_harness();
    // Line 2 names the dynamo graph by a path of the machine that wrote the log.
    h.state_mut().view.logs.text = "dynamo graph dumped to".into();
    h.run_steps(2);
    assert_eq!(h.state().view.logs.shown(), Some((1, 1727)));
    h.get_by_label("file: dynamo_out_graph.txt").click();
    settle(&mut h);
    let key = h.state().app.phase.as_ref().map(|p| p.key.clone());
    assert!(
        key.is_some_and(|k| k.ends_with("model__0/dynamo_out_graph.txt")),
        "the dynamo graph opened"
    );
}

#[test]
fn logs_model_chip_opens_the_first_pass() {
    let mut h = logs_harness();
    h.state_mut().app.step_pass(3);
    h.state_mut().view.logs.text = "backend called for".into();
    h.run_steps(2);
    assert_eq!(
        current_pass_name(&h).as_deref(),
        Some("recover_view_inplace_pattern")
    );
    h.get_by_label("model: model__0").click();
    settle(&mut h);
    assert_eq!(current_pass_name(&h).as_deref(), Some("graph"));
}

#[test]
fn selecting_a_record_shows_it_in_full() {
    let mut h = logs_harness();
    h.state_mut().view.logs.text = "backend called for".into();
    h.run_steps(2);
    h.get_by_label_contains("npugraph_ex backend called for model__0")
        .click();
    h.run_steps(2);
    assert_eq!(h.state().view.logs.selected, Some(0));
    h.get_by_label("line 1");
}

#[test]
fn problems_tab_lists_a_broken_pass_and_a_click_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    crate::common::copy_tree(Path::new(SHOWCASE), dir.path());
    let mut passes: Vec<_> = walkdir::WalkDir::new(dir.path())
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.into_path())
        .filter(|p| {
            p.parent().is_some_and(|d| d.ends_with("forward"))
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().contains("_after_"))
        })
        .collect();
    passes.sort();
    let broken = passes[2].clone();
    // Binary garbage: nothing of it reads as a graph.
    std::fs::write(&broken, [0u8, 159, 146, 150, 0, 0, 7]).unwrap();
    let mut h = harness(opened(dir.path()));
    settle(&mut h);
    h.state_mut().view.tabs.show(fxray::app::TabId::PROBLEMS);
    h.run_steps(3);
    assert_eq!(h.state().view.central(), fxray::app::TabId::PROBLEMS);
    let name = broken.file_name().unwrap().to_string_lossy().into_owned();
    h.get_by_label(&name).click();
    h.run_steps(3);
    assert_eq!(
        h.state().view.central(),
        fxray::app::TabId::GRAPH,
        "a click shows the graph"
    );
    let shown = h
        .state()
        .app
        .phase
        .as_ref()
        .and_then(|p| p.current_path().map(Path::to_path_buf));
    assert_eq!(shown.as_deref(), Some(broken.as_path()));
}

/// eframe's storage in memory: what a restart reads back.
#[derive(Default)]
struct MemoryStorage(std::collections::HashMap<String, String>);

impl eframe::Storage for MemoryStorage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}

/// Opens View and returns the theme entry it offers: "Light theme" in a dark window.
fn theme_entry(h: &mut Harness<'static, Fxray>) -> &'static str {
    let dark = h.ctx.global_style().visuals.dark_mode;
    h.get_by_label("View").click();
    h.run_steps(2);
    let label = if dark { "Light theme" } else { "Dark theme" };
    h.get_by_label(label);
    label
}

fn window_on(desktop: egui::Theme) -> Harness<'static, Fxray> {
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400., 900.))
        .with_theme(desktop)
        .build_ui_state(|ui, s: &mut Fxray| s.ui(ui), Fxray::new(App::new()));
    h.run();
    h
}

/// On a light desktop the user picks the dark theme, on a dark one the light theme; at the
/// next launch, on the same desktop, the window comes back in the theme they picked.
#[test]
fn the_theme_survives_a_restart() {
    for desktop in [egui::Theme::Light, egui::Theme::Dark] {
        let mut h = window_on(desktop);
        let dark_at_start = h.ctx.global_style().visuals.dark_mode;
        assert_eq!(dark_at_start, desktop == egui::Theme::Dark);
        let other = theme_entry(&mut h);
        h.get_by_label(other).click();
        h.run_steps(2);
        assert_eq!(h.ctx.global_style().visuals.dark_mode, !dark_at_start);
        let mut storage = MemoryStorage::default();
        eframe::App::save(h.state_mut(), &mut storage);

        // A new window reads the storage before its first frame.
        let mut again = window_on(desktop);
        assert_eq!(again.ctx.global_style().visuals.dark_mode, dark_at_start);
        let ctx = again.ctx.clone();
        again.state_mut().restore_settings(&storage, &ctx);
        again.run();
        assert_eq!(
            again.ctx.global_style().visuals.dark_mode,
            !dark_at_start,
            "on a {desktop:?} desktop"
        );
        // The menu offers the way back.
        assert_ne!(theme_entry(&mut again), other);
    }
}

/// Help ▸ Keyboard shortcuts lists every row of the tables the key handlers read (keys as
/// egui names them, and what they do); F1 opens the same list.
#[test]
fn the_shortcuts_window_lists_what_the_keys_do() {
    let mut h = harness(App::new());
    h.run();
    assert!(h.query_by_label("Keyboard shortcuts").is_none());
    h.get_by_label("Help").click();
    h.run_steps(2);
    h.get_by_label("Keyboard shortcuts").click();
    h.run_steps(2);
    let sections = fxray::ui::shortcuts::sections(&h.ctx);
    let rows: usize = sections.iter().map(|(_, r)| r.len()).sum();
    assert!(rows >= 25, "{rows} keys listed");
    for (heading, rows) in &sections {
        h.get_by_label(heading);
        for (keys, what) in rows {
            assert!(h.query_all_by_label(keys).count() >= 1, "{keys} not listed");
            assert!(h.query_all_by_label(what).count() >= 1, "{what} not listed");
        }
    }
    assert!(h.query_all_by_label("Ctrl+O").count() >= 1);
    assert!(h.query_all_by_label("Ctrl+F or /").count() >= 1);
    assert!(h.query_all_by_label("[").count() >= 1);
    assert!(h.state().view.show_shortcuts);

    let mut again = harness(App::new());
    again.run();
    again.key_press(egui::Key::F1);
    again.run_steps(2);
    assert!(again.state().view.show_shortcuts, "F1 opens the list");
    again.get_by_label("Search nodes");
}
