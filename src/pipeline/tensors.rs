//! Statistics of dumped tensor files, in parallel: what the tensor panel, the NaN tracer and
//! `fxray tensors` show. Files on a server are summarised there by its agent: a 1 GB tensor
//! never crosses the link, its statistics (well under a kilobyte) do.

use crate::analysis::tensor_stats;
use crate::model::tensor::{Slice2d, TensorCompare, TensorSummary};
use crate::sources::remote::fs as remote;
use crate::sources::tensor_file;
use std::path::{Path, PathBuf};

/// Files asked of an agent in one request: large enough to hide the round trip, small enough
/// that the first results come back soon.
const REMOTE_BATCH: usize = 64;

/// Opens and summarises one `.npy` or `.pt` file. The error is the file's problem in one line.
pub fn summarize_file(path: &Path) -> Result<TensorSummary, String> {
    if remote::locate(path).is_some() {
        return summarize_all(&[path.to_path_buf()])
            .pop()
            .map_or_else(|| Err("no answer".into()), |(_, r)| r);
    }
    let arr = tensor_file::open(path).map_err(|e| e.to_string())?;
    Ok(tensor_stats::summarize(&arr))
}

/// Summaries of many files, in parallel; each file's error stays with it.
pub fn summarize_all(paths: &[PathBuf]) -> Vec<(PathBuf, Result<TensorSummary, String>)> {
    use rayon::prelude::*;
    if !paths.iter().any(|p| remote::locate(p).is_some()) {
        return paths
            .par_iter()
            .map(|p| (p.clone(), summarize_file(p)))
            .collect();
    }
    paths
        .par_chunks(REMOTE_BATCH)
        .flat_map_iter(|chunk| {
            chunk
                .iter()
                .cloned()
                .zip(summarize_remote_chunk(chunk))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// One request per host for the remote files of `chunk`; local ones summarised here.
fn summarize_remote_chunk(chunk: &[PathBuf]) -> Vec<Result<TensorSummary, String>> {
    remote::ask_by_host(chunk, remote::summarize)
        .into_iter()
        .zip(chunk)
        .map(|(answer, path)| match answer {
            None => summarize_file(path),
            Some(r) => r
                .map_err(|e| e.to_string())
                .and_then(|r| r.map_err(|e| e.0)),
        })
        .collect()
}

/// A 2-D slice of a tensor file (the last two dims at the leading indices `lead`), at most
/// `limit` values; on a server, cut there and at most `remote::SLICE_CAP` values cross.
pub fn slice(path: &Path, lead: &[u64], limit: usize) -> Result<Slice2d, String> {
    if let Some((host, p)) = remote::locate(path) {
        return remote::slice(&host, &p, lead, limit)
            .map_err(|e| e.to_string())?
            .map_err(|e| e.0);
    }
    let a = tensor_file::open(path).map_err(|e| e.to_string())?;
    tensor_stats::slice2d(&a, lead, limit)
        .ok_or_else(|| "a 0-d array has no slice to show".to_string())
}

/// Two dumps of one tensor compared element by element; on the server when both are there.
pub fn compare(a: &Path, b: &Path) -> Result<TensorCompare, String> {
    if let (Some((ha, pa)), Some((hb, pb))) = (remote::locate(a), remote::locate(b))
        && ha == hb
    {
        return remote::compare(&ha, &pa, &pb)
            .map_err(|e| e.to_string())?
            .map_err(|e| e.0);
    }
    let x = tensor_file::open(a).map_err(|e| e.to_string())?;
    let y = tensor_file::open(b).map_err(|e| e.to_string())?;
    tensor_stats::compare(&x, &y).map_err(|e| e.to_string())
}
