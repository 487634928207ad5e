//! Where a graph's nodes meet the model's weights: placeholders that are parameters or saved
//! activations, and the nodes that consume a module's weights (its *anchors*).

use super::Confidence;
use super::evidence::{Evidence, push_unique};
use super::frames::names;
use super::ops::{compute_users, is_compute, is_getitem, op_name};
use super::paths::{ModId, Paths, ROOT};
use crate::model::fx::{FxGraph, FxNode, OpKind};

pub struct Seeds {
    /// Nodes computed from one module's weights only (`t(w)`).
    pub wd: Vec<Option<ModId>>,
    pub out: Vec<Option<(ModId, Confidence)>>,
    /// The module a node's value speaks for (a saved activation's, an anchor's).
    pub context: Vec<Option<ModId>>,
    pub anchor: Vec<Option<ModId>>,
}

/// Seeds (placeholders that are weights or saved activations, `get_attr` of a submodule's
/// tensor) and anchors (a node that consumes a module's weights is that module's).
pub fn seed(g: &FxGraph, ev: &Evidence<'_>, paths: &mut Paths) -> Seeds {
    let n = g.nodes.len();
    let mut wd: Vec<Option<ModId>> = vec![None; n];
    let mut out: Vec<Option<(ModId, Confidence)>> = vec![None; n];
    let mut context: Vec<Option<ModId>> = vec![None; n];
    let mut saved_matmul: Vec<Option<ModId>> = vec![None; n];

    // Seeds: placeholders that are weights, saved activations, get_attr of a submodule's tensor.
    for (i, node) in g.nodes.iter().enumerate() {
        match node.op {
            OpKind::Placeholder => {
                if let Some(&m) = ev.params.get(&i) {
                    out[i] = Some((m, Confidence::High));
                    wd[i] = Some(m);
                } else if let Some(s) = ev.by_name.and_then(|b| b.get(node.name.as_str())) {
                    out[i] = Some((s.module, Confidence::Medium));
                    context[i] = Some(s.module);
                    if s.weight {
                        wd[i] = Some(s.module);
                    }
                    if s.matmul {
                        saved_matmul[i] = Some(s.module);
                    }
                }
            }
            OpKind::GetAttr => {
                if let Some(at) = node.target.rfind('.') {
                    let m = paths.intern(&node.target[..at]);
                    out[i] = Some((m, Confidence::High));
                    wd[i] = Some(m);
                }
            }
            _ => {}
        }
    }

    // Anchors: a node that consumes a module's weights is that module's.
    let mut anchor: Vec<Option<ModId>> = vec![None; n];
    for (i, node) in g.nodes.iter().enumerate() {
        if !is_compute(node) {
            continue;
        }
        let mut mods: Vec<ModId> = Vec::new();
        let mut all_weight = !node.inputs.is_empty();
        for &j in &node.inputs {
            match wd[j] {
                // A weight read directly, or derived in the same statement; a value derived
                // elsewhere (a root buffer sliced once and used by every layer) only says
                // where it came from.
                // The root's own buffers (rotary tables, a positional embedding) are read
                // inside every layer: they say nothing about where a node is.
                Some(m) if m != ROOT && reads_weight_here(node, &g.nodes[j]) => {
                    push_unique(&mut mods, m);
                }
                _ => all_weight = false,
            }
        }
        if is_getitem(node)
            && let Some(&j) = node.inputs.first()
            && anchor[j].is_some()
        {
            anchor[i] = anchor[j];
            continue;
        }
        // Of two modules' weights (a tied weight and the bias of the module that uses it), the
        // one the line names.
        let code = node.source.as_ref().map_or("", |l| l.code.as_str());
        let deepest = |it: &mut dyn Iterator<Item = ModId>| it.max_by_key(|&m| paths.depth(m));
        let Some(m) = deepest(&mut mods.iter().copied().filter(|&m| names(code, m, paths)))
            .or_else(|| deepest(&mut mods.iter().copied()))
        else {
            continue;
        };
        anchor[i] = Some(m);
        if all_weight && mods.len() == 1 {
            wd[i] = Some(m);
        }
    }
    extend_linear(g, &mut anchor, &saved_matmul);
    extend_norm(g, &mut anchor);
    Seeds {
        wd,
        out,
        context,
        anchor,
    }
}

fn reads_weight_here(node: &FxNode, input: &FxNode) -> bool {
    matches!(input.op, OpKind::Placeholder | OpKind::GetAttr)
        || node.source.is_none()
        || node.source == input.source
}

