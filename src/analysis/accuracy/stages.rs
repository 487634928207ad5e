//! Original against optimized: which pass changed the numbers (docs/formats.md §4.5).
//!
//! npugraph_ex dumps a graph's tensors at one of two stages: `original` runs the AOT graph
//! before any pass, `optimized` the graph after every pass. Both dumps name tensors by node,
//! each in its own graph's names, so names alone pair them wrong (a pass that builds a node
//! gets a fresh name; a fresh name may equal an unrelated original one). Pairs come from the
//! pass history fxray already computes, the consecutive diffs of the phase's pass files:
//!
//! - a node matched back through every pass to the original graph stands for that node
//!   ([`Origin::Kept`], or [`Origin::Changed`] by the passes whose diff changed or renamed it);
//! - a node a pass built ([`Origin::Replaced`]) stands for the node whose uses it took over:
//!   one of its consumers existed before that pass and read, in the same argument place, the
//!   node it replaced (a fused op's output stands for the last op of what it fused, as Ascend's
//!   fusion compare pairs them); that node is then followed back the same way;
//! - nodes a pass built inside a replacement (a decomposition's interior) stand for nothing.
//!
//! Each pair's inputs are the nearest paired producers (through unpaired interior nodes), so a
//! fused op's inputs are compared against the original ops' inputs.
//!
//! The verdict ([`findings`]): a pair whose output departs from its original beyond noise
//! ([`super::tolerance`]) while every input agrees is where the numbers part; the passes in its
//! origin are the suspects. Departures downstream of it are its consequences.

use crate::analysis::diff::{Field, Fields, GraphDiff, NodeStatus};
use crate::model::fx::{FxFile, OpKind};
use crate::model::fx_fmt::short_target;
use serde::Serialize;
use std::borrow::Borrow;

/// How an optimized node came from the original graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Origin {
    /// Matched back through every pass, never changed.
    Kept,
    /// Matched back through every pass; these passes (indices into the pass list) changed or
    /// renamed it, `what[i]` saying how `passes[i]` did (`kwargs`, `inputs, renamed`).
    Changed {
        passes: Vec<usize>,
        what: Vec<String>,
    },
    /// Built by pass `pass`, taking over the original node's uses; `later` passes changed it.
    Replaced { pass: usize, later: Vec<usize> },
}

impl Origin {
    /// Every pass that touched the node, in order.
    pub fn passes(&self) -> Vec<usize> {
        match self {
            Origin::Kept => Vec::new(),
            Origin::Changed { passes, .. } => passes.clone(),
            Origin::Replaced { pass, later } => {
                std::iter::once(*pass).chain(later.clone()).collect()
            }
        }
    }
}

/// One node of the optimized graph and the original node whose value it stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StagePair {
    /// Its name in the optimized (last) graph, as the optimized dump names it.
    pub node: String,
    /// Index in the last pass's top-level graph.
    #[serde(skip)]
    pub index: usize,
    /// Short target (`aten.gelu`), as labels show it.
    pub target: String,
    /// The original node's name, as the original dump names it.
    pub original: String,
    pub original_target: String,
    pub origin: Origin,
    /// Indices into the pair list of its nearest paired producers.
    pub inputs: Vec<usize>,
}

/// Pairs every node of the last pass with the original node it stands for. `passes` are the
/// phase's pass files in order (the first is the original graph), `diffs[i]` the diff of pass
/// `i` and `i + 1`. Top-level graph only (a dump names no sub-graph node apart).
pub fn pair_stages(passes: &[&FxFile], diffs: &[impl Borrow<GraphDiff>]) -> Vec<StagePair> {
    let (Some(first), Some(last)) = (passes.first(), passes.last()) else {
        return Vec::new();
    };
    let (Some(g0), Some(gl)) = (first.graphs.first(), last.graphs.first()) else {
        return Vec::new();
    };
    let top = passes.len() - 1;
    let mut tracer = Tracer {
        passes,
        diffs,
        sources: Default::default(),
        cuts: 0,
    };
    let mut slot = vec![None; gl.nodes.len()];
    let mut pairs: Vec<StagePair> = Vec::new();
    for (i, n) in gl.nodes.iter().enumerate() {
        if n.op == OpKind::Output {
            continue;
        }
        let Some((orig, origin)) = tracer.trace(top, i, 0) else {
            continue;
        };
        let o = &g0.nodes[orig];
        slot[i] = Some(pairs.len());
        pairs.push(StagePair {
            node: n.name.to_string(),
            index: i,
            target: label(n),
            original: o.name.to_string(),
            original_target: label(o),
            origin,
            inputs: Vec::new(),
        });
    }
    // The nearest paired producers: through unpaired nodes (built inside a replacement).
    // The nearest paired producers of every node, once each in file (topological) order: a
    // paired node is its own, an unpaired one has those of its inputs.
    let mut near: Vec<Vec<usize>> = Vec::with_capacity(gl.nodes.len());
    for n in &gl.nodes {
        let mut v: Vec<usize> = Vec::new();
        for &j in &n.inputs {
            match (slot.get(j).copied().flatten(), near.get(j)) {
                (Some(q), _) => v.push(q),
                (None, Some(up)) => v.extend_from_slice(up),
                // An input defined later than its user: not FX's order; nothing known.
                (None, None) => {}
            }
        }
        v.sort_unstable();
        v.dedup();
        near.push(v);
    }
    for pair in &mut pairs {
        pair.inputs = std::mem::take(&mut near[pair.index]);
    }
    pairs
}

