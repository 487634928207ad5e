//! Live watching: the watcher service's updates applied to the open workspace and phase, the
//! follow mode, and which files are still being written.

use super::App;
use super::phase::{self, PassRef};
use super::phase_jobs::PhaseMsg;
use super::workspace::WorkspaceMsg;
use crate::analysis::phase_layout;
use crate::model::fx::FxFile;
use crate::sources::discover::FileSet;
use crate::sources::load;
/// How the folder is watched, as the status bar names it: `ui` reaches the watcher only
/// through `app`.
pub use crate::sources::watch::Backend as WatchBackend;
use crate::sources::watch::{ChangeKind, Update, WatchConfig, WatchEvent, Watcher};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a file that stopped changing but does not parse cleanly is still given the benefit
/// of the doubt (a writer pausing mid-file) before it is shown as broken.
pub const GRACE: Duration = Duration::from_secs(3);

/// What the watcher has told the app.
pub struct Live {
    /// Watch opened folders (the app does; a test may not want to).
    pub enabled: bool,
    pub config: WatchConfig,
    /// How the folder is watched, once the watcher has started.
    pub backend: Option<WatchBackend>,
    /// The open tree is an archive, read once: nothing to watch.
    pub archive: bool,
    /// Why watching stopped, if it did.
    pub failed: Option<String>,
    /// Jump to each new pass as it lands.
    pub follow: bool,
    /// Passes landed since the user last looked (follow off).
    pub unseen: usize,
    /// The newest pass landed.
    pub newest: Option<PathBuf>,
    /// Files still being written.
    pub writing: HashSet<PathBuf>,
    /// When each file last changed, as seen by the watcher.
    pub changed_at: HashMap<PathBuf, Instant>,
    /// Changes applied so far (for the status bar and tests).
    pub changes: usize,
    /// Passes that stopped changing, waiting for their parse to say they are whole (or for
    /// the grace time to pass) before they join the phase.
    landing: Vec<PathBuf>,
    watcher: Option<Watcher>,
    /// Numbers the watchers started, so an old folder's late reports are dropped.
    serial: u64,
}

impl Default for Live {
    fn default() -> Self {
        Live {
            enabled: true,
            config: WatchConfig::default(),
            backend: None,
            archive: false,
            failed: None,
            follow: true,
            unseen: 0,
            newest: None,
            writing: HashSet::new(),
            changed_at: HashMap::new(),
            changes: 0,
            landing: Vec::new(),
            watcher: None,
            serial: 0,
        }
    }
}

/// What the UI should say about one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileStatus {
    /// Being written: not judged yet.
    Writing,
    /// Parsed (or not needed).
    Ready,
    /// Not parsed yet.
    Pending,
}

/// One report of the watcher numbered `serial` (started, failed, files changed).
pub struct WatchMsg {
    serial: u64,
    event: WatchEvent,
}

impl super::jobs::Apply<App> for WatchMsg {
    fn is_current(&self, app: &App) -> bool {
        app.live.watcher.is_some() && app.live.serial == self.serial
    }

    fn apply(self, app: &mut App) {
        match self.event {
            WatchEvent::Started(b) => app.live.backend = Some(b),
            WatchEvent::Failed(e) => {
                app.live.backend = None;
                app.live.failed = Some(e);
            }
            WatchEvent::Update(u) => app.watched(u),
        }
    }
}

impl App {
    /// Starts watching the folder just opened, from the files its index was built from.
    pub(super) fn start_watch(&mut self, set: FileSet) {
        let live = &mut self.live;
        live.watcher = None;
        live.backend = None;
        live.failed = None;
        live.unseen = 0;
        live.newest = None;
        live.writing.clear();
        live.changed_at.clear();
        live.landing.clear();
        // Called on each successful open: archives of trees opened before are let go.
        crate::sources::vfs::release_others(&set.abs_root);
        live.archive = crate::sources::vfs::is_archived(&set.abs_root);
        if !live.enabled || live.archive {
            return;
        }
        live.serial += 1;
        let serial = live.serial;
        let out = self.jobs.outbox();
        live.watcher = Some(Watcher::start(set, live.config.clone(), move |event| {
            out.send(WatchMsg { serial, event })
        }));
    }

