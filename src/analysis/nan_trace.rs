//! The NaN tracer: walk the graph in topological order (FX file order is one), find the first
//! node whose dumped outputs hold NaN (or ±Inf, looked for apart: masks produce −Inf on
//! purpose), and say where the value came from: produced there (its dumped inputs were clean)
//! or carried in by an input, named with the FX argument and what feeds it.

use crate::model::fx::{Arg, FxGraph, OpKind};
use crate::model::tensor::{Io, NodeDump, StepDump, TensorStats};
use serde::Serialize;
use std::path::Path;

/// What to look for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bad {
    Nan,
    /// +Inf or −Inf.
    Inf,
    PosInf,
    NegInf,
}

impl Bad {
    pub fn parse(s: &str) -> Option<Bad> {
        match s.to_ascii_lowercase().as_str() {
            "nan" => Some(Bad::Nan),
            "inf" => Some(Bad::Inf),
            "+inf" | "posinf" => Some(Bad::PosInf),
            "-inf" | "neginf" => Some(Bad::NegInf),
            _ => None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Bad::Nan => "NaN",
            Bad::Inf => "±Inf",
            Bad::PosInf => "+Inf",
            Bad::NegInf => "−Inf",
        }
    }

    /// How many such values the statistics counted.
    pub fn count(self, s: &TensorStats) -> u64 {
        match self {
            Bad::Nan => s.nan,
            Bad::Inf => s.pos_inf + s.neg_inf,
            Bad::PosInf => s.pos_inf,
            Bad::NegInf => s.neg_inf,
        }
    }
}

/// Where an input that carried the value in comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "name")]
pub enum Source {
    /// A placeholder of the graph: the value entered the graph with it.
    GraphInput(String),
    /// A node the dump has nothing for (a `get_attr` constant, a skipped op).
    NoDump(String),
    /// A dumped node (its outputs were clean in this step: it ran earlier).
    Node(String),
    /// A literal argument (`-inf`, `0.5`), as written in the graph.
    Constant(String),
    /// No graph to look it up in.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Carrier {
    /// `INPUT.1`.
    pub slot: String,
    pub count: u64,
    pub source: Source,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trace {
    pub bad: Bad,
    pub node: String,
    pub target: String,
    /// Output slots holding the value, with counts.
    pub outputs: Vec<(String, u64)>,
    /// Inputs that already held it; empty = the node produced it.
    pub carried_by: Vec<Carrier>,
    /// Dumped nodes looked at before this one.
    pub checked: usize,
    /// The order "first" is in: `graph order`, `execution order` (the dump's timestamps), or
    /// `name order` when neither is known (npugraph_ex's tensor dump records no time).
    pub order: &'static str,
    /// The node's own inputs were dumped (an npy dump's `INPUT` files; a tensor dump holds
    /// outputs only).
    pub inputs_dumped: bool,
}

impl Trace {
    /// Lines after the node's name: where the value came from.
    pub fn explain(&self) -> Vec<String> {
        let what = self.bad.label();
        let outs: Vec<String> = self
            .outputs
            .iter()
            .map(|(s, n)| format!("{s} ({n} {what})"))
            .collect();
        let op = if self.target.is_empty() {
            String::new()
        } else {
            format!(" = {}", self.target)
        };
        let mut v = vec![format!(
            "first {what} output in {}: {}{op} → {}",
            self.order,
            self.node,
            outs.join(", ")
        )];
        if self.order == NAME_ORDER {
            v.push("this dump records no order: give the graph it ran (--graph) to be sure".into());
        }
        if self.carried_by.is_empty() && self.inputs_dumped {
            v.push(format!(
                "produced by {}: its dumped inputs hold no {what}",
                self.node
            ));
        } else if self.carried_by.is_empty() && self.order != NAME_ORDER {
            v.push(format!(
                "produced by {}: no value before it holds {what}",
                self.node
            ));
        }
        for c in &self.carried_by {
            let from = match &c.source {
                Source::GraphInput(n) => format!("{n}, a graph input"),
                Source::NoDump(n) => format!("{n}, a node with no dump"),
                Source::Node(n) => format!("node {n}"),
                Source::Constant(c) => format!("the constant argument {c}"),
                Source::Unknown => "an argument (no graph given to name it)".to_string(),
            };
            v.push(format!(
                "carried in by {} ({} {what}) from {from}",
                c.slot, c.count
            ));
        }
        v
    }
}

const NAME_ORDER: &str = "name order";

/// The first node (in `graph` order, else in execution order) whose outputs hold `bad`.
/// `stats` gives a dumped file's statistics (`None` when unreadable: treated as clean).
pub fn first_bad<'a>(
    step: &StepDump,
    graph: Option<&FxGraph>,
    bad: Bad,
    stats: &dyn Fn(&Path) -> Option<&'a TensorStats>,
) -> Option<Trace> {
    let order: Vec<&NodeDump> = match graph {
        Some(g) => g
            .nodes
            .iter()
            .filter_map(|n| step.nodes.get(n.name.as_str()))
            .collect(),
        None => step.execution_order(),
    };
    let order_name = match (graph, step.is_timed()) {
        (Some(_), _) => "graph order",
        (None, true) => "execution order",
        (None, false) => NAME_ORDER,
    };
    let count_of = |f: &crate::model::tensor::DumpFile| stats(&f.path).map_or(0, |s| bad.count(s));
    for (checked, nd) in order.iter().enumerate() {
        let outputs: Vec<(String, u64)> = nd
            .outputs()
            .map(|f| (f.name.slot(), count_of(f)))
            .filter(|(_, n)| *n > 0)
            .collect();
        if outputs.is_empty() {
            continue;
        }
        let carried_by = nd
            .inputs()
            .filter_map(|f| {
                let count = count_of(f);
                (count > 0).then(|| Carrier {
                    slot: f.name.slot(),
                    count,
                    source: source_of(graph, step, &nd.node, f.name.index, f.name.sub),
                })
            })
            .collect();
        // A tensor dump names no op: the graph does.
        let target = match (nd.target.is_empty(), graph) {
            (true, Some(g)) => g
                .nodes
                .iter()
                .find(|n| n.name == nd.node)
                .map_or_else(String::new, |n| n.target.to_string()),
            _ => nd.target.clone(),
        };
        return Some(Trace {
            bad,
            node: nd.node.clone(),
            target,
            outputs,
            carried_by,
            checked,
            order: order_name,
            inputs_dumped: nd.inputs().next().is_some(),
        });
    }
    None
}

