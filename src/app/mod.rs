//! Application state and commands, independent of egui: what is open, what is selected, what
//! is loading. Slow work runs in [`jobs`] on other threads and comes back as messages, so the
//! UI thread never waits on disk or parsing.

pub mod jobs;
pub mod phase;
pub mod state;

pub use state::{App, Workspace};

use std::path::PathBuf;

/// The bundled sample run (a copy of the showcase fixture), shown when no path is given.
pub fn sample_path() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/assets/sample"))
}
