//! The status bar on a narrow window with a long path: the path is shortened in the middle and
//! never drawn over the right-hand figures.

use crate::common::ui::{harness_sized, opened, settle};
use crate::common::{copy_tree, fixture};
use egui_kittest::kittest::Queryable;

#[test]
fn a_long_path_is_elided_in_the_middle_not_drawn_over_the_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let mut deep = tmp.path().to_path_buf();
    for i in 0..6 {
        deep.push(format!("a_rather_long_folder_name_from_the_cluster_{i}"));
    }
    deep.push("the_run_that_matters");
    copy_tree(&fixture("showcase/torch_compile_debug"), &deep);
    let mut h = harness_sized(opened(&deep), egui::vec2(1100., 700.));
    settle(&mut h);

    let figures = h.get_by_label_contains("nodes shown of").rect();
    let path = h.get_by_label_contains(" files");
    let text = path.value().unwrap_or_default();
    assert!(text.contains('…'), "not shortened: {text}");
    assert!(
        text.contains("the_run_that_matters  ·  "),
        "the end of the path is kept: {text}"
    );
    assert!(
        text.starts_with(&tmp.path().display().to_string()[..5]),
        "{text}"
    );
    assert!(
        path.rect().max.x <= figures.min.x,
        "path {:?} runs into the figures {:?}",
        path.rect(),
        figures
    );
}

/// The error in the status bar can be copied as text: a click puts it on the clipboard.
#[test]
fn the_status_bar_error_is_copied_by_a_click() {
    let mut app = fxray::app::App::new();
    app.open(std::path::Path::new("/no/such/run_folder"));
    let mut h = crate::common::ui::harness(app);
    settle(&mut h);
    let error = h.state().app.error.clone().expect("an error is shown");
    assert!(error.contains("/no/such/run_folder"), "{error}");
    h.get_by_label(&error).click();
    h.run_steps(1);
    let copied = h
        .output()
        .platform_output
        .commands
        .iter()
        .any(|c| matches!(c, egui::OutputCommand::CopyText(t) if *t == error));
    assert!(copied, "{:?}", h.output().platform_output.commands);
}
