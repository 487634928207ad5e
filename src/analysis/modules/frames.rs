//! Frames: the module whose code a statement runs, from the weights it uses or from the
//! frames the same line ran in elsewhere.

use super::code::mentions;
use super::paths::{ModId, Paths, ROOT};
use super::runs::is_helper;
use crate::model::fx::SourceLoc;
use std::collections::{HashMap, HashSet};

/// Where a statement's code is: file and line (the backward's "Backward of forward node" comment
/// names the forward's line, so both phases share the key).
pub type LocKey = (String, u32);

/// The frames every source line ran in.
#[derive(Debug, Clone, Default)]
pub struct LineFrames {
    pub by_line: HashMap<LocKey, Vec<ModId>>,
    /// Lines whose frame came from their own evidence (weights, the children they call, the
    /// same line elsewhere), not from the statement before: a weightless child their code
    /// calls (`self.dropout(x)`) can be named under that frame.
    pub own: HashSet<LocKey>,
    /// Lines that are one call of a child (`x = self.dropout(x)`, `x = self.wte(ids)`): the
    /// child each ran, for the backward, whose statements differentiate that call.
    pub calls: HashMap<LocKey, Vec<ModId>>,
}

impl LineFrames {
    pub fn get(&self, k: &LocKey) -> &[ModId] {
        self.by_line.get(k).map_or(&[], Vec::as_slice)
    }

    pub fn add_call(&mut self, k: LocKey, m: ModId) {
        let v = self.calls.entry(k).or_default();
        if !v.contains(&m) {
            v.push(m);
        }
    }

    pub fn add(&mut self, k: LocKey, m: ModId, own: bool) {
        let v = self.by_line.entry(k.clone()).or_default();
        if !v.contains(&m) {
            v.push(m);
        }
        if own {
            self.own.insert(k);
        }
    }
}

/// The frame of a statement that uses module `a`'s weights: `a` itself when the code reads one
/// of its attributes (`self.weight`: the statement is in `a`'s own forward), else `a`'s parent
/// when the code names `a` (`self.q_proj(x)`, a torch module whose inside has no source comment
/// of its own: the caller's line is printed over it). `None` when the code names neither: the
/// weight is tied to another module's (`logits = self.lm_head(x)` reading the embedding's). A
/// helper's code names no module: it was handed the weights of the module it works for.
pub fn frame_of_anchor(
    a: ModId,
    loc: &SourceLoc,
    attrs: Option<&HashMap<ModId, Vec<String>>>,
    paths: &Paths,
) -> Option<ModId> {
    if a == ROOT {
        return Some(ROOT);
    }
    let code = loc.code.as_str();
    let own = attrs
        .and_then(|m| m.get(&a))
        .is_some_and(|list| list.iter().any(|at| mentions(code, at)));
    if own {
        Some(a)
    } else if names(code, a, paths) {
        // `self.experts[i](x)` runs in the list's parent.
        let up = paths.parent(a);
        Some(if is_index(paths.name(a)) {
            paths.parent(up)
        } else {
            up
        })
    } else if is_helper(loc) {
        // A helper given the weights (`_grouped_mm(x, weight)`) works for their module.
        Some(a)
    } else {
        None
    }
}

/// The code names module `m` (`self.q_proj`), or the list it is in (`self.experts[i]`).
pub fn names(code: &str, m: ModId, paths: &Paths) -> bool {
    let name = paths.name(m);
    if is_index(name) {
        let parent = paths.parent(m);
        parent != ROOT && mentions(code, paths.name(parent))
    } else {
        mentions(code, name)
    }
}

/// Of the frames a line ran in, the one that fits the context best: each candidate's layer
/// indices are replaced by the context's where the paths agree (`layers.0.attn` in the context of
/// `layers.5.mlp` is `layers.5.attn`), then the longest shared prefix wins.
pub fn choose(cands: &[ModId], ctx: &[ModId], paths: &mut Paths) -> ModId {
    // (shared depth, earlier context, unchanged candidate): bigger is better.
    type Key = (usize, std::cmp::Reverse<usize>, usize);
    let mut best: Option<(Key, ModId)> = None;
    for (xi, &x) in ctx.iter().enumerate() {
        for &c in cands {
            let filled = fill(c, x, paths);
            let key = (
                shared(filled, x, paths),
                std::cmp::Reverse(xi),
                usize::from(filled == c),
            );
            if best.is_none_or(|(k, _)| key > k) {
                best = Some((key, filled));
            }
        }
    }
    best.map_or_else(|| cands.first().copied().unwrap_or(ROOT), |b| b.1)
}

fn fill(c: ModId, x: ModId, paths: &mut Paths) -> ModId {
    let cs: Vec<String> = paths.segments(c).iter().map(|s| s.to_string()).collect();
    let xs: Vec<String> = paths.segments(x).iter().map(|s| s.to_string()).collect();
    let mut out: Vec<String> = Vec::with_capacity(cs.len());
    for (i, seg) in cs.iter().enumerate() {
        let agree = i < xs.len() && out[..] == xs[..i];
        if agree && is_index(seg) && is_index(&xs[i]) {
            out.push(xs[i].clone());
        } else {
            out.push(seg.clone());
        }
    }
    paths.intern_segments(&out)
}

fn shared(a: ModId, b: ModId, paths: &Paths) -> usize {
    paths.depth(paths.common(a, b))
}

pub fn is_index(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choose_moves_a_frame_to_the_context_layer() {
        let mut p = Paths::default();
        let a0 = p.intern("layers.0.attn");
        let n0 = p.intern("layers.0.norm");
        let ctx = p.intern("layers.5.attn.q_proj");
        let got = choose(&[a0, n0], &[ctx], &mut p);
        assert_eq!(p.path(got), "layers.5.attn");
    }

    #[test]
    fn a_tied_weight_gives_no_frame() {
        let mut p = Paths::default();
        let wte = p.intern("transformer.wte");
        let e0 = p.intern("experts.0");
        let at = |code: &str, function: &str| SourceLoc {
            file: "m.py".into(),
            line: 1,
            function: function.into(),
            code: code.into(),
            backward_of: false,
        };
        let head = at("logits = self.lm_head(h)", "forward");
        assert_eq!(frame_of_anchor(wte, &head, None, &p), None);
        let t = p.intern("transformer");
        let emb = at("x = self.wte(ids)", "forward");
        assert_eq!(frame_of_anchor(wte, &emb, None, &p), Some(t));
        let call = at("y = self.experts[i](x)", "forward");
        assert_eq!(frame_of_anchor(e0, &call, None, &p), Some(ROOT));
        let helper = at("return _grouped_mm(x, w)", "_grouped_linear");
        assert_eq!(frame_of_anchor(e0, &helper, None, &p), Some(e0));
    }
}
