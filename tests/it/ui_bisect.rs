//! *Find the pass* in the window (issue 54): the Accuracy tab starts a bisect of the open run
//! on the Python typed beside the button, shows a line per pass as it ends, says the answer in
//! the status bar, and *Show in <pass>* brings that pass on screen with the node selected.
//!
//! The replay's child is a stand-in here (a script printing the events `assets/replay.py`
//! prints), so the window is tested without torch; `e2e_torch_the_window_finds_the_pass` does
//! it with the real replay and takes the README's screenshot.

use crate::common::fixture;
use crate::common::ui::{current_pass, harness_sized, opened, selected, settle, shoot};
use egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use fxray::app::{Loading, TabId};
use std::path::Path;
use std::time::{Duration, Instant};

type H = egui_kittest::Harness<'static, fxray::ui::Fxray>;

/// A stand-in for the replay: the events of a bisect of `gelu_tanh` that blames pass 004 (a
/// departure's numbers as the replay writes them, a non-finite one as text). It leaves the
/// command line of the process that started it in `parent` beside it.
pub fn stand_in(dir: &Path) -> String {
    let events = [
        r#"{"event":"start","torch":"2.6.0","python":"3.11.7","passes":11}"#,
        r#"{"event":"pass","index":0,"name":"graph","replayed":true,"nodes":25,"seconds":0.1,"departs":[],"unchecked":[]}"#,
        r#"{"event":"pass","index":4,"name":"apply_pattern_passes","replayed":true,"nodes":26,"seconds":0.2,"departs":[{"node":"gelu_default","target":"aten.gelu.default","paired_with":"gelu","inputs_agree":true,"max_abs":0.000234,"max_rel":0.0013,"cosine":"nan"}],"departs_total":1,"unchecked":[]}"#,
        r#"{"event":"answer","guilty":{"index":4,"name":"apply_pattern_passes","node":"gelu_default","target":"aten.gelu.default","paired_with":"gelu","inputs_agree":true,"numbers":"cosine 0.999999988"},"replayed":4,"unchecked":[]}"#,
    ];
    let path = dir.join("python");
    let mut script = String::from(
        "#!/bin/sh\ntr '\\0' ' ' < /proc/$PPID/cmdline > \"$(dirname \"$0\")/parent\"\n",
    );
    for e in events {
        script.push_str(&format!("echo '{e}'\n"));
    }
    crate::common::write_script(&path, &script);
    path.display().to_string()
}

/// Types `python` beside *Find the pass*, clicks it and waits for the answer.
fn find_the_pass(h: &mut H, python: &str, limit: Duration) {
    h.state_mut().view.tabs.show(TabId::ACCURACY);
    h.run_steps(2);
    h.get_by_role_and_label(Role::TextInput, "Python").click();
    h.run_steps(1);
    h.get_by_role_and_label(Role::TextInput, "Python")
        .type_text(python);
    h.run_steps(1);
    h.get_by_label("Find the pass").click();
    let start = Instant::now();
    let mut started = false;
    loop {
        std::thread::sleep(Duration::from_millis(20));
        h.run_steps(1);
        let acc = h.state().app.peek::<fxray::app::accuracy::AccuracyState>();
        let loading = acc.is_some_and(|a| matches!(a.bisect.result, Loading::Loading));
        // Asked for (its run set), whether or not a frame saw it loading.
        started |= acc.is_some_and(|a| a.bisect.run.is_some());
        if started && !loading {
            break;
        }
        assert!(start.elapsed() < limit, "the bisect did not answer");
    }
    settle(h);
}

fn shows_the_guilty_pass(h: &mut H) {
    let notice = h.state().app.notice.clone().unwrap_or_default();
    assert!(
        notice.starts_with("bisect: pass 004 apply_pattern_passes broke it: `gelu_default`"),
        "{notice}"
    );
    // The stage compare's button and the bisect's: the bisect's comes last.
    let buttons = h
        .query_all_by_label("Show in 004 apply_pattern_passes")
        .count();
    assert_eq!(buttons, 2);
    h.query_all_by_label("Show in 004 apply_pattern_passes")
        .last()
        .unwrap()
        .click();
    h.run_steps(4);
    settle(h);
    assert_eq!(h.state().view.central(), TabId::GRAPH);
    assert_eq!(current_pass(h), 4);
    assert_eq!(selected(h).as_deref(), Some("gelu_default"));
}

