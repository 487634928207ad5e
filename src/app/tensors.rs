//! Dumped tensors and msprobe statistics of the selected node (issue 6).
//!
//! When a folder opens, its data dumps (and msprobe dumps) are scanned in the background and
//! every `.npy` is summarised once (memory-mapped, never copied): the inspector, the NaN tracer
//! and the overlay then work from memory. A dump elsewhere can be attached to the open run.

use super::jobs::Outbox;
use super::{App, Loading};
use crate::analysis::nan_trace::{self, Bad, MatchQuality, Trace};
use crate::model::fx::FxGraph;
use crate::model::tensor::{
    DumpCatalog, GraphDump, MsprobeStep, RankDump, Slice2d, TensorCompare, TensorSummary,
};
use crate::sources::{data_dump, msprobe};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Files summarised per message: the panel fills in while a large dump is read.
const BATCH: usize = 256;

/// What the app knows and has loaded for this view.
#[derive(Default)]
pub struct TensorsState {
    generation: u64,
    /// Data dumps known so far (those of the opened folder, then attached ones).
    pub catalog: Arc<DumpCatalog>,
    /// Statistics by file, filled in the background.
    pub summaries: HashMap<PathBuf, Result<Arc<TensorSummary>, String>>,
    pub msprobe: Vec<Arc<MsprobeStep>>,
    /// Problems worth a line in the panel (unreadable dump.json, a folder with no dump).
    pub errors: Vec<String>,
    /// Files still to summarise.
    pub pending: usize,
    /// The last NaN/Inf trace: what was asked and what was found.
    pub trace: Option<TraceView>,
    /// The last tensor comparison: (a, b) and its result once done.
    pub compare: Option<TensorCompareView>,
    /// The 2-D slice on show in a heatmap / value table.
    pub slice: Option<SliceView>,
    /// Per node, the largest |Δ| of its first output between a step and the one before, by
    /// (rank, graph, step); `None` while it is computed.
    pub step_diffs: HashMap<StepKey, Option<Arc<HashMap<String, f64>>>>,
    /// msprobe entries linked to the nodes of the pass on screen.
    pub links: Option<super::msprobe_links::MsprobeLinks>,
}

/// A NaN/Inf trace and what it was asked for.
pub struct TraceView {
    pub bad: Bad,
    /// The step searched; `None`: every step of every rank (the cross-rank tracer).
    pub step: Option<u32>,
    pub result: Result<Trace, String>,
    /// Across ranks: where it was found (step, rank) and what the other ranks hold.
    pub found: Option<(u32, u32, String)>,
}

/// (rank, `graph_K`, step).
pub type StepKey = (u32, String, u32);

/// Values read per slice at most: a 1024 × 1024 slice is read whole, a larger one cut.
pub const SLICE_LIMIT: usize = 1 << 20;

pub struct SliceView {
    pub path: PathBuf,
    /// Leading indices asked for.
    pub lead: Vec<u64>,
    pub result: Loading<Arc<Slice2d>>,
}

pub struct TensorCompareView {
    pub a: PathBuf,
    pub b: PathBuf,
    /// `step 0 → step 1`.
    pub label: String,
    pub result: Loading<TensorCompare>,
}

/// Results of this view's background jobs.
pub enum TensorsMsg {
    StepDiffs {
        generation: u64,
        key: StepKey,
        diffs: HashMap<String, f64>,
    },
    Catalog {
        generation: u64,
        catalog: DumpCatalog,
    },
    Summaries {
        generation: u64,
        batch: Vec<(PathBuf, Result<TensorSummary, String>)>,
    },
    Msprobe {
        generation: u64,
        steps: Vec<MsprobeStep>,
        errors: Vec<String>,
    },
    Slice {
        path: PathBuf,
        lead: Vec<u64>,
        result: Result<Slice2d, String>,
    },
    Compared {
        a: PathBuf,
        b: PathBuf,
        result: Result<TensorCompare, String>,
    },
}

impl TensorsState {
    pub fn is_empty(&self) -> bool {
        self.catalog.is_empty() && self.msprobe.is_empty()
    }

    pub fn generation(&self) -> u64 {
        self.generation
    }

