//! Pairing two dumps of the same model: which target tensor is compared with which golden one.
//!
//! Tensors are grouped into calls (an msprobe API/module call, an FX node). Calls pair first,
//! then their tensors by slot (`output.0` with `output.0`).
//!
//! - **By key**: calls with the same name (msprobe's key with its call number, as msprobe
//!   pairs them; an npy dump's node name) that compute the same op.
//! - **Renumbered names** (npy dumps from another pass pipeline or torch version): names are
//!   trusted only where they agree with the order. Both sides' calls, in call order, are
//!   aligned by the op they compute (Myers' diff of the two op sequences); the name pairs of an
//!   op family that mostly disagree with that alignment are dropped, the rest kept where their
//!   order is consistent (longest increasing run).
//! - **By order** (the fall-back, msprobe's fuzzy match): between two consecutive key pairs,
//!   the calls left on either side are aligned by op in call order.
//! - **By inputs' pairs** (renumbered nodes): order alone mis-pairs parallel branches that run
//!   the same ops in another order. Walking the target's calls in order, a call paired by order
//!   whose inputs come from calls paired elsewhere than its partner's inputs takes the same-op
//!   golden call whose inputs agree, and its old partner goes to the target call that had it.
//!
//! - **By values** (npy dumps): upstream of a fault both runs compute on the same numbers, so a
//!   call whose inputs hold exactly the values of one golden call of its op (scalars included)
//!   pairs with it, whatever the names and the order say: a target re-traced with an identity
//!   `x * 1.0` inserted has its later `mul`s renamed, and a same-named `mul` that computes
//!   `x * √d` on the other side is not its pair. Where no golden call has its input values
//!   (downstream of the fault, or an op only one side runs), the other rules stand.
//!
//! What stays unpaired is listed per side: an op only one side runs is where a scale error
//! hides.

use super::{PairedBy, Role, TensorRef};
use similar::{Algorithm, DiffOp, capture_diff_slices};
use std::collections::HashMap;

/// Whose names a dump uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// msprobe's keys: what msprobe pairs by, trusted as is.
    Msprobe,
    /// FX node names, which another compile may have numbered differently.
    Nodes,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pairing {
    /// (target index, golden index, how), in the target's order.
    pub pairs: Vec<(usize, usize, PairedBy)>,
    pub unpaired_target: Vec<usize>,
    pub unpaired_golden: Vec<usize>,
    /// One line saying how the calls were paired.
    pub how: String,
}

/// One call: its tensors (indices into the side's list), in slot order.
#[derive(Clone)]
struct Call<'a> {
    name: &'a str,
    op: &'a str,
    tensors: Vec<usize>,
}

fn calls(side: &[TensorRef]) -> Vec<Call<'_>> {
    let mut at: HashMap<&str, usize> = HashMap::new();
    let mut out: Vec<Call> = Vec::new();
    let mut order: Vec<usize> = (0..side.len()).collect();
    order.sort_by_key(|&i| side[i].order);
    for i in order {
        let t = &side[i];
        let k = *at.entry(t.call.as_str()).or_insert_with(|| {
            out.push(Call {
                name: &t.call,
                op: &t.op,
                tensors: Vec::new(),
            });
            out.len() - 1
        });
        out[k].tensors.push(i);
    }
    out
}

