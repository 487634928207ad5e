//! Live watching, end to end: a fixture tree is written into a temp folder file by file while
//! the app watches it, and the app's state is checked after each step.

use crate::common::{fixture, run_dir};
use fxray::app::App;
use fxray::app::live::FileStatus;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(20);

/// Polls the app until `cond` holds (or fails the test after `LIMIT`).
fn wait_for(app: &mut App, what: &str, cond: impl Fn(&App) -> bool) {
    let start = Instant::now();
    loop {
        app.poll();
        if cond(app) {
            return;
        }
        assert!(start.elapsed() < LIMIT, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A temp tree holding the showcase run with only the first `keep` forward passes, plus a
/// record of every file the test wrote (to prove the app wrote nothing).
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    forward: PathBuf,
    written: BTreeMap<PathBuf, Vec<u8>>,
}

impl Tree {
    fn new(keep: usize) -> Tree {
        let dir = tempfile::tempdir().expect("temp dir");
        let src = run_dir("showcase");
        let run = dir.path().join(src.file_name().expect("name"));
        let mut written = BTreeMap::new();
        for e in walkdir::WalkDir::new(&src) {
            let e = e.expect("walk");
            let dest = run.join(e.path().strip_prefix(&src).expect("prefix"));
            if e.file_type().is_dir() {
                std::fs::create_dir_all(&dest).expect("mkdir");
                continue;
            }
            let name = e.file_name().to_string_lossy();
            let is_pass =
                e.path().parent().is_some_and(|p| p.ends_with("forward")) && name.ends_with(".txt");
            let n: usize = name.get(..3).and_then(|s| s.parse().ok()).unwrap_or(0);
            if is_pass && n >= keep {
                continue;
            }
            let bytes = std::fs::read(e.path()).expect("read");
            std::fs::write(&dest, &bytes).expect("write");
            written.insert(dest, bytes);
        }
        let forward = run.join("npugraph_ex/model__0/forward");
        Tree {
            root: dir.path().to_path_buf(),
            _dir: dir,
            forward,
            written,
        }
    }

    fn source_pass(n: usize) -> PathBuf {
        crate::common::pass_files("showcase", "forward")
            .into_iter()
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&format!("{n:03}_"))
            })
            .expect("pass")
    }

    fn dest(&self, src: &Path) -> PathBuf {
        self.forward.join(src.file_name().unwrap())
    }

    /// Every file under the root, with its bytes.
    fn on_disk(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        walkdir::WalkDir::new(&self.root)
            .into_iter()
            .map(|e| e.expect("walk"))
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                (
                    e.path().to_path_buf(),
                    std::fs::read(e.path()).expect("read"),
                )
            })
            .collect()
    }
}

fn forward_passes(app: &App) -> usize {
    app.workspace.as_ref().map_or(0, |ws| {
        ws.index
            .runs
            .iter()
            .flat_map(|r| &r.models)
            .flat_map(|m| &m.phases)
            .filter(|p| p.name == "forward")
            .map(|p| p.passes.len())
            .sum()
    })
}

fn phase_passes(app: &App) -> usize {
    app.phase.as_ref().map_or(0, |p| p.passes.len())
}

fn opened(root: &Path) -> App {
    let mut app = App::new();
    app.open(root);
    assert!(app.wait_idle(crate::common::ui::WAIT), "opening timed out");
    wait_for(&mut app, "the watcher to start", |a| {
        a.live.backend.is_some()
    });
    app
}

