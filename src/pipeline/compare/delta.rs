//! The difference of one pair as the inspector draws it (`analysis::accuracy::delta`): both
//! files opened (memory-mapped when large), the histogram in two parallel passes over them, and
//! one 2-D slice read, pooled to the heatmap's cells.

use crate::analysis::accuracy::delta::{self, Delta};
use crate::analysis::tensor_stats::BINS;
use crate::pipeline::failure::Failure;
use crate::pipeline::remote::{self, Op};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Heatmap cells a side: a larger slice is pooled, each cell its block's largest |Δ|.
pub const CELLS: usize = 96;
/// Values of the slice read at most (a 1024 × 1024 slice whole).
const SLICE_LIMIT: usize = 1 << 20;

/// The difference target − golden of the pair of files, its slice at `lead` (default: the one
/// holding the largest difference).
pub fn delta(target: &Path, golden: &Path, lead: Option<&[u64]>) -> Result<Delta, Failure> {
    let args = Pair {
        target: target.to_path_buf(),
        golden: golden.to_path_buf(),
        lead: lead.map(<[u64]>::to_vec),
    };
    if let Some(r) = remote::one_result::<DeltaOp, _>(args) {
        return r;
    }
    let (t, g) = rayon::join(
        || super::pair_data::read("target", target),
        || super::pair_data::read("golden", golden),
    );
    let (t, g) = (t?, g?);
    delta::delta(&t, &g, lead, BINS, CELLS, SLICE_LIMIT).map_err(Failure::unsuitable)
}

#[derive(Serialize, Deserialize)]
pub struct Pair {
    target: PathBuf,
    golden: PathBuf,
    lead: Option<Vec<u64>>,
}

/// One pair's difference, as the inspector draws it.
pub struct DeltaOp;

impl Op for DeltaOp {
    const NAME: &'static str = "compare_delta";
    type Args = Pair;
    type Item = Result<Delta, Failure>;

    fn paths(pair: &mut Pair) -> Vec<&mut PathBuf> {
        vec![&mut pair.target, &mut pair.golden]
    }

    fn run(pair: Pair, _stop: &AtomicBool, send: &(dyn Fn(Self::Item) + Sync)) {
        send(delta(&pair.target, &pair.golden, pair.lead.as_deref()));
    }
}
