//! The grammars of file and folder names in debug trees (docs/formats.md §1, §3, §4, §6, §7).
//! Every function takes one path component and says what it is, or `None`.

use crate::model::index::CaptureKind;
use regex::Regex;
use std::sync::LazyLock;

/// `run_2026_11_29_11_47_50_921376-pid_1296[-rank_0]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunName {
    /// `2026-11-29 11:47:50.921376`.
    pub time: String,
    pub pid: u32,
    pub rank: Option<u32>,
}

pub fn run_dir(name: &str) -> Option<RunName> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"^run_(\d{4})_(\d\d)_(\d\d)_(\d\d)_(\d\d)_(\d\d)_(\d+)-pid_(\d+)(?:-rank_(\d+))?$",
        )
        .expect("static regex")
    });
    let c = RE.captures(name)?;
    Some(RunName {
        time: format!(
            "{}-{}-{} {}:{}:{}.{}",
            &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], &c[7]
        ),
        pid: c[8].parse().ok()?,
        rank: c.get(9).and_then(|m| m.as_str().parse().ok()),
    })
}

/// The folder a backend writes into inside a run.
pub fn backend_dir(name: &str) -> Option<crate::model::index::Backend> {
    use crate::model::index::Backend;
    match name {
        "npugraph_ex" => Some(Backend::NpugraphEx),
        "torchair" => Some(Backend::Torchair),
        "torchinductor" | "aot_torchinductor" => Some(Backend::Inductor),
        _ => None,
    }
}

/// `model__3` → ("model", 3); `compile__0`; `model__-1` (deadlock_check without debug).
pub fn model_dir(name: &str) -> Option<i64> {
    let rest = name
        .strip_prefix("model__")
        .or_else(|| name.strip_prefix("compile__"))?;
    rest.parse().ok()
}

/// npugraph_ex phase folders. `inference` is mapped to `forward` by the writer, but an older
/// or patched writer could still produce it, so accept it.
pub fn phase_dir(name: &str) -> bool {
    matches!(
        name,
        "forward" | "backward" | "inference" | "joint" | "compile_fx" | "default"
    )
}

/// `NNN_aot_<phase>_graph[_after_<pass>].txt` → (NNN, pass name or `graph`).
/// The phase is taken from the name itself (it need not match the folder: the writer uses the
/// thread's phase, which the folder normally equals).
pub fn pass_file(name: &str) -> Option<(u32, String)> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(\d+)_aot_([a-z_]+?)_(graph(?:_after_(.+))?|original_ge_graph|optimized_ge_graph)\.(txt|py|pbtxt)$")
            .expect("static regex")
    });
    let c = RE.captures(name)?;
    let index = c[1].parse().ok()?;
    let pass = match c.get(4) {
        Some(p) => p.as_str().to_string(),
        None => c[3].to_string(),
    };
    Some((index, pass))
}

/// TorchAir's graph structure dump (docs/formats.md §3.3): graph `K` of rank `r`, before
/// (`original`) or after (`optimized`) the backend's passes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphDumpName {
    /// 0 for `original`, 1 for `optimized`: their order as passes.
    pub stage: u32,
    pub graph: u32,
    pub rank: u32,
    pub pid: u32,
    /// `py` (print_readable text in aclGraph modes), `txt` / `pbtxt` (GE's GraphDef).
    pub ext: String,
}

impl GraphDumpName {
    pub fn stage_name(&self) -> &'static str {
        if self.stage == 0 {
            "original"
        } else {
            "optimized"
        }
    }
}

/// `dynamo_<original|optimized>_graph_<K>_rank_<r>_pid_<p>_ts_<ts>.<py|txt|pbtxt>`.
pub fn graph_dump_file(name: &str) -> Option<GraphDumpName> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^dynamo_(original|optimized)_graph_(\d+)_rank_(\d+)_pid_(\d+)_ts_\d+\.(py|txt|pbtxt)$")
            .expect("static regex")
    });
    let c = RE.captures(name)?;
    Some(GraphDumpName {
        stage: u32::from(&c[1] == "optimized"),
        graph: c[2].parse().ok()?,
        rank: c[3].parse().ok()?,
        pid: c[4].parse().ok()?,
        ext: c[5].to_string(),
    })
}

/// Stock Inductor `model__0_forward_1.0` → (model name, kind, id `1.0`): torch names the folder
/// `<model>__<aot id>_<kind>_<nth graph>.<n>`. Torch 2.1 also writes `model___54.0` (no AOT id,
/// no kind, for a graph compiled outside its AOT bookkeeping): that is a model too, named
/// `model___54` by the graph it holds, with the kind `graph`.
pub fn inductor_model_dir(name: &str) -> Option<(String, String, String)> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:(model__-?\d+)_(forward|backward|inference|joint)|model__)_(\d+)\.(\d+)$")
            .expect("static regex")
    });
    let c = RE.captures(name)?;
    let id = format!("{}.{}", &c[3], &c[4]);
    Some(match (c.get(1), c.get(2)) {
        (Some(m), Some(k)) => (m.as_str().to_string(), k.as_str().to_string(), id),
        _ => (format!("model___{}", &c[3]), "graph".to_string(), id),
    })
}

/// Inductor's FX graphs, in the order they exist during compilation.
pub fn inductor_graph_file(name: &str) -> Option<u32> {
    match name {
        "fx_graph_readable.py" => Some(0),
        "fx_graph_transformed.py" => Some(1),
        _ => None,
    }
}

/// `graph_1_id_281..._rank_0_pid_4242_ts_20260101120001123456[.aligned|_filtered|_filtered_deadlock_check].json`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureName {
    pub graph: String,
    pub id: String,
    pub device: u32,
    pub pid: u32,
    pub ts: String,
    pub kind: CaptureKind,
}

