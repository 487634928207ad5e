//! The folded view of a phase: its union nodes grouped by module into nested boxes.
//!
//! [`FoldTree`] is the structure (which module holds which nodes and sub-modules, and every
//! edge *lifted* to the module where its two ends part ways); [`layout::place`] lays out one
//! fold state as a compound graph: each expanded module lays out its items (sub-module boxes
//! and own nodes) with the layered layout, a folded module is one box, and an expanded one is
//! as big as its content. The item graph of a module does not depend on what is folded, so its
//! layers and order stay put when a box opens: only sizes, and so coordinates, change
//! (expanding moves the other boxes apart, never reorders them).

pub mod layout;
mod loose;
mod repeat;

use crate::analysis::layout::UnionGraph;
use crate::analysis::modules::PhaseModules;
use crate::analysis::phase_layout::pass_entries;
use crate::model::fx::FxFile;
use std::collections::HashMap;

pub use layout::{FoldCache, FoldLayout, Rep, place, shown_items};
pub use loose::{group_loose, is_group};
pub use repeat::{
    GroupNote, Look, RepeatGroup, border_difference, difference, group_label, group_notes, ranges,
    repeat_groups, structure_key,
};

/// Index of a module in [`FoldTree::modules`]; 0 is the root (the whole graph).
pub type ModIx = u32;
pub const ROOT: ModIx = 0;

#[derive(Debug, Clone)]
pub struct FoldModule {
    /// Dotted path (`layers.3.attn`); `""` for the root.
    pub path: String,
    /// Last segment (`attn`).
    pub name: String,
    pub parent: Option<ModIx>,
    pub depth: u32,
    /// Sub-modules, in the order their first node runs.
    pub children: Vec<ModIx>,
    /// Union nodes directly in this module, in union order.
    pub nodes: Vec<u32>,
    /// Union nodes in this module and below.
    pub total: u32,
}

/// An item of a module's own layout: a sub-module (drawn as a box) or one of its nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Item {
    Module(ModIx),
    Node(u32),
}

/// Edges between two items of one module, merged.
#[derive(Debug, Clone)]
pub struct Lifted {
    pub from: Item,
    pub to: Item,
    /// Union edges it stands for.
    pub count: u32,
}

#[derive(Debug, Clone, Default)]
pub struct FoldTree {
    pub modules: Vec<FoldModule>,
    /// Module of each union node.
    pub module_of: Vec<ModIx>,
    /// Per module: the edges between its items.
    pub lifted: Vec<Vec<Lifted>>,
    /// Per union edge: the module and index in `lifted` it was lifted to; `None` for a
    /// self-loop or an edge naming a node the union lacks.
    pub edge_lift: Vec<Option<(ModIx, u32)>>,
    by_path: HashMap<String, ModIx>,
}

impl FoldTree {
    /// `module_paths[i]` is the dotted module of union node `i` (`""`: the root).
    pub fn new(module_paths: &[String], edges: &[(u32, u32)]) -> Self {
        let mut t = FoldTree {
            modules: vec![FoldModule {
                path: String::new(),
                name: String::new(),
                parent: None,
                depth: 0,
                children: Vec::new(),
                nodes: Vec::new(),
                total: 0,
            }],
            ..FoldTree::default()
        };
        t.by_path.insert(String::new(), ROOT);
        t.module_of = module_paths.iter().map(|p| t.intern(p)).collect();
        for (i, &m) in t.module_of.iter().enumerate() {
            t.modules[m as usize].nodes.push(i as u32);
            let mut at = Some(m);
            while let Some(x) = at {
                t.modules[x as usize].total += 1;
                at = t.modules[x as usize].parent;
            }
        }
        // Drop modules no node reached (an interned prefix always has a node below it, so
        // this only guards against empty paths) and order children by their first node.
        let first: Vec<u32> = (0..t.modules.len())
            .map(|m| t.first_node(m as ModIx).unwrap_or(u32::MAX))
            .collect();
        for m in &mut t.modules {
            m.children.sort_by_key(|&c| first[c as usize]);
        }
        t.lift(edges);
        t
    }

    fn intern(&mut self, path: &str) -> ModIx {
        if let Some(&m) = self.by_path.get(path) {
            return m;
        }
        let (parent_path, name) = match path.rfind('.') {
            Some(i) => (&path[..i], &path[i + 1..]),
            None => ("", path),
        };
        let parent = self.intern(parent_path);
        let m = self.modules.len() as ModIx;
        self.modules.push(FoldModule {
            path: path.to_owned(),
            name: name.to_owned(),
            parent: Some(parent),
            depth: self.modules[parent as usize].depth + 1,
            children: Vec::new(),
            nodes: Vec::new(),
            total: 0,
        });
        self.modules[parent as usize].children.push(m);
        self.by_path.insert(path.to_owned(), m);
        m
    }

