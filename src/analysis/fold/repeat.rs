//! Repeated blocks: numbered siblings (`layers.0` … `layers.414`, `experts.0` …) with the same
//! structure fold into one box drawn once, `layers.0–414 ×415`. Siblings that differ form groups
//! of their own (the first dense layers of a mixture-of-experts model), each able to say how it
//! differs from the largest group.
//!
//! Structure is what a pass computes, names and numbers ignored: the ops and shapes of each
//! module's own nodes, its sub-modules (by name, layer numbers left out) with their own
//! structure, and the edges between its items. Only numbered siblings group: `k_proj` and
//! `v_proj` may compute alike, but they are different parts of the model.
//!
//! Siblings alike in everything group first; then groups whose members hold the same inside
//! merge, the odd member named: a layer's edge depends on its neighbours (in a backward the last
//! layer sums no gradient from a next one, the first recomputes its residual sum from the
//! embedding), and a user asking "which layers are of one kind" means what lies inside.

use super::{FoldModule, FoldTree, Item, ModIx};
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};

/// Numbered siblings with one structure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatGroup {
    pub parent: ModIx,
    /// In the order their first node runs.
    pub members: Vec<ModIx>,
    /// A member that differs at its boundary (what it reads from or hands to its neighbours)
    /// from a member of the group's commonest form, and that member, when one does: the group
    /// is by what lies inside.
    pub border: Option<(ModIx, ModIx)>,
}

/// The repeat groups of `tree` for a pass: `key(n)` is what union node `n` computes in it (its
/// op and shape, hashed), `None` when the pass lacks it. A parent's numbered children are all in
/// one of its groups (an odd one out is a group of one); parents whose numbered children all
/// differ get no groups.
///
/// A value several siblings read, computed once in the first of them (the rotary tables and the
/// mask a traced model computes per layer, which the trace computes once), is not part of that
/// sibling's structure: `edges` (the union's) say who reads what.
pub fn repeat_groups(
    tree: &FoldTree,
    edges: &[(u32, u32)],
    key: impl Fn(u32) -> Option<u64>,
    tangent: impl Fn(u32) -> bool,
) -> Vec<RepeatGroup> {
    let shared = shared_values(tree, edges);
    let mut unplaced = unplaced_values(tree, edges, &shared, &key);
    for (u, r) in unplaced.iter_mut().zip(recomputed(tree, edges, tangent)) {
        *u |= r;
    }
    let border = border_nodes(tree, edges, &unplaced);
    let key = |n: u32| key(n).filter(|_| !shared.get(n as usize).copied().unwrap_or(false));
    let whole = signatures(tree, &internal_edges(tree, edges), &key);
    let mut out = Vec::new();
    for (p, md) in tree.modules.iter().enumerate() {
        let numbered: Vec<ModIx> = md
            .children
            .iter()
            .copied()
            .filter(|&c| is_number(&tree.modules[c as usize].name) && whole[c as usize].is_some())
            .collect();
        if numbered.len() < 2 {
            continue;
        }
        // Alike in everything first; then groups whose members hold the same inside.
        let mut exact: Vec<Vec<ModIx>> = Vec::new();
        let mut at: HashMap<u64, usize> = HashMap::new();
        for c in numbered {
            let s = whole[c as usize].unwrap_or_default();
            match at.get(&s) {
                Some(&i) => exact[i].push(c),
                None => {
                    at.insert(s, exact.len());
                    exact.push(vec![c]);
                }
            }
        }
        let inside: Vec<Inside> = exact
            .iter()
            .map(|g| Inside::of(tree, g[0], edges, &key, &unplaced, &border))
            .collect();
        // (the exact group leading, members, a member differing at its boundary and one of the
        // lead's)
        type Merged = (usize, Vec<ModIx>, Option<(ModIx, ModIx)>);
        let mut groups: Vec<Merged> = Vec::new();
        // The largest exact group leads, so a merged group is named by its commonest form.
        let mut order: Vec<usize> = (0..exact.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(exact[i].len()), exact[i][0]));
        for i in order {
            match groups
                .iter_mut()
                .find(|(lead, ..)| inside[*lead].same_kind(&inside[i]))
            {
                Some((lead, members, odd)) => {
                    members.extend(&exact[i]);
                    odd.get_or_insert((exact[i][0], exact[*lead][0]));
                }
                None => groups.push((i, exact[i].clone(), None)),
            }
        }
        if groups.iter().all(|g| g.1.len() < 2) {
            continue;
        }
        // Members and groups in the order their first node runs, as the parent's children are.
        let first_run = |m: &ModIx| md.children.iter().position(|c| c == m);
        let mut groups: Vec<RepeatGroup> = groups
            .into_iter()
            .map(|(_, mut members, border)| {
                members.sort_by_key(first_run);
                RepeatGroup {
                    parent: p as ModIx,
                    members,
                    border,
                }
            })
            .collect();
        groups.sort_by_key(|g| first_run(&g.members[0]));
        out.extend(groups);
    }
    out
}

