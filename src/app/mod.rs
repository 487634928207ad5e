//! Application state and commands, independent of egui: what is open, what is selected, what
//! is loading. Slow work runs in [`jobs`] on other threads and comes back as messages, so the
//! UI thread never waits on disk or parsing.

pub mod autotune;
pub mod compare;
pub mod compiles;
pub mod export;
pub mod fold;
pub mod jobs;
pub mod live;
pub mod loading;
pub mod logs;
pub mod msprobe_links;
pub mod phase;
pub mod ranks;
pub mod run;
pub mod state;
pub mod tensors;
pub mod text_diff;
pub mod timeline;
pub mod trace_graphs;

pub use loading::Loading;
pub use state::{App, Workspace};

use std::path::{Path, PathBuf};

/// True when `path` is a file or folder fxray can open: on disk, an archive, or inside one.
pub fn exists(path: &Path) -> bool {
    crate::sources::vfs::exists(path)
}

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
    let dir = crate::paths::cache_dir().join(format!("sample-{}", env!("CARGO_PKG_VERSION")));
    if !dir.join("expected.json").is_file() {
        // A failed unpack leaves a path that does not exist: opening it says so.
        let _ = std::fs::create_dir_all(&dir).and_then(|_| SAMPLE.extract(&dir));
    }
    dir
}
