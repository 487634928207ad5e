//! Structural diff of two FX graph files (docs/USER_GUIDE.md, "what a pass changed"): which nodes a pass added, removed, changed
//! (and what of them), renamed, and which edges it rewired. Pure: no I/O, no egui.
//!
//! Matching, per graph pair, in this order (every step only looks at nodes still unmatched):
//! 1. **By name.** FX names are unique inside a graph and passes keep the name of a node they
//!    edit in place (`view_to_reshape` rewrites `view_3`'s target and keeps `view_3`), so a name
//!    match is the same node, whatever else changed.
//! 2. **By structure** (renames): same op kind, same target and the same inputs, where every
//!    input is already matched. Among several candidates the one with equal literal arguments
//!    and annotation wins, then the first in file order. FX files are in topological order, so
//!    one sweep in B's order matches whole renamed chains (a producer matched earlier in the
//!    sweep makes its consumers' keys complete); the sweep repeats until nothing new matches.
//! 3. **By position** among equal targets: the k-th unmatched `aten.add.Tensor` of A with the
//!    k-th of B, only when their inputs are compatible (one matched input in common, or neither
//!    has inputs). Then step 2 runs again for the consumers this enabled, until a fixpoint.
//!
//! Placeholders match on op kind alone in steps 2–3 (their target is their own name).
//!
//! Sub-graphs (HOP branches) pair by class name (and occurrence, for repeated names); the
//! top-level graphs always pair. Sub-graph nodes are named `<class>/<name>` in reports.
//!
//! Status of a matched pair: `Changed { fields }` when any of target (op kind, or target except
//! for placeholders, whose target is their own original name), inputs (the node references of
//! args and kwargs, in order, through the matching), args (literal positional arguments),
//! kwargs (literal keyword arguments), dtype (element type, device, tensor wrapper; `Sym` /
//! other annotations), shape (sizes and strides; a `Sym`'s expression) or source (stack-trace
//! location) differ; else `Unchanged`. Renaming is reported apart (`renamed`), so a renamed node
//! is also `Changed` or `Unchanged`. `unchanged` counts every matched node without field
//! changes, renamed or not: nodes_b = added + changed + unchanged, nodes_a = removed + changed +
//! unchanged.
//!
//! Rewired edges: producer → consumer edges between matched nodes present in one graph only
//! (only consumers whose inputs changed can have them).

use crate::model::fx::{Arg, FxFile, FxGraph, FxNode, OpKind, Short, ValueMeta};
use crate::model::fx_fmt::short_target;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Borrow;
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::ops::Range;

mod compare;
mod history;
mod matching;
mod text;

pub use compare::change_details;
use compare::*;
pub use history::*;
use matching::*;
pub use text::*;

// ---------------------------------------------------------------------------------------------
// Fields and statuses
// ---------------------------------------------------------------------------------------------

/// One aspect of a node a pass can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Field {
    /// Op kind or target (`aten.view.default` → `aten.reshape.default`).
    Target,
    /// Node references among args/kwargs, in order, seen through the matching.
    Inputs,
    /// Literal positional arguments (node references excluded).
    Args,
    /// Literal keyword arguments (node references excluded).
    Kwargs,
    /// Element type; also device and tensor wrapper, and non-tensor annotations.
    Dtype,
    /// Sizes and strides (a `Sym`'s expression).
    Shape,
    /// The `# File: …` stack-trace location.
    Source,
}

impl Field {
    pub const ALL: [Field; 7] = [
        Field::Target,
        Field::Inputs,
        Field::Args,
        Field::Kwargs,
        Field::Dtype,
        Field::Shape,
        Field::Source,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Field::Target => "target",
            Field::Inputs => "inputs",
            Field::Args => "args",
            Field::Kwargs => "kwargs",
            Field::Dtype => "dtype",
            Field::Shape => "shape",
            Field::Source => "source",
        }
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of [`Field`]s (a bit set; iterates in [`Field::ALL`] order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Fields(u8);

impl Fields {
    pub const EMPTY: Fields = Fields(0);

    pub fn contains(self, f: Field) -> bool {
        self.0 & f.bit() != 0
    }

    pub fn insert(&mut self, f: Field) {
        self.0 |= f.bit();
    }

    pub fn with(mut self, f: Field) -> Fields {
        self.insert(f);
        self
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    pub fn iter(self) -> impl Iterator<Item = Field> {
        Field::ALL.into_iter().filter(move |f| self.contains(*f))
    }

    pub fn names(self) -> Vec<&'static str> {
        self.iter().map(Field::as_str).collect()
    }
}

impl FromIterator<Field> for Fields {
    fn from_iter<I: IntoIterator<Item = Field>>(iter: I) -> Self {
        let mut s = Fields::EMPTY;
        for f in iter {
            s.insert(f);
        }
        s
    }
}

impl fmt::Display for Fields {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join(", "))
    }
}

