//! Remote use against a real OpenSSH server on loopback (`common::sshd`): the CLI over
//! `ssh://`, the agent's greeting and version check, tensors summarised on the server, watch
//! events from the server, and the agent's end when ssh dies.

use crate::common::sshd::{Sshd, shared};
use crate::common::{fixture, fxray};
use fxray::sources::remote::{self, Host, Link};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// `fxray ARGS` reaching the shared server.
fn fxray_remote(s: &Sshd, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fxray"))
        .env("FXRAY_SSH", s.fxray_ssh())
        .arg("--remote-fxray")
        .arg(env!("CARGO_BIN_EXE_fxray"))
        .args(args)
        .output()
        .expect("run fxray")
}

/// A link of this test's own to the shared server: its counts are this test's requests
/// whatever runs beside it, and dropping it drops no other test's link.
fn linked() -> Linked {
    let s = shared();
    Linked {
        owner: remote::Owner::new(s.settings(Path::new(env!("CARGO_BIN_EXE_fxray")))),
        sshd: s,
    }
}

struct Linked {
    owner: remote::Owner,
    sshd: &'static Sshd,
}

impl Linked {
    /// The server, reached through this test's link.
    fn host(&self) -> Host {
        self.owner.host(&Host {
            user: Some(self.user.clone()),
            host: "127.0.0.1".into(),
            port: Some(self.port),
            owner: 0,
        })
    }

    /// The path `abs` on the server is read by through this test's link.
    fn mount(&self, abs: &Path) -> PathBuf {
        self.owner
            .mount_path(&self.host(), abs.to_str().expect("a UTF-8 path"))
    }
}

impl std::ops::Deref for Linked {
    type Target = Sshd;
    fn deref(&self) -> &Sshd {
        self.sshd
    }
}

#[test]
fn summary_over_ssh_prints_what_it_prints_locally() {
    let s = shared();
    let root = fixture("showcase");
    let local = fxray(&["summary", root.to_str().unwrap(), "--json"]);
    let far = fxray_remote(s, &["summary", &s.url(&root), "--json"]);
    assert!(
        far.status.success(),
        "{}",
        String::from_utf8_lossy(&far.stderr)
    );
    // Paths in JSON are written as the user typed the address, never as the internal mount.
    let far_json = String::from_utf8_lossy(&far.stdout);
    assert!(far_json.contains(&s.url(&root)), "{far_json}");
    assert!(!far_json.contains("/ssh:"), "{far_json}");
    // The mount the address names (the process's own, as the subprocess made it).
    let mount = remote::resolve(Path::new(&s.url(&root)))
        .unwrap()
        .display()
        .to_string();
    let far_text = far_json.replace(&s.url(&root), root.to_str().unwrap());
    assert_eq!(far_text, String::from_utf8_lossy(&local.stdout));
    assert!(far_text.contains("model__0"));
    // And the text form.
    let far = fxray_remote(s, &["summary", &s.url(&root)]);
    let local = fxray(&["summary", root.to_str().unwrap()]);
    assert_eq!(
        String::from_utf8_lossy(&far.stdout).replace(&mount, root.to_str().unwrap()),
        String::from_utf8_lossy(&local.stdout)
    );
}

#[test]
fn an_agent_of_another_protocol_gets_one_line_saying_what_to_install() {
    let s = shared();
    let old = s.dir.join("old-agent.sh");
    std::fs::write(
        &old,
        "#!/bin/sh\necho 'FXRAY-AGENT 0 0.0.9'\ncat >/dev/null\n",
    )
    .unwrap();
    make_executable(&old);
    let out = Command::new(env!("CARGO_BIN_EXE_fxray"))
        .env("FXRAY_SSH", s.fxray_ssh())
        .args(["--remote-fxray", old.to_str().unwrap(), "summary"])
        .arg(s.url(&fixture("showcase")))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("fxray 0.0.9 speaks protocol 0")
            && err.contains(&format!(
                "install this fxray (version {}, protocol {})",
                env!("CARGO_PKG_VERSION"),
                fxray::sources::remote::proto::PROTOCOL
            )),
        "{err}"
    );
}

#[test]
fn no_agent_on_the_server_says_how_to_install_it() {
    let s = shared();
    let out = Command::new(env!("CARGO_BIN_EXE_fxray"))
        .env("FXRAY_SSH", s.fxray_ssh())
        .args(["--remote-fxray", "/nonexistent/fxray", "summary"])
        .arg(s.url(&fixture("showcase")))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no fxray agent answered"), "{err}");
    assert!(err.contains("--print-install"), "{err}");
    assert!(
        err.contains("No such file"),
        "the server's own words: {err}"
    );
}

#[test]
fn a_malformed_address_says_how_to_write_one() {
    let out = fxray(&["summary", "ssh://host-without-path"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("ssh://[user@]host[:port]/absolute/path"),
        "{err}"
    );
}

fn make_executable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A little-endian f32 `.npy` of `n` values.
fn write_npy(path: &Path, n: usize) {
    use std::io::Write;
    let mut h = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({n},), }}");
    while (10 + h.len() + 1) % 64 != 0 {
        h.push(' ');
    }
    h.push('\n');
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    f.write_all(b"\x93NUMPY\x01\x00").unwrap();
    f.write_all(&(h.len() as u16).to_le_bytes()).unwrap();
    f.write_all(h.as_bytes()).unwrap();
    for i in 0..n {
        f.write_all(&((i % 1000) as f32 * 0.5 - 7.0).to_le_bytes())
            .unwrap();
    }
}

