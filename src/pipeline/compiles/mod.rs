//! The compile story of a tree: its trace logs found, read and joined to the `model__N`
//! folders they explain. `fxray compiles` prints it; the Compiles view runs it in a job.

pub(crate) mod remote;

use crate::analysis::compiles::{self, ModelLink};
use crate::error::{Error, Result};
use crate::model::compile::CompileTrace;
use crate::model::index::DebugIndex;
use crate::sources::{trace_log, vfs};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One trace log, read and joined to its model folders.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Story {
    pub path: PathBuf,
    pub trace: CompileTrace,
    pub links: Vec<ModelLink>,
}

impl Story {
    /// Why each joined model exists, by (run folder name, model name): a folder left by a
    /// restarted attempt says so (`restarted attempt 0 of 2/1: <reason>`).
    pub fn model_notes(&self) -> HashMap<(String, String), String> {
        self.links
            .iter()
            .map(|l| {
                (
                    (l.run.clone(), l.model.clone()),
                    compiles::model_note(&self.trace, l),
                )
            })
            .collect()
    }
}

/// Finds the trace logs for `path` (a debug tree, a run, a model folder, or the trace log
/// itself) and reads them, joined to the model folders of the tree around them.
pub fn stories(path: &Path) -> Result<Vec<Story>> {
    let (traces, index) = locate(path)?;
    Ok(read_stories(&traces, index.as_ref()))
}

/// Reads each trace log (one that cannot be read becomes a story with the reason as its stop).
/// Logs on a server are read there, by its agent, and joined to the models of its tree.
pub fn read_stories(traces: &[PathBuf], index: Option<&DebugIndex>) -> Vec<Story> {
    if let Some(stories) = remote::read(traces, index) {
        return stories;
    }
    traces
        .iter()
        .map(|t| {
            let trace = match trace_log::load(t) {
                Ok(trace) => trace,
                Err(e) => return unread(t, e.to_string()),
            };
            let links = index
                .map(|idx| {
                    compiles::join_models(&trace, &trace_log::models::model_graphs(idx, &trace))
                })
                .unwrap_or_default();
            Story {
                path: t.clone(),
                trace,
                links,
            }
        })
        .collect()
}

/// A story that could not be read: the reason is its stop.
fn unread(path: &Path, why: String) -> Story {
    Story {
        path: path.to_path_buf(),
        trace: CompileTrace {
            stopped: Some(why),
            ..CompileTrace::default()
        },
        links: Vec::new(),
    }
}

/// The trace logs for `path` and the index of the tree whose models they can be joined to.
pub fn locate(path: &Path) -> Result<(Vec<PathBuf>, Option<DebugIndex>)> {
    if !vfs::exists(path) {
        return Err(Error::user(format!(
            "{}: no such file or folder",
            path.display()
        )));
    }
    if vfs::is_file(path) {
        // `…/torch_compile_debug/tlparse/<log>`: the runs are beside `tlparse/`.
        let tree = path
            .parent()
            .filter(|p| p.file_name().is_some_and(|n| n == "tlparse"))
            .and_then(Path::parent);
        let index = tree.and_then(|t| super::tree::index(t).ok());
        return Ok((vec![path.to_path_buf()], index));
    }
    let index = super::tree::index(path)?;
    let traces = trace_log::find_beside(path, &index);
    if traces.is_empty() {
        return Err(Error::user(format!(
            "{}: no trace log (tlparse/dedicated_log_torch_trace_*.log) here or in the \
             torch_compile_debug/ folder above; torch writes one with TORCH_COMPILE_DEBUG=1 or \
             TORCH_TRACE=DIR",
            path.display()
        )));
    }
    Ok((traces, Some(index)))
}
