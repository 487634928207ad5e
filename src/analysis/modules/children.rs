//! Children a line calls that no weight of their own names: a module whose weight is tied to
//! another's (`self.lm_head(x)` reading the embedding's weight), and a module without weights
//! (`self.dropout(x)`, `self.act(x)`). torch's own modules print no line of their own, so their
//! nodes sit under the caller's line.

use super::code::{called_names, whole_call};
use super::frames::{frame_of_anchor, names};
use super::infer::{Stmt, child_path, is_getitem, op_name};
use super::paths::{ModId, Paths, ROOT};
use crate::model::fx::FxGraph;
use std::collections::HashMap;

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
) {
    let code = &s.loc.code;
    let foreign: Vec<usize> = s
        .nodes
        .iter()
        .copied()
        .filter(|&i| anchor[i].is_some_and(|a| frame_of_anchor(a, s.loc, attrs, paths).is_none()))
        .collect();
    if foreign.is_empty() {
        return;
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
    let [y] = unknown[..] else { return };
    let parent = if s.anchored.is_some() { f } else { ROOT };
    let child = paths.intern(&child_path(paths.path(parent), y));
    for i in foreign {
        if anchor[i].is_some_and(|a| frame_of_anchor(a, s.loc, attrs, paths).is_none()) {
            anchor[i] = Some(child);
        }
    }
}

/// A child without weights: when the whole line is its call (`x = self.dropout(x)`), every
/// node under the line that no weight placed is the child's; when the line calls it among other
/// things (`x = x + self.dropout(y)`), the nodes that do what such modules do (dropout, an
/// activation) are.
pub fn weightless_children(
    g: &FxGraph,
    s: &Stmt<'_>,
    f: ModId,
    anchor: &[Option<ModId>],
    named: &[(String, Vec<ModId>)],
    sub: &mut [Option<ModId>],
    paths: &mut Paths,
) {
    let code = &s.loc.code;
    let known = |y: &str| named.iter().any(|(n, _)| n == y);
    let free = |i: usize, sub: &[Option<ModId>]| anchor[i].is_none() && sub[i].is_none();
    if let Some(y) = whole_call(code) {
        if !known(y) {
            let m = paths.intern(&child_path(paths.path(f), y));
            for &i in &s.nodes {
                if free(i, sub) {
                    sub[i] = Some(m);
                }
            }
        }
        return;
    }
    let unknown: Vec<&str> = called_names(code)
        .into_iter()
        .filter(|y| !known(y))
        .collect();
    let [y] = unknown[..] else { return };
    let m = paths.intern(&child_path(paths.path(f), y));
    for &i in &s.nodes {
        if free(i, sub) && is_module_op(g, i) {
            sub[i] = Some(m);
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
