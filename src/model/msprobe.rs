//! What msprobe (mindstudio-probe 26.x) writes per step and process (docs/formats.md §4):
//! `dump.json` entries with their tensors' statistics, crc32 or `.pt` file, `stack.json`'s call
//! stack of each entry and `construct.json`'s parent of each call.

use serde::Serialize;
use std::path::PathBuf;

/// One tensor record of msprobe's `dump.json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MsprobeTensor {
    /// `input_args.0`, `input_kwargs.scale`, `output.0`, `output.1.0`, `parameters.weight`,
    /// `input.0` (backward), `parameters_grad.weight.0`.
    /// Inline when 24 bytes or shorter, as most are (`output.0`, `torch.float32`): a step has
    /// an entry per call, and every link and compare reads each tensor's slot and dtype.
    pub slot: crate::model::fx::Short,
    pub dtype: crate::model::fx::Short,
    pub shape: Vec<i64>,
    /// `None` where msprobe wrote `null`: the value was not finite, or the dtype has no stats.
    pub max: Option<f64>,
    pub min: Option<f64>,
    pub mean: Option<f64>,
    pub norm: Option<f64>,
    /// The task `md5` (`summary_mode: md5`): a crc32 of the data, 8 hex digits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub md5: Option<String>,
    /// The task `tensor`: the file under `dump_tensor_data/` holding the tensor
    /// (`Functional.linear.0.forward.output.0.pt`; `.npy` on MindSpore).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_name: Option<String>,
    /// The tensor's `requires_grad` as dumped (msprobe's RequiresGrad checker compares them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requires_grad: Option<bool>,
}

/// A scalar argument of a call (`{"type": "int", "value": -1}`): msprobe's compare makes it a
/// row of its own (dtype `<class 'int'>`, shape `[]`, the value as max, min, mean and norm) and
/// its Parameters checker flags two sides whose values differ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MsprobeScalar {
    /// `input_args.1`, `input_kwargs.dim`.
    pub slot: String,
    /// `int`, `float`, `bool`.
    pub kind: String,
    pub value: f64,
    /// Its place among the entry's records: it comes before `tensors[at]`.
    pub at: usize,
}

impl MsprobeTensor {
    /// True when msprobe wrote `null` for the max or min: the tensor held NaN or ±Inf (or its
    /// dtype has no statistics). A `null` mean or norm alone is an fp32 overflow of the sum
    /// (a mask of −3.4e38), not a bad value.
    pub fn null_stats(&self) -> bool {
        self.max.is_none() || self.min.is_none()
    }
}

/// What an msprobe key names (docs/formats.md §4.1): a module's call, an API's call, or the
/// gradients of a module's parameters.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum MsprobeCall {
    /// `Module.<path>.<Class>.<forward|backward>.<n>`; the root module's path is `__root__`.
    Module {
        path: String,
        class: String,
        backward: bool,
        /// The n-th call of this module (0 = first) in the step.
        n: u32,
    },
    /// `<prefix>.<op>[.<overload>].<n>.<forward|backward>`: `Aten.add.Tensor.3.forward`,
    /// `Functional.linear.0.forward`, `Tensor.__add__.1.forward`, `NPU.npu_rms_norm.0.forward`.
    Api {
        prefix: String,
        /// `add.Tensor`, `linear`, `__add__`.
        op: String,
        backward: bool,
        /// The n-th call of this API (0 = first) in the step.
        n: u32,
    },
    /// `Module.<path>.<Class>.parameters_grad.<n>`: the gradients of the module's own
    /// parameters, written once the backward has made them (levels L0 and mix).
    ParamsGrad { path: String, class: String, n: u32 },
}

impl MsprobeCall {
    /// True for what the backward pass produced (gradients included).
    pub fn backward(&self) -> bool {
        match self {
            MsprobeCall::Module { backward, .. } | MsprobeCall::Api { backward, .. } => *backward,
            MsprobeCall::ParamsGrad { .. } => true,
        }
    }