/// The first place a bad value shows up across ranks: the step, the rank, and its trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RankTrace {
    pub step: u32,
    pub rank: u32,
    pub trace: Trace,
    /// The other ranks holding it in that step, with their first such node (graph order).
    pub also: Vec<(u32, String)>,
    /// Ranks looked at in that step.
    pub ranks: usize,
}

impl RankTrace {
    /// `rank 3, step 1 (the only one of 4 ranks)` / `… (ranks 1 and 2 too: add_6, add_6)`.
    pub fn describe(&self) -> String {
        let also = if self.also.is_empty() {
            format!("the only one of {} ranks", self.ranks)
        } else {
            let v: Vec<String> = self
                .also
                .iter()
                .map(|(r, n)| format!("rank {r} at {n}"))
                .collect();
            format!(
                "{} of {} ranks; also {}",
                self.also.len() + 1,
                self.ranks,
                v.join(", ")
            )
        };
        format!("rank {}, step {} ({also})", self.rank, self.step)
    }
}

/// The first (step, rank, node) holding `bad` in one step of several ranks: the rank whose first
/// such node comes earliest in `graph` order (the lowest rank on a tie). `ranks` holds each rank
/// and its dump of that step; callers walk the steps in order and stop at the first `Some`.
pub fn first_bad_in_step<'a>(
    step: u32,
    ranks: &[(u32, &StepDump)],
    graph: Option<&FxGraph>,
    bad: Bad,
    stats: &dyn Fn(&Path) -> Option<&'a TensorStats>,
) -> Option<RankTrace> {
    let mut found: Vec<(usize, u32, Trace)> = ranks
        .iter()
        .filter_map(|&(r, s)| first_bad(s, graph, bad, stats).map(|t| (t.checked, r, t)))
        .collect();
    found.sort_by_key(|(checked, r, _)| (*checked, *r));
    let mut it = found.into_iter();
    let (_, rank, trace) = it.next()?;
    let mut also: Vec<(u32, String)> = it.map(|(_, r, t)| (r, t.node)).collect();
    also.sort();
    Some(RankTrace {
        step,
        rank,
        trace,
        also,
        ranks: ranks.len(),
    })
}

