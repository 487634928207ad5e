//! The Compiles view (issue 15) driven like a user: the breaks are listed with their lines;
//! clicking one shows its location and the graphs on either side, which open in the graph
//! view; the flame chart's total is the metrics' total; the tree says why each model exists.

use crate::common::ui::{compiles, harness, loaded_timeline, model_named, opened, settle, shoot};
use crate::common::{fixture, trace_only};
use egui_kittest::kittest::Queryable;
use fxray::analysis::compiles;

fn open_compiles() -> egui_kittest::Harness<'static, fxray::ui::Fxray> {
    let mut h = harness(opened(&fixture("compile_story")));
    settle(&mut h);
    h.get_by_label("Compiles").click();
    settle(&mut h);
    assert_eq!(h.state().view.central(), fxray::app::TabId::COMPILES);
    h
}

#[test]
fn breaks_are_listed_with_their_lines_and_a_click_shows_both_sides() {
    let mut h = open_compiles();
    h.get_by_label_contains("7 compile ids · 2 graph breaks · 1 recompiles");
    h.get_by_label_contains("✂ compile_story.py:86");
    h.get_by_label_contains("✂ compile_story.py:87");
    h.get_by_label_contains("↻ [3/1] guard failed: 3/0: tensor 'x' size mismatch");

    // One row per attempt makes the list longer than its pane: bring the break on screen.
    h.get_by_label_contains("✂ compile_story.py:87")
        .scroll_to_me();
    h.run_steps(3);
    h.get_by_label_contains("✂ compile_story.py:87").click();
    h.run_steps(3);
    h.get_by_label("Graph break at /home/dev/models/compile_story.py:87");
    // The code line, under the heading and in the user stack.
    assert_eq!(
        h.get_all_by_label("scale = h.mean().item()  # BREAK: item")
            .count(),
        2
    );
    h.get_by_label_contains("before the break: [1/0_1] torch_dynamo_resume_in_forward_at_86");
    h.get_by_label_contains("after the break: [2/0] torch_dynamo_resume_in_forward_at_87");
    // model__1 is also the selected compile's own graph, below the break.
    assert_eq!(h.get_all_by_label("open model__1").count(), 2);
    h.get_by_label("open model__2").click();
    settle(&mut h);
    assert_eq!(h.state().view.central(), fxray::app::TabId::GRAPH);
    let shown = h.state().app.phase.as_ref().and_then(|p| p.current_path());
    let shown = shown.expect("a graph is shown");
    assert!(
        shown.ends_with("npugraph_ex/model__2/dynamo_out_graph.txt"),
        "{}",
        shown.display()
    );
}

#[test]
fn the_tree_says_why_each_model_exists() {
    let mut h = harness(opened(&fixture("compile_story")));
    settle(&mut h);
    h.get_by_label_contains(
        "⤵ graph break at compile_story.py:86: Failed to trace builtin operator",
    );
    h.get_by_label_contains("⤵ graph break at compile_story.py:87");
    h.get_by_label_contains("⤵ recompile: 3/0: tensor 'x' size mismatch at index 0");
    h.get_by_label_contains("⤵ first compile of scale");
}

#[test]
fn flame_chart_total_equals_the_compilation_metrics() {
    let mut h = open_compiles();
    // The tree and the list both have the row; the list's is on screen.
    h.get_all_by_label("[3/1] scale").last().unwrap().click();
    h.run_steps(2);
    let buttons = h.get_all_by_label("🔥 Flame chart").count();
    assert_eq!(
        buttons, 2,
        "one for the trace, one for the selected compile"
    );
    h.get_all_by_label("🔥 Flame chart").last().unwrap().click();
    settle(&mut h);
    assert_eq!(h.state().view.central(), fxray::app::TabId::TIMELINE);
    let want = {
        let story = &compiles(&h).stories[0];
        story.trace.compile("3/1").unwrap().time_s().unwrap()
    };
    let tl = loaded_timeline(&h);
    let total = tl
        .trace
        .tasks
        .iter()
        .find(|t| t.name == "entire_frame_compile")
        .map(|t| t.dur / 1e6)
        .expect("the compile's entire_frame_compile span");
    assert!((total - want).abs() < 2e-3, "flame {total} metrics {want}");
    // Only this compile's spans, nested on their thread.
    assert!(
        tl.trace
            .tasks
            .iter()
            .all(|t| t.arg("compile_id").and_then(|v| v.as_str()) == Some("3/1"))
    );
    assert!(tl.trace.lanes.len() >= 3, "nesting depth gives lanes");
    h.run_steps(3);
    shoot(&mut h, "compiles_flame");
    let story = &compiles(&h).stories[0];
    assert_eq!(
        compiles::flame_total_s(&story.trace, "3/1").map(|f| (f * 1e3).round()),
        Some((total * 1e3).round())
    );
}

#[test]
fn guards_are_searchable() {
    let mut h = open_compiles();
    // The tree and the list both have the row; the list's is on screen.
    h.get_all_by_label("[3/1] scale").last().unwrap().click();
    h.run_steps(2);
    let all = compiles(&h).stories[0]
        .trace
        .compile("3/1")
        .unwrap()
        .guards
        .len();
    h.get_by_label_contains(&format!("{all} of {all} shown"));
    h.state_mut().view.compiles_view_mut().guard_query = "TENSOR_MATCH".into();
    h.run_steps(2);
    h.get_by_label_contains(&format!("1 of {all} shown"));
}

