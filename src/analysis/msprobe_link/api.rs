//! An API call's entry (`Aten.add.Tensor.3.forward`, `Functional.linear.0.forward`) → the node
//! of that op.

use super::{Ctx, Link, RecTy, chunk, same_type, within};
use crate::analysis::modules::Confidence;
use crate::model::fx::file_name;
use crate::model::msprobe::StackFrame;
use crate::model::tensor::{MsprobeCall, MsprobeStep};
use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

/// The module entry the dump was in at a call, and which call of that module it was.
#[derive(Clone, Copy)]
pub(super) struct Inside<'a> {
    pub path: &'a str,
    pub calls: u32,
    pub call: u32,
}

/// For each API entry: its index among the calls of the same API inside the same module entry,
/// and among those made from the same source line (`stack.json`).
/// Both by entry index: dense, as nearly every entry of an API-level dump has one.
pub(super) struct Calls {
    /// The API's number (`NONE`: not an API call of this graph's direction).
    api: Vec<u32>,
    /// How many APIs were numbered.
    apis: usize,
    in_module: Vec<u32>,
    /// (k, of n): the entry is the k-th of n calls of its API from its source line.
    at_line: Vec<Option<(u32, u32)>>,
}

impl Calls {
    /// `parents`: each entry's parent module call from construct.json, where known.
    pub(super) fn of(
        step: &MsprobeStep,
        backward: bool,
        parents: &[Option<usize>],
        sources: &[Option<&StackFrame>],
    ) -> Calls {
        // APIs by a number of their own first: a step has a few hundred, and the counts keyed
        // by (module entry, API number) hash two numbers instead of two strings per call.
        let mut api_ids: HashMap<(&str, &str), u32> = HashMap::default();
        let mut seen: HashMap<(Option<usize>, u32), u32> = HashMap::default();
        let mut seen_line: HashMap<(&str, u32, u32), u32> = HashMap::default();
        let mut inside = None;
        let mut api_of = vec![NONE; step.entries.len()];
        let mut in_module = vec![0; step.entries.len()];
        let mut at_line = vec![None; step.entries.len()];
        let mut lines = Vec::new();
        for (i, e) in step.entries.iter().enumerate() {
            match &e.call {
                Some(MsprobeCall::Module { backward: b, .. }) if *b == backward => inside = Some(i),
                Some(MsprobeCall::Api {
                    prefix,
                    op,
                    backward: b,
                    ..
                }) if *b == backward => {
                    let here = parents.get(i).copied().flatten().or(inside);
                    let next = api_ids.len() as u32;
                    let api = *api_ids.entry((prefix, op)).or_insert(next);
                    api_of[i] = api;
                    let k = seen.entry((here, api)).or_default();
                    in_module[i] = *k;
                    *k += 1;
                    if let Some(f) = sources.get(i).copied().flatten() {
                        let line = (f.file.as_str(), f.line, api);
                        let k = seen_line.entry(line).or_default();
                        at_line[i] = Some((*k, 0));
                        lines.push((i, line));
                        *k += 1;
                    }
                }
                _ => {}
            }
        }
        for (i, line) in lines {
            if let Some((_, of)) = &mut at_line[i] {
                *of = seen_line[&line];
            }
        }
        Calls {
            api: api_of,
            apis: api_ids.len(),
            in_module,
            at_line,
        }
    }

    /// Entry `i`'s API, numbered from 0 to [`Calls::apis`].
    pub(super) fn api_of(&self, i: usize) -> Option<usize> {
        self.api.get(i).filter(|&&a| a != NONE).map(|&a| a as usize)
    }

    pub(super) fn apis(&self) -> usize {
        self.apis
    }
}

const NONE: u32 = u32::MAX;

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

/// The node holding the call's value: the anchor op itself, or the reshape its value goes
/// through when the op ran on flattened operands (`linear` on 3-d input is `mm` on 2-d, then
/// `_unsafe_view` back to the output's shape).
fn reshaped(ctx: &Ctx, i: usize, out: RecTy) -> usize {
    let mut at = i;
    for _ in 0..3 {
        if same_type(ctx.ty(at), out) {
            return at;
        }
        let Some(u) = ctx.view_user(at) else { break };
        at = u;
    }
    if same_type(ctx.ty(at), out) { at } else { i }
}

/// What every call of one API shares: its name, its ops and the nodes running them.
pub(super) struct Api {
    /// `Functional`, `Aten`, `NPU`, …
    prefix: String,
    op: String,
    /// `prefix.op`: the key of the caches of `Ctx`.
    key: String,
    want: Ops,
    cands: Rc<Vec<usize>>,
}

impl Api {
    pub(super) fn new(ctx: &Ctx, prefix: &str, op: &str) -> Api {
        let want = ops(prefix, op);
        let key = format!("{prefix}.{op}");
        let cands = ctx.matching(&key, |t| want.matches(t));
        Api {
            prefix: prefix.to_string(),
            op: op.to_string(),
            key,
            want,
            cands,
        }
    }
}

/// One call of an API, as the dump has it.
#[derive(Clone, Copy)]
pub(super) struct ApiCall<'a> {
    /// Its number among the API's calls (`….3.forward`: 3).
    pub n: u32,
    /// The module entry it ran in.
    pub at: Option<Inside<'a>>,
    /// Its call site.
    pub src: Option<&'a StackFrame>,
    /// Its first output's type.
    pub out0: Option<RecTy<'a>>,
    /// Its index among the step's entries.
    pub entry: usize,
}

pub(super) fn link(ctx: &Ctx, api: &Api, call: ApiCall, calls: &Calls, l: &mut Link) {
    let ApiCall {
        n,
        at,
        src,
        out0,
        entry,
    } = call;
    let (prefix, op) = (api.prefix.as_str(), api.op.as_str());
    let (want, key, cands) = (&api.want, &api.key, &api.cands);
    let nodes = &ctx.graph.nodes;
    if cands.is_empty() {
        l.reason = format!("no {} node in this graph", want.shown);
        return;
    }
    let set = |l: &mut Link, i: usize, c: Confidence, reason: String| {
        l.node = Some(nodes[i].name.clone());
        let o = out0.map_or(i, |t| reshaped(ctx, i, t));
        l.outputs = smallvec::smallvec![("output.0".into(), nodes[o].name.clone())];
        l.holder = Some(o);
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
    // The line that made the call (stack.json) is the line the graph's nodes cite: the k-th
    // call of this API from that line is the k-th such node there (a loop over layers runs it
    // once per layer).
    // In a backward graph one call's gradient may take several nodes of the op: the k-th
    // share of them, the one holding the entry's output type first.
    if let (Some(f), Some((k, of))) = (src, calls.at_line[entry]) {
        let lines = ctx.by_line(key, cands);
        let here: &[usize] = lines
            .get(&(file_name(&f.file), f.line))
            .map_or(&[], Vec::as_slice);
        let part = chunk(here, of, k);
        let typed = out0.and_then(|t| {
            part.iter()
                .copied()
                .find(|&i| same_type(ctx.ty(reshaped(ctx, i, t)), t))
        });
        let pick = if here.len() == of as usize {
            here.get(k as usize).copied()
        } else {
            typed.or(part.first().copied())
        };
        if let Some(i) = pick {
            return set(
                l,
                i,
                Confidence::High,
                format!(
                    "{op} decomposed: call {} of {} at {}",
                    k + 1,
                    want.shown,
                    f.describe()
                ),
            );
        }
    }
    if let Some(a) = at {
        let here = ctx.related(key, a.path, |t| want.matches(t));
        let k = calls.in_module[entry];
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
