//! Original against optimized in the window: a run that holds npugraph_ex's two stage dumps is
//! compared stage against stage as it opens (`pipeline::stages`); the Accuracy tab says which
//! pass changed the numbers, and a click shows that pass with the node selected.

use super::jobs::Apply;
use super::{App, Loading, Nav};
use crate::model::progress::Progress;
use crate::pipeline::stages::{self, StageCompare, StageError};
use std::path::PathBuf;
use std::sync::Arc;

/// The stage compare of the open run, when it holds both stage dumps.
#[derive(Default)]
pub struct StagesState {
    /// The run it was started for: once per opened run.
    pub started_for: Option<PathBuf>,
    /// `Idle` when the run holds no stage dumps.
    pub result: Loading<Arc<StageCompare>>,
    progress: Arc<Progress>,
}

impl StagesState {
    pub fn progress_line(&self) -> String {
        self.progress.line()
    }
}

/// A finished stage compare of the run at `root`; `None` when it holds no stage dumps.
pub struct StagesMsg {
    root: PathBuf,
    result: Result<Option<StageCompare>, String>,
}

impl Apply<App> for StagesMsg {
    fn is_current(&self, app: &App) -> bool {
        app.accuracy.stages.started_for.as_ref() == Some(&self.root)
    }

    fn apply(self, app: &mut App) {
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
        let root = &ws.index.root;
        let st = &mut self.accuracy.stages;
        if st.started_for.as_ref() == Some(root) {
            return;
        }
        st.started_for = Some(root.clone());
        st.progress.cancel();
        st.progress = Arc::default();
        let dumps: std::collections::HashSet<_> = ws
            .index
            .data_dumps
            .iter()
            .filter_map(|d| d.path.parent())
            .collect();
        if dumps.len() < 2 {
            st.result = Loading::Idle;
            return;
        }
        st.result = Loading::Loading;
        let (root, progress) = (root.clone(), st.progress.clone());
        self.jobs.spawn(move |out| {
            let result = match stages::find(&root) {
                Ok(spec) => stages::compare(&spec, &progress).map(Some),
                Err(StageError::NotStages { .. }) => Ok(None),
                Err(e) => Err(e),
            };
            out.send(StagesMsg {
                root,
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
        // The node as that pass names it: later passes may have renamed it.
        let pair = &c.pairs[f.pair];
        let name = self
            .phase
            .as_ref()
            .filter(|ph| ph.pass_of(file).is_some())
            .and_then(|ph| {
                let h = ph.history(&pair.node)?;
                h.get(pass)?.name.clone()
            })
            .unwrap_or_else(|| pair.node.clone());
        self.select_graph(file);
        self.reveal_node(name);
        self.nav.push(Nav::ShowTab("graph"));
    }
}
