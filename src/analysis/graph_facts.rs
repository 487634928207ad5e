//! What is known of one graph file once parsed: its counts, its problems and a fingerprint of
//! its structure. The summary, the run tree, the inspector and the rank matrix read them.
//!
//! The [`fingerprint`] is blind to node names: a rank that took another branch renumbers every
//! node after it (`view_3` becomes `view_4`) without the graphs differing past that branch. It
//! is the multiset of (node label, labels of its input nodes), a label being the op for
//! placeholders, `get_attr` and output and the target otherwise.

use super::op_family::{self, OpFamily};
use crate::model::fx::{FxFile, FxGraph, FxNode, OpKind};
use serde::Serialize;
use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// What is known of one graph file once parsed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GraphFacts {
    /// Nodes of the top-level graph, placeholders and output included.
    pub nodes: usize,
    /// Nodes of nested sub-graphs (HOP branches).
    pub subgraph_nodes: usize,
    pub unparsed: usize,
    /// Structure blind to node names ([`fingerprint`]): ranks compare by it.
    #[serde(skip)]
    pub fingerprint: u64,
    /// File-level problems, and the reason the file could not be read.
    pub problems: Vec<String>,
    /// Top-level nodes by op kind, and by op family (the inspector's summary).
    #[serde(skip)]
    pub by_op: BTreeMap<OpKind, usize>,
    #[serde(skip)]
    pub by_family: BTreeMap<OpFamily, usize>,
}

impl GraphFacts {
    pub fn of(file: &FxFile) -> Self {
        let mut by_op = BTreeMap::new();
        let mut by_family = BTreeMap::new();
        for n in file.graphs.first().map_or(&[][..], |g| &g.nodes[..]) {
            *by_op.entry(n.op).or_default() += 1;
            *by_family.entry(op_family::family(n)).or_default() += 1;
        }
        GraphFacts {
            nodes: file.node_count(),
            subgraph_nodes: file.graphs.iter().skip(1).map(|g| g.nodes.len()).sum(),
            unparsed: file.unparsed.len(),
            fingerprint: fingerprint(file),
            problems: file.problems.clone(),
            by_op,
            by_family,
        }
    }

    /// Facts of a load attempt: the parsed file's, or the reason it could not be read.
    pub fn of_result(loaded: Result<&FxFile, impl std::fmt::Display>) -> Self {
        match loaded {
            Ok(f) => Self::of(f),
            Err(e) => Self::unreadable(e.to_string()),
        }
    }

    pub fn unreadable(reason: String) -> Self {
        GraphFacts {
            problems: vec![reason],
            ..Default::default()
        }
    }

    /// ok / warning / error, as the tree badges show it.
    pub fn status(&self) -> &'static str {
        if self.nodes == 0 && !self.problems.is_empty() {
            "error"
        } else if self.unparsed > 0 || !self.problems.is_empty() {
            "warning"
        } else {
            "ok"
        }
    }
}

/// Structural fingerprint of a graph file's top-level graph and its sub-graphs: each node
/// hashed with its inputs' labels, the hashes sorted (a multiset: node order does not count).
pub fn fingerprint(file: &FxFile) -> u64 {
    let mut h = DefaultHasher::new();
    for g in &file.graphs {
        node_hashes(g).hash(&mut h);
    }
    h.finish()
}

fn node_hashes(g: &FxGraph) -> Vec<u64> {
    let mut v: Vec<u64> = g
        .nodes
        .iter()
        .map(|n| {
            let mut h = DefaultHasher::new();
            label(n).hash(&mut h);
            for i in n.inputs.iter().filter_map(|&i| g.nodes.get(i)) {
                label(i).hash(&mut h);
            }
            h.finish()
        })
        .collect();
    v.sort_unstable();
    v
}

fn label(n: &FxNode) -> &str {
    match n.op {
        OpKind::Placeholder | OpKind::GetAttr | OpKind::Output => n.op.as_str(),
        _ => &n.target,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_ignores_names_and_order_but_not_wiring() {
        let parse = |body: &str| {
            let text = format!(
                "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4]\", y: \"f32[4]\"):\n{body}        return (r,)\n"
            );
            crate::sources::fx_text::parse_fx(&text)
        };
        let a = parse(
            "        m: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, y)\n        r: \"f32[4]\" = torch.ops.aten.relu.default(m)\n",
        );
        let renamed = parse(
            "        mul_7: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, y)\n        r: \"f32[4]\" = torch.ops.aten.relu.default(mul_7)\n",
        );
        let rewired = parse(
            "        m: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, y)\n        r: \"f32[4]\" = torch.ops.aten.relu.default(x)\n",
        );
        assert_eq!(fingerprint(&a), fingerprint(&renamed));
        assert_ne!(fingerprint(&a), fingerprint(&rewired));
    }
}