#[test]
fn passes_written_in_chunks_deletions_and_new_runs_follow_the_disk() {
    let mut tree = Tree::new(6);
    let mut app = opened(&tree.root);
    assert_eq!(forward_passes(&app), 6);
    assert_eq!(phase_passes(&app), 6);
    assert!(app.live.follow, "follow is on by default");
    let expected = fxray::sources::load::graph(&Tree::source_pass(6)).expect("parse");

    // Pass 006 arrives in three chunks with pauses, cut mid-line.
    let src = Tree::source_pass(6);
    let bytes = std::fs::read(&src).expect("read");
    let dest = tree.dest(&src);
    let cuts = [0, bytes.len() / 3 + 7, 2 * bytes.len() / 3 + 3, bytes.len()];
    {
        use std::io::Write;
        let mut f = std::fs::File::create(&dest).expect("create");
        for (i, w) in cuts.windows(2).enumerate() {
            f.write_all(&bytes[w[0]..w[1]]).expect("write");
            f.flush().expect("flush");
            if i < 2 {
                wait_for(&mut app, "the half-written pass in the index", |a| {
                    forward_passes(a) == 7
                });
                // Long enough for the file to hold still past the quiet time: a parse of
                // what is there now would end in a cut line.
                let until = Instant::now() + Duration::from_millis(700);
                while Instant::now() < until {
                    app.poll();
                    assert_eq!(
                        app.file_status(&dest),
                        FileStatus::Writing,
                        "a file being written is shown as writing, not broken (chunk {i})"
                    );
                    assert_eq!(phase_passes(&app), 6, "an incomplete pass is not loaded");
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }
    tree.written.insert(dest.clone(), bytes);
    wait_for(&mut app, "the complete pass in the phase", |a| {
        phase_passes(a) == 7 && a.phase.as_ref().is_some_and(|p| p.files[6].is_some())
    });
    let ph = app.phase.as_ref().expect("phase");
    let loaded = ph.files[6].as_ref().expect("loaded");
    assert_eq!(loaded.node_count(), expected.node_count());
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    assert_eq!(ph.current, 6, "follow mode shows the new pass");
    wait_for(&mut app, "the layout to extend to the new pass", |a| {
        a.phase
            .as_ref()
            .is_some_and(|p| p.layout_passes == Some(7) && p.diffs[6].is_some())
    });
    wait_for(&mut app, "the new pass's facts", |a| {
        a.file_status(&dest) == FileStatus::Ready
    });
    let facts = &app.workspace.as_ref().unwrap().facts[&dest];
    assert_eq!(facts.nodes, expected.node_count());
    assert_eq!(facts.status(), "ok");

    // Follow off: a new pass only raises the "new" badge.
    app.set_follow(false);
    let src7 = Tree::source_pass(7);
    let dest7 = tree.dest(&src7);
    let bytes7 = std::fs::read(&src7).expect("read");
    std::fs::write(&dest7, &bytes7).expect("write");
    tree.written.insert(dest7.clone(), bytes7);
    wait_for(&mut app, "pass 007 to land", |a| phase_passes(a) == 8);
    assert_eq!(app.live.unseen, 1);
    assert_eq!(app.phase.as_ref().unwrap().current, 6, "the user stays put");
    app.show_newest();
    assert_eq!(app.phase.as_ref().unwrap().current, 7);
    assert_eq!(app.live.unseen, 0);

    // A deleted pass disappears, and the phase drops it.
    std::fs::remove_file(&dest7).expect("remove");
    tree.written.remove(&dest7);
    wait_for(&mut app, "pass 007 to go", |a| {
        forward_passes(a) == 7 && phase_passes(a) == 7
    });

    // A new run folder appears with everything in it.
    let run2 = tree.root.join("run_2026_11_29_13_00_00_000001-pid_4242");
    let model = run2.join("npugraph_ex/model__0/forward");
    std::fs::create_dir_all(&model).expect("mkdir");
    for n in 0..3 {
        let s = Tree::source_pass(n);
        let d = model.join(s.file_name().unwrap());
        let b = std::fs::read(&s).expect("read");
        std::fs::write(&d, &b).expect("write");
        tree.written.insert(d, b);
    }
    wait_for(&mut app, "the new run", |a| {
        a.workspace
            .as_ref()
            .is_some_and(|w| w.index.runs.len() == 2)
    });
    let ws = app.workspace.as_ref().unwrap();
    let new_run = ws
        .index
        .runs
        .iter()
        .find(|r| r.pid == Some(4242))
        .expect("run");
    assert_eq!(new_run.models[0].phases[0].passes.len(), 3);

    // A capture, a log and a data dump written later show up too.
    let cap_src = std::fs::read_dir(run_dir("showcase").join("npugraph_ex/model__0"))
        .expect("ls")
        .map(|e| e.expect("entry").path())
        .find(|p| p.to_string_lossy().ends_with(".aligned.json"))
        .expect("capture");
    let cap = run2
        .join("npugraph_ex/model__0")
        .join(cap_src.file_name().unwrap());
    let log = run2.join("torchdynamo/debug.log");
    std::fs::create_dir_all(log.parent().unwrap()).expect("mkdir");
    for (from, to) in [
        (cap_src, cap),
        (run_dir("showcase").join("torchdynamo/debug.log"), log),
    ] {
        let b = std::fs::read(&from).expect("read");
        std::fs::write(&to, &b).expect("write");
        tree.written.insert(to, b);
    }
    let dump = tree.root.join("data_dump");
    crate::common::copy_tree(&fixture("showcase/data_dump"), &dump);
    for e in walkdir::WalkDir::new(&dump) {
        let e = e.expect("walk");
        if e.file_type().is_file() {
            tree.written.insert(
                e.path().to_path_buf(),
                std::fs::read(e.path()).expect("read"),
            );
        }
    }
    wait_for(&mut app, "the capture, log and dump", |a| {
        let w = a.workspace.as_ref().unwrap();
        let r = w.index.runs.iter().find(|r| r.pid == Some(4242));
        r.is_some_and(|r| !r.logs.is_empty() && !r.models[0].captures.is_empty())
            && !w.index.data_dumps.is_empty()
    });

    drop(app);
    assert_eq!(
        tree.on_disk(),
        tree.written,
        "the watched tree holds exactly what the test wrote"
    );
}

#[test]
fn a_file_truncated_for_good_is_reported_once_it_has_held_still() {
    let tree = Tree::new(3);
    let mut app = opened(&tree.root);
    let src = Tree::source_pass(3);
    let bytes = std::fs::read(&src).expect("read");
    let dest = tree.dest(&src);
    std::fs::write(&dest, &bytes[..bytes.len() / 2]).expect("write");
    wait_for(&mut app, "the file in the index", |a| {
        forward_passes(a) == 4
    });
    assert_eq!(app.file_status(&dest), FileStatus::Writing);
    // After the grace period it is judged: parsed, with the cut reported.
    wait_for(&mut app, "the file to be judged", |a| {
        a.file_status(&dest) == FileStatus::Ready
    });
    let facts = &app.workspace.as_ref().unwrap().facts[&dest];
    assert_ne!(facts.status(), "ok", "a cut file is not shown as fine");

    // A pass the phase shows is written again (here: with pass 000's text): loaded afresh.
    let pass1 = tree.dest(&Tree::source_pass(1));
    let other = fxray::sources::load::graph(&Tree::source_pass(0)).expect("parse");
    assert_ne!(
        other.node_count(),
        app.phase.as_ref().unwrap().files[1]
            .as_ref()
            .unwrap()
            .node_count()
    );
    std::fs::copy(Tree::source_pass(0), &pass1).expect("copy");
    wait_for(&mut app, "the rewritten pass to be loaded again", |a| {
        a.phase.as_ref().is_some_and(|p| {
            p.files
                .get(1)
                .and_then(|f| f.as_ref())
                .is_some_and(|f| f.node_count() == other.node_count())
        })
    });
}

#[test]
fn polling_is_used_when_asked_and_still_sees_new_files() {
    let tree = Tree::new(2);
    let mut app = App::new();
    app.live.config.force_poll = Some("test".into());
    app.open(&tree.root);
    assert!(app.wait_idle(crate::common::ui::WAIT));
    wait_for(&mut app, "the watcher to start", |a| {
        a.live.backend.is_some()
    });
    let b = app.live.backend.clone().unwrap();
    assert!(b.to_string().contains("polling"), "{b}");
    let src = Tree::source_pass(2);
    std::fs::copy(&src, tree.dest(&src)).expect("copy");
    wait_for(&mut app, "the polled pass", |a| phase_passes(a) == 3);
}

#[test]
fn the_app_and_every_command_leave_the_viewed_tree_byte_for_byte_unchanged() {
    let dir = tempfile::tempdir().expect("temp dir");
    crate::common::copy_tree(&fixture("showcase"), dir.path());
    let before = hash_tree(dir.path());
    let mut app = opened(dir.path());
    // Look around: every graph parsed, a phase laid out, a log read.
    wait_for(&mut app, "facts", |a| {
        a.workspace.as_ref().is_some_and(|w| w.facts_done)
    });
    let log = app.workspace.as_ref().unwrap().index.runs[0].logs[0]
        .path
        .clone();
    let (logs, cx) = app.part::<fxray::app::logs::LogState>();
    logs.open(&cx, &log);
    assert!(app.wait_idle(crate::common::ui::WAIT));
    // …a capture's timeline, the dumped tensors of a node, the autotune report.
    let ws = app.workspace.as_ref().unwrap();
    let capture = ws.index.runs[0].models[0].captures[0].path.clone();
    let dump = ws.index.data_dumps[0].path.clone();
    app.open_trace_file(&capture);
    app.attach_dump(&dump);
    app.reveal_node("mul_1".into());
    let (autotune, cx) = app.part::<fxray::app::autotune::AutotuneState>();
    autotune.paste_log(&cx, "");
    assert!(app.wait_idle(crate::common::ui::WAIT));
    drop(app);
    // Every command that reads a folder, run on the same tree.
    let root = dir.path().to_str().unwrap().to_string();
    let phase = crate::common::run_dir("showcase")
        .join("npugraph_ex/model__0/forward")
        .strip_prefix(fixture("showcase"))
        .map(|p| dir.path().join(p))
        .expect("phase under the fixture");
    let pass0 = phase.join("000_aot_forward_graph.txt");
    let (a, b) = (
        format!("{}:0", phase.display()),
        format!("{}:4", phase.display()),
    );
    for args in [
        vec!["summary", "--json", &root],
        vec!["diff", &a, &b],
        vec![
            "export",
            pass0.to_str().unwrap(),
            "--format",
            "svg",
            "--union",
        ],
        vec!["timeline", capture.to_str().unwrap()],
        vec!["tensors", dump.to_str().unwrap()],
        vec!["autotune", &root],
    ] {
        let out = crate::common::fxray(&args);
        // `autotune` says "nothing found" with exit 1 on a tree without kernels.
        assert!(
            out.status.code().is_some_and(|c| c <= 1),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(hash_tree(dir.path()), before);
}

#[test]
fn the_watch_command_prints_one_json_line_per_change() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let tree = Tree::new(1);
    let mut child = Command::new(env!("CARGO_BIN_EXE_fxray"))
        .args(["watch", "--json", "--count", "2"])
        .arg(&tree.root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn fxray watch");
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    err.read_line(&mut first).expect("stderr");
    assert!(first.starts_with("fxray: watching"), "{first}");
    let src = Tree::source_pass(1);
    let dest = tree.dest(&src);
    std::fs::copy(&src, &dest).expect("copy");
    // `--count 2`: added, then settled; then it exits by itself.
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("fxray watch did not report the change");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success());
    let lines: Vec<serde_json::Value> = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map(|l| serde_json::from_str(&l.expect("line")).expect("JSON line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["kind"], "added");
    assert_eq!(lines[1]["kind"], "settled");
    for l in &lines {
        assert_eq!(l["role"], "pass");
        assert_eq!(Path::new(l["path"].as_str().unwrap()), dest);
        assert!(l["time"].as_str().unwrap().ends_with('Z'));
    }
}

fn hash_tree(root: &Path) -> BTreeMap<PathBuf, (u64, u64)> {
    use std::hash::{Hash, Hasher};
    walkdir::WalkDir::new(root)
        .into_iter()
        .map(|e| e.expect("walk"))
        .map(|e| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            let len = if e.file_type().is_file() {
                let b = std::fs::read(e.path()).expect("read");
                b.hash(&mut h);
                b.len() as u64
            } else {
                0
            };
            (e.path().to_path_buf(), (len, h.finish()))
        })
        .collect()
}
