//! The Run panel with the real `python3`: fill the form, run a script that writes a debug
//! tree, see its output stream in the console and its run folder open in the app.

use crate::common::ui::{harness_sized, shoot};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use fxray::app::App;
use std::time::{Duration, Instant};

fn run_of(app: &App) -> &fxray::app::run::RunState {
    app.peek().expect("the Run panel made the run's state")
}

#[test]
fn fill_the_form_run_see_the_output_and_the_run_folder_open() {
    let work = tempfile::tempdir().expect("temp");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/runner/writes_tree.py");
    let mut h = harness_sized(App::new(), egui::vec2(1500., 900.));
    h.run_steps(2);
    h.get_by_label("Run").click();
    h.run_steps(2);

    for (field, text) in [
        ("Script", script.display().to_string()),
        ("Arguments", "--steps 3 \"two words\"".to_string()),
        ("Working folder", work.path().display().to_string()),
    ] {
        h.get_by_role_and_label(Role::TextInput, field).click();
        h.run_steps(1);
        h.get_by_role_and_label(Role::TextInput, field)
            .type_text(&text);
        h.run_steps(1);
    }
    let form = run_of(&h.state().app).form.clone();
    assert_eq!(form.script, script);
    assert_eq!(form.args, ["--steps", "3", "two words"]);

    h.get_by_label("▶ Run").click();
    let start = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(20));
        h.run_steps(1);
        let app = &h.state().app;
        let done = run_of(app).current.as_ref().is_some_and(|r| !r.running());
        let opened = app
            .workspace
            .as_ref()
            .is_some_and(|w| w.index.root.to_string_lossy().contains("run_"));
        // …and watched, so new passes of a longer run would appear.
        if done && opened && app.phase.is_some() && app.live.backend.is_some() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the run did not finish and open"
        );
    }
    assert!(h.state_mut().app.wait_idle(crate::common::ui::WAIT));
    h.run_steps(3);
    // The console shows what the script printed, stderr included, and how it ended.
    h.get_by_label("wrote pass 1");
    h.get_by_label(r#"argv ["--steps", "3", "two words"]"#);
    h.get_by_label("to stderr");
    // Once beside Run/Stop, once in the past runs.
    assert_eq!(h.query_all_by_label_contains("exit code 0").count(), 2);
    // The run folder the script wrote is open, with its two passes.
    let app = &h.state().app;
    let ws = app.workspace.as_ref().expect("workspace");
    assert!(
        ws.index
            .root
            .starts_with(work.path().join("torch_compile_debug"))
    );
    assert_eq!(ws.index.runs[0].models[0].phases[0].passes.len(), 2);
    assert_eq!(run_of(app).history.len(), 1);
    assert_eq!(run_of(app).history[0].outcome, "exit code 0");
    h.get_by_label("Run again");
    shoot(&mut h, "run_panel");
}
