//! The facts of graph files (counts, problems, fingerprint): what the run tree shows of every
//! pass and the rank matrix compares. Files on a server are parsed there by its agent, and only
//! their facts cross the link: opening a remote tree moves no graph text but the phase on
//! screen's.

use crate::analysis::graph_facts::GraphFacts;
use crate::analysis::op_family::OpFamily;
use crate::model::fx::OpKind;
use crate::sources::load;
use crate::sources::remote::fs as remote;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Graph files asked of an agent in one request.
const REMOTE_BATCH: usize = 16;

/// Facts as they cross a link: every field, the ones the CLI's JSON leaves out included.
#[derive(Serialize, Deserialize)]
struct Wire {
    nodes: usize,
    subgraph_nodes: usize,
    unparsed: usize,
    fingerprint: u64,
    problems: Vec<String>,
    by_op: Vec<(OpKind, usize)>,
    by_family: Vec<(OpFamily, usize)>,
}

impl From<GraphFacts> for Wire {
    fn from(f: GraphFacts) -> Self {
        Wire {
            nodes: f.nodes,
            subgraph_nodes: f.subgraph_nodes,
            unparsed: f.unparsed,
            fingerprint: f.fingerprint,
            problems: f.problems,
            by_op: f.by_op.into_iter().collect(),
            by_family: f.by_family.into_iter().collect(),
        }
    }
}

impl From<Wire> for GraphFacts {
    fn from(w: Wire) -> Self {
        GraphFacts {
            nodes: w.nodes,
            subgraph_nodes: w.subgraph_nodes,
            unparsed: w.unparsed,
            fingerprint: w.fingerprint,
            problems: w.problems,
            by_op: w.by_op.into_iter().collect(),
            by_family: w.by_family.into_iter().collect(),
        }
    }
}

/// The facts of one local graph file (what it could not read is among its problems).
pub fn of_file(path: &Path) -> GraphFacts {
    GraphFacts::of_result(load::graph(path).as_ref())
}

/// The facts of every file of `paths`, each handed to `each` as it is known (in parallel; in
/// batches on a server).
pub fn of_files(paths: &[PathBuf], each: impl Fn(PathBuf, GraphFacts) + Sync) {
    let (far, near): (Vec<&PathBuf>, Vec<&PathBuf>) =
        paths.iter().partition(|p| remote::locate(p).is_some());
    near.par_iter().for_each(|p| each((*p).clone(), of_file(p)));
    far.par_chunks(REMOTE_BATCH).for_each(|chunk| {
        for (p, f) in chunk.iter().zip(remote_batch(chunk)) {
            each((*p).clone(), f);
        }
    });
}

/// One request for a batch of remote files (of any hosts: one request per host).
fn remote_batch(chunk: &[&PathBuf]) -> Vec<GraphFacts> {
    remote::ask_by_host(chunk, remote::facts)
        .into_iter()
        .map(|answer| match answer {
            Some(Ok(v)) => serde_json::from_value::<Wire>(v)
                .map(GraphFacts::from)
                .unwrap_or_else(|e| GraphFacts::unreadable(format!("from the agent: {e}"))),
            Some(Err(e)) => GraphFacts::unreadable(e),
            None => GraphFacts::unreadable("no answer".into()),
        })
        .collect()
}

/// What the agent answers to `Facts`: each local file's facts in their wire form.
pub fn wire_of_local(paths: &[String]) -> Vec<serde_json::Value> {
    paths
        .par_iter()
        .map(|p| serde_json::to_value(Wire::from(of_file(Path::new(p)))).unwrap_or_default())
        .collect()
}
