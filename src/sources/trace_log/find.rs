//! Where a tree's trace logs are: torch writes them to `torch_compile_debug/tlparse/`, beside
//! the `run_*` folders, so a run or model folder opened on its own finds them above itself.

use crate::model::index::DebugIndex;
use crate::sources::{names, vfs};
use std::path::{Path, PathBuf};

/// Folders above `root` looked at for a `tlparse/` folder (model → run → debug root).
const LEVELS_UP: usize = 4;

/// The index's trace logs, else those in the nearest `tlparse/` folder above `root`.
pub fn find_beside(root: &Path, index: &DebugIndex) -> Vec<PathBuf> {
    if !index.traces.is_empty() {
        return index.traces.clone();
    }
    for dir in root.ancestors().skip(1).take(LEVELS_UP) {
        let logs = logs_in(&dir.join("tlparse"));
        if !logs.is_empty() {
            return logs;
        }
    }
    Vec::new()
}

fn logs_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = vfs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .into_iter()
        .filter(|e| e.kind == vfs::Kind::File && names::trace_log(&e.name()))
        .map(|e| e.path)
        .collect()
}