/// Pairs the tensors of `target` with those of `golden`.
pub fn pair(target: &[TensorRef], golden: &[TensorRef], naming: Naming) -> Pairing {
    let tc = calls(target);
    let gc = calls(golden);
    let gi: HashMap<&str, usize> = gc.iter().enumerate().map(|(i, c)| (c.name, i)).collect();
    let blind = |calls: &[Call]| calls.iter().all(|c| c.op.is_empty());
    if naming == Naming::Nodes && (blind(&tc) || blind(&gc)) {
        return by_names_only(target, golden, &tc, &gc, &gi);
    }
    let mut by_name: Vec<(usize, usize)> = tc
        .iter()
        .enumerate()
        .filter_map(|(t, c)| {
            let g = *gi.get(c.name)?;
            (gc[g].op == c.op).then_some((t, g))
        })
        .collect();
    let mut note = String::new();
    if naming == Naming::Nodes {
        let before = by_name.len();
        by_name = trusted_names(&tc, &gc, by_name);
        if before > 0 && by_name.len() * 10 < before * 9 {
            note = format!(
                "node names renumbered: {} of {before} same-named nodes kept, the rest paired by target and order",
                by_name.len()
            );
        } else if before == 0 && !tc.is_empty() {
            note = "no node name in common: paired by target and order".to_string();
        }
    }
    let anchors = increasing(by_name);
    let mut call_pairs: Vec<(usize, usize, PairedBy)> = Vec::new();
    let (mut t0, mut g0) = (0, 0);
    for &(t, g) in anchors.iter().chain(std::iter::once(&(tc.len(), gc.len()))) {
        for (a, b) in align(&tc[t0..t], &gc[g0..g]) {
            call_pairs.push((t0 + a, g0 + b, PairedBy::Order));
        }
        if t < tc.len() {
            call_pairs.push((t, g, PairedBy::Key));
        }
        (t0, g0) = (t + 1, g + 1);
    }
    let by_inputs = if naming == Naming::Nodes {
        by_inputs(target, golden, &tc, &gc, &mut call_pairs)
    } else {
        0
    };
    let by_values = if naming == Naming::Nodes {
        by_values(target, golden, &tc, &gc, &mut call_pairs)
    } else {
        0
    };
    let mut out = Pairing::default();
    let mut golden_used = vec![false; golden.len()];
    let mut target_used = vec![false; target.len()];
    for &(t, g, how) in &call_pairs {
        let slots: HashMap<&str, usize> = gc[g]
            .tensors
            .iter()
            .map(|&i| (golden[i].slot.as_str(), i))
            .collect();
        for &i in &tc[t].tensors {
            if let Some(&j) = slots.get(target[i].slot.as_str()) {
                out.pairs.push((i, j, how));
                target_used[i] = true;
                golden_used[j] = true;
            }
        }
    }
    out.unpaired_target = tc
        .iter()
        .flat_map(|c| c.tensors.iter().copied())
        .filter(|&i| !target_used[i])
        .collect();
    out.unpaired_golden = gc
        .iter()
        .flat_map(|c| c.tensors.iter().copied())
        .filter(|&i| !golden_used[i])
        .collect();
    let keyed = match naming {
        Naming::Msprobe => "by msprobe key",
        Naming::Nodes => "by node name",
    };
    // Counted from the pairs as they ended: the later rules move some.
    let count = |how: PairedBy| call_pairs.iter().filter(|p| p.2 == how).count();
    let (by_key, by_order) = (count(PairedBy::Key), count(PairedBy::Order));
    out.how = match (note.is_empty(), by_order) {
        (true, 0) => format!("{by_key} calls paired {keyed}"),
        (true, n) => format!("{by_key} calls paired {keyed}, {n} more by op and call order"),
        (false, _) => note,
    };
    if by_inputs > 0 {
        out.how.push_str(&format!(
            "; {by_inputs} paired by their inputs' pairs where order would mis-pair them"
        ));
    }
    if by_values > 0 {
        out.how.push_str(&format!(
            "; {by_values} paired by their inputs' values where the names would mis-pair them"
        ));
    }
    out
}

