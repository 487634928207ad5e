//! Graphs found only in the trace log (a `TORCH_TRACE`-only run, or compiles no model folder
//! was joined to) served from memory as an npugraph_ex-layout tree (`sources::archive::
//! mount_memory`: nothing is written, neither in the folder viewed nor in the cache), so the
//! graph view opens them as the passes of their compile:
//! `model__K/dynamo_out_graph.txt`, `forward/000_aot_forward_graph.txt`,
//! `forward/001_aot_forward_graph_after_inductor_post_grad.txt`, the same for `backward/`,
//! and each phase's `output_code.py` and Inductor provenance JSON. `K` is the compile's
//! position in the trace.

use crate::model::compile::{CompileTrace, GraphKind, ModelLink, PROVENANCE_ARTIFACT};
use std::path::{Path, PathBuf};

/// The name of the memory tree for `log`: different trace files of the same name stay apart.
fn tree_name(log: &Path) -> String {
    let stem = log
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut h = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(&log, &mut h);
    format!("{stem}-{:016x}", std::hash::Hasher::finish(&h))
}

/// Serves the graphs of the compiles not in `joined`; returns the run folder and the links of
/// the models served (`None` when there was nothing to serve). The run folder
/// (`run_trace_log-pid_P`) tells the tree where the graphs came from.
pub fn materialize(
    log: &Path,
    trace: &CompileTrace,
    joined: &[usize],
) -> Option<(PathBuf, Vec<ModelLink>)> {
    let run_name = format!("run_trace_log-pid_{}", trace.pid.unwrap_or(0));
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    let mut links = Vec::new();
    for (k, c) in trace.compiles.iter().enumerate() {
        if joined.contains(&k) || c.dynamo_graph().is_none() {
            continue;
        }
        let model = format!("model__{k}");
        let dir = PathBuf::from(&run_name).join("npugraph_ex").join(&model);
        // The AOT graphs name the phases, in the order Inductor compiles them (forward, then
        // backward).
        let mut phases: Vec<&str> = Vec::new();
        for g in &c.graphs {
            let (phase, name) = match g.kind {
                GraphKind::DynamoOutput => {
                    files.push((
                        dir.join("dynamo_out_graph.txt"),
                        g.text.clone().into_bytes(),
                    ));
                    continue;
                }
                GraphKind::AotForward | GraphKind::AotInference => {
                    ("forward", "000_aot_forward_graph.txt")
                }
                GraphKind::AotBackward => ("backward", "000_aot_backward_graph.txt"),
                _ => continue,
            };
            files.push((dir.join(phase).join(name), g.text.clone().into_bytes()));
            if !phases.contains(&phase) {
                phases.push(phase);
            }
        }
        // What Inductor wrote for its k-th graph belongs to the k-th phase: its post-grad
        // graph, its code and its provenance (only the last attempt got that far).
        let of_kind = |kind: GraphKind| {
            c.graphs
                .iter()
                .filter(move |g| g.kind == kind && g.attempt == c.attempt)
                .map(|g| g.text.as_str())
        };
        let provenance = c
            .artifacts
            .iter()
            .filter(|a| a.name == PROVENANCE_ARTIFACT && a.attempt == c.attempt)
            .map(|a| a.text.as_str());
        for (phase, text) in phases.iter().zip(of_kind(GraphKind::InductorPostGrad)) {
            let after = format!("001_aot_{phase}_graph_after_inductor_post_grad.txt");
            files.push((dir.join(phase).join(after), text.as_bytes().to_vec()));
        }
        for (phase, text) in phases.iter().zip(of_kind(GraphKind::OutputCode)) {
            files.push((
                dir.join(phase).join("output_code.py"),
                text.as_bytes().to_vec(),
            ));
        }
        for (phase, text) in phases.iter().zip(provenance) {
            let name = format!("{PROVENANCE_ARTIFACT}.json");
            files.push((dir.join(phase).join(name), text.as_bytes().to_vec()));
        }
        links.push(ModelLink {
            compile: k,
            attempt: c.attempt,
            model,
            run: run_name.clone(),
        });
    }
    if links.is_empty() {
        return None;
    }
    let root = crate::sources::archive::mount_memory(&tree_name(log), files);
    Some((root.join(run_name), links))
}
