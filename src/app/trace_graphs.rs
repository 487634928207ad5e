//! Graphs found only in the trace log (a `TORCH_TRACE`-only run, or compiles no model folder
//! was joined to) written out as an npugraph_ex-layout tree in fxray's cache folder — never in
//! the folder viewed — so the graph view opens them as the passes of their compile:
//! `model__K/dynamo_out_graph.txt`, `forward/000_aot_forward_graph.txt`,
//! `forward/001_aot_forward_graph_after_inductor_post_grad.txt`, the same for `backward/`, and
//! the compile's `output_code.py`. `K` is the compile's position in the trace.

use crate::model::compile::{CompileTrace, GraphKind, ModelLink};
use std::path::{Path, PathBuf};

/// The run folder written for `log` (`run_trace_log-pid_P`); its name tells the tree where the
/// graphs came from.
pub fn run_dir(log: &Path, trace: &CompileTrace) -> PathBuf {
    let stem = log
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Different trace files of the same name stay apart.
    let mut h = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(&log, &mut h);
    let key = std::hash::Hasher::finish(&h);
    crate::paths::cache_dir()
        .join("trace_graphs")
        .join(format!("{stem}-{key:016x}"))
        .join(format!("run_trace_log-pid_{}", trace.pid.unwrap_or(0)))
}

/// Writes the graphs of the compiles not in `joined`; returns the run folder and the links of
/// the models written (`None` when there was nothing to write).
pub fn materialize(
    log: &Path,
    trace: &CompileTrace,
    joined: &[usize],
) -> std::io::Result<Option<(PathBuf, Vec<ModelLink>)>> {
    let run = run_dir(log, trace);
    let run_name = run
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut links = Vec::new();
    for (k, c) in trace.compiles.iter().enumerate() {
        if joined.contains(&k) || c.dynamo_graph().is_none() {
            continue;
        }
        let model = format!("model__{k}");
        let dir = run.join("npugraph_ex").join(&model);
        std::fs::create_dir_all(&dir)?;
        let mut post_grad = c
            .graphs
            .iter()
            .filter(|g| g.kind == GraphKind::InductorPostGrad);
        for g in &c.graphs {
            let (phase, name) = match g.kind {
                GraphKind::DynamoOutput => {
                    std::fs::write(dir.join("dynamo_out_graph.txt"), &g.text)?;
                    continue;
                }
                GraphKind::AotForward | GraphKind::AotInference => {
                    ("forward", "000_aot_forward_graph.txt")
                }
                GraphKind::AotBackward => ("backward", "000_aot_backward_graph.txt"),
                GraphKind::OutputCode => ("forward", "output_code.py"),
                _ => continue,
            };
            std::fs::create_dir_all(dir.join(phase))?;
            std::fs::write(dir.join(phase).join(name), &g.text)?;
            // Inductor's post-grad graphs come in phase order: forward, then backward.
            if name.starts_with("000_")
                && let Some(pg) = post_grad.next()
            {
                let after = format!("001_aot_{phase}_graph_after_inductor_post_grad.txt");
                std::fs::write(dir.join(phase).join(after), &pg.text)?;
            }
        }
        links.push(ModelLink {
            compile: k,
            attempt: c.attempt,
            model,
            run: run_name.clone(),
        });
    }
    Ok((!links.is_empty()).then_some((run, links)))
}