    fn first_node(&self, m: ModIx) -> Option<u32> {
        let own = self.modules[m as usize].nodes.first().copied();
        self.modules[m as usize]
            .children
            .iter()
            .filter_map(|&c| self.first_node(c))
            .chain(own)
            .min()
    }

    pub fn find(&self, path: &str) -> Option<ModIx> {
        self.by_path.get(path).copied()
    }

    /// The item of module `m` that holds union node `n` (`None` when `n` is not under `m`).
    pub fn item_in(&self, m: ModIx, n: u32) -> Option<Item> {
        let mut at = *self.module_of.get(n as usize)?;
        if at == m {
            return Some(Item::Node(n));
        }
        loop {
            let parent = self.modules[at as usize].parent?;
            if parent == m {
                return Some(Item::Module(at));
            }
            at = parent;
        }
    }

    /// Deepest module containing both.
    pub fn common(&self, mut a: ModIx, mut b: ModIx) -> ModIx {
        while self.modules[a as usize].depth > self.modules[b as usize].depth {
            a = self.modules[a as usize].parent.unwrap_or(ROOT);
        }
        while self.modules[b as usize].depth > self.modules[a as usize].depth {
            b = self.modules[b as usize].parent.unwrap_or(ROOT);
        }
        while a != b {
            a = self.modules[a as usize].parent.unwrap_or(ROOT);
            b = self.modules[b as usize].parent.unwrap_or(ROOT);
        }
        a
    }

    /// Modules from the root down to `m`, both included.
    pub fn ancestry(&self, m: ModIx) -> Vec<ModIx> {
        let mut out = vec![m];
        let mut at = m;
        while let Some(p) = self.modules[at as usize].parent {
            out.push(p);
            at = p;
        }
        out.reverse();
        out
    }

    fn lift(&mut self, edges: &[(u32, u32)]) {
        self.lifted = vec![Vec::new(); self.modules.len()];
        let mut index: HashMap<(ModIx, Item, Item), u32> = HashMap::new();
        self.edge_lift = edges
            .iter()
            .map(|&(a, b)| {
                let (ma, mb) = (
                    *self.module_of.get(a as usize)?,
                    *self.module_of.get(b as usize)?,
                );
                if a == b {
                    return None;
                }
                let (l, from, to) = self.lift_edge(ma, a, mb, b)?;
                let list = &mut self.lifted[l as usize];
                let k = *index.entry((l, from, to)).or_insert_with(|| {
                    list.push(Lifted { from, to, count: 0 });
                    list.len() as u32 - 1
                });
                list[k as usize].count += 1;
                Some((l, k))
            })
            .collect();
    }

    /// Where the edge `a → b` (in modules `ma`, `mb`) parts: the deepest module holding both
    /// ends and the two items of it they lie in; `None` when they are one item.
    fn lift_edge(&self, ma: ModIx, a: u32, mb: ModIx, b: u32) -> Option<(ModIx, Item, Item)> {
        let l = self.common(ma, mb);
        let (from, to) = (self.item_in(l, a)?, self.item_in(l, b)?);
        (from != to).then_some((l, from, to))
    }

    /// [`Self::lift_edge`] of union edge `a → b`.
    pub fn lifted_edge(&self, a: u32, b: u32) -> Option<(ModIx, Item, Item)> {
        let (ma, mb) = (
            *self.module_of.get(a as usize)?,
            *self.module_of.get(b as usize)?,
        );
        self.lift_edge(ma, a, mb, b)
    }

    /// Items of module `m`'s own layout: its sub-modules, then its own nodes.
    pub fn items(&self, m: ModIx) -> Vec<Item> {
        let md = &self.modules[m as usize];
        md.children
            .iter()
            .map(|&c| Item::Module(c))
            .chain(md.nodes.iter().map(|&n| Item::Node(n)))
            .collect()
    }

    /// The opening fold state chosen by what reads: depths are tried from the shallowest, each
    /// placed, and the deepest one `reads` accepts is kept (`None` when not even depth 1 does).
    /// A deeper state only adds to the picture, so the search stops at the first that does not
    /// read, or that shows more than `max_items` (the bound on what is placed to find out).
    pub fn readable_expansion(
        &self,
        edges: &[(u32, u32)],
        sizes: &[(f32, f32)],
        stand_in: &[Option<ModIx>],
        max_items: usize,
        reads: impl Fn(&FoldLayout) -> bool,
    ) -> Option<Vec<bool>> {
        let max_depth = self.modules.iter().map(|m| m.depth).max().unwrap_or(0);
        let mut cache = FoldCache::default();
        let mut best = None;
        let mut seen = 0;
        for d in 1..=max_depth + 1 {
            let e = self.expanded_to_in(d, stand_in);
            let items = self.visible_items_in(&e, stand_in);
            if items > max_items {
                break;
            }
            if items == seen {
                continue; // nothing deeper opened (a wrapper chain)
            }
            seen = items;
            match place(self, edges, sizes, &e, stand_in, &mut cache) {
                Ok(l) if reads(&l) => best = Some(e),
                _ => break,
            }
        }
        // A wrapper opened with the top level (`layers` holding one group box, `model` holding
        // nearly everything) may not read: then the top level with its wrappers, or alone.
        if best.is_none() {
            let mut alone = vec![false; self.modules.len()];
            alone[ROOT as usize] = true;
            let tries = [
                (!stand_in.is_empty()).then(|| self.expanded_to(1)),
                Some(alone),
            ];
            best = tries.into_iter().flatten().find(|e| {
                place(self, edges, sizes, e, stand_in, &mut cache).is_ok_and(|l| reads(&l))
            });
        }
        best
    }

