//! Where a tree's trace logs are: torch writes them to `torch_compile_debug/tlparse/`, beside
//! the `run_*` folders, so a run or model folder opened on its own finds them above itself.
//! Logs are known by name (`dedicated_log_torch_trace*.log`); a folder holding none by that
//! name is searched by content too, since users rename them and gather several ranks' logs
//! under names of their own (`rank3.log`).

use crate::model::index::DebugIndex;
use crate::sources::{names, vfs};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Folders above `root` looked at for a `tlparse/` folder (model → run → debug root).
const LEVELS_UP: usize = 4;
/// Files of a folder looked into by content, at most.
const MAX_SNIFFED: usize = 1000;
/// Bytes read to tell a trace log by its first line.
const SNIFF_BYTES: usize = 64 * 1024;

/// The index's trace logs and the trace logs of other names (by content) in `root` and its
/// `tlparse/`; when there are none, those in the nearest `tlparse/` folder above `root`.
pub fn find_beside(root: &Path, index: &DebugIndex) -> Vec<PathBuf> {
    around(root, index.traces.clone())
}

/// [`find_beside`] for a folder read without an index (a model folder, for the modules its
/// compile's guards name).
pub fn find_around(root: &Path) -> Vec<PathBuf> {
    around(root, Vec::new())
}

fn around(root: &Path, mut found: Vec<PathBuf>) -> Vec<PathBuf> {
    for dir in [root.to_path_buf(), root.join("tlparse")] {
        found.extend(sniffed_in(&dir));
    }
    if !found.is_empty() {
        return found;
    }
    for dir in root.ancestors().skip(1).take(LEVELS_UP) {
        let dir = dir.join("tlparse");
        let mut logs = logs_in(&dir);
        logs.extend(sniffed_in(&dir));
        if !logs.is_empty() {
            return logs;
        }
    }
    Vec::new()
}

fn files_in(dir: &Path) -> Vec<vfs::Entry> {
    let Ok(entries) = vfs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<vfs::Entry> = entries
        .into_iter()
        .filter(|e| e.kind == vfs::Kind::File)
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files
}

fn logs_in(dir: &Path) -> Vec<PathBuf> {
    files_in(dir)
        .into_iter()
        .filter(|e| names::trace_log(&e.name()))
        .map(|e| e.path)
        .collect()
}

/// The `.log`/`.txt` files of `dir` not named as torch names trace logs whose first line is a
/// trace-log header.
fn sniffed_in(dir: &Path) -> Vec<PathBuf> {
    files_in(dir)
        .into_iter()
        .filter(|e| {
            let n = e.name();
            !names::trace_log(&n) && (n.ends_with(".log") || n.ends_with(".txt"))
        })
        .take(MAX_SNIFFED)
        .filter(|e| looks_like_trace(&e.path))
        .map(|e| e.path)
        .collect()
}

/// The first line is a glog prefix followed by a JSON object naming an event kind.
pub fn looks_like_trace(path: &Path) -> bool {
    let Ok(file) = vfs::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    if file
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .is_err()
    {
        return false;
    }
    let first = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let first = String::from_utf8_lossy(first);
    let first = first.trim_end_matches('\r');
    // A first line longer than the sniffed bytes is judged by its start.
    super::envelope::parse(first).is_ok()
        || (first.len() + 1 >= SNIFF_BYTES && super::envelope::prefix_ok(first))
}
