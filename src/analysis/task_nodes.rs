//! Best-effort link from captured kernel tasks to the FX nodes of the model's final pass.
//!
//! Task names carry no FX node name (docs/formats.md §2.4), only the CANN op type
//! (`MatMulV2_<hash>_1`). We group op types and aten ops into families that compute the same
//! thing (`Mul`/`Muls` ↔ `aten.mul`), then match each family's tasks and nodes in order: the
//! k-th `Mul*` task is the k-th `aten.mul` node. When a family has as many tasks as nodes the
//! match is `High` confidence; otherwise the pairs made are `Low`.

use crate::model::fx::{FxGraph, OpKind};
use crate::model::timeline::Trace;
use serde::Serialize;
use std::collections::HashMap;

/// (CANN op types, aten/npu op names) that compute the same thing.
const FAMILIES: &[(&[&str], &[&str])] = &[
    (
        &["GatherV2", "GatherV3", "Gather"],
        &["embedding", "index_select"],
    ),
    (
        &["Cast"],
        &["_to_copy", "to", "npu_dtype_cast", "convert_element_type"],
    ),
    (&["Pows", "Pow"], &["pow"]),
    (&["ReduceMean", "ReduceMeanD"], &["mean"]),
    (&["ReduceSum", "ReduceSumD"], &["sum"]),
    (&["Add", "Adds", "AddV2"], &["add", "add_"]),
    (&["Sub", "Subs"], &["sub", "rsub"]),
    (&["Mul", "Muls"], &["mul", "mul_"]),
    (&["Div", "Divs", "RealDiv"], &["div", "div_"]),
    (&["Rsqrt"], &["rsqrt"]),
    (&["Sqrt"], &["sqrt"]),
    (&["Exp"], &["exp"]),
    (&["Neg"], &["neg"]),
    (
        &["MatMulV2", "MatMulV3", "MatMul"],
        &["mm", "addmm", "matmul", "linear"],
    ),
    (
        &["BatchMatMulV2", "BatchMatMulV3", "BatchMatMul"],
        &["bmm", "baddbmm"],
    ),
    (&["ConcatD", "ConcatV2", "Concat"], &["cat"]),
    // A transposed view made contiguous is a Transpose kernel.
    (
        &["Transpose", "TransposeD"],
        &["clone", "permute", "contiguous"],
    ),
    (&["IndexPutV2", "IndexPut"], &["index_put_", "index_put"]),
    (&["MaskedFill"], &["masked_fill"]),
    (&["SoftmaxV2", "Softmax"], &["_softmax", "softmax"]),
    (&["Swish", "Silu"], &["silu"]),
    (&["Relu"], &["relu"]),
    (&["Gelu", "GeLU"], &["gelu"]),
    (&["Sigmoid"], &["sigmoid"]),
    (&["Tanh"], &["tanh"]),
    (&["RmsNorm"], &["npu_rms_norm"]),
    (
        &["LayerNorm", "LayerNormV3", "LayerNormV4"],
        &["native_layer_norm", "layer_norm"],
    ),
    (&["ArgMaxV2"], &["argmax"]),
    (&["TopKV2", "TopK"], &["topk"]),
];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Its family has as many kernel tasks as FX nodes: order pins each pair.
    High,
    /// Counts differ (fused or extra kernels): the pair is a guess by order.
    Low,
}

#[derive(Debug, Clone, Default)]
pub struct TaskNodeMap {
    /// Task index → (FX node name, confidence).
    pub by_task: HashMap<u32, (String, Confidence)>,
    /// FX node name → task index.
    pub by_node: HashMap<String, u32>,
    /// Kernel tasks (`KERNEL_*` types) in the trace.
    pub kernel_tasks: usize,
    pub high: usize,
}

impl TaskNodeMap {
    pub fn mapped(&self) -> usize {
        self.by_task.len()
    }

    /// `114 of 114 kernel tasks linked to FX nodes (114 high confidence)`.
    pub fn describe(&self) -> String {
        format!(
            "{} of {} kernel tasks linked to FX nodes by op type and order ({} high confidence)",
            self.mapped(),
            self.kernel_tasks,
            self.high
        )
    }
}

/// The CANN op type of a kernel task name: its first `_`-separated part.
pub fn op_type(task_name: &str) -> &str {
    task_name.split('_').next().unwrap_or(task_name)
}

/// `torch.ops.aten.mul.Tensor` → `mul`.
fn aten_op(target: &str) -> &str {
    let t = target.strip_prefix("torch.ops.").unwrap_or(target);
    let mut parts = t.split('.');
    let _namespace = parts.next();
    parts.next().unwrap_or(t)
}

/// Matches kernel tasks (in stream order, then time) with the nodes of `graph` (in graph order).
pub fn map_tasks(trace: &Trace, graph: &FxGraph) -> TaskNodeMap {
    let family_of_type = |ty: &str| FAMILIES.iter().position(|(c, _)| c.contains(&ty));
    let family_of_op = |op: &str| FAMILIES.iter().position(|(_, a)| a.contains(&op));
    let mut tasks: Vec<Vec<u32>> = vec![Vec::new(); FAMILIES.len()];
    let mut kernel_tasks = 0;
    for lane in &trace.lanes {
        for &i in &lane.tasks {
            let t = &trace.tasks[i as usize];
            if !trace.kind_name(t).starts_with("KERNEL") {
                continue;
            }
            kernel_tasks += 1;
            if let Some(f) = family_of_type(op_type(&t.name)) {
                tasks[f].push(i);
            }
        }
    }
    let mut nodes: Vec<Vec<&str>> = vec![Vec::new(); FAMILIES.len()];
    for n in &graph.nodes {
        if n.op == OpKind::CallFunction
            && let Some(f) = family_of_op(aten_op(&n.target))
        {
            nodes[f].push(&n.name);
        }
    }
    let mut map = TaskNodeMap {
        kernel_tasks,
        ..Default::default()
    };
    for (ts, ns) in tasks.iter().zip(&nodes) {
        let conf = if ts.len() == ns.len() {
            Confidence::High
        } else {
            Confidence::Low
        };
        for (&t, &n) in ts.iter().zip(ns) {
            map.by_task.insert(t, (n.to_string(), conf));
            map.by_node.insert(n.to_string(), t);
            if conf == Confidence::High {
                map.high += 1;
            }
        }
    }
    map
}
