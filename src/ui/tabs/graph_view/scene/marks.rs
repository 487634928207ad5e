//! Rewriting the scene's flags for what the app shows: the pass on screen, its diff against
//! the previous pass, the selection, its cone and search hits.

use super::*;

impl Scene {
    /// `ids` are `file`'s union ids ([`PhaseLayout::ids_of`]).
    pub(super) fn show_pass(
        &mut self,
        file: &FxFile,
        ids: &[Vec<Option<u32>>],
        collapsed: &[String],
    ) {
        self.present.iter_mut().for_each(|p| *p = false);
        for (g, graph_ids) in file.graphs.iter().zip(ids) {
            for (node, id) in g.nodes.iter().zip(graph_ids) {
                let Some(id) = *id else { continue };
                self.present[id as usize] = true;
                let look = self.look(node, id as usize);
                if let Some(n) = self.graph.node_mut(self.node_idx[id as usize]) {
                    n.payload_mut().look = look;
                }
            }
        }
        self.groups = self.collect_groups(collapsed);
        for (i, &idx) in self.node_idx.iter().enumerate() {
            let folded = self.layout.groups[i]
                .as_ref()
                .is_some_and(|g| collapsed.contains(g));
            if let Some(n) = self.graph.node_mut(idx) {
                n.payload_mut().present = self.present[i] && !folded;
            }
        }
        let mut on: HashSet<u32> = HashSet::new();
        self.pass_edges.clear();
        for (a, b) in self.layout.edges_of(file, ids) {
            if let Some(&e) = self.edge_of.get(&(a, b))
                && on.insert(e)
            {
                self.pass_edges.push((a, b));
            }
        }
        for (e, &idx) in self.edge_idx.iter().enumerate() {
            if let Some(x) = self.graph.edge_mut(idx) {
                x.payload_mut().present = on.contains(&(e as u32));
            }
        }
    }

    /// Marks what the compared pass did: on the After side added/changed nodes and ghosts of
    /// removed ones (with their vanished edges); on the Before side removed/changed nodes.
    pub(super) fn overlay(
        &mut self,
        file: &FxFile,
        ids: &[Vec<Option<u32>>],
        diff: Option<(&FxFile, &GraphDiff)>,
        side: Side,
    ) {
        self.ghosts = 0;
        for &idx in &self.node_idx {
            if let Some(n) = self.graph.node_mut(idx) {
                n.payload_mut().diff = DiffMark::Same;
            }
        }
        for &idx in &self.edge_idx {
            if let Some(e) = self.graph.edge_mut(idx) {
                e.payload_mut().diff = DiffMark::Same;
            }
        }
        let Some((a, d)) = diff else { return };
        let status = |g: usize, i: usize| match side {
            Side::After => d.status_b(g, i),
            Side::Before => d.status_a(g, i),
        };
        for (gi, g) in file.graphs.iter().enumerate() {
            for (ni, id) in ids[gi].iter().enumerate().take(g.nodes.len()) {
                let mark = match status(gi, ni) {
                    Some(NodeStatus::Added) => DiffMark::Added,
                    Some(NodeStatus::Removed) => DiffMark::Removed,
                    Some(NodeStatus::Changed { .. }) => DiffMark::Changed,
                    _ => DiffMark::Same,
                };
                if let (Some(id), false) = (id, mark == DiffMark::Same)
                    && let Some(n) = self.graph.node_mut(self.node_idx[*id as usize])
                {
                    n.payload_mut().diff = mark;
                }
            }
        }
        let shown: HashSet<(u32, u32)> = self.pass_edges.iter().copied().collect();
        let other = if side == Side::After { a } else { file };
        // On the After side the other file is A, whose ids the ghosts below need too.
        let ids_other = self.layout.ids_of(other);
        let other_edges = self.layout.edges_of(other, &ids_other);
        // Edges of the shown file that the other one lacks are new (After) or gone (Before).
        let own_mark = if side == Side::After {
            DiffMark::Added
        } else {
            DiffMark::Removed
        };
        let other_set: HashSet<(u32, u32)> = other_edges.iter().copied().collect();
        for (x, y) in self.pass_edges.clone() {
            if !other_set.contains(&(x, y)) {
                self.set_edge_diff(x, y, own_mark, false);
            }
        }
        if side == Side::Before {
            return;
        }
        // Ghosts: nodes of A the pass removed, where the union layout placed them.
        let ids_a = ids_other;
        for (gi, g) in a.graphs.iter().enumerate() {
            for (ni, node) in g.nodes.iter().enumerate() {
                let (Some(NodeStatus::Removed), Some(Some(id))) =
                    (d.status_a(gi, ni), ids_a[gi].get(ni))
                else {
                    continue;
                };
                let id = *id as usize;
                if self.present[id] {
                    continue;
                }
                let look = self.look(node, id);
                if let Some(n) = self.graph.node_mut(self.node_idx[id]) {
                    let p = n.payload_mut();
                    p.look = look;
                    p.present = true;
                    p.diff = DiffMark::Removed;
                }
                self.ghosts += 1;
            }
        }
        for &(x, y) in &other_edges {
            if !shown.contains(&(x, y)) {
                self.set_edge_diff(x, y, DiffMark::Removed, true);
            }
        }
    }

