//! Statistics of dumped tensor files, in parallel: what the tensor panel, the NaN tracer and
//! `fxray tensors` show. Files on a server are summarised there by its agent: a 1 GB tensor
//! never crosses the link, its statistics (well under a kilobyte) do.

use super::remote::{self, Op};
use crate::analysis::tensor_stats;
use crate::model::tensor::{Slice2d, TensorCompare, TensorSummary};
use crate::pipeline::failure::Failure;
use crate::sources::tensor_file;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Files asked of an agent in one request: large enough to hide the round trip, small enough
/// that the first results come back soon.
const REMOTE_BATCH: usize = 64;

/// Values of a slice sent over a link: 1 MB of f64s, a 362 × 362 heatmap.
pub const SLICE_CAP: usize = 1 << 17;

/// Opens and summarises one `.npy` or `.pt` file (on its server when it lies on one). The
/// error is the file's problem in one line.
pub fn summarize_file(path: &Path) -> Result<TensorSummary, Failure> {
    summarize_all(&[path.to_path_buf()])
        .pop()
        .map_or_else(|| Err(Failure::Agent("no answer".into())), |(_, r)| r)
}

/// Summaries of many files, in parallel; each file's error stays with it.
pub fn summarize_all(paths: &[PathBuf]) -> Vec<(PathBuf, Result<TensorSummary, Failure>)> {
    paths
        .par_chunks(REMOTE_BATCH)
        .flat_map_iter(|chunk| {
            let there = remote::each_there::<Summaries, _>(chunk);
            chunk
                .par_iter()
                .zip(there)
                .map(|(path, answer)| {
                    let r = match answer {
                        None => summarize_here(path),
                        Some(r) => r.map_err(Failure::from).and_then(|r| r),
                    };
                    (path.clone(), r)
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Opens and summarises a file of this machine.
fn summarize_here(path: &Path) -> Result<TensorSummary, Failure> {
    let arr = tensor_file::open(path).map_err(Failure::unreadable)?;
    Ok(tensor_stats::summarize(&arr))
}

/// Statistics of tensor files, one per file in order.
pub struct Summaries;

impl Op for Summaries {
    const NAME: &'static str = "tensor_summaries";
    type Args = Vec<PathBuf>;
    type Item = Result<TensorSummary, Failure>;

    fn paths(files: &mut Vec<PathBuf>) -> Vec<&mut PathBuf> {
        files.iter_mut().collect()
    }

    fn run(files: Vec<PathBuf>, _stop: &AtomicBool, send: &(dyn Fn(Self::Item) + Sync)) {
        summarize_all(&files).into_iter().for_each(|(_, r)| send(r));
    }
}

/// A 2-D slice of a tensor file (the last two dims at the leading indices `lead`), at most
/// `limit` values; on a server, cut there and at most [`SLICE_CAP`] values cross.
pub fn slice(path: &Path, lead: &[u64], limit: usize) -> Result<Slice2d, Failure> {
    let args = SliceOf {
        path: path.to_path_buf(),
        lead: lead.to_vec(),
        limit: limit.min(SLICE_CAP),
    };
    if let Some(r) = remote::one_result::<Slice, _>(args) {
        return r;
    }
    let a = tensor_file::open(path).map_err(Failure::unreadable)?;
    tensor_stats::slice2d(&a, lead, limit)
        .ok_or_else(|| Failure::Unsuitable("a 0-d array has no slice to show".into()))
}

#[derive(Serialize, Deserialize)]
pub struct SliceOf {
    path: PathBuf,
    lead: Vec<u64>,
    limit: usize,
}

/// A 2-D slice of a tensor file.
pub struct Slice;

impl Op for Slice {
    const NAME: &'static str = "tensor_slice";
    type Args = SliceOf;
    type Item = Result<Slice2d, Failure>;

    fn paths(args: &mut SliceOf) -> Vec<&mut PathBuf> {
        vec![&mut args.path]
    }

    fn run(args: SliceOf, _stop: &AtomicBool, send: &(dyn Fn(Self::Item) + Sync)) {
        send(slice(&args.path, &args.lead, args.limit));
    }
}

/// Two dumps of one tensor compared element by element; on the server when both are there.
pub fn compare(a: &Path, b: &Path) -> Result<TensorCompare, Failure> {
    if let Some(r) = remote::one_result::<Compare, _>((a.to_path_buf(), b.to_path_buf())) {
        return r;
    }
    let x = tensor_file::open(a).map_err(Failure::unreadable)?;
    let y = tensor_file::open(b).map_err(Failure::unreadable)?;
    tensor_stats::compare(&x, &y).map_err(Failure::unsuitable)
}

/// Two tensor files compared element by element.
pub struct Compare;

impl Op for Compare {
    const NAME: &'static str = "tensor_compare";
    type Args = (PathBuf, PathBuf);
    type Item = Result<TensorCompare, Failure>;

    fn paths((a, b): &mut (PathBuf, PathBuf)) -> Vec<&mut PathBuf> {
        vec![a, b]
    }

    fn run((a, b): (PathBuf, PathBuf), _stop: &AtomicBool, send: &(dyn Fn(Self::Item) + Sync)) {
        send(compare(&a, &b));
    }
}