    /// The module path of a module call or a parameters' gradient entry.
    pub fn module(&self) -> Option<&str> {
        match self {
            MsprobeCall::Module { path, .. } | MsprobeCall::ParamsGrad { path, .. } => Some(path),
            MsprobeCall::Api { .. } => None,
        }
    }
}

/// One frame of `stack.json`: `File /home/dev/models/llama.py, line 63, in forward, \n var = …`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StackFrame {
    pub file: String,
    pub line: u32,
    pub func: String,
    /// The source line, stripped.
    pub code: String,
}

impl StackFrame {
    /// Library code (torch, msprobe, anything installed) rather than the user's model.
    pub fn is_library(&self) -> bool {
        let f = self.file.as_str();
        f.contains("/site-packages/")
            || f.contains("/dist-packages/")
            || f.contains("/torch/")
            || f.contains("/msprobe/")
            || f.starts_with('<')
    }

    /// `llama.py:63 in forward`.
    pub fn describe(&self) -> String {
        let base = self.file.rsplit('/').next().unwrap_or(&self.file);
        format!("{base}:{} in {}", self.line, self.func)
    }
}

/// `Module.layers.0.mlp.MLP.forward.0` and its tensors.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MsprobeEntry {
    /// Shared with the links made to it (`Link::key`): a 50k-entry step is linked to every
    /// candidate graph, and a copy of every key per link was a sixth of linking.
    pub key: std::sync::Arc<str>,
    /// The key parsed; `None` when it follows no grammar fxray knows.
    pub call: Option<MsprobeCall>,
    pub tensors: Vec<MsprobeTensor>,
    /// Its int, float and bool arguments.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scalars: Vec<MsprobeScalar>,
    /// Index into [`MsprobeStep::stacks`]: the call stack `stack.json` gives this entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stack: Option<usize>,
    /// The key of the module call this call ran in, from `construct.json` (`None`: at the top,
    /// or no `construct.json`, as at level L1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// One `step<N>/<proc<PID>|rank<R>|pid<P>>/` folder: `dump.json` and what lies beside it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MsprobeStep {
    pub path: PathBuf,
    pub step: u32,
    /// `proc3064`, `rank0` or `pid3064`: the folder name.
    pub who: String,
    pub task: Option<String>,
    pub level: Option<String>,
    /// `pytorch` or `mindspore`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub framework: Option<String>,
    /// `dump_tensor_data/` beside `dump.json` when the task is `tensor` (the absolute path in
    /// the file names where it was written, not where it is read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tensor_dir: Option<PathBuf>,
    /// In file order, which is call order (a module before the calls inside it).
    pub entries: Vec<MsprobeEntry>,
    /// The distinct call stacks of `stack.json`, innermost frame first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stacks: Vec<Vec<StackFrame>>,
    /// Records that were not understood (not a tensor, odd fields, an unreadable `stack.json`),
    /// in one line each.
    pub skipped: Vec<String>,
}

impl MsprobeStep {
    /// The rank of a `rank<R>` folder; `None` for `proc`/`pid` (no torch.distributed).
    pub fn rank(&self) -> Option<u32> {
        self.who.strip_prefix("rank")?.parse().ok()
    }

    /// The frames of entry `i`'s call stack (empty when `stack.json` has none).
    pub fn stack_of(&self, i: usize) -> &[StackFrame] {
        self.entries
            .get(i)
            .and_then(|e| e.stack)
            .and_then(|s| self.stacks.get(s))
            .map_or(&[], Vec::as_slice)
    }

    /// The user's source line that made entry `i`: the innermost frame outside libraries
    /// (for a module call, the line that called it).
    pub fn source_of(&self, i: usize) -> Option<&StackFrame> {
        self.stack_of(i).iter().find(|f| !f.is_library())
    }

    /// The `.pt`/`.npy` file of tensor `t` of entry `i`, in tensor mode.
    pub fn tensor_file(&self, t: &MsprobeTensor) -> Option<PathBuf> {
        Some(self.tensor_dir.as_ref()?.join(t.data_name.as_deref()?))
    }
}