    pub(super) fn set_edge_diff(&mut self, x: u32, y: u32, mark: DiffMark, show: bool) {
        if let Some(&e) = self.edge_of.get(&(x, y))
            && let Some(edge) = self.graph.edge_mut(self.edge_idx[e as usize])
        {
            let p = edge.payload_mut();
            p.diff = mark;
            p.present |= show;
        }
    }

    pub(super) fn collect_groups(&self, collapsed: &[String]) -> Vec<Group> {
        let mut groups: Vec<Group> = Vec::new();
        for (i, g) in self.layout.groups.iter().enumerate() {
            let (Some(name), true) = (g, self.present[i]) else {
                continue;
            };
            let Some(p) = self.pos(i as u32) else {
                continue;
            };
            let (w, h) = self.layout.sizes.get(i).copied().unwrap_or((100.0, 40.0));
            let r = egui::Rect::from_center_size(p, Vec2::new(w, h));
            match groups.iter_mut().find(|x| &x.name == name) {
                Some(x) => {
                    x.rect = x.rect.union(r);
                    x.nodes += 1;
                }
                None => groups.push(Group {
                    name: name.clone(),
                    rect: r,
                    nodes: 1,
                    collapsed: collapsed.contains(name),
                }),
            }
        }
        groups
    }

    pub(super) fn mark(&mut self, selected: Option<&str>, cone: bool, hits: &[u32]) {
        let sel = selected
            .and_then(|s| self.layout.union.id(s))
            .filter(|&i| self.present[i as usize]);
        let (up, down) = match (sel, cone) {
            (Some(s), true) => (self.reach(s, true), self.reach(s, false)),
            _ => (HashSet::new(), HashSet::new()),
        };
        let hits: HashSet<u32> = hits.iter().copied().collect();
        let coning = sel.is_some() && cone;
        for (i, &idx) in self.node_idx.iter().enumerate() {
            let id = i as u32;
            let mark = if hits.contains(&id) {
                Mark::Hit
            } else if up.contains(&id) {
                Mark::Upstream
            } else if down.contains(&id) {
                Mark::Downstream
            } else if coning && Some(id) != sel {
                Mark::Faded
            } else {
                Mark::Plain
            };
            if let Some(n) = self.graph.node_mut(idx) {
                let p = n.payload_mut();
                p.selected = Some(id) == sel;
                p.mark = mark;
            }
        }
        for (e, &(a, b)) in self.layout.union.edges().iter().enumerate() {
            let mark = if up.contains(&a) && (up.contains(&b) || Some(b) == sel) {
                Mark::Upstream
            } else if (down.contains(&b)) && (down.contains(&a) || Some(a) == sel) {
                Mark::Downstream
            } else if coning {
                Mark::Faded
            } else {
                Mark::Plain
            };
            if let Some(x) = self.graph.edge_mut(self.edge_idx[e]) {
                x.payload_mut().mark = mark;
            }
        }
    }

    /// Nodes reachable from `from` against (`up`) or along the edges of the pass on screen.
    pub(super) fn reach(&self, from: u32, up: bool) -> HashSet<u32> {
        let mut adj: HashMap<u32, Vec<u32>> = HashMap::new();
        for &(a, b) in &self.pass_edges {
            let (k, v) = if up { (b, a) } else { (a, b) };
            adj.entry(k).or_default().push(v);
        }
        let mut seen = HashSet::new();
        let mut queue = VecDeque::from([from]);
        while let Some(n) = queue.pop_front() {
            for &m in adj.get(&n).map_or(&[][..], Vec::as_slice) {
                if seen.insert(m) {
                    queue.push_back(m);
                }
            }
        }
        seen.remove(&from);
        seen
    }
}
