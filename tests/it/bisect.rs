//! `fxray bisect` (issue 54, docs/formats.md §4.6): every pass's graph replayed on the run's
//! inputs in a child Python, the one pass that changed the numbers named with its node.
//!
//! Without torch: the plan the replay gets (pairs through the pass history, repeated texts),
//! and the child's handling (a Python that cannot replay, a bisect called off). With torch
//! (`tests/run.sh`): `tests/e2e/bisect_cases.py`'s runs, each against torch's own answer, and
//! `tests/e2e/replay_check.py`, which checks every pass's replay bit for bit against torch's
//! own run of that pass's GraphModule.

use crate::common::fixture;
use fxray::model::progress::Progress;
use fxray::pipeline::bisect::{self, BisectError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The plan pairs a node a pass built with the node whose uses it took over (the fault's new
/// GELU stands for the old one, so it is judged itself), lists what the diff changed, and
/// marks the passes whose text repeats an earlier one so they are not run again.
#[test]
fn the_plan_pairs_a_rebuilt_node_with_the_node_it_replaced() {
    let run = fixture("stage_faults/gelu_tanh");
    let spec = bisect::find(&run, None, None).expect("spec");
    assert!(spec.inputs.ends_with("dump_original"), "{spec:?}");
    assert_eq!(spec.passes.len(), 11);
    let plan = bisect::plan(&spec).expect("plan");
    let passes = plan["passes"].as_array().expect("passes");
    let p4 = &passes[4];
    assert_eq!(p4["name"], "apply_pattern_passes");
    assert_eq!(p4["pairs"]["gelu_default"], "gelu", "{}", p4["pairs"]);
    let changed: Vec<&str> = p4["changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(changed.contains(&"gelu_default"), "{changed:?}");
    assert!(passes[0]["pairs"].is_null(), "pass 000 is the reference");
    // optimize_noop_ops removed nothing here: its text is pass 001's.
    assert_eq!(passes[2]["same_as"], 1);
    assert!(passes[4]["same_as"].is_null());
    assert!(
        plan["inputs"]["path"]
            .as_str()
            .unwrap()
            .ends_with("dump_original")
    );
    assert!(plan["values"].as_str().unwrap().ends_with("dump_optimized"));
}

/// A run with no dump of its inputs says what to give.
#[test]
fn a_run_without_inputs_says_what_to_give() {
    let run = crate::common::run_dir("npugraph_ex/mlp_inference");
    let e = bisect::find(&run, None, None).expect_err("no inputs");
    assert!(matches!(e, BisectError::NoInputs { .. }), "{e}");
    assert!(e.to_string().contains("--inputs DUMP"), "{e}");
}

/// A stand-in interpreter: a shell script that prints `events` (JSON lines) and then does
/// `then` (`exit 3`, `exec sleep 60`).
fn fake_python(dir: &Path, events: &[&str], then: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("python");
    let mut script = String::from("#!/bin/sh\necho $$ > \"$(dirname \"$0\")/pid\"\n");
    for e in events {
        script.push_str(&format!("echo '{e}'\n"));
    }
    script.push_str("echo 'a line of the traceback' >&2\n");
    script.push_str(then);
    script.push('\n');
    std::fs::write(&path, script).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

fn spec_with(python: PathBuf) -> bisect::BisectSpec {
    let mut spec = bisect::find(&fixture("stage_faults/gelu_tanh"), None, None).expect("spec");
    spec.python = Some(python);
    spec
}

/// A Python that cannot replay (no torch: the replay's own first words) ends in an error that
/// says so and shows the child's last lines, never a hang or a half answer.
#[test]
fn a_python_that_cannot_replay_is_named_with_its_last_words() {
    let dir = tempfile::tempdir().expect("temp");
    let py = fake_python(
        dir.path(),
        &[r#"{"event":"problem","message":"this Python has no torch (No module named torch)"}"#],
        "exit 3",
    );
    let e = bisect::bisect(&spec_with(py), &Progress::default(), |_| {}).expect_err("fails");
    let text = e.to_string();
    assert!(text.contains("exit code 3"), "{text}");
    assert!(text.contains("this Python has no torch"), "{text}");
    assert!(text.contains("a line of the traceback"), "{text}");
}

/// Calling a bisect off stops the child: the call returns at once, and the process is gone.
#[test]
fn calling_a_bisect_off_stops_the_child() {
    let dir = tempfile::tempdir().expect("temp");
    let py = fake_python(
        dir.path(),
        &[r#"{"event":"start","torch":"2.6","python":"3.11","passes":11}"#],
        "exec sleep 60",
    );
    let progress = std::sync::Arc::new(Progress::default());
    let p = progress.clone();
    let pid_file = dir.path().join("pid");
    let canceller = std::thread::spawn(move || {
        let start = Instant::now();
        while !pid_file.exists() && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(100));
        p.cancel();
    });
    let start = Instant::now();
    let e = bisect::bisect(&spec_with(py), &progress, |_| {}).expect_err("called off");
    canceller.join().unwrap();
    assert!(matches!(e, BisectError::Cancelled), "{e}");
    assert!(start.elapsed() < Duration::from_secs(20));
    let pid: i32 = std::fs::read_to_string(dir.path().join("pid"))
        .expect("pid")
        .trim()
        .parse()
        .expect("number");
    let gone = Instant::now() + Duration::from_secs(5);
    while Path::new(&format!("/proc/{pid}")).exists() {
        // A zombie has left its work: it is reaped by the runner's waiter.
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if state.contains(") Z") {
            break;
        }
        assert!(Instant::now() < gone, "the child {pid} still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
}
