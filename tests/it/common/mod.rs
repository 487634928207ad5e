//! Shared test helpers: where the fixtures are.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// `tests/fixtures/<rel>`: the real debug trees every test reads.
pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures")).join(rel)
}

/// The single `run_*` folder under `<case>/torch_compile_debug/`.
pub fn run_dir(case: &str) -> PathBuf {
    let root = fixture(case).join("torch_compile_debug");
    let mut runs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("run_"))
        })
        .collect();
    runs.sort();
    runs.into_iter().next().expect("a run folder")
}

/// Copies a folder tree (for tests that need a variation of a fixture).
pub fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.expect("walk");
        let rel = entry.path().strip_prefix(from).expect("prefix");
        let dest = to.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&dest).expect("mkdir");
        } else {
            std::fs::copy(entry.path(), &dest).expect("copy");
        }
    }
}

pub mod sshd;
pub mod ui;

/// The sorted `*.txt` pass dumps of `<case>`'s model__0 `phase` folder.
pub fn pass_files(case: &str, phase: &str) -> Vec<PathBuf> {
    let dir = run_dir(case).join("npugraph_ex/model__0").join(phase);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    v.sort();
    v
}

/// Runs the `fxray` binary with `args`.
pub fn fxray(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_fxray"))
        .args(args)
        .output()
        .expect("run fxray")
}

/// Its standard output as JSON, after checking it succeeded.
pub fn stdout_json(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON on stdout")
}

/// Runs `tests/e2e/<script> OUT` with the PyTorch interpreter of the end-to-end tests
/// (`FXRAY_TEST_PYTHON`), and checks it succeeded.
pub fn run_e2e_script(script: &str, out: &std::path::Path) {
    run_e2e_cases(script, out, &[]);
}

/// [`run_e2e_script`] for some of the script's cases only (`tests/e2e/<script> OUT CASE…`).
pub fn run_e2e_cases(script: &str, out: &std::path::Path, cases: &[&str]) {
    let python = std::env::var("FXRAY_TEST_PYTHON")
        .expect("FXRAY_TEST_PYTHON must name a Python with torch installed (tests/run.sh sets it)");
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/e2e")
        .join(script);
    let run = std::process::Command::new(python)
        .arg(&path)
        .arg(out)
        .args(cases)
        .output()
        .unwrap_or_else(|e| panic!("run {script}: {e}"));
    assert!(
        run.status.success(),
        "{script}:\n{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
}

/// Every file under `root`.
pub fn walk_files(root: &std::path::Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect()
}

/// A temporary tree holding `files` (path relative to its root, text): the cases a house
/// rule's scan must catch.
pub fn tree_of(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for (rel, text) in files {
        let path = dir.path().join(rel);
        std::fs::create_dir_all(path.parent().expect("a file's folder")).expect("mkdir");
        std::fs::write(&path, text).expect("write");
    }
    dir
}

/// `path:line: text` of every line of the `.rs` files under `root/<dir>` (for each of `dirs`,
/// paths relative to `root`) that `hit(file, line)` picks, `skip` files left out: the house
/// rules that scan the sources (no OS call outside the platform module, one byte formatter).
pub fn rust_lines_where(
    root: &Path,
    dirs: &[&str],
    skip: &[PathBuf],
    hit: impl Fn(&Path, &str) -> bool,
) -> Vec<String> {
    let mut out = Vec::new();
    for dir in dirs {
        let mut files = walk_files(&root.join(dir));
        files.sort();
        for f in files {
            if f.extension().is_none_or(|x| x != "rs") || skip.contains(&f) {
                continue;
            }
            let text = std::fs::read_to_string(&f).unwrap_or_default();
            let rel = f.strip_prefix(root).unwrap_or(&f).to_path_buf();
            for (i, line) in text.lines().enumerate() {
                if hit(&rel, line) {
                    out.push(format!("{}:{}: {}", rel.display(), i + 1, line.trim()));
                }
            }
        }
    }
    out
}

/// The one trace log of a case folder (`<case>/torch_compile_debug/tlparse/`).
pub fn trace_of(case: &Path) -> PathBuf {
    let dir = case.join("torch_compile_debug/tlparse");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(logs.len(), 1, "{}", dir.display());
    logs.pop().unwrap()
}

/// A `TORCH_TRACE`-only folder: a temp copy of `case`'s trace log and nothing else.
pub fn trace_only(case: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp");
    let log = trace_of(case);
    std::fs::copy(&log, dir.path().join(log.file_name().unwrap())).unwrap();
    dir
}

/// Writes an executable script without holding it open in this process: a test binary starts
/// processes from many threads, and a child forked while the file is open for writing keeps
/// the descriptor, so running the script would fail with ETXTBSY ("Text file busy").
pub fn write_script(path: &std::path::Path, text: &str) {
    use std::io::Write;
    let mut sh = std::process::Command::new("sh")
        .arg("-c")
        .arg("cat > \"$1\" && chmod 755 \"$1\"")
        .arg("sh")
        .arg(path)
        .stdin(std::process::Stdio::piped())
        .spawn()
        .expect("sh");
    sh.stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("write");
    assert!(
        sh.wait().expect("wait").success(),
        "writing {}",
        path.display()
    );
}
