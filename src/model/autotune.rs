//! AscendC Top-N autotune, joined per fused kernel (docs/formats.md §7): the candidates the backend
//! compiled and profiled, their timings, the winner, and the files behind each.
//!
//! The evidence is scattered over three places and any of them may be missing, so every field
//! that comes from one source is optional and what is missing is said in `problems`.

use serde::Serialize;
use std::path::PathBuf;

/// Everything known about the autotune of one opened folder (or pasted log text).
#[derive(Debug, Clone, Default, Serialize)]
pub struct AutotuneReport {
    /// One per kernel name, in the order the evidence first names them.
    pub kernels: Vec<FusedKernel>,
    /// Where the evidence came from: log files (or "pasted text"), debug and cache folders.
    pub sources: Sources,
    /// Problems not tied to one kernel (an unreadable log line, a timing with no kernel).
    pub problems: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Sources {
    /// Log files that held `inductor_asc` lines, or `pasted text`.
    pub logs: Vec<String>,
    /// `autofused_*` folders of the debug tree.
    pub debug_dirs: usize,
    /// `<cache>/ascendc/host_*/<kernel>/<md5>/` entries.
    pub cache_entries: usize,
}

/// How the backend compiled a kernel, as far as the evidence tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CompilePath {
    /// `Static compile …, choice top N from M`, or `asc_tiling.py` + `asc_kernel_<key>.py`.
    TopN,
    /// `asc_kernel.py` only: compiled just in time, never autotuned.
    Jit,
    /// Nothing says which.
    Unknown,
}

#[derive(Debug, Clone, Serialize)]
pub struct FusedKernel {
    /// `autofused_add_mul_<md5>`.
    pub name: String,
    /// The ATen ops the name lists (`add`, `mul`): the sorted `original_aten` ops it fused.
    pub ops: Vec<String>,
    pub path: CompilePath,
    /// N of `choice top N from M`: the TOPN setting in force for this kernel.
    pub top_n: Option<u32>,
    /// M of `choice top N from M`: the tiling choices there were.
    pub choices: Option<u32>,
    /// Profiled (or compiled) candidates, in the order the log lists them.
    pub candidates: Vec<Candidate>,
    /// `best kernel index: K` as logged.
    pub logged_best: Option<usize>,
    /// The winner: the logged best, else the candidate `optimize_tiling` names.
    pub winner: Option<usize>,
    /// The cache entry's `optimize_tiling`, read and checked.
    pub optimize_tiling: Option<OptimizeTiling>,
    /// md5(`optimize_tiling`) equals the winner's kernel_key: `None` when either is unknown.
    pub key_check: Option<bool>,
    /// The kernel's folder in the debug tree (the first, when several models hold it).
    pub debug_dir: Option<PathBuf>,
    /// Files of the debug folder, sorted.
    pub files: Vec<PathBuf>,
    /// The cache entry `<cache>/ascendc/host_*/<name>/<md5>/`.
    pub cache_dir: Option<PathBuf>,
    /// `fx_graph_transformed.py` of the Inductor model folder holding `debug_dir`.
    pub post_grad: Option<PathBuf>,
    /// Post-grad FX nodes whose ATen op is one the name lists, in graph order.
    pub fx_nodes: Vec<String>,
    /// `RANK<r>` of the log lines, when they say.
    pub rank: Option<String>,
    /// What is missing or inconsistent, in plain words.
    pub problems: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Candidate {
    /// Position in the log's list: what `best kernel index` counts.
    pub index: usize,
    /// The `static_kernel/<kernel_key>/` folder name: md5 of the candidate's tiling line.
    pub key: Option<String>,
    /// Profiled kernel time (`Duration(us)` of the profiler), when logged.
    pub timing_us: Option<f64>,
    /// The `kernel.so` path as the log wrote it (on the machine that ran).
    pub kernel_so: Option<String>,
    /// `asc_kernel_<key>.py` in the debug folder.
    pub source: Option<PathBuf>,
    /// `static_kernel/<key>/` exists in the cache entry.
    pub in_cache: bool,
}

/// `optimize_tiling`: `"<tiling_repr>|<workspace>|<block_dim>"`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OptimizeTiling {
    pub path: PathBuf,
    /// The line as written (without a trailing newline).
    pub line: String,
    pub tiling: Option<String>,
    pub workspace: Option<String>,
    pub block_dim: Option<String>,
    /// md5 of `line`: the winner's kernel_key.
    pub kernel_key: String,
}

impl FusedKernel {
    pub fn new(name: &str) -> Self {
        FusedKernel {
            name: name.to_string(),
            ops: Vec::new(),
            path: CompilePath::Unknown,
            top_n: None,
            choices: None,
            candidates: Vec::new(),
            logged_best: None,
            winner: None,
            optimize_tiling: None,
            key_check: None,
            debug_dir: None,
            files: Vec::new(),
            cache_dir: None,
            post_grad: None,
            fx_nodes: Vec::new(),
            rank: None,
            problems: Vec::new(),
        }
    }