#[test]
fn screenshot_of_the_compiles_view() {
    let mut h = open_compiles();
    h.get_by_label_contains("✂ compile_story.py:86").click();
    h.run_steps(4);
    shoot(&mut h, "compiles");
}

#[test]
fn graphs_found_only_in_the_trace_open_as_passes_of_their_compile() {
    // A TORCH_TRACE-only folder: the trace log and nothing else.
    let dir = trace_only(&fixture("compile_story"));
    let mut h = harness(opened(dir.path()));
    settle(&mut h);
    settle(&mut h);
    h.get_by_label("Compiles").click();
    settle(&mut h);
    h.get_all_by_label("[3/1] scale").last().unwrap().click();
    h.run_steps(3);
    h.get_by_label("open model__4").click();
    settle(&mut h);
    assert_eq!(h.state().view.central(), fxray::app::TabId::GRAPH);
    let phase = h.state().app.phase.as_ref().expect("a graph is open");
    let shown = phase.current_path().unwrap().to_path_buf();
    assert!(
        shown.ends_with("npugraph_ex/model__4/dynamo_out_graph.txt"),
        "{}",
        shown.display()
    );
    assert!(
        !shown.starts_with(dir.path()),
        "never written into the viewed folder"
    );
    assert!(
        !shown.exists(),
        "served from memory, not written anywhere: {}",
        shown.display()
    );
    assert!(
        phase.current_file().is_some_and(|f| f.node_count() > 0),
        "the graph was read from memory"
    );
    // The compile's AOT graph is a pass of its forward phase, in the tree.
    let model = model_named(&h, "model__4");
    assert_eq!(model.phases[0].name, "forward");
    assert!(
        model.phases[0].passes[0]
            .path
            .ends_with("forward/000_aot_forward_graph.txt")
    );
    h.get_by_label_contains("⤵ recompile: 3/0: tensor 'x' size mismatch");
}

/// Issue 24 §3: a restarted compile is two rows, each attempt with its own status and the
/// model folder it wrote (compile_story's 5/0: attempt 0 reached the backend, wrote model__5,
/// and restarted; attempt 1 wrote model__6).
#[test]
fn each_attempt_is_a_row_with_its_own_model() {
    let h = open_compiles();
    // The row, and the tree's Compiles section, list each attempt.
    assert!(h.query_all_by_label("[5/0] forward").count() >= 1);
    assert!(h.query_all_by_label("[5/0_1] forward").count() >= 1);
    h.get_by_label_contains(
        "restarted: <class 'torch._dynamo.exc.TensorifyScalarRestartAnalysis'>",
    );
    // One arrow per attempt that wrote a folder: model__0 … model__6, each once.
    for m in 0..=6 {
        let n = h.query_all_by_label(&format!("➡ model__{m}")).count();
        assert_eq!(n, 1, "model__{m}");
    }
}

#[test]
fn the_details_pane_lists_a_compiles_metrics_in_groups() {
    // `fxray compiles --json` gives [3/1] 23 metrics (times, cache, guards, graph); its
    // `accumulated_cache_size` is 1: the cache held 3/0's entry when 3/1 compiled.
    let mut h = open_compiles();
    h.get_all_by_label("[3/1] scale").last().unwrap().click();
    h.run_steps(3);
    h.get_by_label("Compilation metrics (23)").click();
    h.run_steps(3);
    for group in ["times", "cache", "guards", "graph"] {
        h.get_by_label(group);
    }
    let key = h.get_by_label("accumulated_cache_size");
    let row = key.rect().center().y;
    let value = h
        .get_all_by_label("1")
        .find(|v| (v.rect().center().y - row).abs() < 4.0 && v.rect().left() > key.rect().left());
    assert!(value.is_some(), "accumulated_cache_size 1 on its row");
}

#[test]
fn logs_whose_names_and_records_disagree_on_the_rank_are_flagged() {
    // Rank 1's log copied under the names of ranks 5 and 6: each file's name disagrees with
    // its records, and both claim rank 1.
    let src = trace_of_rank(1);
    let dir = tempfile::tempdir().unwrap();
    for n in [
        "dedicated_log_torch_trace_rank_5_aaaa.log",
        "dedicated_log_torch_trace_rank_6_bbbb.log",
    ] {
        std::fs::copy(&src, dir.path().join(n)).unwrap();
    }
    let mut h = harness(opened(dir.path()));
    settle(&mut h);
    h.get_by_label("Compiles").click();
    settle(&mut h);
    h.get_by_label_contains("⚠ rank 1 is in 2 files");
    h.get_by_label(
        "⚠ dedicated_log_torch_trace_rank_5_aaaa.log: the file name says rank 5, its records say \
         rank 1: fxray shows rank 1",
    );
    h.get_by_label_contains(
        "⚠ dedicated_log_torch_trace_rank_6_bbbb.log: the file name says rank 6",
    );
}

/// `multi_rank`'s trace log of rank `r`.
fn trace_of_rank(r: u32) -> std::path::PathBuf {
    let dir = fixture("npugraph_ex/multi_rank/torch_compile_debug/tlparse");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains(&format!("_rank_{r}_")))
        .unwrap()
}
