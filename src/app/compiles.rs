//! The compile story of the open tree (issue 15): its trace logs read and joined to the
//! `model__N` folders in the background, the selected compile and graph break, and the
//! commands the Compiles view issues (open a model's graph, show the flame chart).
//!
//! The state is kept by the window (`ui::ViewState::compiles`) rather than in [`App`] while
//! `app/state.rs` is being split; it only reaches `App` through its public commands and its
//! job runner, so moving it into `App` later is a one-line change.

use super::App;
use super::timeline::OpenCapture;
use crate::analysis::compiles::{self, ModelLink};
use crate::analysis::timeline_stats::Timeline;
use crate::error::{Error, Result};
use crate::model::compile::CompileTrace;
use crate::model::index::DebugIndex;
use crate::sources::{load, trace_log, vfs};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

/// One trace log, read and joined to its model folders.
pub struct Story {
    pub path: PathBuf,
    pub trace: CompileTrace,
    pub links: Vec<ModelLink>,
}

impl Story {
    /// Why each joined model exists, by (run folder name, model name).
    pub fn model_notes(&self) -> HashMap<(String, String), String> {
        self.links
            .iter()
            .map(|l| {
                (
                    (l.run.clone(), l.model.clone()),
                    compiles::why(&self.trace, l.compile),
                )
            })
            .collect()
    }
}

/// Finds the trace logs for `path` (a debug tree, a run, a model folder, or the trace log
/// itself) and reads them, joined to the model folders of the tree around them.
pub fn stories(path: &Path) -> Result<Vec<Story>> {
    let (traces, index) = locate(path)?;
    Ok(read_stories(&traces, index.as_ref()))
}

/// Reads each trace log (one that cannot be read becomes a story with the reason as its stop).
pub fn read_stories(traces: &[PathBuf], index: Option<&DebugIndex>) -> Vec<Story> {
    traces
        .iter()
        .map(|t| {
            let trace = trace_log::load(t).unwrap_or_else(|e| CompileTrace {
                stopped: Some(e.to_string()),
                ..CompileTrace::default()
            });
            let links = index
                .map(|idx| {
                    compiles::join_models(&trace, &trace_log::models::model_graphs(idx, &trace))
                })
                .unwrap_or_default();
            Story {
                path: t.clone(),
                trace,
                links,
            }
        })
        .collect()
}

/// The trace logs for `path` and the index of the tree whose models they can be joined to.
pub fn locate(path: &Path) -> Result<(Vec<PathBuf>, Option<DebugIndex>)> {
    if !vfs::exists(path) {
        return Err(Error::user(format!(
            "{}: no such file or folder",
            path.display()
        )));
    }
    if vfs::is_file(path) {
        // `…/torch_compile_debug/tlparse/<log>`: the runs are beside `tlparse/`.
        let tree = path
            .parent()
            .filter(|p| p.file_name().is_some_and(|n| n == "tlparse"))
            .and_then(Path::parent);
        let index = tree.and_then(|t| load::index(t).ok());
        return Ok((vec![path.to_path_buf()], index));
    }
    let index = load::index(path)?;
    let traces = trace_log::find_beside(path, &index);
    if traces.is_empty() {
        return Err(Error::user(format!(
            "{}: no trace log (tlparse/dedicated_log_torch_trace_*.log) here or in the \
             torch_compile_debug/ folder above; torch writes one with TORCH_COMPILE_DEBUG=1 or \
             TORCH_TRACE=DIR",
            path.display()
        )));
    }
    Ok((traces, Some(index)))
}

/// A selected compile: (story, compile) indices.
pub type CompileRef = (usize, usize);

/// What the Compiles view shows and has loaded.
#[derive(Default)]
pub struct CompilesState {
    /// The tree (root, its indexed trace logs) the stories were read for.
    loaded_for: Option<(PathBuf, Vec<PathBuf>)>,
    pub stories: Vec<Arc<Story>>,
    pub loading: bool,
    pub load_time: Option<Duration>,
    pub selected: Option<CompileRef>,
    /// The selected graph break: its compile and its index in the compile's breaks.
    pub selected_break: Option<(CompileRef, usize)>,
    /// Why each model exists, by (run, model) — for the tree.
    pub notes: HashMap<(String, String), String>,
    /// Models written from graphs found only in the trace (`app::trace_graphs`): (story,
    /// link), and the runs holding them, shown in the tree beside the viewed folder's runs.
    pub extra_links: Vec<(usize, ModelLink)>,
    extra_runs: Vec<crate::model::index::Run>,
    rx: Option<Receiver<Loaded>>,
}

/// What the background job read.
struct Loaded {
    stories: Vec<Story>,
    time: Duration,
    extra_links: Vec<(usize, ModelLink)>,
    extra_runs: Vec<crate::model::index::Run>,
}

