//! Per-node values for colouring the graph by its dumped data: NaN/±Inf in a node's outputs,
//! the largest |value| it produced, or how much its output changed since the step before.

use crate::model::tensor::{StepDump, TensorSummary};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What the graph is coloured by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OverlayStat {
    /// Outputs holding NaN (worst), or ±Inf.
    NanInf,
    /// Largest |x| over the outputs' finite values.
    MaxAbs,
    /// Largest |a − b| between this step's first output and the step before's.
    StepDiff,
}

impl OverlayStat {
    pub const ALL: [OverlayStat; 3] = [
        OverlayStat::NanInf,
        OverlayStat::MaxAbs,
        OverlayStat::StepDiff,
    ];

    pub fn label(self) -> &'static str {
        match self {
            OverlayStat::NanInf => "NaN / Inf",
            OverlayStat::MaxAbs => "max |x|",
            OverlayStat::StepDiff => "step-to-step diff",
        }
    }
}

/// A node's value for the overlay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NodeLevel {
    /// Outputs hold NaN.
    Nan,
    /// Outputs hold ±Inf (no NaN).
    Inf,
    /// Outputs are finite.
    Clean,
    /// A magnitude (max |x| or a step diff), to be scaled against the others.
    Value(f64),
}

/// NaN / ±Inf per node of a step, from the files' summaries.
pub fn nan_inf<'a>(
    step: &StepDump,
    summary: impl Fn(&Path) -> Option<&'a TensorSummary>,
) -> HashMap<String, NodeLevel> {
    per_node(step, summary, |stats| {
        Some(if stats.iter().any(|s| s.stats.nan > 0) {
            NodeLevel::Nan
        } else if stats.iter().any(|s| s.stats.inf() > 0) {
            NodeLevel::Inf
        } else {
            NodeLevel::Clean
        })
    })
}

/// Largest finite |x| over each node's outputs.
pub fn max_abs<'a>(
    step: &StepDump,
    summary: impl Fn(&Path) -> Option<&'a TensorSummary>,
) -> HashMap<String, NodeLevel> {
    per_node(step, summary, |stats| {
        stats
            .iter()
            .filter_map(|s| Some(s.stats.min?.abs().max(s.stats.max?.abs())))
            .fold(None, |acc: Option<f64>, v| {
                Some(acc.map_or(v, |a| a.max(v)))
            })
            .map(NodeLevel::Value)
    })
}

/// `level` of each node's summarised outputs (nodes with none are left out).
fn per_node<'a>(
    step: &StepDump,
    summary: impl Fn(&Path) -> Option<&'a TensorSummary>,
    level: impl Fn(&[&TensorSummary]) -> Option<NodeLevel>,
) -> HashMap<String, NodeLevel> {
    step.nodes
        .values()
        .filter_map(|n| {
            let stats: Vec<&TensorSummary> = n.outputs().filter_map(|f| summary(&f.path)).collect();
            if stats.is_empty() {
                return None;
            }
            Some((n.node.clone(), level(&stats)?))
        })
        .collect()
}

/// The first output of each node in both steps: what a step diff compares.
pub fn step_pairs(before: &StepDump, after: &StepDump) -> Vec<(String, PathBuf, PathBuf)> {
    after
        .nodes
        .values()
        .filter_map(|n| {
            let b = n.outputs().next()?;
            let a = before
                .nodes
                .get(&n.node)?
                .outputs()
                .find(|f| f.name.slot() == b.name.slot())?;
            Some((n.node.clone(), a.path.clone(), b.path.clone()))
        })
        .collect()
}

/// Where `v` sits between the smallest and largest of `values`, on a log scale (magnitudes
/// span decades), in 0..=1.
pub fn scale(v: f64, values: impl Iterator<Item = f64>) -> f64 {
    let (lo, hi) = values
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
            (lo.min(x), hi.max(x))
        });
    if !lo.is_finite() || hi <= lo {
        return 0.0;
    }
    let f = |x: f64| (x.max(0.0) + 1e-12).log10();
    ((f(v) - f(lo)) / (f(hi) - f(lo))).clamp(0.0, 1.0)
}
