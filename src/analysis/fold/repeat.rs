//! Repeated blocks: sibling modules with the same structure (`layers.0`–`layers.23`), so the
//! view can say "24 × the same block" and which of them a pass changed.

use super::{FoldTree, ModIx};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// Consecutive siblings whose subtrees hold the same sequence of ops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatRun {
    pub parent: ModIx,
    pub members: Vec<ModIx>,
}

/// Runs of two or more structurally equal siblings. `op(n)` is what union node `n` computes in
/// the pass on screen (its target), `None` when the pass lacks it.
pub fn repeated_runs<'a>(tree: &FoldTree, op: impl Fn(u32) -> Option<&'a str>) -> Vec<RepeatRun> {
    let mut sig = vec![0u64; tree.modules.len()];
    // Children have higher indices than their parents: fill from the leaves up.
    for m in (0..tree.modules.len()).rev() {
        let md = &tree.modules[m];
        let mut h = DefaultHasher::new();
        md.name.chars().all(|c| c.is_ascii_digit()).hash(&mut h);
        for &n in &md.nodes {
            op(n).hash(&mut h);
        }
        for &c in &md.children {
            sig[c as usize].hash(&mut h);
        }
        sig[m] = h.finish();
    }
    let mut runs = Vec::new();
    for (p, md) in tree.modules.iter().enumerate() {
        let mut i = 0;
        while i < md.children.len() {
            let s = sig[md.children[i] as usize];
            let j = (i..md.children.len())
                .find(|&j| sig[md.children[j] as usize] != s)
                .unwrap_or(md.children.len());
            if j - i >= 2 {
                runs.push(RepeatRun {
                    parent: p as ModIx,
                    members: md.children[i..j].to_vec(),
                });
            }
            i = j;
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_layers_form_a_run_and_a_different_one_breaks_it() {
        let paths: Vec<String> = (0..4)
            .flat_map(|l| (0..3).map(move |_| format!("layers.{l}")))
            .collect();
        let t = FoldTree::new(&paths, &[]);
        let ops = ["mm", "add", "relu"];
        let runs = repeated_runs(&t, |n| Some(ops[n as usize % 3]));
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].members.len(), 4);
        // Layer 2's relu replaced: 0–1 still repeat, 2 stands alone, 3 alone.
        let runs = repeated_runs(&t, |n| {
            Some(if n == 8 { "gelu" } else { ops[n as usize % 3] })
        });
        assert_eq!(runs.len(), 1);
        assert_eq!(runs[0].members.len(), 2);
    }
}
