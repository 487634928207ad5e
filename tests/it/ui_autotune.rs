//! UI tests of the Autotune tab on tests/data/autotune/ (see tests/autotune.rs): the table,
//! selecting a kernel, the chart's winner, kernel files in the code viewer, the link from a
//! kernel to its fused FX nodes, and pasted log text.

use crate::common::ui::{harness, opened, settle};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fxray::app::App;
use fxray::ui::Fxray;
use std::path::{Path, PathBuf};

fn data(case: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/autotune")
        .join(case)
}

/// The app on `case` with the Autotune tab chosen by clicking it, and its report built.
fn autotune_tab(case: &str) -> Harness<'static, Fxray> {
    let mut h = harness(opened(&data(case)));
    settle(&mut h);
    h.get_by_label("Autotune").click();
    settle(&mut h);
    assert_eq!(h.state().view.central(), fxray::app::TabId::AUTOTUNE);
    h
}

#[test]
fn selecting_a_kernel_charts_its_candidates_with_the_winner() {
    let mut h = autotune_tab("topn");
    h.get_by_label_contains("3 fused kernels");
    assert_eq!(
        h.state()
            .app
            .peek::<fxray::app::autotune::AutotuneState>()
            .map(|a| a.builds()),
        Some(1)
    );
    // The first kernel is selected by default: gelu's add/erf/mul, candidate #1 won.
    let chart = h.state().view.autotune().chart().cloned().expect("a chart");
    assert!(chart.kernel.starts_with("autofused_add_erf_mul_"));
    assert_eq!(chart.winner, Some(1));
    h.get_by_label("winner: candidate #1, 9.81 us");
    h.get_by_label("2.15×");

    h.get_by_label("autofused_permute_1b6e94…").click();
    h.run_steps(3);
    let chart = h.state().view.autotune().chart().cloned().expect("a chart");
    assert!(
        chart.kernel.starts_with("autofused_permute_"),
        "{}",
        chart.kernel
    );
    assert_eq!(chart.timings_us, [Some(3.95), Some(4.10)]);
    assert_eq!(chart.winner, Some(0), "the fastest, as logged");
    h.get_by_label("winner: candidate #0, 3.95 us");
    // Its candidates, each key a link to asc_kernel_<key>.py; the kept winner's tiling line.
    h.get_by_label("★#0");
    h.get_by_label("2ca4397f1ddf…");
    h.get_by_label_contains("md5 2ca4397f1ddf3200fa5362e675280a7b · check ok");
}

#[test]
fn kernel_files_open_in_the_code_viewer() {
    let mut h = autotune_tab("topn");
    h.get_by_label("asc_graph.py").click();
    settle(&mut h);
    let file = h
        .state()
        .app
        .peek::<fxray::app::autotune::AutotuneState>()
        .and_then(|a| a.file.as_ref())
        .expect("a file open");
    assert!(file.path.ends_with("asc_graph.py"));
    assert!(file.code.ready().is_some(), "read: {:?}", file.code.error());
    h.get_by_label_contains("graph = ascir.HintGraph('autofused_add_erf_mul_");
}

#[test]
fn a_kernel_links_to_its_fused_fx_nodes() {
    let mut h = autotune_tab("topn");
    h.get_by_label_contains("Fused FX nodes (add, erf, mul)");
    h.get_by_label("erf").click();
    settle(&mut h);
    assert_eq!(h.state().view.central(), fxray::app::TabId::GRAPH);
    let ph = h.state().app.phase.as_ref().expect("a phase");
    assert_eq!(ph.selected.as_deref(), Some("erf"));
    assert!(
        ph.passes[ph.current]
            .path
            .ends_with("fx_graph_transformed.py")
    );
}

#[test]
fn incomplete_evidence_is_shown_not_hidden() {
    let mut h = autotune_tab("incomplete");
    h.get_by_label_contains("5 fused kernels");
    h.get_by_label("1 log problems");
    // div's cache kept candidate #0 while the log says #2; relu's optimize_tiling is corrupt.
    assert_eq!(h.get_all_by_label("MISMATCH").count(), 2);
    h.get_by_label("autofused_neg_a211c8…").click();
    h.run_steps(3);
    h.get_by_label("No timings to chart.");
    h.get_by_label_contains("⚠ no timings: no inductor_asc log line names this kernel");
    assert_eq!(h.state().view.autotune().chart().unwrap().winner, None);
}

#[test]
fn pasted_log_without_a_folder() {
    let mut h = harness(App::new());
    h.state_mut().view.tabs.show(fxray::app::TabId::AUTOTUNE);
    h.run_steps(2);
    h.get_by_label("Paste log…").click();
    h.run_steps(2);
    let text = std::fs::read_to_string(data("topn").join("console.log")).unwrap();
    h.state_mut().view.autotune_mut().paste_text = text;
    h.run_steps(1);
    h.get_by_label("Join pasted log").click();
    settle(&mut h);
    h.get_by_label_contains("2 fused kernels");
    h.get_by_label("Pasted log ✓");
    assert_eq!(h.state().view.autotune().chart().unwrap().winner, Some(1));
    // Built once: later frames start no new job.
    h.run_steps(3);
    assert!(
        !h.state().app.busy(),
        "the report is not rebuilt every frame"
    );
}

#[test]
fn odd_pasted_text_renders_every_kernel() {
    let mut app = App::new();
    let (autotune, cx) = app.part::<fxray::app::autotune::AutotuneState>();
    autotune.paste_log(
        &cx,
        "Kernel /c/autofused_ü_éééééééééééééééé/static_kernel/ééééééééééééééé/kernel.so: Timing = 1 us\n\
         Autotune completed /c/autofused_z_0/x, best kernel index: 5, detail:\n\
         Kernel /c/autofused_z_0/x/static_kernel/k/kernel.so: Timing = nan us\n\
         Kernel /c/autofused_z_0/x/static_kernel/k2/kernel.so: Timing = inf us\n",
    );
    assert!(app.wait_idle(crate::common::ui::WAIT));
    let names: Vec<String> = app
        .peek::<fxray::app::autotune::AutotuneState>()
        .unwrap()
        .report
        .as_ref()
        .unwrap()
        .kernels
        .iter()
        .map(|k| k.name.clone())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    let mut h = harness(app);
    h.state_mut().view.tabs.show(fxray::app::TabId::AUTOTUNE);
    for n in names {
        h.state_mut().view.autotune_mut().selected = Some(n.clone());
        h.run_steps(2);
        assert_eq!(
            h.state().view.autotune().chart().map(|c| c.kernel.clone()),
            Some(n)
        );
    }
}

#[test]
fn the_run_tree_lists_kernels_and_opens_the_tab() {
    let mut h = harness(opened(&data("topn")));
    settle(&mut h);
    h.get_by_label("AscendC kernels (3)").click();
    h.run_steps(2);
    h.get_by_label("autofused_permute_1b6e94…").click();
    settle(&mut h);
    assert_eq!(h.state().view.central(), fxray::app::TabId::AUTOTUNE);
    let chart = h.state().view.autotune().chart().cloned().expect("a chart");
    assert!(chart.kernel.starts_with("autofused_permute_"));
    assert_eq!(chart.winner, Some(0));
}
