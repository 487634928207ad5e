//! A module call's entry → the node that leaves the module with the call's output.
//!
//! The inferred modules are not exact where a module's last statement has no weights of its
//! own (`hidden = residual + hidden` ends a decoder layer but lands in the root), so a module's
//! nodes are widened before its exits are read: the residual add right after it joins it.

use super::{Ctx, Link, RecTy, chunk, describe, same_type, within};
use crate::analysis::modules::Confidence;
use crate::model::fx::{OpKind, Short};
use crate::model::tensor::{MsprobeCall, MsprobeStep, MsprobeTensor};
use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

/// How often each module was called in the step (one direction), and which call each entry is.
pub(super) struct Calls<'a> {
    count: HashMap<&'a str, u32>,
    /// `count` of each entry's module path, by entry index (1 for an entry of no module): read
    /// for every API call made in the module, where hashing its path again was one more walk
    /// of its text.
    count_at: Vec<u32>,
    /// By entry index (dense: a module-level dump is mostly module entries).
    call: Vec<u32>,
    /// Per module entry: its rank among earlier entries of the same class under the same parent.
    class_rank: Vec<u32>,
}

impl<'a> Calls<'a> {
    pub(super) fn of(step: &'a MsprobeStep, backward: bool) -> Calls<'a> {
        let mut c = Calls {
            count: HashMap::default(),
            count_at: Vec::new(),
            call: vec![0; step.entries.len()],
            class_rank: vec![0; step.entries.len()],
        };
        let mut seen: HashMap<(&str, &str), u32> = HashMap::default();
        for (i, e) in step.entries.iter().enumerate() {
            if let Some(MsprobeCall::Module {
                path,
                class,
                n,
                backward: b,
            }) = &e.call
                && *b == backward
            {
                let path = super::root_path(path);
                let k = c.count.entry(path).or_default();
                *k = (*k).max(n + 1);
                c.call[i] = *n;
                let parent = path.rsplit_once('.').map_or("", |(p, _)| p);
                let r = seen.entry((parent, class.as_str())).or_default();
                c.class_rank[i] = *r;
                *r += 1;
            }
        }
        c.count_at = step
            .entries
            .iter()
            .map(|e| {
                e.call
                    .as_ref()
                    .and_then(MsprobeCall::module)
                    .map_or(1, |p| c.count(super::root_path(p)))
            })
            .collect();
        c
    }

    /// [`Calls::count`] of entry `entry`'s module path.
    pub(super) fn count_at(&self, entry: usize) -> u32 {
        self.count_at.get(entry).copied().unwrap_or(1)
    }

    /// Calls of `path` in the step (at least 1).
    pub(super) fn count(&self, path: &str) -> u32 {
        self.count.get(path).copied().unwrap_or(1).max(1)
    }

    /// Which call of its module entry `entry` is.
    pub(super) fn call_of(&self, entry: usize) -> u32 {
        self.call.get(entry).copied().unwrap_or(0)
    }
}

/// One module call being linked.
pub(super) struct Call<'a> {
    pub entry: usize,
    pub path: &'a str,
    pub class: &'a str,
    pub n: u32,
    pub tensors: &'a [MsprobeTensor],
}

