//! Accuracy compare: a run against its golden run, tensor by tensor (docs/formats.md §4.4).
//!
//! Pure: the pipeline (`pipeline::compare`) finds and reads both dumps; this module pairs their
//! tensors (`pairing`), computes msprobe's metrics with msprobe's exact definitions and fxray's
//! own (`metrics` for tensor mode, `stats` for statistics mode), gives each pair msprobe's
//! pass/warning/error (`rules`), and finds the first divergence (`verdict`). `msprobe_csv` reads
//! msprobe's own `compare_result_*.csv` into the same [`Comparison`] and writes one.
//!
//! Sides are named as the user names them: the *target* (msprobe's "NPU") is the run under
//! suspicion, the *golden* (msprobe's "Bench") the reference.

pub mod dataflow;
pub mod delta;
pub mod metrics;
pub mod mixed;
pub mod msprobe_csv;
pub mod pairing;
pub mod replay;
pub mod rules;
pub mod stages;
pub mod stats;
pub mod tolerance;
pub mod verdict;

use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

pub use metrics::{Metric, TensorMetrics};
pub use stats::{StatsDiff, Summary};

/// The module path of `Module.<path>.<Class>.parameters_grad.<n>` (`fc1`, `layers.0.mlp`).
fn grad_module(call: &str) -> Option<&str> {
    let (head, _) = call
        .strip_prefix("Module.")?
        .split_once(".parameters_grad.")?;
    Some(head.rsplit_once('.')?.0)
}

/// msprobe's Result column: the worst of its checkers for the row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Pass,
    Warning,
    Error,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Pass => "pass",
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }

    pub fn parse(s: &str) -> Option<Level> {
        match s.trim() {
            "pass" => Some(Level::Pass),
            "warning" => Some(Level::Warning),
            "error" => Some(Level::Error),
            _ => None,
        }
    }
}

/// What was compared: every element (tensor mode) or the four statistics a dump records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Tensor,
    Statistics,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Target,
    Golden,
}

/// Whether a tensor goes into its call or comes out of it. Parameters and keyword arguments
/// are inputs, as msprobe counts them (every row whose name has no `.output.`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Input,
    Output,
}

/// One tensor of one side as pairing and the verdict see it (no data: the pipeline reads it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TensorRef {
    /// msprobe: its own tensor key, `Functional.gelu.0.forward.output.0`; npy dumps:
    /// `<node>.<INPUT|OUTPUT>.<i>[.<j>]`.
    pub key: String,
    /// The call the tensor belongs to: `Functional.gelu.0.forward`, or the FX node `add_3`.
    pub call: String,
    /// What the call computes, the same on both sides whatever the numbering: msprobe's API
    /// (`Functional.gelu`), the node's target (`aten.add.Tensor`). Pairing falls back on it.
    pub op: String,
    /// The FX node: the dumped node of an npy dump, the linked node of an msprobe call.
    pub node: Option<String>,
    /// `output.0`, `input.1`, `parameters.weight`, `INPUT.0.1`.
    pub slot: String,
    pub role: Role,
    /// As the dump writes it: `torch.bfloat16`, `<f4`.
    pub dtype: String,
    pub shape: Vec<u64>,
    /// The statistics the dump recorded (msprobe's dump.json), if any.
    pub summary: Option<Summary>,
    /// Position of its call in the side's call order (0 = first).
    pub order: usize,
    /// `requires_grad` as dumped (msprobe dumps; `None` for npy dumps and scalars).
    pub requires_grad: Option<bool>,
    /// An input's producer: the call whose output it is, when known (npy dumps: the earlier
    /// output holding the same bytes). The renumbered-node fall-back pairs by it.
    pub from: Option<String>,
    /// A fingerprint of its values, scalars included (npy dumps): two calls whose inputs hold
    /// the same values compute on the same data, whatever their names say.
    pub value: Option<u64>,
}

/// How a pair was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairedBy {
    /// The same key on both sides (msprobe's own match; npy: node name and slot).
    Key,
    /// Calls whose names differ, aligned by what they compute and their place in call order
    /// (renumbered nodes, msprobe's fuzzy match).
    Order,
    /// Renumbered nodes whose place in order would pair them wrongly, paired by what they
    /// compute and their inputs' pairs (parallel branches run in another order).
    Inputs,
    /// Nodes whose names would pair them wrongly, paired by their inputs' values (the same
    /// numbers upstream of a fault).
    Values,
    /// An npy node and an msprobe call, through the call's link to the graph (mixed dumps).
    Link,
}

