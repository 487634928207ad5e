//! The compile story read from torch's structured trace log
//! (`tlparse/dedicated_log_torch_trace_*.log`): one [`Compile`] per compile id `frame/compile`,
//! with its user frame, graph breaks, recompile reason, guards, metrics and graphs, and the
//! compile-time spans of its `chromium_event`s. Built by `sources::trace_log`; joined to the
//! `model__N` folders and turned into a flame chart by `analysis::compiles`.

use serde_json::Value;
use std::collections::BTreeMap;

/// A source location in user code.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Loc {
    pub file: String,
    pub line: u32,
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

impl Loc {
    /// `models.py:121`: the file's name only, for rows and the tree.
    pub fn short(&self) -> String {
        format!("{}:{}", super::fx::file_name(&self.file), self.line)
    }
}

/// One frame of a user stack.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StackFrame {
    pub name: String,
    pub loc: Loc,
    /// The source line, when the writer gave it.
    pub code: Option<String>,
}

/// Where and why Dynamo broke the graph (`artifact` `dynamo_graph_break_reason`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct GraphBreak {
    /// The user-code line the break happened at.
    pub location: Option<Loc>,
    /// Torch's reason, without the location line and the stacks.
    pub reason: String,
    /// The user code traceback, outermost first.
    pub user_stack: Vec<StackFrame>,
    /// The attempt that logged it (the attempt that restarted).
    pub attempt: u32,
    /// Line of the event in the trace file (1-based).
    pub line: usize,
    /// Not logged as such: inferred from a later compile of the resume function
    /// `torch_dynamo_resume_in_<fn>_at_<line>` (torch before ~2.6 logs no
    /// `dynamo_graph_break_reason`); the reason is then the compile's restart reasons.
    pub inferred: bool,
}

impl GraphBreak {
    /// The reason in one line: its first non-empty line that is not Dynamo's generic
    /// "Encountered graph break when attempting to trace …" header.
    pub fn title(&self) -> &str {
        first_line(&self.reason)
    }
}

/// The first non-empty line of a reason, past Dynamo's generic "Encountered graph break …"
/// header.
pub fn first_line(reason: &str) -> &str {
    let mut lines = reason.lines().map(str::trim).filter(|l| !l.is_empty());
    let first = lines.next().unwrap_or("");
    if first.starts_with("Encountered graph break") {
        lines.next().unwrap_or(first)
    } else {
        first
    }
}

/// One guard of a compile.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Guard {
    /// `TENSOR_MATCH`, `ID_MATCH`, … (`SHAPE` for `guard_added_fast` symbolic guards).
    pub kind: String,
    /// The check as torch printed it.
    pub text: String,
    /// Nesting in the guard tree (0 for symbolic guards).
    pub depth: u16,
}

/// A module Dynamo read while tracing, as its guard tree names it
/// (`source=L['self']._modules['h']._modules['0']._modules['mlp'], … type=<class '…GPT2MLP'>`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GuardedModule {
    /// Dotted path from the compiled module (`h.0.mlp`; `""` for the module itself), as torch's
    /// `nn_module_stack` names it.
    pub path: String,
    /// Its class, qualified by its Python module (`transformers.activations.NewGELUActivation`).
    pub class: String,
}

/// The kinds of graph a compile writes into the trace.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum GraphKind {
    DynamoOutput,
    AotJoint,
    AotForward,
    AotBackward,
    AotInference,
    InductorPreGrad,
    InductorPostGrad,
    OutputCode,
}

impl GraphKind {
    /// The trace event's name for this kind.
    pub fn event(self) -> &'static str {
        match self {
            GraphKind::DynamoOutput => "dynamo_output_graph",
            GraphKind::AotJoint => "aot_joint_graph",
            GraphKind::AotForward => "aot_forward_graph",
            GraphKind::AotBackward => "aot_backward_graph",
            GraphKind::AotInference => "aot_inference_graph",
            GraphKind::InductorPreGrad => "inductor_pre_grad_graph",
            GraphKind::InductorPostGrad => "inductor_post_grad_graph",
            GraphKind::OutputCode => "inductor_output_code",
        }
    }

    pub fn from_event(kind: &str) -> Option<Self> {
        const ALL: [GraphKind; 8] = [
            GraphKind::DynamoOutput,
            GraphKind::AotJoint,
            GraphKind::AotForward,
            GraphKind::AotBackward,
            GraphKind::AotInference,
            GraphKind::InductorPreGrad,
            GraphKind::InductorPostGrad,
            GraphKind::OutputCode,
        ];
        ALL.into_iter().find(|k| k.event() == kind)
    }
}

