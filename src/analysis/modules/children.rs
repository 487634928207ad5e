//! Children a line calls that no weight of their own names: a module whose weight is tied to
//! another's (`self.lm_head(x)` reading the embedding's weight), and a module without weights
//! (`self.dropout(x)`, `self.act(x)`). torch's own modules print no line of their own, so their
//! nodes sit under the caller's line.

use super::code::{called_names, whole_call};
use super::frames::{frame_of_anchor, is_index, names};
use super::ops::{is_getitem, op_name};
use super::paths::{ModId, Paths, ROOT};
use super::statements::Stmt;
use crate::model::fx::FxGraph;
use rustc_hash::FxHashMap as HashMap;

/// Tied weights: Dynamo names a weight after the first module that reads it, so
/// `logits = self.lm_head(x)` reads "the embedding's" weight. Nodes whose weight the line does
/// not name are the one child it calls that no weight names. That child is under the
/// statement's frame when other weights on the line say where it runs, else under the root (the
/// tied module is the model's output head).
pub fn tied_children(
    g: &FxGraph,
    s: &Stmt<'_>,
    f: ModId,
    attrs: Option<&HashMap<ModId, Vec<String>>>,
    named: &[(String, Vec<ModId>)],
    anchor: &mut [Option<ModId>],
    paths: &mut Paths,
) -> Option<ModId> {
    let code = &s.loc.code;
    let foreign: Vec<usize> = s
        .nodes
        .iter()
        .copied()
        .filter(|&i| anchor[i].is_some_and(|a| frame_of_anchor(a, s.loc, attrs, paths).is_none()))
        .collect();
    if foreign.is_empty() {
        return None;
    }
    // A weight-only node (`t(w)`) feeding a module the line names is that module's: the other
    // weights of the same call (its bias) say whose.
    for &i in &foreign {
        let users: Vec<Option<ModId>> = g.nodes[i].users.iter().map(|&u| anchor[u]).collect();
        if let Some(Some(m)) = users.first()
            && users.iter().all(|u| *u == Some(*m))
            && names(code, *m, paths)
        {
            anchor[i] = Some(*m);
        }
    }
    let unknown: Vec<&str> = called_names(code)
        .into_iter()
        .filter(|y| !named.iter().any(|(n, _)| n == y))
        .collect();
    let [y] = unknown[..] else { return None };
    let parent = if s.anchored.is_some() { f } else { ROOT };
    let child = paths.child(parent, y);
    for i in foreign {
        if anchor[i].is_some_and(|a| frame_of_anchor(a, s.loc, attrs, paths).is_none()) {
            anchor[i] = Some(child);
        }
    }
    Some(child)
}

/// A child without weights: when the whole line is its call (`x = self.dropout(x)`), every
/// node under the line that no weight placed is the child's; when the line calls it among other
/// things (`x = x + self.dropout(y)`), the nodes that do what such modules do (dropout, an
/// activation) are. Returns the child of a whole-line call.
pub fn weightless_children(
    g: &FxGraph,
    s: &Stmt<'_>,
    f: ModId,
    anchor: &[Option<ModId>],
    named: &[(String, Vec<ModId>)],
    sub: &mut [Option<ModId>],
    paths: &mut Paths,
) -> Option<ModId> {
    let code = &s.loc.code;
    let known = |y: &str| named.iter().any(|(n, _)| n == y);
    if let Some(y) = whole_call(code) {
        if known(y) {
            return None;
        }
        let m = paths.child(f, y);
        place_call(g, s, m, true, anchor, sub);
        return Some(m);
    }
    let unknown: Vec<&str> = called_names(code)
        .into_iter()
        .filter(|y| !known(y))
        .collect();
    let [y] = unknown[..] else { return None };
    let m = paths.child(f, y);
    place_call(g, s, m, false, anchor, sub);
    None
}

/// The child a whole-line call ran, from the weights its nodes read (`x = self.wte(ids)`).
pub fn called_child(s: &Stmt<'_>, anchor: &[Option<ModId>], paths: &Paths) -> Option<ModId> {
    let y = whole_call(&s.loc.code)?;
    s.nodes.iter().find_map(|&i| {
        anchor[i].filter(|&a| {
            let name = paths.name(a);
            name == y || (is_index(name) && paths.name(paths.parent(a)) == y)
        })
    })
}

/// Places a child call's nodes: all that no weight placed (`whole`), else what weightless
/// modules do.
pub fn place_call(
    g: &FxGraph,
    s: &Stmt<'_>,
    child: ModId,
    whole: bool,
    anchor: &[Option<ModId>],
    sub: &mut [Option<ModId>],
) {
    for &i in &s.nodes {
        if anchor[i].is_none() && sub[i].is_none() && (whole || is_module_op(g, i)) {
            sub[i] = Some(child);
        }
    }
}

/// What a weightless torch module does: dropout and activations, their gradients, and the
/// outputs taken from them.
fn is_module_op(g: &FxGraph, i: usize) -> bool {
    let node = &g.nodes[i];
    if is_getitem(node) || op_name(node) == "detach" {
        return node.inputs.first().is_some_and(|&j| is_module_op(g, j));
    }
    let op = op_name(node);
    let op = op.strip_suffix("_backward").unwrap_or(op);
    matches!(
        op,
        "native_dropout"
            | "dropout"
            | "bernoulli"
            | "relu"
            | "threshold"
            | "gelu"
            | "silu"
            | "sigmoid"
            | "tanh"
            | "hardtanh"
            | "leaky_relu"
            | "elu"
            | "mish"
            | "hardswish"
            | "hardsigmoid"
            | "softplus"
    )
}
