//! Which pass, exactly, in the window: the Accuracy tab's *Find the pass* replays every pass of
//! the open run on its inputs (`pipeline::bisect`, in a job whose child Python the next request,
//! another tree opened or fxray's exit stops), shows a line per pass as it ends, says the answer in the status bar
//! and shows the guilty pass with its node selected.

use super::part::Cx;
use super::{Loading, Nav};
use crate::model::progress::Progress;
use crate::pipeline::bisect::{self, Bisect, Note};
use std::path::PathBuf;
use std::sync::Arc;

/// The bisect of the open run. Kept by the accuracy feature, beside the stage compare.
#[derive(Default)]
pub struct BisectState {
    /// The run it was asked for.
    pub run: Option<PathBuf>,
    /// The Python with torch that replays the passes, as typed (empty: the one the Run tab
    /// would pick).
    pub python: String,
    /// A line per pass replayed, and what the user must know, as they come.
    pub lines: Vec<String>,
    pub result: Loading<Arc<Bisect>>,
    /// Bumped on every request, so an older bisect's lines cannot land in a newer one.
    request: u64,
    /// Called off by the next request, or when the state is dropped.
    progress: Arc<Progress>,
}

impl Drop for BisectState {
    fn drop(&mut self) {
        // A tree closed under a bisect stops its child Python.
        self.progress.cancel();
    }
}

/// A line of a bisect under way.
pub struct BisectLine {
    request: u64,
    line: String,
}

/// A finished bisect.
pub struct BisectMsg {
    pub(super) request: u64,
    result: Result<Bisect, String>,
}

impl BisectMsg {
    /// The answer for the status bar.
    pub(super) fn said(&self) -> Option<String> {
        self.result
            .as_ref()
            .ok()
            .map(|b| format!("bisect: {} (Accuracy tab)", b.answer))
    }
}

impl BisectState {
    pub fn running(&self) -> bool {
        matches!(self.result, Loading::Loading)
    }

    pub(super) fn request(&self) -> u64 {
        self.request
    }

    /// The work of replaying every pass of the run at `run` (its own dump as the inputs, on
    /// the Python the Run tab would use); `line` hears each pass as it ends. Calls off any
    /// bisect under way.
    pub(super) fn start(
        &mut self,
        run: PathBuf,
    ) -> impl FnOnce(&dyn Fn(BisectLine)) -> BisectMsg + Send + 'static {
        self.progress.cancel();
        self.progress = Arc::default();
        self.request += 1;
        self.run = Some(run.clone());
        self.lines.clear();
        self.result = Loading::Loading;
        let (request, progress) = (self.request, self.progress.clone());
        let python = Some(self.python.trim())
            .filter(|p| !p.is_empty())
            .map(PathBuf::from);
        move |line: &dyn Fn(BisectLine)| {
            let ask = bisect::Ask {
                run,
                python,
                ..Default::default()
            };
            let result = bisect::ask(&ask, &progress, |n| {
                let text = match n {
                    Note::Pass(l) => l,
                    Note::Problem(l) => format!("note: {l}"),
                };
                line(BisectLine {
                    request,
                    line: text,
                });
            });
            BisectMsg {
                request,
                result: result.map_err(|e| e.to_string()),
            }
        }
    }

    /// Calls off the bisect under way and forgets the last answer (another tree is open).
    pub(super) fn forget(&mut self) {
        self.progress.cancel();
        self.request += 1;
        self.run = None;
        self.lines.clear();
        self.result = Loading::Idle;
    }

    pub(super) fn is_current_line(&self, m: &BisectLine) -> bool {
        m.request == self.request
    }

    pub(super) fn apply_line(&mut self, m: BisectLine) {
        self.lines.push(m.line);
    }

    pub(super) fn is_current(&self, m: &BisectMsg) -> bool {
        m.request == self.request
    }

    pub(super) fn apply(&mut self, m: BisectMsg) {
        self.result = m.result.map(Arc::new).into();
    }

    /// Shows the guilty pass on the graph, its changes marked, the node selected.
    pub fn go_to_guilty(&self, cx: &mut Cx) {
        let Loading::Ready(b) = &self.result else {
            return;
        };
        let Some(g) = &b.guilty else { return };
        let Some(file) = b.pass_files.get(g.index) else {
            return;
        };
        cx.nav.push(Nav::GoTraced {
            graph: file.clone(),
            node: g.node.clone(),
        });
    }
}