/// A side that records no op (npugraph_ex's `.pt` dump, read without its graph) holds no
/// evidence that names were renumbered, nor of what an unnamed call computes: equal names pair,
/// slot by slot, where their dtype and shape agree, and nothing is paired by guess. A
/// same-named tensor of another type is not the same value: it stays unpaired, and `how` says
/// so, rather than reporting a departure no one can stand behind.
fn by_names_only(
    target: &[TensorRef],
    golden: &[TensorRef],
    tc: &[Call],
    gc: &[Call],
    gi: &HashMap<&str, usize>,
) -> Pairing {
    let mut out = Pairing::default();
    let mut golden_used = vec![false; golden.len()];
    let mut target_used = vec![false; target.len()];
    let (mut calls_paired, mut other_type) = (0, 0);
    for c in tc {
        let Some(&g) = gi.get(c.name) else { continue };
        let slots: HashMap<&str, usize> = gc[g]
            .tensors
            .iter()
            .map(|&j| (golden[j].slot.as_str(), j))
            .collect();
        let mut any = false;
        for &i in &c.tensors {
            let Some(&j) = slots.get(target[i].slot.as_str()) else {
                continue;
            };
            let (a, b) = (&target[i], &golden[j]);
            let known = |t: &TensorRef| !t.dtype.is_empty() || !t.shape.is_empty();
            if known(a) && known(b) && (a.dtype != b.dtype || a.shape != b.shape) {
                other_type += 1;
                continue;
            }
            out.pairs.push((i, j, PairedBy::Key));
            target_used[i] = true;
            golden_used[j] = true;
            any = true;
        }
        calls_paired += usize::from(any);
    }
    let rest = |calls: &[Call], used: &[bool]| -> Vec<usize> {
        calls
            .iter()
            .flat_map(|c| c.tensors.iter().copied())
            .filter(|&i| !used[i])
            .collect()
    };
    out.unpaired_target = rest(tc, &target_used);
    out.unpaired_golden = rest(gc, &golden_used);
    out.how = format!(
        "{calls_paired} nodes paired by name: the dump records no op, so names are taken as \
         they are and nothing is paired by order (give each side's graph to pair renumbered \
         nodes)"
    );
    if other_type > 0 {
        out.how.push_str(&format!(
            "; {other_type} same-named tensors of another dtype or shape are not the same value \
             and were not compared"
        ));
    }
    out
}

/// An input's slot and the fingerprint of its values.
type InputValue<'a> = (&'a str, u64);

/// The by-values rule: see the module doc. Returns how many calls it re-paired. A call left
/// without a partner is dropped from `call_pairs` (it is listed as unpaired).
fn by_values(
    target: &[TensorRef],
    golden: &[TensorRef],
    tc: &[Call],
    gc: &[Call],
    call_pairs: &mut Vec<(usize, usize, PairedBy)>,
) -> usize {
    /// A call's inputs as (slot, value), sorted; `None` unless every input has a value.
    fn values<'a>(side: &'a [TensorRef], c: &Call) -> Option<Vec<InputValue<'a>>> {
        let mut v: Vec<InputValue> = c
            .tensors
            .iter()
            .map(|&i| &side[i])
            .filter(|t| t.role == Role::Input)
            .map(|t| Some((t.slot.as_str(), t.value?)))
            .collect::<Option<_>>()?;
        v.sort_unstable();
        (!v.is_empty()).then_some(v)
    }
    let tv: Vec<_> = tc.iter().map(|c| values(target, c)).collect();
    let gv: Vec<_> = gc.iter().map(|c| values(golden, c)).collect();
    let mut by_key: HashMap<(&str, &[InputValue]), Vec<usize>> = HashMap::new();
    for (g, v) in gv.iter().enumerate() {
        if let Some(v) = v {
            by_key.entry((gc[g].op, v.as_slice())).or_default().push(g);
        }
    }
    let mut partner_of_t: Vec<Option<(usize, PairedBy)>> = vec![None; tc.len()];
    let mut partner_of_g: Vec<Option<usize>> = vec![None; gc.len()];
    for &(t, g, how) in call_pairs.iter() {
        partner_of_t[t] = Some((g, how));
        partner_of_g[g] = Some(t);
    }
    let confirmed = |t: usize, g: usize| tv[t].is_some() && tv[t] == gv[g] && tc[t].op == gc[g].op;
    let mut moved = 0;
    for t in 0..tc.len() {
        if partner_of_t[t].is_some_and(|(g, _)| confirmed(t, g)) {
            continue;
        }
        let Some(v) = &tv[t] else { continue };
        let Some([g]) = by_key.get(&(tc[t].op, v.as_slice())).map(Vec::as_slice) else {
            continue;
        };
        let g = *g;
        // A golden call already confirmed with another target call keeps it.
        if partner_of_g[g].is_some_and(|t2| confirmed(t2, g)) {
            continue;
        }
        if let Some(t2) = partner_of_g[g] {
            partner_of_t[t2] = None;
        }
        if let Some((old, _)) = partner_of_t[t] {
            partner_of_g[old] = None;
        }
        partner_of_t[t] = Some((g, PairedBy::Values));
        partner_of_g[g] = Some(t);
        moved += 1;
    }
    if moved > 0 {
        // The calls a move left without a partner, on both sides, pair by op and order among
        // themselves (an op only one side runs stays alone).
        let free_t: Vec<usize> = (0..tc.len())
            .filter(|&t| partner_of_t[t].is_none())
            .collect();
        let free_g: Vec<usize> = (0..gc.len())
            .filter(|&g| partner_of_g[g].is_none())
            .collect();
        let (ft, fg): (Vec<Call>, Vec<Call>) = (
            free_t.iter().map(|&t| tc[t].clone()).collect(),
            free_g.iter().map(|&g| gc[g].clone()).collect(),
        );
        for (a, b) in align(&ft, &fg) {
            partner_of_t[free_t[a]] = Some((free_g[b], PairedBy::Order));
        }
        *call_pairs = partner_of_t
            .iter()
            .enumerate()
            .filter_map(|(t, p)| p.map(|(g, how)| (t, g, how)))
            .collect();
    }
    moved
}

