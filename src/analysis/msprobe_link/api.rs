//! An API call's entry (`Aten.add.Tensor.3.forward`, `Functional.linear.0.forward`) → the node
//! of that op.

use super::module_call::chunk;
use super::{Ctx, Link, within};
use crate::analysis::modules::Confidence;
use crate::model::tensor::{MsprobeCall, MsprobeStep};
use std::collections::HashMap;

/// The module entry the dump was in at a call, and which call of that module it was.
#[derive(Clone, Copy)]
pub(super) struct Inside<'a> {
    pub path: &'a str,
    pub calls: u32,
    pub call: u32,
}

/// For each API entry: its index among the calls of the same API inside the same module entry.
pub(super) struct Calls {
    in_module: HashMap<usize, u32>,
}

impl Calls {
    pub(super) fn of(step: &MsprobeStep, backward: bool) -> Calls {
        let mut seen: HashMap<(Option<usize>, &str, &str), u32> = HashMap::new();
        let mut inside = None;
        let mut in_module = HashMap::new();
        for (i, e) in step.entries.iter().enumerate() {
            match &e.call {
                Some(MsprobeCall::Module { backward: b, .. }) if *b == backward => inside = Some(i),
                Some(MsprobeCall::Api {
                    prefix,
                    op,
                    backward: b,
                    ..
                }) if *b == backward => {
                    let k = seen.entry((inside, prefix, op)).or_default();
                    in_module.insert(i, *k);
                    *k += 1;
                }
                _ => {}
            }
        }
        Calls { in_module }
    }
}

/// Which targets an API call runs as.
pub(super) struct Ops {
    /// `aten.add.Tensor`: one overload.
    exact: Option<String>,
    /// `aten.<base>.*` / `npu.<base>.*`.
    bases: Vec<String>,
    /// `aten.add.Tensor`, `aten.{addmm,mm}`: for reasons.
    shown: String,
}

fn ops(prefix: &str, op: &str) -> Ops {
    let ns = if prefix == "NPU" { "npu" } else { "aten" };
    if matches!(prefix, "Aten" | "NPU") {
        return if op.contains('.') {
            Ops {
                exact: Some(format!("{ns}.{op}")),
                bases: Vec::new(),
                shown: format!("{ns}.{op}"),
            }
        } else {
            Ops {
                exact: None,
                bases: vec![op.to_string()],
                shown: format!("{ns}.{op}"),
            }
        };
    }
    // `Tensor.__add__` is `add`; a functional is its anchor ops after decomposition.
    let base = op.trim_start_matches("__").trim_end_matches("__");
    let bases: Vec<String> = match base {
        "linear" => vec!["addmm", "mm"],
        "matmul" => vec!["mm", "bmm"],
        "softmax" => vec!["_softmax"],
        "log_softmax" => vec!["_log_softmax"],
        "layer_norm" => vec!["native_layer_norm"],
        "dropout" => vec!["native_dropout"],
        "to" | "type" | "type_as" | "float" | "half" | "bfloat16" => vec!["_to_copy"],
        "contiguous" => vec!["clone"],
        "view" | "reshape" => vec!["view", "reshape", "_unsafe_view"],
        "truediv" => vec!["div"],
        "scaled_dot_product_attention" => vec![
            "_scaled_dot_product_flash_attention",
            "_scaled_dot_product_efficient_attention",
            "_scaled_dot_product_attention_math",
        ],
        b => vec![b],
    }
    .into_iter()
    .map(str::to_string)
    .collect();
    Ops {
        exact: None,
        shown: format!("aten.{{{}}}", bases.join(",")),
        bases,
    }
}

/// The ops a module class runs as (`SiLU` → `aten.silu`, `Linear` → `aten.addmm|mm`).
pub(super) fn class_ops(class: &str) -> Ops {
    let lower = class.to_ascii_lowercase();
    let op = match lower.as_str() {
        "layernorm" => "layer_norm",
        "logsoftmax" => "log_softmax",
        other => other,
    };
    ops("Functional", op)
}

impl Ops {
    pub(super) fn shown(&self) -> &str {
        &self.shown
    }

    pub(super) fn matches(&self, target: &str) -> bool {
        let t = target.strip_prefix("torch.ops.").unwrap_or(target);
        if let Some(e) = &self.exact {
            return t == e;
        }
        let mut parts = t.split('.');
        let (Some(ns), Some(base)) = (parts.next(), parts.next()) else {
            return false;
        };
        matches!(ns, "aten" | "npu") && self.bases.iter().any(|b| b == base)
    }
}

/// Node module `m` and the dump's module `path` are on one branch (one holds the other).
fn related(m: &str, path: &str) -> bool {
    within(m, path) || within(path, m)
}

#[allow(clippy::too_many_arguments)]
pub(super) fn link(
    ctx: &Ctx,
    prefix: &str,
    op: &str,
    n: u32,
    at: Option<Inside>,
    calls: &Calls,
    entry: usize,
    l: &mut Link,
) {
    let want = ops(prefix, op);
    let nodes = &ctx.graph.nodes;
    let cands = ctx.matching(&format!("{prefix}.{op}"), |t| want.matches(t));
    if cands.is_empty() {
        l.reason = format!("no {} node in this graph", want.shown);
        return;
    }
    let set = |l: &mut Link, i: usize, c: Confidence, reason: String| {
        l.node = Some(nodes[i].name.clone());
        l.outputs = vec![("output.0".to_string(), nodes[i].name.clone())];
        l.same_op = true;
        l.confidence = c;
        l.reason = reason;
    };
    if matches!(prefix, "Aten" | "NPU") {
        let Some(&i) = cands.get(n as usize) else {
            l.reason = format!(
                "call {} of {} but the graph has {}",
                n + 1,
                want.shown,
                cands.len()
            );
            return;
        };
        let m = ctx.module(i);
        match at.filter(|a| related(m, a.path)) {
            Some(a) => set(
                l,
                i,
                Confidence::High,
                format!(
                    "call {} of {} in execution order, in module {}",
                    n + 1,
                    want.shown,
                    shown(a.path)
                ),
            ),
            None => set(
                l,
                i,
                Confidence::Medium,
                format!("call {} of {} in execution order", n + 1, want.shown),
            ),
        }
        return;
    }
    if let Some(a) = at {
        let here: Vec<usize> = cands
            .iter()
            .copied()
            .filter(|&i| related(ctx.module(i), a.path))
            .collect();
        let k = calls.in_module.get(&entry).copied().unwrap_or(0);
        if let Some(&i) = chunk(&here, a.calls, a.call).get(k as usize) {
            return set(
                l,
                i,
                Confidence::Medium,
                format!(
                    "{} decomposed: call {} of {} in module {}",
                    op,
                    k + 1,
                    want.shown,
                    shown(a.path)
                ),
            );
        }
    }
    match cands.get(n as usize) {
        Some(&i) => set(
            l,
            i,
            Confidence::Low,
            format!(
                "{op} decomposed: call {} of {} over the graph (none in its module)",
                n + 1,
                want.shown
            ),
        ),
        None => {
            l.reason = format!(
                "call {} of {} but the graph has {}",
                n + 1,
                want.shown,
                cands.len()
            )
        }
    }
}

fn shown(path: &str) -> &str {
    if path.is_empty() { "(root)" } else { path }
}
