//! The facts of graph files (counts, problems, fingerprint): what the run tree shows of every
//! pass and the rank matrix compares, and with a phase's passes, what each changed from the one
//! before (`fxray summary`). Files on a server are parsed (and diffed) there by its agent, and
//! only their facts cross the link: opening a remote tree moves no graph text.

use crate::analysis::diff::{self, DiffCounts};
use crate::analysis::graph_facts::GraphFacts;
use crate::analysis::op_family::OpFamily;
use crate::model::fx::OpKind;
use crate::pipeline::failure::Failure;
use crate::pipeline::remote::{self, Op};
use crate::pipeline::same_text;
use crate::sources::load;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Graph files asked of an agent in one request.
const REMOTE_BATCH: usize = 16;

/// Facts as they cross a link: every field, the ones the CLI's JSON leaves out included.
#[derive(Serialize, Deserialize)]
pub struct Wire {
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
    // A server's files are asked of it in batches; `None`: a file to parse here.
    let near: Vec<Vec<&PathBuf>> = paths
        .par_chunks(REMOTE_BATCH)
        .map(|chunk| {
            let mut near = Vec::new();
            for (p, answer) in chunk.iter().zip(remote::each_there::<Facts, _>(chunk)) {
                match answer {
                    Some(Ok(w)) => each(p.clone(), GraphFacts::from(w)),
                    Some(Err(e)) => each(p.clone(), GraphFacts::unreadable(e.to_string())),
                    None => near.push(p),
                }
            }
            near
        })
        .collect();
    let near: Vec<&PathBuf> = near.into_iter().flatten().collect();
    // The passes that changed nothing wrote the same text again: one parse for all of them.
    same_text::groups(&near)
        .par_iter()
        .with_max_len(1)
        .for_each(|group| {
            let facts = of_file(near[group[0]]);
            for &i in group {
                each(near[i].clone(), facts.clone());
            }
        });
}

/// The facts of graph files, one per file in order.
pub struct Facts;

impl Op for Facts {
    const NAME: &'static str = "graph_facts";
    type Args = Vec<PathBuf>;
    type Item = Wire;

    fn paths(files: &mut Vec<PathBuf>) -> Vec<&mut PathBuf> {
        files.iter_mut().collect()
    }

    fn run(files: Vec<PathBuf>, _stop: &AtomicBool, send: &(dyn Fn(Wire) + Sync)) {
        let facts: Vec<Wire> = files.par_iter().map(|p| Wire::from(of_file(p))).collect();
        facts.into_iter().for_each(send);
    }
}

/// The facts of every pass of each phase (each a list of passes in order), and for each pass
/// after the first its diff counts against the one before (absent when either could not be
/// read): `(facts, diffs)` keyed by path. Phases are read one after another, two passes at a
/// time, so that at most three graphs are held at once; a server's phases are parsed and
/// diffed by its agent.
pub fn of_phases(
    phases: &[Vec<PathBuf>],
) -> (HashMap<PathBuf, GraphFacts>, HashMap<PathBuf, DiffCounts>) {
    let mut per_phase: Vec<(&Vec<PathBuf>, PhaseWire)> = Vec::with_capacity(phases.len());
    for chunk in phases.chunks(REMOTE_BATCH) {
        // One request per server; a phase here (or on several servers) is read here, one phase
        // after another: each already keeps both cores busy.
        for (ph, answer) in chunk.iter().zip(remote::each_there::<PhaseFacts, _>(chunk)) {
            let wire = match answer {
                Some(Ok(w)) if w.facts.len() == ph.len() => w,
                Some(_) => PhaseWire {
                    facts: ph
                        .iter()
                        .map(|_| {
                            Wire::from(GraphFacts::unreadable("no answer from the agent".into()))
                        })
                        .collect(),
                    diffs: Vec::new(),
                },
                None => phase_of_local(ph),
            };
            per_phase.push((ph, wire));
        }
    }
    let mut facts = HashMap::new();
    let mut diffs = HashMap::new();
    for (ph, w) in per_phase {
        facts.extend(
            ph.iter()
                .cloned()
                .zip(w.facts.into_iter().map(GraphFacts::from)),
        );
        for (p, d) in ph.iter().skip(1).zip(w.diffs) {
            if let Some(d) = d {
                diffs.insert(p.clone(), d);
            }
        }
    }
    (facts, diffs)
}

/// One phase's facts as they cross a link: a fact per pass, a diff per pass after the first.
#[derive(Serialize, Deserialize)]
pub struct PhaseWire {
    facts: Vec<Wire>,
    diffs: Vec<Option<DiffCounts>>,
}

fn phase_of_local(passes: &[PathBuf]) -> PhaseWire {
    // Two passes parsed at a time (both cores), each diffed with the one before and dropped:
    // at most three graphs are held, not a phase of 100k-node passes.
    let load = |p: &PathBuf| load::graph(p).map_err(Failure::unreadable);
    let mut facts = Vec::with_capacity(passes.len());
    let mut diffs = Vec::with_capacity(passes.len().saturating_sub(1));
    let mut prev: Option<Result<crate::model::fx::FxFile, Failure>> = None;
    for pair in passes.chunks(2) {
        let (a, b) = rayon::join(|| load(&pair[0]), || pair.get(1).map(load));
        for cur in std::iter::once(a).chain(b) {
            if let Some(p) = &prev {
                diffs.push(match (p, &cur) {
                    (Ok(a), Ok(b)) => Some(diff::diff(a, b).counts()),
                    _ => None,
                });
            }
            facts.push(Wire::from(GraphFacts::of_result(cur.as_ref())));
            prev = Some(cur);
        }
    }
    PhaseWire { facts, diffs }
}

/// The facts of every pass of whole phases and each pass's diff counts against the one
/// before, one per phase in order.
pub struct PhaseFacts;

impl Op for PhaseFacts {
    const NAME: &'static str = "phase_facts";
    type Args = Vec<Vec<PathBuf>>;
    type Item = PhaseWire;

    fn paths(phases: &mut Vec<Vec<PathBuf>>) -> Vec<&mut PathBuf> {
        phases.iter_mut().flatten().collect()
    }

    fn run(phases: Vec<Vec<PathBuf>>, _stop: &AtomicBool, send: &(dyn Fn(PhaseWire) + Sync)) {
        let all: Vec<PhaseWire> = phases.par_iter().map(|ph| phase_of_local(ph)).collect();
        all.into_iter().for_each(send);
    }
}

/// The facts of every file of `paths` (parsed in parallel; on a server, by its agent); a file
/// that cannot be read gets its reason.
pub fn of_all(paths: &[PathBuf]) -> HashMap<PathBuf, GraphFacts> {
    let all = std::sync::Mutex::new(HashMap::new());
    of_files(paths, |p, f| {
        all.lock().unwrap_or_else(|e| e.into_inner()).insert(p, f);
    });
    all.into_inner().unwrap_or_else(|e| e.into_inner())
}
