//! Hostile folders, built at test time: binary garbage under graph names, a 1 GB sparse file,
//! invalid UTF-8, 10,000-deep brackets, a 100,000-node graph, a symlink loop, a folder the
//! user may not read, a file deleted between indexing and parsing. For each, the index, the
//! parser, the CLI and the app stay up, say what is wrong in one line, and load the rest.

use fxray::analysis::graph_facts::GraphFacts;
use fxray::app::App;
use fxray::sources::load;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const GOOD: &str = r#"class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[4, 4]"):
        add: "f32[4, 4]" = torch.ops.aten.add.Tensor(arg0_1, 1);  arg0_1 = None
        return (add,)
"#;

/// A run folder with one good pass first, then `extra` (name, bytes) files beside it.
fn tree(extra: &[(&str, Vec<u8>)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp");
    let phase = dir.path().join(
        "torch_compile_debug/run_2026_01_01_00_00_00_000001-pid_1/npugraph_ex/model__0/forward",
    );
    std::fs::create_dir_all(&phase).expect("mkdir");
    std::fs::write(phase.join("000_aot_forward_graph.txt"), GOOD).expect("write");
    for (name, bytes) in extra {
        std::fs::write(phase.join(name), bytes).expect("write");
    }
    (dir, phase)
}

/// The facts of every graph under `root`, as the app computes them.
fn facts(root: &Path) -> Vec<(String, GraphFacts)> {
    let index = fxray::pipeline::tree::index(root).expect("index");
    index
        .graph_files()
        .map(|p| {
            let f = GraphFacts::of_result(load::graph(p).as_ref());
            (p.file_name().unwrap().to_string_lossy().into_owned(), f)
        })
        .collect()
}

/// The app opens `root` without hanging and shows its first (good) pass.
fn app_opens(root: &Path) -> App {
    let mut app = App::new();
    app.live.enabled = false;
    app.open(root);
    assert!(
        app.wait_idle(Duration::from_secs(60)),
        "the app hung on {}",
        root.display()
    );
    assert!(app.workspace.is_some(), "{:?}", app.error);
    app
}

/// `fxray summary` succeeds, and each problem is on one line.
fn summary_ok(root: &Path) -> String {
    let out = crate::common::fxray(&["summary", root.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn binary_garbage_under_a_graph_name_is_reported_and_the_rest_loads() {
    let mut junk: Vec<u8> = (0..200_000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    junk[10] = 0;
    let (dir, _) = tree(&[("001_aot_forward_graph_after_junk.txt", junk)]);
    let f = facts(dir.path());
    assert_eq!(f[0].1.nodes, 3);
    assert_eq!(f[0].1.status(), "ok");
    assert!(
        f[1].1.problems[0].contains("NUL bytes"),
        "{:?}",
        f[1].1.problems
    );
    let s = summary_ok(dir.path());
    assert!(s.contains("not a graph text file"), "{s}");
    let app = app_opens(dir.path());
    assert_eq!(app.phase.as_ref().unwrap().passes.len(), 2);
}

#[test]
fn invalid_utf8_is_replaced_and_flagged() {
    let mut bytes = GOOD.as_bytes().to_vec();
    bytes.splice(30..30, [0xff, 0xfe, 0xc3]);
    let (dir, _) = tree(&[("001_aot_forward_graph_after_bad_utf8.txt", bytes)]);
    let f = facts(dir.path());
    assert!(
        f[1].1
            .problems
            .iter()
            .any(|p| p.contains("not valid UTF-8")),
        "{:?}",
        f[1].1.problems
    );
    assert_eq!(f[1].1.nodes, 3, "the nodes after the bad bytes still parse");
}

#[test]
fn a_1_gb_sparse_file_is_refused_at_once_not_read() {
    let (dir, phase) = tree(&[]);
    let big = phase.join("001_aot_forward_graph_after_huge.txt");
    std::fs::File::create(&big)
        .and_then(|f| f.set_len(1 << 30))
        .expect("sparse file");
    let t = Instant::now();
    let err = load::graph(&big).expect_err("too big");
    assert!(t.elapsed() < Duration::from_secs(1));
    let msg = err.to_string();
    assert!(msg.contains("1.0 GiB is larger than the 512 MiB"), "{msg}");
    assert!(!msg.contains('\n'));
    let s = summary_ok(dir.path());
    assert!(s.contains("larger than the 512 MiB"), "{s}");
    app_opens(dir.path());
}

#[test]
fn deep_brackets_and_a_file_that_never_closes_them_parse_without_overflow() {
    let deep = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
    let nested = GOOD.replace("(arg0_1, 1)", &format!("(arg0_1, {deep})"));
    let open = format!(
        "class GraphModule(torch.nn.Module):\n    def forward(self, x):\n        y = f({}\n",
        "(".repeat(100_000)
    );
    let (dir, _) = tree(&[
        ("001_aot_forward_graph_after_deep.txt", nested.into_bytes()),
        ("002_aot_forward_graph_after_open.txt", open.into_bytes()),
    ]);
    // Parsed on a thread with a small stack, like the app's workers.
    let root = dir.path().to_path_buf();
    let f = std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(move || facts(&root))
        .expect("thread")
        .join()
        .expect("no stack overflow");
    assert_eq!(f.len(), 3);
    assert!(
        f[2].1.problems.iter().any(|p| p.contains("truncated")),
        "{:?}",
        f[2].1.problems
    );
    summary_ok(dir.path());
}

#[test]
fn a_100000_node_graph_loads_and_lays_out() {
    let mut g = String::from(
        "class GraphModule(torch.nn.Module):\n    def forward(self, arg0_1: \"f32[4]\"):\n",
    );
    let mut prev = "arg0_1".to_string();
    for i in 0..100_000 {
        g.push_str(&format!(
            "        add_{i}: \"f32[4]\" = torch.ops.aten.add.Tensor({prev}, 1)\n"
        ));
        prev = format!("add_{i}");
    }
    g.push_str(&format!("        return ({prev},)\n"));
    let (dir, _) = tree(&[("001_aot_forward_graph_after_big.txt", g.into_bytes())]);
    let f = facts(dir.path());
    assert_eq!(f[1].1.nodes, 100_002);
    assert_eq!(f[1].1.status(), "ok");
    let mut app = app_opens(dir.path());
    let big = app.workspace.as_ref().unwrap().index.runs[0].models[0].phases[0].passes[1]
        .path
        .clone();
    app.select_graph(&big);
    assert!(app.wait_idle(Duration::from_secs(120)));
    let ph = app.phase.as_ref().unwrap();
    assert!(ph.layout.is_some(), "{:?}", ph.layout_error);
}

#[cfg(unix)]
#[test]
fn a_symlink_loop_is_not_followed() {
    let (dir, phase) = tree(&[]);
    std::os::unix::fs::symlink(dir.path(), phase.join("loop")).expect("symlink");
    std::os::unix::fs::symlink(phase.join("self"), phase.join("self")).expect("self link");
    let f = facts(dir.path());
    assert_eq!(f.len(), 1);
    summary_ok(dir.path());
    app_opens(dir.path());
}

/// As root every folder is readable, so this runs the CLI as `nobody` when it can.
#[cfg(unix)]
#[test]
fn a_folder_without_read_permission_is_a_warning_and_the_rest_loads() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, phase) = tree(&[]);
    let secret = phase.parent().unwrap().join("backward");
    std::fs::create_dir_all(&secret).expect("mkdir");
    std::fs::write(secret.join("000_aot_backward_graph.txt"), GOOD).expect("write");
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    // Let `nobody` reach the tree itself.
    for d in walkdir::WalkDir::new(dir.path()).into_iter().flatten() {
        if d.file_type().is_dir() && d.path() != secret {
            let _ = std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755));
        }
    }
    let is_root = std::fs::read_dir(&secret).is_ok();
    let out = if is_root {
        std::process::Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(env!("CARGO_BIN_EXE_fxray"))
            .args(["summary", "--json"])
            .arg(dir.path())
            .output()
            .expect("setpriv (util-linux) to run fxray as nobody")
    } else {
        crate::common::fxray(&["summary", "--json", dir.path().to_str().unwrap()])
    };
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o755)).expect("chmod back");
    let json = crate::common::stdout_json(&out);
    let warnings: Vec<String> = json["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| w.as_str().unwrap().to_string())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.ends_with("backward: permission denied; skipped")),
        "{warnings:?}"
    );
    assert_eq!(
        json["runs"][0]["models"][0]["phases"][0]["passes"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn a_file_deleted_between_indexing_and_parsing_is_one_line() {
    let (dir, phase) = tree(&[(
        "001_aot_forward_graph_after_gone.txt",
        GOOD.as_bytes().to_vec(),
    )]);
    let index = fxray::pipeline::tree::index(dir.path()).expect("index");
    std::fs::remove_file(phase.join("001_aot_forward_graph_after_gone.txt")).expect("rm");
    let files: Vec<PathBuf> = index.graph_files().map(Path::to_path_buf).collect();
    let err = load::graph(&files[1]).expect_err("gone");
    let msg = err.to_string();
    assert!(
        msg.contains("001_aot_forward_graph_after_gone.txt"),
        "{msg}"
    );
    assert!(!msg.contains('\n'));
    // The app (not watching, so it still lists the file): a backward pass deleted after the
    // folder was opened cannot load, and says why; the forward phase is untouched.
    let backward = phase.parent().unwrap().join("backward");
    std::fs::create_dir_all(&backward).expect("mkdir");
    let doomed = backward.join("000_aot_backward_graph.txt");
    std::fs::write(&doomed, GOOD).expect("write");
    let mut app = app_opens(dir.path());
    std::fs::remove_file(&doomed).expect("rm");
    app.select_graph(&doomed);
    assert!(app.wait_idle(Duration::from_secs(60)));
    let ph = app.phase.as_ref().expect("phase");
    let err = ph.load_errors[0].as_deref().expect("a load error");
    assert!(err.contains("000_aot_backward_graph.txt"), "{err}");
    assert!(!err.contains('\n'));
}

#[test]
fn a_trace_of_5_million_tiny_events_loads_in_bounded_memory() {
    use std::io::Write;
    let dir = tempfile::tempdir().expect("temp");
    let path = dir
        .path()
        .join("graph_1_id_1_rank_0_pid_1_ts_20260101000000000000.json");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
    f.write_all(b"[\n").expect("write");
    for i in 0..5_000_000u64 {
        let sep = if i == 0 { "" } else { ",\n" };
        write!(
            f,
            "{sep}{{\"name\":\"k\",\"ph\":\"X\",\"ts\":{i},\"dur\":1,\"pid\":1,\"tid\":{}}}",
            i % 4
        )
        .expect("write");
    }
    f.write_all(b"\n]\n").expect("write");
    drop(f);
    let out = crate::common::fxray(&["timeline", "--json", path.to_str().unwrap()]);
    let json = crate::common::stdout_json(&out);
    assert_eq!(json["tasks"], 5_000_000);
    assert_eq!(json["streams"].as_array().unwrap().len(), 4);
    assert!(json["incomplete"].is_null());
}

#[test]
fn a_trace_bigger_than_the_cap_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().expect("temp");
    let path = dir.path().join("huge.json");
    std::fs::File::create(&path)
        .and_then(|f| f.set_len(600 << 20))
        .expect("sparse");
    let out = crate::common::fxray(&["timeline", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("600 MiB is larger than the 512 MiB"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// All of the above in one folder, opened in the real window: frames keep coming while the
/// background work runs, and the good pass is shown.
#[cfg(unix)]
#[test]
fn the_window_stays_up_on_a_hostile_folder() {
    use egui_kittest::kittest::Queryable;
    let junk: Vec<u8> = (0..50_000u32).map(|i| (i * 7919 % 251) as u8).collect();
    let (dir, phase) = tree(&[
        ("001_aot_forward_graph_after_junk.txt", junk),
        (
            "002_aot_forward_graph_after_open.txt",
            b"class GraphModule(torch.nn.Module):\n    def forward(self, x):\n        y = f(((((\n"
                .to_vec(),
        ),
    ]);
    std::fs::File::create(phase.join("003_aot_forward_graph_after_huge.txt"))
        .and_then(|f| f.set_len(1 << 30))
        .expect("sparse");
    std::os::unix::fs::symlink(dir.path(), phase.join("loop")).expect("symlink");
    std::fs::write(
        phase.join("graph_1_id_1_rank_0_pid_1_ts_1.json"),
        b"[{\"ph\":\"X\",",
    )
    .expect("cut json");
    let mut app = App::new();
    app.live.enabled = false;
    app.open(dir.path());
    let mut h = crate::common::ui::harness(app);
    let start = Instant::now();
    let mut frames = 0;
    while h.state().app.busy() || frames < 5 {
        h.run_steps(1);
        frames += 1;
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "still busy after {frames} frames"
        );
    }
    h.run_steps(3);
    // In the tree and the pass picker.
    assert!(h.query_all_by_label("000 graph").count() >= 1);
    let ph = h.state().app.phase.as_ref().expect("phase");
    assert_eq!(ph.passes.len(), 4);
    assert!(ph.files[0].is_some());
}
