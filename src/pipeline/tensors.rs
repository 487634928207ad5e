//! Statistics of dumped tensor files, in parallel: what the tensor panel, the NaN tracer and
//! `fxray tensors` show.

use crate::analysis::tensor_stats;
use crate::model::tensor::TensorSummary;
use crate::sources::tensor_file;
use std::path::{Path, PathBuf};

/// Opens and summarises one `.npy` or `.pt` file. The error is the file's problem in one line.
pub fn summarize_file(path: &Path) -> Result<TensorSummary, String> {
    let arr = tensor_file::open(path).map_err(|e| e.to_string())?;
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