fn md5_of(bytes: &[u8]) -> [u8; 16] {
    use md5::Digest;
    md5::Md5::digest(bytes).into()
}

fn bytes_in(h: &Host) -> u64 {
    remote::status_of(h)
        .expect("the test's link is up")
        .bytes_in
}

/// The requests made on `h`'s link: a test's own, as the link is its own.
fn requests(h: &Host) -> u64 {
    remote::status_of(h)
        .expect("the test's link is up")
        .requests
}

#[test]
fn a_tensor_is_summarised_on_the_server_and_only_its_statistics_cross() {
    let linked = linked();
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("big.npy");
    let n = 16 << 20; // 64 MB
    write_npy(&npy, n);
    let h = linked.host();
    remote::link(&h).unwrap();
    let before = bytes_in(&h);
    let far = fxray::pipeline::tensors::summarize_file(&linked.mount(&npy)).unwrap();
    let crossed = bytes_in(&h) - before;
    let near = fxray::pipeline::tensors::summarize_file(&npy).unwrap();
    assert_eq!(far, near);
    assert_eq!(far.stats.count, n as u64);
    println!("64 MB .npy: {crossed} bytes crossed the link for its statistics");
    assert!(
        crossed < 16 << 10,
        "{crossed} bytes for the statistics of a 64 MB tensor"
    );
}

#[test]
fn a_graph_crosses_the_link_once_and_compressed() {
    let linked = linked();
    let h = linked.host();
    let pass = crate::common::pass_files("showcase", "forward")[0].clone();
    let size = std::fs::metadata(&pass).unwrap().len();
    remote::link(&h).unwrap();
    let before = bytes_in(&h);
    let far = fxray::sources::load::graph(&linked.mount(&pass)).unwrap();
    let crossed = bytes_in(&h) - before;
    let near = fxray::sources::load::graph(&pass).unwrap();
    assert_eq!(far.graphs[0].nodes.len(), near.graphs[0].nodes.len());
    assert!(far.graphs[0].nodes.len() > 10);
    println!("{}: {size} bytes, {crossed} crossed", pass.display());
    assert!(
        crossed <= 2 * size,
        "{crossed} bytes for a {size}-byte file"
    );
}

#[test]
fn watch_events_arrive_as_a_file_is_written_on_the_server() {
    use fxray::sources::watch::{WatchConfig, WatchEvent, Watcher};
    let linked = linked();
    let dir = tempfile::tempdir().unwrap();
    crate::common::copy_tree(&fixture("showcase"), dir.path());
    let mount = linked.mount(dir.path());
    let set = fxray::sources::discover::scan(&mount).unwrap();
    let files_before = set.files.len();
    let (tx, rx) = std::sync::mpsc::channel();
    let _w = Watcher::start(set, WatchConfig::default(), move |e| {
        let _ = tx.send(e);
    });
    // Watching has begun on the server before the file is written.
    let started = rx.recv_timeout(Duration::from_secs(20)).expect("started");
    assert!(
        matches!(&started, WatchEvent::Started(b) if b.to_string().contains("on ")),
        "{started:?}"
    );
    let pass = crate::common::pass_files("showcase", "forward")[0].clone();
    let rel = pass.strip_prefix(fixture("showcase")).unwrap();
    let new = dir
        .path()
        .join(rel)
        .with_file_name("099_aot_forward_graph_after_fxray_test.txt");
    std::fs::copy(&pass, &new).unwrap();
    let want = linked.mount(&new);
    let t = Instant::now();
    loop {
        let left = Duration::from_secs(20).saturating_sub(t.elapsed());
        match rx
            .recv_timeout(left)
            .expect("an update naming the new file")
        {
            WatchEvent::Update(u) if u.changes.iter().any(|c| c.path == want) => {
                assert_eq!(u.index.files_seen, files_before + 1);
                println!("watch event after {:?}", t.elapsed());
                break;
            }
            WatchEvent::Failed(m) => panic!("{m}"),
            _ => {}
        }
    }
}

/// True while process `pid` runs (a zombie has ended: only its parent has yet to reap it).
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|r| !r.trim_start().starts_with('Z'))
    })
}

/// The pids whose command line holds `needle`.
fn pids_running(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(needle))
        })
        .collect()
}