/// Per union node: no layer's evidence. A value several siblings read ([`shared_values`]); a
/// value read from nothing (an input, a constant), which stands where its first reader is, so
/// where fxray drew it says nothing of the layer; what the pass lacks; the graph's output (a
/// forward returns the values its backward saves, chosen per layer by the partitioner).
fn unplaced_values(
    tree: &FoldTree,
    edges: &[(u32, u32)],
    shared: &[bool],
    key: &impl Fn(u32) -> Option<u64>,
) -> Vec<bool> {
    let mut read_from = vec![false; tree.module_of.len()];
    for &(_, b) in edges {
        if let Some(r) = read_from.get_mut(b as usize) {
            *r = true;
        }
    }
    (0..tree.module_of.len())
        .map(|n| {
            shared.get(n).copied().unwrap_or(false) || !read_from[n] || key(n as u32).is_none()
        })
        .collect()
}

/// Per union node of a backward (a graph with tangents): a forward value it computes again, no
/// tangent upstream of it. Whether a layer saves or recomputes a value is the partitioner's
/// choice by what is cheap around it (the first layer recomputes its residual sum from the
/// embedding), not the layer's kind. All false in a graph without tangents.
fn recomputed(tree: &FoldTree, edges: &[(u32, u32)], tangent: impl Fn(u32) -> bool) -> Vec<bool> {
    let n = tree.module_of.len();
    let mut reached: Vec<bool> = (0..n as u32).map(&tangent).collect();
    if !reached.contains(&true) {
        return vec![false; n];
    }
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        if (a as usize) < n && (b as usize) < n {
            out[a as usize].push(b);
        }
    }
    let mut stack: Vec<u32> = (0..n as u32).filter(|&i| reached[i as usize]).collect();
    while let Some(a) = stack.pop() {
        for &b in &out[a as usize] {
            if !reached[b as usize] {
                reached[b as usize] = true;
                stack.push(b);
            }
        }
    }
    // Inputs (saved values, weights) are unreached too; `unplaced_values` has them anyway.
    reached.into_iter().map(|r| !r).collect()
}

/// What a numbered module holds, for telling layers of one kind: its sub-modules (relative,
/// numbers left out), and the nodes of each, all of them and those away from its boundary.
struct Inside {
    subs: BTreeSet<String>,
    all: HashMap<Entry, u32>,
    inner: HashMap<Entry, u32>,
    /// Edges between its nodes, and those with an end away from the boundary.
    all_edges: HashMap<(Entry, Entry), u32>,
    inner_edges: HashMap<(Entry, Entry), u32>,
    nodes: u32,
}

/// A node as [`Inside`] counts it: its sub-module (relative, numbers left out) and structure key.
type Entry = (String, u64);

impl Inside {
    fn of(
        tree: &FoldTree,
        m: ModIx,
        edges: &[(u32, u32)],
        key: &impl Fn(u32) -> Option<u64>,
        unplaced: &[bool],
        border: &[bool],
    ) -> Inside {
        let mut out = Inside {
            subs: BTreeSet::new(),
            all: HashMap::new(),
            inner: HashMap::new(),
            all_edges: HashMap::new(),
            inner_edges: HashMap::new(),
            nodes: 0,
        };
        let mut entry: HashMap<u32, Entry> = HashMap::new();
        let mut stack = vec![m];
        while let Some(x) = stack.pop() {
            let md = &tree.modules[x as usize];
            let rel = relative_kind(tree, m, x);
            let mut any = false;
            for &n in &md.nodes {
                let Some(k) = key(n).filter(|_| !unplaced[n as usize]) else {
                    continue;
                };
                any = true;
                out.nodes += 1;
                entry.insert(n, (rel.clone(), k));
                *out.all.entry((rel.clone(), k)).or_default() += 1;
                if !border[n as usize] {
                    *out.inner.entry((rel.clone(), k)).or_default() += 1;
                }
            }
            if any {
                out.subs.insert(rel);
            }
            stack.extend(&md.children);
        }
        for &(a, b) in edges {
            let (Some(ea), Some(eb)) = (entry.get(&a), entry.get(&b)) else {
                continue;
            };
            let e = (ea.clone(), eb.clone());
            if !border[a as usize] || !border[b as usize] {
                *out.inner_edges.entry(e.clone()).or_default() += 1;
            }
            *out.all_edges.entry(e).or_default() += 1;
        }
        out
    }

    /// One kind: the same sub-modules, what lies away from either's boundary (nodes, and edges
    /// with an end there) the other has too, and a twentieth of the nodes apart at most (a layer
    /// next to a dense one, or to the final norm, sums or reshapes its gradient at its edge where
    /// the others do it in their neighbour).
    fn same_kind(&self, other: &Inside) -> bool {
        fn within<K: Hash + Eq>(a: &HashMap<K, u32>, b: &HashMap<K, u32>) -> bool {
            a.iter().all(|(k, &n)| b.get(k).copied().unwrap_or(0) >= n)
        }
        // And little differs at all: a twentieth of the nodes at most.
        let apart: u32 = self
            .all
            .keys()
            .chain(other.all.keys())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(|k| {
                let (a, b) = (self.all.get(k), other.all.get(k));
                a.copied().unwrap_or(0).abs_diff(b.copied().unwrap_or(0))
            })
            .sum();
        self.subs == other.subs
            && apart * 20 <= self.nodes.min(other.nodes)
            && within(&self.inner, &other.all)
            && within(&other.inner, &self.all)
            && within(&self.inner_edges, &other.all_edges)
            && within(&other.inner_edges, &self.all_edges)
    }
}

