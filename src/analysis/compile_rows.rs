//! The compile story as rows, one per compile attempt (tlparse's `[0/0]` and `[0/0_1]`): what
//! `fxray compiles` prints and the Compiles view lists. Each row has its own status, graphs,
//! output files and `model__N` folder; the last attempt of a compile carries its metrics.

use crate::analysis::compiles::{model_of_attempt, why};
use crate::model::compile::{CompileTrace, MetricGroups, ModelLink, Provenance, Status};
use serde::Serialize;
use std::path::Path;

/// A graph break as a row shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakRow {
    /// `file:line`.
    pub location: Option<String>,
    pub reason: String,
    pub title: String,
    /// Read from a later resume function, not logged as a break (old torch).
    pub inferred: bool,
}

/// How much Inductor's provenance links, over all graphs of the attempt: nodes before and
/// after its passes, and kernels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProvenanceCounts {
    pub pre_grad_nodes: usize,
    pub post_grad_nodes: usize,
    pub kernels: usize,
}

/// The counts over every graph of an attempt; `None` when it logged no provenance.
fn provenance_counts(all: &[Provenance]) -> Option<ProvenanceCounts> {
    if all.is_empty() {
        return None;
    }
    let sum = |f: fn(&Provenance) -> usize| all.iter().map(f).sum();
    Some(ProvenanceCounts {
        pre_grad_nodes: sum(|p| p.pre_to_post.len()),
        post_grad_nodes: sum(|p| p.post_to_pre.len()),
        kernels: sum(|p| p.kernel_to_post.len()),
    })
}

/// One attempt of one compile.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AttemptRow {
    /// Index of the compile in the trace.
    #[serde(skip)]
    pub compile: usize,
    /// `2/1`.
    pub id: String,
    pub attempt: u32,
    /// `[2/1_1]`.
    pub label: String,
    /// This attempt's: `restarted` for an attempt thrown away, else how the compile ended.
    pub status: Status,
    /// The compile's last attempt.
    pub last: bool,
    pub restart_reason: Option<String>,
    pub co_name: Option<String>,
    pub location: Option<String>,
    /// The folder this attempt's graph was written to.
    pub model: Option<String>,
    pub run: Option<String>,
    /// `entire_frame_compile_time_s` (last attempt only: the metrics are the compile's).
    pub time_s: Option<f64>,
    pub graph_break: Option<BreakRow>,
    pub recompile_reason: Option<String>,
    pub guards: usize,
    pub fail_type: Option<String>,
    pub fail_reason: Option<String>,
    pub fail_location: Option<String>,
    /// Why the compile happened, in one line.
    pub why: String,
    /// The graph events of this attempt (`dynamo_output_graph`, …).
    pub graphs: Vec<&'static str>,
    /// Every payload event of this attempt by name (what tlparse lists as its output files).
    pub artifacts: Vec<String>,
    /// The compile's metrics in groups (last attempt only).
    pub metrics: Option<MetricGroups>,
    /// Inductor's provenance counts, when this attempt logged it.
    pub provenance: Option<ProvenanceCounts>,
    pub rank: Option<u32>,
    /// The trace log the row was read from.
    pub trace: String,
}

/// Every attempt of every compile of `trace`, in compile order.
pub fn attempt_rows(source: &Path, trace: &CompileTrace, links: &[ModelLink]) -> Vec<AttemptRow> {
    let mut rows = Vec::new();
    for (i, c) in trace.compiles.iter().enumerate() {
        let why = why(trace, i);
        for a in c.attempts() {
            let last = a.attempt == c.attempt;
            let link = model_of_attempt(links, i, a.attempt);
            // A restarted attempt shows the break it hit; the last, the compile's first break.
            let brk = match a.breaks.first() {
                Some(&b) => Some(&c.breaks[b]),
                None if last => c.breaks.first(),
                None => None,
            };
            rows.push(AttemptRow {
                compile: i,
                id: c.id(),
                attempt: a.attempt,
                label: a.label,
                status: a.status,
                last,
                restart_reason: a.restart_reason,
                co_name: c.co_name().map(str::to_string),
                location: c.location().map(|l| l.to_string()),
                model: link.map(|l| l.model.clone()),
                run: link.map(|l| l.run.clone()),
                time_s: if last { c.time_s() } else { None },
                graph_break: brk.map(|b| BreakRow {
                    location: b.location.as_ref().map(|l| l.to_string()),
                    reason: b.reason.clone(),
                    title: b.title().to_string(),
                    inferred: b.inferred,
                }),
                recompile_reason: c.recompile_reason.clone(),
                guards: if last { c.guard_count() } else { 0 },
                fail_type: last.then(|| c.fail_type().map(str::to_string)).flatten(),
                fail_reason: last.then(|| c.fail_reason().map(str::to_string)).flatten(),
                fail_location: last
                    .then(|| c.fail_location().map(|l| l.to_string()))
                    .flatten(),
                why: why.clone(),
                graphs: a.graphs.iter().map(|&g| c.graphs[g].kind.event()).collect(),
                artifacts: c
                    .outputs
                    .iter()
                    .filter(|(k, _)| *k == a.attempt)
                    .map(|(_, n)| n.clone())
                    .collect(),
                metrics: (last && c.metrics.is_some()).then(|| MetricGroups::of(c)),
                provenance: provenance_counts(&c.provenances(a.attempt)),
                rank: trace.rank,
                trace: source.display().to_string(),
            });
        }
    }
    rows
}

/// Files whose records say the same rank, in one line each (`rank 1 is in 3 files: …`):
/// logs of several ranks gathered in one folder must say which is which.
pub fn rank_clashes(traces: &[(&Path, &CompileTrace)]) -> Vec<String> {
    let mut by_rank: std::collections::BTreeMap<u32, Vec<&Path>> = Default::default();
    for (p, t) in traces {
        if let Some(r) = t.rank {
            by_rank.entry(r).or_default().push(p);
        }
    }
    by_rank
        .into_iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|(r, files)| {
            let names: Vec<String> = files
                .iter()
                .map(|p| {
                    p.file_name()
                        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into())
                })
                .collect();
            format!(
                "rank {r} is in {} files ({}): their compiles are shown apart, by file",
                files.len(),
                names.join(", ")
            )
        })
        .collect()
}
