//! The module a call runs in, from the statement before it: a forward graph runs in call order.

use super::evidence::Evidence;
use super::paths::{ModId, Paths, ROOT};
use super::runs::{is_helper, is_return};
use super::statements::Stmt;
use crate::model::fx::FxGraph;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// What the statement before says about the module a statement's call runs in.
pub struct Calls<'a> {
    pub graph: &'a FxGraph,
    pub stmts: &'a [Stmt<'a>],
    pub run: &'a [usize],
    pub first_of_run: &'a HashMap<usize, usize>,
    /// The modules of what the statement's run reads from outside the run.
    pub reads: &'a [ModId],
    /// Modules with a known module inside them (not a leaf).
    pub inner: &'a HashSet<ModId>,
    /// Per run: its frame from weights.
    pub run_anchor: &'a HashMap<usize, ModId>,
}

/// The module a call made from the statement before runs in (a forward graph runs in call
/// order): that statement's frame, with whether the statement's line can be read as that
/// module's own code (see `LineFrames::own`). The previous call has returned, and its parent
/// is meant, when:
/// - its statement was its `forward`'s `return`;
/// - it ran in a module with weights and no known module inside (a `Conv1D`'s own `forward`):
///   such a module calls no other;
/// - this is a helper that reads what the previous call's caller made (the `q` that
///   `apply_rotary_pos_emb(q, k, cos, sin)` takes beside the rotary module's `cos`, after
///   `return (self.cos[:n], self.sin[:n])` over several lines, which does not say `return`).
///
/// A module's `forward` whose only line sits inside one line of its caller
/// (`self.act_fn(self.gate_proj(x)) * self.up_proj(x)`) is the child that line calls, when it
/// calls one no weight names. So is code of another function that takes what such a line made
/// (`self.gelu_impl(self.dense_h_to_4h(x))`: the activation's `forward`, or the helper it runs,
/// after the projection's nodes).
pub fn caller_frame(
    c: &Calls<'_>,
    si: usize,
    named: &[(String, Vec<ModId>)],
    paths: &mut Paths,
) -> Option<(ModId, bool)> {
    let stmts = c.stmts;
    let p = stmts.get(si.checked_sub(1)?)?;
    let me = stmts[si].loc;
    if p.loc.backward_of || me.backward_of {
        return None;
    }
    let f = p.frame?.0;
    let returned = is_return(p.loc) && !is_helper(p.loc);
    let leaf = c.run_anchor.get(&c.run[si - 1]) == Some(&f) && f != ROOT && !c.inner.contains(&f);
    if returned || leaf {
        return Some((paths.parent(f), true));
    }
    if is_helper(me)
        && let Some(&r0) = c.first_of_run.get(&c.run[si - 1])
        && let Some(y) = r0.checked_sub(1).and_then(|q| stmts[q].frame)
        && y.0 != f
        && paths.within(f, y.0)
        && c.reads
            .iter()
            .any(|&m| paths.within(m, y.0) && !paths.within(m, f))
    {
        return Some((y.0, false));
    }
    let around = stmts.get(si + 1).is_some_and(|n| n.loc == p.loc) && !is_helper(me);
    let elsewhere = me.function != p.loc.function || me.file != p.loc.file;
    let takes = || {
        stmts[si]
            .nodes
            .iter()
            .any(|&i| c.graph.nodes[i].inputs.iter().any(|j| p.nodes.contains(j)))
    };
    if around || (p.own && elsewhere && takes()) {
        let unknown: Vec<&str> = super::code::called_names(&p.loc.code)
            .into_iter()
            .filter(|y| !named.iter().any(|(n, _)| n == y))
            .collect();
        if let [y] = unknown[..] {
            return Some((paths.child(f, y), false));
        }
    }
    Some((f, false))
}

/// Modules with a known module (one whose weights the graph reads) inside them.
pub fn inner_modules(anchor: &[Option<ModId>], ev: &Evidence<'_>, paths: &Paths) -> HashSet<ModId> {
    let mut out = HashSet::default();
    for &m in anchor.iter().flatten().chain(ev.params.values()) {
        let mut p = m;
        while p != ROOT {
            p = paths.parent(p);
            if !out.insert(p) {
                break;
            }
        }
    }
    out
}
