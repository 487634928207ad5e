//! What a debug folder holds, by name only: runs → models → phases → passes, plus captures,
//! logs and data dumps. Built by `sources::discover` without reading file contents, so it is
//! cheap to build and to update file by file.

use serde::Serialize;
use std::path::{Path, PathBuf};

/// The kind of folder the user opened, as detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OpenedKind {
    /// A folder holding `torch_compile_debug/` or several artifact kinds (a case folder).
    Workspace,
    /// `torch_compile_debug/` itself.
    DebugRoot,
    /// One `run_*` folder.
    Run,
    /// `npugraph_ex/`, `torchair/` or `torchinductor/` inside a run.
    Backend,
    /// One `model__N` / `compile__N` folder.
    Model,
    /// One phase folder (`forward`, `backward`, …) or one Inductor `model__N_<kind>_<a>.<b>`.
    Phase,
    /// A single graph file.
    GraphFile,
    /// A data-dump root `worldsize*_global_rank*` (or its parent).
    DataDump,
    /// An msprobe dump root (`step*/rank*|pid*/dump.json`).
    Msprobe,
    /// An AscendC `autofused_*` kernel folder.
    Autotune,
    /// Anything else that still held something we know.
    Other,
}

#[derive(Debug, Clone, Serialize)]
pub struct DebugIndex {
    /// The path as the user gave it.
    pub root: PathBuf,
    pub opened: OpenedKind,
    pub runs: Vec<Run>,
    /// Runs of the same distributed launch, grouped by rank (`model::launch`).
    pub launches: Vec<Launch>,
    /// Graph files that belong to no run (a single opened file, loose `.txt`/`.py` dumps).
    pub loose_graphs: Vec<PassFile>,
    /// Capture JSON files that belong to no model.
    pub loose_captures: Vec<CaptureFile>,
    pub data_dumps: Vec<DataDump>,
    pub msprobe: Vec<MsprobeDump>,
    pub autotune: Vec<KernelDir>,
    /// `tlparse/dedicated_log_torch_trace_*.log` files.
    pub traces: Vec<PathBuf>,
    /// Things the user should know: unreadable folders, names we did not understand, …
    pub warnings: Vec<String>,
    /// Files seen in total (for the status bar and benchmarks).
    pub files_seen: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Run {
    /// Folder name, e.g. `run_2026_11_29_11_47_50_921376-pid_1296-rank_0`.
    pub name: String,
    pub path: PathBuf,
    /// `2026-11-29 11:47:50.921376`, from the folder name.
    pub time: Option<String>,
    pub pid: Option<u32>,
    /// The `-rank_R` suffix npugraph_ex adds once torch.distributed is up.
    pub rank: Option<u32>,
    /// Other run folders written by the same process (with/without the rank suffix).
    pub siblings: Vec<String>,
    pub models: Vec<Model>,
    pub logs: Vec<LogFile>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    NpugraphEx,
    Torchair,
    Inductor,
}

#[derive(Debug, Clone, Serialize)]
pub struct Model {
    /// `model__0`, `compile__0`.
    pub name: String,
    pub number: i64,
    pub backend: Backend,
    /// The model folder (npugraph_ex) or the `torchinductor/` folder holding its phase folders.
    pub path: PathBuf,
    /// `dynamo_out_graph.txt` (npugraph_ex only).
    pub dynamo_graph: Option<PathBuf>,
    pub phases: Vec<Phase>,
    /// Capture JSON joined to this model by `graph_K` (see `sources::discover::join_captures`),
    /// or found in its folder when no join was possible.
    pub captures: Vec<CaptureFile>,
    /// `graph_K` from `output_code.py`'s `fx_graph_name`, once joined.
    pub graph_name: Option<String>,
}

impl Model {
    /// A model folder with only `dynamo_out_graph.txt`: Dynamo restarted its analysis.
    pub fn is_orphan(&self) -> bool {
        self.phases.is_empty() && self.captures.is_empty()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Phase {
    /// `forward`, `backward`, `inference`, `compile_fx`, …
    pub name: String,
    pub path: PathBuf,
    /// Graph dumps in execution order.
    pub passes: Vec<PassFile>,
    pub output_code: Option<PathBuf>,
    /// Other files of the phase (Inductor `ir_*.txt`, `fx_graph_runnable.py`, provenance JSON, …).
    pub artifacts: Vec<PathBuf>,
    /// Inductor only: `<a>.<b>` of `model__N_<kind>_<a>.<b>`.
    pub inductor_id: Option<String>,
    /// A backward whose files are not its own model's (docs/formats.md §1.2): read from the
    /// files after the index is built (`pipeline::backward_owner`), `None` until then and for
    /// a backward that is its own model's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backward_of: Option<BackwardOf>,
}

/// Whose backward the files of a backward phase are, when not its own model's.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "is")]
pub enum BackwardOf {
    /// Another model's: its forward returns the values this backward reads. Compiled lazily
    /// during `.backward()`, it was written into the latest model folder.
    Model {
        /// The model folder whose backward it is, and its name.
        path: PathBuf,
        name: String,
        /// Models whose forward is the same graph (it may be theirs as well).
        alike: Vec<String>,
    },
    /// No forward of the run returns enough of the values it reads: whose it is cannot be
    /// told. `nearest`: the model that comes nearest and the share of them it returns (`None`
    /// when none returns any).
    CannotTell { nearest: Option<(String, f64)> },
}

impl Phase {
    /// Inductor's provenance JSON among the phase's files, when it tracked provenance.
    pub fn provenance(&self) -> Option<&Path> {
        let want = format!("{}.json", crate::model::compile::PROVENANCE_ARTIFACT);
        self.artifacts
            .iter()
            .find(|a| a.file_name().is_some_and(|n| n.to_string_lossy() == want))
            .map(PathBuf::as_path)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PassFile {
    /// Execution order: the `NNN` prefix (npugraph_ex), 0/1 for Inductor readable/transformed.
    pub index: u32,
    /// Pass name: `view_to_reshape`; `graph` for the first dump (`000_aot_forward_graph.txt`);
    /// `fx_graph_readable` / `fx_graph_transformed` for Inductor.
    pub name: String,
    pub path: PathBuf,
    pub size: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CaptureKind {
    Raw,
    Aligned,
    Filtered,
    DeadlockCheck,
}

#[derive(Debug, Clone, Serialize)]
pub struct CaptureFile {
    pub path: PathBuf,
    pub kind: CaptureKind,
    /// `graph_K`.
    pub graph: String,
    /// Python `id()` of the NPUGraph; equals `AclGraph{id: …}` in debug.log.
    pub id: String,
    /// Local device index (not the global rank).
    pub device: u32,
    pub pid: u32,
    pub ts: String,
    pub size: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LogKind {
    /// `npugraph_ex/debug.log` or `torchair/debug.log`.
    Backend,
    /// `torchdynamo/debug.log`.
    Dynamo,
    /// `torchinductor/aot_*_debug.log` and per-model Inductor logs.
    Inductor,
}

#[derive(Debug, Clone, Serialize)]
pub struct LogFile {
    pub kind: LogKind,
    pub path: PathBuf,
    pub size: u64,
}

/// A TorchAir/npugraph_ex npy data dump: `worldsize<W>_global_rank<R>/graph_<K>/<step>/*.npy`.
#[derive(Debug, Clone, Serialize)]
pub struct DataDump {
    pub path: PathBuf,
    pub world_size: u32,
    pub rank: u32,
    pub graphs: Vec<DumpGraph>,
}

impl DataDump {
    /// The folder holding the rank folder: what names a dump (`data_dump`, or a run's
    /// `dump_original` beside its `dump_optimized`), and where a stage compare finds it.
    pub fn folder(&self) -> &std::path::Path {
        self.path.parent().unwrap_or(&self.path)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DumpGraph {
    /// `graph_K`.
    pub name: String,
    /// (step, number of `.npy` files).
    pub steps: Vec<(u32, usize)>,
}

/// msprobe statistics: `<root>/step<N>/<proc<PID>|rank<R>|pid<P>>/dump.json`.
#[derive(Debug, Clone, Serialize)]
pub struct MsprobeDump {
    pub path: PathBuf,
    pub step: u32,
    /// `rank0` or `pid3064`.
    pub who: String,
}

/// An AscendC `autofused_*` kernel folder.
#[derive(Debug, Clone, Serialize)]
pub struct KernelDir {
    pub name: String,
    pub path: PathBuf,
    pub files: Vec<String>,
}

/// What a phase computes, from its folder's kind name (npugraph_ex's `forward/`, Inductor's
/// `model__0_backward_3.1`: both say `backward`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseKind {
    Forward,
    Backward,
    Inference,
    /// `joint`, `compile_fx`, `default`, …
    Other,
}

impl PhaseKind {
    pub fn of_name(name: &str) -> Self {
        match name {
            "forward" => PhaseKind::Forward,
            "backward" => PhaseKind::Backward,
            "inference" => PhaseKind::Inference,
            _ => PhaseKind::Other,
        }
    }

    /// The kind of the phase folder `path` lies in, from folder names alone: npugraph_ex's
    /// `model__0/backward/`, Inductor's `model__0_backward_3.1/`.
    pub fn of_path(path: &std::path::Path) -> Option<Self> {
        path.ancestors().find_map(|p| {
            let name = p.file_name()?.to_str()?;
            let kind = match name.strip_prefix("model__") {
                // `model__0_backward_3.1`: the kind is the middle word.
                Some(rest) => rest.split('_').nth(1)?,
                None => name,
            };
            Some(PhaseKind::of_name(kind)).filter(|k| *k != PhaseKind::Other)
        })
    }
}

impl Phase {
    pub fn kind(&self) -> PhaseKind {
        PhaseKind::of_name(&self.name)
    }
}

impl DebugIndex {
    /// Keeps what `from` (an earlier index of the same tree) said of whose backward each
    /// phase is, for the phases both have: a watched tree's index is rebuilt from names alone.
    pub fn keep_backward_of(&mut self, from: &DebugIndex) {
        let known: std::collections::HashMap<&Path, &BackwardOf> = from
            .phases()
            .filter_map(|p| Some((p.path.as_path(), p.backward_of.as_ref()?)))
            .collect();
        for p in self
            .runs
            .iter_mut()
            .flat_map(|r| &mut r.models)
            .flat_map(|m| &mut m.phases)
        {
            if let Some(b) = known.get(p.path.as_path()) {
                p.backward_of = Some((*b).clone());
            }
        }
    }
}

impl Run {
    /// What the run tree and `fxray summary` say beside `phase` of `model` when its files are
    /// another model's backward: `backward of model__0 (written into model__1)`.
    pub fn phase_note(&self, model: &Model, phase: &Phase) -> Option<String> {
        match phase.backward_of.as_ref()? {
            BackwardOf::Model { name, alike, .. } if alike.is_empty() => {
                Some(format!("backward of {name} (written into {})", model.name))
            }
            BackwardOf::Model { name, alike, .. } => Some(format!(
                "backward of {name} (written into {}; the forward of {} is the same graph)",
                model.name,
                alike.join(", ")
            )),
            BackwardOf::CannotTell { nearest } => Some(match nearest {
                Some((m, share)) => format!(
                    "whose backward cannot be told: no forward returns the values it reads \
                     (nearest: {m}, {:.0} %)",
                    100.0 * share
                ),
                None => "whose backward cannot be told: no forward returns the values it reads"
                    .to_string(),
            }),
        }
    }

    /// What they say beside a model whose backward was written into other models' folders:
    /// `its backward is in model__1`.
    pub fn model_note(&self, model: &Model) -> Option<String> {
        let into: Vec<&str> = self
            .models
            .iter()
            .filter(|m| {
                m.phases.iter().any(|p| {
                    matches!(&p.backward_of, Some(BackwardOf::Model { path, .. }) if *path == model.path)
                })
            })
            .map(|m| m.name.as_str())
            .collect();
        (!into.is_empty()).then(|| format!("its backward is in {}", into.join(", ")))
    }
}

impl Model {
    /// The phase `phase` reads its activations from: the forward, for a backward.
    pub fn forward_of(&self, phase: &Phase) -> Option<&Phase> {
        (phase.kind() == PhaseKind::Backward)
            .then(|| self.phases.iter().find(|p| p.kind() == PhaseKind::Forward))
            .flatten()
    }
}

/// Where a path sits in the index: indices into `runs`, its `models`, `phases` and `passes`.
/// `phase` is `None` for a model's Dynamo graph; `pass` is `None` for a phase folder itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    pub run: usize,
    pub model: Option<usize>,
    pub phase: Option<usize>,
    pub pass: Option<usize>,
}

impl DebugIndex {
    /// The run, model, phase and pass of `path` (a pass file, a Dynamo graph, a phase, model or
    /// run folder, or any file under one).
    pub fn locate(&self, path: &std::path::Path) -> Option<Location> {
        let run = self.runs.iter().position(|r| path.starts_with(&r.path))?;
        let mut at = Location {
            run,
            model: None,
            phase: None,
            pass: None,
        };
        for (mi, m) in self.runs[run].models.iter().enumerate() {
            if m.dynamo_graph.as_deref() == Some(path) {
                at.model = Some(mi);
                return Some(at);
            }
            for (pi, ph) in m.phases.iter().enumerate() {
                if let Some(k) = ph.passes.iter().position(|p| p.path == path) {
                    (at.model, at.phase, at.pass) = (Some(mi), Some(pi), Some(k));
                    return Some(at);
                }
                if path.starts_with(&ph.path) {
                    (at.model, at.phase) = (Some(mi), Some(pi));
                    return Some(at);
                }
            }
            if path.starts_with(&m.path) {
                at.model = Some(mi);
                return Some(at);
            }
        }
        Some(at)
    }

    /// The phase at `path` (see [`DebugIndex::locate`]).
    pub fn phase_at(&self, path: &std::path::Path) -> Option<&Phase> {
        let at = self.locate(path)?;
        self.runs[at.run]
            .models
            .get(at.model?)?
            .phases
            .get(at.phase?)
    }

    /// The launch that run index `run` belongs to, with its rank there.
    pub fn launch_of(&self, run: usize) -> Option<(&Launch, u32)> {
        self.launches
            .iter()
            .find_map(|l| l.rank_of_run(run).map(|r| (l, r)))
    }

    pub fn new(root: PathBuf, opened: OpenedKind) -> Self {
        DebugIndex {
            root,
            opened,
            runs: Vec::new(),
            launches: Vec::new(),
            loose_graphs: Vec::new(),
            loose_captures: Vec::new(),
            data_dumps: Vec::new(),
            msprobe: Vec::new(),
            autotune: Vec::new(),
            traces: Vec::new(),
            warnings: Vec::new(),
            files_seen: 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
            && self.loose_graphs.is_empty()
            && self.loose_captures.is_empty()
            && self.data_dumps.is_empty()
            && self.msprobe.is_empty()
            && self.autotune.is_empty()
    }

    /// The graph to show first: the first pass of the first phase, else any graph. A launch
    /// opens on its lowest rank (its folders sort by start time, so rank 1's may come first).
    pub fn default_graph(&self) -> Option<&std::path::Path> {
        let mut runs: Vec<&Run> = self.runs.iter().collect();
        runs.sort_by_key(|r| r.rank.unwrap_or(0));
        let first_pass = runs
            .into_iter()
            .flat_map(|r| &r.models)
            .flat_map(|m| &m.phases)
            .find_map(|p| p.passes.first());
        first_pass
            .map(|p| p.path.as_path())
            .or_else(|| self.graph_files().next())
    }

    /// What `path` is to this index (`pass`, `capture`, `log`, …; `other` when unknown), for
    /// people reading a change feed.
    pub fn role_of(&self, path: &std::path::Path) -> &'static str {
        for run in &self.runs {
            if run.logs.iter().any(|l| l.path == path) {
                return "log";
            }
            for m in &run.models {
                if m.dynamo_graph.as_deref() == Some(path) {
                    return "dynamo_graph";
                }
                if m.captures.iter().any(|c| c.path == path) {
                    return "capture";
                }
                for ph in &m.phases {
                    if ph.passes.iter().any(|p| p.path == path) {
                        return "pass";
                    }
                    if ph.output_code.as_deref() == Some(path) {
                        return "output_code";
                    }
                }
            }
        }
        let under = |p: &std::path::Path| path.starts_with(p);
        if self.loose_graphs.iter().any(|g| g.path == path) {
            "graph"
        } else if self.loose_captures.iter().any(|c| c.path == path) {
            "capture"
        } else if self.msprobe.iter().any(|m| under(&m.path)) {
            "msprobe"
        } else if self.data_dumps.iter().any(|d| under(&d.path)) {
            "data_dump"
        } else if self.autotune.iter().any(|k| under(&k.path)) {
            "kernel"
        } else if self.traces.iter().any(|t| t == path) {
            "trace"
        } else {
            "other"
        }
    }

    /// Every phase of every model of every run, in tree order.
    pub fn phases(&self) -> impl Iterator<Item = &Phase> {
        self.runs
            .iter()
            .flat_map(|r| &r.models)
            .flat_map(|m| &m.phases)
    }

    /// Every graph file, in tree order: (run, model, phase, pass) or loose.
    pub fn graph_files(&self) -> impl Iterator<Item = &std::path::Path> {
        let in_runs = self.runs.iter().flat_map(|r| {
            r.models.iter().flat_map(|m| {
                m.dynamo_graph.iter().map(|p| p.as_path()).chain(
                    m.phases
                        .iter()
                        .flat_map(|ph| ph.passes.iter().map(|p| p.path.as_path())),
                )
            })
        });
        in_runs.chain(self.loose_graphs.iter().map(|p| p.path.as_path()))
    }
}

/// The ranks of one distributed launch (grouped by `model::launch::group`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Launch {
    /// `run_2026_11_29_11_47_50_912229`: the earliest rank folder's name up to `-pid_`.
    pub name: String,
    /// The folder holding the rank folders (`torch_compile_debug/`).
    pub root: PathBuf,
    /// By rank, ascending.
    pub ranks: Vec<LaunchRank>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct LaunchRank {
    pub rank: u32,
    /// Index into `DebugIndex::runs`.
    pub run: usize,
    pub path: PathBuf,
}

impl Launch {
    pub fn rank_numbers(&self) -> Vec<u32> {
        self.ranks.iter().map(|r| r.rank).collect()
    }

    /// The run index of `rank`.
    pub fn run_of(&self, rank: u32) -> Option<usize> {
        self.ranks.iter().find(|r| r.rank == rank).map(|r| r.run)
    }

    /// The rank of run index `run`, when it belongs to this launch.
    pub fn rank_of_run(&self, run: usize) -> Option<u32> {
        self.ranks.iter().find(|r| r.run == run).map(|r| r.rank)
    }
}