/// Per union node: at the boundary of a numbered module it is in (an edge joins it to a node
/// outside), or one step inside from such a node. What a layer reads from and hands to its
/// neighbours depends on who they are: in a backward the first layer also sums the gradient of
/// the embedding's output, a layer after a dense one reads its input another way. Layers of one
/// kind are told by what lies inside. An unplaced value is no layer's, and neither are its
/// edges.
fn border_nodes(tree: &FoldTree, edges: &[(u32, u32)], unplaced: &[bool]) -> Vec<bool> {
    let unplaced = |n: u32| unplaced.get(n as usize).copied().unwrap_or(false);
    let numbered_below = |n: u32, top: ModIx| -> bool {
        let mut at = tree.module_of.get(n as usize).copied();
        while let Some(m) = at.filter(|&m| m != top) {
            if is_number(&tree.modules[m as usize].name) {
                return true;
            }
            at = tree.modules[m as usize].parent;
        }
        false
    };
    let mut edge_of: Vec<bool> = vec![false; tree.module_of.len()];
    for &(a, b) in edges {
        if unplaced(a) || unplaced(b) {
            continue;
        }
        let Some((top, _, _)) = tree.lifted_edge(a, b) else {
            continue;
        };
        for n in [a, b] {
            if numbered_below(n, top) {
                edge_of[n as usize] = true;
            }
        }
    }
    let mut out = edge_of.clone();
    for &(a, b) in edges {
        let (ai, bi) = (a as usize, b as usize);
        if ai < out.len() && bi < out.len() && !unplaced(a) && !unplaced(b) {
            out[bi] |= edge_of[ai];
            out[ai] |= edge_of[bi];
        }
    }
    out
}

/// Per union node: read by a numbered sibling of the one it is in (at any level) other than the
/// next or the one before (a layer hands its output to the next, its gradient to the one before;
/// a value the trace computed once for all is read further on), or by two of them.
fn shared_values(tree: &FoldTree, edges: &[(u32, u32)]) -> Vec<bool> {
    let mut rank: Vec<usize> = vec![0; tree.modules.len()];
    for md in &tree.modules {
        for (i, &c) in md.children.iter().enumerate() {
            rank[c as usize] = i;
        }
    }
    let numbered = |m: ModIx| is_number(&tree.modules[m as usize].name);
    // Up to two distinct sibling readers per node are enough to know.
    let mut readers: Vec<[Option<ModIx>; 2]> = vec![[None; 2]; tree.module_of.len()];
    for &(a, b) in edges {
        let Some((_, Item::Module(sa), Item::Module(sb))) = tree.lifted_edge(a, b) else {
            continue;
        };
        if !numbered(sa) || !numbered(sb) {
            continue;
        }
        let r = &mut readers[a as usize];
        let (ra, rb) = (rank[sa as usize], rank[sb as usize]);
        // A backward hands a layer's gradient to the one before.
        if rb != ra + 1 && rb + 1 != ra {
            // Further on than the next: shared, whoever else reads it.
            *r = [Some(sb), Some(sb)];
        } else if r[0].is_none() {
            r[0] = Some(sb);
        } else if r[0] != Some(sb) && r[1].is_none() {
            r[1] = Some(sb);
        }
    }
    readers.iter().map(|r| r[1].is_some()).collect()
}

/// The pass's edges lifted to the module where their ends part (the tree's own lifted edges are
/// the union's, of every pass: a pass that rewires one layer would set it apart in all).
fn internal_edges(tree: &FoldTree, edges: &[(u32, u32)]) -> Vec<Vec<(Item, Item)>> {
    let mut out = vec![Vec::new(); tree.modules.len()];
    for &(a, b) in edges {
        if let Some((c, from, to)) = tree.lifted_edge(a, b) {
            out[c as usize].push((from, to));
        }
    }
    out
}

/// Structure of every module's subtree in the pass, `None` where the pass has none of its nodes.
fn signatures(
    tree: &FoldTree,
    internal: &[Vec<(Item, Item)>],
    key: &impl Fn(u32) -> Option<u64>,
) -> Vec<Option<u64>> {
    let mut sig: Vec<Option<u64>> = vec![None; tree.modules.len()];
    // Children have higher indices than their parents: fill from the leaves up. What a module
    // holds is a multiset, and so is how its items are wired: the order its sub-modules first
    // run in is the scheduler's (a backward's first layer starts with what it recomputes).
    for m in (0..tree.modules.len()).rev() {
        let md = &tree.modules[m];
        let mut of: HashMap<Item, u64> = HashMap::new();
        for item in tree.items(m as ModIx) {
            let s = match item {
                Item::Module(c) => sig[c as usize].map(|s| {
                    let mut ch = DefaultHasher::new();
                    kind_of(&tree.modules[c as usize].name).hash(&mut ch);
                    s.hash(&mut ch);
                    ch.finish()
                }),
                Item::Node(n) => key(n),
            };
            if let Some(s) = s {
                of.insert(item, s);
            }
        }
        if of.is_empty() {
            continue;
        }
        let mut items: Vec<u64> = of.values().copied().collect();
        items.sort_unstable();
        let mut pairs: Vec<&(Item, Item)> = internal[m]
            .iter()
            .filter(|(a, b)| of.contains_key(a) && of.contains_key(b))
            .collect();
        pairs.sort_unstable();
        pairs.dedup();
        let mut edges: Vec<(u64, u64)> = pairs.iter().map(|(a, b)| (of[a], of[b])).collect();
        edges.sort_unstable();
        let mut h = DefaultHasher::new();
        items.hash(&mut h);
        edges.hash(&mut h);
        md.children.len().hash(&mut h);
        sig[m] = Some(h.finish());
    }
    sig
}