    pub fn summary(&self, path: &Path) -> Option<&Result<Arc<TensorSummary>, String>> {
        self.summaries.get(path)
    }

    /// The dump graph (rank, graph) whose node names match `graph` best, with the quality;
    /// on a tie the lowest rank wins.
    pub fn best_match(&self, graph: &FxGraph) -> Option<(&RankDump, &GraphDump, MatchQuality)> {
        let mut best: Option<(&RankDump, &GraphDump, MatchQuality)> = None;
        for r in &self.catalog.ranks {
            for g in &r.graphs {
                let Some(s) = g.steps.first() else { continue };
                let q = nan_trace::match_quality(graph, s);
                if best
                    .as_ref()
                    .is_none_or(|(_, _, bq)| q.score() > bq.score())
                {
                    best = Some((r, g, q));
                }
            }
        }
        best
    }
}

impl super::jobs::Apply<App> for TensorsMsg {
    fn is_current(&self, app: &App) -> bool {
        let t = &app.tensors;
        match self {
            TensorsMsg::Catalog { generation, .. }
            | TensorsMsg::Summaries { generation, .. }
            | TensorsMsg::Msprobe { generation, .. }
            | TensorsMsg::StepDiffs { generation, .. } => *generation == t.generation,
            TensorsMsg::Slice { path, lead, .. } => t
                .slice
                .as_ref()
                .is_some_and(|v| &v.path == path && &v.lead == lead),
            TensorsMsg::Compared { a, b, .. } => {
                t.compare.as_ref().is_some_and(|c| &c.a == a && &c.b == b)
            }
        }
    }

    fn apply(self, app: &mut App) {
        let t = &mut app.tensors;
        match self {
            TensorsMsg::Catalog { catalog, .. } => {
                let mut merged = (*t.catalog).clone();
                merged.ranks.extend(catalog.ranks);
                merged.warnings.extend(catalog.warnings);
                t.pending += catalog_files(&merged) - catalog_files(&t.catalog);
                t.catalog = Arc::new(merged);
            }
            TensorsMsg::Summaries { batch, .. } => {
                t.pending = t.pending.saturating_sub(batch.len());
                for (p, r) in batch {
                    t.summaries.insert(p, r.map(Arc::new));
                }
            }
            TensorsMsg::Msprobe { steps, errors, .. } => {
                t.msprobe.extend(steps.into_iter().map(Arc::new));
                t.errors.extend(errors);
            }
            TensorsMsg::Slice { result, .. } => {
                if let Some(v) = t.slice.as_mut() {
                    v.result = result.map(Arc::new).into();
                }
            }
            TensorsMsg::StepDiffs { key, diffs, .. } => {
                t.step_diffs.insert(key, Some(Arc::new(diffs)));
            }
            TensorsMsg::Compared { result, .. } => {
                if let Some(c) = t.compare.as_mut() {
                    c.result = result.into();
                }
            }
        }
    }
}

impl App {
    /// Forgets the dumps of the previous folder and reads those the new index found.
    pub(super) fn load_dumps(&mut self) {
        let Some(ws) = &self.workspace else { return };
        let ranks: Vec<PathBuf> = ws.index.data_dumps.iter().map(|d| d.path.clone()).collect();
        let probes: Vec<(PathBuf, u32, String)> = ws
            .index
            .msprobe
            .iter()
            .map(|m| (m.path.clone(), m.step, m.who.clone()))
            .collect();
        let generation = self.tensors.generation + 1;
        self.tensors = TensorsState {
            generation,
            ..Default::default()
        };
        if ranks.is_empty() && probes.is_empty() {
            return;
        }
        self.jobs.spawn(move |out| {
            let mut steps = Vec::new();
            let mut errors = Vec::new();
            for (p, step, who) in probes {
                match msprobe::read(&p, step, &who) {
                    Ok(s) => steps.push(s),
                    Err(e) => errors.push(e.to_string()),
                }
            }
            out.send(TensorsMsg::Msprobe {
                generation,
                steps,
                errors,
            });
            if !ranks.is_empty() {
                read_catalog(data_dump::scan_ranks(&ranks), generation, out);
            }
        });
    }

