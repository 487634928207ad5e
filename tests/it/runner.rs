//! The runner with the real `python3`: output streams, run folders are found, failures and
//! Stop are reported, arguments reach the script unchanged; NPU detection on captured
//! `npu-smi info` output and on this machine (no NPU).

use fxray::app::run::RunState;
use fxray::runner::npu::{from_dev, parse_npu_smi};
use fxray::runner::process::{Exit, RunEvent, RunHandle, Stream};
use fxray::runner::spec::RunSpec;
use fxray::runner::{launcher_path, python};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

fn data(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data")).join(name)
}

/// Runs `script` from `tests/data/runner` in a temp working folder; returns the events.
fn start(script: &str, args: &[&str], cwd: &Path) -> (RunHandle, Receiver<RunEvent>) {
    let spec = RunSpec {
        script: data("runner").join(script),
        args: args.iter().map(|s| s.to_string()).collect(),
        cwd: Some(cwd.to_path_buf()),
        nproc: 1,
        ..RunSpec::default()
    };
    let py = python::resolve(None).expect("python3");
    let launch = spec.launch(&py, &launcher_path().expect("launcher"));
    let (tx, rx) = channel();
    let h = RunHandle::start(&launch, move |e| {
        let _ = tx.send(e);
    });
    (h, rx)
}

/// Events until the run exits.
fn until_exit(rx: &Receiver<RunEvent>) -> Vec<RunEvent> {
    let mut out = Vec::new();
    loop {
        let ev = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the run ended in time");
        let end = matches!(ev, RunEvent::Exited { .. } | RunEvent::Failed(_));
        out.push(ev);
        if end {
            return out;
        }
    }
}

fn lines(events: &[RunEvent], stream: Stream) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Line { stream: s, text } if *s == stream => Some(text.clone()),
            _ => None,
        })
        .collect()
}

#[test]
fn a_script_that_writes_a_debug_tree_streams_and_its_run_folder_is_found() {
    let dir = tempfile::tempdir().expect("temp");
    let (_h, rx) = start("writes_tree.py", &[], dir.path());
    let ev = until_exit(&rx);
    assert!(matches!(ev[0], RunEvent::Started { .. }));
    let out = lines(&ev, Stream::Stdout);
    assert_eq!(&out[..2], ["wrote pass 0", "wrote pass 1"]);
    assert_eq!(lines(&ev, Stream::Stderr), ["to stderr"]);
    assert!(matches!(
        ev.last(),
        Some(RunEvent::Exited {
            exit: Exit::Code(0),
            ..
        })
    ));
    let folders: Vec<&PathBuf> = ev
        .iter()
        .filter_map(|e| match e {
            RunEvent::RunFolder(p) => Some(p),
            _ => None,
        })
        .collect();
    assert_eq!(folders.len(), 1, "{ev:?}");
    let index = fxray::pipeline::tree::index(folders[0]).expect("index");
    let phase = &index.runs[0].models[0].phases[0];
    assert_eq!(phase.passes.len(), 2);
    let g = fxray::sources::load::graph(&phase.passes[1].path).expect("parse");
    assert_eq!(g.node_count(), 3);
}

#[test]
fn arguments_with_spaces_quotes_and_semicolons_arrive_unchanged() {
    let dir = tempfile::tempdir().expect("temp");
    let args = [
        "two words",
        "it's \"quoted\"",
        "a;b && echo pwned",
        "$HOME",
        "*",
        "",
    ];
    let (_h, rx) = start("writes_tree.py", &args, dir.path());
    let ev = until_exit(&rx);
    let line = lines(&ev, Stream::Stdout)
        .into_iter()
        .find(|l| l.starts_with("argv "))
        .expect("argv line");
    let got: Vec<String> = serde_json::from_str(&line["argv ".len()..]).expect("json");
    assert_eq!(got, args);
}

#[test]
fn a_failing_script_reports_its_exit_code_and_error() {
    let dir = tempfile::tempdir().expect("temp");
    let (_h, rx) = start("fails.py", &[], dir.path());
    let ev = until_exit(&rx);
    assert_eq!(lines(&ev, Stream::Stdout), ["about to fail"]);
    assert_eq!(
        lines(&ev, Stream::Stderr),
        ["RuntimeError: the backend broke"]
    );
    assert!(matches!(
        ev.last(),
        Some(RunEvent::Exited {
            exit: Exit::Code(3),
            ..
        })
    ));
}

fn alive(pid: u32) -> bool {
    // A zombie waiting for its parent to read its status has already ended.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => s
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next())
            .is_some_and(|state| state != "Z"),
        Err(_) => false,
    }
}

