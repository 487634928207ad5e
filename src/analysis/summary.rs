//! The summary of an index with per-graph facts: what `fxray summary` prints and what the run
//! tree shows next to each entry.

use super::diff::DiffCounts;
use super::graph_facts::GraphFacts;
use crate::model::index::*;
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Serialize)]
pub struct Summary {
    pub root: PathBuf,
    pub opened: OpenedKind,
    pub files_seen: usize,
    pub runs: Vec<RunSummary>,
    /// Ranks of one launch (`model::launch`), with the graphs where a rank differs.
    pub launches: Vec<LaunchSummary>,
    /// Graph files outside any run.
    pub graphs: Vec<GraphSummary>,
    pub captures: Vec<CaptureFile>,
    pub data_dumps: Vec<DataDump>,
    pub msprobe: Vec<MsprobeDump>,
    pub autotune: Vec<KernelDir>,
    pub traces: Vec<PathBuf>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct LaunchSummary {
    pub name: String,
    pub root: PathBuf,
    pub ranks: Vec<u32>,
    /// `model__0 forward 000 graph: rank 2`, for every graph file where a rank differs.
    pub differs: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct RunSummary {
    pub name: String,
    pub path: PathBuf,
    pub time: Option<String>,
    pub pid: Option<u32>,
    pub rank: Option<u32>,
    pub siblings: Vec<String>,
    pub models: Vec<ModelSummary>,
    pub logs: Vec<LogFile>,
}

#[derive(Debug, Serialize)]
pub struct ModelSummary {
    pub name: String,
    pub backend: Backend,
    pub path: PathBuf,
    pub orphan: bool,
    pub graph_name: Option<String>,
    /// `its backward is in model__1`: its backward was written into another model's folder
    /// (`Run::model_note`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub dynamo_graph: Option<GraphSummary>,
    pub phases: Vec<PhaseSummary>,
    pub captures: Vec<CaptureFile>,
}

#[derive(Debug, Serialize)]
pub struct PhaseSummary {
    pub name: String,
    pub path: PathBuf,
    pub output_code: Option<PathBuf>,
    pub passes: Vec<GraphSummary>,
    pub artifacts: Vec<PathBuf>,
    /// Whose backward its files are when not its model's (docs/formats.md §1.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backward_of: Option<BackwardOf>,
    /// `backward of model__0 (written into model__1)` (`Run::phase_note`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct GraphSummary {
    pub index: u32,
    pub name: String,
    pub path: PathBuf,
    pub size: u64,
    pub nodes: usize,
    pub subgraph_nodes: usize,
    pub unparsed: usize,
    pub status: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<String>,
    /// What the pass changed from the one before it in its phase (absent for a first pass, or
    /// when either file could not be read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<PassDiff>,
}

/// A pass's change to the previous one, as the summary shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PassDiff {
    pub added: usize,
    pub removed: usize,
    pub changed: usize,
    pub renamed: usize,
}

impl From<DiffCounts> for PassDiff {
    fn from(c: DiffCounts) -> Self {
        PassDiff {
            added: c.added,
            removed: c.removed,
            changed: c.changed,
            renamed: c.renamed,
        }
    }
}

impl Summary {
    /// `facts` has an entry for every graph file of the index (see `DebugIndex::graph_files`);
    /// `diffs` the diff counts of every pass but the first of its phase against the one before.
    pub fn build(
        index: &DebugIndex,
        facts: &HashMap<PathBuf, GraphFacts>,
        diffs: &HashMap<PathBuf, DiffCounts>,
    ) -> Summary {
        let graph = |p: &PassFile| {
            let mut g = graph_summary(p, facts.get(&p.path));
            g.diff = diffs.get(&p.path).copied().map(PassDiff::from);
            g
        };
        let warnings = index
            .warnings
            .iter()
            .cloned()
            .chain(problem_lines(facts))
            .collect();
        Summary {
            root: index.root.clone(),
            opened: index.opened,
            files_seen: index.files_seen,
            runs: index
                .runs
                .iter()
                .map(|r| RunSummary {
                    name: r.name.clone(),
                    path: r.path.clone(),
                    time: r.time.clone(),
                    pid: r.pid,
                    rank: r.rank,
                    siblings: r.siblings.clone(),
                    logs: r.logs.clone(),
                    models: r
                        .models
                        .iter()
                        .map(|m| ModelSummary {
                            name: m.name.clone(),
                            backend: m.backend,
                            path: m.path.clone(),
                            orphan: m.is_orphan(),
                            graph_name: m.graph_name.clone(),
                            note: r.model_note(m),
                            dynamo_graph: m.dynamo_graph.as_ref().map(|p| {
                                graph(&PassFile {
                                    index: 0,
                                    name: "dynamo_out_graph".into(),
                                    path: p.clone(),
                                    size: 0,
                                })
                            }),
                            phases: m
                                .phases
                                .iter()
                                .map(|ph| PhaseSummary {
                                    name: ph.name.clone(),
                                    path: ph.path.clone(),
                                    output_code: ph.output_code.clone(),
                                    passes: ph.passes.iter().map(graph).collect(),
                                    artifacts: ph.artifacts.clone(),
                                    backward_of: ph.backward_of.clone(),
                                    note: r.phase_note(m, ph),
                                })
                                .collect(),
                            captures: m.captures.clone(),
                        })
                        .collect(),
                })
                .collect(),
            launches: index
                .launches
                .iter()
                .map(|l| {
                    let m = super::ranks::matrix(index, l, facts);
                    LaunchSummary {
                        name: l.name.clone(),
                        root: l.root.clone(),
                        ranks: m.ranks.clone(),
                        differs: m
                            .passes
                            .iter()
                            .filter_map(super::ranks::RankRow::differs_text)
                            .collect(),
                    }
                })
                .collect(),
            graphs: index.loose_graphs.iter().map(graph).collect(),
            captures: index.loose_captures.clone(),
            data_dumps: index.data_dumps.clone(),
            msprobe: index.msprobe.clone(),
            autotune: index.autotune.clone(),
            traces: index.traces.clone(),
            warnings,
        }
    }
}

fn graph_summary(p: &PassFile, facts: Option<&GraphFacts>) -> GraphSummary {
    let missing = GraphFacts::unreadable("not parsed".into());
    let f = facts.unwrap_or(&missing);
    GraphSummary {
        index: p.index,
        name: p.name.clone(),
        path: p.path.clone(),
        size: p.size,
        nodes: f.nodes,
        subgraph_nodes: f.subgraph_nodes,
        unparsed: f.unparsed,
        status: f.status(),
        problems: f.problems.clone(),
        diff: None,
    }
}

/// One warning line per graph file with problems, in path order.
fn problem_lines(facts: &HashMap<PathBuf, GraphFacts>) -> Vec<String> {
    let mut paths: Vec<&Path> = facts
        .iter()
        .filter(|(_, f)| f.unparsed > 0 || !f.problems.is_empty())
        .map(|(p, _)| p.as_path())
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let f = &facts[p];
            let mut parts: Vec<String> = f.problems.clone();
            if f.unparsed > 0 {
                parts.push(format!("{} line(s) not understood", f.unparsed));
            }
            format!("{}: {}", p.display(), parts.join("; "))
        })
        .collect()
}
