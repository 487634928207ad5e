//! Original against optimized in the window: a run that holds npugraph_ex's two stage dumps is
//! compared stage against stage as it opens (`pipeline::stages`); the Accuracy tab says which
//! pass changed the numbers, and a click shows that pass with the node selected.

use super::accuracy::AccuracyState;
use super::jobs::Apply;
use super::part::Cx;
use super::{App, Loading, Nav};
use crate::model::progress::Progress;
use crate::pipeline::stages::{self, StageCompare, StageError};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The stage compare of the open run, when it holds both stage dumps.
#[derive(Default)]
pub struct StagesState {
    /// What it was started for: the run and its dump folders (a dump landing later, or the run
    /// opened again after it changed, starts it again).
    pub started_for: Option<Key>,
    /// `Idle` when the run holds no stage dumps.
    pub result: Loading<Arc<StageCompare>>,
    progress: Arc<Progress>,
}

impl StagesState {
    pub fn progress_line(&self) -> String {
        self.progress.line()
    }
}

/// The run's root and its dump folders.
pub type Key = (PathBuf, Vec<PathBuf>);

/// A finished stage compare of the run at `root`; `None` when it holds no stage dumps.
pub struct StagesMsg {
    key: Key,
    result: Result<Option<StageCompare>, String>,
}

impl Apply<AccuracyState> for StagesMsg {
    fn is_current(&self, a: &AccuracyState) -> bool {
        a.stages.started_for.as_ref() == Some(&self.key)
    }

    fn apply(self, a: &mut AccuracyState) {
        a.stages.result = match self.result {
            Ok(Some(c)) => Loading::Ready(Arc::new(c)),
            Ok(None) => Loading::Idle,
            Err(e) => Loading::Failed(e),
        };
    }
}

/// Starts the stage compare of a newly opened run that holds two or more tensor dumps (checked
/// once a frame: a dump may land after the open).
pub(super) fn want(app: &mut App) {
    let (a, cx) = app.part::<AccuracyState>();
    let Some(ws) = cx.workspace else {
        return;
    };
    let st = &mut a.stages;
    // Compared without building the key: this runs every frame.
    let dumps = || {
        let mut v: Vec<&Path> = ws.index.data_dumps.iter().map(|d| d.folder()).collect();
        v.sort();
        v.dedup();
        v
    };
    if st.started_for.as_ref().is_some_and(|(root, d)| {
        *root == ws.index.root && d.iter().map(PathBuf::as_path).eq(dumps())
    }) {
        return;
    }
    let key: Key = (
        ws.index.root.clone(),
        dumps().into_iter().map(Path::to_path_buf).collect(),
    );
    st.progress.cancel();
    st.progress = Arc::default();
    let two = key.1.len() >= 2;
    st.started_for = Some(key.clone());
    if !two {
        st.result = Loading::Idle;
        return;
    }
    st.result = Loading::Loading;
    let progress = st.progress.clone();
    cx.spawn::<AccuracyState>(move |out| {
        let result = match stages::find(&key.0) {
            Ok(spec) => stages::compare(&spec, &progress).map(Some),
            Err(StageError::NotStages { .. }) => Ok(None),
            Err(e) => Err(e),
        };
        // The answer is what the user opened the run for: said in the status bar too.
        let said = match &result {
            Ok(Some(c)) => Some(format!(
                "original against optimized: {} (Accuracy tab)",
                c.answer
            )),
            _ => None,
        };
        let current = key.clone();
        out.send(StagesMsg {
            key,
            result: result.map_err(|e| e.to_string()),
        });
        if let Some(said) = said {
            out.notice(said, move |a| {
                a.stages.started_for.as_ref() == Some(&current)
            });
        }
    });
}

impl StagesState {
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
