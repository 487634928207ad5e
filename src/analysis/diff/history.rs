//! A node's history over the passes of a phase, followed across renames, and "the first pass
//! where …" queries.

use super::*;

/// What one pass did to a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistoryEvent {
    /// Not in this pass.
    Absent,
    /// In this pass and not in the previous one (for pass 0: present from the start).
    Appeared,
    /// Here and in the previous pass, with these fields changed.
    Changed(Fields),
    /// Here and in the previous pass, nothing compared changed (it may have been renamed).
    Unchanged,
    /// In the previous pass, not in this one.
    Vanished,
}

/// One pass of a node's history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEntry {
    /// Index into the `passes` slice.
    pub pass: usize,
    pub event: HistoryEvent,
    /// `(graph, node)` in this pass, when present.
    pub node: Option<(usize, usize)>,
    /// The node's qualified name in this pass, when present.
    pub name: Option<String>,
    /// Its qualified name in the previous pass when this pass renamed it.
    pub renamed_from: Option<String>,
}

impl HistoryEntry {
    /// Renamed or changed by this pass.
    pub fn is_change(&self) -> bool {
        matches!(self.event, HistoryEvent::Changed(_)) || self.renamed_from.is_some()
    }
}

/// `name` (top level) or `<class>/<name>` (first sub-graph of that class) → `(graph, node)`.
pub fn resolve(file: &FxFile, qualified: &str) -> Option<(usize, usize)> {
    if let Some(i) = file.graphs.first()?.by_name.get(qualified) {
        return Some((0, i));
    }
    let (class, name) = qualified.split_once('/')?;
    file.graphs.iter().enumerate().find_map(|(g, gr)| {
        (gr.name == class)
            .then(|| gr.by_name.get(name).map(|i| (g, i)))
            .flatten()
    })
}

/// The qualified name of `(graph, node)`: `<class>/<name>` inside sub-graphs.
pub fn qualified_name(file: &FxFile, graph: usize, node: usize) -> Option<String> {
    let g = file.graphs.get(graph)?;
    let n = g.nodes.get(node)?;
    Some(if graph == 0 || g.parent.is_none() {
        n.name.to_string()
    } else {
        format!("{}/{}", g.name, n.name)
    })
}

/// The diffs of consecutive passes: `[diff(p0, p1), diff(p1, p2), …]` (in parallel).
pub fn consecutive_diffs(passes: &[&FxFile]) -> Vec<GraphDiff> {
    use rayon::prelude::*;
    passes.par_windows(2).map(|w| diff(w[0], w[1])).collect()
}

/// A node's history over `passes` (one entry per pass), followed across renames. The node is
/// first looked up by `qualified_name` in the earliest pass that has the name, then traced
/// backward and forward through the consecutive diffs; after it vanishes, the name is looked up
/// again in case a later pass brings it back.
pub fn node_history(passes: &[&FxFile], qualified_name: &str) -> Vec<HistoryEntry> {
    node_history_in(passes, &consecutive_diffs(passes), qualified_name)
}

/// [`node_history`] with the consecutive diffs already made (`diffs[i]` = pass i → i+1).
pub fn node_history_in(
    passes: &[&FxFile],
    diffs: &[impl Borrow<GraphDiff>],
    qualified: &str,
) -> Vec<HistoryEntry> {
    let mut out: Vec<HistoryEntry> = (0..passes.len())
        .map(|pass| HistoryEntry {
            pass,
            event: HistoryEvent::Absent,
            node: None,
            name: None,
            renamed_from: None,
        })
        .collect();
    let Some(anchor) = passes.iter().position(|f| resolve(f, qualified).is_some()) else {
        return out;
    };
    let name_of = |p: usize, at: (usize, usize)| qualified_name(passes[p], at.0, at.1);
    let paired =
        |p: usize, at: (usize, usize), prev: (usize, usize)| -> (HistoryEvent, Option<String>) {
            let s = diffs[p - 1].borrow().status_b(at.0, at.1);
            let ev = match s {
                Some(NodeStatus::Changed { fields }) => HistoryEvent::Changed(fields),
                _ => HistoryEvent::Unchanged,
            };
            let (now, before) = (name_of(p, at), name_of(p - 1, prev));
            (ev, (now != before).then_some(before).flatten())
        };

    // Backward from the anchor.
    let mut cur = resolve(passes[anchor], qualified);
    let mut p = anchor;
    while let Some(at) = cur {
        out[p].node = Some(at);
        out[p].name = name_of(p, at);
        if p == 0 {
            out[p].event = HistoryEvent::Appeared;
            break;
        }
        match diffs.get(p - 1).and_then(|d| d.borrow().b_to_a(at.0, at.1)) {
            Some(prev) => {
                let (ev, from) = paired(p, at, prev);
                out[p].event = ev;
                out[p].renamed_from = from;
                cur = Some(prev);
                p -= 1;
            }
            None => {
                out[p].event = HistoryEvent::Appeared;
                break;
            }
        }
    }

    // Forward from the anchor.
    let mut cur = resolve(passes[anchor], qualified);
    for p in anchor + 1..passes.len() {
        let Some(d) = diffs.get(p - 1).map(|d| d.borrow()) else {
            break;
        };
        match cur {
            Some(at) => match d.a_to_b(at.0, at.1) {
                Some(next) => {
                    let (ev, from) = paired(p, next, at);
                    out[p].event = ev;
                    out[p].renamed_from = from;
                    out[p].node = Some(next);
                    out[p].name = name_of(p, next);
                    cur = Some(next);
                }
                None => {
                    out[p].event = HistoryEvent::Vanished;
                    cur = None;
                }
            },
            None => {
                if let Some(at) = resolve(passes[p], qualified) {
                    match d.b_to_a(at.0, at.1) {
                        None => out[p].event = HistoryEvent::Appeared,
                        Some(prev) => {
                            let (ev, from) = paired(p, at, prev);
                            out[p].event = ev;
                            out[p].renamed_from = from;
                        }
                    }
                    out[p].node = Some(at);
                    out[p].name = name_of(p, at);
                    cur = Some(at);
                }
            }
        }
    }
    out
}