    /// Modules shallower than `depth` expanded (wrappers too, whatever their depth).
    pub fn expanded_to(&self, depth: u32) -> Vec<bool> {
        self.expanded_to_in(depth, &[])
    }

    /// [`Self::expanded_to`] where a module showing one box (a wrapper, or `layers` showing its
    /// one repeat group) or holding nearly all its parent's nodes (`model` beside a small head)
    /// opens with its parent. A box of loose nodes ([`is_group`]) stays folded: it is detail
    /// of the level it sits in.
    pub fn expanded_to_in(&self, depth: u32, stand_in: &[Option<ModIx>]) -> Vec<bool> {
        let mut e: Vec<bool> = self
            .modules
            .iter()
            .map(|m| m.depth < depth && !is_group(&m.name))
            .collect();
        e[ROOT as usize] = true;
        // A group's drawn member stands for all of them: it is never most of its parent.
        let drawn: std::collections::HashSet<ModIx> = stand_in.iter().flatten().copied().collect();
        // Parents come before their children in `modules`, so one pass opens whole chains.
        for m in 0..self.modules.len() {
            let opens = self.is_wrapper(m as ModIx, stand_in)
                || (!drawn.contains(&(m as ModIx)) && self.holds_its_parent(m as ModIx));
            if opens && self.ancestors_open(m as ModIx, &e) {
                e[m] = true;
            }
        }
        e
    }

    fn is_wrapper(&self, m: ModIx, stand_in: &[Option<ModIx>]) -> bool {
        let md = &self.modules[m as usize];
        let shown = md
            .children
            .iter()
            .filter(|&&c| stand_in.get(c as usize).copied().flatten().is_none())
            .count();
        md.nodes.is_empty() && shown == 1
    }

    /// Module `m` holds more than nine in ten of its parent's nodes: opening the parent alone
    /// would show one big box and a few nodes beside it.
    fn holds_its_parent(&self, m: ModIx) -> bool {
        let md = &self.modules[m as usize];
        let Some(p) = md.parent else { return false };
        !is_group(&md.name) && md.total as u64 * 10 > self.modules[p as usize].total as u64 * 9
    }

    fn ancestors_open(&self, m: ModIx, e: &[bool]) -> bool {
        let mut at = self.modules[m as usize].parent;
        while let Some(p) = at {
            if !e[p as usize] {
                return false;
            }
            at = self.modules[p as usize].parent;
        }
        true
    }

    /// Boxes and nodes on screen for expansion `e` (a folded box counts one).
    pub fn visible_items(&self, e: &[bool]) -> usize {
        self.visible_items_in(e, &[])
    }

    /// [`Self::visible_items`] with the group members `stand_in` hides left out.
    pub fn visible_items_in(&self, e: &[bool], stand_in: &[Option<ModIx>]) -> usize {
        let mut n = 0;
        let mut stack = vec![ROOT];
        while let Some(m) = stack.pop() {
            let md = &self.modules[m as usize];
            n += md.nodes.len();
            for &c in &md.children {
                if stand_in.get(c as usize).copied().flatten().is_some() {
                    continue;
                }
                if e.get(c as usize).copied().unwrap_or(false) {
                    stack.push(c);
                } else {
                    n += 1;
                }
            }
        }
        n
    }

    /// The deepest visible item standing for union node `n` under expansion `e`: the node when
    /// every module above it is open, else the outermost folded box hiding it.
    pub fn rep(&self, n: u32, e: &[bool]) -> Rep {
        self.rep_in(n, e, &[])
    }

    /// [`Self::rep`] where a module `stand_in` hides is its shown member's box.
    pub fn rep_in(&self, n: u32, e: &[bool], stand_in: &[Option<ModIx>]) -> Rep {
        let mut at = self.module_of.get(n as usize).copied();
        let mut hidden = None;
        while let Some(m) = at {
            if let Some(s) = stand_in.get(m as usize).copied().flatten() {
                hidden = Some(s);
            } else if !e.get(m as usize).copied().unwrap_or(false) {
                hidden = Some(m);
            }
            at = self.modules[m as usize].parent;
        }
        hidden.map_or(Rep::Node(n), Rep::Box)
    }
}

