//! Statements: consecutive nodes under one source comment (one line, run once), and what
//! links them.

use super::Confidence;
use super::ops::is_compute;
use super::paths::{ModId, Paths};
use crate::model::fx::{FxGraph, SourceLoc};
use rustc_hash::FxHashMap as HashMap;

/// Consecutive compute nodes under one source comment: one line, run once.
pub struct Stmt<'g> {
    pub loc: &'g SourceLoc,
    pub nodes: Vec<usize>,
    /// Frame decided from the statement's own weights.
    pub anchored: Option<ModId>,
    pub frame: Option<(ModId, Confidence)>,
    /// The frame came from the statement's own evidence (see [`LineFrames::own`]).
    pub own: bool,
}

/// Consecutive compute nodes under the same source comment; nodes without one are left out.
pub fn statements(g: &FxGraph) -> Vec<Stmt<'_>> {
    let mut out: Vec<Stmt<'_>> = Vec::new();
    let mut last: Option<&SourceLoc> = None;
    for (i, node) in g.nodes.iter().enumerate() {
        if !is_compute(node) {
            continue;
        }
        let Some(loc) = node.source.as_deref() else {
            last = None;
            continue;
        };
        match (last, out.last_mut()) {
            (Some(l), Some(s)) if l == loc => s.nodes.push(i),
            _ => out.push(Stmt {
                loc,
                nodes: vec![i],
                anchored: None,
                frame: None,
                own: false,
            }),
        }
        last = Some(loc);
    }
    out
}
/// Per statement: the statements it reads from.
pub fn statement_reads(g: &FxGraph, stmts: &[Stmt<'_>]) -> Vec<Vec<usize>> {
    let mut of_node: Vec<Option<usize>> = vec![None; g.nodes.len()];
    for (si, s) in stmts.iter().enumerate() {
        for &i in &s.nodes {
            of_node[i] = Some(si);
        }
    }
    let mut reads: Vec<Vec<usize>> = vec![Vec::new(); stmts.len()];
    for (si, s) in stmts.iter().enumerate() {
        for &i in &s.nodes {
            for &j in &g.nodes[i].inputs {
                if let Some(sj) = of_node[j]
                    && sj != si
                    && !reads[si].contains(&sj)
                {
                    reads[si].push(sj);
                }
            }
        }
    }
    reads
}

/// The kind of module a frame is: its path with the layer indices left out (`layers.#.attn`).
pub fn kind(f: ModId, paths: &Paths) -> u32 {
    paths.kind(f)
}

/// Per run: the nodes its statements read from outside it.
pub fn run_inputs(g: &FxGraph, stmts: &[Stmt<'_>], run: &[usize]) -> HashMap<usize, Vec<usize>> {
    let mut of_node: Vec<Option<usize>> = vec![None; g.nodes.len()];
    for (si, s) in stmts.iter().enumerate() {
        for &i in &s.nodes {
            of_node[i] = Some(run[si]);
        }
    }
    let mut out: HashMap<usize, Vec<usize>> = HashMap::default();
    for (si, s) in stmts.iter().enumerate() {
        for &i in &s.nodes {
            for &j in &g.nodes[i].inputs {
                if of_node[j] != Some(run[si]) {
                    let v = out.entry(run[si]).or_default();
                    if !v.contains(&j) {
                        v.push(j);
                    }
                }
            }
        }
    }
    out
}