/// What a node computes, for [`repeat_groups`]: its op as drawn (`aten.mm`, `input` for a
/// placeholder: never its name) and its value's type and shape; `None` for the graph's
/// `output`, which is no layer's.
pub fn structure_key(op: &str, meta: &str) -> Option<u64> {
    if op == "output" {
        return None;
    }
    let mut h = DefaultHasher::new();
    // An attribute read (`self._tensor_constant4`, `self.layers.3.weight`) is named, and
    // numbered per layer: its numbers are left out.
    match op.strip_prefix("self.") {
        Some(attr) => attr.replace(|c: char| c.is_ascii_digit(), "").hash(&mut h),
        None => op.hash(&mut h),
    }
    symbols_out(meta).hash(&mut h);
    Some(h.finish())
}

/// `f32[u3, 32]` → `f32[?, 32]`: each expert of a looped mixture-of-experts has its own
/// data-dependent size (`u0`, `u1`, …) and each dynamic dim its own symbol; they are names.
fn symbols_out(meta: &str) -> std::borrow::Cow<'_, str> {
    let b = meta.as_bytes();
    let symbol_at = |i: usize| {
        matches!(b[i], b's' | b'u')
            && (i == 0 || !b[i - 1].is_ascii_alphanumeric() && b[i - 1] != b'_')
            && b.get(i + 1).is_some_and(u8::is_ascii_digit)
    };
    if !(0..b.len()).any(symbol_at) {
        return meta.into();
    }
    let mut out = String::with_capacity(meta.len());
    let mut i = 0;
    while i < b.len() {
        if symbol_at(i) {
            out.push('?');
            i += 1;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
        } else {
            let c = meta[i..].chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out.into()
}

fn is_number(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit())
}

/// A module name with its number left out (`7` → `#`).
fn kind_of(name: &str) -> &str {
    if is_number(name) { "#" } else { name }
}

/// Module `x`'s path below module `m`, numbers left out (`mlp.experts.#`): what a sub-module of
/// one layer is in any other.
fn relative_kind(tree: &FoldTree, m: ModIx, x: ModIx) -> String {
    let base = tree.modules[m as usize].path.len() + 1;
    let p = tree.modules[x as usize]
        .path
        .get(base..)
        .unwrap_or_default();
    p.split('.').map(kind_of).collect::<Vec<_>>().join(".")
}

/// `layers.0–414 ×415`, `layers.0–2, 5 ×4`: the members' numbers as ranges after the parent's
/// path, and their count.
pub fn group_label(tree: &FoldTree, members: &[ModIx]) -> String {
    let Some(&first) = members.first() else {
        return String::new();
    };
    let md = &tree.modules[first as usize];
    let prefix = md.path.strip_suffix(md.name.as_str()).unwrap_or_default();
    let numbers: Vec<u64> = members
        .iter()
        .filter_map(|&m| tree.modules[m as usize].name.parse().ok())
        .collect();
    format!("{prefix}{} ×{}", ranges(&numbers, 4), members.len())
}

/// `0–2, 5, 7–9`: runs of consecutive numbers (in the order given), at most `max` of them, then
/// `…`.
pub fn ranges(numbers: &[u64], max: usize) -> String {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &x in numbers {
        match runs.last_mut() {
            Some(r) if x == r.1 + 1 => r.1 = x,
            _ => runs.push((x, x)),
        }
    }
    let mut parts: Vec<String> = runs
        .iter()
        .take(max)
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}–{b}")
            }
        })
        .collect();
    if runs.len() > max {
        parts.push("…".into());
    }
    parts.join(", ")
}

/// What [`difference`] is told of a union node in a pass: its op (`aten.mm`) and its value's
/// type and shape (`f32[16, 32]`).
pub type Look<'a> = (&'a str, &'a str);

