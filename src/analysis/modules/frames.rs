//! Frames: the module whose code a statement runs, from the weights it uses or from the
//! frames the same line ran in elsewhere.

use super::code::mentions;
use super::paths::{ModId, Paths, ROOT};
use super::runs::is_helper;
use crate::model::fx::SourceLoc;
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

/// Where a statement's code is: file and line (the backward's "Backward of forward node" comment
/// names the forward's line, so both phases share the key).
/// A source line: its file (shared, see `SourceLoc::file`) and number.
pub type LocKey = (std::sync::Arc<str>, u32);

/// Modules in the order they came, each once (a line of a 400-layer model has 400: finding one
/// in the list on each add was quadratic in the layers).
#[derive(Debug, Clone, Default)]
pub struct Unique {
    list: Vec<ModId>,
    set: HashSet<ModId>,
}

impl Unique {
    fn push(&mut self, m: ModId) {
        if self.set.insert(m) {
            self.list.push(m);
        }
    }

    pub fn as_slice(&self) -> &[ModId] {
        &self.list
    }
}

/// The frames every source line ran in.
#[derive(Debug, Clone, Default)]
pub struct LineFrames {
    pub by_line: HashMap<LocKey, Unique>,
    /// Lines whose frame came from their own evidence (weights, the children they call, the
    /// same line elsewhere), not from the statement before: a weightless child their code
    /// calls (`self.dropout(x)`) can be named under that frame.
    pub own: HashSet<LocKey>,
    /// Lines that are one call of a child (`x = self.dropout(x)`, `x = self.wte(ids)`): the
    /// child each ran, for the backward, whose statements differentiate that call.
    pub calls: HashMap<LocKey, Unique>,
    /// Lines whose every node, each time they ran, was in the child they called (a norm's
    /// call that is one argument of a longer call, `self.ln(x),`): their gradient is that
    /// child's whole, as a line that is one call is.
    pub whole: HashSet<LocKey>,
}

impl LineFrames {
    pub fn get(&self, k: &LocKey) -> &[ModId] {
        self.by_line.get(k).map_or(&[], Unique::as_slice)
    }

    pub fn add_call(&mut self, k: LocKey, m: ModId) {
        self.calls.entry(k).or_default().push(m);
    }

    pub fn add(&mut self, k: LocKey, m: ModId, own: bool) {
        self.by_line.entry(k.clone()).or_default().push(m);
        if own {
            self.own.insert(k);
        }
    }
}

/// What `choose` asks of a list of frames, kept as the list grows: each kind's first frame, and
/// for each kind, depth and ancestor the first frame of that kind under that ancestor. Frames
/// are known by a key that orders them as the list does. A line of a 400-layer model ran in 400
/// frames and has 400 statements: scanning its list for each made inference quadratic in the
/// layers.
#[derive(Debug, Default)]
pub struct FrameIndex {
    /// (kind, smallest key of that kind), in the order the kinds came.
    kinds: Vec<(u32, u64)>,
    /// (kind, depth, ancestor at that depth) → smallest key.
    first: rustc_hash::FxHashMap<(u32, usize, ModId), u64>,
}

impl FrameIndex {
    /// Frame `m` is in the list under `key` (a frame may come again under a smaller key: it
    /// moved up the list; only the smallest counts).
    pub fn note(&mut self, m: ModId, key: u64, paths: &Paths) {
        let k = paths.kind(m);
        match self.kinds.iter_mut().find(|(x, _)| *x == k) {
            Some((_, first)) => *first = (*first).min(key),
            None => self.kinds.push((k, key)),
        }
        let mut a = m;
        for d in (0..=paths.depth(m)).rev() {
            let e = self.first.entry((k, d, a)).or_insert(key);
            *e = (*e).min(key);
            a = paths.parent(a);
        }
    }

    fn is_empty(&self) -> bool {
        self.kinds.is_empty()
    }
}

/// A list of frames and its index, for a list chosen from often (the children a line calls,
/// one per layer).
#[derive(Debug, Default)]
pub struct Indexed {
    list: Vec<ModId>,
    index: FrameIndex,
}