#[test]
fn stop_ends_a_hanging_script_and_its_children_within_a_second() {
    let dir = tempfile::tempdir().expect("temp");
    let (h, rx) = start("hangs.py", &[], dir.path());
    let mut pids = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    while pids.len() < 2 {
        match rx.recv_timeout(Duration::from_secs(30)).expect("events") {
            RunEvent::Started { pid } => pids.push(pid),
            RunEvent::Line { text, .. } if text.starts_with("child ") => {
                pids.push(text[6..].parse().expect("pid"))
            }
            _ => {}
        }
        assert!(Instant::now() < deadline);
    }
    assert!(pids.iter().all(|&p| alive(p)));
    let t = Instant::now();
    h.stop(Duration::from_millis(500));
    let ev = until_exit(&rx);
    assert!(
        matches!(
            ev.last(),
            Some(RunEvent::Exited {
                exit: Exit::Signal(15),
                ..
            })
        ),
        "{ev:?}"
    );
    while pids.iter().any(|&p| alive(p)) {
        assert!(
            t.elapsed() < Duration::from_secs(1),
            "left running after Stop: {:?}",
            pids.iter().filter(|&&p| alive(p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn dropping_a_run_kills_it() {
    let dir = tempfile::tempdir().expect("temp");
    let (h, rx) = start("hangs.py", &[], dir.path());
    let mut child = None;
    while child.is_none() {
        if let RunEvent::Line { text, .. } = rx.recv_timeout(Duration::from_secs(30)).expect("ev")
            && let Some(p) = text.strip_prefix("child ")
        {
            child = p.parse::<u32>().ok();
        }
    }
    drop(h);
    let t = Instant::now();
    while alive(child.unwrap()) {
        assert!(t.elapsed() < Duration::from_secs(2), "orphan left behind");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_run_command_streams_prints_the_folder_and_exits_with_the_scripts_code() {
    let dir = tempfile::tempdir().expect("temp");
    let script = data("runner/writes_tree.py");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fxray"))
        .args(["run", "--cwd"])
        .arg(dir.path())
        .arg("--")
        .arg(&script)
        .arg("x y")
        .output()
        .expect("run");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("wrote pass 1"));
    assert!(stdout.contains(r#"argv ["x y"]"#));
    let folder = stdout
        .lines()
        .find_map(|l| l.strip_prefix("run folder: "))
        .expect("run folder line");
    assert!(Path::new(folder).starts_with(dir.path().join("torch_compile_debug")));

    let out = crate::common::fxray(&[
        "run",
        "--",
        "python3",
        data("runner/fails.py").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("RuntimeError: the backend broke"), "{err}");
    assert!(err.contains("fxray: exit code 3"), "{err}");

    let out = crate::common::fxray(&["run", "--", "/nonexistent/script.py"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "fxray: no such script: /nonexistent/script.py"
    );
}

#[test]
fn a_backend_that_is_not_installed_is_one_clear_line() {
    let dir = tempfile::tempdir().expect("temp");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fxray"))
        .args(["run", "--backend", "npugraph_ex", "--cwd"])
        .arg(dir.path())
        .arg("--")
        .arg(data("runner/fails.py"))
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err
        .lines()
        .find(|l| l.starts_with("fxray launcher:"))
        .expect(&err);
    // Without torch here the launcher says so; with torch, that npugraph_ex is missing.
    assert!(first.contains("is not installed"), "{first}");
    assert!(!err.contains("Traceback"), "{err}");
}

#[test]
fn npu_smi_tables_are_read_across_versions() {
    let read = |n: &str| std::fs::read_to_string(data("npu_smi").join(n)).expect("sample");
    let d = parse_npu_smi(&read("910b_4dev.txt"));
    assert_eq!(d.iter().map(|d| d.id).collect::<Vec<_>>(), [0, 1, 2, 3]);
    assert!(d.iter().all(|d| d.name == "910B3"));
    assert_eq!(d[2].health, "Warning");
    assert_eq!(d[2].hbm_mb, Some((40211, 65536)));
    assert_eq!(d[0].bus_id.as_deref(), Some("0000:C1:00.0"));
    assert_eq!(d[0].hbm_mb, Some((3161, 65536)));

    let d = parse_npu_smi(&read("310p_2chip.txt"));
    assert_eq!(d.iter().map(|d| d.id).collect::<Vec<_>>(), [8, 9]);
    assert_eq!(d[1].name, "310P3");
    assert_eq!(d[1].health, "Alarm");
    assert_eq!(d[1].hbm_mb, Some((1790, 21527)));

    assert!(parse_npu_smi(&read("broken.txt")).is_empty());
    assert!(parse_npu_smi("").is_empty());
}

#[test]
fn device_files_are_the_fallback_and_no_npu_is_said_plainly() {
    let dev = tempfile::tempdir().expect("temp");
    for n in ["davinci0", "davinci3", "davinci_manager", "hisi_hdc"] {
        std::fs::write(dev.path().join(n), "").expect("touch");
    }
    let s = from_dev(dev.path(), "npu-smi not found");
    assert_eq!(s.devices.iter().map(|d| d.id).collect::<Vec<_>>(), [0, 3]);
    assert_eq!(s.summary(), "NPU 0, NPU 3");

    let empty = tempfile::tempdir().expect("temp");
    let s = from_dev(empty.path(), "npu-smi not found");
    assert!(s.devices.is_empty());
    assert!(
        s.summary().starts_with("no NPU (npu-smi not found; no "),
        "{}",
        s.summary()
    );
    assert!(s.summary().ends_with("CPU backends only"));

    // This machine has no NPU: the message a user sees.
    if !Path::new("/dev/davinci0").exists() {
        let s = fxray::runner::npu::detect();
        assert!(s.devices.is_empty());
        assert_eq!(
            s.summary(),
            "no NPU (npu-smi not found; no /dev/davinci* device): CPU backends only"
        );
    }
}

#[test]
fn autotune_lines_a_run_prints_reach_the_autotune_view() {
    let dir = tempfile::tempdir().expect("temp");
    let mut app = fxray::app::App::new();
    let (run, cx) = app.part::<RunState>();
    run.form = RunSpec {
        script: data("runner/prints_autotune.py"),
        cwd: Some(dir.path().to_path_buf()),
        nproc: 1,
        ..RunSpec::default()
    };
    run.start_run(&cx);
    let t = Instant::now();
    loop {
        let run = app.peek::<RunState>().expect("the run's state");
        if run.current.as_ref().is_some_and(|r| !r.running()) {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(30), "{:?}", run.error);
        app.poll();
        std::thread::sleep(Duration::from_millis(10));
    }
    assert!(app.wait_idle(Duration::from_secs(30)));
    let report = app
        .peek::<fxray::app::autotune::AutotuneState>()
        .and_then(|a| a.report.clone())
        .expect("an autotune report");
    assert!(!report.kernels.is_empty());
}