    fn watched(&mut self, u: Box<Update>) {
        let Some(ws) = &mut self.workspace else {
            return;
        };
        let now = Instant::now();
        let live = &mut self.live;
        live.changes += u.changes.len();
        live.writing = u.writing.into_iter().collect();
        let mut reparse = Vec::new();
        for c in &u.changes {
            live.changed_at.insert(c.path.clone(), now);
            match c.kind {
                ChangeKind::Removed => {
                    ws.facts.remove(&c.path);
                    ws.facts_rev += 1;
                    live.changed_at.remove(&c.path);
                    live.landing.retain(|p| p != &c.path);
                }
                ChangeKind::Added => {
                    ws.facts.remove(&c.path);
                    ws.facts_rev += 1;
                }
                ChangeKind::Modified => {
                    ws.facts.remove(&c.path);
                    ws.facts_rev += 1;
                }
                ChangeKind::Settled => {
                    if u.index.graph_files().any(|p| p == c.path) {
                        reparse.push(c.path.clone());
                        if u.index.role_of(&c.path) == "pass" {
                            live.landing.retain(|p| p != &c.path);
                            live.landing.push(c.path.clone());
                        }
                    }
                }
            }
        }
        let mut index = u.index;
        index.keep_backward_of(&ws.index);
        ws.index = index;
        self.parse_facts(reparse);
        // Removed files and new runs show at once; landing passes join when judged whole.
        self.sync_phase(&[]);
    }

    /// Lets the passes whose parse came back clean (or whose grace time is over) join their
    /// phase, and follows the newest.
    pub(super) fn land_passes(&mut self) {
        let Some(ws) = &self.workspace else { return };
        let live = &mut self.live;
        let mut landed = Vec::new();
        live.landing.retain(|path| {
            let ok = match ws.facts.get(path) {
                None => false,
                Some(f) if f.status() == "ok" => true,
                Some(_) => live
                    .changed_at
                    .get(path)
                    .is_none_or(|t| t.elapsed() >= GRACE),
            };
            if ok {
                landed.push(path.clone());
            }
            !ok
        });
        if landed.is_empty() {
            return;
        }
        // A pass the phase already shows was written again: it is loaded afresh.
        let (rewritten, new): (Vec<PathBuf>, Vec<PathBuf>) = landed.into_iter().partition(|p| {
            self.phase
                .as_ref()
                .is_some_and(|ph| ph.pass_of(p).is_some())
        });
        self.sync_phase(&rewritten);
        if let Some(newest) = new.last() {
            self.live.newest = Some(newest.clone());
            if self.live.follow {
                self.select_graph(newest);
            } else {
                self.live.unseen += new.len();
            }
        }
    }

    /// Parses graph files again for their facts (they were rewritten).
    fn parse_facts(&self, paths: Vec<PathBuf>) {
        if paths.is_empty() {
            return;
        }
        let generation = self.generation;
        self.jobs.spawn(move |out| {
            crate::pipeline::facts::of_files(&paths, |path, facts| {
                out.send(WorkspaceMsg::Facts {
                    generation,
                    path,
                    facts,
                })
            });
        });
    }

    /// Brings the open phase in line with the index: passes that landed are appended (and laid
    /// out by extending the layout), a phase that changed otherwise is opened afresh, a phase
    /// that disappeared is closed.
    fn sync_phase(&mut self, rewritten: &[PathBuf]) {
        let (Some(ws), Some(ph)) = (&self.workspace, &self.phase) else {
            return;
        };
        let Some(fresh) = phase::phase_for_key(&ws.index, &ph.key) else {
            self.notice = Some(format!("{} was removed", ph.title));
            self.phase = None;
            return;
        };
        // Passes still being written join when they are complete.
        let complete: Vec<PassRef> = fresh
            .into_iter()
            .filter(|p| {
                !self.live.writing.contains(&p.path) && !self.live.landing.contains(&p.path)
            })
            .collect();
        let same_prefix = ph.passes.len() <= complete.len()
            && ph
                .passes
                .iter()
                .zip(&complete)
                .all(|(a, b)| a.path == b.path);
        let rewritten = ph.passes.iter().any(|p| rewritten.contains(&p.path));
        if !same_prefix || rewritten {
            self.reopen_phase();
            return;
        }
        let new: Vec<PassRef> = complete[ph.passes.len()..].to_vec();
        if new.is_empty() {
            return;
        }
        let Some(ph) = &mut self.phase else { return };
        let first = ph.passes.len();
        for p in &new {
            ph.passes.push(p.clone());
            ph.files.push(None);
            ph.load_errors.push(None);
            ph.diffs.push(None);
        }
        let key = ph.key.clone();
        let jobs: Vec<(usize, PathBuf)> = new
            .iter()
            .enumerate()
            .map(|(i, p)| (first + i, p.path.clone()))
            .collect();
        self.jobs.spawn(move |out| {
            for (pass, path) in jobs {
                let result = load::graph(&path).map(Arc::new).map_err(|e| e.to_string());
                out.send(PhaseMsg::PassLoaded {
                    key: key.clone(),
                    pass,
                    result,
                });
            }
        });
    }

