//! Application state and commands, independent of egui: what is open, what is selected, what
//! is loading. Slow work runs in [`jobs`] on other threads and comes back as messages, so the
//! UI thread never waits on disk or parsing.

pub mod accuracy;
pub mod autotune;
pub mod bisect;
pub mod compare;
pub mod compiles;
pub mod export;
pub mod jobs;
pub mod live;
pub mod loading;
pub mod logs;
pub mod modules;
pub mod msprobe_links;
pub mod nav;
pub mod part;
pub mod phase;
pub mod phase_jobs;
pub mod problems;
pub mod ranks;
pub mod remote_run;
pub mod run;
pub mod stages;
pub mod state;
pub mod tensors;
pub mod text_diff;
pub mod timeline;
pub mod trace_graphs;
pub mod workspace;

pub use loading::Loading;
pub use nav::{Nav, TabId};
pub use phase::PhaseState;
pub use state::App;
pub use workspace::Workspace;

use std::path::Path;

/// True when `path` is a file or folder fxray can open: on disk, an archive, or inside one.
pub fn exists(path: &Path) -> bool {
    crate::sources::vfs::exists(path)
}

pub use crate::pipeline::sample::sample_path;

/// A path as a person reads it (`ssh://host/path` for a remote one).
pub use crate::sources::remote::{LinkStatus, display as display_path};

/// The link a remote path is read through (its owner's), for the status bar; `None` for a
/// local path or before the link is first made. Never waits on the network.
pub fn remote_link(path: &Path) -> Option<LinkStatus> {
    crate::sources::remote::status_of(&crate::sources::remote::host_of(path)?)
}
