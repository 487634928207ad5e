//! A side whose dump records neither ops nor order (npugraph_ex's `.pt` tensor dump, docs/
//! formats.md §3.2) read through its own graph: the pass file whose node names are the dump's.
//! The graph gives each node its op, the order it ran in and its inputs (the producers'
//! dumped outputs), so pairing has the evidence an npy dump's file names carry: what each call
//! computes, on which values. Without it, names are all there is (`pairing` then pairs equal
//! names only).

use super::sides::Side;
use crate::analysis::accuracy::{Role, TensorRef};
use crate::model::fx::{FxFile, OpKind};
use crate::model::tensor::StepDump;
use crate::sources::{discover, load};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The graph whose top-level node names are `step`'s: of the pass files of the run the dump
/// sits beside, else of `given` (`--graph`, the window's passes). Nearly every dumped name
/// must be a node of it (a name outside it is another graph's); of those, the one with the
/// fewest nodes the dump lacks, the latest pass on a tie (what ran). `None` when none fits.
pub fn find(step: &StepDump, given: &[PathBuf]) -> Option<(PathBuf, FxFile)> {
    // The dump's own run first: the window's passes are the target's, and a golden read
    // through them would get the target's ops and order, hiding what was renumbered.
    best(step, &run_passes(&step.path)).or_else(|| best(step, given))
}

fn best(step: &StepDump, candidates: &[PathBuf]) -> Option<(PathBuf, FxFile)> {
    let names = &step.nodes;
    if names.is_empty() {
        return None;
    }
    let scored: Vec<((usize, i64), usize, PathBuf, FxFile)> = candidates
        .par_iter()
        .enumerate()
        .filter_map(|(k, p)| {
            let file = load::graph(p).ok()?;
            let g = file.graphs.first()?;
            let covered = g
                .nodes
                .iter()
                .filter(|n| names.contains_key(n.name.as_str()))
                .count();
            let lacking = g
                .nodes
                .iter()
                .filter(|n| n.op != OpKind::Output && !names.contains_key(n.name.as_str()))
                .count();
            (covered * 50 >= names.len() * 49)
                .then(|| ((covered, -(lacking as i64)), k, p.clone(), file))
        })
        .collect();
    scored
        .into_iter()
        .max_by_key(|(score, k, ..)| (*score, *k))
        .map(|(_, _, p, f)| (p, f))
}

/// The pass files of the run the dump sits beside (`stages::run_beside`: npugraph_ex writes a
/// stage dump next to `torch_compile_debug`). No further: small graphs share names (`add`,
/// `mean`), and a folder far above (a home, `/tmp`) holds other runs whose passes would name
/// them too.
fn run_passes(rank: &Path) -> Vec<PathBuf> {
    let Some(dir) = crate::pipeline::stages::run_beside(rank) else {
        return Vec::new();
    };
    let Ok(index) = discover::discover(&dir) else {
        return Vec::new();
    };
    index
        .phases()
        .flat_map(|p| &p.passes)
        .map(|p| p.path.clone())
        .collect()
}

/// Gives `side` (read from a dump that records no op) each node's op and place from `file`,
/// and each node's inputs as the tensors its producers dumped (slot `INPUT.k`, k-th distinct
/// input node). Nodes the graph lacks keep no op and come after the graph's, by name.
pub fn read_through(side: &mut Side, file: &FxFile) {
    let Some(g) = file.graphs.first() else { return };
    let at: HashMap<&str, usize> = g
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i))
        .collect();
    // Each node's dumped output: its tensor, for the inputs built below.
    let output: HashMap<String, usize> = side
        .tensors
        .iter()
        .enumerate()
        .filter(|(_, t)| t.role == Role::Output)
        .map(|(i, t)| (t.call.clone(), i))
        .collect();
    let unknown = g.nodes.len();
    for t in &mut side.tensors {
        match at.get(t.call.as_str()) {
            Some(&i) => {
                let n = &g.nodes[i];
                t.op = n
                    .target
                    .strip_prefix("torch.ops.")
                    .unwrap_or(&n.target)
                    .to_string();
                t.order = i;
            }
            None => t.order += unknown,
        }
    }
    let mut inputs = Vec::new();
    let mut files = Vec::new();
    let mut calls: Vec<(&String, usize)> = output.iter().map(|(c, &o)| (c, o)).collect();
    calls.sort_unstable_by_key(|&(_, o)| o);
    for (call, o) in calls {
        let Some(&i) = at.get(call.as_str()) else {
            continue;
        };
        let node = &side.tensors[o];
        for (k, &p) in g.nodes[i].inputs.iter().enumerate() {
            let Some(&from) = output.get(g.nodes[p].name.as_str()) else {
                continue;
            };
            let producer = &side.tensors[from];
            inputs.push(TensorRef {
                key: format!("{call}.INPUT.{k}"),
                call: call.clone(),
                op: node.op.clone(),
                node: node.node.clone(),
                slot: format!("INPUT.{k}"),
                role: Role::Input,
                dtype: producer.dtype.clone(),
                shape: producer.shape.clone(),
                summary: None,
                order: node.order,
                requires_grad: None,
                from: Some(producer.call.clone()),
                value: producer.value,
            });
            files.push(side.files[from].clone());
        }
    }
    side.tensors.extend(inputs);
    side.files.extend(files);
}