/// How module `a` differs from `b` (two numbered siblings of different groups), in a few words:
/// the sub-modules only one has, then the ops whose counts differ. When those agree, what else
/// set them apart is named (a group that differs must say how): shapes, then wiring inside, then
/// order; and whatever the two read from or hand to modules around them differently (their
/// boundary), which grouping leaves out. `look(n)` is what union node `n` computes in the pass
/// (`None` when the pass lacks it), `edges` the pass's edges.
pub fn difference<'a>(
    tree: &FoldTree,
    a: ModIx,
    b: ModIx,
    edges: &[(u32, u32)],
    look: impl Fn(u32) -> Option<Look<'a>>,
) -> String {
    let shared = shared_values(tree, edges);
    let look = |n: u32| look(n).filter(|_| !shared.get(n as usize).copied().unwrap_or(false));
    let ca = Contents::of(tree, a, edges, &look);
    let cb = Contents::of(tree, b, edges, &look);
    let mut parts = vec![format!("{} nodes against {}", ca.nodes, cb.nodes)];
    let only = |x: &BTreeSet<String>, y: &BTreeSet<String>| -> Vec<String> {
        x.difference(y).take(4).cloned().collect()
    };
    let (has, lacks) = (only(&ca.subs, &cb.subs), only(&cb.subs, &ca.subs));
    if !has.is_empty() {
        parts.push(format!("has {}", has.join(", ")));
    }
    if !lacks.is_empty() {
        parts.push(format!("lacks {}", lacks.join(", ")));
    }
    if let Some(d) = counted_difference(&ca.ops, &cb.ops) {
        parts.push(format!("ops {d}"));
    }
    if parts.len() == 1 {
        if let Some(d) = counted_difference(&ca.shapes, &cb.shapes) {
            parts.push(format!("shapes {d}"));
        } else if let Some(d) = counted_difference(&ca.wiring, &cb.wiring) {
            parts.push(format!("wiring {d}"));
        } else if let Some((k, x, y)) = ca
            .order
            .iter()
            .zip(&cb.order)
            .enumerate()
            .find_map(|(k, (x, y))| (x != y).then_some((k, x, y)))
        {
            parts.push(format!(
                "same nodes in another order: item {} is {x}, not {y}",
                k + 1
            ));
        } else {
            parts.push("same nodes, wiring and order inside".into());
        }
    }
    if let Some(d) = counted_difference(&ca.boundary, &cb.boundary) {
        parts.push(format!("boundary {d}"));
    }
    parts.join("; ")
}

/// How `member` of a group differs at its boundary from `first`, a member of the group's
/// commonest form, the member named (`layers.0 at its boundary: 183 nodes against 180; …`).
pub fn border_difference<'a>(
    tree: &FoldTree,
    member: ModIx,
    first: ModIx,
    edges: &[(u32, u32)],
    look: impl Fn(u32) -> Option<Look<'a>>,
) -> String {
    format!(
        "{} at its boundary: {}",
        tree.modules[member as usize].path,
        difference(tree, member, first, edges, look)
    )
}

/// What a group says of itself beside its parent's others (the CLI's report and the window's
/// box tooltip say the same).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupNote {
    /// The parent's largest group (by members, then the first to run), when it is another.
    pub largest: Option<usize>,
    /// How it differs from that group ([`difference`]).
    pub differs: Option<String>,
    /// How its odd member differs at its boundary ([`border_difference`]).
    pub border: Option<String>,
}

/// A [`GroupNote`] per group of `groups`, in order.
pub fn group_notes<'a>(
    tree: &FoldTree,
    groups: &[RepeatGroup],
    edges: &[(u32, u32)],
    look: impl Fn(u32) -> Option<Look<'a>>,
) -> Vec<GroupNote> {
    groups
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let largest = (0..groups.len())
                .filter(|&o| groups[o].parent == g.parent)
                .max_by_key(|&o| {
                    let m = &groups[o].members;
                    (m.len(), std::cmp::Reverse(m[0]))
                })
                .filter(|&l| l != i);
            GroupNote {
                largest,
                differs: largest
                    .map(|l| difference(tree, g.members[0], groups[l].members[0], edges, &look)),
                border: g
                    .border
                    .map(|(odd, common)| border_difference(tree, odd, common, edges, &look)),
            }
        })
        .collect()
}

/// What a module holds in a pass, names and numbers left out, counted several ways.
struct Contents {
    nodes: u32,
    /// Sub-module paths, relative (`mlp.experts.#`).
    subs: BTreeSet<String>,
    /// Ops (`aten.mm`).
    ops: BTreeMap<String, u32>,
    /// Ops with the module they are in and their shape (`mlp.gate aten.view f32[16, 32]`).
    shapes: BTreeMap<String, u32>,
    /// Edges inside (`mlp.gate aten.view → mlp.gate aten.mm`).
    wiring: BTreeMap<String, u32>,
    /// Edges across its border: what it reads (`reads model.norm aten.mul`) and hands on
    /// (`feeds the next aten.add`), a numbered sibling named by where it stands.
    boundary: BTreeMap<String, u32>,
    /// Its items in the order they run, depth first.
    order: Vec<String>,
}

