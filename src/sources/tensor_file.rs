//! The one door for dumped tensor files: a `.pt` (`torch.save`, msprobe's tensor mode on
//! PyTorch) is read by `sources::pt`, anything else as `.npy` (TorchAir data dumps, msprobe on
//! MindSpore). Both give the same view, so every reader of tensors goes through here.

use crate::model::npy::NpyArray;
use std::path::Path;

/// Why a tensor file could not be read, by its format.
#[derive(Debug, thiserror::Error)]
pub enum TensorFileError {
    #[error(transparent)]
    Npy(#[from] crate::sources::npy::NpyError),
    #[error(transparent)]
    Pt(#[from] crate::sources::pt::PtError),
}

/// Opens the tensor at `path`, chosen by its extension. The error is one line.
pub fn open(path: &Path) -> Result<NpyArray, TensorFileError> {
    Ok(if is_pt(path) {
        crate::sources::pt::open(path)?
    } else {
        NpyArray::open(path)?
    })
}

/// `.pt` / `.pth`, any case.
pub fn is_pt(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("pt") || e.eq_ignore_ascii_case("pth"))
}