/// The inputs' pairs rule: see the module doc. Returns how many calls it re-paired.
fn by_inputs(
    target: &[TensorRef],
    golden: &[TensorRef],
    tc: &[Call],
    gc: &[Call],
    call_pairs: &mut [(usize, usize, PairedBy)],
) -> usize {
    // Each call's inputs: (slot, the call producing it).
    fn inputs<'a>(side: &'a [TensorRef], calls: &[Call]) -> Vec<Vec<(&'a str, usize)>> {
        let at: HashMap<&str, usize> = calls.iter().enumerate().map(|(i, c)| (c.name, i)).collect();
        calls
            .iter()
            .map(|c| {
                c.tensors
                    .iter()
                    .map(|&i| &side[i])
                    .filter(|t| t.role == Role::Input)
                    .filter_map(|t| Some((t.slot.as_str(), *at.get(t.from.as_deref()?)?)))
                    .collect()
            })
            .collect()
    }
    let t_in = inputs(target, tc);
    let g_in: Vec<HashMap<&str, usize>> = inputs(golden, gc)
        .into_iter()
        .map(|v| v.into_iter().collect())
        .collect();
    // Target call → its entry in `call_pairs`; golden call → the same.
    let mut of_t: Vec<Option<usize>> = vec![None; tc.len()];
    let mut of_g: Vec<Option<usize>> = vec![None; gc.len()];
    for (k, &(t, g, _)) in call_pairs.iter().enumerate() {
        of_t[t] = Some(k);
        of_g[g] = Some(k);
    }
    let mut moved = 0;
    for t in 0..tc.len() {
        let Some(k) = of_t[t] else { continue };
        if call_pairs[k].2 == PairedBy::Key || t_in[t].is_empty() {
            continue;
        }
        // Inputs of `t` whose producer is paired with the producer of golden `g`'s same slot.
        let agree = |g: usize, pairs: &[(usize, usize, PairedBy)]| {
            t_in[t]
                .iter()
                .filter(|(slot, p)| {
                    of_t[*p].is_some_and(|pk| g_in[g].get(slot) == Some(&pairs[pk].1))
                })
                .count()
        };
        let now = call_pairs[k].1;
        let have = agree(now, call_pairs);
        if have == t_in[t].len() {
            continue;
        }
        // Only a golden call that is free or held by a later, order-paired target call: the
        // calls already walked keep what they have.
        let best = (0..gc.len())
            .filter(|&g| g != now && gc[g].op == tc[t].op)
            .filter(|&g| {
                of_g[g].is_none_or(|k2| call_pairs[k2].2 != PairedBy::Key && call_pairs[k2].0 > t)
            })
            .map(|g| (agree(g, call_pairs), std::cmp::Reverse(g.abs_diff(now)), g))
            .max();
        let Some((_, _, g)) = best.filter(|b| b.0 > have) else {
            continue;
        };
        match of_g[g] {
            Some(k2) => {
                call_pairs[k2].1 = now;
                of_g[now] = Some(k2);
            }
            None => of_g[now] = None,
        }
        call_pairs[k].1 = g;
        call_pairs[k].2 = PairedBy::Inputs;
        of_g[g] = Some(k);
        moved += 1;
    }
    moved
}

