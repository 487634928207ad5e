//! Matching the nodes of two graphs: by name, by structure (renames), by position among equal
//! targets, until a fixpoint; then the rewired edges.

use super::*;

pub(super) struct Matcher<'g> {
    a: &'g FxGraph,
    b: &'g FxGraph,
    a2b: Vec<Option<usize>>,
    b2a: Vec<Option<usize>>,
    how: Vec<Option<MatchKind>>,
}

/// Op kind + target as matching sees it (placeholders: op kind only).
pub(super) fn match_target(n: &FxNode) -> &str {
    if n.op == OpKind::Placeholder {
        ""
    } else {
        &n.target
    }
}

pub(super) type StructKey<'g> = (OpKind, &'g str, Vec<usize>);

impl<'g> Matcher<'g> {
    pub(super) fn new(a: &'g FxGraph, b: &'g FxGraph) -> Self {
        Matcher {
            a,
            b,
            a2b: vec![None; a.nodes.len()],
            b2a: vec![None; b.nodes.len()],
            how: vec![None; b.nodes.len()],
        }
    }

    pub(super) fn link(&mut self, i: usize, j: usize, how: MatchKind) {
        self.a2b[i] = Some(j);
        self.b2a[j] = Some(i);
        self.how[j] = Some(how);
    }

    pub(super) fn by_name(&mut self) {
        for (j, n) in self.b.nodes.iter().enumerate() {
            let i = match self.a.by_name.get(&n.name) {
                Some(i) if self.a.nodes.get(i).is_some_and(|x| x.name == n.name) => Some(i),
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
    pub(super) fn key_a(&self, i: usize) -> Option<StructKey<'g>> {
        let n = &self.a.nodes[i];
        let inputs = n
            .inputs
            .iter()
            .map(|&p| self.a2b.get(p).copied().flatten())
            .collect::<Option<Vec<usize>>>()?;
        Some((n.op, match_target(n), inputs))
    }

    pub(super) fn key_b(&self, j: usize) -> Option<StructKey<'g>> {
        let n = &self.b.nodes[j];
        if n.inputs
            .iter()
            .any(|&q| self.b2a.get(q).copied().flatten().is_none())
        {
            return None;
        }
        Some((n.op, match_target(n), n.inputs.to_vec()))
    }

    /// Step 2. Returns the number of new matches.
    pub(super) fn by_structure(&mut self) -> usize {
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
    pub(super) fn by_position(&mut self) -> usize {
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
    pub(super) fn compatible(&self, i: usize, j: usize) -> bool {
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

    pub(super) fn finish(self) -> GraphPairDiff {
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
pub(super) fn rewires(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::diff::tests::{file, lines};

    #[test]
    pub(super) fn renamed_chains_are_matched_by_structure() {
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
        let j = b.graphs[0].by_name.get("relu_1").unwrap();
        assert!(d.top().is_renamed_b(j));
        assert!(!d.top().is_renamed_b(b.graphs[0].by_name.get("z").unwrap()));
        assert_eq!(d.top().matched_by[j], Some(MatchKind::Structure));
    }

    #[test]
    pub(super) fn position_matches_equal_targets_with_a_common_input() {
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
    pub(super) fn incompatible_equal_targets_stay_added_and_removed() {
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
    pub(super) fn rewired_edges() {
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
}
