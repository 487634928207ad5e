//! The watcher service: follows an opened folder while a compile writes into it and reports
//! each change with the index rebuilt from memory.
//!
//! The OS watcher (inotify, through `notify` with a debouncer) is used when it can be; on a
//! network file system, when it fails (inotify limits) or when `FXRAY_WATCH=poll`, the same
//! debouncer runs over `notify`'s polling watcher instead and every update says so.
//! The service only reads: it never writes into the folder it watches.

mod remote;
pub mod tracker;

pub use tracker::{Change, ChangeKind};

use crate::model::index::DebugIndex;
use crate::sources::discover::{self, FileSet};
use notify::{EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, new_debouncer, new_debouncer_opt};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};
use tracker::{Seen, Tracker};

#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// How long the debouncer gathers events before handing them over.
    pub debounce: Duration,
    /// How long a file must hold still (size and time) to count as written.
    pub quiet: Duration,
    /// Polling period when the OS watcher cannot be used.
    pub poll_interval: Duration,
    /// Poll instead of using the OS watcher, for this reason.
    pub force_poll: Option<String>,
}

impl Default for WatchConfig {
    fn default() -> Self {
        WatchConfig {
            debounce: Duration::from_millis(100),
            quiet: Duration::from_millis(400),
            poll_interval: Duration::from_millis(500),
            force_poll: std::env::var("FXRAY_WATCH")
                .ok()
                .filter(|v| v == "poll")
                .map(|_| "FXRAY_WATCH=poll".to_string()),
        }
    }
}

/// How the folder is being watched.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// The OS notifies (inotify on Linux).
    Native,
    /// Polling every `interval`, because of `reason`.
    Polling { interval: Duration, reason: String },
    /// Watched on the server `host` by its agent, which watches as it says in `how`.
    Remote { host: String, how: String },
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backend::Native => write!(f, "watching"),
            Backend::Polling { interval, reason } => write!(
                f,
                "watching by polling every {:.1} s ({reason})",
                interval.as_secs_f32()
            ),
            Backend::Remote { host, how } => write!(f, "{how} on {host}"),
        }
    }
}

/// One batch of changes and the index as it is after them.
#[derive(Debug)]
pub struct Update {
    pub index: DebugIndex,
    pub changes: Vec<Change>,
    /// Files still being written.
    pub writing: Vec<PathBuf>,
}

#[derive(Debug)]
pub enum WatchEvent {
    /// Watching has begun (or switched to polling).
    Started(Backend),
    Update(Box<Update>),
    /// Watching stopped for good; the index shown is the last one.
    Failed(String),
}

/// A running watcher; dropping it stops the watching thread.
pub struct Watcher {
    stop: Arc<AtomicBool>,
    pub root: PathBuf,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Watcher {
    /// Watches `set.root`, starting from the files in `set` (the index the caller shows).
    /// Files written between that scan and the start of watching are found by a second scan.
    pub fn start(
        set: FileSet,
        config: WatchConfig,
        sink: impl Fn(WatchEvent) + Send + 'static,
    ) -> Watcher {
        let stop = Arc::new(AtomicBool::new(false));
        let root = set.abs_root.clone();
        let flag = stop.clone();
        std::thread::Builder::new()
            .name("fxray-watch".into())
            .spawn(move || {
                if crate::sources::remote::is_remote(&set.abs_root) {
                    remote::run(set, &flag, &sink)
                } else {
                    run(set, config, &flag, &sink)
                }
            })
            .expect("spawning a thread");
        Watcher { stop, root }
    }
}

/// Raw events from either kind of notify watcher.
type Raw = DebounceEventResult;

/// Either kind of debouncer: kept alive (watching stops when it drops), never called.
type Debouncer = Box<dyn std::any::Any>;

/// Why a kind of watcher could not start (the OS's events: then fxray polls).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoWatch {
    /// Asked for (`FXRAY_WATCH=poll`, a setting).
    #[error("{0}")]
    Asked(String),
    #[error("{0} file system: OS events may miss remote writes")]
    NetworkFs(String),
    #[error("the OS limit on watched folders is reached (raise fs.inotify.max_user_watches)")]
    TooManyWatches,
    #[error("the folder no longer exists")]
    Gone,
    #[error("{0}")]
    Other(String),
}

impl From<notify::Error> for NoWatch {
    fn from(e: notify::Error) -> Self {
        match &e.kind {
            notify::ErrorKind::MaxFilesWatch => NoWatch::TooManyWatches,
            notify::ErrorKind::PathNotFound => NoWatch::Gone,
            _ => NoWatch::Other(e.to_string()),
        }
    }
}

fn start_native(
    root: &Path,
    mode: RecursiveMode,
    config: &WatchConfig,
    tx: std::sync::mpsc::Sender<Raw>,
) -> Result<Debouncer, NoWatch> {
    if let Some(reason) = &config.force_poll {
        return Err(NoWatch::Asked(reason.clone()));
    }
    if let Some(fs) = crate::platform::network_fs(root) {
        return Err(NoWatch::NetworkFs(fs.to_string()));
    }
    let mut d = new_debouncer(config.debounce, None, tx)?;
    d.watch(root, mode)?;
    Ok(Box::new(d))
}