/// Same-named pairs whose op family mostly agrees with the order alignment of all calls.
fn trusted_names(tc: &[Call], gc: &[Call], by_name: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    let aligned: HashMap<usize, usize> = align(tc, gc).into_iter().collect();
    let mut agree: HashMap<&str, (usize, usize)> = HashMap::new();
    for &(t, g) in &by_name {
        let e = agree.entry(tc[t].op).or_default();
        e.1 += 1;
        if aligned.get(&t) == Some(&g) {
            e.0 += 1;
        }
    }
    by_name
        .into_iter()
        .filter(|&(t, _)| {
            let (yes, all) = agree[tc[t].op];
            yes * 2 >= all
        })
        .collect()
}

/// Calls of `t` and `g` doing the same op, aligned in order (Myers' diff of the op names).
fn align(t: &[Call], g: &[Call]) -> Vec<(usize, usize)> {
    if t.is_empty() || g.is_empty() {
        return Vec::new();
    }
    let ops_g: Vec<&str> = g.iter().map(|c| c.op).collect();
    let ops_t: Vec<&str> = t.iter().map(|c| c.op).collect();
    let mut out = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, &ops_g, &ops_t) {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            // Calls whose op no one recorded (a `.pt` node its graph lacks) are no evidence
            // of anything: equal "" ops do not pair them.
            out.extend(
                (0..len)
                    .map(|k| (new_index + k, old_index + k))
                    .filter(|&(a, _)| !t[a].op.is_empty()),
            );
        }
    }
    out
}

