//! A backward graph's own evidence: which child module's call a gradient belongs to, and the
//! gradients it returns for the parameters.

use super::ops::{compute_users, is_compute, op_name};
use super::paths::{ModId, Paths};
use super::statements::Stmt;
use crate::model::fx::{Arg, FxGraph, FxNode, OpKind};

/// A backward returns the gradient of every forward input in order (output `k` is the gradient
/// of `primals_{k+1}`, `None` where there is none): `grad_of[k]` is the module owning forward
/// input `k`, when it is a parameter. The node returned for it, and the nodes that compute only
/// that gradient (`t(mm(t(grad), x))`, a bias's `sum` and `view`), are that module's. An `add` of
/// two gradients sums the shares of a tied weight: each addend stays its own module's.
pub fn weight_gradients(g: &FxGraph, grad_of: &[Option<ModId>]) -> Vec<Option<ModId>> {
    let n = g.nodes.len();
    let mut out = vec![None; n];
    let Some(output) = g.nodes.iter().rev().find(|n| n.op == OpKind::Output) else {
        return out;
    };
    let items = match output.args.first() {
        Some(Arg::Tuple(v) | Arg::List(v)) => v,
        _ => return out,
    };
    // Another layout (a graph that returns more than the gradients) says nothing.
    if items.len() != grad_of.len() {
        return out;
    }
    for (item, m) in items.iter().zip(grad_of) {
        if let (Arg::Node(name), Some(m)) = (item, m)
            && let Some(j) = g.by_name.get(name)
            && is_compute(&g.nodes[j])
        {
            out[j] = Some(*m);
        }
    }
    for i in (0..n).rev() {
        if out[i].is_some() || !is_compute(&g.nodes[i]) {
            continue;
        }
        let mut users = compute_users(g, i).peekable();
        if users.peek().is_none() {
            continue;
        }
        let mut agreed: Option<ModId> = None;
        let mut ok = true;
        for u in users {
            // The gradient's own line: a sum that undoes a broadcast on another line is that
            // line's.
            let same_line = g.nodes[u].source == g.nodes[i].source;
            match (out[u], agreed) {
                (Some(m), None) if same_line && !is_accumulation(g, u) => agreed = Some(m),
                (Some(m), Some(a)) if m == a && same_line && !is_accumulation(g, u) => {}
                _ => ok = false,
            }
        }
        if ok {
            out[i] = agreed;
        }
    }
    out
}

fn is_accumulation(g: &FxGraph, i: usize) -> bool {
    op_name(&g.nodes[i]) == "add"
        && g.nodes[i]
            .inputs
            .iter()
            .filter(|&&j| is_compute(&g.nodes[j]))
            .count()
            >= 2
}

/// In a backward statement of frame `f`, the gradient of a child module's call (`self.q_proj(x)`
/// in `f`'s code) is that child's: the nodes that read its saved activations (the flattened
/// input a weight gradient multiplies with), the layout ops and sums fed only by those (the
/// gradient's reshapes, a bias gradient), and the transposes and fan-outs whose every user is
/// the child's (the incoming gradient flattened once for both matmuls).
pub fn backward_children(
    g: &FxGraph,
    s: &Stmt,
    f: ModId,
    anchor: &[Option<ModId>],
    context: &[Option<ModId>],
    sub: &mut [Option<ModId>],
    paths: &Paths,
) {
    let inside = |m: ModId| m != f && paths.within(m, f);
    let label = |sub: &[Option<ModId>], i: usize| anchor[i].or(sub[i]).filter(|&m| inside(m));
    // A weight gradient `mm(t(grad), saved_input)` reads the child's saved input. (Not a
    // frame-level product that reads a child's output, like the gate times an expert.)
    for &i in &s.nodes {
        if anchor[i].is_some() || !matches!(op_name(&g.nodes[i]), "mm" | "bmm") {
            continue;
        }
        sub[i] = g.nodes[i].inputs.iter().find_map(|&j| {
            (g.nodes[j].op == OpKind::Placeholder)
                .then_some(context[j])
                .flatten()
                .filter(|&m| inside(m))
        });
    }
    for _round in 0..2 {
        // The incoming gradient flattened once for both matmuls (and the bias sum): its
        // labelled users agree.
        for &i in s.nodes.iter().rev() {
            if anchor[i].is_some() || sub[i].is_some() {
                continue;
            }
            let users: Vec<usize> = compute_users(g, i).collect();
            let node = &g.nodes[i];
            let transpose = matches!(op_name(node), "t" | "transpose" | "permute");
            let flatten = matches!(op_name(node), "view" | "_unsafe_view" | "reshape");
            if users.is_empty() || !(transpose || (flatten && users.len() >= 2)) {
                continue;
            }
            let labels: Vec<Option<ModId>> = users
                .iter()
                .map(|&u| {
                    if s.nodes.contains(&u) {
                        label(sub, u)
                    } else {
                        None
                    }
                })
                .collect();
            let first = labels.iter().flatten().next().copied();
            let agree = labels.iter().flatten().all(|&m| Some(m) == first);
            let all = labels.iter().all(Option::is_some);
            if first.is_some() && agree && (all || flatten) {
                sub[i] = first;
            }
        }
        // Reshapes, transposes and sums fed only by the child's nodes.
        for &i in &s.nodes {
            if anchor[i].is_some() || sub[i].is_some() || !is_layout_or_sum(&g.nodes[i]) {
                continue;
            }
            let mut agreed: Option<ModId> = None;
            let mut ok = true;
            for &j in &g.nodes[i].inputs {
                if !s.nodes.contains(&j) {
                    continue;
                }
                // A forward view recomputed from a saved activation (a Linear's output viewed
                // back from its saved product) is the child's output: what reads it is the
                // caller's code going on, not the child's gradient.
                let recomputed =
                    matches!(op_name(&g.nodes[j]), "view" | "_unsafe_view" | "reshape")
                        && g.nodes[j]
                            .inputs
                            .iter()
                            .all(|&k| g.nodes[k].op == OpKind::Placeholder && context[k].is_some());
                if recomputed {
                    ok = false;
                    continue;
                }
                match (label(sub, j), agreed) {
                    (Some(m), None) => agreed = Some(m),
                    (Some(m), Some(a)) if m == a => {}
                    _ => ok = false,
                }
            }
            if ok {
                sub[i] = agreed;
            }
        }
    }
}

fn is_layout_or_sum(n: &FxNode) -> bool {
    matches!(
        op_name(n),
        "view"
            | "_unsafe_view"
            | "reshape"
            | "t"
            | "transpose"
            | "permute"
            | "sum"
            | "squeeze"
            | "unsqueeze"
            | "clone"
            | "mm"
            | "bmm"
    )
}