fn start_poll(
    root: &Path,
    mode: RecursiveMode,
    config: &WatchConfig,
    tx: std::sync::mpsc::Sender<Raw>,
) -> Result<Debouncer, NoWatch> {
    let cfg = notify::Config::default().with_poll_interval(config.poll_interval);
    let mut d = new_debouncer_opt::<_, notify::PollWatcher, _>(
        config.debounce,
        None,
        tx,
        notify_debouncer_full::NoCache,
        cfg,
    )?;
    d.watch(root, mode)?;
    Ok(Box::new(d))
}

fn run(set: FileSet, config: WatchConfig, stop: &AtomicBool, sink: &dyn Fn(WatchEvent)) {
    let root = set.abs_root.clone();
    let mode = if root.is_dir() {
        RecursiveMode::Recursive
    } else {
        RecursiveMode::NonRecursive
    };
    let (tx, rx) = channel::<Raw>();
    let (_debouncer, backend) = match start_native(&root, mode, &config, tx.clone()) {
        Ok(d) => (d, Backend::Native),
        Err(reason) => match start_poll(&root, mode, &config, tx) {
            Ok(d) => (
                d,
                Backend::Polling {
                    interval: config.poll_interval,
                    reason: reason.to_string(),
                },
            ),
            Err(e) => {
                sink(WatchEvent::Failed(format!(
                    "cannot watch {}: {e}",
                    root.display()
                )));
                return;
            }
        },
    };
    sink(WatchEvent::Started(backend));
    let mut state = State {
        tracker: Tracker::new(set, config.quiet),
        graph_names: HashMap::new(),
    };
    // What changed between the caller's scan and the watch taking hold.
    let mut pending = state.rescan(&root);
    let tick = Duration::from_millis(50);
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        let wait = state
            .tracker
            .next_due()
            .map_or(tick, |due| due.saturating_duration_since(now).min(tick));
        match rx.recv_timeout(wait) {
            Ok(Ok(events)) => {
                for ev in events {
                    pending.extend(state.event(&ev.event));
                }
                // Take everything already queued before rebuilding the index once.
                while let Ok(more) = rx.try_recv() {
                    if let Ok(events) = more {
                        for ev in events {
                            pending.extend(state.event(&ev.event));
                        }
                    }
                }
            }
            Ok(Err(errors)) => {
                // Events may have been lost (queue overflow, …): look again.
                if !errors.is_empty() {
                    pending.extend(state.rescan(&root));
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        pending.extend(state.tracker.tick(Instant::now(), tracker::stat));
        if !pending.is_empty() && !stop.load(Ordering::Relaxed) {
            let changes = std::mem::take(&mut pending);
            sink(WatchEvent::Update(Box::new(Update {
                index: state.index(&changes),
                writing: state.tracker.writing(),
                changes,
            })));
        }
    }
}

struct State {
    tracker: Tracker,
    /// `graph_K` of each `output_code.py`, read once per version of the file.
    graph_names: HashMap<PathBuf, Option<String>>,
}

impl State {
    fn event(&mut self, ev: &notify::Event) -> Vec<Change> {
        use notify::event::{AccessKind, AccessMode};
        let now = Instant::now();
        let mut out = Vec::new();
        for path in &ev.paths {
            match ev.kind {
                EventKind::Access(AccessKind::Close(AccessMode::Write)) => {
                    out.extend(self.tracker.closed(path, tracker::stat(path)));
                }
                EventKind::Access(_) => {}
                _ => out.extend(self.tracker.observe(
                    path,
                    tracker::stat(path),
                    now,
                    tracker::files_under,
                )),
            }
        }
        out
    }

    /// Walks the tree once more and reports what differs from what is known.
    fn rescan(&mut self, root: &Path) -> Vec<Change> {
        let Ok(now_set) = discover::scan(root) else {
            return Vec::new();
        };
        let now = Instant::now();
        let mut out = Vec::new();
        let gone: Vec<PathBuf> = self
            .tracker
            .set
            .files
            .keys()
            .filter(|p| !now_set.files.contains_key(*p))
            .cloned()
            .collect();
        for p in gone {
            out.extend(self.tracker.observe(&p, Seen::Missing, now, |_| Vec::new()));
        }
        for (p, info) in &now_set.files {
            if self.tracker.set.files.get(p).map(|f| f.size) != Some(info.size) {
                out.extend(
                    self.tracker
                        .observe(p, tracker::stat(p), now, |_| Vec::new()),
                );
            }
        }
        out
    }

    fn index(&mut self, changes: &[Change]) -> DebugIndex {
        index_of(&self.tracker.set, &mut self.graph_names, changes)
    }
}

/// The index of `set` after `changes`; `graph_K` of each `output_code.py` is read once per
/// version of the file (`names` keeps them between updates).
fn index_of(
    set: &FileSet,
    names: &mut HashMap<PathBuf, Option<String>>,
    changes: &[Change],
) -> DebugIndex {
    for c in changes {
        names.remove(&c.path);
    }
    let mut index = set.index();
    discover::join_captures(&mut index, |p| {
        names
            .entry(p.to_path_buf())
            .or_insert_with(|| crate::sources::load::graph_name(p))
            .clone()
    });
    index
}
