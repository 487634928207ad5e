//! The app's state and the commands that change it.

use super::jobs::{Jobs, Msg, Waker};
use super::phase::{self, PhaseState};
use crate::analysis::phase_layout::{self, PhaseLayout};
use crate::analysis::summary::GraphFacts;
use crate::model::fx::FxFile;
use crate::model::index::DebugIndex;
use crate::sources::{load, output_code, read};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An opened folder: its index and what is known so far of its graph files.
pub struct Workspace {
    pub index: DebugIndex,
    pub facts: HashMap<PathBuf, GraphFacts>,
    /// All graph files have been parsed once.
    pub facts_done: bool,
    /// Bumped whenever `facts` gains, loses or replaces an entry: caches built from the facts
    /// key on it (a re-parsed file leaves the count as it was).
    pub facts_rev: u64,
}

#[derive(Default)]
pub struct App {
    pub workspace: Option<Workspace>,
    /// The path being opened, while its index is built.
    pub opening: Option<PathBuf>,
    /// The last error worth showing, in one line.
    pub error: Option<String>,
    /// Recently opened paths, newest first.
    pub recent: Vec<PathBuf>,
    /// The phase (or single graph) on screen.
    pub phase: Option<PhaseState>,
    pub log: Option<super::logs::LogView>,
    pub text_diff: Option<super::text_diff::TextDiffView>,
    /// The last finished action worth telling the user about ("exported to …").
    pub notice: Option<String>,
    /// Layouts already computed, by phase key: coming back to a phase is instant.
    pub timeline: super::timeline::TimelineState,
    pub tensors: super::tensors::TensorsState,
    pub autotune: super::autotune::AutotuneState,
    /// (layout, passes it covers).
    pub(super) layouts: HashMap<PathBuf, (Arc<PhaseLayout>, usize)>,
    pub live: super::live::Live,
    pub run: super::run::RunState,
    pub ranks: super::ranks::RanksState,
    pub(super) jobs: Jobs,
    pub(super) generation: u64,
}

const MAX_RECENT: usize = 10;

impl App {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn set_waker(&mut self, waker: Waker) {
        self.jobs.set_waker(waker);
    }

    /// True while background work is pending.
    pub fn busy(&self) -> bool {
        self.jobs.running() > 0 || self.opening.is_some()
    }

