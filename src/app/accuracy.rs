//! Accuracy compare in the window (issue 23): the open run put beside its golden run. The
//! golden is a dump folder, an msprobe dump, a run folder holding one, an archive, or msprobe's
//! own `compare_result_*.csv`; the compare runs in a job (`pipeline::compare`) and its result
//! colours the graph, fills the Accuracy tab and the inspector, and names the first divergence.

use super::bisect::{BisectLine, BisectMsg};
use super::jobs::Apply;
use super::part::{Cx, Feature};
use super::stages::StagesMsg;
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
    /// Every pass of the open run replayed on its inputs: the one pass that broke it.
    pub bisect: super::bisect::BisectState,
}

/// The golden is the user's choice: it stays attached when another tree opens (that tree is
/// compared with it once indexed, as `--golden` does).
impl Feature for AccuracyState {
    const OF_THE_TREE: bool = false;
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

impl Apply<AccuracyState> for DeltaMsg {
    fn is_current(&self, a: &AccuracyState) -> bool {
        a.delta
            .as_ref()
            .is_some_and(|d| d.request == self.request && d.key == self.key && d.lead == self.lead)
    }

    fn apply(self, a: &mut AccuracyState) {
        if let Some(d) = a.delta.as_mut() {
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

impl Apply<AccuracyState> for AccuracyMsg {
    fn is_current(&self, a: &AccuracyState) -> bool {
        self.request == a.request
    }

    fn apply(self, a: &mut AccuracyState) {
        match self.result {
            Ok((c, d)) => {
                a.result = Loading::Ready(Arc::new(c));
                a.described = Some(d);
            }
            Err(e) => a.result = Loading::Failed(e),
        }
    }
}

impl Apply<AccuracyState> for StagesMsg {
    fn is_current(&self, a: &AccuracyState) -> bool {
        a.stages.is_current(self)
    }

    fn apply(self, a: &mut AccuracyState) {
        a.stages.apply(self);
    }
}

impl Apply<AccuracyState> for BisectLine {
    fn is_current(&self, a: &AccuracyState) -> bool {
        a.bisect.is_current_line(self)
    }

    fn apply(self, a: &mut AccuracyState) {
        a.bisect.apply_line(self);
    }
}

impl Apply<AccuracyState> for BisectMsg {
    fn is_current(&self, a: &AccuracyState) -> bool {
        a.bisect.is_current(self)
    }

    fn apply(self, a: &mut AccuracyState) {
        a.bisect.apply(self);
    }
}

/// Starts the stage compare of a newly opened run that holds two or more tensor dumps (once a
/// frame: a dump may land after the open).
pub(super) fn want_stages(app: &mut App) {
    let (a, cx) = app.part::<AccuracyState>();
    // A bisect belongs to the tree it replays: another tree open calls it off, so neither its
    // child nor its answer outlives the tree.
    if let Some(ws) = cx.workspace
        && a.bisect.run.as_ref().is_some_and(|r| *r != ws.index.root)
    {
        a.bisect.forget();
    }
    let Some(work) = cx.workspace.and_then(|ws| a.stages.start(ws)) else {
        return;
    };
    cx.spawn::<AccuracyState>(move |out| {
        let msg = work();
        let said = msg.said();
        let key = msg.key.clone();
        out.send(msg);
        if let Some(said) = said {
            out.notice(said, move |a| a.stages.started_for.as_ref() == Some(&key));
        }
    });
}

/// Compares a tree opened with a golden (`fxray RUN --golden G`) once it is indexed: after the
/// watcher let go of the archives of earlier trees, since a golden archive mounted before that
/// would be dropped under its compare.
pub(super) fn want_golden_after_open(app: &mut App) {
    if app.opening.is_some() || app.workspace.is_none() {
        return;
    }
    if let Some(g) = app.golden_after_open.take() {
        let (acc, mut cx) = app.part::<AccuracyState>();
        acc.compare_with_golden(&mut cx, &g);
    }
}

impl AccuracyState {
    /// Compares the open run with the golden at `golden`, at the accuracy state's step and rank,
    /// linking msprobe calls to the pass on screen. Replaces any earlier compare.
    pub fn compare_with_golden(&mut self, cx: &mut Cx, golden: &Path) {
        let Some(ws) = cx.workspace else {
            cx.error("open a run first, then compare it with its golden");
            return;
        };
        let target = ws.index.root.clone();
        let golden = golden.to_path_buf();
        let a = self;
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
            graph: cx.selection.pass.map(Path::to_path_buf),
            graphs: cx.selection.passes.iter().map(|x| x.path.clone()).collect(),
        };
        cx.spawn::<AccuracyState>(move |out| {
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
    pub fn load_delta(&mut self, cx: &Cx, key: &str, lead: Option<Vec<u64>>) {
        let a = self;
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
        cx.spawn::<AccuracyState>(move |out| {
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

    /// Compares again at `step` / `rank` (the pickers act on both sides).
    pub fn compare_at(&mut self, cx: &mut Cx, step: Option<u32>, rank: Option<u32>) {
        self.step = step;
        self.rank = rank;
        if let Some(g) = self.golden.clone() {
            self.compare_with_golden(cx, &g);
        }
    }

    /// Selects the first node where the run parts from its golden in the pass on screen,
    /// opening the boxes that hide it; returns why it was chosen (`None` when nothing diverges
    /// or no node names it).
    pub fn go_to_first_divergence(&self, cx: &mut Cx) -> Option<String> {
        let d = self.comparison()?.first_divergence.as_ref()?;
        if let (Some(node), Some(graph)) = (&d.node, cx.selection.pass) {
            cx.nav.push(Nav::Go {
                graph: graph.to_path_buf(),
                node: Some(node.clone()),
            });
        }
        Some(d.why.clone())
    }

    /// Replays every pass of the open run on its inputs and names the one that broke the
    /// numbers (`fxray bisect`); calls off a bisect under way.
    pub fn find_the_pass(&mut self, cx: &mut Cx) {
        let Some(ws) = cx.workspace else {
            cx.error("open a run first, then find the pass that broke it");
            return;
        };
        let work = self.bisect.start(ws.index.root.clone());
        cx.spawn::<AccuracyState>(move |out| {
            let msg = work(&|line| out.send(line));
            let (said, request) = (msg.said(), msg.request);
            out.send(msg);
            if let Some(said) = said {
                out.notice(said, move |a| a.bisect.request() == request);
            }
        });
    }

    /// Forgets the golden run.
    pub fn drop_golden(&mut self) {
        self.progress.cancel();
        *self = AccuracyState {
            request: self.request + 1,
            stages: std::mem::take(&mut self.stages),
            bisect: std::mem::take(&mut self.bisect),
            ..AccuracyState::default()
        };
    }
}