/// What feeds positional argument `index` (element `sub` of a list) of `node`.
fn source_of(
    graph: Option<&FxGraph>,
    step: &StepDump,
    node: &str,
    index: u32,
    sub: Option<u32>,
) -> Source {
    let Some(g) = graph else {
        return Source::Unknown;
    };
    let Some(n) = g.by_name.get(node).and_then(|i| g.nodes.get(i)) else {
        return Source::Unknown;
    };
    let arg = n.args.get(index as usize);
    let arg = match (arg, sub) {
        (Some(Arg::List(v) | Arg::Tuple(v)), Some(j)) => v.get(j as usize),
        (a, _) => a,
    };
    let name = match arg {
        Some(Arg::Node(name)) => name,
        Some(a) => return Source::Constant(a.to_string()),
        None => return Source::Unknown,
    };
    let producer = g.by_name.get(name).and_then(|i| g.nodes.get(i));
    match producer.map(|p| p.op) {
        Some(OpKind::Placeholder) => Source::GraphInput(name.to_string()),
        _ if step
            .nodes
            .get(name.as_str())
            .is_some_and(|d| d.files.iter().any(|f| f.name.io == Io::Output)) =>
        {
            Source::Node(name.to_string())
        }
        Some(_) => Source::NoDump(name.to_string()),
        None => Source::Unknown,
    }
}

/// How well a dump's node names match an FX graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MatchQuality {
    /// Nodes in the dump step.
    pub dumped: usize,
    /// Of those, nodes with the same name in the graph.
    pub found: usize,
    /// Of those, nodes whose target agrees too (a dump that names no op, npugraph_ex's tensor
    /// dump, agrees by name).
    pub same_target: usize,
    /// Of those, the graph's `call_function` nodes (a tensor dump also holds the inputs).
    pub calls_found: usize,
    /// `call_function` nodes of the graph (what a complete dump covers).
    pub call_functions: usize,
}

impl MatchQuality {
    /// Share of dumped names found in the graph, 0..=1.
    pub fn score(&self) -> f64 {
        if self.dumped == 0 {
            0.0
        } else {
            self.same_target as f64 / self.dumped as f64
        }
    }

    /// `213/213 dumped nodes in this graph (100%), 213 of 213 calls dumped`.
    pub fn describe(&self) -> String {
        format!(
            "{}/{} dumped nodes in this graph ({:.0}%), {} of {} calls dumped",
            self.same_target,
            self.dumped,
            100.0 * self.score(),
            self.calls_found,
            self.call_functions
        )
    }
}

/// Compares the dump's node names and targets with the graph's.
pub fn match_quality(graph: &FxGraph, step: &StepDump) -> MatchQuality {
    let mut q = MatchQuality {
        dumped: step.nodes.len(),
        found: 0,
        same_target: 0,
        calls_found: 0,
        call_functions: graph
            .nodes
            .iter()
            .filter(|n| n.op == OpKind::CallFunction)
            .count(),
    };
    for (name, d) in &step.nodes {
        if let Some(n) = graph
            .by_name
            .get(name.as_str())
            .and_then(|i| graph.nodes.get(i))
        {
            q.found += 1;
            if d.target.is_empty() || same_target(&n.target, &d.target) {
                q.same_target += 1;
            }
            if n.op == OpKind::CallFunction {
                q.calls_found += 1;
            }
        }
    }
    q
}

/// `torch.ops.aten.add.Tensor` ~ `aten.add.Tensor`; `operator.getitem` ~
/// `<built-in function getitem>`.
fn same_target(fx: &str, dumped: &str) -> bool {
    let fx = fx.strip_prefix("torch.ops.").unwrap_or(fx);
    if fx == dumped {
        return true;
    }
    let last = fx.rsplit('.').next().unwrap_or(fx);
    dumped == format!("<built-in function {last}>")
}