#[test]
fn killing_ssh_ends_the_agent() {
    let s = shared();
    // An agent of its own name, so this test finds its process and no other test's.
    let name: PathBuf = s.dir.join("fxray-agent-kill-test");
    let _ = std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_fxray"), &name);
    let h = Host {
        user: Some(s.user.clone()),
        host: "127.0.0.1".into(),
        port: Some(s.port),
        owner: 0,
    };
    let link = Link::connect(&h, &s.settings(&name)).unwrap();
    let agents = pids_running(name.to_str().unwrap());
    assert!(!agents.is_empty(), "the agent runs");
    link.close();
    let t = Instant::now();
    while agents.iter().any(|p| running(*p)) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "agent {agents:?} outlived ssh"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_dropped_link_says_so_and_the_next_read_reconnects() {
    // The test's own link: dropping it drops no other test's.
    let linked = linked();
    let h = linked.host();
    let mount = linked.mount(&fixture("showcase"));
    assert!(fxray::sources::vfs::is_dir(&mount));
    remote::disconnect(&h);
    let st = remote::status_of(&h).unwrap();
    assert!(!st.alive);
    // Give the failed-connect guard no chance to interfere: the link is only down, not failed.
    let index = fxray::sources::discover::discover(&mount).unwrap();
    assert!(!index.is_empty());
    let st = remote::status_of(&h).unwrap();
    assert!(st.alive && st.reconnects == 1, "{st:?}");
    // Another owner's link to the same server is another link, never dropped. Reached without
    // a user name (ssh's default, the same account), a name no process link of the window tests
    // uses: the process's list (the status bar's) does not hold it.
    let other = self::linked();
    let far = Host {
        user: None,
        ..other.host()
    };
    assert!(fxray::sources::vfs::is_dir(
        &other
            .owner
            .mount_path(&far, fixture("showcase").to_str().unwrap())
    ));
    assert_eq!(remote::status_of(&far).unwrap().reconnects, 0);
    assert!(
        !remote::status().iter().any(|l| l.host == far.authority()),
        "{:?}",
        remote::status()
    );
}

fn runner_script(name: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/runner")).join(name)
}

/// Starts `script` (a remote path) on its server in `cwd`; its events arrive on the receiver.
fn start_remote_run(
    script: PathBuf,
    cwd: PathBuf,
) -> (
    fxray::app::remote_run::RemoteRun,
    std::sync::mpsc::Receiver<fxray::runner::process::RunEvent>,
) {
    let spec = fxray::runner::spec::RunSpec {
        script,
        cwd: Some(cwd),
        nproc: 1,
        ..Default::default()
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let run = fxray::app::remote_run::start(&spec, move |e| {
        let _ = tx.send(e);
    })
    .unwrap();
    (run, rx)
}

/// Events of a run on the server until `until` holds for one (or 60 s pass).
/// The pid `hangs.py` prints for its child (`child N`).
fn child_pid(ev: &[fxray::runner::process::RunEvent]) -> u32 {
    ev.iter()
        .find_map(|e| match e {
            fxray::runner::process::RunEvent::Line { text, .. } => {
                text.strip_prefix("child ")?.parse().ok()
            }
            _ => None,
        })
        .expect("hangs.py prints its child")
}

fn events_until(
    rx: &std::sync::mpsc::Receiver<fxray::runner::process::RunEvent>,
    until: impl Fn(&fxray::runner::process::RunEvent) -> bool,
) -> Vec<fxray::runner::process::RunEvent> {
    let mut out = Vec::new();
    loop {
        let e = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("a run event in time");
        let stop = until(&e);
        out.push(e);
        if stop {
            return out;
        }
    }
}

#[test]
fn a_run_on_the_server_streams_its_console_and_its_run_folder() {
    use fxray::runner::process::{Exit, RunEvent};
    let linked = linked();
    let dir = tempfile::tempdir().unwrap();
    let (_run, rx) = start_remote_run(
        linked.mount(&runner_script("writes_tree.py")),
        linked.mount(dir.path()),
    );
    let ev = events_until(&rx, |e| {
        matches!(e, RunEvent::Exited { .. } | RunEvent::Failed(_))
    });
    let text: Vec<&str> = ev
        .iter()
        .filter_map(|e| match e {
            RunEvent::Line { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert!(text.contains(&"wrote pass 1"), "{ev:?}");
    let folder = ev.iter().find_map(|e| match e {
        RunEvent::RunFolder(p) => Some(p.clone()),
        _ => None,
    });
    let folder = folder.expect("the run folder, as a remote path");
    assert!(
        folder.starts_with(linked.mount(dir.path())),
        "{}",
        folder.display()
    );
    assert!(
        matches!(
            ev.last(),
            Some(RunEvent::Exited {
                exit: Exit::Code(0),
                ..
            })
        ),
        "{ev:?}"
    );
}

#[test]
fn killing_ssh_ends_a_compile_running_on_the_server() {
    use fxray::runner::process::RunEvent;
    // A link of its own, so that killing it leaves the other tests' links alone.
    let linked = linked();
    let h = linked.host();
    let dir = tempfile::tempdir().unwrap();
    let (_run, rx) = start_remote_run(
        linked.mount(&runner_script("hangs.py")),
        linked.mount(dir.path()),
    );
    let ev = events_until(
        &rx,
        |e| matches!(e, RunEvent::Line { text, .. } if text.starts_with("child ")),
    );
    let pid = ev.iter().find_map(|e| match e {
        RunEvent::Started { pid } => Some(*pid),
        _ => None,
    });
    let child = child_pid(&ev);
    let pids = [pid.expect("started"), child];
    assert!(
        pids.iter().all(|p| running(*p)),
        "the compile runs: {pids:?}"
    );
    remote::disconnect(&h);
    let t = Instant::now();
    while pids.iter().any(|p| running(*p)) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "the compile {pids:?} outlived the link"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let ev = events_until(&rx, |e| {
        matches!(e, RunEvent::Failed(_) | RunEvent::Exited { .. })
    });
    assert!(
        matches!(ev.last(), Some(RunEvent::Failed(m)) if m.contains("link dropped")),
        "{ev:?}"
    );
}

#[test]
fn a_20k_node_pass_opens_over_a_50ms_round_trip_within_2_s_more_than_locally() {
    let s = shared();
    let root = fixture("npugraph_ex/stress_20k");
    let out = fxray_remote(
        s,
        &[
            "bench",
            "remote",
            &s.url(&root),
            "--delay-ms",
            "25",
            // Best of two: one round can meet a burst of the other tests' work.
            "--rounds",
            "2",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    let field = |k: &str| -> f64 {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{k}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{k} in {text}"))
    };
    assert!(field("rtt_ms") >= 50.0, "the proxy delays: {text}");
    // The link's share of the open: what it adds over the same open from the local disk. On
    // loopback the agent's work (the other phase's facts) shares this machine's CPU with the
    // client's, so the bound allows for the local open once more: what it must catch is a link
    // that waits round trip after round trip (40 of them alone take 2 s).
    let added = field("first_graph_s") - field("local_first_graph_s");
    let bound = 2.0 + field("local_first_graph_s");
    assert!(
        added < bound,
        "{added:.2} s added by the link (bound {bound:.2} s): {text}"
    );
    // The pass files crossed once, compressed: less than the tree's size.
    let size: u64 = walkdir::WalkDir::new(&root)
        .into_iter()
        .flatten()
        .filter_map(|e| e.metadata().ok().filter(|m| m.is_file()).map(|m| m.len()))
        .sum();
    assert!(
        field("ready_bytes_in") < 2.0 * size as f64,
        "{text} for {size} bytes of files"
    );
}

#[test]
fn every_read_command_prints_over_ssh_what_it_prints_locally() {
    let s = shared();
    let f = |rel: &str| fixture(rel).display().to_string();
    let forward = crate::common::run_dir("showcase").join("npugraph_ex/model__0/forward");
    let pass = crate::common::pass_files("showcase", "forward")[4].clone();
    let capture = fixture("aclgraph/small_single_stream")
        .join("graph_1_id_281472882353216_rank_0_pid_1183422_ts_20260312084512345678.aligned.json");
    let cases: Vec<Vec<String>> = vec![
        vec!["summary".into(), f("showcase")],
        vec![
            "ranks".into(),
            f("npugraph_ex/launch_4rank"),
            "--json".into(),
        ],
        vec![
            "diff".into(),
            format!("{}:3", forward.display()),
            format!("{}:4", forward.display()),
            "--json".into(),
        ],
        vec![
            "export".into(),
            pass.display().to_string(),
            "--format".into(),
            "json".into(),
        ],
        vec![
            "timeline".into(),
            capture.display().to_string(),
            "--json".into(),
        ],
        vec!["tensors".into(), f("showcase/data_dump")],
        // npugraph_ex's `.pt` tensor dump: read, traced in graph order, and its two stages
        // compared with the pass that changed the numbers named
        vec!["tensors".into(), f("npugraph_tensor_dump"), "--json".into()],
        vec![
            "tensors".into(),
            f("npugraph_tensor_dump"),
            "--first".into(),
            "nan".into(),
            "--graph".into(),
            f("npugraph_tensor_dump/graph.txt"),
        ],
        vec![
            "compare".into(),
            f("stage_faults/gelu_tanh"),
            "--json".into(),
        ],
        vec!["msprobe".into(), f("showcase"), "--json".into()],
        vec!["compiles".into(), f("compile_story"), "--json".into()],
        vec![
            "compare".into(),
            f("accuracy/perturb/target_statistics"),
            f("accuracy/perturb/golden_statistics"),
            "--json".into(),
        ],
        vec![
            "compare".into(),
            f("accuracy/perturb/target_tensor"),
            f("accuracy/perturb/golden_tensor"),
            "--json".into(),
        ],
    ];
    let prefix = format!("/ssh:{}@127.0.0.1:{}", s.user, s.port);
    let typed = format!("ssh://{}@127.0.0.1:{}", s.user, s.port);
    for args in cases {
        let local: Vec<&str> = args.iter().map(String::as_str).collect();
        let near = fxray(&local);
        assert!(
            near.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&near.stderr)
        );
        // Every absolute path on the line becomes the same path on the server.
        let far_args: Vec<String> = args
            .iter()
            .map(|a| match a.starts_with('/') {
                true => s.url(Path::new(a)),
                false => a.clone(),
            })
            .collect();
        let far_args: Vec<&str> = far_args.iter().map(String::as_str).collect();
        let far = fxray_remote(s, &far_args);
        assert!(
            far.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&far.stderr)
        );
        // JSON writes the address as typed, never the mount; text the mount (both name the
        // same server path).
        let json = args.iter().any(|a| a == "--json" || a == "json");
        let far_out = String::from_utf8_lossy(&far.stdout);
        assert!(
            !json || !far_out.contains(&prefix),
            "{args:?} printed the internal mount: {far_out}"
        );
        let far_text = far_out.replace(&typed, "").replace(&prefix, "");
        let near_text = String::from_utf8_lossy(&near.stdout);
        // The first line that differs, not both whole outputs (they can be megabytes).
        let differs = far_text
            .lines()
            .zip(near_text.lines())
            .enumerate()
            .find(|(_, (a, b))| a != b);
        assert!(
            differs.is_none() && far_text.lines().count() == near_text.lines().count(),
            "{args:?}: over ssh line {:?}",
            differs.map(|(i, (a, b))| (i + 1, a.to_string(), b.to_string()))
        );
        assert_eq!(far_text, near_text, "{args:?}: line ends");
        assert!(far_text.len() > 100, "{args:?} printed little: {far_text}");
    }
}

#[test]
fn opening_a_remote_tree_brings_the_other_phases_facts_not_their_text() {
    let linked = linked();
    let h = linked.host();
    let root = fixture("npugraph_ex/stress_20k");
    remote::link(&h).unwrap();
    let before = bytes_in(&h);
    let far = crate::common::ui::opened(&linked.mount(&root));
    let crossed = bytes_in(&h) - before;
    let near = crate::common::ui::opened(&root);
    let (fw, nw) = (
        far.workspace.as_ref().unwrap(),
        near.workspace.as_ref().unwrap(),
    );
    // The tree's counts: every pass's facts, parsed on the server, equal the local ones.
    assert_eq!(fw.facts.len(), nw.facts.len());
    assert!(fw.facts.len() >= 6);
    for (p, f) in &nw.facts {
        let g = &fw.facts[&linked.mount(p)];
        assert_eq!(
            (g.nodes, g.fingerprint, &g.by_op),
            (f.nodes, f.fingerprint, &f.by_op),
            "{}",
            p.display()
        );
    }
    // Only the phase on screen crossed as text (compressed), not the other one.
    let size = |phase: &str| -> u64 {
        crate::common::walk_files(&root)
            .into_iter()
            .filter(|p| p.parent().is_some_and(|d| d.ends_with(phase)))
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum()
    };
    let shown = far.phase.as_ref().unwrap().key.clone();
    let (on_screen, other) = if shown.ends_with("forward") {
        (size("forward"), size("backward"))
    } else {
        (size("backward"), size("forward"))
    };
    println!("opened: {crossed} bytes in; phase on screen {on_screen} bytes, the other {other}");
    assert!(
        crossed < on_screen,
        "{crossed} bytes for a phase of {on_screen}"
    );
}

#[test]
fn an_accuracy_compare_of_remote_tensors_is_computed_on_the_server() {
    let linked = linked();
    let h = linked.host();
    let (t, g) = (
        fixture("accuracy/perturb/target_tensor"),
        fixture("accuracy/perturb/golden_tensor"),
    );
    let pt_bytes = bytes_of(&[&t, &g], "pt");
    let o = fxray::pipeline::compare::Options::default();
    remote::link(&h).unwrap();
    let before = bytes_in(&h);
    let (far, _) =
        fxray::pipeline::compare::compare(&linked.mount(&t), &linked.mount(&g), &o).unwrap();
    let crossed = bytes_in(&h) - before;
    let (near, _) = fxray::pipeline::compare::compare(&t, &g, &o).unwrap();
    assert_eq!(far.pairs.len(), near.pairs.len());
    assert!(near.pairs.iter().filter(|p| p.metrics.is_some()).count() >= 8);
    for (a, b) in far.pairs.iter().zip(&near.pairs) {
        // Bit for bit: the metrics cross as their bits.
        assert_eq!(a.metrics, b.metrics, "{}", b.key);
        assert_eq!((a.result, &a.reason), (b.result, &b.reason), "{}", b.key);
    }
    assert_eq!(
        far.first_divergence.as_ref().map(|d| &d.key),
        near.first_divergence.as_ref().map(|d| &d.key)
    );
    println!("compare of {pt_bytes} bytes of .pt files: {crossed} bytes crossed");
    // dump.json crosses (it is read here); no tensor does.
    let json = bytes_of(&[&t, &g], "json");
    assert!(
        crossed < json + pt_bytes / 4,
        "{crossed} bytes: {json} of json, {pt_bytes} of tensors"
    );
}

/// The bytes of the files named `*.ext` under `dirs`.
fn bytes_of(dirs: &[&Path], ext: &str) -> u64 {
    dirs.iter()
        .flat_map(|d| crate::common::walk_files(d))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

#[test]
fn a_remote_phase_is_parsed_diffed_laid_out_and_folded_on_the_server() {
    use fxray::pipeline::phase::{self, PhaseNews, PhaseSpec};
    use std::sync::Mutex;
    use std::sync::atomic::AtomicBool;
    let linked = linked();
    let h = linked.host();
    // A model with its Dynamo graph: module inference reads it besides the passes.
    let model = crate::common::run_dir("showcase").join("npugraph_ex/model__0");
    let passes = crate::common::pass_files("showcase", "forward");
    let context = fxray::pipeline::modules::ModuleContext {
        dynamo: Some(model.join("dynamo_out_graph.txt")).filter(|p| p.exists()),
        forward_first: None,
    };
    let open = |passes: Vec<PathBuf>, context| {
        let spec = PhaseSpec {
            passes,
            current: 0,
            layout: true,
            context,
        };
        let news = Mutex::new(Vec::new());
        phase::open(&spec, None, &AtomicBool::new(false), &|n| {
            news.lock().unwrap().push(n)
        });
        news.into_inner().unwrap()
    };
    let mount = |p: &PathBuf| linked.mount(p);
    let far_context = fxray::pipeline::modules::ModuleContext {
        dynamo: context.dynamo.as_ref().map(mount),
        forward_first: None,
    };
    remote::link(&h).unwrap();
    let (before, asked) = (bytes_in(&h), requests(&h));
    let far = open(passes.iter().map(mount).collect(), far_context);
    let crossed = bytes_in(&h) - before;
    // One request for the whole phase (the link's own pings are not counted): its files
    // were read on the server, not one by one over the link.
    let asked = requests(&h) - asked;
    assert_eq!(
        asked,
        1,
        "{asked} requests for a phase of {} passes",
        passes.len()
    );
    let near = open(passes.clone(), context.clone());
    assert!(context.dynamo.is_some(), "the showcase has a Dynamo graph");
    let fold = |news: &[PhaseNews]| {
        news.iter().find_map(|n| match n {
            PhaseNews::Fold { layout, tree } => Some((layout.clone(), tree.clone())),
            _ => None,
        })
    };
    let ((fl, ft), (nl, nt)) = (fold(&far).expect("fold"), fold(&near).expect("fold"));
    assert_eq!(fl.layout, nl.layout);
    assert_eq!(fl.union.names(), nl.union.names());
    assert_eq!(ft.module_of, nt.module_of);
    let paths = |t: &fxray::analysis::fold::FoldTree| -> Vec<String> {
        t.modules.iter().map(|m| m.path.clone()).collect()
    };
    assert_eq!(paths(&ft), paths(&nt));
    assert!(ft.modules.len() > 1);
    // Laid out on the server: its timings stay there (they do not cross the link).
    assert!(fl.layout.stats.phase_times.is_empty());
    assert!(!nl.layout.stats.phase_times.is_empty());
    let diffs = |news: &[PhaseNews]| -> Vec<String> {
        news.iter()
            .find_map(|n| match n {
                PhaseNews::Diffs(d) => Some(d.iter().map(|d| d.counts().to_string()).collect()),
                _ => None,
            })
            .expect("diffs")
    };
    assert_eq!(diffs(&far), diffs(&near));
    let passes_of = |news: &[PhaseNews]| -> Vec<usize> {
        let mut v: Vec<usize> = news
            .iter()
            .filter_map(|n| match n {
                PhaseNews::Pass {
                    pass,
                    result: Ok(f),
                } => Some(*pass + f.graphs[0].nodes.len()),
                _ => None,
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(passes_of(&far), passes_of(&near));
    crate::phase_pipeline::assert_preview_first(&far, 0);
    // A pass whose file is the same as an earlier one's crossed once: the client holds one
    // file for both (the showcase's forward has 8 passes of one text and 4 of another).
    let digest = |p: &PathBuf| md5_of(&std::fs::read(p).unwrap());
    let file_of = |pass: usize| {
        far.iter().find_map(|n| match n {
            PhaseNews::Pass {
                pass: p,
                result: Ok(f),
            } if *p == pass => Some(f.clone()),
            _ => None,
        })
    };
    let mut shared = 0;
    for i in 0..passes.len() {
        for j in i + 1..passes.len() {
            let (a, b) = (file_of(i).unwrap(), file_of(j).unwrap());
            assert_eq!(
                std::sync::Arc::ptr_eq(&a, &b),
                digest(&passes[i]) == digest(&passes[j]),
                "passes {i} and {j}"
            );
            shared += usize::from(std::sync::Arc::ptr_eq(&a, &b));
        }
    }
    assert!(shared >= 28 + 6, "{shared} pairs of passes share a file");
    let size: u64 = passes
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    println!(
        "phase of {} passes ({size} B of text): {crossed} B crossed",
        passes.len()
    );
    assert!(crossed < 2 * size, "{crossed} B for {size} B of passes");
}

#[test]
fn a_remote_phase_that_cannot_be_read_says_why_for_every_pass() {
    use fxray::pipeline::phase::{self, PhaseNews, PhaseSpec};
    use std::sync::Mutex;
    use std::sync::atomic::AtomicBool;
    let linked = linked();
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("gone/000_aot_forward_graph.txt");
    let spec = PhaseSpec {
        passes: vec![linked.mount(&missing)],
        current: 0,
        layout: true,
        context: Default::default(),
    };
    let news = Mutex::new(Vec::new());
    phase::open(&spec, None, &AtomicBool::new(false), &|n| {
        news.lock().unwrap().push(n)
    });
    let news = news.into_inner().unwrap();
    let Some(PhaseNews::Pass { result: Err(e), .. }) = news.first() else {
        panic!("no error for the pass");
    };
    // The file is the problem, and the message names it.
    assert!(
        matches!(e, fxray::pipeline::failure::Failure::Unreadable(_))
            && (e.message().contains("000_aot_forward_graph.txt")
                || e.message().contains("No such file")),
        "{e:?}"
    );
}

#[test]
fn a_remote_index_names_each_models_graph_without_its_output_code_crossing() {
    let linked = linked();
    let h = linked.host();
    let dir = tempfile::tempdir().unwrap();
    crate::common::copy_tree(&fixture("showcase"), dir.path());
    // A large model's output_code.py (16 MB at 415 layers): 3.5 MB of lines that deflate to
    // about half ahead of the `fx_graph_name` the index reads.
    let run = crate::common::run_dir("showcase");
    let code = dir
        .path()
        .join(run.strip_prefix(fixture("showcase")).unwrap())
        .join("npugraph_ex/model__0/forward/output_code.py");
    let text = std::fs::read_to_string(&code).unwrap();
    let noise: String = (0..100_000u32)
        .map(|i| format!("# {:x}\n", u128::from_le_bytes(md5_of(&i.to_le_bytes()))))
        .collect();
    std::fs::write(&code, format!("{noise}{text}")).unwrap();
    remote::link(&h).unwrap();
    let (before, asked) = (bytes_in(&h), requests(&h));
    let index = fxray::pipeline::tree::index(&linked.mount(dir.path())).unwrap();
    let crossed = bytes_in(&h) - before;
    // The tree scanned and the names read on the server: a round trip each.
    let asked = requests(&h) - asked;
    assert_eq!(asked, 2, "{asked} requests for the index");
    let names: Vec<Option<&str>> = index
        .runs
        .iter()
        .flat_map(|r| &r.models)
        .map(|m| m.graph_name.as_deref())
        .collect();
    assert_eq!(names, [Some("graph_1")]);
    // What crosses is the tree's listing (1,322 files: about 225 KB), not the file.
    assert!(
        crossed < noise.len() as u64 / 8,
        "{crossed} bytes in for the index, {} of text read",
        noise.len()
    );
}

#[test]
fn a_remote_compile_story_is_read_and_joined_on_the_server() {
    let linked = linked();
    let h = linked.host();
    let root = fixture("compile_story");
    let story_of = |root: &Path| {
        let index = fxray::pipeline::tree::index(root).unwrap();
        let traces = fxray::sources::trace_log::find_beside(root, &index);
        assert_eq!(traces.len(), 1, "{}", root.display());
        fxray::pipeline::compiles::read_stories(&traces, Some(&index))
    };
    let near = story_of(&root);
    remote::link(&h).unwrap();
    let far_root = linked.mount(&root);
    let index = fxray::pipeline::tree::index(&far_root).unwrap();
    let traces = fxray::sources::trace_log::find_beside(&far_root, &index);
    let asked = requests(&h);
    let far = fxray::pipeline::compiles::read_stories(&traces, Some(&index));
    let asked = requests(&h) - asked;
    // One request: the log and the 7 model graphs it is joined to were read on the server.
    assert_eq!(asked, 1, "{asked} requests for one trace log");
    assert_eq!(far.len(), 1);
    let (f, n) = (&far[0], &near[0]);
    assert_eq!(f.path, linked.mount(&n.path));
    assert_eq!(f.trace.stopped, None);
    assert_eq!(f.trace.compiles.len(), n.trace.compiles.len());
    assert!(n.trace.compiles.len() >= 5);
    for (a, b) in f.trace.compiles.iter().zip(&n.trace.compiles) {
        assert_eq!(a.label(), b.label());
        assert_eq!(a.metrics, b.metrics);
        assert_eq!(a.breaks.len(), b.breaks.len());
        assert_eq!(a.recompile_reason, b.recompile_reason);
    }
    assert_eq!(f.trace.spans.len(), n.trace.spans.len());
    assert_eq!(f.links, n.links);
    assert!(n.links.len() >= 5, "the story joins its model folders");
    assert_eq!(f.model_notes(), n.model_notes());
}

#[test]
fn a_remote_trace_log_that_cannot_be_read_is_a_story_that_says_why() {
    let linked = linked();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("dedicated_log_torch_trace_gone.log");
    let far = fxray::pipeline::compiles::read_stories(&[linked.mount(&log)], None);
    assert_eq!(far.len(), 1);
    let why = far[0].trace.stopped.as_deref().expect("a reason");
    assert!(why.contains("dedicated_log_torch_trace_gone.log"), "{why}");
}

#[test]
fn a_remote_trees_pass_diffs_for_the_summary_are_computed_on_the_server() {
    let linked = linked();
    let h = linked.host();
    let phases = |case: &str, mount: bool| -> Vec<Vec<PathBuf>> {
        ["forward", "backward"]
            .iter()
            .filter(|ph| {
                crate::common::run_dir(case)
                    .join("npugraph_ex/model__0")
                    .join(ph)
                    .exists()
            })
            .map(|ph| {
                crate::common::pass_files(case, ph)
                    .into_iter()
                    .map(|p| if mount { linked.mount(&p) } else { p })
                    .collect()
            })
            .collect()
    };
    let near = fxray::pipeline::facts::of_phases(&phases("npugraph_ex/stress_20k", false));
    remote::link(&h).unwrap();
    let (asked, before) = (requests(&h), bytes_in(&h));
    let far = fxray::pipeline::facts::of_phases(&phases("npugraph_ex/stress_20k", true));
    let (asked, crossed) = (requests(&h) - asked, bytes_in(&h) - before);
    println!("summary facts of 6 passes of up to 20k nodes: {asked} request(s), {crossed} B in");
    assert_eq!(asked, 1, "{asked} requests");
    assert!(
        crossed < 64 << 10,
        "{crossed} B for the facts and diff counts"
    );
    assert_eq!(far.0.len(), near.0.len());
    assert_eq!(far.1.len(), near.1.len());
    assert_eq!(
        far.1.len(),
        4,
        "a diff for every pass after the first of each phase"
    );
    for (p, c) in &near.1 {
        assert_eq!(far.1[&linked.mount(p)], *c, "{}", p.display());
    }
    for (p, f) in &near.0 {
        let g = &far.0[&linked.mount(p)];
        assert_eq!((g.nodes, g.fingerprint), (f.nodes, f.fingerprint));
    }
}

/// `fxray modules` of a graph on a server: inferred there (one request), and only the report
/// crosses, equal to the one made here.
#[test]
fn a_remote_graphs_module_report_is_made_on_the_server() {
    let linked = linked();
    let h = linked.host();
    let pass = crate::common::pass_files("npugraph_ex/stress_24layer", "forward")[0].clone();
    let near = fxray::pipeline::modules::report(&pass).expect("local report");
    remote::link(&h).unwrap();
    let (asked, before) = (requests(&h), bytes_in(&h));
    let far = fxray::pipeline::modules::report(&linked.mount(&pass)).expect("remote report");
    let (asked, crossed) = (requests(&h) - asked, bytes_in(&h) - before);
    let text = std::fs::metadata(&pass).unwrap().len();
    println!("module report of a {text} B graph: {asked} request(s), {crossed} B in");
    assert_eq!(asked, 1, "{asked} requests");
    assert!(
        crossed < text / 4,
        "{crossed} B crossed for a {text} B graph"
    );
    assert_eq!(
        serde_json::to_value(&far).unwrap(),
        serde_json::to_value(&near).unwrap()
    );
    assert_eq!(
        near.modules.iter().map(|m| m.groups.len()).sum::<usize>(),
        1
    );
}

/// Stop on a run on the server: its process group ends there, and the run says how it ended
/// (the agent's last events are still read after the stop), as a local run does.
#[test]
fn stopping_a_run_on_the_server_ends_it_and_says_how() {
    use fxray::runner::process::{Exit, RunEvent};
    let linked = linked();
    let dir = tempfile::tempdir().unwrap();
    let (run, rx) = start_remote_run(
        linked.mount(&runner_script("hangs.py")),
        linked.mount(dir.path()),
    );
    let ev = events_until(
        &rx,
        |e| matches!(e, RunEvent::Line { text, .. } if text.starts_with("child ")),
    );
    let child = child_pid(&ev);
    run.stop();
    let ev = events_until(&rx, |e| {
        matches!(e, RunEvent::Failed(_) | RunEvent::Exited { .. })
    });
    assert!(
        matches!(
            ev.last(),
            Some(RunEvent::Exited {
                exit: Exit::Signal(_),
                ..
            })
        ),
        "{ev:?}"
    );
    let t = Instant::now();
    while running(child) {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "{child} outlived Stop"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `fxray bisect ssh://…` replays where the run lies: the agent starts the replay with the
/// server's Python and streams a line per pass, and the answer names the server's files.
#[test]
fn a_bisect_of_a_remote_run_replays_on_the_server() {
    let s = shared();
    let dir = tempfile::tempdir().expect("temp");
    // A path without `ssh://` beside a remote run names the server's interpreter.
    let python = crate::ui_bisect::stand_in(dir.path());
    let run = fixture("stage_faults/gelu_tanh");
    let out = fxray_remote(s, &["bisect", &s.url(&run), "--python", &python, "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let b: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(
        b["answer"]
            .as_str()
            .unwrap()
            .starts_with("pass 004 apply_pattern_passes broke it: `gelu_default`"),
        "{}",
        b["answer"]
    );
    let first = b["pass_files"][0].as_str().unwrap();
    assert!(first.starts_with("ssh://"), "{first}");
    assert!(
        stderr.contains("pass 004 apply_pattern_passes: 26 nodes replayed"),
        "{stderr}"
    );
    let parent = std::fs::read_to_string(dir.path().join("parent")).expect("parent");
    assert!(parent.contains(" agent"), "started by {parent}");
    // The departure's numbers crossed the link (as postcard, where a JSON value cannot).
    let d = &b["passes"][1]["departs"][0];
    assert_eq!(d["max_abs"], 0.000234, "{d}");
}

/// The real replay, over ssh: the agent runs `assets/replay.py` with the server's torch beside
/// the run, and the answer is the one torch gives locally.
#[test]
#[ignore = "needs PyTorch: tests/run.sh installs it and runs this"]
fn e2e_torch_a_bisect_over_ssh_names_the_pass() {
    let s = shared();
    let python = std::env::var("FXRAY_TEST_PYTHON").expect("FXRAY_TEST_PYTHON");
    let run = fixture("stage_faults/gelu_tanh");
    let out = fxray_remote(s, &["bisect", &s.url(&run), "--python", &python, "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let b: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(b["guilty"]["index"], 4, "{}", b["answer"]);
    assert_eq!(b["guilty"]["node"], "gelu_default", "{}", b["answer"]);
    assert!(b["pass_files"][4].as_str().unwrap().starts_with("ssh://"));
}
