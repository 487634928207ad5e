//! Structural diff of two FX graph files (SPEC §4): which nodes a pass added, removed, changed
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

use crate::model::fx::{Arg, FxFile, FxGraph, FxNode, OpKind, ValueMeta};
use crate::model::fx_fmt::short_target;
use serde::{Serialize, Serializer};
use std::borrow::Borrow;
use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::ops::Range;

// ---------------------------------------------------------------------------------------------
// Fields and statuses
// ---------------------------------------------------------------------------------------------

/// One aspect of a node a pass can change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
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
        s.collect_seq(self.iter().map(Field::as_str))
    }
}

/// What a diff says about one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    Name,
    /// Same target on the same (matched) inputs: a rename.
    Structure,
    /// k-th of A with k-th of B among equal targets, inputs compatible: a rename.
    Position,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// In B, not in A.
    Added,
    /// In A, not in B.
    Removed,
}

/// An edge between matched nodes that exists on one side only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rewire {
    /// Producer node index: in B's graph for `Added`, in A's graph for `Removed`.
    pub from: usize,
    /// Consumer node index, same side as `from`.
    pub to: usize,
    pub kind: EdgeKind,
}

/// How many nodes fall in each class. `unchanged` includes renamed nodes without field changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
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
#[derive(Debug, Clone, Default)]
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
#[derive(Debug, Clone)]
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

/// Rounds of (structure, position) matching; each round that matches nothing ends the loop, so
/// this only bounds pathological inputs.
const MAX_ROUNDS: usize = 8;

// ---------------------------------------------------------------------------------------------
// Matching
// ---------------------------------------------------------------------------------------------

struct Matcher<'g> {
    a: &'g FxGraph,
    b: &'g FxGraph,
    a2b: Vec<Option<usize>>,
    b2a: Vec<Option<usize>>,
    how: Vec<Option<MatchKind>>,
}

/// Op kind + target as matching sees it (placeholders: op kind only).
fn match_target(n: &FxNode) -> &str {
    if n.op == OpKind::Placeholder {
        ""
    } else {
        &n.target
    }
}

type StructKey<'g> = (OpKind, &'g str, Vec<usize>);

impl<'g> Matcher<'g> {
    fn new(a: &'g FxGraph, b: &'g FxGraph) -> Self {
        Matcher {
            a,
            b,
            a2b: vec![None; a.nodes.len()],
            b2a: vec![None; b.nodes.len()],
            how: vec![None; b.nodes.len()],
        }
    }

    fn link(&mut self, i: usize, j: usize, how: MatchKind) {
        self.a2b[i] = Some(j);
        self.b2a[j] = Some(i);
        self.how[j] = Some(how);
    }

    fn by_name(&mut self) {
        for (j, n) in self.b.nodes.iter().enumerate() {
            let i = match self.a.by_name.get(&n.name) {
                Some(&i) if self.a.nodes.get(i).is_some_and(|x| x.name == n.name) => Some(i),
                // `by_name` out of step with `nodes` (a broken file): fall back to a scan-free
                // miss rather than trusting it.
                _ => None,
            };
            if let Some(i) = i
                && self.a2b[i].is_none()
            {
                self.link(i, j, MatchKind::Name);
            }
        }
    }

