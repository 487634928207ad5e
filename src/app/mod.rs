//! Application state and commands, independent of egui: what is open, what is selected, what
//! is loading. Slow work runs in [`jobs`] on other threads and comes back as messages, so the
//! UI thread never waits on disk or parsing.

pub mod autotune;
pub mod compiles;
pub mod jobs;
pub mod live;
pub mod phase;
pub mod run;
pub mod state;
pub mod tensors;
pub mod timeline;
pub mod trace_graphs;

pub use state::{App, Workspace};

use std::path::PathBuf;

/// The sample run (a copy of the showcase fixture), built into the binary so a newcomer sees a
/// real run with no files at hand.
static SAMPLE: include_dir::Dir<'static> =
    include_dir::include_dir!("$CARGO_MANIFEST_DIR/assets/sample");

/// Where the sample run is, shown when no path is given: the source tree's copy when fxray
/// runs from its checkout, else the embedded copy unpacked once into fxray's cache folder
/// (never into a folder the user views).
pub fn sample_path() -> PathBuf {
    let in_tree = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/sample"));
    if in_tree.is_dir() {
        return in_tree;
    }
    let dir = cache_dir().join(format!("sample-{}", env!("CARGO_PKG_VERSION")));
    if !dir.join("expected.json").is_file() {
        // A failed unpack leaves a path that does not exist: opening it says so.
        let _ = std::fs::create_dir_all(&dir).and_then(|_| SAMPLE.extract(&dir));
    }
    dir
}

/// fxray's own cache folder (`$XDG_CACHE_HOME/fxray`, else `~/.cache/fxray`).
pub fn cache_dir() -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("fxray")
}
