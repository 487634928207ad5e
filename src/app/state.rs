//! The app's state and the commands that change it.

use super::jobs::{Jobs, Waker};
use super::phase::{self, PhaseState};
use super::workspace::{Workspace, WorkspaceMsg};
use crate::analysis::phase_layout::PhaseLayout;
use crate::model::index::DebugIndex;
use crate::model::progress::Progress;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Default)]
pub struct App {
    pub workspace: Option<Workspace>,
    /// The path being opened, while its index is built.
    pub opening: Option<PathBuf>,
    /// How far that open is; the next open calls it off through it.
    open_progress: Arc<Progress>,
    /// The golden run to compare that open with once it is indexed (`fxray RUN --golden G`).
    pub(super) golden_after_open: Option<PathBuf>,
    /// The last error worth showing, in one line.
    pub error: Option<String>,
    /// Recently opened paths, newest first.
    pub recent: Vec<PathBuf>,
    /// The phase (or single graph) on screen.
    pub phase: Option<PhaseState>,
    /// The last finished action worth telling the user about ("exported to …").
    pub notice: Option<String>,
    pub tensors: super::tensors::TensorsState,
    /// Layouts already computed, by phase key (layout, passes it covers): coming back to a
    /// phase is instant.
    pub(super) layouts: HashMap<PathBuf, (Arc<PhaseLayout>, usize)>,
    pub live: super::live::Live,
    /// A graph to compare the pass on screen with once that pass is loaded (`Nav::Compare`):
    /// (the pass, the graph it is compared with).
    pub(super) compare_after_load: Option<(PathBuf, PathBuf)>,
    /// Requests between views (show a tab, reveal a node, …).
    pub nav: super::nav::NavQueue,
    /// The state of each feature that owns its own (`part`).
    pub(super) parts: super::part::Parts,
    pub(super) jobs: Jobs<App>,
    pub(super) generation: u64,
}

const MAX_RECENT: usize = 10;

/// Checks run once per frame after the results are applied: each turns a change of state into
/// work (a pass whose grace time ran out lands, a key that changed asks for new links). Results
/// never come this way: they come through the jobs channel ([`Apply`]).
const WANTS: &[fn(&mut App)] = &[
    App::land_passes,
    App::poll_compare_after_load,
    App::want_msprobe_links,
    App::want_compiles,
    App::want_facts,
    super::accuracy::want_stages,
    super::accuracy::want_golden_after_open,
    super::problems::want,
    super::run::want,
];

impl App {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set_waker(&mut self, waker: Waker) {
        crate::sources::remote::set_waker(waker.clone());
        self.jobs.set_waker(waker);
    }

    /// Opens `text` typed as `ssh://[user@]host[:port]/path` (File ▸ Open remote…); a malformed
    /// address is the error shown, and nothing is opened.
    pub fn open_remote(&mut self, text: &str) -> Result<(), String> {
        match crate::sources::remote::target::parse(text.trim()) {
            Some(Ok((host, path))) => {
                self.open(&crate::sources::remote::target::mount_path(&host, &path));
                Ok(())
            }
            Some(Err(e)) => Err(e.to_string()),
            None => Err(crate::sources::remote::BadAddress(text.trim().to_string()).to_string()),
        }
    }

    /// Makes the open tree's link to its server again, in the background; the view stays as
    /// it is, and what reads next reads through the new link.
    pub fn reconnect(&mut self) {
        let Some(host) = self
            .workspace
            .as_ref()
            .and_then(|ws| crate::sources::remote::host_of(&ws.index.root))
        else {
            return;
        };
        self.jobs.spawn(move |_| {
            let _ = crate::sources::remote::link(&host);
        });
    }

    /// True while background work is pending.
    pub fn busy(&self) -> bool {
        self.jobs.running() > 0 || self.opening.is_some()
    }

    /// How far the open under way is, once it can say more than "indexing": the archive being
    /// read (`reading run.tar.gz 45 MiB of 190 MiB`).
    pub fn opening_progress(&self) -> Option<&Arc<Progress>> {
        self.opening.as_ref()?;
        Some(&self.open_progress).filter(|p| !p.line().is_empty())
    }

