//! The union of all passes of one model/phase, keyed by node name.
//!
//! fxray lays out this union once, so a node keeps its place while the user scrubs from pass
//! to pass: a pass shows the union's positions of its own nodes. Node ids are assigned in order
//! of first appearance (file order of the first pass that has the node) and never change, so
//! appending a pass only appends ids: positions of the previous layout stay valid as a seed for
//! [`super::relayout`].
//!
//! Edges come from every pass; since a pass may rewire `a -> b` into `b -> a`, the union can
//! have cycles, which the layout breaks.

use super::LayoutInput;
use crate::model::names::NameIndex;
use rustc_hash::FxHashSet;

/// One graph for all passes of a phase.
///
/// Its serde form holds names, edges and passes; the indexes are rebuilt on the way in.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
#[serde(from = "UnionWire")]
pub struct UnionGraph {
    names: Vec<String>,
    /// Name → id, laid out for FX's numbered names (see [`NameIndex`]).
    #[serde(skip)]
    ids: NameIndex,
    edges: Vec<(u32, u32)>,
    #[serde(skip)]
    edge_set: FxHashSet<(u32, u32)>,
    /// Per pass, its nodes' ids in file order.
    passes: Vec<Vec<u32>>,
    /// Per node, the last pass (1-based) it was seen in; used while adding a pass.
    #[serde(skip)]
    stamp: Vec<u32>,
}

#[derive(serde::Deserialize)]
struct UnionWire {
    names: Vec<String>,
    edges: Vec<(u32, u32)>,
    passes: Vec<Vec<u32>>,
}

impl From<UnionWire> for UnionGraph {
    fn from(w: UnionWire) -> Self {
        let n = w.names.len() as u32;
        let mut u = UnionGraph {
            ids: w
                .names
                .iter()
                .enumerate()
                .map(|(i, s)| (s.as_str(), i))
                .collect(),
            stamp: vec![0; w.names.len()],
            names: w.names,
            ..UnionGraph::default()
        };
        // Ids past the names (a cut or hostile message) are dropped, never followed.
        for (p, members) in w.passes.into_iter().enumerate() {
            let members: Vec<u32> = members.into_iter().filter(|&i| i < n).collect();
            for &i in &members {
                u.stamp[i as usize] = p as u32 + 1;
            }
            u.passes.push(members);
        }
        for e in w.edges {
            if e.0 < n && e.1 < n && u.edge_set.insert(e) {
                u.edges.push(e);
            }
        }
        u
    }
}

impl UnionGraph {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one pass: `(node name, names of its inputs)` in file order. Only inputs that name a
    /// node of the same pass make edges (literals and unknown names are ignored); duplicate
    /// node names within a pass are merged. Returns the pass index.
    pub fn add_pass<N, S>(&mut self, nodes: &[(N, &[S])]) -> usize
    where
        N: AsRef<str>,
        S: AsRef<str>,
    {
        let pass = self.passes.len() as u32 + 1;
        let mut members = Vec::with_capacity(nodes.len());
        for (name, _) in nodes {
            let id = self.intern(name.as_ref());
            if self.stamp[id as usize] != pass {
                self.stamp[id as usize] = pass;
                members.push(id);
            }
        }
        for (name, inputs) in nodes {
            let Some(to) = self.id(name.as_ref()) else {
                continue;
            };
            for input in inputs.iter() {
                let Some(from) = self.id(input.as_ref()) else {
                    continue;
                };
                if self.stamp[from as usize] == pass && self.edge_set.insert((from, to)) {
                    self.edges.push((from, to));
                }
            }
        }
        self.passes.push(members);
        self.passes.len() - 1
    }

    /// Adds a pass whose nodes and edges are pass `of`'s (the same file read again); returns
    /// its index.
    pub fn repeat_pass(&mut self, of: usize) -> usize {
        let members = self.passes.get(of).cloned().unwrap_or_default();
        self.passes.push(members);
        self.passes.len() - 1
    }

    fn intern(&mut self, name: &str) -> u32 {
        if let Some(id) = self.id(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.to_owned());
        self.ids.insert(name, id as usize);
        self.stamp.push(0);
        id
    }

    /// Node names; a node's id is its index here.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    pub fn id(&self, name: &str) -> Option<u32> {
        self.ids.get(name).map(|i| i as u32)
    }

    /// Distinct edges of all passes, in order of first appearance.
    pub fn edges(&self) -> &[(u32, u32)] {
        &self.edges
    }

    pub fn pass_count(&self) -> usize {
        self.passes.len()
    }

    /// Ids of the nodes of pass `pass` in its file order (empty for an unknown pass).
    pub fn pass_nodes(&self, pass: usize) -> &[u32] {
        self.passes.get(pass).map_or(&[], Vec::as_slice)
    }

    /// The layout input of the union; `size_of` gives each node's box from its name.
    pub fn to_input(&self, mut size_of: impl FnMut(&str) -> (f32, f32)) -> LayoutInput {
        LayoutInput {
            sizes: self.names.iter().map(|n| size_of(n)).collect(),
            edges: self.edges.clone(),
            groups: Vec::new(),
        }
    }
}

/// Builds the union of `passes` (each a list of `(node name, input names)` in file order) and
/// returns its layout input with the name table: `names[i]` is node `i`.
pub fn build_union<N, S>(
    passes: &[Vec<(N, &[S])>],
    size_of: impl FnMut(&str) -> (f32, f32),
) -> (LayoutInput, Vec<String>)
where
    N: AsRef<str>,
    S: AsRef<str>,
{
    let mut union = UnionGraph::new();
    for pass in passes {
        union.add_pass(pass);
    }
    let input = union.to_input(size_of);
    (input, union.names)
}