/// A graph printed into the trace.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TraceGraph {
    pub kind: GraphKind,
    pub text: String,
    pub attempt: u32,
    pub line: usize,
}

/// Any other payload of a compile (`artifact`s: bytecode, fw metadata, configs, errors…).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Artifact {
    pub name: String,
    pub text: String,
    pub attempt: u32,
    pub line: usize,
}

/// How a compile ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// A graph, no break.
    Ok,
    /// The frame was split at a graph break; the graph before it was compiled.
    GraphBreak,
    /// Dynamo restarted its analysis for another reason.
    Restarted,
    /// `fail_type` set: nothing was compiled.
    Failed,
    /// No `compilation_metrics` (a cut trace, a compile still running).
    Unknown,
}

impl Status {
    pub fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::GraphBreak => "graph break",
            Status::Restarted => "restarted",
            Status::Failed => "failed",
            Status::Unknown => "unfinished",
        }
    }
}

/// One compile id (`frame/compile`, or `!A/frame/compile` under compiled autograd) and all
/// its attempts.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Compile {
    pub frame: Option<u32>,
    pub compile: Option<u32>,
    pub autograd: Option<u32>,
    /// The highest attempt seen (tlparse writes `[0/0_1]` for attempt 1).
    pub attempt: u32,
    /// `dynamo_start`'s stack, outermost first (interned file names resolved).
    pub user_stack: Vec<StackFrame>,
    pub breaks: Vec<GraphBreak>,
    /// The guard failure that made this compile (`recompile_reasons`).
    pub recompile_reason: Option<String>,
    pub guards: Vec<Guard>,
    /// The modules the guard tree names, each once.
    pub modules: Vec<GuardedModule>,
    /// `compilation_metrics`, as written.
    #[serde(with = "metrics_text")]
    pub metrics: Option<BTreeMap<String, Value>>,
    /// `bwd_compilation_metrics`, when the backward was compiled.
    #[serde(with = "metrics_text")]
    pub bwd_metrics: Option<BTreeMap<String, Value>>,
    pub graphs: Vec<TraceGraph>,
    pub artifacts: Vec<Artifact>,
    /// First line of the trace that names this compile.
    pub first_line: usize,
    /// Each attempt seen, with the first line naming it, in order.
    pub attempt_lines: Vec<(u32, usize)>,
    /// Every event of the compile that carried a payload or is a metrics record, as
    /// (attempt, name: the artifact's name or the event kind), in file order: what tlparse
    /// lists as the compile's output files.
    pub outputs: Vec<(u32, String)>,
}

impl Compile {
    /// `2/1` (`!0/2/1` under compiled autograd; `-` for a missing part).
    pub fn id(&self) -> String {
        let part = |v: Option<u32>| v.map_or("-".to_string(), |v| v.to_string());
        let base = format!("{}/{}", part(self.frame), part(self.compile));
        match self.autograd {
            Some(a) => format!("!{a}/{base}"),
            None => base,
        }
    }

    /// tlparse's label: `[2/1]`, `[0/0_1]` for attempt 1.
    pub fn label(&self) -> String {
        self.attempt_label(self.attempt)
    }

    /// tlparse's label of attempt `k`: `[2/1]` for 0, `[2/1_1]` for 1.
    pub fn attempt_label(&self, k: u32) -> String {
        if k == 0 {
            format!("[{}]", self.id())
        } else {
            format!("[{}_{}]", self.id(), k)
        }
    }

