//! The model folders a trace log can be joined to: the `dynamo_out_graph.txt` of every
//! npugraph_ex `model__N`, or the `fx_graph_readable.py` of every stock Inductor
//! `model__N_forward|inference_*` (its AOT graph), of the runs written by the same process (by
//! pid; else the same rank; else every run of the tree).

use crate::model::compile::{CompileTrace, ModelGraph};
use crate::model::index::{DebugIndex, Run};
use crate::sources::read;

/// Dynamo graphs are small; a bigger file is not one.
const MAX_GRAPH_BYTES: u64 = 64 * 1024 * 1024;

/// The runs of `index` a trace belongs to.
pub fn runs_of<'a>(index: &'a DebugIndex, trace: &CompileTrace) -> Vec<&'a Run> {
    let matching = |key: fn(&Run) -> Option<u32>, want: Option<u32>| -> Vec<&'a Run> {
        match want {
            Some(w) => index.runs.iter().filter(|r| key(r) == Some(w)).collect(),
            None => Vec::new(),
        }
    };
    let by_pid = matching(|r| r.pid, trace.pid);
    if !by_pid.is_empty() {
        return by_pid;
    }
    let by_rank = matching(|r| r.rank, trace.rank);
    if !by_rank.is_empty() {
        return by_rank;
    }
    index.runs.iter().collect()
}

/// Reads the Dynamo graph of every model of the trace's runs; unreadable files are skipped
/// (the model then stays unjoined).
pub fn model_graphs(index: &DebugIndex, trace: &CompileTrace) -> Vec<ModelGraph> {
    let mut out = Vec::new();
    for run in runs_of(index, trace) {
        for m in &run.models {
            let (path, aot) = match &m.dynamo_graph {
                Some(p) => (p, false),
                None => match aot_graph(m) {
                    Some(p) => (p, true),
                    None => continue,
                },
            };
            if let Ok(file) = read::read_text_limited(path, MAX_GRAPH_BYTES) {
                out.push(ModelGraph {
                    name: m.name.clone(),
                    number: m.number,
                    run: run.name.clone(),
                    text: file.text,
                    aot,
                });
            }
        }
    }
    out
}

/// Stock Inductor: the `fx_graph_readable.py` of the model's forward (or inference) phase.
fn aot_graph(m: &crate::model::index::Model) -> Option<&std::path::PathBuf> {
    m.phases
        .iter()
        .filter(|p| matches!(p.name.as_str(), "forward" | "inference" | "graph"))
        .flat_map(|p| &p.passes)
        .map(|p| &p.path)
        .find(|p| p.file_name().is_some_and(|n| n == "fx_graph_readable.py"))
}