fn label(n: &crate::model::fx::FxNode) -> String {
    match n.op {
        OpKind::Placeholder => "placeholder".into(),
        _ => short_target(n).to_string(),
    }
}

/// Follows nodes back through the passes, remembering where each one it met came from.
struct Tracer<'a, D> {
    passes: &'a [&'a FxFile],
    diffs: &'a [D],
    /// `(pass, node)` → the original node it stands for.
    sources: rustc_hash::FxHashMap<(usize, usize), Option<usize>>,
    /// Times the depth bound cut a trace short: a result found under a cut is not remembered
    /// (a shallower start could have gone further).
    cuts: usize,
}

impl<D: Borrow<GraphDiff>> Tracer<'_, D> {
    /// Node `i` of pass `p`'s top-level graph, followed back to the original graph: the
    /// original node and how it came. `depth` bounds replaced-node chains.
    fn trace(&mut self, mut p: usize, mut i: usize, depth: usize) -> Option<(usize, Origin)> {
        if depth > 2 * self.passes.len() {
            self.cuts += 1;
            return None;
        }
        let mut touched: Vec<(usize, String)> = Vec::new();
        while p > 0 {
            let d = self.diffs.get(p - 1)?.borrow();
            match d.b_to_a(0, i) {
                Some((0, prev)) => {
                    let mut what: Vec<&str> = match d.status_b(0, i) {
                        Some(NodeStatus::Changed { fields })
                            if fields != Fields::default().with(Field::Inputs)
                                || !self.same_sources(p, i, prev, depth) =>
                        {
                            fields.names()
                        }
                        _ => Vec::new(),
                    };
                    if d.top().is_renamed_b(i) {
                        what.push("renamed");
                    }
                    if !what.is_empty() {
                        touched.push((p, what.join(", ")));
                    }
                    i = prev;
                    p -= 1;
                }
                Some(_) => return None,
                None => {
                    // Built by pass p: it stands for what it took over (whose own history
                    // is its own).
                    let replaced = replaced_by(self.passes, d, p, i)?;
                    let orig = self.source(p - 1, replaced, depth + 1)?;
                    touched.reverse();
                    let origin = Origin::Replaced {
                        pass: p,
                        later: touched.into_iter().map(|t| t.0).collect(),
                    };
                    return Some((orig, origin));
                }
            }
        }
        touched.reverse();
        let origin = if touched.is_empty() {
            Origin::Kept
        } else {
            let (passes, what) = touched.into_iter().unzip();
            Origin::Changed { passes, what }
        };
        Some((i, origin))
    }

    /// The original node that node `i` of pass `p` stands for.
    fn source(&mut self, p: usize, i: usize, depth: usize) -> Option<usize> {
        if let Some(&s) = self.sources.get(&(p, i)) {
            return s;
        }
        let cuts = self.cuts;
        let s = self.trace(p, i, depth).map(|t| t.0);
        if self.cuts == cuts {
            self.sources.insert((p, i), s);
        }
        s
    }

    /// True when node `i` of pass `p` and its match `prev` in pass `p − 1` read inputs that
    /// stand for the same original nodes: a consumer rewired to a replacement of its input was
    /// not changed by that (the replacement was).
    fn same_sources(&mut self, p: usize, i: usize, prev: usize, depth: usize) -> bool {
        let (Some(now), Some(before)) = (
            self.passes[p].graphs.first(),
            self.passes[p - 1].graphs.first(),
        ) else {
            return false;
        };
        let (a, b) = (&now.nodes[i].inputs, &before.nodes[prev].inputs);
        a.len() == b.len()
            && a.iter().zip(b).all(|(&x, &y)| {
                let o = self.source(p, x, depth + 1);
                o.is_some() && o == self.source(p - 1, y, depth + 1)
            })
    }
}