impl Serialize for Fields {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().collect::<Vec<_>>())
    }
}

impl<'de> Deserialize<'de> for Fields {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Vec::<Field>::deserialize(d)?.into_iter().collect())
    }
}

/// What a diff says about one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum NodeStatus {
    /// Matched, nothing compared differs (it may still be renamed).
    Unchanged,
    /// Matched, these fields differ (it may also be renamed).
    Changed { fields: Fields },
    /// Only in B.
    Added,
    /// Only in A.
    Removed,
}

impl NodeStatus {
    /// Anything but `Unchanged`.
    pub fn is_change(self) -> bool {
        self != NodeStatus::Unchanged
    }

    pub fn fields(self) -> Fields {
        match self {
            NodeStatus::Changed { fields } => fields,
            _ => Fields::EMPTY,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            NodeStatus::Unchanged => "unchanged",
            NodeStatus::Changed { .. } => "changed",
            NodeStatus::Added => "added",
            NodeStatus::Removed => "removed",
        }
    }
}

/// Which step matched a B node to its A node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    Name,
    /// Same target on the same (matched) inputs: a rename.
    Structure,
    /// k-th of A with k-th of B among equal targets, inputs compatible: a rename.
    Position,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// In B, not in A.
    Added,
    /// In A, not in B.
    Removed,
}

/// An edge between matched nodes that exists on one side only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rewire {
    /// Producer node index: in B's graph for `Added`, in A's graph for `Removed`.
    pub from: usize,
    /// Consumer node index, same side as `from`.
    pub to: usize,
    pub kind: EdgeKind,
}

/// How many nodes fall in each class. `unchanged` includes renamed nodes without field changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DiffCounts {
    pub added: usize,
    pub removed: usize,
    pub changed: usize,
    pub renamed: usize,
    pub unchanged: usize,
    pub rewired: usize,
}

impl DiffCounts {
    /// True when the two graphs are the same graph (names included).
    pub fn is_empty(&self) -> bool {
        self.added == 0
            && self.removed == 0
            && self.changed == 0
            && self.renamed == 0
            && self.rewired == 0
    }
}

impl std::ops::AddAssign for DiffCounts {
    fn add_assign(&mut self, o: DiffCounts) {
        self.added += o.added;
        self.removed += o.removed;
        self.changed += o.changed;
        self.renamed += o.renamed;
        self.unchanged += o.unchanged;
        self.rewired += o.rewired;
    }
}

impl fmt::Display for DiffCounts {
    /// `+3 −5 ~2 renamed 1, 240 unchanged`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "+{} \u{2212}{} ~{} renamed {}, {} unchanged",
            self.added, self.removed, self.changed, self.renamed, self.unchanged
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------------------------

/// The diff of one graph of A against one graph of B (or of a graph present on one side).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GraphPairDiff {
    /// Class name (B's when both exist). Empty for the top-level pair of [`diff_graph`].
    pub class: String,
    /// True for the top-level pair: its node names are not qualified.
    pub top: bool,
    /// Index into A's `FxFile::graphs` (`None`: the graph exists in B only).
    pub a: Option<usize>,
    /// Index into B's `FxFile::graphs` (`None`: the graph exists in A only).
    pub b: Option<usize>,
    /// For each node of A's graph, its match in B's graph.
    pub a_to_b: Vec<Option<usize>>,
    /// For each node of B's graph, its match in A's graph.
    pub b_to_a: Vec<Option<usize>>,
    /// For each node of B's graph, the step that matched it.
    pub matched_by: Vec<Option<MatchKind>>,
    /// Status of each node of A's graph (`Removed`, or its pair's status).
    pub status_a: Vec<NodeStatus>,
    /// Status of each node of B's graph (`Added`, or its pair's status).
    pub status_b: Vec<NodeStatus>,
    /// Matched pairs whose names differ, `(a, b)`, in B's order.
    pub renamed: Vec<(usize, usize)>,
    /// Ordered by consumer in B's order (removed edges of a consumer first), then producer.
    pub rewired: Vec<Rewire>,
    pub counts: DiffCounts,
}

