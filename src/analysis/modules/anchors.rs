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

    // Seeds: placeholders that are weights, saved activations, get_attr of a submodule's tensor.
    for (i, node) in g.nodes.iter().enumerate() {
        match node.op {
            OpKind::Placeholder => {
                if let Some(&m) = ev.params.get(&i) {
                    out[i] = Some((m, Confidence::High));
                    wd[i] = Some(m);
                } else if let Some(&(m, w)) = ev.by_name.and_then(|b| b.get(&node.name)) {
                    out[i] = Some((m, Confidence::Medium));
                    context[i] = Some(m);
                    if w {
                        wd[i] = Some(m);
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
    extend_linear(g, &mut anchor);
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

/// `F.linear` decomposes into `view(x)`, `mm`/`addmm`, `_unsafe_view`: the flattening view whose
/// only user is the weight's matmul, and the `_unsafe_view` after it, belong to the same module
/// (a user's own `.view` after the call is a plain `view`, and belongs to the caller).
fn extend_linear(g: &FxGraph, anchor: &mut [Option<ModId>]) {
    for i in 0..g.nodes.len() {
        let Some(m) = anchor[i] else { continue };
        let node = &g.nodes[i];
        if !matches!(op_name(node), "mm" | "addmm" | "bmm" | "baddbmm") {
            continue;
        }
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
        if let [u] = users[..]
            && anchor[u].is_none()
            && op_name(&g.nodes[u]) == "_unsafe_view"
        {
            anchor[u] = Some(m);
        }
    }
}
