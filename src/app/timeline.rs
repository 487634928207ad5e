//! The captured aclGraph model instance shown as a timeline (issue 7): which capture file is
//! open, its parsed timeline (loaded in the background) and the selected task.

use super::App;
use super::jobs::Msg;
use crate::analysis::timeline_stats::Timeline;
use crate::sources::trace_json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// What the app knows and has loaded for this view.
#[derive(Default)]
pub struct TimelineState {
    pub open: Option<OpenCapture>,
    /// The selected task (index into the trace's tasks).
    pub selected: Option<u32>,
}

/// A capture file opened in the timeline.
pub struct OpenCapture {
    pub path: PathBuf,
    /// `None` while loading.
    pub timeline: Option<Arc<Timeline>>,
    pub error: Option<String>,
    /// How long reading and analysing took.
    pub load_time: Option<Duration>,
}

/// Results of this view's background jobs.
pub enum TimelineMsg {
    Loaded {
        path: PathBuf,
        result: Result<(Arc<Timeline>, Duration), String>,
    },
}

impl App {
    pub(super) fn on_timeline(&mut self, msg: TimelineMsg) {
        match msg {
            TimelineMsg::Loaded { path, result } => {
                if let Some(open) = self.timeline.open.as_mut().filter(|o| o.path == path) {
                    match result {
                        Ok((tl, t)) => {
                            open.timeline = Some(tl);
                            open.load_time = Some(t);
                        }
                        Err(e) => open.error = Some(e),
                    }
                }
            }
        }
    }

    /// Opens a capture `*.json`/`*.aligned.json` (or any Chrome trace) in the timeline; it is
    /// parsed in the background.
    pub fn open_timeline(&mut self, path: &Path) {
        if self.timeline.open.as_ref().is_some_and(|o| o.path == path) {
            return;
        }
        self.timeline.selected = None;
        self.timeline.open = Some(OpenCapture {
            path: path.to_path_buf(),
            timeline: None,
            error: None,
            load_time: None,
        });
        let path = path.to_path_buf();
        self.jobs.spawn(move |send| {
            let t = std::time::Instant::now();
            let result = trace_json::load(&path)
                .map(|trace| (Arc::new(Timeline::new(trace)), t.elapsed()))
                .map_err(|e| e.to_string());
            send(Msg::Timeline(TimelineMsg::Loaded { path, result }));
        });
    }

    /// Selects a task of the open timeline (or nothing).
    pub fn select_task(&mut self, task: Option<u32>) {
        self.timeline.selected = task;
    }

    /// The open timeline, once loaded.
    pub fn timeline(&self) -> Option<&Arc<Timeline>> {
        self.timeline.open.as_ref()?.timeline.as_ref()
    }
}
