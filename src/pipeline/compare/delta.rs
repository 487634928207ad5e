//! The difference of one pair as the inspector draws it (`analysis::accuracy::delta`): both
//! files opened (memory-mapped when large), the histogram in two parallel passes over them, and
//! one 2-D slice read, pooled to the heatmap's cells.

use crate::analysis::accuracy::delta::{self, Delta};
use crate::analysis::tensor_stats::BINS;
use std::path::Path;

/// Heatmap cells a side: a larger slice is pooled, each cell its block's largest |Δ|.
pub const CELLS: usize = 96;
/// Values of the slice read at most (a 1024 × 1024 slice whole).
const SLICE_LIMIT: usize = 1 << 20;

/// The difference target − golden of the pair of files, its slice at `lead` (default: the one
/// holding the largest difference).
pub fn delta(target: &Path, golden: &Path, lead: Option<&[u64]>) -> Result<Delta, String> {
    let (t, g) = rayon::join(
        || super::compute::read("target", target),
        || super::compute::read("golden", golden),
    );
    let (t, g) = (t?, g?);
    delta::delta(&t, &g, lead, BINS, CELLS, SLICE_LIMIT).map_err(|e| e.to_string())
}
