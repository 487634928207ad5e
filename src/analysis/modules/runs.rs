//! Runs: the statements that one call of one function made. A function's statements come in line
//! order until it returns; the calls it makes (a child module's `forward`, a helper like
//! `apply_rotary_pos_emb`) print their own lines in between. So a statement continues the last
//! statement of the same file and function when its line comes after it, not too far on, and that
//! one was not a `return`; anything else starts a new call. The first statement of an RMSNorm
//! (`variance = x.pow(2).mean(…)`) reads no weight, the last (`return self.weight * x`) does:
//! they are one run, so they are in one module.

use crate::model::fx::SourceLoc;
use std::collections::HashMap;

/// Lines further apart than this are taken for two calls (a class's `forward` after another's
/// in the same file).
const SPAN: u32 = 40;

/// Per statement (its source, in graph order): the id of its run. A backward's statements
/// (`Backward of forward node`) run the forward's lines last to first, so they are read in
/// reverse. Consecutive statements of helpers (functions other than a `forward`) are one run.
/// A statement continues a call only when it shares a value with it (`links[s]`: the statements
/// statement `s` reads from or feeds): a call whose `return` printed no line stays open, and a
/// later call of the same function, or of one further down the file, would otherwise continue
/// it. Calls nest (an MoE block's loop calls an expert's `forward`, in the same file): the calls
/// of one function still open are kept as a stack, and a line that continues a deeper one closes
/// the calls above it.
pub fn runs(locs: &[&SourceLoc], links: &[Vec<usize>], kinds: &[Vec<u64>]) -> Vec<usize> {
    let n = locs.len();
    let mut run = vec![0; n];
    let mut run_known = vec![false; n];
    // Runs found to be one call (a line reading two earlier lines of it) are merged.
    let mut same: Vec<usize> = Vec::new();
    // The kinds of module each run is known to run in.
    let mut run_kinds: Vec<Vec<u64>> = Vec::new();
    fn find(same: &mut [usize], mut r: usize) -> usize {
        while same[r] != r {
            same[r] = same[same[r]];
            r = same[r];
        }
        r
    }
    for backward in [false, true] {
        let mine = |&s: &usize| locs[s].backward_of == backward;
        let order: Vec<usize> = if backward {
            (0..n).rev().filter(mine).collect()
        } else {
            (0..n).filter(mine).collect()
        };
        // Per file and function: the last statement of each open call, innermost last.
        let mut open: HashMap<(&str, &str), Vec<usize>> = HashMap::new();
        let mut prev: Option<usize> = None;
        for s in order {
            let l = locs[s];
            // Helpers calling helpers (`grouped_mm_experts_forward` → `_grouped_linear` →
            // `_grouped_mm`) all run for the module that called the first: one run.
            if let Some(p) = prev.filter(|&p| is_helper(l) && is_helper(locs[p])) {
                run[s] = run[p];
                run_known[s] = true;
                prev = Some(s);
                // The function's open call now ends here.
                let stack = open
                    .entry((l.file.as_str(), l.function.as_str()))
                    .or_default();
                match stack.last_mut() {
                    Some(top) if run[*top] == run[s] => *top = s,
                    _ => stack.push(s),
                }
                continue;
            }
            prev = Some(s);
            let stack = open
                .entry((l.file.as_str(), l.function.as_str()))
                .or_default();
            let mut shared: Vec<usize> = links[s]
                .iter()
                .filter(|&&q| run_known[q])
                .map(|&q| run[q])
                .collect();
            for r in shared.iter_mut() {
                *r = find(&mut same, *r);
            }
            // Open calls this line continues, innermost first: not one known to run in another
            // kind of module (a caller's line after a callee's).
            let found: Vec<usize> = (0..stack.len())
                .rev()
                .take(DEPTH)
                .filter(|&at| {
                    let pl = locs[stack[at]];
                    let r = find(&mut same, run[stack[at]]);
                    let ks = &run_kinds[r];
                    pl.line < l.line
                        && l.line - pl.line <= SPAN
                        && !is_return(pl)
                        && shared.contains(&r)
                        && (ks.is_empty()
                            || kinds[s].is_empty()
                            || kinds[s].iter().any(|k| ks.contains(k)))
                })
                .collect();
            let r = match (found.first(), found.last()) {
                (Some(&inner), Some(&outer)) => {
                    let r = find(&mut same, run[stack[inner]]);
                    for &at in &found[1..] {
                        let o = find(&mut same, run[stack[at]]);
                        same[o] = r;
                        let moved = std::mem::take(&mut run_kinds[o]);
                        run_kinds[r].extend(moved);
                    }
                    stack.truncate(outer);
                    r
                }
                _ => {
                    same.push(same.len());
                    run_kinds.push(Vec::new());
                    same.len() - 1
                }
            };
            run[s] = r;
            for &k in &kinds[s] {
                if !run_kinds[r].contains(&k) {
                    run_kinds[r].push(k);
                }
            }
            run_known[s] = true;
            stack.push(s);
            if stack.len() > 4 * DEPTH {
                stack.drain(..DEPTH);
            }
        }
    }
    for r in run.iter_mut() {
        *r = find(&mut same, *r);
    }
    run
}