    /// Starts opening `path` in the background; the current workspace stays until it is ready.
    pub fn open(&mut self, path: &Path) {
        self.generation += 1;
        let generation = self.generation;
        self.opening = Some(path.to_path_buf());
        self.golden_after_open = None;
        self.error = None;
        // An archive still being read for an earlier open is not waited for.
        self.open_progress.cancel();
        self.open_progress = Arc::default();
        let progress = self.open_progress.clone();
        let path = path.to_path_buf();
        self.jobs.spawn(move |out| {
            let scanned = crate::sources::archive::reading_with(progress.clone(), || {
                crate::sources::discover::scan(&path)
            });
            // The archive is read: the status bar goes back to saying what opening does (a
            // called-off open is not shown, and keeps how far it got).
            if !progress.cancelled() {
                progress.stage("", 0, crate::model::progress::Unit::Items);
            }
            let (result, set) = match scanned {
                Ok(set) => {
                    let mut index = set.index();
                    crate::pipeline::tree::read_contents(&mut index);
                    (Ok(index), Some(Box::new(set)))
                }
                Err(e) => (Err(e), None),
            };
            out.send(WorkspaceMsg::Indexed {
                generation,
                result,
                set,
            });
        });
    }

    /// Opens `path` and, once it is open, compares it with `golden` (as attaching it from the
    /// menu does). Opening something else first drops the golden with the open.
    pub fn open_with_golden(&mut self, path: &Path, golden: Option<&Path>) {
        self.open(path);
        self.golden_after_open = golden.map(Path::to_path_buf);
    }

    /// Parses every graph file for its facts (the tree's counts), once the phase on screen has
    /// everything it needs; the files the phase job parsed already sent theirs.
    fn want_facts(&mut self) {
        let Some(ws) = &mut self.workspace else {
            return;
        };
        let settled = self.phase.as_ref().is_none_or(|p| {
            p.complete()
                || p.layout_error.is_some()
                || (p.all_loaded() && p.load_errors.iter().any(Option::is_some))
        });
        if ws.facts_started || !settled {
            return;
        }
        ws.facts_started = true;
        let files: Vec<PathBuf> = ws
            .index
            .graph_files()
            .filter(|p| !ws.facts.contains_key(*p))
            .map(Path::to_path_buf)
            .collect();
        let generation = self.generation;
        self.jobs.spawn(move |out| {
            crate::pipeline::facts::of_files(&files, |path, facts| {
                out.send(WorkspaceMsg::Facts {
                    generation,
                    path,
                    facts,
                })
            });
            out.send(WorkspaceMsg::FactsDone { generation });
        });
    }

    /// Shows the graph file `path`: switches pass if it is in the open phase, else opens its
    /// phase (all its passes load and lay out in the background).
    pub fn select_graph(&mut self, path: &Path) {
        if let Some(ph) = &mut self.phase
            && let Some(i) = ph.pass_of(path)
        {
            ph.current = i;
            return;
        }
        let Some(ws) = &self.workspace else { return };
        let Some(mut st) = phase::phase_for(&ws.index, path) else {
            return;
        };
        if let Some((l, n)) = self.layouts.get(&st.key) {
            st.layout = Some(l.clone());
            st.layout_passes = Some(*n);
        }
        self.start_phase_jobs(&st);
        self.phase = Some(st);
        self.nav.phase_changed();
    }