    /// Why attempt `k` was thrown away, when it was (`k` below the last attempt): the
    /// metrics' `restart_reasons` (one per restart when torch gave one each, else all of
    /// them), else the graph break that attempt logged.
    pub fn restart_reason(&self, k: u32) -> Option<String> {
        if k >= self.attempt {
            return None;
        }
        let reasons = self.restart_reasons();
        let from_metrics = match reasons.len() {
            0 => None,
            n if n == self.attempt as usize => Some(reasons[k as usize].to_string()),
            _ => Some(reasons.join("\n")),
        };
        from_metrics.or_else(|| {
            self.breaks
                .iter()
                .find(|b| b.attempt == k)
                .map(|b| b.reason.clone())
        })
    }

    /// One row per attempt, in order: each restarted attempt with its reason, then the last
    /// with how the compile ended.
    pub fn attempts(&self) -> Vec<Attempt> {
        (0..=self.attempt)
            .map(|k| {
                let last = k == self.attempt;
                Attempt {
                    attempt: k,
                    label: self.attempt_label(k),
                    status: if last {
                        self.final_status()
                    } else {
                        Status::Restarted
                    },
                    restart_reason: self.restart_reason(k),
                    graphs: (0..self.graphs.len())
                        .filter(|&g| self.graphs[g].attempt == k)
                        .collect(),
                    breaks: (0..self.breaks.len())
                        .filter(|&b| self.breaks[b].attempt == k)
                        .collect(),
                    first_line: self
                        .attempt_lines
                        .iter()
                        .find(|(a, _)| *a == k)
                        .map(|(_, l)| *l),
                }
            })
            .collect()
    }

    /// Inductor's provenance of attempt `attempt`: one per graph Inductor compiled, in the
    /// order it compiled them (a training step's forward, then its backward).
    pub fn provenances(&self, attempt: u32) -> Vec<Provenance> {
        self.artifacts
            .iter()
            .filter(|a| a.attempt == attempt && a.name == PROVENANCE_ARTIFACT)
            .filter_map(|a| Provenance::parse(&a.text))
            .collect()
    }

    /// How the last attempt ended: failed, split at a graph break, or compiled (a restart
    /// before it is the earlier attempts' status, not this one's).
    pub fn final_status(&self) -> Status {
        if self.metrics.is_none() {
            Status::Unknown
        } else if self.fail_type().is_some() {
            Status::Failed
        } else if !self.breaks.is_empty() {
            Status::GraphBreak
        } else {
            Status::Ok
        }
    }

    fn metric(&self, key: &str) -> Option<&Value> {
        self.metrics.as_ref()?.get(key).filter(|v| !v.is_null())
    }

    pub fn metric_f64(&self, key: &str) -> Option<f64> {
        self.metric(key)?.as_f64()
    }

    pub fn metric_str(&self, key: &str) -> Option<&str> {
        self.metric(key)?.as_str()
    }

    /// `entire_frame_compile_time_s`.
    pub fn time_s(&self) -> Option<f64> {
        self.metric_f64("entire_frame_compile_time_s")
    }

    pub fn fail_type(&self) -> Option<&str> {
        self.metric_str("fail_type")
    }

    pub fn fail_reason(&self) -> Option<&str> {
        self.metric_str("fail_reason")
    }

    /// Where a failed compile failed in user code.
    pub fn fail_location(&self) -> Option<Loc> {
        Some(Loc {
            file: self.metric_str("fail_user_frame_filename")?.to_string(),
            line: self.metric("fail_user_frame_lineno")?.as_u64()? as u32,
        })
    }