/// The module path of every union node of a phase: the path its pass gave it (a node keeps its
/// module from pass to pass, so the first pass that has it speaks).
pub fn union_modules(union: &UnionGraph, files: &[&FxFile], pm: &PhaseModules) -> Vec<String> {
    let mut out: Vec<Option<String>> = vec![None; union.names().len()];
    for (file, gm) in files.iter().zip(&pm.passes) {
        let mut k = 0usize;
        let entries = pass_entries(file);
        for (gi, g) in file.graphs.iter().enumerate() {
            for ni in 0..g.nodes.len() {
                let name = &entries[k].0;
                k += 1;
                if let Some(id) = union.id(name)
                    && out[id as usize].is_none()
                {
                    out[id as usize] = Some(gm.path_in(file, gi, ni).to_owned());
                }
            }
        }
    }
    out.into_iter().map(Option::unwrap_or_default).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> FoldTree {
        // 0 input (root), 1-2 layers.0.attn, 3 layers.0, 4-5 layers.1.attn, 6 layers.1, 7 head
        let paths: Vec<String> = [
            "",
            "layers.0.attn",
            "layers.0.attn",
            "layers.0",
            "layers.1.attn",
            "layers.1.attn",
            "layers.1",
            "head",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let edges = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 4),
            (4, 5),
            (5, 6),
            (6, 7),
            (3, 6),
        ];
        FoldTree::new(&paths, &edges)
    }

    #[test]
    fn modules_nest_and_count_their_nodes() {
        let t = tree();
        let layers = t.find("layers").unwrap();
        assert_eq!(t.modules[layers as usize].total, 6);
        assert_eq!(t.modules[layers as usize].children.len(), 2);
        let names: Vec<&str> = t.modules[ROOT as usize]
            .children
            .iter()
            .map(|&c| t.modules[c as usize].path.as_str())
            .collect();
        assert_eq!(names, ["layers", "head"]);
        assert_eq!(
            t.item_in(layers, 2),
            Some(Item::Module(t.find("layers.0").unwrap()))
        );
        assert_eq!(t.item_in(t.find("head").unwrap(), 2), None);
    }

    #[test]
    fn edges_lift_to_where_their_ends_part() {
        let t = tree();
        let l0 = t.find("layers.0").unwrap();
        let layers = t.find("layers").unwrap();
        // 1→2 stays inside layers.0.attn; 2→3 is attn → node 3 in layers.0; 3→4 and 3→6 are
        // layers.0 → layers.1, merged into one lifted edge of `layers` counting two.
        assert_eq!(t.edge_lift[1].unwrap().0, t.find("layers.0.attn").unwrap());
        assert_eq!(t.edge_lift[2].unwrap().0, l0);
        let (m, k) = t.edge_lift[3].unwrap();
        assert_eq!(m, layers);
        assert_eq!(t.lifted[m as usize][k as usize].count, 2);
        assert_eq!(t.edge_lift[7], t.edge_lift[3]);
    }

    #[test]
    fn opening_depth_keeps_the_screen_readable() {
        let t = tree();
        // Depth 1 shows input, layers, head (3); `layers` opened shows 2 layer boxes (4); one
        // more level shows attn boxes and nodes.
        assert_eq!(t.visible_items(&t.expanded_to(1)), 3);
        assert_eq!(t.visible_items(&t.expanded_to(2)), 4);
        // The deepest depth that "reads" (here: at most 4 items on screen), found by placing
        // each depth in turn; depth 3 (attn boxes and nodes) shows more and stops the search.
        let edges = [
            (0, 1),
            (1, 2),
            (2, 3),
            (3, 4),
            (4, 5),
            (5, 6),
            (6, 7),
            (3, 6),
        ];
        let sizes = vec![(40.0, 20.0); 8];
        let shown = |l: &FoldLayout| {
            l.boxes.iter().filter(|b| b.folded).count()
                + l.node_pos.iter().filter(|p| p.is_some()).count()
        };
        let e = t
            .readable_expansion(&edges, &sizes, &[], 100, |l| shown(l) <= 4)
            .expect("depth 1 reads");
        assert_eq!(e, t.expanded_to(2));
        assert_eq!(
            t.readable_expansion(&edges, &sizes, &[], 100, |_| false),
            None,
            "nothing reads"
        );
        assert_eq!(t.rep(1, &e), Rep::Box(t.find("layers.0").unwrap()));
        assert_eq!(t.rep(0, &e), Rep::Node(0));
        let all = vec![true; t.modules.len()];
        assert_eq!(t.rep(1, &all), Rep::Node(1));
    }
}
