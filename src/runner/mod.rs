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

/// The pass replay (`fxray bisect`): runs every pass's graph text on the run's inputs and
/// judges each node against the pass before (docs/formats.md §4.6). Written out like the
/// launcher.
pub const REPLAY: &str = include_str!("../../assets/replay.py");

/// Where the launcher is on disk, written there if missing or stale.
pub fn launcher_path() -> Result<PathBuf, String> {
    asset_path("launcher", LAUNCHER)
}

/// Where the replay script is on disk, written there if missing or stale.
pub fn replay_path() -> Result<PathBuf, String> {
    asset_path("replay", REPLAY)
}

fn asset_path(name: &str, text: &str) -> Result<PathBuf, String> {
    let dir = crate::paths::cache_dir();
    let path = dir.join(format!("{name}-{}.py", env!("CARGO_PKG_VERSION")));
    if std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
        std::fs::create_dir_all(&dir)
            .and_then(|_| std::fs::write(&path, text))
            .map_err(|e| format!("cannot write the {name} to {}: {e}", path.display()))?;
    }
    Ok(path)
}