#[test]
fn find_the_pass_shows_each_pass_the_answer_and_the_node() {
    let dir = tempfile::tempdir().expect("temp");
    let python = stand_in(dir.path());
    let mut h = harness_sized(
        opened(&fixture("stage_faults/gelu_tanh")),
        egui::vec2(1400., 900.),
    );
    settle(&mut h);
    find_the_pass(&mut h, &python, Duration::from_secs(30));
    let acc = h
        .state()
        .app
        .peek::<fxray::app::accuracy::AccuracyState>()
        .expect("accuracy");
    assert_eq!(acc.bisect.lines.len(), 2, "{:?}", acc.bisect.lines);
    assert!(
        acc.bisect.lines[1].starts_with("pass 004 apply_pattern_passes: 26 nodes replayed"),
        "{:?}",
        acc.bisect.lines
    );
    shows_the_guilty_pass(&mut h);
}

#[test]
#[ignore = "needs PyTorch: tests/run.sh installs it and runs this"]
fn e2e_torch_the_window_finds_the_pass() {
    let python = std::env::var("FXRAY_TEST_PYTHON").expect("FXRAY_TEST_PYTHON");
    let mut h = harness_sized(
        opened(&fixture("stage_faults/gelu_tanh")),
        egui::vec2(1400., 900.),
    );
    settle(&mut h);
    find_the_pass(&mut h, &python, Duration::from_secs(300));
    h.get_by_label("Passes replayed (11)");
    shoot(&mut h, "bisect_answer_in_accuracy_tab");
    shows_the_guilty_pass(&mut h);
    shoot(&mut h, "bisect_guilty_node_on_the_graph");
}

/// A bisect belongs to the tree it replays: opening another tree calls it off (its child is
/// stopped) and its answer never lands on the new tree.
#[test]
fn another_tree_opened_calls_the_bisect_off() {
    let dir = tempfile::tempdir().expect("temp");
    let python = dir.path().join("python");
    crate::common::write_script(
        &python,
        "#!/bin/sh\necho $$ > \"$(dirname \"$0\")/pid\"\n\
         echo '{\"event\":\"start\",\"torch\":\"2.6\",\"python\":\"3.11\",\"passes\":11}'\n\
         exec sleep 60\n",
    );
    let mut h = harness_sized(
        opened(&fixture("stage_faults/gelu_tanh")),
        egui::vec2(1400., 900.),
    );
    settle(&mut h);
    h.state_mut().view.tabs.show(TabId::ACCURACY);
    h.run_steps(2);
    h.get_by_role_and_label(Role::TextInput, "Python").click();
    h.run_steps(1);
    h.get_by_role_and_label(Role::TextInput, "Python")
        .type_text(&python.display().to_string());
    h.run_steps(1);
    h.get_by_label("Find the pass").click();
    let pid_file = dir.path().join("pid");
    let start = Instant::now();
    while !pid_file.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the replay never started"
        );
        std::thread::sleep(Duration::from_millis(20));
        h.run_steps(1);
    }
    let pid = std::fs::read_to_string(&pid_file).expect("pid");
    h.state_mut().app.open(&fixture("stage_faults/right"));
    settle(&mut h);
    let acc = h
        .state()
        .app
        .peek::<fxray::app::accuracy::AccuracyState>()
        .expect("accuracy");
    assert!(acc.bisect.run.is_none());
    assert!(matches!(acc.bisect.result, Loading::Idle));
    let proc = format!("/proc/{}", pid.trim());
    let gone = Instant::now() + Duration::from_secs(10);
    while Path::new(&proc).exists()
        && !std::fs::read_to_string(format!("{proc}/stat"))
            .unwrap_or_default()
            .contains(") Z")
    {
        assert!(Instant::now() < gone, "the replay {pid} still runs");
        std::thread::sleep(Duration::from_millis(20));
        h.run_steps(1);
    }
}
