//! The captured aclGraph model instance shown as a timeline (issue 7): which capture file is
//! open, its parsed timeline (loaded in the background) and the selected task. A feature that
//! owns its state (`app::part`): its commands take a `Cx`; selecting a task asks for its node to
//! be selected in the graph, which is the app's ([`Nav::Select`](super::Nav::Select)).

use super::jobs::Apply;
use super::part::Cx;
use super::{App, Loading};
use crate::analysis::task_nodes::{self, TaskNodeMap};
use crate::analysis::timeline_stats::Timeline;
use crate::model::index::DebugIndex;
use crate::sources::{load, trace_json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What the app knows and has loaded for this view.
#[derive(Default)]
pub struct TimelineState {
    pub open: Option<OpenCapture>,
    /// The selected task (index into the trace's tasks).
    pub selected: Option<u32>,
    /// Kernel tasks linked to the FX nodes of the model's final pass, once computed.
    pub nodes: Option<Arc<NodeLink>>,
}

/// The user's: a trace opened on its own, or a flame chart, stays when a tree opens (a trace
/// file given on the command line is opened as the tree around it is being read).
impl super::part::Feature for TimelineState {
    const OF_THE_TREE: bool = false;
}

/// The best-effort task ↔ FX node link of the open capture.
pub struct NodeLink {
    /// The final pass graph file of the capture's model.
    pub pass: PathBuf,
    pub map: TaskNodeMap,
}

/// A capture file opened in the timeline.
pub struct OpenCapture {
    pub path: PathBuf,
    pub timeline: Loading<Arc<Timeline>>,
    /// How long reading and analysing took.
    pub load_time: Option<Duration>,
}

/// Results of this view's background jobs.
pub enum TimelineMsg {
    Loaded {
        path: PathBuf,
        result: Result<(Arc<Timeline>, Duration), String>,
    },
    Linked {
        path: PathBuf,
        link: Arc<NodeLink>,
    },
}

impl Apply<TimelineState> for TimelineMsg {
    fn is_current(&self, state: &TimelineState) -> bool {
        let (TimelineMsg::Loaded { path, .. } | TimelineMsg::Linked { path, .. }) = self;
        state.open.as_ref().is_some_and(|o| &o.path == path)
    }

    fn apply(self, state: &mut TimelineState) {
        match self {
            TimelineMsg::Loaded { result, .. } => {
                if let Some(open) = state.open.as_mut() {
                    open.load_time = result.as_ref().ok().map(|(_, t)| *t);
                    open.timeline = result.map(|(tl, _)| tl).into();
                }
            }
            TimelineMsg::Linked { link, .. } => state.nodes = Some(link),
        }
    }
}

impl TimelineState {
    /// Opens a capture `*.json`/`*.aligned.json` (or any Chrome trace) in the timeline; it is
    /// parsed in the background.
    pub fn open(&mut self, cx: &Cx, path: &Path) {
        if self.open.as_ref().is_some_and(|o| o.path == path) {
            return;
        }
        self.selected = None;
        self.nodes = None;
        let final_pass = cx
            .workspace
            .and_then(|ws| final_pass_of_capture(&ws.index, path));
        self.open = Some(OpenCapture {
            path: path.to_path_buf(),
            timeline: Loading::Loading,
            load_time: None,
        });
        let path = path.to_path_buf();
        cx.spawn::<TimelineState>(move |out| {
            let t = std::time::Instant::now();
            let result = trace_json::load(&path)
                .map(|trace| (Arc::new(Timeline::new(trace)), t.elapsed()))
                .map_err(|e| e.to_string());
            let tl = result.as_ref().ok().map(|(tl, _)| tl.clone());
            out.send(TimelineMsg::Loaded {
                path: path.clone(),
                result,
            });
            // The link to the graph is a bonus: a pass that does not load leaves it out.
            if let (Some(tl), Some(pass)) = (tl, final_pass)
                && let Ok(file) = load::graph(&pass)
                && let Some(graph) = file.graphs.first()
            {
                let map = task_nodes::map_tasks(&tl.trace, graph);
                out.send(TimelineMsg::Linked {
                    path,
                    link: Arc::new(NodeLink { pass, map }),
                });
            }
        });
    }

    /// Shows a timeline made here rather than loaded (a compile's flame chart) under `path`.
    pub fn show(&mut self, path: PathBuf, timeline: Arc<Timeline>, load_time: Duration) {
        self.selected = None;
        self.nodes = None;
        self.open = Some(OpenCapture {
            path,
            timeline: Loading::Ready(timeline),
            load_time: Some(load_time),
        });
    }

    /// Selects a task (or nothing), and asks for the FX node it is linked to to be selected in
    /// the graph ([`Nav::Select`](super::Nav::Select): the graph is the app's).
    pub fn select_task(&mut self, cx: &mut Cx, task: Option<u32>) {
        self.selected = task;
        let Some(link) = &self.nodes else { return };
        if let Some((node, _)) = task.and_then(|t| link.map.by_task.get(&t)) {
            cx.nav.push(super::Nav::Select {
                graph: link.pass.clone(),
                node: node.clone(),
            });
        }
    }

    /// Selects the task linked to the FX node `node`, if any; true when one was.
    pub fn select_task_of_node(&mut self, node: &str) -> bool {
        let task = self
            .nodes
            .as_ref()
            .and_then(|l| l.map.by_node.get(node).copied());
        if task.is_some() {
            self.selected = task;
        }
        task.is_some()
    }

    /// The file (or flame chart) open in the timeline.
    pub fn open_path(&self) -> Option<&Path> {
        Some(&self.open.as_ref()?.path)
    }

    /// The open timeline, once loaded.
    pub fn loaded(&self) -> Option<&Arc<Timeline>> {
        self.open.as_ref()?.timeline.ready()
    }
}

impl App {
    /// Opens a capture in the timeline (see [`TimelineState::open`]).
    pub fn open_timeline(&mut self, path: &Path) {
        let (timeline, cx) = self.part::<TimelineState>();
        timeline.open(&cx, path);
    }

    /// Opens a trace file given directly (command line, drop): its timeline comes to the front;
    /// a capture-named file also opens as a folder would, so the tree shows it.
    pub fn open_trace_file(&mut self, path: &Path) {
        let capture_named = path
            .file_name()
            .and_then(|n| crate::sources::names::capture_file(&n.to_string_lossy()))
            .is_some();
        if capture_named {
            self.open(path);
        }
        self.open_timeline(path);
        self.nav
            .push(super::Nav::ShowTab(crate::app::TabId::TIMELINE));
    }

    /// Selects a task of the open timeline (or nothing), and the FX node it is linked to.
    pub fn select_task(&mut self, task: Option<u32>) {
        let (timeline, mut cx) = self.part::<TimelineState>();
        timeline.select_task(&mut cx, task);
        self.follow_go();
    }
}

/// The last pass of the phase the capture belongs to: the model holding the capture (joined by
/// `graph_K`), its phase with an `output_code.py` (the one captured), else its first phase.
pub fn final_pass_of_capture(index: &DebugIndex, capture: &Path) -> Option<PathBuf> {
    let model = index
        .runs
        .iter()
        .flat_map(|r| &r.models)
        .find(|m| m.captures.iter().any(|c| c.path == capture))?;
    let phase = model
        .phases
        .iter()
        .find(|p| p.output_code.is_some())
        .or(model.phases.first())?;
    phase.passes.last().map(|p| p.path.clone())
}

/// A file to open as a timeline rather than index: any `.json` but msprobe's `dump.json`.
/// A remote one is judged by its name alone: the UI thread asks, and never waits on a link.
pub fn is_trace_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        && path.file_name().is_some_and(|n| n != "dump.json")
        && (crate::sources::remote::is_remote(path) || crate::sources::vfs::is_file(path))
}
