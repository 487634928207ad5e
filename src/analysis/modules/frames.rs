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
    /// Lines whose every node, each time they ran, was in the child they called (a norm's
    /// call that is one argument of a longer call, `self.ln(x),`): their gradient is that
    /// child's whole, as a line that is one call is.
    pub whole: HashSet<LocKey>,
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

/// The frames each line ran in, merged for choosing: this graph's first (in the order found),
/// then the caller's not among them. Kept per line as this graph's grow: a line of a 400-layer
/// model ran in 400 frames and has 400 statements, and merging anew for each made module
/// inference quadratic in the layers.
#[derive(Debug, Default)]
pub struct KnownFrames {
    /// The merged list, how many of its first entries are this graph's, and those as a set
    /// (a frame already known is the common case, and finding it in a list of one frame per
    /// layer, per statement, was quadratic in the layers).
    by_line: HashMap<LocKey, (Vec<ModId>, usize, HashSet<ModId>)>,
}

impl KnownFrames {
    pub fn get(&mut self, k: &LocKey, here: &LineFrames, caller: Option<&LineFrames>) -> &[ModId] {
        if !self.by_line.contains_key(k) {
            let mut list: Vec<ModId> = here.get(k).to_vec();
            let local = list.len();
            let own: HashSet<ModId> = list.iter().copied().collect();
            if let Some(f) = caller {
                let mut seen = own.clone();
                list.extend(f.get(k).iter().copied().filter(|&m| seen.insert(m)));
            }
            self.by_line.insert(k.clone(), (list, local, own));
        }
        &self.by_line[k].0
    }

    /// `m` became one of this graph's frames of line `k` (as `LineFrames::add`).
    pub fn add(&mut self, k: &LocKey, m: ModId) {
        let Some((list, local, own)) = self.by_line.get_mut(k) else {
            return;
        };
        if !own.insert(m) {
            return;
        }
        match list[*local..].iter().position(|&x| x == m) {
            // From the caller's part to the end of this graph's.
            Some(p) => list[*local..=*local + p].rotate_right(1),
            None => list.insert(*local, m),
        }
        *local += 1;
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
    // (shared depth, earlier context, unchanged candidate): bigger is better; on a tie the
    // candidate listed first.
    type Key = (usize, std::cmp::Reverse<usize>, usize);
    // Candidates of one kind (`layers.0.attn`, `layers.1.attn`, …) fill alike: the context's
    // indices replace theirs up to the same depth. So each kind is weighed once per context
    // module, not each of a 400-layer model's candidates.
    let mut kinds: Vec<(u32, usize)> = Vec::new();
    for (pos, &c) in cands.iter().enumerate() {
        let k = paths.kind(c);
        if !kinds.iter().any(|&(x, _)| x == k) {
            kinds.push((k, pos));
        }
    }
    let mut best: Option<(Key, std::cmp::Reverse<usize>, ModId)> = None;
    for (xi, &x) in ctx.iter().enumerate() {
        for &(k, first) in &kinds {
            let c0 = cands[first];
            let depth = agreeing(c0, x, paths);
            // The candidate that already sits where the context's indices would put it.
            let at = paths.ancestor(x, depth);
            let own = cands[first..]
                .iter()
                .position(|&c| paths.kind(c) == k && paths.ancestor(c, depth) == at)
                .map(|p| p + first);
            let (pos, filled, unchanged) = match own {
                Some(p) => (p, cands[p], 1),
                None => (first, fill(c0, x, paths), 0),
            };
            let key = (
                (depth, std::cmp::Reverse(xi), unchanged),
                std::cmp::Reverse(pos),
                filled,
            );
            if best.is_none_or(|b| (key.0, key.1) > (b.0, b.1)) {
                best = Some(key);
            }
        }
    }
    best.map_or_else(|| cands.first().copied().unwrap_or(ROOT), |b| b.2)
}

/// How many leading segments of `c` agree with `x`'s once `c`'s layer indices take `x`'s: the
/// depth `fill(c, x)` shares with `x`.
fn agreeing(c: ModId, x: ModId, paths: &Paths) -> usize {
    let (cs, xs) = (paths.segments(c), paths.segments(x));
    cs.iter()
        .zip(&xs)
        .take_while(|(a, b)| a == b || (is_index(a) && is_index(b)))
        .count()
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

pub use super::paths::is_index;

#[cfg(test)]
mod tests {
    use super::*;

    /// `choose` as it was first written: every candidate filled against every context module.
    fn choose_each(cands: &[ModId], ctx: &[ModId], paths: &mut Paths) -> ModId {
        type Key = (usize, std::cmp::Reverse<usize>, usize);
        let mut best: Option<(Key, ModId)> = None;
        for (xi, &x) in ctx.iter().enumerate() {
            for &c in cands {
                let filled = fill(c, x, paths);
                let shared = paths.depth(paths.common(filled, x));
                let key = (shared, std::cmp::Reverse(xi), usize::from(filled == c));
                if best.is_none_or(|(k, _)| key > k) {
                    best = Some((key, filled));
                }
            }
        }
        best.map_or_else(|| cands.first().copied().unwrap_or(ROOT), |b| b.1)
    }

    #[test]
    fn choosing_by_kind_equals_filling_every_candidate() {
        let mut p = Paths::default();
        let names = [
            "layers.0.attn",
            "layers.3.attn",
            "layers.3.mlp",
            "layers.1.mlp.experts.2",
            "layers.1.mlp.experts.0",
            "layers.2.mlp.experts.0",
            "h.0",
            "h.1.ln",
            "layers",
            "layers.5.attn.q_proj",
            "model.layers.0.attn",
            "model.layers.4.attn",
            "",
            "layers.1.mlp",
            "blocks.0.attn",
            "layers.x.attn",
            "7.attn",
        ];
        let ids: Vec<ModId> = names.iter().map(|n| p.intern(n)).collect();
        // Every ordered pick of up to 4 candidates against every pair of contexts.
        let mut seed = 12345u64;
        let mut next = |m: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % m
        };
        for _ in 0..4000 {
            let cands: Vec<ModId> = (0..1 + next(5)).map(|_| ids[next(ids.len())]).collect();
            let ctx: Vec<ModId> = (0..next(3)).map(|_| ids[next(ids.len())]).collect();
            let want = choose_each(&cands, &ctx, &mut p);
            let got = choose(&cands, &ctx, &mut p);
            assert_eq!(
                p.path(got),
                p.path(want),
                "cands {:?} ctx {:?}",
                cands
                    .iter()
                    .map(|&c| p.path(c).to_string())
                    .collect::<Vec<_>>(),
                ctx.iter()
                    .map(|&c| p.path(c).to_string())
                    .collect::<Vec<_>>()
            );
        }
    }

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
