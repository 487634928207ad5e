//! Statistics of dumped tensor files, in parallel: what the tensor panel, the NaN tracer and
//! `fxray tensors` show.

use crate::analysis::tensor_stats;
use crate::model::tensor::TensorSummary;
use crate::sources::npy::NpyArray;
use std::path::{Path, PathBuf};

/// Opens and summarises one `.npy` file. The error is the file's problem in one line.
pub fn summarize_file(path: &Path) -> Result<TensorSummary, String> {
    let arr = NpyArray::open(path)?;
    Ok(tensor_stats::summarize(&arr))
}

/// Summaries of many files, in parallel; each file's error stays with it.
pub fn summarize_all(paths: &[PathBuf]) -> Vec<(PathBuf, Result<TensorSummary, String>)> {
    use rayon::prelude::*;
    paths
        .par_iter()
        .map(|p| (p.clone(), summarize_file(p)))
        .collect()
}