pub(super) fn link(ctx: &Ctx, calls: &Calls, c: &Call, l: &mut Link) {
    let nodes = &ctx.graph.nodes;
    let mut path = c.path.to_string();
    let mut alias = None;
    let mut ext = widened(ctx, &path);
    if ext.is_none() {
        // One module reached by two attribute paths (`rotary_emb` at the top, read first as
        // `layers.0.self_attn.rotary_emb`): Dynamo names it by the first.
        if let Some(p) = ctx.ending_in(&path).first() {
            alias = Some(p.to_string());
            path = p.to_string();
            ext = widened(ctx, &path);
        }
    }
    let shown = if c.path.is_empty() { "(root)" } else { c.path };
    let as_alias = alias
        .as_ref()
        .map(|a| format!(", as {a}"))
        .unwrap_or_default();
    let outs: Vec<&MsprobeTensor> = c
        .tensors
        .iter()
        .filter(|t| t.slot.starts_with("output"))
        .collect();
    let calls_n = calls.count_at(c.entry);
    let call = format!("call {} of {calls_n}", c.n + 1);
    let Some(ext) = ext else {
        return by_class(ctx, calls, c, &outs, l);
    };
    let members: &[usize] = &ext;
    let exits = exits(ctx, &path, members);
    // The output's node: an exit of its type, else a value inside of its type (the module's
    // own code went on using it, as `apply_rotary_pos_emb` placed in the rotary module).
    for (pool, inner) in [(exits.as_slice(), false), (members, true)] {
        let picked = pick(ctx, pool, &outs, calls_n, c.n);
        let Some(&(_, first, shared)) = picked.first() else {
            continue;
        };
        let t = outs[0];
        l.outputs = picked
            .iter()
            .map(|(s, i, _)| (s.clone(), nodes[*i].name.clone()))
            .collect();
        l.node = Some(nodes[first].name.clone());
        l.holder = Some(first);
        l.same_op = true;
        l.confidence = if inner || shared || alias.is_some() {
            Confidence::Medium
        } else {
            Confidence::High
        };
        l.reason = format!(
            "{} module {shown}{as_alias} with the output's {} ({call}{})",
            if inner { "a value inside" } else { "leaves" },
            describe(t),
            if shared { "; the calls share it" } else { "" }
        );
        return;
    }
    let Some(&i) = chunk(&exits, calls_n, c.n).last() else {
        l.reason = format!("module {shown}: nothing leaves it for {call}");
        return;
    };
    l.node = Some(nodes[i].name.clone());
    l.holder = Some(i);
    l.confidence = Confidence::Low;
    l.reason = match outs.first() {
        Some(t) => format!(
            "module only: nothing in {shown}{as_alias} has the output's {}; its last value taken",
            describe(t)
        ),
        None => format!("module only: the entry records no output; {shown}'s last value taken"),
    };
}

/// What the module at `path` (its `members`) hands on: values used outside it, or returned by
/// the graph. Cached per path: a module called once per layer (a rotary embedding) asks again,
/// and its members can be most of the graph.
fn exits(ctx: &Ctx, path: &str, members: &[usize]) -> Rc<Vec<usize>> {
    if let Some(v) = ctx.exits.borrow().get(path) {
        return v.clone();
    }
    let nodes = &ctx.graph.nodes;
    let inside = |i: usize| members.binary_search(&i).is_ok();
    let v: Rc<Vec<usize>> = Rc::new(
        members
            .iter()
            .copied()
            .filter(|&i| {
                nodes[i]
                    .users
                    .iter()
                    .any(|&u| !inside(u) || nodes[u].op == OpKind::Output)
            })
            .collect(),
    );
    ctx.exits.borrow_mut().insert(path.to_string(), v.clone());
    v
}

/// For each output slot, its node among `pool` (graph order) for call `n`: (slot, node, the
/// calls share the nodes). Outputs of one type (cos and sin) take the call's last nodes of that
/// type, in order. Empty when the first output finds none.
fn pick(
    ctx: &Ctx,
    pool: &[usize],
    outs: &[&MsprobeTensor],
    calls: u32,
    n: u32,
) -> Vec<(Short, usize, bool)> {
    let mut v = Vec::new();
    for (j, t) in outs.iter().enumerate() {
        let ty = RecTy::of(t);
        let cands: Vec<usize> = pool
            .iter()
            .copied()
            .filter(|&i| same_type(ctx.ty(i), ty))
            .collect();
        let like: Vec<usize> = (0..outs.len())
            .filter(|&k| outs[k].dtype == t.dtype && outs[k].shape == t.shape)
            .collect();
        let rank = like.iter().position(|&k| k == j).unwrap_or(0);
        // Fewer nodes than calls need: a pass merged the calls' identical values (CSE).
        let shared = calls > 1 && cands.len() < calls as usize * like.len();
        let part = if shared {
            &cands[cands.len().saturating_sub(like.len())..]
        } else {
            chunk(&cands, calls, n)
        };
        let at = part.len().saturating_sub(like.len()) + rank;
        match part.get(at).or(part.last()) {
            Some(&i) => v.push((t.slot.clone(), i, shared)),
            None if j == 0 => return Vec::new(),
            None => {}
        }
    }
    v
}