    pub fn restart_reasons(&self) -> Vec<&str> {
        self.metric("restart_reasons")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    pub fn status(&self) -> Status {
        if self.metrics.is_none() {
            return Status::Unknown;
        }
        if self.fail_type().is_some() {
            Status::Failed
        } else if !self.breaks.is_empty() {
            Status::GraphBreak
        } else if !self.restart_reasons().is_empty() {
            Status::Restarted
        } else {
            Status::Ok
        }
    }

    /// The compiled function: `co_name` from the metrics, else the innermost stack frame.
    pub fn co_name(&self) -> Option<&str> {
        self.metric_str("co_name")
            .or_else(|| self.user_frame().map(|f| f.name.as_str()))
    }

    /// Where the compiled function is: `co_filename:co_firstlineno` from the metrics, else the
    /// innermost frame of `dynamo_start`'s stack that is not Dynamo's own (torch 2.4's stacks
    /// end in `convert_frame.py`'s `__call__`, the caller of the compiled frame).
    pub fn location(&self) -> Option<Loc> {
        let from_metrics = || {
            Some(Loc {
                file: self.metric_str("co_filename")?.to_string(),
                line: self.metric("co_firstlineno")?.as_u64()? as u32,
            })
        };
        from_metrics().or_else(|| self.user_frame().map(|f| f.loc.clone()))
    }

    /// The innermost frame of `dynamo_start`'s stack that is not Dynamo's own.
    fn user_frame(&self) -> Option<&StackFrame> {
        self.user_stack
            .iter()
            .rfind(|f| !f.loc.file.replace('\\', "/").contains("torch/_dynamo/"))
    }

    /// The Dynamo graph this compile produced (the last attempt's).
    pub fn dynamo_graph(&self) -> Option<&TraceGraph> {
        self.graphs
            .iter()
            .rfind(|g| g.kind == GraphKind::DynamoOutput)
    }

    /// Number of guards: the guard tree's leaves, else the metrics' `guard_count`.
    pub fn guard_count(&self) -> usize {
        if self.guards.is_empty() {
            self.metric("guard_count")
                .and_then(Value::as_u64)
                .unwrap_or(0) as usize
        } else {
            self.guards.len()
        }
    }

    /// The resumed function of a graph break: `torch_dynamo_resume_in_forward_at_86` → 86.
    pub fn resumes_at_line(&self) -> Option<u32> {
        let name = self.co_name()?;
        let rest = name.strip_prefix("torch_dynamo_resume_in_")?;
        rest.rsplit_once("_at_")?.1.parse().ok()
    }
}

/// The trace-log artifact of Inductor's provenance; the debug tree holds the same JSON as
/// `<this>.json` in the graph's folder.
pub const PROVENANCE_ARTIFACT: &str = "inductor_provenance_tracking_node_mappings";

/// Inductor's provenance of one compile (`inductor_provenance_tracking_node_mappings`):
/// which post-grad FX nodes each pre-grad node became, and which generated kernel
/// (`cpp_fused_relu_3:6`, `extern_kernels.addmm:1`, `triton_poi_…:2`) runs each post-grad node.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Provenance {
    pub pre_to_post: BTreeMap<String, Vec<String>>,
    pub post_to_pre: BTreeMap<String, Vec<String>>,
    pub kernel_to_post: BTreeMap<String, Vec<String>>,
    pub post_to_kernel: BTreeMap<String, Vec<String>>,
}

impl Provenance {
    /// Reads the artifact's JSON; the kernel maps are named by the code kind
    /// (`cppCodeToPost`, `tritonCodeToPost`, …), so any `…ToPost`/`postTo…` pair is taken.
    pub fn parse(text: &str) -> Option<Self> {
        let Value::Object(o) = serde_json::from_str::<Value>(text).ok()? else {
            return None;
        };
        let map = |v: &Value| -> BTreeMap<String, Vec<String>> {
            v.as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| {
                            let list = v
                                .as_array()
                                .map(|a| {
                                    a.iter()
                                        .filter_map(|s| s.as_str().map(str::to_string))
                                        .collect()
                                })
                                .unwrap_or_default();
                            (k.clone(), list)
                        })
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut p = Provenance::default();
        for (k, v) in &o {
            match k.as_str() {
                "preToPost" => p.pre_to_post = map(v),
                "postToPre" => p.post_to_pre = map(v),
                k if k.ends_with("ToPost") => p.kernel_to_post.extend(map(v)),
                k if k.starts_with("postTo") => p.post_to_kernel.extend(map(v)),
                _ => {}
            }
        }
        Some(p)
    }

    /// The kernels that run post-grad node `node`.
    pub fn kernels_of(&self, node: &str) -> &[String] {
        self.post_to_kernel.get(node).map_or(&[], Vec::as_slice)
    }

