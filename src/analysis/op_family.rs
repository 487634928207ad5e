//! Op families: what kind of work a node does, for colouring and filtering.
//! Decided from the target's name only, so it works for aten, npu custom ops and Dynamo-level
//! targets alike.

use crate::model::fx::{FxNode, OpKind};
use serde::Serialize;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize, PartialOrd, Ord,
)]
#[serde(rename_all = "snake_case")]
pub enum OpFamily {
    /// Placeholders and get_attr (weights, constants).
    Input,
    Output,
    MatmulConv,
    Elementwise,
    Reduction,
    ViewLayout,
    Communication,
    /// `torch.ops.npu.*` and other custom NPU kernels.
    NpuCustom,
    /// Higher-order ops (`cond`, `while_loop`, …) and `getitem` plumbing.
    Control,
    Other,
}

pub const ALL_FAMILIES: [OpFamily; 10] = [
    OpFamily::Input,
    OpFamily::Output,
    OpFamily::MatmulConv,
    OpFamily::Elementwise,
    OpFamily::Reduction,
    OpFamily::ViewLayout,
    OpFamily::Communication,
    OpFamily::NpuCustom,
    OpFamily::Control,
    OpFamily::Other,
];

impl OpFamily {
    pub fn label(self) -> &'static str {
        match self {
            OpFamily::Input => "input / weight",
            OpFamily::Output => "output",
            OpFamily::MatmulConv => "matmul / conv",
            OpFamily::Elementwise => "elementwise",
            OpFamily::Reduction => "reduction",
            OpFamily::ViewLayout => "view / layout",
            OpFamily::Communication => "communication",
            OpFamily::NpuCustom => "NPU custom op",
            OpFamily::Control => "control flow",
            OpFamily::Other => "other",
        }
    }

    /// Fill colour (sRGB), chosen to stay distinguishable on dark and light backgrounds.
    pub fn rgb(self) -> [u8; 3] {
        match self {
            OpFamily::Input => [96, 125, 139],
            OpFamily::Output => [120, 144, 156],
            OpFamily::MatmulConv => [211, 84, 0],
            OpFamily::Elementwise => [41, 128, 185],
            OpFamily::Reduction => [142, 68, 173],
            OpFamily::ViewLayout => [39, 174, 96],
            OpFamily::Communication => [192, 57, 43],
            OpFamily::NpuCustom => [212, 160, 23],
            OpFamily::Control => [127, 140, 141],
            OpFamily::Other => [149, 165, 166],
        }
    }
}

pub fn family(node: &FxNode) -> OpFamily {
    match node.op {
        OpKind::Placeholder | OpKind::GetAttr => return OpFamily::Input,
        OpKind::Output => return OpFamily::Output,
        _ => {}
    }
    let t = &*node.target;
    if t.starts_with("torch.ops.higher_order.") || t == "operator.getitem" {
        return OpFamily::Control;
    }
    if t.starts_with("torch.ops.npu.") || t.contains("npu_") {
        return OpFamily::NpuCustom;
    }
    let op = op_name(t);
    if is_comm(t, op) {
        OpFamily::Communication
    } else if MATMUL.contains(&op) || op.starts_with("conv") {
        OpFamily::MatmulConv
    } else if REDUCTION.contains(&op) || op.contains("softmax") || op.contains("norm") {
        OpFamily::Reduction
    } else if VIEW.contains(&op) {
        OpFamily::ViewLayout
    } else if node.op == OpKind::CallMethod
        || t.starts_with("torch.ops.aten.")
        || t.starts_with("operator.")
        || t.starts_with("torch.")
    {
        OpFamily::Elementwise
    } else {
        OpFamily::Other
    }
}

/// `torch.ops.aten.mul.Tensor` → `mul`; `torch._C._nn.linear` → `linear`; `operator.mul` → `mul`.
fn op_name(target: &str) -> &str {
    if let Some(rest) = target.strip_prefix("torch.ops.") {
        // namespace.op.overload
        rest.split('.').nth(1).unwrap_or(rest)
    } else {
        target.rsplit('.').next().unwrap_or(target)
    }
}

fn is_comm(target: &str, op: &str) -> bool {
    target.contains("c10d")
        || target.contains("_functional_collectives")
        || target.contains("hccl")
        || [
            "all_reduce",
            "all_gather",
            "reduce_scatter",
            "all_to_all",
            "broadcast",
            "wait_tensor",
        ]
        .iter()
        .any(|c| op.contains(c))
}

const MATMUL: &[&str] = &[
    "mm",
    "addmm",
    "bmm",
    "baddbmm",
    "matmul",
    "linear",
    "einsum",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_efficient_attention",
    "scaled_dot_product_attention",
    "convolution",
    "convolution_backward",
    "addbmm",
    "dot",
];

const REDUCTION: &[&str] = &[
    "sum",
    "mean",
    "amax",
    "amin",
    "max",
    "min",
    "prod",
    "var",
    "var_mean",
    "std",
    "argmax",
    "argmin",
    "cumsum",
    "logsumexp",
    "any",
    "all",
    "topk",
    "sort",
];

const VIEW: &[&str] = &[
    "view",
    "reshape",
    "_unsafe_view",
    "permute",
    "transpose",
    "t",
    "expand",
    "squeeze",
    "unsqueeze",
    "slice",
    "select",
    "cat",
    "stack",
    "split",
    "split_with_sizes",
    "clone",
    "contiguous",
    "as_strided",
    "alias",
    "detach",
    "_to_copy",
    "to",
    "copy",
    "copy_",
    "flatten",
    "unflatten",
    "narrow",
    "chunk",
    "index",
    "index_select",
    "gather",
    "scatter",
    "index_put",
    "slice_scatter",
    "select_scatter",
    "new_zeros",
    "new_empty",
    "empty",
    "zeros",
    "ones",
    "full",
    "arange",
    "empty_strided",
    "scalar_tensor",
    "embedding",
    "repeat",
    "roll",
    "pad",
    "constant_pad_nd",
];
