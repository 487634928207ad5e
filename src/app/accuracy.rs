//! Accuracy compare in the window (issue 23): the open run put beside its golden run. The
//! golden is a dump folder, an msprobe dump, a run folder holding one, an archive, or msprobe's
//! own `compare_result_*.csv`; the compare runs in a job (`pipeline::compare`) and its result
//! colours the graph, fills the Accuracy tab and the inspector, and names the first divergence.

use super::jobs::Apply;
use super::{App, Loading, Nav};
use crate::analysis::accuracy::Comparison;
use crate::analysis::accuracy::delta::Delta;
use crate::model::progress::Progress;
use crate::pipeline::compare::{self, Described, Options};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the app knows of the golden run.
#[derive(Default)]
pub struct AccuracyState {
    /// The golden's path, once attached.
    pub golden: Option<PathBuf>,
    pub result: Loading<Arc<Comparison>>,
    pub described: Option<Described>,
    /// The step and rank compared (`None`: the dumps' first in common).
    pub step: Option<u32>,
    pub rank: Option<u32>,
    /// Bumped on every request, so a slow older compare cannot overwrite a newer one.
    request: u64,
    /// The difference of the pair the inspector pictures.
    pub delta: Option<DeltaView>,
    /// How far the compare under way is; a new compare calls the old one off through it.
    progress: Arc<Progress>,
    /// The open run's original stage against its optimized one, when it holds both dumps.
    pub stages: super::stages::StagesState,
}

/// The difference target − golden of one pair of the current compare (its histogram and |Δ|
/// slice), computed in the background.
pub struct DeltaView {
    /// The pair's (target) key.
    pub key: String,
    /// The slice's leading indices asked for (`None`: the slice holding the largest
    /// difference).
    pub lead: Option<Vec<u64>>,
    /// The compare it belongs to.
    request: u64,
    pub result: Loading<Arc<Delta>>,
}

/// A pair's difference, computed.
pub struct DeltaMsg {
    request: u64,
    key: String,
    lead: Option<Vec<u64>>,
    result: Result<Delta, String>,
}

impl Apply<App> for DeltaMsg {
    fn is_current(&self, app: &App) -> bool {
        app.accuracy
            .delta
            .as_ref()
            .is_some_and(|d| d.request == self.request && d.key == self.key && d.lead == self.lead)
    }

    fn apply(self, app: &mut App) {
        if let Some(d) = app.accuracy.delta.as_mut() {
            d.result = self.result.map(Arc::new).into();
        }
    }
}

impl AccuracyState {
    /// What the compare under way is doing: `computing pairs 120/450`, or `comparing…`
    /// before it says (and for msprobe's CSV, read in one go).
    pub fn progress_line(&self) -> String {
        let line = self.progress.line();
        if line.is_empty() {
            "comparing…".into()
        } else {
            line
        }
    }

    pub fn comparison(&self) -> Option<&Arc<Comparison>> {
        match &self.result {
            Loading::Ready(c) => Some(c),
            _ => None,
        }
    }
}

/// A finished compare, for request `request`.
pub struct AccuracyMsg {
    request: u64,
    result: Result<(Comparison, Described), String>,
}

impl Apply<App> for AccuracyMsg {
    fn is_current(&self, app: &App) -> bool {
        self.request == app.accuracy.request
    }

    fn apply(self, app: &mut App) {
        match self.result {
            Ok((c, d)) => {
                app.accuracy.result = Loading::Ready(Arc::new(c));
                app.accuracy.described = Some(d);
            }
            Err(e) => app.accuracy.result = Loading::Failed(e),
        }
    }
}

impl App {
    /// Compares the open run with the golden at `golden`, at the accuracy state's step and rank,
    /// linking msprobe calls to the pass on screen. Replaces any earlier compare.
    pub fn compare_with_golden(&mut self, golden: &Path) {
        let Some(ws) = &self.workspace else {
            self.error = Some("open a run first, then compare it with its golden".into());
            return;
        };
        let target = ws.index.root.clone();
        let golden = golden.to_path_buf();
        let a = &mut self.accuracy;
        a.request += 1;
        a.golden = Some(golden.clone());
        a.result = Loading::Loading;
        a.described = None;
        a.delta = None;
        a.progress.cancel();
        a.progress = Arc::default();
        let request = a.request;
        let options = Options {
            progress: a.progress.clone(),
            step: a.step,
            rank: a.rank,
            graph: self
                .phase
                .as_ref()
                .and_then(|p| p.current_path())
                .map(Path::to_path_buf),
            graphs: self
                .phase
                .as_ref()
                .map(|p| p.passes.iter().map(|x| x.path.clone()).collect())
                .unwrap_or_default(),
        };
        self.jobs.spawn(move |out| {
            let result = if compare::is_compare_csv(&golden) {
                compare::open_csv(&golden).map(|c| {
                    let d = Described {
                        target: "msprobe's compare".into(),
                        golden: golden.display().to_string(),
                    };
                    (c, d)
                })
            } else {
                compare::compare(&target, &golden, &options)
            };
            out.send(AccuracyMsg {
                request,
                result: result.map_err(|e| e.to_string()),
            });
        });
    }

    /// Computes, in the background, the difference of the current compare's pair `key`: its
    /// histogram and |Δ| on the slice at `lead` (`None`: the one holding the largest
    /// difference). Once per pair and slice.
    pub fn load_delta(&mut self, key: &str, lead: Option<Vec<u64>>) {
        let a = &mut self.accuracy;
        if a.delta
            .as_ref()
            .is_some_and(|d| d.key == key && d.request == a.request && d.lead == lead)
        {
            return;
        }
        let Some(files) = a
            .comparison()
            .and_then(|c| c.pairs.iter().find(|p| p.key == key))
            .and_then(|p| p.files.clone())
        else {
            return;
        };
        let (request, key) = (a.request, key.to_string());
        a.delta = Some(DeltaView {
            key: key.clone(),
            lead: lead.clone(),
            request,
            result: Loading::Loading,
        });
        self.jobs.spawn(move |out| {
            let result =
                compare::delta(&files.0, &files.1, lead.as_deref()).map_err(|e| e.to_string());
            out.send(DeltaMsg {
                request,
                key,
                lead,
                result,
            });
        });
    }

    /// Sets the step compared, without comparing (tests set it before attaching a golden).
    pub fn accuracy_step_for_test(&mut self, step: Option<u32>) {
        self.accuracy.step = step;
    }

    /// Compares again at `step` / `rank` (the pickers act on both sides).
    pub fn compare_at(&mut self, step: Option<u32>, rank: Option<u32>) {
        self.accuracy.step = step;
        self.accuracy.rank = rank;
        if let Some(g) = self.accuracy.golden.clone() {
            self.compare_with_golden(&g);
        }
    }

    /// Selects the first node where the run parts from its golden, opening the boxes that hide
    /// it; returns why it was chosen (`None` when nothing diverges or no node names it).
    pub fn go_to_first_divergence(&mut self) -> Option<String> {
        let c = self.accuracy.comparison()?.clone();
        let d = c.first_divergence.as_ref()?;
        if let Some(node) = &d.node {
            self.reveal_node(node.clone());
            self.nav.push(Nav::ShowTab(crate::app::TabId::GRAPH));
        }
        Some(d.why.clone())
    }

    /// Forgets the golden run.
    pub fn drop_golden(&mut self) {
        self.accuracy.progress.cancel();
        self.accuracy = AccuracyState {
            request: self.accuracy.request + 1,
            stages: std::mem::take(&mut self.accuracy.stages),
            ..AccuracyState::default()
        };
    }
}