    /// Attaches a data dump or msprobe dump found under `path` to the open run.
    pub fn attach_dump(&mut self, path: &Path) {
        let generation = self.tensors.generation;
        let path = path.to_path_buf();
        self.jobs.spawn(move |out| attach(&path, generation, out));
    }

    /// Asks for a dump folder (native dialog, on the job's thread) and attaches it.
    pub fn pick_and_attach_dump(&mut self) {
        let generation = self.tensors.generation;
        self.jobs.spawn(move |out| {
            let picked = rfd::FileDialog::new()
                .set_title("Attach a data dump (worldsize*_global_rank*) or msprobe dump")
                .pick_folder();
            if let Some(p) = picked {
                attach(&p, generation, out);
            }
        });
    }

    /// Runs the NaN/Inf tracer on the pass on screen (the best-matching dump graph, in `rank`
    /// when given) and selects the node it finds.
    pub fn trace_first(&mut self, bad: Bad, rank: Option<u32>, step: u32) {
        let Some(ph) = &self.phase else { return };
        let Some(graph) = ph.current_file().and_then(|f| f.graphs.first()) else {
            return;
        };
        let t = &self.tensors;
        let result = match t.best_match(graph) {
            None => Err("no data dump matches this graph".to_string()),
            Some((_, g, _)) => match rank
                .and_then(|r| t.catalog.graph(r, &g.name))
                .unwrap_or(g)
                .steps
                .iter()
                .find(|s| s.step == step)
            {
                None => Err(format!("no step {step} in the dump")),
                Some(s) => {
                    let look = |p: &Path| {
                        t.summaries
                            .get(p)
                            .and_then(|r| r.as_ref().ok())
                            .map(|s| &s.stats)
                    };
                    nan_trace::first_bad(s, Some(graph), bad, &look).ok_or_else(|| {
                        format!("no dumped output holds {} in step {step}", bad.label())
                    })
                }
            },
        };
        let node = result.as_ref().ok().map(|t| t.node.clone());
        self.tensors.trace = Some(TraceView {
            bad,
            step: Some(step),
            result,
            found: None,
        });
        if let Some(n) = node {
            self.reveal_node(n);
        }
    }

    /// The cross-rank tracer: the first (step, rank, node) whose outputs hold `bad`, over every
    /// rank that dumped the graph matching the pass on screen; selects the node. The summaries
    /// are in memory already: this walks a few maps, like `trace_first`.
    pub fn trace_across(&mut self, bad: Bad) {
        let Some(ph) = &self.phase else { return };
        let Some(graph) = ph.current_file().and_then(|f| f.graphs.first()) else {
            return;
        };
        let t = &self.tensors;
        let look = |p: &Path| {
            t.summaries
                .get(p)
                .and_then(|r| r.as_ref().ok())
                .map(|s| &s.stats)
        };
        let found = t.best_match(graph).and_then(|(_, g, _)| {
            let per_rank: Vec<(u32, &GraphDump)> = t
                .catalog
                .ranks
                .iter()
                .filter_map(|r| Some((r.rank, r.graphs.iter().find(|x| x.name == g.name)?)))
                .collect();
            let mut steps: Vec<u32> = per_rank
                .iter()
                .flat_map(|(_, d)| d.steps.iter().map(|s| s.step))
                .collect();
            steps.sort();
            steps.dedup();
            steps.into_iter().find_map(|step| {
                let here: Vec<(u32, &crate::model::tensor::StepDump)> = per_rank
                    .iter()
                    .filter_map(|(r, d)| Some((*r, d.steps.iter().find(|s| s.step == step)?)))
                    .collect();
                nan_trace::first_bad_in_step(step, &here, Some(graph), bad, &look)
            })
        });
        let view = match found {
            Some(rt) => TraceView {
                bad,
                step: Some(rt.step),
                found: Some((rt.step, rt.rank, rt.describe())),
                result: Ok(rt.trace),
            },
            None => TraceView {
                bad,
                step: None,
                result: Err(format!(
                    "no dumped output holds {} on any rank",
                    bad.label()
                )),
                found: None,
            },
        };
        let node = view.result.as_ref().ok().map(|t| t.node.clone());
        self.tensors.trace = Some(view);
        if let Some(n) = node {
            self.reveal_node(n);
        }
    }

