//! The difference of one pair as the inspector draws it (`analysis::accuracy::delta`): both
//! files opened (memory-mapped when large), the histogram in two parallel passes over them, and
//! one 2-D slice read, pooled to the heatmap's cells.

use crate::analysis::accuracy::delta::{self, Delta};
use crate::analysis::tensor_stats::BINS;
use crate::sources::remote::fs as remote;
use std::path::Path;

/// Heatmap cells a side: a larger slice is pooled, each cell its block's largest |Δ|.
pub const CELLS: usize = 96;
/// Values of the slice read at most (a 1024 × 1024 slice whole).
const SLICE_LIMIT: usize = 1 << 20;

/// The difference target − golden of the pair of files, its slice at `lead` (default: the one
/// holding the largest difference).
pub fn delta(target: &Path, golden: &Path, lead: Option<&[u64]>) -> Result<Delta, String> {
    if let (Some((ht, pt)), Some((hg, pg))) = (remote::locate(target), remote::locate(golden))
        && ht == hg
    {
        let (v, cells) = remote::delta(&ht, &pt, &pg, lead).map_err(|e| e.to_string())?;
        let mut d = serde_json::from_value::<Result<Delta, String>>(v)
            .map_err(|e| format!("from the agent: {e}"))??;
        d.slice.cells = cells
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        return Ok(d);
    }
    let (t, g) = rayon::join(
        || super::pair_data::read("target", target),
        || super::pair_data::read("golden", golden),
    );
    let (t, g) = (t?, g?);
    delta::delta(&t, &g, lead, BINS, CELLS, SLICE_LIMIT).map_err(|e| e.to_string())
}

/// What the agent answers to `Delta`: the difference of its own files, the heatmap cells apart
/// as the payload (JSON has no NaN, and a cell with no difference is one).
pub fn answer(target: &str, golden: &str, lead: Option<&[u64]>) -> (serde_json::Value, Vec<u8>) {
    let mut r = delta(Path::new(target), Path::new(golden), lead);
    let cells = match &mut r {
        Ok(d) => std::mem::take(&mut d.slice.cells),
        Err(_) => Vec::new(),
    };
    let bytes = cells.iter().flat_map(|v| v.to_le_bytes()).collect();
    (serde_json::to_value(&r).unwrap_or_default(), bytes)
}
