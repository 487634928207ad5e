//! Repeated blocks: numbered siblings (`layers.0` … `layers.414`, `experts.0` …) with the same
//! structure fold into one box drawn once, `layers.0–414 ×415`. Siblings that differ form groups
//! of their own (the first dense layers of a mixture-of-experts model), each able to say how it
//! differs from the largest group.
//!
//! Structure is what a pass computes, names and numbers ignored: the ops and shapes of each
//! module's own nodes in order, its sub-modules (by name, layer numbers left out) with their own
//! structure, and the edges between its items. Only numbered siblings group: `k_proj` and
//! `v_proj` may compute alike, but they are different parts of the model.

use super::{FoldTree, Item, ModIx};
use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{Hash, Hasher};

/// Numbered siblings with one structure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatGroup {
    pub parent: ModIx,
    /// In the order their first node runs.
    pub members: Vec<ModIx>,
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
) -> Vec<RepeatGroup> {
    let shared = shared_values(tree, edges);
    let key = |n: u32| key(n).filter(|_| !shared.get(n as usize).copied().unwrap_or(false));
    let sig = signatures(tree, &internal_edges(tree, edges), &key);
    let mut out = Vec::new();
    for (p, md) in tree.modules.iter().enumerate() {
        let numbered: Vec<ModIx> = md
            .children
            .iter()
            .copied()
            .filter(|&c| is_number(&tree.modules[c as usize].name) && sig[c as usize].is_some())
            .collect();
        if numbered.len() < 2 {
            continue;
        }
        let mut groups: Vec<(u64, Vec<ModIx>)> = Vec::new();
        let mut at: HashMap<u64, usize> = HashMap::new();
        for c in numbered {
            let s = sig[c as usize].unwrap_or_default();
            match at.get(&s) {
                Some(&i) => groups[i].1.push(c),
                None => {
                    at.insert(s, groups.len());
                    groups.push((s, vec![c]));
                }
            }
        }
        if groups.iter().all(|g| g.1.len() < 2) {
            continue;
        }
        out.extend(groups.into_iter().map(|(_, members)| RepeatGroup {
            parent: p as ModIx,
            members,
        }));
    }
    out
}

/// Per union node: read by a numbered sibling of the one it is in (at any level) other than the
/// next one (a layer hands its output to the next; a value the trace computed once for all is
/// read further on), or by two of them.
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
        if rank[sb as usize] != rank[sa as usize] + 1 {
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
    // Children have higher indices than their parents: fill from the leaves up.
    for m in (0..tree.modules.len()).rev() {
        let md = &tree.modules[m];
        let items = tree.items(m as ModIx);
        let mut pos: HashMap<Item, u32> = HashMap::with_capacity(items.len());
        let mut h = DefaultHasher::new();
        let mut any = false;
        for item in &items {
            let s = match *item {
                Item::Module(c) => sig[c as usize].map(|s| {
                    let mut ch = DefaultHasher::new();
                    kind_of(&tree.modules[c as usize].name).hash(&mut ch);
                    s.hash(&mut ch);
                    ch.finish()
                }),
                Item::Node(n) => key(n),
            };
            if let Some(s) = s {
                pos.insert(*item, pos.len() as u32);
                s.hash(&mut h);
                any = true;
            }
        }
        if !any {
            continue;
        }
        let mut edges: Vec<(u32, u32)> = internal[m]
            .iter()
            .filter_map(|(a, b)| Some((*pos.get(a)?, *pos.get(b)?)))
            .collect();
        edges.dedup();
        edges.sort_unstable();
        edges.hash(&mut h);
        md.children.len().hash(&mut h);
        sig[m] = Some(h.finish());
    }
    sig
}

