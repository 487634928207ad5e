//! Pairs whose two files lie on one server are computed there by its agent, in batches: the
//! tensors never cross the link, their metrics and statistics (a few hundred bytes) do.
//! Numbers cross as their bits, so a remote pair's metrics equal a local one's exactly, NaN
//! and ±∞ included.

use super::pair_data::{PairData, pair_data};
use crate::analysis::accuracy::TensorMetrics;
use crate::analysis::accuracy::metrics::Metric;
use crate::analysis::accuracy::stats::Summary;
use crate::model::progress::{Progress, Unit};
use crate::pipeline::failure::Failure;
use crate::pipeline::remote::{self, Op};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Pairs asked of the agent in one request.
const BATCH: usize = 32;

type Bits = u64;

fn bits(v: Option<f64>) -> Option<Bits> {
    v.map(f64::to_bits)
}

fn value(b: Option<Bits>) -> Option<f64> {
    b.map(f64::from_bits)
}

#[derive(Serialize, Deserialize)]
enum WireMetric {
    Value(Bits),
    Unsupported,
    Nan,
    NotApplicable,
    ShapeUnmatched,
}

impl From<Metric> for WireMetric {
    fn from(m: Metric) -> Self {
        match m {
            Metric::Value(v) => WireMetric::Value(v.to_bits()),
            Metric::Unsupported => WireMetric::Unsupported,
            Metric::Nan => WireMetric::Nan,
            Metric::NotApplicable => WireMetric::NotApplicable,
            Metric::ShapeUnmatched => WireMetric::ShapeUnmatched,
        }
    }
}

impl From<WireMetric> for Metric {
    fn from(m: WireMetric) -> Self {
        match m {
            WireMetric::Value(b) => Metric::Value(f64::from_bits(b)),
            WireMetric::Unsupported => Metric::Unsupported,
            WireMetric::Nan => Metric::Nan,
            WireMetric::NotApplicable => Metric::NotApplicable,
            WireMetric::ShapeUnmatched => Metric::ShapeUnmatched,
        }
    }
}

#[derive(Serialize, Deserialize)]
struct WireSummary([Option<Bits>; 4]);

impl From<Summary> for WireSummary {
    fn from(s: Summary) -> Self {
        WireSummary([bits(s.max), bits(s.min), bits(s.mean), bits(s.norm)])
    }
}

impl From<WireSummary> for Summary {
    fn from(w: WireSummary) -> Self {
        let [max, min, mean, norm] = w.0.map(value);
        Summary {
            max,
            min,
            mean,
            norm,
        }
    }
}

/// A pair's data as it crosses: every field of `PairData`, numbers as bits.
#[derive(Serialize, Deserialize)]
pub struct Wire {
    dtype: String,
    shape: Vec<u64>,
    golden_dtype: String,
    golden_shape: Vec<u64>,
    /// cosine, euc_dist, max_abs_err, max_rel_err, one_thousandth, five_thousandths
    metrics: [WireMetric; 6],
    rmse: Option<Bits>,
    norm_ratio: Option<Bits>,
    rel_err: Option<Bits>,
    elements: u64,
    argmax: Option<Vec<u64>>,
    at_max: Option<(Bits, Bits)>,
    nonfinite: (u64, u64),
    note: Option<String>,
    target: WireSummary,
    golden: WireSummary,
}

impl From<PairData> for Wire {
    fn from(d: PairData) -> Self {
        let m = d.metrics;
        Wire {
            dtype: d.dtype,
            shape: d.shape,
            golden_dtype: d.golden_dtype,
            golden_shape: d.golden_shape,
            metrics: m.msprobe_six().map(WireMetric::from),
            rmse: bits(m.rmse),
            norm_ratio: bits(m.norm_ratio),
            rel_err: bits(m.rel_err),
            elements: m.elements,
            argmax: m.argmax,
            at_max: m.at_max.map(|(a, b)| (a.to_bits(), b.to_bits())),
            nonfinite: m.nonfinite,
            note: m.note,
            target: d.target.into(),
            golden: d.golden.into(),
        }
    }
}

impl From<Wire> for PairData {
    fn from(w: Wire) -> Self {
        let [cosine, euc_dist, max_abs_err, max_rel_err, one, five] = w.metrics.map(Metric::from);
        PairData {
            dtype: w.dtype,
            shape: w.shape,
            golden_dtype: w.golden_dtype,
            golden_shape: w.golden_shape,
            metrics: TensorMetrics {
                cosine,
                euc_dist,
                max_abs_err,
                max_rel_err,
                one_thousandth_ratio: one,
                five_thousandths_ratio: five,
                rmse: value(w.rmse),
                norm_ratio: value(w.norm_ratio),
                rel_err: value(w.rel_err),
                elements: w.elements,
                argmax: w.argmax,
                at_max: w
                    .at_max
                    .map(|(a, b)| (f64::from_bits(a), f64::from_bits(b))),
                nonfinite: w.nonfinite,
                note: w.note,
            },
            target: w.target.into(),
            golden: w.golden.into(),
        }
    }
}

/// What crossed for each pair of files: its data, or why it could not be computed.
pub type Computed = HashMap<(PathBuf, PathBuf), Result<PairData, Failure>>;

/// Every pair of `files` whose two files lie on one server, computed there.
pub fn compute(files: &[(&Path, &Path)], progress: &Progress) -> Computed {
    let mut by_host: BTreeMap<String, Vec<(PathBuf, PathBuf)>> = BTreeMap::new();
    for (t, g) in files {
        if let Some(ht) = remote::same_server(t, g) {
            by_host
                .entry(ht.authority())
                .or_default()
                .push((t.to_path_buf(), g.to_path_buf()));
        }
    }
    let mut out = Computed::new();
    for (host, pairs) in by_host {
        progress.stage(
            format!("computing pairs on {host}"),
            pairs.len() as u64,
            Unit::Items,
        );
        let done: Vec<Computed> = pairs
            .par_chunks(BATCH)
            .map(|chunk| {
                if progress.cancelled() {
                    return Computed::new();
                }
                let answers = remote::each_there::<Pairs, _>(chunk);
                progress.add(chunk.len() as u64);
                chunk
                    .iter()
                    .zip(answers)
                    .map(|(pair, answer)| {
                        let r = match answer {
                            Some(Ok(r)) => r.map(PairData::from),
                            Some(Err(e)) => Err(Failure::from(e)),
                            None => Err(Failure::Agent("no answer from the agent".into())),
                        };
                        (pair.clone(), r)
                    })
                    .collect()
            })
            .collect();
        out.extend(done.into_iter().flatten());
    }
    out
}

/// Pairs of tensor files compared (metrics and statistics), one per pair in order.
pub struct Pairs;

impl Op for Pairs {
    const NAME: &'static str = "compare_pairs";
    type Args = Vec<(PathBuf, PathBuf)>;
    type Item = Result<Wire, Failure>;

    fn paths(pairs: &mut Vec<(PathBuf, PathBuf)>) -> Vec<&mut PathBuf> {
        pairs.iter_mut().flat_map(|(t, g)| [t, g]).collect()
    }

    fn run(pairs: Vec<(PathBuf, PathBuf)>, _stop: &AtomicBool, send: &(dyn Fn(Self::Item) + Sync)) {
        let all: Vec<Self::Item> = pairs
            .par_iter()
            .map(|(t, g)| pair_data(t, g).map(Wire::from))
            .collect();
        all.into_iter().for_each(send);
    }
}