    /// Opens the phase on screen again from the index, keeping the pass and node in view.
    fn reopen_phase(&mut self) {
        let Some(ph) = self.phase.take() else { return };
        self.layouts.remove(&ph.key);
        let selected = ph.selected.clone();
        let target = ph
            .current_path()
            .map(Path::to_path_buf)
            .filter(|p| {
                self.workspace
                    .as_ref()
                    .is_some_and(|w| w.index.graph_files().any(|g| g == p))
            })
            .or_else(|| {
                let ws = self.workspace.as_ref()?;
                phase::phase_for_key(&ws.index, &ph.key)?
                    .first()
                    .map(|p| p.path.clone())
            });
        drop(ph);
        if let Some(t) = target {
            self.select_graph(&t);
            self.select_node(selected);
        }
    }

    /// Work the phase needs after passes were appended: their diffs with the pass before,
    /// and the layout extended to cover them. Called after each message for the phase.
    pub(super) fn extend_phase(&mut self) {
        let Some(ph) = &mut self.phase else { return };
        let key = ph.key.clone();
        for k in ph.appended_from.max(1)..ph.passes.len() {
            if ph.diffs[k].is_some() || ph.diff_pending.contains(&k) {
                continue;
            }
            if let (Some(a), Some(b)) = (ph.files[k - 1].clone(), ph.files[k].clone()) {
                ph.diff_pending.insert(k);
                let key = key.clone();
                self.jobs.spawn(move |out| {
                    let diff = Arc::new(crate::analysis::diff::diff(&a, &b));
                    out.send(PhaseMsg::PassDiff { key, pass: k, diff });
                });
            }
        }
        let Some(layout) = ph.layout.clone().filter(|_| ph.preview_of.is_none()) else {
            return;
        };
        let covered = ph.layout_passes.unwrap_or(ph.passes.len());
        if ph.extending || covered >= ph.passes.len() {
            return;
        }
        // Wait for every new pass; one that failed to load is left out of the layout.
        if (covered..ph.passes.len()).any(|i| ph.files[i].is_none() && ph.load_errors[i].is_none())
        {
            return;
        }
        let more: Vec<Arc<FxFile>> = ph.files[covered..].iter().flatten().cloned().collect();
        let total = ph.passes.len();
        ph.extending = true;
        let cancel = ph.cancel.clone();
        self.jobs.spawn(move |out| {
            let refs: Vec<&FxFile> = more.iter().map(|f| f.as_ref()).collect();
            if let Ok(l) = phase_layout::extend(&layout, &refs, &cancel) {
                out.send(PhaseMsg::LayoutExtended {
                    key,
                    passes: total,
                    layout: Arc::new(l),
                });
            }
        });
    }

    /// Turns follow mode on or off; turning it on jumps to the newest pass.
    pub fn set_follow(&mut self, on: bool) {
        self.live.follow = on;
        if on {
            self.show_newest();
        }
    }

    /// Shows the newest pass that landed and clears the "N new" badge.
    pub fn show_newest(&mut self) {
        self.live.unseen = 0;
        if let Some(p) = self.live.newest.clone() {
            self.select_graph(&p);
        }
    }

    /// How to show `path`: being written (not judged), or as its facts say.
    pub fn file_status(&self, path: &Path) -> FileStatus {
        let live = &self.live;
        if live.writing.contains(path) {
            return FileStatus::Writing;
        }
        let facts = self.workspace.as_ref().and_then(|w| w.facts.get(path));
        let recent = live
            .changed_at
            .get(path)
            .is_some_and(|t| t.elapsed() < GRACE);
        match facts {
            Some(f) if recent && f.status() != "ok" => FileStatus::Writing,
            Some(_) => FileStatus::Ready,
            None if recent => FileStatus::Writing,
            None => FileStatus::Pending,
        }
    }

    /// Something changed recently enough that the UI should look again soon (grace periods).
    pub fn live_settling(&self) -> bool {
        !self.live.writing.is_empty() || self.live.changed_at.values().any(|t| t.elapsed() < GRACE)
    }
}