    /// Reads the 2-D slice of `path` at leading indices `lead` in the background (once).
    pub fn load_slice(&mut self, path: PathBuf, lead: Vec<u64>) {
        if self
            .tensors
            .slice
            .as_ref()
            .is_some_and(|v| v.path == path && v.lead == lead)
        {
            return;
        }
        self.tensors.slice = Some(SliceView {
            path: path.clone(),
            lead: lead.clone(),
            result: Loading::Loading,
        });
        self.jobs.spawn(move |out| {
            let result = crate::pipeline::tensors::slice(&path, &lead, SLICE_LIMIT)
                .map_err(|e| e.to_string());
            out.send(TensorsMsg::Slice { path, lead, result });
        });
    }

    /// Computes, in the background, how much each node's output changed from the step before
    /// `step` (for the graph overlay). Asked once per (rank, graph, step).
    pub fn request_step_diffs(&mut self, rank: u32, graph: &str, step: u32) {
        let key: StepKey = (rank, graph.to_string(), step);
        if self.tensors.step_diffs.contains_key(&key) {
            return;
        }
        let pairs = self.tensors.catalog.graph(rank, graph).and_then(|g| {
            let i = g.steps.iter().position(|s| s.step == step)?;
            let before = g.steps.get(i.checked_sub(1)?)?;
            Some(crate::analysis::tensor_overlay::step_pairs(
                before,
                &g.steps[i],
            ))
        });
        let Some(pairs) = pairs else { return };
        self.tensors.step_diffs.insert(key.clone(), None);
        let generation = self.tensors.generation;
        self.jobs.spawn(move |out| {
            use rayon::prelude::*;
            let diffs = pairs
                .par_iter()
                .filter_map(|(node, a, b)| {
                    let c = crate::pipeline::tensors::compare(a, b).ok()?;
                    Some((node.clone(), c.max_abs_diff))
                })
                .collect();
            out.send(TensorsMsg::StepDiffs {
                generation,
                key,
                diffs,
            });
        });
    }

    /// Compares two dumps of one tensor (two steps or two ranks) in the background.
    pub fn compare_tensors(&mut self, a: PathBuf, b: PathBuf, label: String) {
        if self
            .tensors
            .compare
            .as_ref()
            .is_some_and(|c| c.a == a && c.b == b)
        {
            return;
        }
        self.tensors.compare = Some(TensorCompareView {
            a: a.clone(),
            b: b.clone(),
            label,
            result: Loading::Loading,
        });
        self.jobs.spawn(move |out| {
            let result = crate::pipeline::tensors::compare(&a, &b).map_err(|e| e.to_string());
            out.send(TensorsMsg::Compared { a, b, result });
        });
    }
}

fn catalog_files(c: &DumpCatalog) -> usize {
    c.files().count()
}

fn attach(path: &Path, generation: u64, out: &Outbox<App>) {
    let (steps, mut errors) = msprobe::scan(path);
    let catalog = data_dump::scan(path);
    if catalog.is_err() && steps.is_empty() {
        errors.push(format!(
            "{}: no data dump or msprobe dump found",
            path.display()
        ));
    }
    out.send(TensorsMsg::Msprobe {
        generation,
        steps,
        errors,
    });
    if let Ok(c) = catalog {
        read_catalog(c, generation, out);
    }
}

/// Sends the catalog, then the statistics of its files in batches.
fn read_catalog(catalog: DumpCatalog, generation: u64, out: &Outbox<App>) {
    let paths: Vec<PathBuf> = catalog.files().map(|f| f.path.clone()).collect();
    out.send(TensorsMsg::Catalog {
        generation,
        catalog,
    });
    for chunk in paths.chunks(BATCH) {
        let batch = crate::pipeline::tensors::summarize_all(chunk)
            .into_iter()
            .map(|(p, r)| (p, r.map_err(|e| e.to_string())))
            .collect();
        out.send(TensorsMsg::Summaries { generation, batch });
    }
}
