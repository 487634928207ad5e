//! Layers without names: when no Dynamo graph says whose the parameters are (a tree that kept
//! only the pass dumps, like `stress_20k`), the repeated block still shows in the source
//! comments. The source lines that run the same number of times K (K ≥ 2, the commonest such
//! count) are the block's; each time the first of them comes round again, the next block
//! starts (moved back over the statements that come before it alike in the first two blocks,
//! so a block starts at its true first line even when that line runs several times per block). Blocks are named `layers.0` … `layers.K-1` in execution order (a backward runs them
//! last to first); what comes before the first and after the last is the root's.

use super::Confidence;
use super::frames::LocKey;
use super::ops::is_compute;
use crate::model::fx::FxGraph;
use rustc_hash::FxHashMap as HashMap;

/// Per node: `Some((k, confidence))` for a node inside the k-th block.
pub fn blocks(g: &FxGraph) -> Vec<Option<(usize, Confidence)>> {
    let n = g.nodes.len();
    let mut out = vec![None; n];
    // Statements: (first node, loc) for each run of nodes under one comment.
    let mut stmts: Vec<(usize, LocKey)> = Vec::new();
    let mut backward = 0usize;
    let mut forward = 0usize;
    for (i, node) in g.nodes.iter().enumerate() {
        let Some(loc) = node.source.as_ref().filter(|_| is_compute(node)) else {
            continue;
        };
        let key = (loc.file.clone(), loc.line);
        if stmts.last().is_none_or(|(_, k)| *k != key) {
            stmts.push((i, key));
            if loc.backward_of {
                backward += 1;
            } else {
                forward += 1;
            }
        }
    }
    let mut count: HashMap<&LocKey, usize> = HashMap::default();
    for (_, k) in &stmts {
        *count.entry(k).or_default() += 1;
    }
    let mut by_count: HashMap<usize, usize> = HashMap::default();
    for &c in count.values().filter(|&&c| c >= 2) {
        *by_count.entry(c).or_default() += 1;
    }
    let Some((&k_blocks, _)) = by_count.iter().max_by_key(|(c, keys)| (**keys, **c)) else {
        return out;
    };
    let in_block = |k: &LocKey| count.get(k) == Some(&k_blocks);
    let Some(first_key) = stmts.iter().map(|(_, k)| k).find(|k| in_block(k)) else {
        return out;
    };
    let at: Vec<usize> = (0..stmts.len())
        .filter(|&s| &stmts[s].1 == first_key)
        .collect();
    // The first line that runs exactly K times may sit inside the block (lines run twice per
    // layer, like a norm's, come before it): move every start back over the statements that
    // precede both the first and the second occurrence alike.
    let mut back = 0;
    if let [a, b, ..] = at[..] {
        while back < a && back + 1 < b - a && stmts[a - 1 - back].1 == stmts[b - 1 - back].1 {
            back += 1;
        }
    }
    let starts: Vec<usize> = at.iter().map(|&s| stmts[s - back].0).collect();
    // Likewise the last block runs as long as it repeats the one before it.
    let last_end = match at[..] {
        [.., p, l] => {
            let (p, l) = (p - back, l - back);
            let mut j = 0;
            while l + j < stmts.len() && p + j < l && stmts[p + j].1 == stmts[l + j].1 {
                j += 1;
            }
            Some(stmts.get(l + j).map_or(n, |s| s.0))
        }
        _ => None,
    };
    let last = stmts
        .iter()
        .rev()
        .find(|(_, k)| in_block(k))
        .map_or(0, |&(i, _)| i);
    let end = (last..n)
        .find(|&i| {
            g.nodes[i].op != crate::model::fx::OpKind::Output
                && g.nodes[i].source.is_some()
                && stmts.iter().any(|(s, k)| *s == i && !in_block(k))
        })
        .unwrap_or(n)
        .max(last_end.unwrap_or(0));
    let reversed = backward > forward;
    for (b, &start) in starts.iter().enumerate() {
        let stop = starts.get(b + 1).copied().unwrap_or(end);
        let index = if reversed { starts.len() - 1 - b } else { b };
        for slot in out.iter_mut().take(stop).skip(start) {
            *slot = Some((index, Confidence::Low));
        }
    }
    for (i, node) in g.nodes.iter().enumerate() {
        if !is_compute(node) {
            out[i] = None;
        }
    }
    out
}