impl Indexed {
    pub fn new(list: Vec<ModId>, paths: &Paths) -> Indexed {
        let mut index = FrameIndex::default();
        for (pos, &c) in list.iter().enumerate() {
            index.note(c, pos as u64, paths);
        }
        Indexed { list, index }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Of the list's frames, the one that fits `ctx` best (see [`choose_in`]).
    pub fn choose(&self, ctx: &[ModId], paths: &mut Paths) -> ModId {
        choose_in(&self.index, |k| self.list[k as usize], ctx, paths)
    }
}

/// The frames each line ran in, merged for choosing: this graph's first (in the order found),
/// then the caller's not among them, indexed as they grow.
#[derive(Debug, Default)]
pub struct KnownFrames {
    by_line: HashMap<LocKey, Known>,
}

/// One line's frames: this graph's under keys 0, 1, …; the caller's under `CALLER + j`, after
/// them all. A caller's frame this graph adds moves to the end of this graph's part.
#[derive(Debug, Default)]
pub struct Known {
    local: Vec<ModId>,
    caller: Vec<ModId>,
    own: HashSet<ModId>,
    index: FrameIndex,
}

const CALLER: u64 = 1 << 40;

impl Known {
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// `m` is one of the line's frames.
    pub fn contains(&self, m: ModId) -> bool {
        self.own.contains(&m) || self.caller.contains(&m)
    }

    fn at(&self, key: u64) -> ModId {
        if key >= CALLER {
            self.caller[(key - CALLER) as usize]
        } else {
            self.local[key as usize]
        }
    }

    /// Of the line's frames, the one that fits `ctx` best (see [`choose_in`]).
    pub fn choose(&self, ctx: &[ModId], paths: &mut Paths) -> ModId {
        choose_in(&self.index, |k| self.at(k), ctx, paths)
    }
}

impl KnownFrames {
    pub fn get(
        &mut self,
        k: &LocKey,
        here: &LineFrames,
        caller: Option<&LineFrames>,
        paths: &Paths,
    ) -> &Known {
        if !self.by_line.contains_key(k) {
            let mut known = Known::default();
            for &m in here.get(k) {
                known.add(m, paths);
            }
            // A `LineFrames` list holds each frame once.
            for &m in caller.map_or(&[][..], |f| f.get(k)) {
                if !known.own.contains(&m) {
                    known
                        .index
                        .note(m, CALLER + known.caller.len() as u64, paths);
                    known.caller.push(m);
                }
            }
            self.by_line.insert(k.clone(), known);
        }
        &self.by_line[k]
    }

