//! Assembly: the graphs built line by line become an [`FxFile`]: runnable submodules attached,
//! graphs ordered parent first, users and the DAG filled in, sub-graph calls linked.

use super::*;

impl Parser {
    pub(super) fn finish(mut self) -> FxFile {
        self.attach_runnable_submodules();
        let order = self.preorder();
        let mut new_index = vec![usize::MAX; self.graphs.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let mut builders: Vec<Option<GraphBuilder>> = self.graphs.into_iter().map(Some).collect();
        let mut graphs = Vec::with_capacity(order.len());
        let mut attrs = Vec::with_capacity(order.len());
        for &old in &order {
            let Some(b) = builders[old].take() else {
                continue;
            };
            let mut graph = b.graph;
            graph.parent = b
                .parent
                .and_then(|p| new_index.get(p).copied())
                .filter(|&p| p < graphs.len());
            graph.link();
            graphs.push(graph);
            attrs.push(b.attr);
        }
        link_subgraphs(&mut graphs, &attrs);
        if graphs.is_empty() && self.problems.is_empty() {
            self.problems
                .push("no `class …(torch.nn.Module):` header found: not an FX graph text?".into());
        }
        FxFile {
            graphs,
            unparsed: self.unparsed,
            problems: self.problems,
        }
    }

    /// `fx_graph_runnable.py` writes submodule classes at top level and attaches them in
    /// `Repro.__init__`; make those classes children of the class that attaches them.
    pub(super) fn attach_runnable_submodules(&mut self) {
        let mut top_level: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, b) in self.graphs.iter().enumerate() {
            if b.parent.is_none() {
                top_level.entry(b.graph.name.clone()).or_default().push(i);
            }
        }
        for p in 0..self.graphs.len() {
            let attached = std::mem::take(&mut self.graphs[p].attached);
            for (attr, cls) in attached {
                let Some(candidates) = top_level.get(&cls) else {
                    continue;
                };
                let child = candidates
                    .iter()
                    .copied()
                    .find(|&c| c != p && self.graphs[c].parent.is_none());
                if let Some(c) = child {
                    self.graphs[c].parent = Some(p);
                    self.graphs[c].attr = attr;
                }
            }
        }
    }

    /// Parents before children, siblings in file order. Parent links from `__init__` may form
    /// a cycle in hostile input: a graph not reached from a root becomes a root itself.
    pub(super) fn preorder(&mut self) -> Vec<usize> {
        let n = self.graphs.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, b) in self.graphs.iter().enumerate() {
            if let Some(p) = b.parent {
                children[p].push(i);
            }
        }
        let mut visited = vec![false; n];
        let mut order = Vec::with_capacity(n);
        let roots: Vec<usize> = (0..n)
            .filter(|&g| self.graphs[g].parent.is_none())
            .collect();
        for root in roots.into_iter().chain(0..n) {
            if visited[root] {
                continue;
            }
            self.graphs[root].parent = None;
            let mut stack = vec![root];
            while let Some(g) = stack.pop() {
                if visited[g] {
                    continue;
                }
                visited[g] = true;
                order.push(g);
                stack.extend(children[g].iter().rev().filter(|&&c| !visited[c]));
            }
        }
        order
    }
}

impl GraphBuilder {
    /// An annotation's text and meaning, read once per graph: a model's layers repeat their
    /// shapes (a 100k-node backward has a few thousand distinct annotations), and a node that
    /// shares them is smaller and faster to build than one with its own copies.
    pub(super) fn meta_of(&mut self, ann: &str) -> (std::sync::Arc<str>, ValueMeta) {
        if let Some((text, meta)) = self.metas.get_key_value(ann) {
            return (text.clone(), meta.clone());
        }
        let (text, meta): (std::sync::Arc<str>, ValueMeta) = (ann.into(), parse_meta(ann));
        self.metas.insert(text.clone(), meta.clone());
        (text, meta)
    }

