//! Original against optimized in the window: a run that holds npugraph_ex's two stage dumps is
//! compared stage against stage as it opens (`pipeline::stages`); the Accuracy tab says which
//! pass changed the numbers, and a click shows that pass with the node selected.

use super::Loading;
use super::Nav;
use super::part::Cx;
use super::workspace::Workspace;
use crate::model::progress::Progress;
use crate::pipeline::stages::{self, StageCompare, StageError};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The stage compare of the open run, when it holds both stage dumps. Kept by the accuracy
/// feature, whose tab shows it above the golden compare.
#[derive(Default)]
pub struct StagesState {
    /// What it was started for: the run and its dump folders (a dump landing later, or the run
    /// opened again after it changed, starts it again).
    pub started_for: Option<Key>,
    /// `Idle` when the run holds no stage dumps.
    pub result: Loading<Arc<StageCompare>>,
    progress: Arc<Progress>,
}

/// The run's root and its dump folders.
pub type Key = (PathBuf, Vec<PathBuf>);

/// A finished stage compare of the run at `root`; `None` when it holds no stage dumps.
pub struct StagesMsg {
    pub(super) key: Key,
    result: Result<Option<StageCompare>, String>,
}

impl StagesMsg {
    /// The answer in one line for the status bar, when there is one: what the user opened
    /// the run for.
    pub(super) fn said(&self) -> Option<String> {
        match &self.result {
            Ok(Some(c)) => Some(format!(
                "original against optimized: {} (Accuracy tab)",
                c.answer
            )),
            _ => None,
        }
    }
}

impl StagesState {
    pub fn progress_line(&self) -> String {
        self.progress.line()
    }

    /// Whether `msg` answers the compare this state waits for.
    pub(super) fn is_current(&self, msg: &StagesMsg) -> bool {
        self.started_for.as_ref() == Some(&msg.key)
    }

    pub(super) fn apply(&mut self, msg: StagesMsg) {
        self.result = match msg.result {
            Ok(Some(c)) => Loading::Ready(Arc::new(c)),
            Ok(None) => Loading::Idle,
            Err(e) => Loading::Failed(e),
        };
    }

    /// The work of comparing the stages of the tree open in `ws`, when it holds two or more
    /// tensor dumps and they are not the ones compared already (checked once a frame: a dump
    /// may land after the open).
    pub(super) fn start(
        &mut self,
        ws: &Workspace,
    ) -> Option<impl FnOnce() -> StagesMsg + Send + 'static> {
        // Compared without building the key: this runs every frame.
        let dumps = || {
            let mut v: Vec<&Path> = ws.index.data_dumps.iter().map(|d| d.folder()).collect();
            v.sort();
            v.dedup();
            v
        };
        if self.started_for.as_ref().is_some_and(|(root, d)| {
            *root == ws.index.root && d.iter().map(PathBuf::as_path).eq(dumps())
        }) {
            return None;
        }
        let key: Key = (
            ws.index.root.clone(),
            dumps().into_iter().map(Path::to_path_buf).collect(),
        );
        self.progress.cancel();
        self.progress = Arc::default();
        let two = key.1.len() >= 2;
        self.started_for = Some(key.clone());
        if !two {
            self.result = Loading::Idle;
            return None;
        }
        self.result = Loading::Loading;
        let progress = self.progress.clone();
        Some(move || {
            let result = match stages::find(&key.0) {
                Ok(spec) => stages::compare(&spec, &progress).map(Some),
                Err(StageError::NotStages { .. }) => Ok(None),
                Err(e) => Err(e),
            };
            StagesMsg {
                key,
                result: result.map_err(|e| e.to_string()),
            }
        })
    }

    /// Shows where finding `i` parts: the pass that did it on screen (its diff against the pass
    /// before), the node selected.
    pub fn go_to_finding(&self, cx: &mut Cx, i: usize) {
        let Loading::Ready(c) = &self.result else {
            return;
        };
        let Some(f) = c.findings.get(i) else {
            return;
        };
        let pass = f.pass.unwrap_or(c.pass_files.len().saturating_sub(1));
        let Some(file) = c.pass_files.get(pass) else {
            return;
        };
        cx.nav.push(Nav::GoTraced {
            graph: file.clone(),
            node: c.pairs[f.pair].node.clone(),
        });
    }
}