    /// A's node `i` key with its inputs seen in B, if every input is matched.
    fn key_a(&self, i: usize) -> Option<StructKey<'g>> {
        let n = &self.a.nodes[i];
        let inputs = n
            .inputs
            .iter()
            .map(|&p| self.a2b.get(p).copied().flatten())
            .collect::<Option<Vec<usize>>>()?;
        Some((n.op, match_target(n), inputs))
    }

    fn key_b(&self, j: usize) -> Option<StructKey<'g>> {
        let n = &self.b.nodes[j];
        if n.inputs
            .iter()
            .any(|&q| self.b2a.get(q).copied().flatten().is_none())
        {
            return None;
        }
        Some((n.op, match_target(n), n.inputs.clone()))
    }

    /// Step 2. Returns the number of new matches.
    fn by_structure(&mut self) -> usize {
        let mut ready: HashMap<StructKey<'g>, BTreeSet<usize>> = HashMap::new();
        for i in 0..self.a.nodes.len() {
            if self.a2b[i].is_none()
                && let Some(k) = self.key_a(i)
            {
                ready.entry(k).or_default().insert(i);
            }
        }
        if ready.is_empty() {
            return 0;
        }
        let mut made = 0;
        for j in 0..self.b.nodes.len() {
            if self.b2a[j].is_some() {
                continue;
            }
            let Some(key) = self.key_b(j) else { continue };
            let Some(cands) = ready.get_mut(&key) else {
                continue;
            };
            let bn = &self.b.nodes[j];
            // Prefer equal literals and annotation, then file order; look at a bounded number
            // of candidates so a huge group (hundreds of input-less `full` nodes) stays linear.
            let mut best: Option<(u8, usize)> = None;
            for &i in cands.iter().take(32) {
                let an = &self.a.nodes[i];
                let score = 2 * u8::from(literals_equal(an, bn)) + u8::from(an.meta == bn.meta);
                if best.is_none_or(|(s, _)| score > s) {
                    best = Some((score, i));
                }
                if score == 3 {
                    break;
                }
            }
            let Some((_, i)) = best else { continue };
            cands.remove(&i);
            if cands.is_empty() {
                ready.remove(&key);
            }
            self.link(i, j, MatchKind::Structure);
            made += 1;
            // A's consumers whose last input this was can now be keyed.
            for &u in &self.a.nodes[i].users {
                if self.a2b.get(u).is_some_and(Option::is_none)
                    && let Some(k) = self.key_a(u)
                {
                    ready.entry(k).or_default().insert(u);
                }
            }
        }
        made
    }

    /// Step 3. Returns the number of new matches.
    fn by_position(&mut self) -> usize {
        let mut groups_a: HashMap<(OpKind, &str), Vec<usize>> = HashMap::new();
        for (i, n) in self.a.nodes.iter().enumerate() {
            if self.a2b[i].is_none() {
                groups_a.entry((n.op, match_target(n))).or_default().push(i);
            }
        }
        if groups_a.is_empty() {
            return 0;
        }
        let mut taken: HashMap<(OpKind, &str), usize> = HashMap::new();
        let mut made = 0;
        for j in 0..self.b.nodes.len() {
            if self.b2a[j].is_some() {
                continue;
            }
            let bn = &self.b.nodes[j];
            let key = (bn.op, match_target(bn));
            let Some(group) = groups_a.get(&key) else {
                continue;
            };
            let k = taken.entry(key).or_insert(0);
            let Some(&i) = group.get(*k) else { continue };
            *k += 1;
            if self.compatible(i, j) {
                self.link(i, j, MatchKind::Position);
                made += 1;
            }
        }
        made
    }

    /// At least one matched input in common, or neither has inputs.
    fn compatible(&self, i: usize, j: usize) -> bool {
        let an = &self.a.nodes[i];
        let bn = &self.b.nodes[j];
        if an.inputs.is_empty() && bn.inputs.is_empty() {
            return true;
        }
        let mapped = |p: &usize| self.a2b.get(*p).copied().flatten();
        if an.inputs.len() * bn.inputs.len() <= 256 {
            an.inputs
                .iter()
                .filter_map(mapped)
                .any(|q| bn.inputs.contains(&q))
        } else {
            let set: std::collections::HashSet<usize> = bn.inputs.iter().copied().collect();
            an.inputs
                .iter()
                .filter_map(mapped)
                .any(|q| set.contains(&q))
        }
    }

    fn finish(self) -> GraphPairDiff {
        let (a, b) = (self.a, self.b);
        let mut status_a = vec![NodeStatus::Removed; a.nodes.len()];
        let mut status_b = vec![NodeStatus::Added; b.nodes.len()];
        let mut renamed = Vec::new();
        let mut rewired = Vec::new();
        let mut counts = DiffCounts::default();
        let mut refs_a: Vec<Ref<'g>> = Vec::new();
        let mut refs_b: Vec<Ref<'g>> = Vec::new();
        for (j, bn) in b.nodes.iter().enumerate() {
            let Some(i) = self.b2a[j] else {
                counts.added += 1;
                continue;
            };
            let an = &a.nodes[i];
            let fields = compare(an, bn, a, b, &self.a2b, &mut refs_a, &mut refs_b);
            let s = if fields.is_empty() {
                counts.unchanged += 1;
                NodeStatus::Unchanged
            } else {
                counts.changed += 1;
                NodeStatus::Changed { fields }
            };
            status_a[i] = s;
            status_b[j] = s;
            if an.name != bn.name {
                renamed.push((i, j));
            }
            if fields.contains(Field::Inputs) {
                rewires(an, bn, i, j, &self.a2b, &self.b2a, &mut rewired);
            }
        }
        counts.removed = self.a2b.iter().filter(|m| m.is_none()).count();
        counts.renamed = renamed.len();
        counts.rewired = rewired.len();
        GraphPairDiff {
            class: String::new(),
            top: true,
            a: Some(0),
            b: Some(0),
            a_to_b: self.a2b,
            b_to_a: self.b2a,
            matched_by: self.how,
            status_a,
            status_b,
            renamed,
            rewired,
            counts,
        }
    }
}