impl GraphPairDiff {
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// True when the B node at `b` was renamed (its A name differs).
    pub fn is_renamed_b(&self, b: usize) -> bool {
        self.renamed.binary_search_by_key(&b, |&(_, j)| j).is_ok()
    }
}

/// The diff of two graph files: one [`GraphPairDiff`] per graph pair, the top-level pair first,
/// then B's sub-graphs in file order, then sub-graphs found in A only.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GraphDiff {
    pub pairs: Vec<GraphPairDiff>,
    /// A's graph index → pair index.
    pair_of_a: Vec<usize>,
    /// B's graph index → pair index.
    pair_of_b: Vec<usize>,
}

impl GraphDiff {
    /// The top-level pair (always present, possibly empty).
    pub fn top(&self) -> &GraphPairDiff {
        &self.pairs[0]
    }

    /// True when every index into `pairs` holds: what a diff received over a link must be
    /// before it is used.
    pub fn is_well_formed(&self) -> bool {
        !self.pairs.is_empty()
            && self
                .pair_of_a
                .iter()
                .chain(&self.pair_of_b)
                .all(|&p| p < self.pairs.len())
    }

    /// Totals over every graph pair.
    pub fn counts(&self) -> DiffCounts {
        let mut c = DiffCounts::default();
        for p in &self.pairs {
            c += p.counts;
        }
        c
    }

    /// True when nothing differs (names included).
    pub fn is_empty(&self) -> bool {
        self.pairs.iter().all(GraphPairDiff::is_empty)
    }

    pub fn pair_of_a(&self, graph_a: usize) -> Option<&GraphPairDiff> {
        self.pair_of_a.get(graph_a).map(|&p| &self.pairs[p])
    }

    pub fn pair_of_b(&self, graph_b: usize) -> Option<&GraphPairDiff> {
        self.pair_of_b.get(graph_b).map(|&p| &self.pairs[p])
    }

    /// Status of node `node` of A's graph `graph`.
    pub fn status_a(&self, graph: usize, node: usize) -> Option<NodeStatus> {
        self.pair_of_a(graph)?.status_a.get(node).copied()
    }

    /// Status of node `node` of B's graph `graph`.
    pub fn status_b(&self, graph: usize, node: usize) -> Option<NodeStatus> {
        self.pair_of_b(graph)?.status_b.get(node).copied()
    }

    /// `(graph, node)` in A → its match `(graph, node)` in B.
    pub fn a_to_b(&self, graph: usize, node: usize) -> Option<(usize, usize)> {
        let p = self.pair_of_a(graph)?;
        Some((p.b?, (*p.a_to_b.get(node)?)?))
    }

    /// `(graph, node)` in B → its match `(graph, node)` in A.
    pub fn b_to_a(&self, graph: usize, node: usize) -> Option<(usize, usize)> {
        let p = self.pair_of_b(graph)?;
        Some((p.a?, (*p.b_to_a.get(node)?)?))
    }

    /// The stable JSON form, with node names from the two files this diff was made of.
    pub fn report(&self, a: &FxFile, b: &FxFile) -> DiffReport {
        let mut r = DiffReport::default();
        for p in &self.pairs {
            let ga = p.a.and_then(|i| a.graphs.get(i));
            let gb = p.b.and_then(|i| b.graphs.get(i));
            let qa = |i: usize| qualify(p, ga.map_or("", |g| g.nodes[i].name.as_str()));
            let qb = |i: usize| qualify(p, gb.map_or("", |g| g.nodes[i].name.as_str()));
            for (j, s) in p.status_b.iter().enumerate() {
                match s {
                    NodeStatus::Added => r.added.push(qb(j)),
                    NodeStatus::Changed { fields } => r.changed.push(ChangedEntry {
                        name: qb(j),
                        fields: *fields,
                    }),
                    _ => {}
                }
            }
            for (i, s) in p.status_a.iter().enumerate() {
                if *s == NodeStatus::Removed {
                    r.removed.push(qa(i));
                }
            }
            for &(i, j) in &p.renamed {
                r.renamed.push(RenamedEntry {
                    from: qa(i),
                    to: qb(j),
                });
            }
            for w in &p.rewired {
                let (from, to) = match w.kind {
                    EdgeKind::Added => (qb(w.from), qb(w.to)),
                    EdgeKind::Removed => (qa(w.from), qa(w.to)),
                };
                r.rewired.push(RewireEntry {
                    from,
                    to,
                    kind: w.kind,
                });
            }
            r.unchanged += p.counts.unchanged;
        }
        r
    }
}

