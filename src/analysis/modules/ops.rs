//! What a node is: a computation, a `getitem`, which aten op.

use crate::model::fx::{FxGraph, FxNode, OpKind};

/// Users that compute (the output node lists the values a forward saves for the backward).
pub fn compute_users(g: &FxGraph, i: usize) -> impl Iterator<Item = usize> + '_ {
    g.nodes[i]
        .users
        .iter()
        .copied()
        .filter(|&u| g.nodes[u].op != OpKind::Output)
}

pub fn is_compute(n: &FxNode) -> bool {
    matches!(
        n.op,
        OpKind::CallFunction | OpKind::CallMethod | OpKind::CallModule
    )
}

pub fn is_getitem(n: &FxNode) -> bool {
    &*n.target == "operator.getitem" || &*n.target == "getitem"
}

pub fn op_name(n: &FxNode) -> &str {
    let t = n
        .target
        .strip_prefix("torch.ops.aten.")
        .unwrap_or(&n.target);
    t.split('.').next().unwrap_or(t)
}