/// Writes each story's trace-only graphs to the cache (see `trace_graphs`) and indexes them.
fn materialize_all(stories: &[Story]) -> (Vec<(usize, ModelLink)>, Vec<crate::model::index::Run>) {
    let mut links = Vec::new();
    let mut runs = Vec::new();
    for (i, s) in stories.iter().enumerate() {
        let joined: Vec<usize> = s.links.iter().map(|l| l.compile).collect();
        // The cache is a bonus: a failed write leaves those graphs in the trace view only.
        if let Ok(Some((run, ls))) = super::trace_graphs::materialize(&s.path, &s.trace, &joined)
            && let Ok(idx) = load::index(&run)
        {
            links.extend(ls.into_iter().map(|l| (i, l)));
            runs.extend(idx.runs);
        }
    }
    (links, runs)
}

impl CompilesState {
    /// Starts reading the open tree's trace logs when they are not the ones read, and takes
    /// finished results. Called once per frame; cheap when nothing changed.
    pub fn update(&mut self, app: &mut App) {
        if let Some(rx) = &self.rx
            && let Ok(loaded) = rx.try_recv()
        {
            self.notes = loaded.stories.iter().flat_map(Story::model_notes).collect();
            for (s, l) in &loaded.extra_links {
                self.notes.insert(
                    (l.run.clone(), l.model.clone()),
                    compiles::why(&loaded.stories[*s].trace, l.compile),
                );
            }
            self.stories = loaded.stories.into_iter().map(Arc::new).collect();
            self.extra_links = loaded.extra_links;
            self.extra_runs = loaded.extra_runs;
            self.load_time = Some(loaded.time);
            self.loading = false;
            self.rx = None;
        }
        let Some(ws) = &mut app.workspace else {
            return;
        };
        // A re-index (the watcher) drops the runs added from the cache: add them again.
        for run in &self.extra_runs {
            if !ws.index.runs.iter().any(|r| r.path == run.path) {
                ws.index.runs.push(run.clone());
            }
        }
        // Compared without cloning: this runs every frame. The trace logs are looked for (in
        // the folders above, which is I/O) by the job, not here.
        if self
            .loaded_for
            .as_ref()
            .is_some_and(|(r, t)| *r == ws.index.root && *t == ws.index.traces)
        {
            return;
        }
        let key = (ws.index.root.clone(), ws.index.traces.clone());
        self.stories.clear();
        self.notes.clear();
        self.extra_links.clear();
        self.extra_runs.clear();
        self.selected = None;
        self.selected_break = None;
        self.loaded_for = Some(key.clone());
        let index = ws.index.clone();
        let (tx, rx) = channel();
        self.rx = Some(rx);
        self.loading = true;
        app.jobs.spawn(move |_| {
            let t = std::time::Instant::now();
            let traces = trace_log::find_beside(&key.0, &index);
            let stories = read_stories(&traces, Some(&index));
            let time = t.elapsed();
            let (extra_links, extra_runs) = materialize_all(&stories);
            let _ = tx.send(Loaded {
                stories,
                time,
                extra_links,
                extra_runs,
            });
        });
    }

    pub fn story(&self, s: usize) -> Option<&Arc<Story>> {
        self.stories.get(s)
    }

    /// Selects a graph break (and its compile).
    pub fn select_break(&mut self, c: CompileRef, b: usize) {
        self.selected = Some(c);
        self.selected_break = Some((c, b));
    }

    pub fn select(&mut self, c: CompileRef) {
        self.selected = Some(c);
        if self.selected_break.is_some_and(|(bc, _)| bc != c) {
            self.selected_break = None;
        }
    }

    /// The model folder compile `c` went to: in the viewed tree, else written from the trace.
    pub fn link_of(&self, c: CompileRef) -> Option<&ModelLink> {
        let story = self.stories.get(c.0)?;
        compiles::model_of(&story.links, c.1).or_else(|| {
            self.extra_links
                .iter()
                .find(|(s, l)| *s == c.0 && l.compile == c.1)
                .map(|(_, l)| l)
        })
    }

    /// The Dynamo graph file of the model compile `c` went to.
    pub fn model_graph(&self, app: &App, c: CompileRef) -> Option<PathBuf> {
        let link = self.link_of(c)?;
        let ws = app.workspace.as_ref()?;
        ws.index
            .runs
            .iter()
            .filter(|r| r.name == link.run)
            .flat_map(|r| &r.models)
            .find(|m| m.name == link.model)?
            .dynamo_graph
            .clone()
    }
}

impl App {
    /// Shows the compile-time spans of `story` (all compiles, or only `compile_id`) as a flame
    /// chart in the timeline view.
    pub fn show_flame(&mut self, story: &Story, compile_id: Option<&str>) {
        let t = std::time::Instant::now();
        let flame = compiles::flame_of(&story.trace, compile_id);
        self.timeline.selected = None;
        self.timeline.nodes = None;
        self.timeline.open = Some(OpenCapture {
            path: match compile_id {
                // Distinct paths make the view fit each chart once.
                Some(id) => {
                    let mut p = story.path.clone().into_os_string();
                    p.push(format!("#{}", id.replace('/', "_")));
                    PathBuf::from(p)
                }
                None => story.path.clone(),
            },
            timeline: super::Loading::Ready(Arc::new(Timeline::new(flame))),
            load_time: Some(t.elapsed()),
        });
        self.timeline.show_tab = true;
    }
}
