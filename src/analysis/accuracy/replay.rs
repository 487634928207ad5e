//! What a replay of every pass's graph needs from the pass history (`fxray bisect`,
//! docs/formats.md §4.6): each pass's nodes paired with the pass before's, and the nodes its
//! diff changed. The replay (a child Python, `assets/replay.py`) runs each pass on the run's
//! inputs and judges every paired node against its partner; a node a pass built in place of
//! another (a fused or rewritten op) stands for the node whose uses it took over, as the stage
//! compare pairs it (`stages`), so the op a pass got wrong is judged itself rather than its
//! first consumer.

use super::stages::replaced_by;
use crate::analysis::diff::{Field, GraphDiff, NodeStatus};
use crate::model::fx::{FxFile, OpKind};
use serde::Serialize;
use std::collections::BTreeMap;

/// One pass after the first, as the replay needs it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Step {
    /// Each node of this pass (top-level graph) → the node of the pass before it stands for.
    pub pairs: BTreeMap<String, String>,
    /// Nodes the diff added or changed in what they compute (a changed source line alone is
    /// not a change of the numbers); with their consumers, what must be run again.
    pub changed: Vec<String>,
}

/// The steps of passes `1..`, one per diff (`diffs[k]` is between pass `k` and `k + 1`).
pub fn steps(passes: &[&FxFile], diffs: &[GraphDiff]) -> Vec<Step> {
    (1..passes.len())
        .map(|p| {
            match (
                diffs.get(p - 1),
                passes[p].graphs.first(),
                passes[p - 1].graphs.first(),
            ) {
                (Some(d), Some(now), Some(before)) => step(passes, d, p, now, before),
                _ => Step::default(),
            }
        })
        .collect()
}

fn step(
    passes: &[&FxFile],
    d: &GraphDiff,
    p: usize,
    now: &crate::model::fx::FxGraph,
    before: &crate::model::fx::FxGraph,
) -> Step {
    let mut s = Step::default();
    for (i, n) in now.nodes.iter().enumerate() {
        if n.op == OpKind::Output {
            continue;
        }
        let partner = match d.b_to_a(0, i) {
            Some((0, a)) => Some(a),
            Some(_) => None,
            None => replaced_by(passes, d, p, i),
        };
        if let Some(a) = partner {
            s.pairs
                .insert(n.name.to_string(), before.nodes[a].name.to_string());
        }
        let changed = match d.status_b(0, i) {
            Some(NodeStatus::Added) => true,
            Some(NodeStatus::Changed { fields }) => fields.iter().any(|f| f != Field::Source),
            _ => false,
        };
        if changed {
            s.changed.push(n.name.to_string());
        }
    }
    s
}