/// One tensor of the target beside its golden counterpart.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Pair {
    pub key: String,
    pub golden_key: String,
    pub call: String,
    pub golden_call: String,
    pub node: Option<String>,
    pub slot: String,
    pub role: Role,
    pub dtype: String,
    pub golden_dtype: String,
    pub shape: Vec<u64>,
    pub golden_shape: Vec<u64>,
    /// `requires_grad` of each side, where dumped (msprobe's RequiresGrad checker).
    pub requires_grad: Option<bool>,
    pub golden_requires_grad: Option<bool>,
    pub paired_by: PairedBy,
    /// The data files compared (tensor mode): what the inspector opens to show both sides.
    pub files: Option<(std::path::PathBuf, std::path::PathBuf)>,
    /// Call order on each side (the verdict walks the target's).
    pub order: usize,
    pub golden_order: usize,
    /// Tensor mode: every element compared; `None` in statistics mode or when the data could
    /// not be read (`reason` says why).
    pub metrics: Option<TensorMetrics>,
    /// Both sides' statistics (recorded by the dump, or computed from the data).
    pub target_summary: Option<Summary>,
    pub golden_summary: Option<Summary>,
    /// msprobe's statistics-mode diffs, from the two summaries.
    pub stats: Option<StatsDiff>,
    /// ‖target‖ / ‖golden‖: 1.3 is a ×1.3 scale error, which cosine cannot see.
    pub norm_ratio: Option<f64>,
    /// fxray's error of this tensor: ‖t − g‖ / ‖g‖ (tensor mode) or the worst relative
    /// statistic (statistics mode); ∞ where NaN/Inf sit in different places.
    pub error: Option<f64>,
    /// Output tensors: this tensor's error minus the worst error among its call's inputs,
    /// what the call introduces rather than what it inherits.
    pub added_error: Option<f64>,
    pub result: Level,
    /// One line: msprobe's messages for the row, what could not be compared, and fxray's notes
    /// (a dtype difference, as information).
    pub reason: String,
    /// msprobe's `Err_message` entries alone, as its CSV writes them.
    pub messages: Vec<String>,
}

/// A tensor only one side has.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unpaired {
    pub key: String,
    pub call: String,
    pub node: Option<String>,
    pub slot: String,
    pub role: Role,
    /// As the dump writes it (msprobe's CSV also lists scalar arguments: `<class 'float'>`).
    pub dtype: String,
    /// Call order on its side.
    pub order: usize,
}

/// fxray's verdict: where the target first parts from the golden run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FirstDivergence {
    /// The tensor key on the target side (an op only the target has: its first output).
    pub key: String,
    pub node: Option<String>,
    pub call: String,
    pub why: String,
    /// Index into `pairs` when the divergence is a pair (not an unpaired op).
    #[serde(skip)]
    pub pair: Option<usize>,
}

/// A run compared with its golden run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Comparison {
    pub mode: Option<Mode>,
    /// In the target's call order.
    pub pairs: Vec<Pair>,
    pub unpaired_target: Vec<Unpaired>,
    pub unpaired_golden: Vec<Unpaired>,
    pub first_divergence: Option<FirstDivergence>,
    /// How the pairs were found, in one line ("by msprobe key", "renumbered nodes: …").
    pub pairing: String,
    /// One line each: what was not compared and why (a step only one side has, a cut file).
    pub notes: Vec<String>,
    /// node → indices into `pairs`; built by [`Comparison::index`].
    #[serde(skip)]
    by_node: HashMap<String, Vec<usize>>,
    #[serde(skip)]
    unpaired_by_node: HashMap<String, Vec<(Side, usize)>>,
}

impl Comparison {
    /// The gradients of each module's own parameters that were compared (msprobe's
    /// `Module.<path>.<Class>.parameters_grad.<n>` rows), by module path: each parameter and the
    /// result of its worst row, in pair order.
    pub fn parameter_gradients(&self) -> BTreeMap<String, Vec<(String, Level)>> {
        let mut out: BTreeMap<String, Vec<(String, Level)>> = BTreeMap::new();
        for p in &self.pairs {
            let Some(path) = grad_module(&p.call) else {
                continue;
            };
            let params = out.entry(path.to_string()).or_default();
            match params.iter_mut().find(|(name, _)| *name == p.slot) {
                Some((_, level)) => *level = (*level).max(p.result),
                None => params.push((p.slot.clone(), p.result)),
            }
        }
        out
    }

