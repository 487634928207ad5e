//! Each pair's metrics: both files opened (memory-mapped when large), one parallel pass over
//! them; or, with statistics only, the two summaries. Pairs run in parallel too. A pair whose
//! data cannot be read gets one line saying why; the others are still compared.

use super::pair_data::{pair_data, read};
use super::sides::{Side, is_scalar};
use crate::analysis::accuracy::{
    DtypeClass, Level, Mode, Pair, PairedBy, TensorMetrics, TensorRef, metrics, stats, verdict,
};
use crate::model::progress::{Progress, Unit};
use crate::pipeline::failure::Failure;
use rayon::prelude::*;
use std::path::{Path, PathBuf};

/// A pair computed, and whether its data could not be read (the pair is then an error).
pub struct Computed {
    pub pair: Pair,
    pub failed: Option<Failure>,
}

fn base(t: &TensorRef, g: &TensorRef, how: PairedBy) -> Pair {
    Pair {
        key: t.key.clone(),
        golden_key: g.key.clone(),
        call: t.call.clone(),
        golden_call: g.call.clone(),
        node: t.node.clone().or_else(|| g.node.clone()),
        slot: t.slot.clone(),
        role: t.role,
        dtype: t.dtype.clone(),
        golden_dtype: g.dtype.clone(),
        shape: t.shape.clone(),
        golden_shape: g.shape.clone(),
        requires_grad: t.requires_grad,
        golden_requires_grad: g.requires_grad,
        paired_by: how,
        files: None,
        order: t.order,
        golden_order: g.order,
        metrics: None,
        target_summary: t.summary,
        golden_summary: g.summary,
        stats: None,
        norm_ratio: None,
        error: None,
        added_error: None,
        result: Level::Pass,
        reason: String::new(),
        messages: Vec::new(),
    }
}

/// Counts one pair done when the pair's work ends, whichever way it returns.
struct Counted<'a>(&'a Progress);

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        self.0.add(1);
    }
}

/// Every pair of `pairs` (indices into the two sides), in parallel.
pub fn all(
    target: &Side,
    golden: &Side,
    pairs: &[(usize, usize, PairedBy)],
    mode: Mode,
    progress: &Progress,
) -> Vec<Computed> {
    // Pairs on a server are computed there first, in batches; the rest here.
    let far = if mode == Mode::Tensor {
        let files: Vec<(&Path, &Path)> = pairs
            .iter()
            .filter_map(|&(i, j, _)| {
                Some((target.files[i].as_deref()?, golden.files[j].as_deref()?))
            })
            .collect();
        super::remote::compute(&files, progress)
    } else {
        Default::default()
    };
    progress.stage("computing pairs", pairs.len() as u64, Unit::Items);
    pairs
        .par_iter()
        .map(|&(i, j, how)| {
            let _done = Counted(progress);
            let mut p = base(&target.tensors[i], &golden.tensors[j], how);
            if progress.cancelled() {
                // The result is dropped: only the rest of the work is saved.
                return Computed {
                    pair: p,
                    failed: Some(Failure::Cancelled),
                };
            }
            let files = (&target.files[i], &golden.files[j]);
            let failed = match (mode, files) {
                // A scalar argument: compared by value (msprobe's Parameters checker), its
                // statistics diffs as msprobe writes them; no error of its own.
                _ if is_scalar(&p.dtype) || is_scalar(&p.golden_dtype) => {
                    statistics(&mut p);
                    p.error = None;
                    p.norm_ratio = None;
                    if mode == Mode::Tensor {
                        p.stats = None;
                        p.metrics = Some(TensorMetrics::unsupported(
                            "a scalar argument: compared by its value",
                        ));
                    }
                    None
                }
                (Mode::Tensor, (Some(tf), Some(gf))) => tensor(&mut p, tf, gf, &far).err(),
                _ => summaries(&mut p, files).err().or_else(|| {
                    statistics(&mut p);
                    None
                }),
            };
            Computed { pair: p, failed }
        })
        .collect()
}

fn tensor(
    p: &mut Pair,
    tf: &Path,
    gf: &Path,
    far: &super::remote::Computed,
) -> Result<(), Failure> {
    p.files = Some((tf.to_path_buf(), gf.to_path_buf()));
    let d = match far.get(&(tf.to_path_buf(), gf.to_path_buf())) {
        Some(Ok(d)) => d.clone(),
        Some(Err(e)) => return Err(e.clone()),
        None => pair_data(tf, gf)?,
    };
    if p.dtype.is_empty() {
        p.dtype = d.dtype;
        p.shape = d.shape;
    }
    if p.golden_dtype.is_empty() {
        p.golden_dtype = d.golden_dtype;
        p.golden_shape = d.golden_shape;
    }
    p.target_summary.get_or_insert(d.target);
    p.golden_summary.get_or_insert(d.golden);
    p.error = d.metrics.rel_err;
    p.norm_ratio = d.metrics.norm_ratio;
    p.metrics = Some(d.metrics);
    Ok(())
}

/// Statistics mode against a side that recorded none (an npy dump): its statistics computed
/// from its file.
fn summaries(p: &mut Pair, files: (&Option<PathBuf>, &Option<PathBuf>)) -> Result<(), Failure> {
    for (side, summary, file) in [
        ("target", &mut p.target_summary, files.0),
        ("golden", &mut p.golden_summary, files.1),
    ] {
        if let (None, Some(f)) = (&summary, file) {
            *summary = Some(metrics::summarize(&read(side, f)?));
        }
    }
    Ok(())
}

fn statistics(p: &mut Pair) {
    let (Some(t), Some(g)) = (p.target_summary, p.golden_summary) else {
        return;
    };
    p.stats = Some(stats::diff(&t, &g));
    p.error = Some(stats::error(&t, &g));
    p.norm_ratio = stats::norm_ratio(&t, &g);
}

/// The pair's one-line reason: msprobe's messages, what could not be read, fxray's notes.
pub fn reason(p: &Pair, failed: Option<&Failure>) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(f) = failed {
        parts.push(format!("not compared: {f}"));
    }
    parts.extend(p.messages.iter().cloned());
    if let Some(n) = p.metrics.as_ref().and_then(|m| m.note.as_deref()) {
        parts.push(n.to_string());
    }
    let (a, b) = (DtypeClass::of(&p.dtype), DtypeClass::of(&p.golden_dtype));
    if a != b && failed.is_none() {
        parts.push(format!(
            "dtypes differ (target {}, golden {}): information, held to {}'s tolerance {}",
            a.short(),
            b.short(),
            if verdict::tolerance(a) >= verdict::tolerance(b) {
                a.short()
            } else {
                b.short()
            },
            verdict::pair_tolerance(p)
        ));
    }
    parts.join("; ")
}