/// The node of pass `p − 1` whose uses node `i` of pass `p` took over: a consumer of `i` that
/// existed before pass `p` read it in the argument place where it now reads `i`.
pub(super) fn replaced_by(passes: &[&FxFile], d: &GraphDiff, p: usize, i: usize) -> Option<usize> {
    let now = passes[p].graphs.first()?;
    let before = passes[p - 1].graphs.first()?;
    now.nodes[i].users.iter().find_map(|&u| {
        let (0, u0) = d.b_to_a(0, u)? else {
            return None;
        };
        let (a, b) = (&now.nodes[u].inputs, &before.nodes[u0].inputs);
        if a.len() != b.len() {
            return None;
        }
        let k = a.iter().position(|&x| x == i)?;
        Some(b[k])
    })
}

/// One pair's data judged: `None` when a side has no tensor for it or it could not be judged.
pub type Agreement = Option<bool>;

/// Inputs of pair `p` that were not judged.
pub fn unjudged_inputs(pairs: &[StagePair], agree: &[Agreement], p: usize) -> usize {
    pairs[p]
        .inputs
        .iter()
        .filter(|&&q| agree.get(q).copied().flatten().is_none())
        .count()
}

/// Indices of the pairs where the numbers part: the pair departs (`agree[p] == Some(false)`)
/// and none of its inputs departs. In the optimized graph's order.
pub fn findings(pairs: &[StagePair], agree: &[Agreement]) -> Vec<usize> {
    (0..pairs.len())
        .filter(|&p| agree.get(p).copied().flatten() == Some(false))
        .filter(|&p| {
            pairs[p]
                .inputs
                .iter()
                .all(|&q| agree.get(q).copied().flatten() != Some(false))
        })
        .collect()
}

/// The sentence for a finding: which pass did what to which node. `pass_name(i)` names pass
/// `i` as its file does (`004 apply_pattern_passes`); `numbers` says how far it departs;
/// `unjudged` counts its inputs neither agreeing nor departing (no tensor for them).
pub fn sentence(
    pair: &StagePair,
    pass_name: &dyn Fn(usize) -> String,
    numbers: &str,
    unjudged: usize,
) -> String {
    let node = |name: &str, target: &str| format!("`{name}` ({target})");
    let inputs = match unjudged {
        0 => "its inputs agree".to_string(),
        k => format!("its inputs agree ({k} of {} not judged)", pair.inputs.len()),
    };
    let tail = format!("{inputs}, its output departs ({numbers})");
    match &pair.origin {
        Origin::Replaced { pass, .. } => format!(
            "pass {} replaced {} by {}: {tail}",
            pass_name(*pass),
            node(&pair.original, &pair.original_target),
            node(&pair.node, &pair.target),
        ),
        Origin::Changed { passes, what } => {
            let (who, how) = match (passes.as_slice(), what.as_slice()) {
                ([p], [w]) => (format!("pass {}", pass_name(*p)), format!("; {w}")),
                _ => {
                    let each: Vec<String> = passes
                        .iter()
                        .zip(what)
                        .map(|(&p, w)| format!("{} ({w})", pass_name(p)))
                        .collect();
                    (format!("passes {}", each.join(", ")), String::new())
                }
            };
            let now = if pair.node == pair.original {
                String::new()
            } else {
                format!(", now `{}`", pair.node)
            };
            format!(
                "{who} changed `{}` ({}{how}){now}: {tail}",
                pair.original, pair.original_target
            )
        }
        Origin::Kept => format!(
            "no pass changed {}, yet {tail}: the op itself computed differently in the two runs",
            node(&pair.node, &pair.target)
        ),
    }
}