    /// Starts opening `path` in the background; the current workspace stays until it is ready.
    pub fn open(&mut self, path: &Path) {
        self.generation += 1;
        let generation = self.generation;
        self.opening = Some(path.to_path_buf());
        self.error = None;
        let path = path.to_path_buf();
        self.jobs.spawn(move |send| {
            let (result, set) = match crate::sources::discover::scan(&path) {
                Ok(set) => {
                    let mut index = set.index();
                    load::join_captures(&mut index);
                    (Ok(index), Some(Box::new(set)))
                }
                Err(e) => (Err(e), None),
            };
            let files: Vec<PathBuf> = match &result {
                Ok(idx) => idx.graph_files().map(Path::to_path_buf).collect(),
                Err(_) => Vec::new(),
            };
            send(Msg::Indexed {
                generation,
                result,
                set,
            });
            // Prefetch: parse every graph for its facts, so the tree fills in its counts.
            files.par_iter().for_each(|p| {
                let facts = GraphFacts::of_result(load::graph(p).as_ref());
                send(Msg::Facts {
                    generation,
                    path: p.clone(),
                    facts,
                });
            });
            send(Msg::FactsDone { generation });
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
    }

    fn start_phase_jobs(&self, st: &PhaseState) {
        let key = st.key.clone();
        let paths: Vec<PathBuf> = st.passes.iter().map(|p| p.path.clone()).collect();
        let current = st.current;
        let need_layout = st.layout.is_none();
        let existing = st.layout.clone();
        let module_context = st.module_context.clone();
        let cancel = st.cancel.clone();
        let code_path = st.output_code_path.clone();
        self.jobs.spawn(move |send| {
            // The pass on screen first, so the inspector has something while the rest loads.
            let mut order: Vec<usize> = (0..paths.len()).collect();
            order.sort_by_key(|&i| i != current);
            let files: Vec<(usize, Option<Arc<FxFile>>)> = order
                .par_iter()
                .map(|&i| {
                    let result = load::graph(&paths[i])
                        .map(Arc::new)
                        .map_err(|e| e.to_string());
                    let file = result.as_ref().ok().cloned();
                    send(Msg::PassLoaded {
                        key: key.clone(),
                        pass: i,
                        result,
                    });
                    (i, file)
                })
                .collect();
            if let Some(p) = code_path {
                let result = read::read_text(&p)
                    .map(|t| Arc::new(output_code::OutputCodeIndex::new(&t.text)))
                    .map_err(|e| e.to_string());
                send(Msg::OutputCode {
                    key: key.clone(),
                    result,
                });
            }
            let mut files = files;
            files.sort_by_key(|(i, _)| *i);
            if files.iter().all(|(_, f)| f.is_some()) && files.len() > 1 {
                let all: Vec<&FxFile> = files.iter().filter_map(|(_, f)| f.as_deref()).collect();
                let diffs = crate::analysis::diff::consecutive_diffs(&all)
                    .into_iter()
                    .map(Arc::new)
                    .collect();
                send(Msg::PassDiffs {
                    key: key.clone(),
                    diffs,
                });
            }
            let loaded: Vec<&FxFile> = files.iter().filter_map(|(_, f)| f.as_deref()).collect();
            let layout = if need_layout {
                let layout = match phase_layout::build(&loaded, &cancel) {
                    Ok(l) => Arc::new(l),
                    Err(_cancelled) => return,
                };
                send(Msg::Layout {
                    key: key.clone(),
                    result: Ok(layout.clone()),
                });
                layout
            } else {
                match existing {
                    Some(l) => l,
                    None => return,
                }
            };
            // The module tree needs every pass (a node keeps its module from pass to pass).
            if loaded.len() == files.len() && !cancel.load(std::sync::atomic::Ordering::Relaxed) {
                let tree = super::fold::module_tree(&layout, &loaded, &module_context);
                send(Msg::Fold {
                    key,
                    layout,
                    tree: Arc::new(tree),
                });
            }
        });
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
            ph.reveal_selected = true;
        }
    }

    /// Applies finished background work. Call once per frame.
    pub fn poll(&mut self) {
        while let Some(msg) = self.jobs.try_recv() {
            self.apply(msg);
        }
        self.poll_watch();
        self.poll_run();
        self.poll_ranks();
        self.want_msprobe_links();
    }

    /// Waits (headless, for tests and the CLI) until no background job is running.
    pub fn wait_idle(&mut self, timeout: std::time::Duration) -> bool {
        let start = std::time::Instant::now();
        loop {
            self.poll();
            if !self.busy() {
                return true;
            }
            if start.elapsed() > timeout {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    fn apply(&mut self, msg: Msg) {
        match msg {
            Msg::Indexed { generation, .. }
            | Msg::Facts { generation, .. }
            | Msg::FactsDone { generation }
                if generation != self.generation => {}
            Msg::Indexed { result, set, .. } => {
                let ok = result.is_ok();
                self.indexed(result);
                if let (true, Some(set)) = (ok, set) {
                    self.start_watch(*set);
                }
            }
            Msg::Facts { path, facts, .. } => {
                if let Some(ws) = &mut self.workspace {
                    ws.facts.insert(path, facts);
                    ws.facts_rev += 1;
                }
            }
            Msg::FactsDone { .. } => {
                if let Some(ws) = &mut self.workspace {
                    ws.facts_done = true;
                }
            }
            Msg::PassLoaded { key, pass, result } => {
                if let Some(ph) = self.phase.as_mut().filter(|p| p.key == key)
                    && pass < ph.files.len()
                {
                    match result {
                        Ok(f) => ph.files[pass] = Some(f),
                        Err(e) => ph.load_errors[pass] = Some(e),
                    }
                }
                self.extend_phase();
            }
            Msg::Layout { key, result } => {
                if let Some(ph) = self.phase.as_mut().filter(|p| p.key == key) {
                    // The first layout covers the passes the phase had when it opened.
                    ph.layout_passes = Some(ph.appended_from);
                    match result {
                        Ok(l) => {
                            self.layouts
                                .insert(key.clone(), (l.clone(), ph.appended_from));
                            ph.layout = Some(l);
                        }
                        Err(e) => ph.layout_error = Some(e),
                    }
                }
                self.extend_phase();
            }
            Msg::Fold { key, layout, tree } => {
                if let Some(ph) = self.phase.as_mut().filter(|p| p.key == key) {
                    ph.fold = Some((layout, tree));
                }
            }
            Msg::LayoutExtended {
                key,
                passes,
                layout,
            } => {
                if let Some(ph) = self.phase.as_mut().filter(|p| p.key == key) {
                    self.layouts.insert(key, (layout.clone(), passes));
                    ph.layout = Some(layout);
                    ph.layout_passes = Some(passes);
                    ph.extending = false;
                }
                self.extend_phase();
            }
            Msg::PassDiff { key, pass, diff } => {
                if let Some(ph) = self.phase.as_mut().filter(|p| p.key == key)
                    && let Some(slot) = ph.diffs.get_mut(pass)
                {
                    *slot = Some(diff);
                    ph.diff_pending.remove(&pass);
                }
            }
            Msg::OutputCode { key, result } => {
                if let Some(ph) = self.phase.as_mut().filter(|p| p.key == key) {
                    ph.output_code = result.into();
                }
            }
            Msg::PassDiffs { key, diffs } => {
                if let Some(ph) = self.phase.as_mut().filter(|p| p.key == key) {
                    for (k, d) in diffs.into_iter().enumerate() {
                        if let Some(slot) = ph.diffs.get_mut(k + 1) {
                            *slot = Some(d);
                        }
                    }
                }
            }
            Msg::Compared {
                key,
                a_path,
                b_pass,
                result,
            } => {
                if let Some(c) = self
                    .phase
                    .as_mut()
                    .filter(|p| p.key == key)
                    .and_then(|p| p.compare.as_mut())
                    .filter(|c| c.a_path == a_path && c.b_pass == b_pass)
                {
                    c.result = result.into();
                }
            }
            Msg::FoundFirstPass { key, query, found } => {
                self.on_found_first_pass(key, query, found)
            }
            Msg::TextDiff { a, b, result } => self.on_text_diff(a, b, result),
            Msg::Exported { result } => self.on_exported(result),
            Msg::Log { path, result } => self.on_log(path, result),
            Msg::Run(m) => self.on_run(m),
            Msg::Timeline(m) => self.on_timeline(m),
            Msg::Tensors(m) => self.on_tensors(m),
            Msg::Autotune(m) => self.on_autotune(m),
        }
    }

    fn indexed(&mut self, result: crate::error::Result<DebugIndex>) {
        let opened = self.opening.take();
        match result {
            Ok(index) => {
                if let Some(p) = opened {
                    self.remember(p);
                }
                self.phase = None;
                self.log = None;
                self.layouts.clear();
                let first = index.default_graph().map(Path::to_path_buf);
                self.workspace = Some(Workspace {
                    index,
                    facts: HashMap::new(),
                    facts_done: false,
                    facts_rev: 0,
                });
                self.load_dumps();
                // Show something at once: the first pass of the first phase.
                if let Some(p) = first {
                    self.select_graph(&p);
                }
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    fn remember(&mut self, path: PathBuf) {
        self.recent.retain(|p| p != &path);
        self.recent.insert(0, path);
        self.recent.truncate(MAX_RECENT);
    }
}
