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
use serde_json::Value;
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
    let path = dir.join("python");
    let mut script = String::from("#!/bin/sh\necho $$ > \"$(dirname \"$0\")/pid\"\n");
    for e in events {
        script.push_str(&format!("echo '{e}'\n"));
    }
    script.push_str("echo 'a line of the traceback' >&2\n");
    script.push_str(then);
    script.push('\n');
    crate::common::write_script(&path, &script);
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

/// An answer after no pass could be replayed claims nothing: the bisect fails with the
/// replay's own words instead of saying every pass keeps the numbers; a pass that failed is
/// named as such, never as kept.
#[test]
fn a_replay_that_checked_nothing_is_no_answer() {
    let dir = tempfile::tempdir().expect("temp");
    let py = fake_python(
        dir.path(),
        &[
            r#"{"event":"pass","index":0,"name":"graph","replayed":false,"nodes":0,"error":"cannot read the file"}"#,
            r#"{"event":"answer","guilty":null,"replayed":0,"unchecked":[],"sentence":"no pass could be replayed: every pass file failed"}"#,
        ],
        "exit 1",
    );
    let mut lines = Vec::new();
    let e = bisect::bisect(&spec_with(py), &Progress::default(), |n| lines.push(n))
        .expect_err("nothing was checked");
    assert!(e.to_string().contains("no pass could be replayed"), "{e}");
    assert!(
        matches!(&lines[0], bisect::Note::Pass(l) if l.contains("could not be replayed: cannot read the file")),
        "{lines:?}"
    );

    let dir = tempfile::tempdir().expect("temp");
    let py = fake_python(
        dir.path(),
        &[
            r#"{"event":"pass","index":0,"name":"graph","replayed":true,"nodes":25,"seconds":0.1}"#,
            r#"{"event":"pass","index":4,"name":"apply_pattern_passes","replayed":false,"nodes":0,"error":"a line it cannot run"}"#,
            r#"{"event":"answer","guilty":null,"replayed":1,"unchecked":[]}"#,
        ],
        "exit 0",
    );
    let b = bisect::bisect(&spec_with(py), &Progress::default(), |_| {}).expect("answer");
    assert!(
        !b.answer.starts_with("every pass keeps the numbers")
            && b.answer
                .contains("could not be replayed: pass 004 apply_pattern_passes"),
        "{}",
        b.answer
    );
}

/// A run on a server replays there: a local file for its inputs is refused, never sent as a
/// bare path for the server to read (or, for references, to run).
#[test]
fn a_remote_run_with_local_inputs_says_to_name_the_servers() {
    let host = fxray::sources::remote::Host {
        user: None,
        host: "127.0.0.1".into(),
        port: None,
        owner: 0,
    };
    let run = fxray::sources::remote::target::mount_path(&host, "/srv/run");
    assert!(fxray::sources::remote::is_remote(&run));
    let ask = bisect::Ask {
        run,
        references: vec!["refs.py".into()],
        ..Default::default()
    };
    let e = bisect::ask(&ask, &Progress::default(), |_| {}).expect_err("refused");
    assert!(e.to_string().contains("give it as ssh://host/path"), "{e}");
}

fn truth(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).expect("truth"))
        .expect("json")
}

/// `fxray bisect CASE --json` against torch's own answer for one case of `bisect_cases.py`.
fn check_case(dir: &Path, python: &str) {
    let case = dir.file_name().unwrap().to_string_lossy().into_owned();
    let t = truth(dir);
    let mut args = vec![
        "bisect",
        dir.to_str().unwrap(),
        "--python",
        python,
        "--json",
    ];
    // The user's implementation of the case's own kernel, as torch's answer had it.
    let refs = t["references_file"].as_str().map(|f| dir.join(f));
    if let Some(r) = &refs {
        args.extend(["--references", r.to_str().unwrap()]);
    }
    let out = crate::common::fxray(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{case}: {stderr}");
    let b: Value = serde_json::from_slice(&out.stdout).expect("json");
    match t["guilty"].as_object() {
        Some(g) => {
            let have = &b["guilty"];
            assert_eq!(have["index"], g["index"], "{case}: {}", b["answer"]);
            assert_eq!(have["name"], g["name"], "{case}: {}", b["answer"]);
            assert_eq!(have["node"], g["node"], "{case}: {}", b["answer"]);
            let answer = b["answer"].as_str().unwrap();
            let pass = format!(
                "pass {:03} {} broke it",
                g["index"].as_u64().unwrap(),
                g["name"].as_str().unwrap()
            );
            assert!(answer.starts_with(&pass), "{case}: {answer}");
        }
        None => {
            assert!(b["guilty"].is_null(), "{case}: {}", b["answer"]);
            let answer = b["answer"].as_str().unwrap();
            assert!(
                answer.starts_with("every pass keeps the numbers within floating-point noise"),
                "{case}: {answer}"
            );
        }
    }
    // What this torch cannot compute is named with its op, never a crash: not checked, or,
    // where the device dumped it, judged on the dumped value and said so.
    for u in t["unchecked"].as_array().unwrap() {
        let named = b["unchecked"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| x["node"] == u["node"]);
        let op = u["target"].as_str().unwrap();
        let from_dump = b["problems"].as_array().unwrap().iter().any(|p| {
            p.as_str().unwrap().contains(op) && p.as_str().unwrap().contains("from the dump")
        });
        assert!(
            named || from_dump,
            "{case}: {} neither unchecked nor from the dump: {b}",
            u["node"]
        );
        if named {
            assert!(
                b["answer"].as_str().unwrap().contains("not checked"),
                "{case}: {}",
                b["answer"]
            );
        }
    }
    // Without the user's kernel, the fused op's value is the device's, from the optimized
    // dump: the same pass is named, and the answer says where the value came from.
    if refs.is_some() {
        let out = crate::common::fxray(&[
            "bisect",
            dir.to_str().unwrap(),
            "--python",
            python,
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{case}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let b: Value = serde_json::from_slice(&out.stdout).expect("json");
        let g = &t["guilty"];
        assert_eq!(b["guilty"]["index"], g["index"], "{case}: {}", b["answer"]);
        let said = b["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p.as_str().unwrap().contains("from the dump"));
        assert!(said, "{case}: {}", b["problems"]);
    }
    // One line per pass on stderr as it goes.
    assert_eq!(
        stderr.lines().filter(|l| l.starts_with("pass ")).count(),
        b["pass_files"].as_array().unwrap().len(),
        "{case}: {stderr}"
    );
}

#[test]
#[ignore = "needs PyTorch: tests/run.sh installs it and runs this"]
fn e2e_torch_bisect_names_the_pass_torch_says_broke_it() {
    let out = tempfile::tempdir().expect("temp");
    crate::common::run_e2e_script("bisect_cases.py", out.path());
    let python = std::env::var("FXRAY_TEST_PYTHON").expect("FXRAY_TEST_PYTHON");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(out.path())
        .expect("cases")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("truth.json").is_file())
        .collect();
    cases.sort();
    assert_eq!(cases.len(), 7, "{cases:?}");
    for case in &cases {
        check_case(case, &python);
    }
    // Bit for bit against torch's own run of every pass, and the replay's other promises.
    let check = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/replay_check.py");
    let st = std::process::Command::new(&python)
        .arg(&check)
        .arg(out.path())
        .status()
        .expect("replay_check.py");
    assert!(
        st.success(),
        "replay_check.py failed (its lines above say where)"
    );
}
