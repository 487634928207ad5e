//! Dumped tensors: what a TorchAir/npugraph_ex npy data dump holds (docs/formats.md §3.1), the
//! statistics of one tensor, and msprobe (its types are in `model::msprobe`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Whether a dumped file is an argument or a result of its node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Io {
    Input,
    Output,
}

/// `<node>-<target>.<INPUT|OUTPUT>.<i>[.<j>].<ts>.npy`, parsed from the right.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DumpName {
    /// FX node name (`add_1`).
    pub node: String,
    /// `str(target)` (`aten.add.Tensor`).
    pub target: String,
    pub io: Io,
    /// Positional argument / result index.
    pub index: u32,
    /// Element of a list argument (`INPUT.i.j`).
    pub sub: Option<u32>,
    /// `%Y%m%d%H%M%S%f`, one per node call.
    pub ts: String,
}

impl DumpName {
    /// `INPUT.1`, `INPUT.0.2`, `OUTPUT.0`.
    pub fn slot(&self) -> String {
        let io = match self.io {
            Io::Input => "INPUT",
            Io::Output => "OUTPUT",
        };
        match self.sub {
            Some(j) => format!("{io}.{}.{j}", self.index),
            None => format!("{io}.{}", self.index),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DumpFile {
    pub name: DumpName,
    pub path: PathBuf,
    pub size: u64,
}

/// Everything one node call dumped in one step.
#[derive(Debug, Clone, Serialize)]
pub struct NodeDump {
    pub node: String,
    pub target: String,
    pub ts: String,
    /// Inputs then outputs, each by index.
    pub files: Vec<DumpFile>,
}

impl NodeDump {
    pub fn inputs(&self) -> impl Iterator<Item = &DumpFile> {
        self.files.iter().filter(|f| f.name.io == Io::Input)
    }
    pub fn outputs(&self) -> impl Iterator<Item = &DumpFile> {
        self.files.iter().filter(|f| f.name.io == Io::Output)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct StepDump {
    pub step: u32,
    pub path: PathBuf,
    /// By node name.
    pub nodes: BTreeMap<String, NodeDump>,
    /// Files in the step folder whose names do not follow the dump grammar.
    pub odd_names: Vec<PathBuf>,
}

impl StepDump {
    /// Node names in the order they ran (the per-call timestamp).
    /// Its calls carry the time they ran (an npy dump's file names do; npugraph_ex's `.pt`
    /// tensor dump records none, and its order is then only the names').
    pub fn is_timed(&self) -> bool {
        self.nodes.values().any(|n| !n.ts.is_empty())
    }

    pub fn execution_order(&self) -> Vec<&NodeDump> {
        let mut v: Vec<&NodeDump> = self.nodes.values().collect();
        v.sort_by(|a, b| a.ts.cmp(&b.ts).then_with(|| a.node.cmp(&b.node)));
        v
    }
}

/// `graph_<K>` of one rank (npy data dump), or `device_<d>` (npugraph_ex's `.pt` tensor dump).
#[derive(Debug, Clone, Serialize)]
pub struct GraphDump {
    pub name: String,
    pub steps: Vec<StepDump>,
}

impl GraphDump {
    /// What wrote it, as messages name it.
    pub fn kind(&self) -> &'static str {
        let pt = self
            .steps
            .iter()
            .flat_map(|s| s.nodes.values())
            .flat_map(|n| &n.files)
            .next()
            .is_some_and(|f| f.path.extension().is_some_and(|e| e == "pt"));
        if pt {
            "npugraph_ex tensor dump"
        } else {
            "npy data dump"
        }
    }
}

/// `worldsize<W>_global_rank<R>`.
#[derive(Debug, Clone, Serialize)]
pub struct RankDump {
    pub path: PathBuf,
    pub world_size: u32,
    pub rank: u32,
    pub graphs: Vec<GraphDump>,
}

/// Every rank of one or more data dumps.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DumpCatalog {
    pub ranks: Vec<RankDump>,
    pub warnings: Vec<String>,
}

impl DumpCatalog {
    pub fn is_empty(&self) -> bool {
        self.ranks.is_empty()
    }

    pub fn files(&self) -> impl Iterator<Item = &DumpFile> {
        self.ranks
            .iter()
            .flat_map(|r| &r.graphs)
            .flat_map(|g| &g.steps)
            .flat_map(|s| s.nodes.values())
            .flat_map(|n| &n.files)
    }

    pub fn graph(&self, rank: u32, graph: &str) -> Option<&GraphDump> {
        self.ranks
            .iter()
            .find(|r| r.rank == rank)?
            .graphs
            .iter()
            .find(|g| g.name == graph)
    }
}

/// The element type of an array, as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TensorInfo {
    /// numpy's descriptor: `<f4`, `>i8`, `|b1`.
    pub dtype: String,
    pub shape: Vec<u64>,
    pub fortran_order: bool,
}

impl TensorInfo {
    /// Elements the shape promises (1 for a 0-d array).
    pub fn elements(&self) -> u64 {
        self.shape.iter().fold(1u64, |a, &d| a.saturating_mul(d))
    }

    /// `f32 [2, 8]`.
    pub fn describe(&self) -> String {
        let shape: Vec<String> = self.shape.iter().map(u64::to_string).collect();
        format!("{} [{}]", short_dtype(&self.dtype), shape.join(", "))
    }
}

/// `<f4` → `f32`, `|b1` → `bool`, `>i8` → `i64 (big-endian)`.
/// A torch dtype as msprobe writes it (`torch.bfloat16`) in FX's short form (`bf16`, as
/// `print_readable` annotates values); `None` for one FX has no short name for here.
pub fn fx_dtype_of_torch(torch: &str) -> Option<&'static str> {
    Some(match torch.strip_prefix("torch.")? {
        "bfloat16" => "bf16",
        "float16" | "half" => "f16",
        "float32" | "float" => "f32",
        "float64" | "double" => "f64",
        "int64" | "long" => "i64",
        "int32" | "int" => "i32",
        "int16" => "i16",
        "int8" => "i8",
        "uint8" => "u8",
        "bool" => "b8",
        "complex64" => "c64",
        _ => return None,
    })
}

pub fn short_dtype(descr: &str) -> String {
    if descr == "bfloat16" {
        return "bf16".into(); // a torch `.pt` tensor: numpy has no descriptor for it
    }
    let (order, rest) = descr.split_at(descr.len().min(1));
    let bits = rest[1.min(rest.len())..]
        .parse::<u32>()
        .map(|b| b * 8)
        .unwrap_or(0);
    let base = match rest.chars().next() {
        Some('f') => format!("f{bits}"),
        Some('i') => format!("i{bits}"),
        Some('u') => format!("u{bits}"),
        Some('b') => "bool".to_string(),
        _ => descr.to_string(),
    };
    if order == ">" && bits > 8 {
        format!("{base} (big-endian)")
    } else {
        base
    }
}

/// Equal-width bins over `[lo, hi]` of the finite values (numpy's `histogram` rules).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Histogram {
    pub lo: f64,
    pub hi: f64,
    pub counts: Vec<u64>,
}