/// The module's nodes, widened (see the module docs), in graph order; `None` when no node is
/// in it. Cached per path: a module's children and its repeated calls ask again.
fn widened(ctx: &Ctx, path: &str) -> Option<Rc<Vec<usize>>> {
    if let Some(v) = ctx.widened.borrow().get(path) {
        return v.clone();
    }
    let v = widen(ctx, path).map(Rc::new);
    ctx.widened.borrow_mut().insert(path.to_string(), v.clone());
    v
}

fn widen(ctx: &Ctx, path: &str) -> Option<Vec<usize>> {
    let nodes = &ctx.graph.nodes;
    let mut ext = ctx.nodes_within(path);
    let first = *ext.first()?;
    let above = |i: usize| {
        let m = ctx.module(i);
        m != path && within(path, m)
    };
    // The residual add after a block: in an ancestor, right after one of the module's nodes, it
    // adds one of the module's values to a value made after the module began (a decoder
    // layer's residual is its attention's sum; an MLP's residual was made before the MLP
    // began, so the MLP does not take it).
    let mut j = 0;
    while j < ext.len() {
        let i = ext[j] + 1;
        j += 1;
        if i >= nodes.len() || ext.get(j) == Some(&i) {
            continue;
        }
        let n = &nodes[i];
        if n.op != OpKind::CallFunction || !above(i) {
            continue;
        }
        let has = |d: &usize| ext.binary_search(d).is_ok();
        let from_it = n.inputs.iter().any(has);
        let residual = n.inputs.iter().any(|d| !has(d) && *d > first);
        if from_it && residual {
            // Sorted still: everything after position j is past i.
            ext.insert(j, i);
        }
    }
    Some(ext)
}

/// A leaf module with no node of its own (torch's `SiLU` has no source line: its node sits in
/// the caller's module): the node of its class's op, of the output's type, in the nearest
/// ancestor that has nodes, counted among the calls of that class there.
fn by_class(ctx: &Ctx, calls: &Calls, c: &Call, outs: &[&MsprobeTensor], l: &mut Link) {
    let shown = if c.path.is_empty() { "(root)" } else { c.path };
    let mut anc = c.path;
    let ext = loop {
        let Some((p, _)) = anc.rsplit_once('.') else {
            break widened(ctx, "");
        };
        anc = p;
        if let Some(e) = widened(ctx, anc) {
            break Some(e);
        }
    };
    let (Some(ext), Some(t)) = (ext, outs.first()) else {
        l.reason = format!("no node of this graph is in module {shown}");
        return;
    };
    let ops = super::api::class_ops(c.class);
    let cands: Vec<usize> = ext
        .iter()
        .copied()
        .filter(|&i| ops.matches(&ctx.node(i).target) && same_type(ctx.ty(i), RecTy::of(t)))
        .collect();
    let k = calls.class_rank.get(c.entry).copied().unwrap_or(0) as usize;
    let Some(&i) = cands.get(k) else {
        l.reason = format!(
            "no node of this graph is in module {shown}, and no {} of its output's {} in {}",
            ops.shown(),
            describe(t),
            if anc.is_empty() { "(root)" } else { anc }
        );
        return;
    };
    let name = ctx.node(i).name.clone();
    l.outputs = smallvec::smallvec![(t.slot.clone(), name.clone())];
    l.node = Some(name);
    l.holder = Some(i);
    l.same_op = true;
    l.confidence = Confidence::Medium;
    l.reason = format!(
        "{} has no node of its own: its class's {} with the output's {} in {}",
        shown,
        ops.shown(),
        describe(t),
        if anc.is_empty() { "(root)" } else { anc }
    );
}