    /// The pre-grad (user-level) nodes post-grad node `node` came from.
    pub fn pre_grad_of(&self, node: &str) -> &[String] {
        self.post_to_pre.get(node).map_or(&[], Vec::as_slice)
    }
}

/// A compile's `compilation_metrics` in the groups tlparse shows, keys as torch writes them
/// (null values left out). Grouped by the key's form, so keys of other torch releases land in
/// their group too.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct MetricGroups {
    /// Phase times: `*_time_s` in seconds, `*_time_us`/`duration_us` in microseconds.
    pub times: BTreeMap<String, Value>,
    /// Cache sizes, hits and misses.
    pub cache: BTreeMap<String, Value>,
    /// `guard_count`, `shape_env_guard_count`.
    pub guards: BTreeMap<String, Value>,
    /// `graph_node_count`, `graph_op_count`, `graph_input_count`.
    pub graph: BTreeMap<String, Value>,
    /// `fail_type`, `fail_reason`, `fail_user_frame_*`.
    pub fail: BTreeMap<String, Value>,
    /// `restart_reasons`.
    pub restart_reasons: Vec<String>,
    /// The backward's times (`bwd_compilation_metrics`), when it was compiled.
    pub backward: BTreeMap<String, Value>,
}

impl MetricGroups {
    pub fn of(c: &Compile) -> Self {
        let mut g = MetricGroups {
            restart_reasons: c.restart_reasons().iter().map(|s| s.to_string()).collect(),
            ..Self::default()
        };
        for (k, v) in c.metrics.iter().flatten() {
            if v.is_null() {
                continue;
            }
            let group = if k.starts_with("fail_") {
                &mut g.fail
            } else if k.contains("guard_count") {
                &mut g.guards
            } else if k.starts_with("graph_") && k.ends_with("_count") {
                &mut g.graph
            } else if k.contains("cache")
                && (k.contains("hit") || k.contains("miss") || k.ends_with("cache_size"))
            {
                &mut g.cache
            } else if is_time(k) {
                &mut g.times
            } else {
                continue;
            };
            group.insert(k.clone(), v.clone());
        }
        for (k, v) in c.bwd_metrics.iter().flatten() {
            if !v.is_null() && (is_time(k) || k.starts_with("fail_")) {
                g.backward.insert(k.clone(), v.clone());
            }
        }
        g
    }
}

/// A duration key: `entire_frame_compile_time_s`, `dynamo_time_before_restart_s`,
/// `post_grad_pass_time_us`, `duration_us` —
/// not a clock reading (`start_time`, `end_time_us`).
fn is_time(k: &str) -> bool {
    !k.starts_with("start_time")
        && !k.starts_with("end_time")
        && (k.contains("time") && (k.ends_with("_s") || k.ends_with("_us")) || k == "duration_us")
}

/// One attempt of a compile (Dynamo's analysis from the start; a restart throws it away and
/// begins the next). Indices point into the compile's `graphs` and `breaks`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Attempt {
    pub attempt: u32,
    /// `[2/1_1]`.
    pub label: String,
    pub status: Status,
    /// Why it was thrown away (restarted attempts only).
    pub restart_reason: Option<String>,
    pub graphs: Vec<usize>,
    pub breaks: Vec<usize>,
    /// First line of the trace naming this attempt.
    pub first_line: Option<usize>,
}

/// A model folder's Dynamo graph (`model__N/dynamo_out_graph.txt`), as read.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ModelGraph {
    /// `model__3`.
    pub name: String,
    pub number: i64,
    /// The run folder it is in (several runs may share one trace).
    pub run: String,
    pub text: String,
    /// The text is the model's AOT forward/inference graph (stock Inductor's
    /// `fx_graph_readable.py`), not its Dynamo graph.
    pub aot: bool,
}

/// A compile attempt joined to the model folder its Dynamo graph was written to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ModelLink {
    pub compile: usize,
    /// The attempt whose graph the folder holds (a restarted attempt can leave a folder too).
    pub attempt: u32,
    pub model: String,
    pub run: String,
}

