//! One pair's two tensor files, read and compared in one pass: what computing a pair means,
//! here (`compute`) or on the server the files lie on (`remote`), and what the inspector's
//! pictures read (`delta`).

use crate::analysis::accuracy::TensorMetrics;
use crate::analysis::accuracy::metrics;
use crate::analysis::accuracy::stats::Summary;
use crate::model::npy::NpyArray;
use crate::pipeline::failure::Failure;
use std::path::Path;

/// Opens a dumped tensor: `.pt` through the pickle reader (never executing it), else `.npy`.
pub fn open_tensor(path: &Path) -> Result<NpyArray, Failure> {
    crate::sources::tensor_file::open(path).map_err(Failure::unreadable)
}

pub(super) fn read(side: &str, path: &Path) -> Result<NpyArray, Failure> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let a = open_tensor(path).map_err(|e| Failure::Unreadable(format!("{side} {name}: {e}")))?;
    if a.available < a.info.elements() {
        return Err(Failure::Unreadable(format!(
            "{side} {name}: cut file, {} of {} elements present",
            a.available,
            a.info.elements()
        )));
    }
    Ok(a)
}

/// What a pair's two files give: both sides' type and shape, msprobe's metrics and both
/// summaries. Computed here, or by the agent of the server the files lie on (`remote`).
#[derive(Clone)]
pub struct PairData {
    pub dtype: String,
    pub shape: Vec<u64>,
    pub golden_dtype: String,
    pub golden_shape: Vec<u64>,
    pub metrics: TensorMetrics,
    pub target: Summary,
    pub golden: Summary,
}

/// Both files read (in parallel, memory-mapped) and compared in one pass.
pub fn pair_data(tf: &Path, gf: &Path) -> Result<PairData, Failure> {
    let (t, g) = rayon::join(|| read("target", tf), || read("golden", gf));
    let (t, g) = (t?, g?);
    let (metrics, target, golden) = metrics::compare(&t, &g);
    Ok(PairData {
        dtype: t.info.dtype.clone(),
        shape: t.info.shape.clone(),
        golden_dtype: g.info.dtype.clone(),
        golden_shape: g.info.shape.clone(),
        metrics,
        target,
        golden,
    })
}