impl Contents {
    fn of<'a>(
        tree: &FoldTree,
        m: ModIx,
        edges: &[(u32, u32)],
        look: &impl Fn(u32) -> Option<Look<'a>>,
    ) -> Contents {
        let rel = |x: ModIx| relative_kind(tree, m, x);
        let mut c = Contents {
            nodes: 0,
            subs: BTreeSet::new(),
            ops: BTreeMap::new(),
            shapes: BTreeMap::new(),
            wiring: BTreeMap::new(),
            boundary: BTreeMap::new(),
            order: Vec::new(),
        };
        let mut inside: HashMap<u32, String> = HashMap::new();
        let mut stack = vec![m];
        while let Some(x) = stack.pop() {
            let md = &tree.modules[x as usize];
            let at = rel(x);
            if x != m {
                c.subs.insert(at.clone());
                c.order.push(format!("module {at}"));
            }
            for &n in &md.nodes {
                if let Some((op, meta)) = look(n) {
                    let op = short_op(op);
                    *c.ops.entry(op.to_string()).or_default() += 1;
                    let what = format!("{at} {op}").trim().to_string();
                    *c.shapes
                        .entry(format!("{what} {}", symbols_out(meta)))
                        .or_default() += 1;
                    c.order.push(what.clone());
                    inside.insert(n, what);
                    c.nodes += 1;
                }
            }
            stack.extend(md.children.iter().rev().copied());
        }
        let md = &tree.modules[m as usize];
        // The graph's `output` returns what the backward saves, of any layer: no neighbour.
        let neighbour = |n: u32| look(n).is_some_and(|(op, _)| op != "output");
        for &(s, d) in edges {
            let (ins, ind) = (inside.get(&s), inside.get(&d));
            let key = match (ins, ind) {
                (Some(x), Some(y)) => format!("{x} → {y}"),
                (None, Some(y)) if neighbour(s) => {
                    format!("reads {} into {y}", around(tree, md, s, look))
                }
                (Some(x), None) if neighbour(d) => {
                    format!("hands {x} to {}", around(tree, md, d, look))
                }
                _ => continue,
            };
            let map = if ins.is_some() && ind.is_some() {
                &mut c.wiring
            } else {
                &mut c.boundary
            };
            *map.entry(key).or_default() += 1;
        }
        c
    }
}

/// Union node `n` outside module `md`, as `md`'s neighbours would name it: a numbered sibling
/// by where it stands (`the one before`), else its module's path, with its op.
fn around<'a>(
    tree: &FoldTree,
    md: &FoldModule,
    n: u32,
    look: &impl Fn(u32) -> Option<Look<'a>>,
) -> String {
    let op = look(n).map_or("", |l| short_op(l.0));
    let Some(&at) = tree.module_of.get(n as usize) else {
        return op.to_string();
    };
    let path = &tree.modules[at as usize].path;
    let prefix = md.path.strip_suffix(md.name.as_str()).unwrap_or_default();
    let sibling = path
        .strip_prefix(prefix)
        .filter(|_| !prefix.is_empty() || md.parent == Some(super::ROOT))
        .and_then(|rest| {
            let (num, tail) = rest.split_once('.').unwrap_or((rest, ""));
            let k: i64 = num.parse().ok()?;
            let me: i64 = md.name.parse().ok()?;
            let tail: Vec<&str> = tail
                .split('.')
                .filter(|t| !t.is_empty())
                .map(kind_of)
                .collect();
            let tail = if tail.is_empty() {
                String::new()
            } else {
                format!(".{}", tail.join("."))
            };
            Some(match k - me {
                0 => return None,
                -1 => format!("the one before{tail}"),
                1 => format!("the one after{tail}"),
                d if d < 0 => format!("one further before{tail}"),
                _ => format!("one further after{tail}"),
            })
        });
    let whose = sibling.unwrap_or_else(|| {
        if path.is_empty() {
            "the root".to_string()
        } else {
            path.clone()
        }
    });
    format!("{whose} {op}")
}