/// How many open calls of one function are looked through.
const DEPTH: usize = 8;

pub fn is_return(l: &SourceLoc) -> bool {
    l.code.trim_start().starts_with("return")
}

/// A module's own code is its `forward`; any other function (`apply_rotary_pos_emb`,
/// `sdpa_attention_forward`, a cache's `update`, a method like `compute_bias`) runs in the
/// module that called it.
pub fn is_helper(l: &SourceLoc) -> bool {
    l.function != "forward"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn loc(function: &str, line: u32, code: &str) -> SourceLoc {
        SourceLoc {
            file: "m.py".into(),
            line,
            function: function.into(),
            code: code.into(),
            backward_of: false,
        }
    }

    #[test]
    fn a_call_continues_across_its_callees_and_ends_at_return() {
        let l = [
            loc("forward", 65, "v = x.pow(2).mean(-1)"),
            loc("forward", 66, "x = x * torch.rsqrt(v)"),
            loc("forward", 67, "return self.weight * x"),
            loc("forward", 244, "q = self.q_proj(x)"),
            loc("rotate", 121, "x1 = x[..., :2]"),
            loc("forward", 245, "k = self.k_proj(x)"),
            loc("forward", 65, "v = x.pow(2).mean(-1)"),
        ];
        let refs: Vec<&SourceLoc> = l.iter().collect();
        let links = vec![
            vec![1],
            vec![0, 2],
            vec![1, 3],
            vec![2, 5],
            vec![],
            vec![3],
            vec![5],
        ];
        let r = runs(&refs, &links, &vec![Vec::new(); l.len()]);
        assert_eq!(r[0], r[1]);
        assert_eq!(r[1], r[2]);
        assert_ne!(r[2], r[3], "after a return");
        assert_ne!(r[3], r[4]);
        assert_eq!(r[3], r[5], "across a callee");
        assert_ne!(r[5], r[6], "the line goes back: a new call");
    }

    #[test]
    fn a_call_resumes_after_a_nested_call_of_the_same_function() {
        let l = [
            loc("forward", 668, "x = h[None, top_x]"),
            loc("forward", 605, "y = self.act_fn(self.w1(x)) * self.w3(x)"),
            loc("forward", 606, "y = self.w2(y)"),
            loc("forward", 669, "y = expert_layer(x) * w"),
            loc("forward", 285, "x = residual + x"),
            loc("forward", 243, "v = x.pow(2).mean(-1)"),
        ];
        let refs: Vec<&SourceLoc> = l.iter().collect();
        let links = vec![
            vec![1, 3],
            vec![0, 2],
            vec![1, 3],
            vec![0, 2, 4],
            vec![3, 5],
            vec![4],
        ];
        let r = runs(&refs, &links, &vec![Vec::new(); l.len()]);
        assert_eq!(r[1], r[2]);
        assert_eq!(
            r[0], r[3],
            "the block's loop resumes: it reads what it made before"
        );
        assert_ne!(r[0], r[1]);
        assert_ne!(r[5], r[0], "a new call reads nothing of the open one");
    }
}