    /// Follows the tabs' requests to show a graph and a node ([`Nav::Go`](super::Nav::Go)), only
    /// to select it ([`Nav::Select`](super::Nav::Select)), or to show it compared with another
    /// ([`Nav::Compare`](super::Nav::Compare)); first, to open another tree
    /// ([`Nav::Open`](super::Nav::Open)), as what follows may be in it.
    pub fn follow_go(&mut self) {
        while let Some(tree) = self.nav.take(|r| match r {
            super::Nav::Open(tree) => Some(tree.clone()),
            _ => None,
        }) {
            self.open(&tree);
        }
        while let Some((graph, node, show, traced, with)) = self.nav.take(|r| match r {
            super::Nav::Go { graph, node } => {
                Some((graph.clone(), node.clone(), true, false, None))
            }
            super::Nav::GoTraced { graph, node } => {
                Some((graph.clone(), Some(node.clone()), true, true, None))
            }
            super::Nav::Select { graph, node } => {
                Some((graph.clone(), Some(node.clone()), false, false, None))
            }
            super::Nav::Compare { graph, with } => {
                Some((graph.clone(), None, true, false, Some(with.clone())))
            }
            _ => None,
        }) {
            if let Some(with) = with {
                self.compare_after_load = Some((graph.clone(), with));
                self.nav.push(super::Nav::SideBySide);
            }
            let node = match node {
                Some(n) if traced => Some(self.traced_name(&graph, n)),
                n => n,
            };
            self.go(&graph, node);
            if show {
                self.nav.push(super::Nav::ShowTab(crate::app::TabId::GRAPH));
            }
        }
    }

    /// What graph file `graph` calls the node named `node` somewhere in its phase, once the
    /// phase's diffs are at hand (`Nav::GoTraced`); `node` itself before.
    fn traced_name(&mut self, graph: &Path, node: String) -> String {
        self.select_graph(graph);
        self.phase
            .as_ref()
            .and_then(|ph| {
                let pass = ph.pass_of(graph)?;
                ph.history(&node)?.get(pass)?.name.clone()
            })
            .unwrap_or(node)
    }

    /// Shows graph file `graph` and, with `node`, selects it and brings it on screen.
    pub(super) fn go(&mut self, graph: &Path, node: Option<String>) {
        self.select_graph(graph);
        if let Some(n) = node {
            self.reveal_node(n);
        }
    }

    /// Moves to the pass `delta` steps away (`[` / `]`), keeping the selection.
    pub fn step_pass(&mut self, delta: isize) {
        if let Some(ph) = &mut self.phase {
            let last = ph.passes.len().saturating_sub(1) as isize;
            ph.current = (ph.current as isize + delta).clamp(0, last) as usize;
        }
    }

    pub fn select_node(&mut self, qualified: Option<String>) {
        if let Some(ph) = &mut self.phase {
            ph.selected = qualified;
        }
    }

    /// Selects a node and asks the view to bring it on screen (inspector links, search).
    pub fn reveal_node(&mut self, qualified: String) {
        if let Some(ph) = &mut self.phase {
            ph.selected = Some(qualified);
            self.nav.push(super::Nav::RevealSelected);
        }
    }

    /// Applies finished background work. Call once per frame.
    pub fn poll(&mut self) {
        while let Some(msg) = self.jobs.try_recv() {
            msg.dispatch(self);
        }
        for want in WANTS {
            want(self);
        }
    }

    /// Waits (headless, for tests and the CLI) until no background job is running.
    pub fn wait_idle(&mut self, timeout: std::time::Duration) -> bool {
        let start = std::time::Instant::now();
        loop {
            // Idle seen before the poll: every job had ended, so all it sent is in the channel
            // and this poll applies it (a job that ends between a poll and the check would
            // leave its last result unread).
            let idle = !self.busy();
            self.poll();
            if idle && !self.busy() {
                return true;
            }
            if start.elapsed() > timeout {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    pub(super) fn indexed(&mut self, result: crate::error::Result<DebugIndex>) {
        let opened = self.opening.take();
        match result {
            Ok(index) => {
                if let Some(p) = opened {
                    self.remember(p);
                }
                self.phase = None;
                self.layouts.clear();
                self.parts.forget_the_tree();
                let first = index.default_graph().map(Path::to_path_buf);
                self.workspace = Some(Workspace {
                    index,
                    facts: HashMap::new(),
                    facts_done: false,
                    facts_started: false,
                    facts_rev: 0,
                });
                self.load_dumps();
                // Show something at once: the first pass of the first phase.
                if let Some(p) = first {
                    self.select_graph(&p);
                }
            }
            Err(e) => {
                self.golden_after_open = None;
                self.error = Some(e.to_string());
            }
        }
    }

    fn remember(&mut self, path: PathBuf) {
        self.recent.retain(|p| p != &path);
        self.recent.insert(0, path);
        self.recent.truncate(MAX_RECENT);
    }
}