/// The longest subsequence of `pairs` (sorted by target index) whose golden indices increase:
/// pairs that cross others are dropped.
fn increasing(mut pairs: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    pairs.sort_unstable();
    // Patience sorting: tails[k] = index into pairs of the smallest tail of a run of length k+1.
    let mut tails: Vec<usize> = Vec::new();
    let mut prev: Vec<Option<usize>> = vec![None; pairs.len()];
    for (i, &(_, g)) in pairs.iter().enumerate() {
        let k = tails.partition_point(|&j| pairs[j].1 < g);
        prev[i] = k.checked_sub(1).map(|k| tails[k]);
        if k == tails.len() {
            tails.push(i);
        } else {
            tails[k] = i;
        }
    }
    let mut out = Vec::with_capacity(tails.len());
    let mut at = tails.last().copied();
    while let Some(i) = at {
        out.push(pairs[i]);
        at = prev[i];
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::accuracy::Role;

    fn t(call: &str, op: &str, slot: &str, order: usize) -> TensorRef {
        TensorRef {
            key: format!("{call}.{slot}"),
            call: call.into(),
            op: op.into(),
            node: Some(call.into()),
            slot: slot.into(),
            role: if slot.starts_with("OUTPUT") {
                Role::Output
            } else {
                Role::Input
            },
            dtype: "<f4".into(),
            shape: vec![2],
            summary: None,
            order,
            requires_grad: None,
            from: None,
            value: None,
        }
    }

    fn side(names: &[(&str, &str)]) -> Vec<TensorRef> {
        names
            .iter()
            .enumerate()
            .flat_map(|(k, (n, op))| [t(n, op, "INPUT.0", k), t(n, op, "OUTPUT.0", k)])
            .collect()
    }

    fn pairs_of(p: &Pairing, a: &[TensorRef], b: &[TensorRef]) -> Vec<(String, String)> {
        p.pairs
            .iter()
            .filter(|(i, ..)| a[*i].slot == "OUTPUT.0")
            .map(|&(i, j, _)| (a[i].call.clone(), b[j].call.clone()))
            .collect()
    }

    #[test]
    fn same_names_pair_by_name() {
        let g = side(&[("mm", "mm"), ("add", "add"), ("relu", "relu")]);
        let p = pair(&g, &g, Naming::Nodes);
        assert_eq!(p.pairs.len(), 6);
        assert!(p.pairs.iter().all(|x| x.2 == PairedBy::Key));
        assert!(p.unpaired_target.is_empty() && p.unpaired_golden.is_empty());
    }

    #[test]
    fn shifted_numbering_is_paired_by_order_not_by_name() {
        // The target numbers its adds from 1: its add_1 is the golden's add.
        let g = side(&[
            ("add", "add"),
            ("mm", "mm"),
            ("add_1", "add"),
            ("relu", "relu"),
        ]);
        let t = side(&[
            ("add_1", "add"),
            ("mm", "mm"),
            ("add_2", "add"),
            ("relu", "relu"),
        ]);
        let p = pair(&t, &g, Naming::Nodes);
        let got = pairs_of(&p, &t, &g);
        assert_eq!(
            got,
            [
                ("add_1", "add"),
                ("mm", "mm"),
                ("add_2", "add_1"),
                ("relu", "relu")
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        assert!(p.how.contains("renumbered"), "{}", p.how);
    }

    #[test]
    fn an_extra_op_stays_unpaired_and_msprobe_keys_are_trusted() {
        let g = side(&[("F.gelu.0", "F.gelu"), ("F.linear.1", "F.linear")]);
        let t = side(&[
            ("F.gelu.0", "F.gelu"),
            ("T.mul.0", "T.mul"),
            ("F.linear.1", "F.linear"),
        ]);
        let p = pair(&t, &g, Naming::Msprobe);
        assert_eq!(p.pairs.len(), 4);
        let extra: Vec<&str> = p
            .unpaired_target
            .iter()
            .map(|&i| t[i].call.as_str())
            .collect();
        assert_eq!(extra, ["T.mul.0", "T.mul.0"]);
    }

    #[test]
    fn leftovers_between_keys_pair_by_op_order() {
        let g = side(&[("a.0", "a"), ("x.0", "x"), ("b.0", "b")]);
        let t = side(&[("a.0", "a"), ("x.7", "x"), ("b.0", "b")]);
        let p = pair(&t, &g, Naming::Msprobe);
        assert_eq!(p.pairs.len(), 6);
        assert!(p.pairs.iter().any(|x| x.2 == PairedBy::Order));
    }

    /// Two branches, `sin → mul` and `cos → mul`; the target (another numbering) runs the cos
    /// branch's `mul` first. Order alone pairs the target's first `mul` with the golden's first
    /// (the sin branch's); their inputs' pairs say otherwise.
    #[test]
    fn parallel_branches_run_in_another_order_pair_by_their_inputs() {
        let with_inputs = |calls: &[(&str, &str, &[&str])]| -> Vec<TensorRef> {
            let mut v = Vec::new();
            for (k, (name, op, from)) in calls.iter().enumerate() {
                for (i, f) in from.iter().enumerate() {
                    let mut x = t(name, op, &format!("INPUT.{i}"), k);
                    x.from = Some(f.to_string());
                    v.push(x);
                }
                v.push(t(name, op, "OUTPUT.0", k));
            }
            v
        };
        let g = with_inputs(&[
            ("sin", "sin", &[]),
            ("cos", "cos", &[]),
            ("mul", "mul", &["sin", "sin"]),
            ("mul_1", "mul", &["cos", "cos"]),
        ]);
        let t = with_inputs(&[
            ("sin_1", "sin", &[]),
            ("cos_1", "cos", &[]),
            ("mul_1", "mul", &["cos_1", "cos_1"]),
            ("mul_2", "mul", &["sin_1", "sin_1"]),
        ]);
        let p = pair(&t, &g, Naming::Nodes);
        let got = pairs_of(&p, &t, &g);
        assert_eq!(
            got,
            [
                ("sin_1", "sin"),
                ("cos_1", "cos"),
                ("mul_1", "mul_1"),
                ("mul_2", "mul")
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        assert!(p.how.contains("inputs' pairs"), "{}", p.how);
        // Without the producers, order alone pairs the branches crosswise.
        let strip = |v: &[TensorRef]| -> Vec<TensorRef> {
            v.iter()
                .cloned()
                .map(|mut x| {
                    x.from = None;
                    x
                })
                .collect()
        };
        let (t0, g0) = (strip(&t), strip(&g));
        let blind = pairs_of(&pair(&t0, &g0, Naming::Nodes), &t0, &g0);
        assert_eq!(blind[2], ("mul_1".to_string(), "mul".to_string()));
    }

    /// Moves by values can leave fewer pairs than order made: the header counts the pairs as
    /// they ended (it once subtracted the order count from a shorter list).
    #[test]
    fn moves_by_values_are_counted_from_the_final_pairs() {
        let with_value = |mut v: Vec<TensorRef>, values: &[u64]| {
            for (t, &x) in v.iter_mut().filter(|t| t.role == Role::Input).zip(values) {
                t.value = Some(x);
            }
            v
        };
        let calls = |names: &[&str]| -> Vec<TensorRef> {
            names
                .iter()
                .enumerate()
                .flat_map(|(k, n)| {
                    [
                        t(n, "aten.mul.Tensor", "INPUT.0", k),
                        t(n, "aten.mul.Tensor", "OUTPUT.0", k),
                    ]
                })
                .collect()
        };
        let target = with_value(calls(&["mul", "a_1", "a_2", "a_3"]), &[1, 30, 2, 10]);
        let golden = with_value(calls(&["mul", "b_1", "b_2", "b_3"]), &[10, 2, 30, 4]);
        let p = pair(&target, &golden, Naming::Nodes);
        let pairs = pairs_of(&p, &target, &golden);
        // Each call whose inputs hold one golden call's values is with it; the one left on each
        // side pair by op and order.
        for (a, b) in [
            ("a_1", "b_2"),
            ("a_2", "b_1"),
            ("a_3", "mul"),
            ("mul", "b_3"),
        ] {
            assert!(pairs.contains(&(a.into(), b.into())), "{pairs:?}");
        }
        assert_eq!(
            p.how,
            "0 calls paired by node name, 1 more by op and call order; 3 paired by their \
             inputs' values where the names would mis-pair them"
        );
    }

    /// A `.pt` dump's nodes (no op recorded), in name order, with names only one side has:
    /// equal names pair, whatever their place; a name of another type is not compared.
    #[test]
    fn without_ops_equal_names_pair_and_nothing_is_guessed() {
        let mut target = side(&[("add", ""), ("add_1", ""), ("clone", ""), ("mm", "")]);
        let golden = side(&[("add", ""), ("addmm", ""), ("clone", ""), ("mul", "")]);
        target.retain(|t| t.slot == "OUTPUT.0");
        let golden: Vec<TensorRef> = golden
            .into_iter()
            .filter(|t| t.slot == "OUTPUT.0")
            .collect();
        target[2].shape = vec![3];
        let p = pair(&target, &golden, Naming::Nodes);
        assert_eq!(
            pairs_of(&p, &target, &golden),
            [("add".to_string(), "add".to_string())]
        );
        assert!(p.pairs.iter().all(|x| x.2 == PairedBy::Key));
        assert_eq!(p.unpaired_target.len(), 3);
        assert_eq!(p.unpaired_golden.len(), 3);
        assert!(
            p.how
                .contains("1 same-named tensors of another dtype or shape"),
            "{}",
            p.how
        );
    }

    #[test]
    fn crossing_pairs_are_dropped() {
        assert_eq!(
            increasing(vec![(0, 0), (1, 3), (2, 1), (3, 2), (4, 4)]),
            vec![(0, 0), (2, 1), (3, 2), (4, 4)]
        );
    }
}