/// Edges into the matched pair (`i` in A, `j` in B) whose producer is matched on both sides but
/// feeds the consumer on one side only.
fn rewires(
    an: &FxNode,
    bn: &FxNode,
    i: usize,
    j: usize,
    a2b: &[Option<usize>],
    b2a: &[Option<usize>],
    out: &mut Vec<Rewire>,
) {
    let a_in: Vec<(usize, usize)> = an
        .inputs
        .iter()
        .filter_map(|&p| a2b.get(p).copied().flatten().map(|q| (p, q)))
        .collect();
    let big = a_in.len() * bn.inputs.len() > 256;
    let b_set: std::collections::HashSet<usize> = if big {
        bn.inputs.iter().copied().collect()
    } else {
        Default::default()
    };
    let a_set: std::collections::HashSet<usize> = if big {
        a_in.iter().map(|&(_, q)| q).collect()
    } else {
        Default::default()
    };
    for &(p, q) in &a_in {
        let in_b = if big {
            b_set.contains(&q)
        } else {
            bn.inputs.contains(&q)
        };
        if !in_b {
            out.push(Rewire {
                from: p,
                to: i,
                kind: EdgeKind::Removed,
            });
        }
    }
    for &q in &bn.inputs {
        if b2a.get(q).copied().flatten().is_none() {
            continue;
        }
        let in_a = if big {
            a_set.contains(&q)
        } else {
            a_in.iter().any(|&(_, x)| x == q)
        };
        if !in_a {
            out.push(Rewire {
                from: q,
                to: j,
                kind: EdgeKind::Added,
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Field comparison
// ---------------------------------------------------------------------------------------------

/// A node reference as the diff sees it: a B node index, an unmatched A node, or a name that is
/// no node of the graph (compared as text).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Ref<'g> {
    Node(usize),
    Unmatched,
    Name(&'g str),
}

fn collect_refs<'g>(
    arg: &'g Arg,
    g: &FxGraph,
    map: Option<&[Option<usize>]>,
    out: &mut Vec<Ref<'g>>,
) {
    match arg {
        Arg::Node(name) => out.push(match g.by_name.get(name) {
            Some(&i) => match map {
                Some(m) => m
                    .get(i)
                    .copied()
                    .flatten()
                    .map_or(Ref::Unmatched, Ref::Node),
                None => Ref::Node(i),
            },
            None => Ref::Name(name),
        }),
        Arg::List(items) | Arg::Tuple(items) => {
            for x in items {
                collect_refs(x, g, map, out);
            }
        }
        _ => {}
    }
}

/// Node references of `n`'s args then kwargs; A's mapped to B through `map`.
fn refs_of<'g>(n: &'g FxNode, g: &FxGraph, map: Option<&[Option<usize>]>, out: &mut Vec<Ref<'g>>) {
    out.clear();
    for a in &n.args {
        collect_refs(a, g, map, out);
    }
    for (_, a) in &n.kwargs {
        collect_refs(a, g, map, out);
    }
}

/// Equal as literals; node references compare equal to each other (they are `inputs`).
fn lit_eq(a: &Arg, b: &Arg) -> bool {
    match (a, b) {
        (Arg::Node(_), Arg::Node(_)) => true,
        (Arg::Int(x), Arg::Int(y)) => x == y,
        (Arg::Float(x), Arg::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        (Arg::Bool(x), Arg::Bool(y)) => x == y,
        (Arg::Str(x), Arg::Str(y)) => x == y,
        (Arg::Expr(x), Arg::Expr(y)) => x == y,
        (Arg::None, Arg::None) => true,
        (Arg::List(x), Arg::List(y)) | (Arg::Tuple(x), Arg::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| lit_eq(p, q))
        }
        _ => false,
    }
}

fn args_equal(a: &[Arg], b: &[Arg]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| lit_eq(x, y))
}

fn kwargs_equal(a: &[(String, Arg)], b: &[(String, Arg)]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.iter()
        .zip(b)
        .all(|((k, x), (l, y))| k == l && lit_eq(x, y))
    {
        return true;
    }
    // Same keywords in another order.
    a.iter()
        .all(|(k, x)| b.iter().any(|(l, y)| k == l && lit_eq(x, y)))
}

fn literals_equal(a: &FxNode, b: &FxNode) -> bool {
    args_equal(&a.args, &b.args) && kwargs_equal(&a.kwargs, &b.kwargs)
}

/// The dtype side of an annotation: element type, device and wrapper; `Sym`; other text.
fn dtype_of(n: &FxNode) -> Option<(&str, Option<&str>, Option<&str>)> {
    match &n.meta {
        Some(ValueMeta::Tensor(t)) => {
            Some((t.dtype.as_str(), t.device.as_deref(), t.wrapper.as_deref()))
        }
        Some(ValueMeta::Sym(_)) => Some(("Sym", None, None)),
        Some(ValueMeta::Other(s)) => Some((s.as_str(), None, None)),
        None => None,
    }
}

/// Sizes, strides, `Sym` expression.
type ShapeKey<'n> = (&'n [String], Option<&'n [String]>, Option<&'n str>);

/// The shape side of an annotation: sizes and strides; a `Sym`'s expression.
fn shape_of(n: &FxNode) -> Option<ShapeKey<'_>> {
    match &n.meta {
        Some(ValueMeta::Tensor(t)) => Some((&t.shape, t.stride.as_deref(), None)),
        Some(ValueMeta::Sym(e)) => Some((&[], None, Some(e.as_str()))),
        Some(ValueMeta::Other(_)) | None => None,
    }
}