/// What the answer says when no pair departs.
pub const NO_FINDING: &str = "no pass changed the numbers beyond floating-point noise";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::diff::consecutive_diffs;
    use crate::sources::fx_text::parse_fx;

    fn file(body: &str) -> FxFile {
        let f = parse_fx(&format!(
            "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4]\"):\n{body}"
        ));
        assert!(f.unparsed.is_empty(), "{:?}", f.unparsed);
        f
    }

    /// An erf GELU replaced by a fresh node, a multiply rewritten in place, a decomposition
    /// whose interior stands for nothing.
    #[test]
    fn pairs_follow_replacements_and_in_place_changes_not_names() {
        let p0 = file(
            "        gelu: \"f32[4]\" = torch.ops.aten.gelu.default(x)\n\
             \x20       mul: \"f32[4]\" = torch.ops.aten.mul.Tensor(gelu, 2)\n\
             \x20       neg: \"f32[4]\" = torch.ops.aten.neg.default(mul)\n\
             \x20       return (neg,)\n",
        );
        // pass 1 builds `gelu_default` (tanh) in gelu's place; `gelu` is left for DCE
        let p1 = file(
            "        gelu: \"f32[4]\" = torch.ops.aten.gelu.default(x)\n\
             \x20       gelu_default: \"f32[4]\" = torch.ops.aten.gelu.default(x, approximate = 'tanh')\n\
             \x20       mul: \"f32[4]\" = torch.ops.aten.mul.Tensor(gelu_default, 2)\n\
             \x20       neg: \"f32[4]\" = torch.ops.aten.neg.default(mul)\n\
             \x20       return (neg,)\n",
        );
        // pass 2 drops the dead gelu and turns mul into mul by 3 in place; pass 3 decomposes
        // neg into sub(0, ·) through an interior node
        let p2 = file(
            "        gelu_default: \"f32[4]\" = torch.ops.aten.gelu.default(x, approximate = 'tanh')\n\
             \x20       mul: \"f32[4]\" = torch.ops.aten.mul.Tensor(gelu_default, 3)\n\
             \x20       neg: \"f32[4]\" = torch.ops.aten.neg.default(mul)\n\
             \x20       return (neg,)\n",
        );
        let p3 = file(
            "        gelu_default: \"f32[4]\" = torch.ops.aten.gelu.default(x, approximate = 'tanh')\n\
             \x20       mul: \"f32[4]\" = torch.ops.aten.mul.Tensor(gelu_default, 3)\n\
             \x20       zero: \"f32[4]\" = torch.ops.aten.zeros_like.default(mul)\n\
             \x20       sub: \"f32[4]\" = torch.ops.aten.sub.Tensor(zero, mul)\n\
             \x20       return (sub,)\n",
        );
        let passes = [&p0, &p1, &p2, &p3];
        let diffs = consecutive_diffs(&passes);
        let pairs = pair_stages(&passes, &diffs);
        let got: Vec<(&str, &str, Origin)> = pairs
            .iter()
            .map(|p| (p.node.as_str(), p.original.as_str(), p.origin.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                ("x", "x", Origin::Kept),
                (
                    "gelu_default",
                    "gelu",
                    Origin::Replaced {
                        pass: 1,
                        later: vec![]
                    }
                ),
                (
                    "mul",
                    "mul",
                    Origin::Changed {
                        passes: vec![2],
                        what: vec!["args".into()]
                    }
                ),
                (
                    "sub",
                    "neg",
                    Origin::Replaced {
                        pass: 3,
                        later: vec![]
                    }
                ),
            ]
        );
        // sub's inputs: `mul` directly, and `mul` again through the unpaired `zero`
        let sub = &pairs[3];
        assert_eq!(sub.inputs, vec![2]);
        assert_eq!(pairs[1].inputs, vec![0]);
        assert_eq!(pairs[1].target, "aten.gelu");
    }

    #[test]
    fn the_finding_is_the_first_departure_whose_inputs_agree() {
        let pair = |node: &str, inputs: Vec<usize>| StagePair {
            node: node.into(),
            index: 0,
            target: "aten.x".into(),
            original: node.into(),
            original_target: "aten.x".into(),
            origin: Origin::Kept,
            inputs,
        };
        let pairs = vec![
            pair("a", vec![]),
            pair("b", vec![0]),
            pair("c", vec![1]),
            pair("d", vec![0]),
        ];
        // b departs on agreeing input a; c departs because b did; d has no data
        let agree = vec![Some(true), Some(false), Some(false), None];
        assert_eq!(findings(&pairs, &agree), vec![1]);
        assert!(findings(&pairs, &[Some(true); 4]).is_empty());
    }

    #[test]
    fn the_sentence_names_the_pass_and_both_nodes() {
        let p = StagePair {
            node: "gelu_default".into(),
            index: 1,
            target: "aten.gelu".into(),
            original: "gelu".into(),
            original_target: "aten.gelu".into(),
            origin: Origin::Replaced {
                pass: 4,
                later: vec![],
            },
            inputs: vec![],
        };
        let name = |i: usize| format!("{i:03} apply_pattern_passes");
        assert_eq!(
            sentence(&p, &name, "cosine 0.99910", 0),
            "pass 004 apply_pattern_passes replaced `gelu` (aten.gelu) by `gelu_default` \
             (aten.gelu): its inputs agree, its output departs (cosine 0.99910)"
        );
    }
}
