//! Original against optimized in the window: a run that holds npugraph_ex's two stage dumps is
//! compared stage against stage as it opens (`pipeline::stages`); the Accuracy tab says which
//! pass changed the numbers, and a click shows that pass with the node selected.

use super::jobs::Apply;
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

impl Apply<App> for StagesMsg {
    fn is_current(&self, app: &App) -> bool {
        app.accuracy.stages.started_for.as_ref() == Some(&self.key)
    }

    fn apply(self, app: &mut App) {
        // The answer is what the user opened the run for: said in the status bar too.
        if let Ok(Some(c)) = &self.result {
            app.notice = Some(format!(
                "original against optimized: {} (Accuracy tab)",
                c.answer
            ));
        }
        app.accuracy.stages.result = match self.result {
            Ok(Some(c)) => Loading::Ready(Arc::new(c)),
            Ok(None) => Loading::Idle,
            Err(e) => Loading::Failed(e),
        };
    }
}

impl App {
    /// Starts the stage compare of a newly opened run that holds two or more tensor dumps.
    pub(super) fn want_stages(&mut self) {
        let Some(ws) = &self.workspace else {
            return;
        };
        let st = &mut self.accuracy.stages;
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
        self.jobs.spawn(move |out| {
            let result = match stages::find(&key.0) {
                Ok(spec) => stages::compare(&spec, &progress).map(Some),
                Err(StageError::NotStages { .. }) => Ok(None),
                Err(e) => Err(e),
            };
            out.send(StagesMsg {
                key,
                result: result.map_err(|e| e.to_string()),
            });
        });
    }

    /// Shows where finding `i` of the stage compare parts: the pass that did it on screen (its
    /// diff against the pass before), the node selected.
    pub fn go_to_stage_finding(&mut self, i: usize) {
        let Loading::Ready(c) = &self.accuracy.stages.result else {
            return;
        };
        let c = c.clone();
        let Some(f) = c.findings.get(i) else {
            return;
        };
        let pass = f.pass.unwrap_or(c.pass_files.len().saturating_sub(1));
        let Some(file) = c.pass_files.get(pass) else {
            return;
        };
        self.select_graph(file);
        // The node as that pass names it (later passes may have renamed it), once the phase's
        // diffs are at hand; else as the last pass names it.
        let pair = &c.pairs[f.pair];
        let name = self
            .phase
            .as_ref()
            .and_then(|ph| ph.history(&pair.node)?.get(pass)?.name.clone())
            .unwrap_or_else(|| pair.node.clone());
        self.reveal_node(name);
        self.nav.push(Nav::ShowTab(crate::app::TabId::GRAPH));
    }
}