/// Statistics of one tensor. Min/max/mean/std are over its finite values; NaN and ±Inf are
/// counted apart so a mask's −Inf never hides a NaN.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TensorStats {
    /// Elements read (fewer than the shape says when the file is truncated).
    pub count: u64,
    pub nan: u64,
    pub pos_inf: u64,
    pub neg_inf: u64,
    pub zero: u64,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    /// Population standard deviation (numpy's default `ddof=0`).
    pub std: Option<f64>,
    pub histogram: Option<Histogram>,
}

impl TensorStats {
    pub fn finite(&self) -> u64 {
        self.count - self.nan - self.pos_inf - self.neg_inf
    }
    pub fn inf(&self) -> u64 {
        self.pos_inf + self.neg_inf
    }
}

/// One `.npy` file summarised: what it holds, and what is wrong with it if anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TensorSummary {
    pub info: TensorInfo,
    pub stats: TensorStats,
    /// "truncated: 10 of 16 elements present" and the like; the stats cover what is there.
    pub warning: Option<String>,
}

/// Two dumps of the same tensor (two steps or two ranks) side by side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TensorCompare {
    /// Pairs compared (both values finite).
    pub compared: u64,
    /// Pairs skipped because a value was NaN or ±Inf on either side.
    pub non_finite: u64,
    pub max_abs_diff: f64,
    /// `|a − b| / |b|` over pairs with `b ≠ 0`.
    pub max_rel_diff: f64,
    pub cosine: Option<f64>,
    /// C-order index of the largest absolute difference.
    pub argmax: Option<Vec<u64>>,
    /// The values there (a, b).
    pub at_max: Option<(f64, f64)>,
}

// msprobe's types live in `model::msprobe`; re-exported for the paths that name them here.
pub use super::msprobe::{MsprobeCall, MsprobeEntry, MsprobeStep, MsprobeTensor};

/// A statistic for people: `0.047828`, `-3.3895e38`, `16`.
pub fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if v.is_nan() || v.is_infinite() {
        format!("{v}")
    } else if v == v.trunc() && a < 1e15 {
        format!("{v:.0}")
    } else if (1e-4..1e6).contains(&a) {
        let s = format!("{v:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.4e}")
    }
}

/// A 2-D slice of a tensor (the last two dims at fixed leading indices), for the heatmap and
/// the value table. Values in C order, `rows × cols` of them at most `limit`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slice2d {
    /// Leading indices fixed (empty for 1-D and 2-D tensors).
    pub lead: Vec<u64>,
    pub rows: usize,
    pub cols: usize,
    /// Row-major; shorter than `rows × cols` when the slice was cut (see `cut`).
    pub values: Vec<f64>,
    /// True when only the first values were read (a huge slice, or a truncated file).
    pub cut: bool,
}