fn compare<'g>(
    an: &'g FxNode,
    bn: &'g FxNode,
    ga: &FxGraph,
    gb: &FxGraph,
    a2b: &[Option<usize>],
    refs_a: &mut Vec<Ref<'g>>,
    refs_b: &mut Vec<Ref<'g>>,
) -> Fields {
    let mut f = Fields::EMPTY;
    // A placeholder's target is its own (original) name: renaming covers it.
    let target_differs = an.op != bn.op || (an.op != OpKind::Placeholder && an.target != bn.target);
    if target_differs {
        f.insert(Field::Target);
    }
    refs_of(an, ga, Some(a2b), refs_a);
    refs_of(bn, gb, None, refs_b);
    if refs_a != refs_b {
        f.insert(Field::Inputs);
    }
    if !args_equal(&an.args, &bn.args) {
        f.insert(Field::Args);
    }
    if !kwargs_equal(&an.kwargs, &bn.kwargs) {
        f.insert(Field::Kwargs);
    }
    if an.meta != bn.meta {
        if dtype_of(an) != dtype_of(bn) {
            f.insert(Field::Dtype);
        }
        if shape_of(an) != shape_of(bn) {
            f.insert(Field::Shape);
        }
    }
    if an.source != bn.source {
        f.insert(Field::Source);
    }
    f
}