/// What a node computes, for [`repeat_groups`]: its op as drawn (`aten.mm`, `input` for a
/// placeholder: never its name) and its value's type and shape.
pub fn structure_key(op: &str, meta: &str) -> u64 {
    let mut h = DefaultHasher::new();
    // An attribute read (`self._tensor_constant4`, `self.layers.3.weight`) is named, and
    // numbered per layer: its numbers are left out.
    match op.strip_prefix("self.") {
        Some(attr) => attr.replace(|c: char| c.is_ascii_digit(), "").hash(&mut h),
        None => op.hash(&mut h),
    }
    symbols_out(meta).hash(&mut h);
    h.finish()
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

/// How module `a` differs from `b` (two numbered siblings of different groups), in a few words:
/// the sub-modules only one has, then the ops whose counts differ. `op(n)` is what union node
/// `n` computes in the pass (`None` when the pass lacks it).
pub fn difference<'a>(
    tree: &FoldTree,
    a: ModIx,
    b: ModIx,
    op: impl Fn(u32) -> Option<&'a str>,
) -> String {
    let (sa, oa, na) = contents(tree, a, &op);
    let (sb, ob, nb) = contents(tree, b, &op);
    let mut parts = vec![format!("{na} nodes against {nb}")];
    let only = |x: &BTreeSet<String>, y: &BTreeSet<String>| -> Vec<String> {
        x.difference(y).take(4).cloned().collect()
    };
    let (has, lacks) = (only(&sa, &sb), only(&sb, &sa));
    if !has.is_empty() {
        parts.push(format!("has {}", has.join(", ")));
    }
    if !lacks.is_empty() {
        parts.push(format!("lacks {}", lacks.join(", ")));
    }
    let mut ops: Vec<(i64, String)> = oa
        .keys()
        .chain(ob.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .filter_map(|k| {
            let d = *oa.get(k).unwrap_or(&0) as i64 - *ob.get(k).unwrap_or(&0) as i64;
            (d != 0).then(|| (d, k.clone()))
        })
        .collect();
    ops.sort_by_key(|(d, k)| (std::cmp::Reverse(d.abs()), k.clone()));
    if !ops.is_empty() {
        let shown: Vec<String> = ops
            .iter()
            .take(4)
            .map(|(d, k)| format!("{}{d} {k}", if *d > 0 { "+" } else { "" }))
            .collect();
        parts.push(format!("ops {}", shown.join(", ")));
    }
    parts.join("; ")
}

/// A module's sub-module paths (relative, numbers left out), op counts and node count in the pass.
fn contents<'a>(
    tree: &FoldTree,
    m: ModIx,
    op: &impl Fn(u32) -> Option<&'a str>,
) -> (BTreeSet<String>, BTreeMap<String, u32>, u32) {
    let base = tree.modules[m as usize].path.len() + 1;
    let mut subs = BTreeSet::new();
    let mut ops: BTreeMap<String, u32> = BTreeMap::new();
    let mut nodes = 0;
    let mut stack = vec![m];
    while let Some(x) = stack.pop() {
        let md = &tree.modules[x as usize];
        if x != m {
            let rel = md.path.get(base..).unwrap_or_default();
            let rel: Vec<&str> = rel.split('.').map(kind_of).collect();
            subs.insert(rel.join("."));
        }
        for &n in &md.nodes {
            if let Some(o) = op(n) {
                *ops.entry(short_op(o).to_string()).or_default() += 1;
                nodes += 1;
            }
        }
        stack.extend(md.children.iter().copied());
    }
    (subs, ops, nodes)
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
        let g = repeat_groups(&t, &edges, key_of(&["mm", "add", "relu"]));
        assert_eq!(g.len(), 1);
        assert_eq!(g[0].members.len(), 4);
        assert_eq!(group_label(&t, &g[0].members), "layers.0–3 ×4");
        // Layer 2's relu replaced: 0, 1 and 3 still repeat, 2 stands alone.
        let ops = ["mm", "add", "relu"];
        let g = repeat_groups(&t, &[], |n| {
            let mut h = DefaultHasher::new();
            if n == 8 { "gelu" } else { ops[n as usize % 3] }.hash(&mut h);
            Some(h.finish())
        });
        let sizes: Vec<usize> = g.iter().map(|x| x.members.len()).collect();
        assert_eq!(sizes, [3, 1]);
        assert_eq!(group_label(&t, &g[0].members), "layers.0–1, 3 ×3");
        let op = |n: u32| {
            Some(if n == 8 {
                "aten.gelu"
            } else {
                ["aten.mm", "aten.add", "aten.relu"][n as usize % 3]
            })
        };
        let d = difference(&t, g[1].members[0], g[0].members[0], op);
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
        let g = repeat_groups(&t, &edges, key_of(&["mm", "add", "relu"]));
        assert!(g.is_empty(), "{g:?}");
        // Same ops, but layer 1 puts one of them in a sub-module.
        let mut paths = paths;
        paths[5] = "layers.1.mlp".into();
        let t = FoldTree::new(&paths, &[]);
        assert!(repeat_groups(&t, &[], key_of(&["mm", "add", "relu"])).is_empty());
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
        let g = repeat_groups(&t, &edges, key);
        assert_eq!(g.len(), 1, "{g:?}");
        assert_eq!(g[0].members.len(), 3);
        // Read by one other layer only (the chain from layer to layer), a value is the layer's.
        let edges = [(0, 1), (2, 3), (4, 5), (6, 1), (6, 3), (1, 2), (3, 4)];
        let t = FoldTree::new(&paths, &edges);
        let g = repeat_groups(&t, &edges[..6], key);
        assert_ne!(g.first().map(|x| x.members.len()), Some(3), "{g:?}");
    }

    #[test]
    fn only_numbered_siblings_group() {
        let paths: Vec<String> = ["attn.q_proj", "attn.q_proj", "attn.k_proj", "attn.k_proj"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let t = FoldTree::new(&paths, &[]);
        assert!(repeat_groups(&t, &[], key_of(&["mm", "view"])).is_empty());
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