fn qualify(p: &GraphPairDiff, name: &str) -> String {
    if p.top {
        name.to_string()
    } else {
        format!("{}/{}", p.class, name)
    }
}

/// `fxray diff --json`: `{"added": [names], "removed": [names], "changed": [{"name", "fields"}],
/// "renamed": [{"from", "to"}], "unchanged": N, "rewired": [{"from", "to", "kind"}]}`.
/// Names of sub-graph nodes are `<class>/<name>`; changed, renamed and added-edge names are B's,
/// removed and removed-edge names A's.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DiffReport {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<ChangedEntry>,
    pub renamed: Vec<RenamedEntry>,
    pub unchanged: usize,
    pub rewired: Vec<RewireEntry>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChangedEntry {
    pub name: String,
    pub fields: Fields,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RenamedEntry {
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RewireEntry {
    pub from: String,
    pub to: String,
    pub kind: EdgeKind,
}

// ---------------------------------------------------------------------------------------------
// Entry points
// ---------------------------------------------------------------------------------------------

/// Diffs every graph of two files (see the module docs). Deterministic.
pub fn diff(a: &FxFile, b: &FxFile) -> GraphDiff {
    let empty = FxGraph::default();
    let mut pairs: Vec<(Option<usize>, Option<usize>)> = Vec::new();
    if !a.graphs.is_empty() || !b.graphs.is_empty() {
        pairs.push((
            (!a.graphs.is_empty()).then_some(0),
            (!b.graphs.is_empty()).then_some(0),
        ));
    } else {
        pairs.push((None, None));
    }
    // Sub-graphs by (class name, occurrence of that name).
    let mut a_subs: HashMap<(&str, usize), usize> = HashMap::new();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (i, g) in a.graphs.iter().enumerate().skip(1) {
        let k = seen.entry(g.name.as_str()).or_insert(0);
        a_subs.insert((g.name.as_str(), *k), i);
        *k += 1;
    }
    seen.clear();
    let mut a_paired = vec![false; a.graphs.len()];
    for (j, g) in b.graphs.iter().enumerate().skip(1) {
        let k = seen.entry(g.name.as_str()).or_insert(0);
        let i = a_subs.get(&(g.name.as_str(), *k)).copied();
        *k += 1;
        if let Some(i) = i {
            a_paired[i] = true;
        }
        pairs.push((i, Some(j)));
    }
    for (i, paired) in a_paired.iter().enumerate().skip(1) {
        if !paired {
            pairs.push((Some(i), None));
        }
    }

    let mut out = GraphDiff {
        pairs: Vec::with_capacity(pairs.len()),
        pair_of_a: vec![0; a.graphs.len()],
        pair_of_b: vec![0; b.graphs.len()],
    };
    for (k, &(ia, ib)) in pairs.iter().enumerate() {
        let ga = ia.map_or(&empty, |i| &a.graphs[i]);
        let gb = ib.map_or(&empty, |i| &b.graphs[i]);
        let mut p = diff_graph(ga, gb);
        p.top = k == 0;
        p.a = ia;
        p.b = ib;
        p.class = ib
            .map(|i| b.graphs[i].name.clone())
            .or_else(|| ia.map(|i| a.graphs[i].name.clone()))
            .unwrap_or_default();
        if let Some(i) = ia {
            out.pair_of_a[i] = k;
        }
        if let Some(j) = ib {
            out.pair_of_b[j] = k;
        }
        out.pairs.push(p);
    }
    out
}

/// Diffs two graphs' nodes (sub-graphs are not followed; see [`diff`] for whole files). The
/// result is marked top-level with graph indices `Some(0)`.
pub fn diff_graph(a: &FxGraph, b: &FxGraph) -> GraphPairDiff {
    if std::ptr::eq(a, b) && a.by_name.len() == a.nodes.len() {
        return same_graph(a);
    }
    let mut m = Matcher::new(a, b);
    m.by_name();
    for _ in 0..MAX_ROUNDS {
        let s = m.by_structure();
        let p = m.by_position();
        if s + p == 0 {
            break;
        }
    }
    m.finish()
}

/// The diff of a graph with itself (passes that changed nothing share one parse): every node
/// matched to itself by name, nothing changed. Only for a graph whose names are unique, where
/// matching would find exactly that (a test holds the two to the same answer).
fn same_graph(g: &FxGraph) -> GraphPairDiff {
    let n = g.nodes.len();
    let itself: Vec<Option<usize>> = (0..n).map(Some).collect();
    GraphPairDiff {
        class: String::new(),
        top: true,
        a: Some(0),
        b: Some(0),
        a_to_b: itself.clone(),
        b_to_a: itself,
        matched_by: vec![Some(MatchKind::Name); n],
        status_a: vec![NodeStatus::Unchanged; n],
        status_b: vec![NodeStatus::Unchanged; n],
        renamed: Vec::new(),
        rewired: Vec::new(),
        counts: DiffCounts {
            unchanged: n,
            ..DiffCounts::default()
        },
    }
}

/// Rounds of (structure, position) matching; each round that matches nothing ends the loop, so
/// this only bounds pathological inputs.
const MAX_ROUNDS: usize = 8;

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::sources::fx_text::parse_fx;

    pub(super) fn file(body: &str) -> FxFile {
        let text = format!(
            "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4]\", y: \"f32[4]\"):\n{body}"
        );
        let f = parse_fx(&text);
        assert!(f.unparsed.is_empty(), "{:?}", f.unparsed);
        f
    }

    pub(super) fn lines(nodes: &[&str]) -> String {
        nodes.iter().map(|l| format!("        {l}\n")).collect()
    }

    /// The shortcut for a parse diffed with itself gives what matching a copy of it gives, on
    /// every graph file among the fixtures.
    #[test]
    fn a_parse_diffed_with_itself_is_what_matching_finds() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut checked = 0;
        for entry in walkdir::WalkDir::new(&root).into_iter().flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "txt")
                || !path.to_string_lossy().contains("graph")
            {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            let f = parse_fx(&text);
            if f.node_count() == 0 {
                continue;
            }
            let copy = f.clone();
            let json = |d: &GraphDiff| serde_json::to_value(d).unwrap();
            assert_eq!(
                json(&diff(&f, &f)),
                json(&diff(&f, &copy)),
                "{}",
                path.display()
            );
            checked += 1;
        }
        assert!(checked > 20, "only {checked} graph files checked");
    }

    #[test]
    fn identical_graphs_have_an_empty_diff() {
        let f = file(&lines(&[
            "a: \"f32[4]\" = torch.ops.aten.add.Tensor(x, y)",
            "b: \"f32[4]\" = torch.ops.aten.mul.Tensor(a, 2)",
            "return (b,)",
        ]));
        let d = diff(&f, &f);
        assert!(d.is_empty());
        assert_eq!(d.counts().unchanged, 5);
        let r = d.report(&f, &f);
        assert!(r.added.is_empty() && r.removed.is_empty() && r.changed.is_empty());
    }

    #[test]
    fn fields_are_told_apart() {
        let a = file(&lines(&[
            "a: \"f32[4]\" = torch.ops.aten.add.Tensor(x, y, alpha = 2)",
            "b: \"f32[4]\" = torch.ops.aten.mul.Tensor(a, 2)",
            "c: \"f32[4]\" = torch.ops.aten.view.default(b, [4])",
            "return (c,)",
        ]));
        let b = file(&lines(&[
            "a: \"f16[4]\" = torch.ops.aten.add.Tensor(y, x, alpha = 3)",
            "b: \"f32[2, 2]\" = torch.ops.aten.mul.Tensor(a, 3)",
            "c: \"f32[4]\" = torch.ops.aten.reshape.default(b, [4])",
            "return (c,)",
        ]));
        let d = diff(&a, &b);
        let p = d.top();
        let st = |n: &str| p.status_b[b.graphs[0].by_name.get(n).unwrap()];
        assert_eq!(
            st("a").fields(),
            [Field::Inputs, Field::Kwargs, Field::Dtype]
                .into_iter()
                .collect()
        );
        assert_eq!(
            st("b").fields(),
            [Field::Args, Field::Shape].into_iter().collect()
        );
        assert_eq!(st("c").fields(), Fields::EMPTY.with(Field::Target));
        assert_eq!(st("output"), NodeStatus::Unchanged);
        // Swapped operands: inputs changed, but no edge appears or disappears.
        assert!(p.rewired.is_empty());
    }
}