pub fn capture_file(name: &str) -> Option<CaptureName> {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(graph_\d+)_id_(\d+)_rank_(\d+)_pid_(\d+)_ts_(\d+)(\.aligned|_filtered_deadlock_check|_filtered)?\.json$")
            .expect("static regex")
    });
    let c = RE.captures(name)?;
    let kind = match c.get(6).map(|m| m.as_str()) {
        None => CaptureKind::Raw,
        Some(".aligned") => CaptureKind::Aligned,
        Some("_filtered") => CaptureKind::Filtered,
        Some(_) => CaptureKind::DeadlockCheck,
    };
    Some(CaptureName {
        graph: c[1].to_string(),
        id: c[2].to_string(),
        device: c[3].parse().ok()?,
        pid: c[4].parse().ok()?,
        ts: c[5].to_string(),
        kind,
    })
}

/// `worldsize1_global_rank0` → (world size, rank).
pub fn data_dump_dir(name: &str) -> Option<(u32, u32)> {
    let rest = name.strip_prefix("worldsize")?;
    let (w, r) = rest.split_once("_global_rank")?;
    Some((w.parse().ok()?, r.parse().ok()?))
}

/// `graph_3` (data-dump graph folder) → true.
pub fn dump_graph_dir(name: &str) -> bool {
    name.strip_prefix("graph_")
        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

/// msprobe `step12` → 12.
pub fn msprobe_step_dir(name: &str) -> Option<u32> {
    name.strip_prefix("step")?.parse().ok()
}

/// msprobe `proc4242` (PrecisionDebugger without torch.distributed), `rank3` (with it),
/// `pid4242` (AclGraphDumper without it): docs/formats.md §4.1.
pub fn msprobe_who_dir(name: &str) -> bool {
    let digits = name
        .strip_prefix("rank")
        .or_else(|| name.strip_prefix("proc"))
        .or_else(|| name.strip_prefix("pid"));
    digits.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

/// AscendC fused-kernel folders (docs/formats.md §7).
pub fn kernel_dir(name: &str) -> bool {
    name.starts_with("autofused_") || (name.starts_with("unsupported_") && name.contains("fused"))
}

/// `tlparse/dedicated_log_torch_trace_<rand>.log`.
pub fn trace_log(name: &str) -> bool {
    name.starts_with("dedicated_log_torch_trace") && name.ends_with(".log")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_names() {
        let r = run_dir("run_2026_11_29_11_47_50_921376-pid_1296-rank_0").unwrap();
        assert_eq!(r.time, "2026-11-29 11:47:50.921376");
        assert_eq!((r.pid, r.rank), (1296, Some(0)));
        let r = run_dir("run_2026_11_29_12_04_56_192145-pid_3064").unwrap();
        assert_eq!((r.pid, r.rank), (3064, None));
        assert!(run_dir("run_2026-pid_1").is_none());
    }

    #[test]
    fn pass_names() {
        assert_eq!(
            pass_file("000_aot_forward_graph.txt"),
            Some((0, "graph".into()))
        );
        assert_eq!(
            pass_file("017_aot_backward_graph_after_resolve_default_stream_markers.txt"),
            Some((17, "resolve_default_stream_markers".into()))
        );
        assert_eq!(
            pass_file("003_aot_compile_fx_graph_after_view_to_reshape.txt"),
            Some((3, "view_to_reshape".into()))
        );
        assert_eq!(pass_file("output_code.py"), None);
    }

    #[test]
    fn capture_names() {
        let c = capture_file(
            "graph_1_id_281468934561872_rank_2_pid_2417765_ts_20260411093015882104_filtered_deadlock_check.json",
        )
        .unwrap();
        assert_eq!(c.graph, "graph_1");
        assert_eq!(c.device, 2);
        assert_eq!(c.kind, CaptureKind::DeadlockCheck);
        let c = capture_file(
            "graph_3_id_281466021873744_rank_0_pid_1459930_ts_20260405112208150337.aligned.json",
        )
        .unwrap();
        assert_eq!(
            (c.graph.as_str(), c.kind),
            ("graph_3", CaptureKind::Aligned)
        );
        assert_eq!(c.id, "281466021873744");
    }

    #[test]
    fn other_names() {
        assert_eq!(model_dir("model__12"), Some(12));
        assert_eq!(model_dir("compile__0"), Some(0));
        assert_eq!(model_dir("model__-1"), Some(-1));
        assert_eq!(model_dir("model__0_forward_1.0"), None);
        assert_eq!(
            inductor_model_dir("model__0_backward_3.1"),
            Some(("model__0".into(), "backward".into(), "3.1".into()))
        );
        // torch 2.1: no AOT id and no kind.
        assert_eq!(
            inductor_model_dir("model___54.0"),
            Some(("model___54".into(), "graph".into(), "54.0".into()))
        );
        assert_eq!(
            inductor_model_dir("model__19_inference_55.1"),
            Some(("model__19".into(), "inference".into(), "55.1".into()))
        );
        assert_eq!(inductor_model_dir("model___x.0"), None);
        assert_eq!(data_dump_dir("worldsize8_global_rank3"), Some((8, 3)));
        assert!(dump_graph_dir("graph_1") && !dump_graph_dir("graph_"));
        assert!(msprobe_who_dir("pid3064") && msprobe_who_dir("rank0") && !msprobe_who_dir("pid"));
        assert!(
            msprobe_who_dir("proc13733")
                && !msprobe_who_dir("proc")
                && !msprobe_who_dir("process1")
        );
    }
}