/// Before → after text of each changed field of a matched pair, for the CLI and the inspector:
/// short targets, argument lists as written, annotations, `file:line` sources.
pub fn change_details(a: &FxNode, b: &FxNode, fields: Fields) -> Vec<(Field, String, String)> {
    fields
        .iter()
        .map(|f| {
            let (x, y) = match f {
                Field::Target => (target_text(a), target_text(b)),
                Field::Inputs => (refs_text(a), refs_text(b)),
                Field::Args => (args_text(&a.args), args_text(&b.args)),
                Field::Kwargs => (kwargs_text(&a.kwargs), kwargs_text(&b.kwargs)),
                Field::Dtype | Field::Shape => (meta_text(a), meta_text(b)),
                Field::Source => (source_text(a), source_text(b)),
            };
            (f, x, y)
        })
        .collect()
}

fn target_text(n: &FxNode) -> String {
    match n.op {
        OpKind::CallFunction | OpKind::Output => short_target(n),
        OpKind::Placeholder => "placeholder".into(),
        _ => format!("{} {}", n.op.as_str(), short_target(n)),
    }
}

fn refs_text(n: &FxNode) -> String {
    fn walk(a: &Arg, out: &mut Vec<String>) {
        match a {
            Arg::Node(s) => out.push(s.clone()),
            Arg::List(v) | Arg::Tuple(v) => v.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    n.args.iter().for_each(|a| walk(a, &mut out));
    n.kwargs.iter().for_each(|(_, a)| walk(a, &mut out));
    if out.is_empty() {
        return "(none)".into();
    }
    out.join(", ")
}

fn args_text(args: &[Arg]) -> String {
    let v: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    format!("({})", v.join(", "))
}

fn kwargs_text(kw: &[(String, Arg)]) -> String {
    let v: Vec<String> = kw.iter().map(|(k, a)| format!("{k}={a}")).collect();
    format!("{{{}}}", v.join(", "))
}

fn meta_text(n: &FxNode) -> String {
    match &n.meta {
        Some(ValueMeta::Tensor(t)) => {
            let mut s = format!("{}[{}]", t.dtype, t.shape.join(", "));
            if let Some(st) = &t.stride {
                s.push_str(&format!("[{}]", st.join(", ")));
            }
            if let Some(d) = &t.device {
                s.push_str(d);
            }
            if let Some(w) = &t.wrapper {
                s = format!("{w}({s})");
            }
            s
        }
        Some(m) => m.to_string(),
        None => "-".into(),
    }
}

fn source_text(n: &FxNode) -> String {
    n.source.as_ref().map_or_else(|| "-".into(), |s| s.short())
}

// ---------------------------------------------------------------------------------------------
// Node history and "first pass where …"
// ---------------------------------------------------------------------------------------------

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
    if let Some(&i) = file.graphs.first()?.by_name.get(qualified) {
        return Some((0, i));
    }
    let (class, name) = qualified.split_once('/')?;
    file.graphs.iter().enumerate().find_map(|(g, gr)| {
        (gr.name == class)
            .then(|| gr.by_name.get(name).map(|&i| (g, i)))
            .flatten()
    })
}

/// The qualified name of `(graph, node)`: `<class>/<name>` inside sub-graphs.
pub fn qualified_name(file: &FxFile, graph: usize, node: usize) -> Option<String> {
    let g = file.graphs.get(graph)?;
    let n = g.nodes.get(node)?;
    Some(if graph == 0 || g.parent.is_none() {
        n.name.clone()
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
    n.target == t || n.target.strip_prefix("torch.ops.") == Some(t) || short_target(n) == t
}

// ---------------------------------------------------------------------------------------------
// Text diff
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LineTag {
    Equal,
    Delete,
    Insert,
}

/// One line of a unified text diff.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TextDiffLine {
    pub tag: LineTag,
    /// 1-based line number in A (equal and deleted lines).
    pub old_line: Option<usize>,
    /// 1-based line number in B (equal and inserted lines).
    pub new_line: Option<usize>,
    /// The line without its line break.
    pub text: String,
    /// Byte ranges of `text` that differ from the line it replaces (intra-line highlights);
    /// empty for equal lines and for lines with no similar counterpart.
    pub spans: Vec<Range<usize>>,
}

/// A line diff of two texts (Patience, with intra-line changes), every line of both texts in
/// unified order. Gives up refining after a few seconds on huge, very different texts (the
/// result is then coarser, still correct). Use [`hunks`] to show only the changes with context.
pub fn text_diff(a: &str, b: &str) -> Vec<TextDiffLine> {
    use similar::{Algorithm, ChangeTag, TextDiff};
    use std::time::Duration;
    let d = TextDiff::configure()
        .algorithm(Algorithm::Patience)
        .timeout(Duration::from_secs(5))
        .diff_lines(a, b);
    let mut out = Vec::new();
    for op in d.ops() {
        for change in d.iter_inline_changes(op) {
            let tag = match change.tag() {
                ChangeTag::Equal => LineTag::Equal,
                ChangeTag::Delete => LineTag::Delete,
                ChangeTag::Insert => LineTag::Insert,
            };
            let mut text = String::new();
            let mut spans: Vec<Range<usize>> = Vec::new();
            for (emph, s) in change.iter_strings_lossy() {
                let start = text.len();
                text.push_str(&s);
                if emph && tag != LineTag::Equal {
                    match spans.last_mut() {
                        Some(r) if r.end == start => r.end = text.len(),
                        _ => spans.push(start..text.len()),
                    }
                }
            }
            let trimmed = text.trim_end_matches(['\n', '\r']).len();
            text.truncate(trimmed);
            spans.retain_mut(|r| {
                r.end = r.end.min(trimmed);
                r.start < r.end
            });
            out.push(TextDiffLine {
                tag,
                old_line: change.old_index().map(|i| i + 1),
                new_line: change.new_index().map(|i| i + 1),
                text,
                spans,
            });
        }
    }
    out
}

/// Ranges of `lines` to show: every changed line with `context` equal lines around it, merged
/// where they touch. Empty when the texts are equal.
pub fn hunks(lines: &[TextDiffLine], context: usize) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if l.tag == LineTag::Equal {
            continue;
        }
        let r = i.saturating_sub(context)..(i + 1 + context).min(lines.len());
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::fx_text::parse_fx;

    fn file(body: &str) -> FxFile {
        let text = format!(
            "class GraphModule(torch.nn.Module):\n    def forward(self, x: \"f32[4]\", y: \"f32[4]\"):\n{body}"
        );
        let f = parse_fx(&text);
        assert!(f.unparsed.is_empty(), "{:?}", f.unparsed);
        f
    }

    fn lines(nodes: &[&str]) -> String {
        nodes.iter().map(|l| format!("        {l}\n")).collect()
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
        let st = |n: &str| p.status_b[b.graphs[0].by_name[n]];
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

    #[test]
    fn renamed_chains_are_matched_by_structure() {
        let a = file(&lines(&[
            "v: \"f32[4]\" = torch.ops.aten.neg.default(x)",
            "w: \"f32[4]\" = torch.ops.aten.relu.default(v)",
            "z: \"f32[4]\" = torch.ops.aten.add.Tensor(w, y)",
            "return (z,)",
        ]));
        let b = file(&lines(&[
            "neg_1: \"f32[4]\" = torch.ops.aten.neg.default(x)",
            "relu_1: \"f32[4]\" = torch.ops.aten.relu.default(neg_1)",
            "z: \"f32[4]\" = torch.ops.aten.add.Tensor(relu_1, y)",
            "return (z,)",
        ]));
        let d = diff(&a, &b);
        let r = d.report(&a, &b);
        assert!(r.added.is_empty() && r.removed.is_empty(), "{r:?}");
        assert!(r.changed.is_empty(), "{r:?}");
        let pairs: Vec<(&str, &str)> = r
            .renamed
            .iter()
            .map(|e| (e.from.as_str(), e.to.as_str()))
            .collect();
        assert_eq!(pairs, [("v", "neg_1"), ("w", "relu_1")]);
        assert_eq!(d.counts().unchanged, 6);
        let j = b.graphs[0].by_name["relu_1"];
        assert!(d.top().is_renamed_b(j));
        assert!(!d.top().is_renamed_b(b.graphs[0].by_name["z"]));
        assert_eq!(d.top().matched_by[j], Some(MatchKind::Structure));
    }

    #[test]
    fn position_matches_equal_targets_with_a_common_input() {
        // `mul` renamed and its literal changed: structure would also take it; here its input
        // is new (`n`), so only position (with `x` in common) pairs it.
        let a = file(&lines(&[
            "m: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, y)",
            "return (m,)",
        ]));
        let b = file(&lines(&[
            "n: \"f32[4]\" = torch.ops.aten.neg.default(y)",
            "m2: \"f32[4]\" = torch.ops.aten.mul.Tensor(x, n)",
            "return (m2,)",
        ]));
        let d = diff(&a, &b);
        let r = d.report(&a, &b);
        assert_eq!(r.added, ["n"]);
        assert!(r.removed.is_empty());
        assert_eq!(r.renamed[0].from, "m");
        assert_eq!(r.renamed[0].to, "m2");
        assert_eq!(r.changed[0].name, "m2");
        assert_eq!(r.changed[0].fields, Fields::EMPTY.with(Field::Inputs));
        // y → m is gone; n → m2 is new but n is added, so not a rewired edge.
        assert_eq!(r.rewired.len(), 1, "{:?}", r.rewired);
        assert_eq!(
            (r.rewired[0].from.as_str(), r.rewired[0].to.as_str()),
            ("y", "m")
        );
        assert_eq!(d.top().matched_by[3], Some(MatchKind::Position));
    }

    #[test]
    fn incompatible_equal_targets_stay_added_and_removed() {
        let a = file(&lines(&[
            "m: \"f32[4]\" = torch.ops.aten.neg.default(x)",
            "return (m,)",
        ]));
        let b = file(&lines(&[
            "k: \"f32[4]\" = torch.ops.aten.neg.default(y)",
            "return (k,)",
        ]));
        let r = diff(&a, &b).report(&a, &b);
        assert_eq!(r.added, ["k"]);
        assert_eq!(r.removed, ["m"]);
        assert!(r.renamed.is_empty());
    }

    #[test]
    fn rewired_edges() {
        let a = file(&lines(&[
            "p: \"f32[4]\" = torch.ops.aten.neg.default(x)",
            "q: \"f32[4]\" = torch.ops.aten.add.Tensor(p, y)",
            "return (q,)",
        ]));
        let b = file(&lines(&[
            "p: \"f32[4]\" = torch.ops.aten.neg.default(x)",
            "q: \"f32[4]\" = torch.ops.aten.add.Tensor(p, x)",
            "return (q,)",
        ]));
        let r = diff(&a, &b).report(&a, &b);
        let w: Vec<(&str, &str, EdgeKind)> = r
            .rewired
            .iter()
            .map(|e| (e.from.as_str(), e.to.as_str(), e.kind))
            .collect();
        assert_eq!(
            w,
            [("y", "q", EdgeKind::Removed), ("x", "q", EdgeKind::Added)]
        );
    }

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

    #[test]
    fn text_diff_lines_and_spans() {
        let a = "one\ntwo = view(x)\nthree\n";
        let b = "one\ntwo = reshape(x)\nthree\nfour\n";
        let d = text_diff(a, b);
        let tags: Vec<LineTag> = d.iter().map(|l| l.tag).collect();
        assert_eq!(
            tags,
            [
                LineTag::Equal,
                LineTag::Delete,
                LineTag::Insert,
                LineTag::Equal,
                LineTag::Insert
            ]
        );
        assert_eq!(d[1].old_line, Some(2));
        assert_eq!(d[2].new_line, Some(2));
        assert_eq!(d[4].new_line, Some(4));
        assert_eq!(d[4].text, "four");
        let del: Vec<&str> = d[1].spans.iter().map(|r| &d[1].text[r.clone()]).collect();
        let ins: Vec<&str> = d[2].spans.iter().map(|r| &d[2].text[r.clone()]).collect();
        assert_eq!(del, ["view"]);
        assert_eq!(ins, ["reshape"]);
        assert_eq!(hunks(&d, 0), [1..3, 4..5]);
        assert_eq!(hunks(&d, 1).first(), Some(&(0..5)));
        assert_eq!(hunks(&d, 1).len(), 1);
        assert!(hunks(&text_diff(a, a), 3).is_empty());
    }
}