/// One compile-time span from `chromium_event` begin/end pairs (or a complete `X` event).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Span {
    pub name: String,
    /// The compile id in the event's args (`0/0`), if any.
    pub compile_id: Option<String>,
    /// `pid/tid` of the event.
    pub thread: String,
    /// Microseconds (the writer's clock).
    pub start: f64,
    /// `None` when the end never came (a cut trace, a failure).
    pub end: Option<f64>,
    /// Nesting depth on its thread (0 = outermost).
    pub depth: u16,
    pub cat: Option<String>,
}

/// Everything read from one trace log.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct CompileTrace {
    /// The pid from the glog prefix of the first line.
    pub pid: Option<u32>,
    /// `rank` from the envelope, else from the file name (`…_rank_R_…`).
    pub rank: Option<u32>,
    /// The rank the file's name gives (`…_rank_5_…`), set by `trace_log::load`.
    pub rank_in_name: Option<u32>,
    /// Every `rank` the records carry, in order of first sight (one in a sound log).
    pub ranks_in_records: Vec<u32>,
    /// Payloads whose md5 is not the one their header gives (each is also a problem line).
    pub md5_mismatches: usize,
    pub torch_version: Option<String>,
    /// Compiles in order of first appearance.
    pub compiles: Vec<Compile>,
    pub spans: Vec<Span>,
    /// End events without a begin.
    pub unmatched_ends: usize,
    /// Events by kind, including kinds fxray does not interpret (kept, counted).
    pub kinds: BTreeMap<String, usize>,
    /// Payloads of events that belong to no compile, by kind (`artifact` names prefixed).
    pub global_artifacts: Vec<Artifact>,
    /// Interned strings (`str` events): id → file name.
    pub strings: BTreeMap<u32, String>,
    pub lines: usize,
    pub bytes: u64,
    /// Lines that could not be read (line number, why), at most a few hundred.
    pub problems: Vec<(usize, String)>,
    /// Problems beyond those kept.
    pub more_problems: usize,
    /// Where and why reading stopped early; `None` when the whole file was read.
    pub stopped: Option<String>,
    /// The file ended inside an event's payload (the writer was cut off).
    pub cut: bool,
}

impl CompileTrace {
    pub fn compile(&self, id: &str) -> Option<&Compile> {
        self.compiles.iter().find(|c| c.id() == id)
    }

    /// What is wrong with the file's rank, in one line each: records of several ranks, or a
    /// file name naming another rank than its records.
    pub fn rank_warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.ranks_in_records.len() > 1 {
            let all: Vec<String> = self.ranks_in_records.iter().map(u32::to_string).collect();
            out.push(format!(
                "its records carry several ranks ({}): logs of several processes were joined",
                all.join(", ")
            ));
        }
        if let (Some(n), Some(&r)) = (self.rank_in_name, self.ranks_in_records.first())
            && n != r
        {
            out.push(format!(
                "the file name says rank {n}, its records say rank {r}: fxray shows rank {r}"
            ));
        }
        out
    }

    /// Every graph break, in file order, with the compile it ended.
    pub fn graph_breaks(&self) -> Vec<(&Compile, &GraphBreak)> {
        let mut all: Vec<(&Compile, &GraphBreak)> = self
            .compiles
            .iter()
            .flat_map(|c| c.breaks.iter().map(move |b| (c, b)))
            .collect();
        all.sort_by_key(|(_, b)| b.line);
        all
    }

    /// Compiles with a recompile reason, in order.
    pub fn recompiles(&self) -> impl Iterator<Item = &Compile> {
        self.compiles
            .iter()
            .filter(|c| c.recompile_reason.is_some())
    }
}

/// Metrics as they cross a link: JSON text, since they are free-form JSON and the link's
/// compact form cannot carry a self-describing value.
mod metrics_text {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::Value;
    use std::collections::BTreeMap;

    type Metrics = Option<BTreeMap<String, Value>>;

    pub fn serialize<S: Serializer>(m: &Metrics, s: S) -> Result<S::Ok, S::Error> {
        m.as_ref()
            .map(|m| serde_json::to_string(m).unwrap_or_default())
            .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Metrics, D::Error> {
        Option::<String>::deserialize(d)?
            .map(|t| serde_json::from_str(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
}