    /// Builds the lookups by node name (call after filling or changing pairs).
    pub fn index(&mut self) {
        self.by_node.clear();
        self.unpaired_by_node.clear();
        for (i, p) in self.pairs.iter().enumerate() {
            if let Some(n) = &p.node {
                self.by_node.entry(n.clone()).or_default().push(i);
            }
        }
        for (side, list) in [
            (Side::Target, &self.unpaired_target),
            (Side::Golden, &self.unpaired_golden),
        ] {
            for (i, u) in list.iter().enumerate() {
                if let Some(n) = &u.node {
                    self.unpaired_by_node
                        .entry(n.clone())
                        .or_default()
                        .push((side, i));
                }
            }
        }
    }

    /// The pairs of one FX node, in order.
    pub fn pairs_of(&self, node: &str) -> impl Iterator<Item = &Pair> {
        self.by_node
            .get(node)
            .into_iter()
            .flatten()
            .map(|&i| &self.pairs[i])
    }

    /// The node's worst output error (fxray's measure), what "error vs golden" colours by.
    pub fn node_error(&self, node: &str) -> Option<f64> {
        self.pairs_of(node)
            .filter(|p| p.role == Role::Output)
            .filter_map(|p| p.error)
            .reduce(f64::max)
    }

    /// The node's worst msprobe result.
    pub fn node_result(&self, node: &str) -> Option<Level> {
        self.pairs_of(node).map(|p| p.result).max()
    }

    /// Tensors of `node` only one side has.
    pub fn unpaired_of(&self, node: &str) -> impl Iterator<Item = (Side, &Unpaired)> {
        self.unpaired_by_node
            .get(node)
            .into_iter()
            .flatten()
            .map(|&(side, i)| {
                let list = match side {
                    Side::Target => &self.unpaired_target,
                    Side::Golden => &self.unpaired_golden,
                };
                (side, &list[i])
            })
    }

    /// Counts of pass / warning / error over the pairs.
    pub fn counts(&self) -> [usize; 3] {
        let mut c = [0; 3];
        for p in &self.pairs {
            c[p.result as usize] += 1;
        }
        c
    }
}

/// `torch.bfloat16` / `bf16` / `<f4` → the dtype class fxray's tolerances and msprobe's
/// rules reason about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DtypeClass {
    F64,
    F32,
    F16,
    Bf16,
    /// Integers, bool: exact.
    Exact,
    /// Anything else (fp8, complex, a Python scalar's class).
    Other,
}

impl DtypeClass {
    pub fn of(dtype: &str) -> DtypeClass {
        let d = dtype.trim().trim_start_matches("torch.");
        let d = d.trim_start_matches(['<', '>', '|', '=']);
        match d {
            "float64" | "double" | "f8" | "f64" => DtypeClass::F64,
            "float32" | "float" | "f4" | "f32" => DtypeClass::F32,
            "float16" | "half" | "f2" | "f16" => DtypeClass::F16,
            "bfloat16" | "bf16" => DtypeClass::Bf16,
            "bool" | "b1" | "b8" => DtypeClass::Exact,
            _ if is_int_name(d) => DtypeClass::Exact,
            _ => DtypeClass::Other,
        }
    }

    pub fn is_float(self) -> bool {
        matches!(
            self,
            DtypeClass::F64 | DtypeClass::F32 | DtypeClass::F16 | DtypeClass::Bf16
        )
    }

    /// `bf16`, `f32`: for messages.
    pub fn short(self) -> &'static str {
        match self {
            DtypeClass::F64 => "f64",
            DtypeClass::F32 => "f32",
            DtypeClass::F16 => "f16",
            DtypeClass::Bf16 => "bf16",
            DtypeClass::Exact => "int",
            DtypeClass::Other => "other",
        }
    }
}

fn is_int_name(d: &str) -> bool {
    let digits = d
        .strip_prefix("int")
        .or_else(|| d.strip_prefix("uint"))
        .or_else(|| d.strip_prefix('i'))
        .or_else(|| d.strip_prefix('u'));
    digits.is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        || matches!(d, "long" | "short")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_classes_from_torch_and_numpy_names() {
        assert_eq!(DtypeClass::of("torch.bfloat16"), DtypeClass::Bf16);
        assert_eq!(DtypeClass::of("<f4"), DtypeClass::F32);
        assert_eq!(DtypeClass::of("torch.float16"), DtypeClass::F16);
        assert_eq!(DtypeClass::of(">f8"), DtypeClass::F64);
        assert_eq!(DtypeClass::of("<i8"), DtypeClass::Exact);
        assert_eq!(DtypeClass::of("torch.int64"), DtypeClass::Exact);
        assert_eq!(DtypeClass::of("|b1"), DtypeClass::Exact);
        assert_eq!(DtypeClass::of("<class 'int'>"), DtypeClass::Other);
    }
}
