//! One tensor's statistics on every rank: which rank stands apart from the others.
//!
//! Ranks of a data-parallel or tensor-parallel run compute the same node on different data or
//! shards, so their statistics are close; the one that is not is where to look. A rank holding
//! NaN or ±Inf while the others hold none stands apart first; otherwise, with three ranks or
//! more, the one whose min, max and mean are farthest from the median of the others (relative
//! to their size). Two clean ranks are as far from each other as can be: neither is marked.

use crate::model::tensor::TensorStats;

/// The rank (index into `stats`) that stands apart, and why; `None` when none does.
pub fn farthest(stats: &[&TensorStats]) -> Option<(usize, String)> {
    let bad = |s: &TensorStats| s.nan + s.inf() > 0;
    let n_bad = stats.iter().filter(|s| bad(s)).count();
    if n_bad > 0 && n_bad < stats.len() {
        // The lone rank on its side; with two ranks, the one holding the bad values.
        let lone = if n_bad == 1 {
            stats.iter().position(|s| bad(s))
        } else if stats.len() - n_bad == 1 && stats.len() > 2 {
            stats.iter().position(|s| !bad(s))
        } else {
            None
        };
        return lone.map(|i| {
            let why = if bad(stats[i]) {
                "the only rank holding NaN/Inf"
            } else {
                "the only rank without NaN/Inf"
            };
            (i, why.to_string())
        });
    }
    if stats.len() < 3 {
        return None;
    }
    let feats = |s: &TensorStats| [s.min, s.max, s.mean];
    let mut d: Vec<f64> = Vec::with_capacity(stats.len());
    for (i, s) in stats.iter().enumerate() {
        let mut sum = 0.0;
        for (f, x) in feats(s).into_iter().enumerate() {
            let mut others: Vec<f64> = stats
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .filter_map(|(_, o)| feats(o)[f])
                .collect();
            let (Some(x), Some(m)) = (x, median(&mut others)) else {
                continue;
            };
            let scale = others
                .iter()
                .map(|v| v.abs())
                .fold(0.0, f64::max)
                .max(1e-12);
            sum += (x - m).abs() / scale;
        }
        d.push(sum);
    }
    let (i, &best) = d.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1))?;
    let second = d
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != i)
        .map(|(_, v)| *v)
        .fold(0.0, f64::max);
    // Marked only when it is clearly apart: twice as far as the next rank, and not a rounding.
    (best > 1e-6 && best > 2.0 * second).then(|| {
        (
            i,
            format!("min/max/mean farthest from the other ranks' median ({best:.2} relative)"),
        )
    })
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let k = v.len() / 2;
    Some(if v.len().is_multiple_of(2) {
        (v[k - 1] + v[k]) / 2.0
    } else {
        v[k]
    })
}