    /// `m` became one of this graph's frames of line `k` (as `LineFrames::add`).
    pub fn add(&mut self, k: &LocKey, m: ModId, paths: &Paths) {
        if let Some(known) = self.by_line.get_mut(k) {
            known.add(m, paths);
        }
    }
}

impl Known {
    fn add(&mut self, m: ModId, paths: &Paths) {
        if self.own.insert(m) {
            self.index.note(m, self.local.len() as u64, paths);
            self.local.push(m);
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
/// `at` gives the frame of a key of `index`.
fn choose_in(
    index: &FrameIndex,
    at: impl Fn(u64) -> ModId,
    ctx: &[ModId],
    paths: &mut Paths,
) -> ModId {
    // (shared depth, earlier context, unchanged candidate): bigger is better; on a tie the
    // candidate listed first.
    type Key = (usize, std::cmp::Reverse<usize>, usize);
    // Candidates of one kind (`layers.0.attn`, `layers.1.attn`, …) fill alike: the context's
    // indices replace theirs up to the same depth. So each kind is weighed once per context
    // module, not each of a 400-layer model's candidates.
    let mut best: Option<(Key, std::cmp::Reverse<u64>, ModId)> = None;
    for (xi, &x) in ctx.iter().enumerate() {
        for &(k, first) in &index.kinds {
            let c0 = at(first);
            let depth = agreeing(c0, x, paths);
            // The candidate that already sits where the context's indices would put it.
            let own = index.first.get(&(k, depth, paths.ancestor(x, depth)));
            let (pos, filled, unchanged) = match own {
                Some(&p) => (p, at(p), 1),
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
    let listed_first = || index.kinds.iter().map(|&(_, f)| f).min().map_or(ROOT, &at);
    best.map_or_else(listed_first, |b| b.2)
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

    fn choose(cands: &[ModId], ctx: &[ModId], paths: &mut Paths) -> ModId {
        Indexed::new(cands.to_vec(), paths).choose(ctx, paths)
    }

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

    /// Module paths of several kinds and depths, numbered and not.
    const NAMES: [&str; 17] = [
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

    /// A seeded picker: `next(m)` is in `0..m`.
    fn picker(mut seed: u64) -> impl FnMut(usize) -> usize {
        move |m: usize| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as usize % m
        }
    }

    fn shown(p: &Paths, ids: &[ModId]) -> Vec<String> {
        ids.iter().map(|&c| p.path(c).to_string()).collect()
    }

    #[test]
    fn choosing_by_kind_equals_filling_every_candidate() {
        let mut p = Paths::default();
        let ids: Vec<ModId> = NAMES.iter().map(|n| p.intern(n)).collect();
        // Every ordered pick of up to 4 candidates against every pair of contexts.
        let mut next = picker(12345);
        for _ in 0..4000 {
            let cands: Vec<ModId> = (0..1 + next(5)).map(|_| ids[next(ids.len())]).collect();
            let ctx: Vec<ModId> = (0..next(3)).map(|_| ids[next(ids.len())]).collect();
            let want = choose_each(&cands, &ctx, &mut p);
            let got = choose(&cands, &ctx, &mut p);
            assert_eq!(
                p.path(got),
                p.path(want),
                "cands {:?} ctx {:?}",
                shown(&p, &cands),
                shown(&p, &ctx)
            );
        }
    }

    /// A line's merged frames as first kept: one list, this graph's part then the caller's,
    /// in order by shifting it on each add.
    struct MergedList {
        list: Vec<ModId>,
        local: usize,
        own: HashSet<ModId>,
    }

    impl MergedList {
        fn new(here: &[ModId], caller: &[ModId]) -> MergedList {
            let mut list = here.to_vec();
            let own: HashSet<ModId> = list.iter().copied().collect();
            let mut seen = own.clone();
            list.extend(caller.iter().copied().filter(|&m| seen.insert(m)));
            MergedList {
                list,
                local: here.len(),
                own,
            }
        }

        fn add(&mut self, m: ModId) {
            if !self.own.insert(m) {
                return;
            }
            match self.list[self.local..].iter().position(|&x| x == m) {
                Some(p) => self.list[self.local..=self.local + p].rotate_right(1),
                None => self.list.insert(self.local, m),
            }
            self.local += 1;
        }
    }

    #[test]
    fn known_frames_choose_as_the_merged_list_did() {
        let mut p = Paths::default();
        let ids: Vec<ModId> = NAMES.iter().map(|n| p.intern(n)).collect();
        let mut next = picker(99);
        let key: LocKey = ("m.py".into(), 7);
        for _ in 0..500 {
            let (mut here, mut caller) = (LineFrames::default(), LineFrames::default());
            for _ in 0..next(4) {
                here.add(key.clone(), ids[next(ids.len())], false);
            }
            for _ in 0..next(6) {
                caller.add(key.clone(), ids[next(ids.len())], false);
            }
            let mut merged = MergedList::new(here.get(&key), caller.get(&key));
            let mut known = KnownFrames::default();
            known.get(&key, &here, Some(&caller), &p);
            for _ in 0..12 {
                if next(3) == 0 {
                    let m = ids[next(ids.len())];
                    merged.add(m);
                    known.add(&key, m, &p);
                    continue;
                }
                let ctx: Vec<ModId> = (0..next(3)).map(|_| ids[next(ids.len())]).collect();
                let k = known.get(&key, &here, Some(&caller), &p);
                assert_eq!(k.is_empty(), merged.list.is_empty());
                if merged.list.is_empty() {
                    continue;
                }
                let got = k.choose(&ctx, &mut p);
                let want = choose_each(&merged.list, &ctx, &mut p);
                assert_eq!(
                    p.path(got),
                    p.path(want),
                    "list {:?} ctx {:?}",
                    shown(&p, &merged.list),
                    shown(&p, &ctx)
                );
            }
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
