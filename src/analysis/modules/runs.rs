//! Runs: the statements that one call of one function made. A function's statements come in line
//! order until it returns; the calls it makes (a child module's `forward`, a helper like
//! `apply_rotary_pos_emb`) print their own lines in between. So a statement continues the last
//! statement of the same file and function when its line comes after it, not too far on, and that
//! one was not a `return`; anything else starts a new call. The first statement of an RMSNorm
//! (`variance = x.pow(2).mean(…)`) reads no weight, the last (`return self.weight * x`) does:
//! they are one run, so they are in one module.

use crate::model::fx::SourceLoc;
use rustc_hash::FxHashMap as HashMap;

/// Lines further apart than this are taken for two calls (a class's `forward` after another's
/// in the same file).
const SPAN: u32 = 40;

/// Per statement (its source, in graph order): the id of its run. `reads[s]`: the statements
/// statement `s` reads from (they share values); `kinds[s]`: the kinds of module its line is known to run in
/// (frames with the layer indices left out). A backward's statements (`Backward of forward
/// node`) run the forward's lines last to first, so they are read in reverse. Consecutive
/// statements of helpers (functions other than a `forward`) are one run.
///
/// A statement continues a call of its function only when it shares a value with it: a call
/// whose `return` printed no line stays open, and a later call of the same function, or of one
/// further down the file, would otherwise continue it. Nor does it continue a call known to run
/// in another kind of module (a caller's line after its callee's). Calls nest (an MoE block's loop calls an expert's
/// `forward`, in the same file): the calls of one function still open are kept as a stack, and
/// a line that continues a deeper one closes the calls above it.
pub fn runs(locs: &[&SourceLoc], reads: &[Vec<usize>], kinds: &[Vec<u32>]) -> Vec<usize> {
    let n = locs.len();
    // Each statement's links both ways, as sets: one value read by every layer (a rotary
    // embedding's cos) gathers a link per layer, and a membership test per push was
    // quadratic in the layers.
    let mut links: Vec<Vec<usize>> = reads.to_vec();
    for (s, rs) in reads.iter().enumerate() {
        for &q in rs {
            links[q].push(s);
        }
    }
    for l in &mut links {
        l.sort_unstable();
        l.dedup();
    }
    let mut b = Builder {
        run: vec![0; n],
        placed: vec![false; n],
        same: Vec::new(),
        info: Vec::new(),
    };
    for backward in [false, true] {
        let mine = |&s: &usize| locs[s].backward_of == backward;
        let order: Vec<usize> = if backward {
            (0..n).rev().filter(mine).collect()
        } else {
            (0..n).filter(mine).collect()
        };
        // Per file and function: the last statement of each open call, innermost last.
        let mut open: HashMap<(&str, &str), Vec<usize>> = HashMap::default();
        let mut prev: Option<usize> = None;
        for s in order {
            let l = locs[s];
            let stack = open.entry((&*l.file, l.function.as_str())).or_default();
            // Helpers calling helpers (`grouped_mm_experts_forward` → `_grouped_linear` →
            // `_grouped_mm`) all run for the module that called the first: one run.
            if let Some(p) = prev.filter(|&p| is_helper(l) && is_helper(locs[p])) {
                let r = b.find(b.run[p]);
                b.place(s, r, kinds);
                prev = Some(s);
                // The function's open call now ends here.
                match stack.last_mut() {
                    Some(top) if b.find(b.run[*top]) == r => *top = s,
                    _ => stack.push(s),
                }
                continue;
            }
            prev = Some(s);
            let shared: Vec<usize> = links[s]
                .iter()
                .filter(|&&q| b.placed[q])
                .map(|&q| b.run[q])
                .collect::<Vec<_>>()
                .into_iter()
                .map(|r| b.find(r))
                .collect();
            // Open calls this line continues, innermost first.
            let found: Vec<usize> = (0..stack.len())
                .rev()
                .take(DEPTH)
                .filter(|&at| {
                    let pl = locs[stack[at]];
                    let r = b.find(b.run[stack[at]]);
                    pl.line < l.line
                        && l.line - pl.line <= SPAN
                        && !is_return(pl)
                        && shared.contains(&r)
                        && b.fits(r, s, kinds)
                })
                .collect();
            let r = match (found.first(), found.last()) {
                (Some(&inner), Some(&outer)) => {
                    let r = b.find(b.run[stack[inner]]);
                    for &at in &found[1..] {
                        let o = b.find(b.run[stack[at]]);
                        b.merge(o, r);
                    }
                    stack.truncate(outer);
                    r
                }
                _ => b.new_run(),
            };
            b.place(s, r, kinds);
            stack.push(s);
            if stack.len() > 4 * DEPTH {
                stack.drain(..DEPTH);
            }
        }
    }
    (0..n).map(|s| b.find(b.run[s])).collect()
}

/// How many open calls of one function are looked through.
const DEPTH: usize = 8;

/// What is known of one run while the statements are read.
#[derive(Default)]
struct RunInfo {
    /// Kinds of module it is known to run in.
    kinds: Vec<u32>,
}

struct Builder {
    run: Vec<usize>,
    placed: Vec<bool>,
    /// Runs found to be one call (a line reading two earlier lines of it) are merged.
    same: Vec<usize>,
    info: Vec<RunInfo>,
}

impl Builder {
    fn find(&mut self, mut r: usize) -> usize {
        while self.same[r] != r {
            self.same[r] = self.same[self.same[r]];
            r = self.same[r];
        }
        r
    }

    fn new_run(&mut self) -> usize {
        let r = self.same.len();
        self.same.push(r);
        self.info.push(RunInfo::default());
        r
    }

    fn merge(&mut self, from: usize, into: usize) {
        if from == into {
            return;
        }
        self.same[from] = into;
        let moved = std::mem::take(&mut self.info[from]);
        let to = &mut self.info[into];
        for k in moved.kinds {
            if !to.kinds.contains(&k) {
                to.kinds.push(k);
            }
        }
    }

    /// Statement `s` can be in run `r`: it is not known to run in another kind of module.
    fn fits(&self, r: usize, s: usize, kinds: &[Vec<u32>]) -> bool {
        let info = &self.info[r];
        info.kinds.is_empty()
            || kinds[s].is_empty()
            || kinds[s].iter().any(|k| info.kinds.contains(k))
    }

    fn place(&mut self, s: usize, r: usize, kinds: &[Vec<u32>]) {
        self.run[s] = r;
        self.placed[s] = true;
        let info = &mut self.info[r];
        for &k in &kinds[s] {
            if !info.kinds.contains(&k) {
                info.kinds.push(k);
            }
        }
    }
}

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