    /// The fastest and slowest profiled times.
    pub fn best_worst_us(&self) -> Option<(f64, f64)> {
        let times = self.candidates.iter().filter_map(|c| c.timing_us);
        times.fold(None, |acc, t| match acc {
            None => Some((t, t)),
            Some((lo, hi)) => Some((lo.min(t), hi.max(t))),
        })
    }

    /// Time of the winner, when it was profiled.
    pub fn winner_us(&self) -> Option<f64> {
        self.winner
            .and_then(|w| self.candidates.get(w))
            .and_then(|c| c.timing_us)
    }

    /// How much faster the winner is than the slowest candidate (worst / winner).
    pub fn speedup(&self) -> Option<f64> {
        let (_, worst) = self.best_worst_us()?;
        let best = self.winner_us()?;
        (best > 0.0 && self.candidates.len() > 1).then(|| worst / best)
    }
}

impl FusedKernel {
    /// `3 of 8` (profiled of the tiling choices), `3` when the choices are unknown.
    pub fn candidates_label(&self) -> String {
        let n = self.candidates.len();
        if n == 0 && self.path == CompilePath::Jit {
            return "jit".into();
        }
        match self.choices {
            Some(m) => format!("{n} of {m}"),
            None => n.to_string(),
        }
    }

    /// `#1 9.81 us`, `#1` without a timing, `-` without a winner.
    pub fn winner_label(&self) -> String {
        match (self.winner, self.winner_us()) {
            (Some(w), Some(t)) => format!("#{w} {t:.2} us"),
            (Some(w), None) => format!("#{w}"),
            _ => "-".into(),
        }
    }

    /// `2.15×`, or `-`.
    pub fn speedup_label(&self) -> String {
        self.speedup()
            .map_or_else(|| "-".into(), |s| format!("{s:.2}×"))
    }

    /// `ok`, `MISMATCH`, or `-` when there was nothing to check.
    pub fn key_check_label(&self) -> &'static str {
        match self.key_check {
            Some(true) => "ok",
            Some(false) => "MISMATCH",
            None => "-",
        }
    }
}

impl CompilePath {
    pub fn label(self) -> &'static str {
        match self {
            CompilePath::TopN => "top-n",
            CompilePath::Jit => "jit",
            CompilePath::Unknown => "?",
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The evidence, as `sources::autotune` reads it from its three places (not yet joined).

/// One understood `inductor_asc` line.
#[derive(Debug, Clone, PartialEq)]
pub struct AscRecord {
    /// 1-based line in its text.
    pub line: usize,
    /// `0` of `[RANK0]`, when the line has the logger's header.
    pub rank: Option<String>,
    pub time: Option<String>,
    pub kind: AscLine,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AscLine {
    /// `Static compile <kernel>, choice top N from M`.
    StaticCompile {
        kernel: String,
        top_n: u32,
        choices: u32,
    },
    /// `Autotune completed <cache entry>, best kernel index: K, detail:`.
    Completed {
        cache_path: String,
        kernel: Option<String>,
        /// The cache entry's `<md5>` in `cache_path`.
        cache_hash: Option<String>,
        best: Option<usize>,
    },
    /// `Kernel <…/static_kernel/<key>/kernel.so>: Timing = X us`.
    Timing {
        kernel_so: String,
        kernel: Option<String>,
        key: Option<String>,
        us: f64,
    },
}

/// The autotune lines of one text.
#[derive(Debug, Clone, Default)]
pub struct AscLog {
    /// A path, or `pasted text`.
    pub source: String,
    pub records: Vec<AscRecord>,
    /// Lines that start like an autotune line but could not be read (cut, garbled):
    /// (1-based line, the text, shortened).
    pub unreadable: Vec<(usize, String)>,
}

/// An `autofused_*` folder of the debug tree.
#[derive(Debug, Clone)]
pub struct DebugKernelDir {
    pub name: String,
    pub path: PathBuf,
    /// File names directly inside.
    pub files: Vec<String>,
    /// `fx_graph_transformed.py` of the Inductor model folder it sits in.
    pub post_grad: Option<PathBuf>,
}

/// One cache entry `<cache>/ascendc/host_*/<kernel>/<md5>/`.
#[derive(Debug, Clone)]
pub struct CacheEntry {
    pub name: String,
    pub hash: String,
    pub path: PathBuf,
    /// Read and split; `Err` says why it could not be read.
    pub optimize_tiling: Option<Result<OptimizeTiling, String>>,
    /// `static_kernel/<key>/` folder names.
    pub static_keys: Vec<String>,
}

/// Everything found, not yet joined.
#[derive(Debug, Clone, Default)]
pub struct Evidence {
    pub logs: Vec<AscLog>,
    pub debug_dirs: Vec<DebugKernelDir>,
    pub cache: Vec<CacheEntry>,
    pub problems: Vec<String>,
}

/// A kernel_key or a cache entry's name: 32 hex digits.
pub fn is_md5(s: &str) -> bool {
    s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit())
}
