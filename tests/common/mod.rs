//! Shared test helpers: where the fixtures are.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared/fixtures/<rel>`: the real debug trees every test reads.
pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/fixtures")).join(rel)
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