/// `+2 aten.mm, -1 aten.bmm`: the keys whose counts differ, largest first (at most four).
fn counted_difference(a: &BTreeMap<String, u32>, b: &BTreeMap<String, u32>) -> Option<String> {
    let mut d: Vec<(i64, &String)> = a
        .keys()
        .chain(b.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter_map(|k| {
            let d = i64::from(*a.get(k).unwrap_or(&0)) - i64::from(*b.get(k).unwrap_or(&0));
            (d != 0).then_some((d, k))
        })
        .collect();
    if d.is_empty() {
        return None;
    }
    d.sort_by_key(|(x, k)| (std::cmp::Reverse(x.abs()), *k));
    let shown: Vec<String> = d
        .iter()
        .take(4)
        .map(|(x, k)| format!("{}{x} {k}", if *x > 0 { "+" } else { "" }))
        .collect();
    let more = if d.len() > 4 {
        format!(" (+{} more)", d.len() - 4)
    } else {
        String::new()
    };
    Some(format!("{}{more}", shown.join(", ")))
}

/// `aten.topk` of `torch.ops.aten.topk.default`.
fn short_op(target: &str) -> &str {
    let t = target.strip_prefix("torch.ops.").unwrap_or(target);
    match t.rsplit_once('.') {
        Some((head, last)) if head.contains('.') && !last.is_empty() => head,
        _ => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key_of(ops: &[&str]) -> impl Fn(u32) -> Option<u64> {
        let ops: Vec<String> = ops.iter().map(|s| s.to_string()).collect();
        move |n| {
            let mut h = DefaultHasher::new();
            ops[n as usize % ops.len()].hash(&mut h);
            Some(h.finish())
        }
    }

    #[test]
    fn equal_layers_form_one_group_and_a_different_one_its_own() {
        let paths: Vec<String> = (0..4)
            .flat_map(|l| (0..3).map(move |_| format!("layers.{l}")))
            .collect();
        let edges: Vec<(u32, u32)> = (0..11).map(|i| (i, i + 1)).collect();
        let t = FoldTree::new(&paths, &edges);
        let g = repeat_groups(&t, &edges, key_of(&["mm", "add", "relu"]), |_| false);
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].members.len(), 4);
        assert_eq!(group_label(&t, &g[0].members), "layers.0–3 ×4");
        // Layer 2's relu replaced: 0, 1 and 3 still repeat, 2 stands alone.
        let ops = ["mm", "add", "relu"];
        let g = repeat_groups(
            &t,
            &edges,
            |n| {
                let mut h = DefaultHasher::new();
                if n == 8 { "gelu" } else { ops[n as usize % 3] }.hash(&mut h);
                Some(h.finish())
            },
            |_| false,
        );
        let sizes: Vec<usize> = g.iter().map(|x| x.members.len()).collect();
        assert_eq!(sizes, [3, 1]);
        assert_eq!(group_label(&t, &g[0].members), "layers.0–1, 3 ×3");
        let op = |n: u32| {
            let op = if n == 8 {
                "aten.gelu"
            } else {
                ["aten.mm", "aten.add", "aten.relu"][n as usize % 3]
            };
            Some((op, "f32[4]"))
        };
        let d = difference(&t, g[1].members[0], g[0].members[0], &[], op);
        assert!(
            d.contains("+1 aten.gelu") && d.contains("-1 aten.relu"),
            "{d}"
        );
    }

    #[test]
    fn an_internal_edge_or_a_sub_module_tells_layers_apart() {
        // Two layers of the same three ops; in layer 1 the add reads the mm, in layer 0 not.
        let paths: Vec<String> = (0..2)
            .flat_map(|l| (0..3).map(move |_| format!("layers.{l}")))
            .collect();
        let edges = [(0, 1), (3, 4), (3, 5)];
        let t = FoldTree::new(&paths, &edges);
        let g = repeat_groups(&t, &edges, key_of(&["mm", "add", "relu"]), |_| false);
        assert!(g.is_empty(), "{g:?}");
        // Same ops, but layer 1 puts one of them in a sub-module.
        let mut paths = paths;
        paths[5] = "layers.1.mlp".into();
        let edges = [(0, 1), (1, 2), (3, 4), (4, 5)];
        let t = FoldTree::new(&paths, &edges);
        let key = key_of(&["mm", "add", "relu"]);
        assert!(repeat_groups(&t, &edges, key, |_| false).is_empty());
    }

    #[test]
    fn a_value_the_trace_computed_once_for_every_layer_is_not_the_first_layers() {
        // Three layers of mm → add; layer 0 also holds `cos` (node 6), which all three read.
        let mut paths: Vec<String> = (0..3)
            .flat_map(|l| (0..2).map(move |_| format!("layers.{l}")))
            .collect();
        paths.push("layers.0".into());
        let edges = [
            (0, 1),
            (2, 3),
            (4, 5),
            (6, 1),
            (6, 3),
            (6, 5),
            (1, 2),
            (3, 4),
        ];
        let t = FoldTree::new(&paths, &edges);
        let key = key_of(&["mm", "add"]);
        let key = |n: u32| if n == 6 { Some(7) } else { key(n) };
        let g = repeat_groups(&t, &edges, key, |_| false);
        assert_eq!(g.len(), 1, "{g:?}");
        assert_eq!(g[0].members.len(), 3);
        // Read by one other layer only (the chain from layer to layer), a value is the layer's.
        let edges = [(0, 1), (2, 3), (4, 5), (6, 1), (6, 3), (1, 2), (3, 4)];
        let t = FoldTree::new(&paths, &edges);
        let g = repeat_groups(&t, &edges[..6], key, |_| false);
        assert_ne!(g.first().map(|x| x.members.len()), Some(3), "{g:?}");
    }

    /// Three layers, each a chain of 60 nodes handing on to the next; layer `odd` has one node
    /// more at `at` in its chain (0: where it reads the layer before).
    fn layers_with_one_more(odd: usize, at: usize) -> (FoldTree, Vec<(u32, u32)>, Vec<bool>) {
        let mut paths = Vec::new();
        let mut extra = Vec::new();
        let mut edges = Vec::new();
        for l in 0..3 {
            let n = if l == odd { 61 } else { 60 };
            for k in 0..n {
                let id = paths.len() as u32;
                paths.push(format!("layers.{l}"));
                extra.push(l == odd && k == at);
                if id > 0 {
                    edges.push((id - 1, id));
                }
            }
        }
        (FoldTree::new(&paths, &edges), edges, extra)
    }

    #[test]
    fn layers_of_one_kind_that_differ_at_their_boundary_group_and_say_so() {
        let key = |extra: &[bool], n: u32| {
            let mut h = DefaultHasher::new();
            (if extra[n as usize] { "view" } else { "mm" }).hash(&mut h);
            Some(h.finish())
        };
        // Layer 1 reshapes what it reads from layer 0 first: one group, layer 1 named.
        let (t, edges, extra) = layers_with_one_more(1, 0);
        let g = repeat_groups(&t, &edges, |n| key(&extra, n), |_| false);
        assert_eq!(g.len(), 1, "{g:?}");
        assert_eq!(g[0].members.len(), 3);
        let [layer0, layer1, layer2] =
            ["layers.0", "layers.1", "layers.2"].map(|l| t.find(l).unwrap());
        let (odd, common) = g[0].border.unwrap();
        assert_eq!(odd, layer1);
        let look = |n: u32| {
            Some((
                if extra[n as usize] {
                    "aten.view"
                } else {
                    "aten.mm"
                },
                "f32[4]",
            ))
        };
        let d = border_difference(&t, layer1, common, &edges, look);
        assert!(
            d.starts_with("layers.1 at its boundary: ") && d.contains("+1 aten.view"),
            "{d}"
        );
        // The same node in the middle of the layer: another kind.
        let (t, edges, extra) = layers_with_one_more(1, 30);
        let g = repeat_groups(&t, &edges, |n| key(&extra, n), |_| false);
        let members: Vec<&[ModIx]> = g.iter().map(|x| x.members.as_slice()).collect();
        assert_eq!(members, [&[layer0, layer2][..], &[layer1]], "{g:?}");
    }

    #[test]
    fn a_value_a_backward_computes_again_is_no_layers() {
        // Layer 1 computes a forward value again in its middle, from an input (node 0) no
        // tangent (node 1) is upstream of: layers of one kind, not two.
        let (t, edges, extra) = layers_with_one_more(1, 30);
        let odd = extra.iter().position(|&e| e).unwrap() as u32;
        let mut edges: Vec<(u32, u32)> = edges
            .into_iter()
            .filter(|&(a, b)| a != odd && b != odd && (a, b) != (0, 1))
            .collect();
        edges.extend([(odd - 1, odd + 1), (0, odd), (odd, odd + 1)]);
        let key = |n: u32| {
            let mut h = DefaultHasher::new();
            (if n == odd { "add" } else { "mm" }).hash(&mut h);
            Some(h.finish())
        };
        let layer1 = t.find("layers.1").unwrap();
        let of_layer1 = |g: Vec<RepeatGroup>| g.into_iter().find(|x| x.members.contains(&layer1));
        let g = of_layer1(repeat_groups(&t, &edges, key, |n| n == 1)).unwrap();
        assert!(
            g.members.len() > 1 && g.border.is_some_and(|b| b.0 == layer1),
            "{g:?}"
        );
        // Without tangents (a forward) the node is the layer's own.
        let g = of_layer1(repeat_groups(&t, &edges, key, |_| false));
        assert!(g.as_ref().is_none_or(|g| g.members == [layer1]), "{g:?}");
    }

    #[test]
    fn a_difference_the_counts_miss_is_still_named() {
        // Two layers of mm → add → relu; layer 1's add has another shape.
        let paths: Vec<String> = (0..2)
            .flat_map(|l| (0..3).map(move |_| format!("layers.{l}")))
            .collect();
        let edges = [(0, 1), (1, 2), (3, 4), (4, 5)];
        let t = FoldTree::new(&paths, &edges);
        let ops = ["aten.mm", "aten.add", "aten.relu"];
        let look = |n: u32| {
            Some((
                ops[n as usize % 3],
                if n == 4 { "f32[8]" } else { "f32[4]" },
            ))
        };
        let d = difference(&t, 3, 2, &edges, look);
        assert!(d.contains("shapes") && d.contains("f32[8]"), "{d}");
        // Same ops and shapes, wired otherwise: layer 1's relu reads the mm.
        let edges2 = [(0, 1), (1, 2), (3, 4), (3, 5)];
        let look = |n: u32| Some((ops[n as usize % 3], "f32[4]"));
        let d = difference(&t, 3, 2, &edges2, look);
        assert!(d.contains("wiring"), "{d}");
    }

    #[test]
    fn only_numbered_siblings_group() {
        let paths: Vec<String> = ["attn.q_proj", "attn.q_proj", "attn.k_proj", "attn.k_proj"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let t = FoldTree::new(&paths, &[]);
        assert!(repeat_groups(&t, &[], key_of(&["mm", "view"]), |_| false).is_empty());
    }

    #[test]
    fn ranges_are_runs_of_consecutive_numbers() {
        assert_eq!(ranges(&[0, 1, 2, 5, 7, 8, 9], 4), "0–2, 5, 7–9");
        assert_eq!(ranges(&[0, 2, 4, 6, 8, 10], 3), "0, 2, 4, …");
        assert_eq!(short_op("torch.ops.aten.topk.default"), "aten.topk");
        assert_eq!(symbols_out("f32[u3, 32]"), "f32[?, 32]");
        assert_eq!(symbols_out("f32[2*s77 + 1, 8]"), "f32[2*? + 1, 8]");
        assert_eq!(symbols_out("f32[16, 16]"), "f32[16, 16]");
        assert_eq!(
            structure_key("aten.mm", "f32[u0, 8]"),
            structure_key("aten.mm", "f32[u9, 8]")
        );
    }
}
