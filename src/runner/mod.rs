//! The runner service: launches a compile (through `assets/launcher.py`) with the environment
//! fxray builds, streams its output, finds the run folders it writes, and stops it cleanly.
//! It feeds the app through a channel, like the watcher.

pub mod npu;
pub mod process;
pub mod python;
pub mod spec;

use std::path::PathBuf;

/// The launcher, built into the binary and written to fxray's cache folder (never into a folder
/// the user views), so an installed fxray needs no source tree.
pub const LAUNCHER: &str = include_str!("../../assets/launcher.py");

/// Where the launcher is on disk, written there if missing or stale.
pub fn launcher_path() -> Result<PathBuf, String> {
    let dir = crate::paths::cache_dir();
    let path = dir.join(format!("launcher-{}.py", env!("CARGO_PKG_VERSION")));
    if std::fs::read_to_string(&path).ok().as_deref() != Some(LAUNCHER) {
        std::fs::create_dir_all(&dir)
            .and_then(|_| std::fs::write(&path, LAUNCHER))
            .map_err(|e| format!("cannot write the launcher to {}: {e}", path.display()))?;
    }
    Ok(path)
}