/// A question for [`first_pass_where`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FirstQuery {
    /// The first pass that has a node of this qualified name (0 if the first pass has it).
    NodeAppears(String),
    /// The first pass without the node (by name) when the pass before had it.
    NodeDisappears(String),
    /// The first pass that changes or renames the node (followed across renames).
    NodeChanges(String),
    /// The first pass with a node of this target (0 if the first pass has one). A target is
    /// given in full (`torch.ops.aten.addmm.default`), without `torch.ops.`, or short
    /// (`aten.addmm`, as labels show it).
    TargetAppears(String),
    /// The first pass without a node of this target when the pass before had one.
    TargetDisappears(String),
}

/// The index (into `passes`) of the first pass answering `query`.
pub fn first_pass_where(passes: &[&FxFile], query: FirstQuery) -> Option<usize> {
    let has_node = |f: &FxFile, q: &str| resolve(f, q).is_some();
    let has_target = |f: &FxFile, t: &str| {
        f.graphs
            .iter()
            .any(|g| g.nodes.iter().any(|n| target_matches(n, t)))
    };
    let appears = |has: &dyn Fn(&FxFile) -> bool| passes.iter().position(|f| has(f));
    let disappears = |has: &dyn Fn(&FxFile) -> bool| {
        let present: Vec<bool> = passes.iter().map(|f| has(f)).collect();
        (1..passes.len()).find(|&i| present[i - 1] && !present[i])
    };
    match query {
        FirstQuery::NodeAppears(q) => appears(&|f| has_node(f, &q)),
        FirstQuery::NodeDisappears(q) => disappears(&|f| has_node(f, &q)),
        FirstQuery::TargetAppears(t) => appears(&|f| has_target(f, &t)),
        FirstQuery::TargetDisappears(t) => disappears(&|f| has_target(f, &t)),
        FirstQuery::NodeChanges(q) => node_history(passes, &q)
            .iter()
            .find(|e| e.is_change())
            .map(|e| e.pass),
    }
}

/// `t` names `n`'s target: in full, without `torch.ops.`, or as the short label target.
pub fn target_matches(n: &FxNode, t: &str) -> bool {
    if matches!(n.op, OpKind::Placeholder | OpKind::Output) {
        return false;
    }
    &*n.target == t || n.target.strip_prefix("torch.ops.") == Some(t) || short_target(n) == t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::diff::tests::{file, lines};

    #[test]
    fn history_follows_renames_and_first_pass_queries() {
        let p0 = file(&lines(&[
            "v: \"f32[4]\" = torch.ops.aten.view.default(x, [4])",
            "return (v,)",
        ]));
        let p1 = file(&lines(&[
            "v: \"f32[4]\" = torch.ops.aten.reshape.default(x, [4])",
            "return (v,)",
        ]));
        let p2 = file(&lines(&[
            "r: \"f32[4]\" = torch.ops.aten.reshape.default(x, [4])",
            "return (r,)",
        ]));
        let p3 = file(&lines(&["return (x,)"]));
        let passes = [&p0, &p1, &p2, &p3];
        let h = node_history(&passes, "r");
        let ev: Vec<HistoryEvent> = h.iter().map(|e| e.event).collect();
        assert_eq!(
            ev,
            [
                HistoryEvent::Appeared,
                HistoryEvent::Changed(Fields::EMPTY.with(Field::Target)),
                HistoryEvent::Unchanged,
                HistoryEvent::Vanished,
            ]
        );
        assert_eq!(h[2].renamed_from.as_deref(), Some("v"));
        assert_eq!(h[0].name.as_deref(), Some("v"));
        assert_eq!(h[3].name, None);

        let q = |x: FirstQuery| first_pass_where(&passes, x);
        assert_eq!(q(FirstQuery::NodeAppears("r".into())), Some(2));
        assert_eq!(q(FirstQuery::NodeDisappears("v".into())), Some(2));
        assert_eq!(q(FirstQuery::NodeChanges("v".into())), Some(1));
        assert_eq!(q(FirstQuery::NodeChanges("r".into())), Some(1));
        assert_eq!(q(FirstQuery::TargetAppears("aten.reshape".into())), Some(1));
        assert_eq!(
            q(FirstQuery::TargetDisappears("aten.view.default".into())),
            Some(1)
        );
        assert_eq!(
            q(FirstQuery::TargetDisappears(
                "torch.ops.aten.reshape.default".into()
            )),
            Some(3)
        );
        assert_eq!(q(FirstQuery::NodeAppears("nope".into())), None);
    }
}