    /// A target's text, shared by every node of that target (see `FxNode::target`), or a
    /// source file's path, shared by the locations in it (`SourceLoc::file`).
    pub(super) fn intern(&mut self, target: &str) -> std::sync::Arc<str> {
        if let Some(t) = self.targets.get(target) {
            return t.clone();
        }
        let t: std::sync::Arc<str> = target.into();
        self.targets.insert(t.clone());
        t
    }

    /// `node` with its quoted annotation as written (`ann`, understood into `meta`) and the
    /// stack-trace location in effect.
    pub(super) fn annotated(
        &mut self,
        mut node: FxNode,
        ann: Option<&str>,
        source: Option<std::sync::Arc<SourceLoc>>,
    ) -> FxNode {
        if let Some(ann) = ann {
            let (text, meta) = self.meta_of(ann);
            node.annotation = Some(text);
            node.meta = Some(meta);
        }
        node.source = source;
        node
    }

    pub(super) fn add_placeholder(
        &mut self,
        name: String,
        target: String,
        ann: Option<&str>,
        no: usize,
    ) {
        if self.graph.by_name.contains_key(name.as_str()) {
            return;
        }
        let target = self.intern(&target);
        let node = FxNode::new(
            name,
            OpKind::Placeholder,
            target,
            Vec::new(),
            Vec::new(),
            no,
        );
        let node = self.annotated(node, ann, None);
        self.push_node(node, &[]);
    }

    /// Appends `node` with `inputs` = `refs` de-duplicated in order, and indexes its name.
    pub(super) fn reserve(&mut self, nodes: usize) {
        self.graph.nodes.reserve(nodes);
        self.seen.reserve(nodes);
    }

    pub(super) fn push_node(&mut self, mut node: FxNode, refs: &[usize]) {
        let idx = self.graph.nodes.len();
        let stamp = u32::try_from(idx + 1).unwrap_or(u32::MAX);
        for &r in refs {
            if let Some(s) = self.seen.get_mut(r)
                && *s != stamp
            {
                *s = stamp;
                node.inputs.push(r);
            }
        }
        self.seen.push(0);
        self.graph.by_name.insert(&node.name, idx);
        self.graph.nodes.push(node);
    }
}

/// Links each sub-graph to the nodes using it: every user of a parent `get_attr` of the
/// submodule (the `cond`; a repeated `invoke_subgraph` body has several), or a `call_module`
/// of it. `used_by` is the first of them. Each parent's nodes are scanned once.
pub(super) fn link_subgraphs(graphs: &mut [FxGraph], attrs: &[String]) {
    let mut children_of: HashMap<usize, Vec<usize>> = HashMap::new();
    for (c, g) in graphs.iter().enumerate() {
        if let Some(p) = g.parent {
            children_of.entry(p).or_default().push(c);
        }
    }
    for (p, children) in children_of {
        let links = subgraph_users(graphs, p, &children, attrs);
        for (c, users) in links {
            graphs[c].used_by = users.first().copied();
            for u in users {
                graphs[p].nodes[u].subgraphs.push(c);
            }
        }
    }
}

/// For each child of graph `p`: the parent's nodes that use it, in file order.
pub(super) fn subgraph_users(
    graphs: &[FxGraph],
    p: usize,
    children: &[usize],
    attrs: &[String],
) -> Vec<(usize, Vec<usize>)> {
    let Some(parent) = graphs.get(p) else {
        return Vec::new();
    };
    let mut uses: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, node) in parent.nodes.iter().enumerate() {
        match node.op {
            OpKind::GetAttr => uses.entry(&*node.target).or_default().extend(&node.users),
            OpKind::CallModule => uses.entry(&*node.target).or_default().push(i),
            _ => {}
        }
    }
    children
        .iter()
        .filter_map(|&c| {
            let mut users = uses.get(attrs.get(c)?.as_str())?.clone();
            users.sort_unstable();
            users.dedup();
            Some((c, users))
        })
        .collect()
}