/// A norm that a decomposition table split (`native_layer_norm` into `var_mean`, `rsqrt`,
/// `sub`, `mul`, …) reads its weight only at the end (`mul(x̂, w)`, `add(…, b)`): the nodes
/// under the same line that feed only the norm's are the norm's too. They are a norm's
/// arithmetic (statistics, scalar shifts, products, casts), not a tensor sum: the residual in
/// `self.norm(x + residual)` is the caller's.
fn extend_norm(g: &FxGraph, anchor: &mut [Option<ModId>]) {
    let mut walked = vec![false; g.nodes.len()];
    for i in (0..g.nodes.len()).rev() {
        let node = &g.nodes[i];
        if anchor[i].is_some() || !is_compute(node) || node.source.is_none() || !is_norm_step(g, i)
        {
            continue;
        }
        let mut agreed: Option<ModId> = None;
        let mut ok = true;
        for u in compute_users(g, i) {
            // A value kept only for the backward (`div(rsqrt, 32)` before the output) speaks
            // for nothing here.
            if compute_users(g, u).next().is_none() && !walked[u] && anchor[u].is_none() {
                continue;
            }
            let un = &g.nodes[u];
            let from_weight = !walked[u] && matches!(op_name(un), "mul" | "add" | "sub" | "div");
            match anchor[u] {
                Some(m) if un.source == node.source && (walked[u] || from_weight) => {
                    if agreed.is_some_and(|a| a != m) {
                        ok = false;
                    }
                    agreed = Some(m);
                }
                // Two norms of one input (a parallel residual's `ln1(x)` and `ln2(x)`) share
                // their statistics once common subexpressions are merged: the first norm's
                // line keeps them, as torch keeps the first node's module, and the second
                // norm's weight reads them from its own line.
                Some(_) if un.source.is_some() && un.source != node.source && from_weight => {}
                _ => ok = false,
            }
        }
        if ok && let Some(m) = agreed {
            anchor[i] = Some(m);
            walked[i] = true;
        }
    }
}

fn is_norm_step(g: &FxGraph, i: usize) -> bool {
    let node = &g.nodes[i];
    if is_getitem(node) {
        return true;
    }
    match op_name(node) {
        "var_mean"
        | "var"
        | "mean"
        | "rsqrt"
        | "sqrt"
        | "reciprocal"
        | "pow"
        | "sub"
        | "mul"
        | "div"
        | "_to_copy"
        | "convert_element_type"
        | "squeeze"
        | "unsqueeze" => true,
        // `x + eps`, not `x + residual`.
        "add" => {
            node.inputs
                .iter()
                .filter(|&&j| is_compute(&g.nodes[j]))
                .count()
                <= 1
        }
        _ => false,
    }
}

/// `F.linear` decomposes into `view(x)`, `mm`/`addmm`, and a view back to `x`'s leading dims
/// (`_unsafe_view`, or a plain `view` through a decomposition table): the flattening view whose
/// only user is the weight's matmul, and the view back after it, belong to the same module. A
/// user's own `.view` after the call reads the Linear's 3-D output, not the 2-D product, and
/// belongs to the caller. A backward that recomputes the view back from the saved product
/// (`_unsafe_view(mm, [2, 8, 32])`, `mm` a placeholder) recomputes the Linear's node.
fn extend_linear(g: &FxGraph, anchor: &mut [Option<ModId>], saved_matmul: &[Option<ModId>]) {
    for i in 0..g.nodes.len() {
        let node = &g.nodes[i];
        let m = if let Some(m) = saved_matmul[i] {
            m
        } else if let Some(m) = anchor[i]
            && matches!(op_name(node), "mm" | "addmm" | "bmm" | "baddbmm")
        {
            m
        } else {
            continue;
        };
        for &j in &node.inputs {
            let inp = &g.nodes[j];
            // The flattened input of q, k and v projections is one `view` with three users:
            // it was made by the first.
            if anchor[j].is_none()
                && matches!(op_name(inp), "view" | "reshape" | "_unsafe_view")
                && inp.source == node.source
                && compute_users(g, j).next() == Some(i)
                && compute_users(g, j)
                    .all(|u| matches!(op_name(&g.nodes[u]), "mm" | "addmm" | "bmm" | "baddbmm"))
            {
                anchor[j] = Some(m);
            }
        }
        let users: Vec<usize> = compute_users(g, i).collect();
        for &u in &users {
            let op = op_name(&g.nodes[u]);
            let back = (op == "_unsafe_view" && (users.len() == 1 || saved_matmul[i].is_some()))
                || (matches!(op, "view" | "reshape" | "_unsafe_view") && unflattens(g, i, u));
            if anchor[u].is_none() && back {
                anchor[u] = Some(m);
            }
        }
    }
}

/// `u` views the 2-D product `i` back to more dims, keeping its columns (`[16, 96]` →
/// `[2, 8, 96]`): what `F.linear` does after its matmul.
fn unflattens(g: &FxGraph, i: usize, u: usize) -> bool {
    let (Some(a), Some(b)) = (g.nodes[i].tensor(), g.nodes[u].tensor()) else {
        return false;
    };
    g.nodes[u].inputs.len() == 1
        && a.shape.len() == 2
        && b.shape.len() > 2
        && a.shape.last() == b.shape.last()
}
