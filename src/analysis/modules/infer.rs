//! One graph, on its own evidence plus what the caller knows (parameters, the forward graph).
//! The rules are described in the parent module's docs.

use super::Confidence;
use super::paths::{ModId, Paths, ROOT};
use crate::model::fx::{FxGraph, FxNode, OpKind, SourceLoc};
use std::collections::HashMap;

/// Where a statement's code is: file and line (the backward's "Backward of forward node" comment
/// names the forward's line, so both phases share the key).
pub type LocKey = (String, u32);

/// What is known before looking at the graph's body.
#[derive(Default)]
pub struct Evidence<'a> {
    /// Placeholders that are parameters or buffers, by node index.
    pub params: HashMap<usize, ModId>,
    /// Nodes of another graph by name (the forward, for a backward graph's saved activations):
    /// module and whether it is computed from weights only.
    pub by_name: Option<&'a HashMap<String, (ModId, bool)>>,
    /// Frames the same source lines ran in, elsewhere (the forward, for a backward graph).
    pub frames: Option<&'a HashMap<LocKey, Vec<ModId>>>,
    /// The attributes each module owns (`weight`, `bias`).
    pub attrs: Option<&'a HashMap<ModId, Vec<String>>>,
}

/// The result for one graph.
pub struct Inferred {
    pub modules: Vec<(ModId, Confidence)>,
    /// Nodes computed from one module's weights only (`t(w)`), by node index.
    pub weight: Vec<bool>,
    /// The frame of every statement, by source line (for the backward).
    pub frames: HashMap<LocKey, Vec<ModId>>,
}

struct Stmt {
    nodes: Vec<usize>,
    /// Index of the node whose source the statement shares (all of them share it).
    first: usize,
    /// Frame decided from the statement's own weights.
    anchored: Option<ModId>,
    frame: Option<(ModId, Confidence)>,
}

pub fn infer(g: &FxGraph, ev: &Evidence<'_>, paths: &mut Paths) -> Inferred {
    let n = g.nodes.len();
    let mut wd: Vec<Option<ModId>> = vec![None; n];
    let mut out: Vec<Option<(ModId, Confidence)>> = vec![None; n];
    let mut context: Vec<Option<ModId>> = vec![None; n];

    // Seeds: placeholders that are weights, saved activations, get_attr of a submodule's tensor.
    for (i, node) in g.nodes.iter().enumerate() {
        match node.op {
            OpKind::Placeholder => {
                if let Some(&m) = ev.params.get(&i) {
                    out[i] = Some((m, Confidence::High));
                    wd[i] = Some(m);
                } else if let Some(&(m, w)) = ev.by_name.and_then(|b| b.get(&node.name)) {
                    out[i] = Some((m, Confidence::Medium));
                    context[i] = Some(m);
                    if w {
                        wd[i] = Some(m);
                    }
                }
            }
            OpKind::GetAttr => {
                if let Some(at) = node.target.rfind('.') {
                    let m = paths.intern(&node.target[..at]);
                    out[i] = Some((m, Confidence::High));
                    wd[i] = Some(m);
                }
            }
            _ => {}
        }
    }

    // Anchors: a node that consumes a module's weights is that module's.
    let mut anchor: Vec<Option<ModId>> = vec![None; n];
    for (i, node) in g.nodes.iter().enumerate() {
        if !is_compute(node) {
            continue;
        }
        let mut mods: Vec<ModId> = Vec::new();
        let mut all_weight = !node.inputs.is_empty();
        for &j in &node.inputs {
            match wd[j] {
                // A weight read directly, or derived in the same statement; a value derived
                // elsewhere (a root buffer sliced once and used by every layer) only says
                // where it came from.
                // The root's own buffers (rotary tables, a positional embedding) are read
                // inside every layer: they say nothing about where a node is.
                Some(m) if m != ROOT && reads_weight_here(node, &g.nodes[j]) => {
                    if !mods.contains(&m) {
                        mods.push(m);
                    }
                }
                _ => all_weight = false,
            }
        }
        if is_getitem(node)
            && let Some(&j) = node.inputs.first()
            && anchor[j].is_some()
        {
            anchor[i] = anchor[j];
            continue;
        }
        let Some(m) = mods.iter().copied().max_by_key(|&m| paths.depth(m)) else {
            continue;
        };
        anchor[i] = Some(m);
        if all_weight && mods.len() == 1 {
            wd[i] = Some(m);
        }
    }
    extend_linear(g, &mut anchor);

    // Statements: consecutive nodes under the same source comment.
    let mut stmts = statements(g);
    let attrs = ev.attrs;
    for s in &mut stmts {
        let Some(loc) = g.nodes[s.first].source.as_ref() else {
            continue;
        };
        let mut counts: Vec<(ModId, usize)> = Vec::new();
        for &i in &s.nodes {
            if let Some(a) = anchor[i] {
                let f = frame_of_anchor(a, &loc.code, attrs, paths);
                match counts.iter_mut().find(|(m, _)| *m == f) {
                    Some(c) => c.1 += 1,
                    None => counts.push((f, 1)),
                }
            }
        }
        if let Some(&(f, _)) = counts.iter().max_by_key(|(_, c)| *c) {
            s.anchored = Some(f);
            s.frame = Some((f, Confidence::Medium));
            for &i in &s.nodes {
                context[i] = Some(anchor[i].unwrap_or(f));
            }
        }
    }

    // Frames by source line: this graph's anchored statements, then what the caller knows.
    let mut frames: HashMap<LocKey, Vec<ModId>> = HashMap::new();
    for s in &stmts {
        if let (Some(f), Some(loc)) = (s.anchored, &g.nodes[s.first].source) {
            push_unique(frames.entry(key(loc)).or_default(), f);
        }
    }

    // Modules by name (`self_attn` → every `layers.N.self_attn`), for code that calls them.
    let mut named: Vec<(String, Vec<ModId>)> = Vec::new();
    let mut seen: Vec<ModId> = Vec::new();
    for &leaf in anchor.iter().flatten().chain(ev.params.values()) {
        let mut m = leaf;
        while m != ROOT && !seen.contains(&m) {
            seen.push(m);
            let name = paths.name(m);
            if !is_index(name) {
                match named.iter_mut().find(|(n, _)| n == name) {
                    Some((_, ids)) => ids.push(m),
                    None => named.push((name.to_string(), vec![m])),
                }
            }
            m = paths.parent(m);
        }
    }

    // Tied weights: `logits = self.lm_head(x)` reads the embedding's weight. A statement whose
    // weights belong to a sibling its code never names, and that calls exactly one child no
    // weight names, runs that child.
    for s in &stmts {
        let (Some(f), Some(loc)) = (s.anchored, g.nodes[s.first].source.as_ref()) else {
            continue;
        };
        let unknown: Vec<&str> = called_names(&loc.code)
            .into_iter()
            .filter(|y| !named.iter().any(|(n, _)| n == y))
            .collect();
        let [y] = unknown[..] else { continue };
        let child = match paths.path(f) {
            "" => y.to_string(),
            p => format!("{p}.{y}"),
        };
        let child = paths.intern(&child);
        for &i in &s.nodes {
            if let Some(a) = anchor[i]
                && a != f
                && paths.parent(a) == f
                && !mentions(&loc.code, paths.name(a))
            {
                anchor[i] = Some(child);
                context[i] = Some(child);
            }
        }
    }

    // Unanchored statements, in file order.
    for si in 0..stmts.len() {
        if stmts[si].frame.is_some() {
            continue;
        }
        let Some(loc) = g.nodes[stmts[si].first].source.as_ref() else {
            continue;
        };
        // Modules of what the statement reads from outside itself, the latest value first.
        let mut read: Vec<(usize, ModId)> = Vec::new();
        for &i in &stmts[si].nodes {
            for &j in &g.nodes[i].inputs {
                if stmts[si].nodes.contains(&j) {
                    continue;
                }
                let m = context[j].or(anchor[j]).or(out[j].map(|o| o.0));
                if let Some(m) = m {
                    read.push((j, m));
                }
            }
        }
        read.sort_by_key(|&(j, _)| std::cmp::Reverse(j));
        let mut ctx: Vec<ModId> = Vec::new();
        for (_, m) in read {
            push_unique(&mut ctx, m);
        }
        let prev_frame = stmts[..si].iter().rev().find_map(|s| s.frame.map(|f| f.0));
        let neighbour = run_neighbour(g, &stmts, si, loc);
        let k = key(loc);
        let known: Vec<ModId> = frames
            .get(&k)
            .into_iter()
            .flatten()
            .chain(ev.frames.and_then(|f| f.get(&k)).into_iter().flatten())
            .copied()
            .collect();
        // `x = x + self.attn(self.norm(x))`: the line calls child modules, so it runs in
        // their parent.
        let called: Vec<ModId> = named
            .iter()
            .filter(|(name, _)| mentions(&loc.code, name))
            .flat_map(|(_, ids)| ids.iter().map(|&m| paths.parent(m)))
            .collect();
        let ctx_or_prev: Vec<ModId> = if ctx.is_empty() {
            prev_frame.into_iter().collect()
        } else {
            ctx.clone()
        };
        let frame = if !called.is_empty() {
            (choose(&called, &ctx_or_prev, paths), Confidence::Medium)
        } else if let Some((f, true)) = neighbour {
            (f, Confidence::Medium)
        } else if !known.is_empty() {
            (choose(&known, &ctx_or_prev, paths), Confidence::Medium)
        } else if let Some((f, _)) = neighbour {
            (f, Confidence::Low)
        } else if let Some(first) = ctx.first() {
            let c = ctx.iter().fold(*first, |a, &b| paths.common(a, b));
            (c, Confidence::Low)
        } else {
            (prev_frame.unwrap_or(ROOT), Confidence::Low)
        };
        stmts[si].frame = Some(frame);
        push_unique(frames.entry(k).or_default(), frame.0);
        for &i in &stmts[si].nodes {
            context[i] = Some(frame.0);
        }
    }

    // Nodes: their anchor, else the child module their backward statement differentiates,
    // else their statement's frame.
    let mut sub: Vec<Option<ModId>> = vec![None; n];
    for s in &stmts {
        let backward = g.nodes[s.first]
            .source
            .as_ref()
            .is_some_and(|l| l.backward_of);
        if let (true, Some((f, _))) = (backward, s.frame) {
            backward_children(g, s, f, &anchor, &context, &mut sub, paths);
        }
    }
    for s in &stmts {
        for &i in &s.nodes {
            if let Some(a) = anchor[i] {
                out[i] = Some((a, Confidence::High));
            } else if let Some(m) = sub[i] {
                out[i] = Some((m, Confidence::Medium));
            } else if let Some(f) = s.frame {
                out[i] = Some(f);
            }
        }
    }
    fill_by_data_flow(g, &mut out, paths);

    Inferred {
        modules: out
            .into_iter()
            .map(|o| o.unwrap_or((ROOT, Confidence::None)))
            .collect(),
        weight: wd.iter().map(Option::is_some).collect(),
        frames,
    }
}

/// Nodes no statement placed (no source comment: made by a pass, or the graph has no comments):
/// the module of what they feed when their users agree, else the common module of their inputs.
pub fn fill_by_data_flow(g: &FxGraph, out: &mut [Option<(ModId, Confidence)>], paths: &Paths) {
    for i in (0..g.nodes.len()).rev() {
        if out[i].is_some() || !is_compute(&g.nodes[i]) {
            continue;
        }
        let users: Vec<ModId> = g.nodes[i]
            .users
            .iter()
            .filter_map(|&u| out[u].filter(|_| is_compute(&g.nodes[u])).map(|o| o.0))
            .collect();
        if let Some(&first) = users.first()
            && users.iter().all(|&u| u == first)
        {
            out[i] = Some((first, Confidence::Low));
        }
    }
    for i in 0..g.nodes.len() {
        if out[i].is_some() || !is_compute(&g.nodes[i]) {
            continue;
        }
        let ins: Vec<ModId> = g.nodes[i]
            .inputs
            .iter()
            .filter_map(|&j| out[j].filter(|_| is_compute(&g.nodes[j])).map(|o| o.0))
            .collect();
        if let Some(&first) = ins.first() {
            let c = ins.iter().fold(first, |a, &b| paths.common(a, b));
            out[i] = Some((c, Confidence::Low));
        }
    }
}

/// In a backward statement of frame `f`, the gradient of a child module's call (`self.q_proj(x)`
/// in `f`'s code) is that child's: the nodes that read its saved activations (the flattened
/// input a weight gradient multiplies with), the layout ops and sums fed only by those (the
/// gradient's reshapes, a bias gradient), and the transposes and fan-outs whose every user is
/// the child's (the incoming gradient flattened once for both matmuls).
fn backward_children(
    g: &FxGraph,
    s: &Stmt,
    f: ModId,
    anchor: &[Option<ModId>],
    context: &[Option<ModId>],
    sub: &mut [Option<ModId>],
    paths: &Paths,
) {
    let inside = |m: ModId| m != f && paths.within(m, f);
    let label = |sub: &[Option<ModId>], i: usize| anchor[i].or(sub[i]).filter(|&m| inside(m));
    // A weight gradient `mm(t(grad), saved_input)` reads the child's saved input. (Not a
    // frame-level product that reads a child's output, like the gate times an expert.)
    for &i in &s.nodes {
        if anchor[i].is_some() || !matches!(op_name(&g.nodes[i]), "mm" | "bmm") {
            continue;
        }
        sub[i] = g.nodes[i].inputs.iter().find_map(|&j| {
            (g.nodes[j].op == OpKind::Placeholder)
                .then_some(context[j])
                .flatten()
                .filter(|&m| inside(m))
        });
    }
    for _round in 0..2 {
        // The incoming gradient flattened once for both matmuls (and the bias sum): its
        // labelled users agree.
        for &i in s.nodes.iter().rev() {
            if anchor[i].is_some() || sub[i].is_some() {
                continue;
            }
            let users: Vec<usize> = compute_users(g, i).collect();
            let node = &g.nodes[i];
            let transpose = matches!(op_name(node), "t" | "transpose" | "permute");
            let flatten = matches!(op_name(node), "view" | "_unsafe_view" | "reshape");
            if users.is_empty() || !(transpose || (flatten && users.len() >= 2)) {
                continue;
            }
            let labels: Vec<Option<ModId>> = users
                .iter()
                .map(|&u| {
                    if s.nodes.contains(&u) {
                        label(sub, u)
                    } else {
                        None
                    }
                })
                .collect();
            let first = labels.iter().flatten().next().copied();
            let agree = labels.iter().flatten().all(|&m| Some(m) == first);
            let all = labels.iter().all(Option::is_some);
            if first.is_some() && agree && (all || flatten) {
                sub[i] = first;
            }
        }
        // Reshapes, transposes and sums fed only by the child's nodes.
        for &i in &s.nodes {
            if anchor[i].is_some() || sub[i].is_some() || !is_layout_or_sum(&g.nodes[i]) {
                continue;
            }
            let mut agreed: Option<ModId> = None;
            let mut ok = true;
            for &j in &g.nodes[i].inputs {
                if !s.nodes.contains(&j) {
                    continue;
                }
                match (label(sub, j), agreed) {
                    (Some(m), None) => agreed = Some(m),
                    (Some(m), Some(a)) if m == a => {}
                    _ => ok = false,
                }
            }
            if ok {
                sub[i] = agreed;
            }
        }
    }
}

fn is_layout_or_sum(n: &FxNode) -> bool {
    matches!(
        op_name(n),
        "view"
            | "_unsafe_view"
            | "reshape"
            | "t"
            | "transpose"
            | "permute"
            | "sum"
            | "squeeze"
            | "unsqueeze"
            | "clone"
            | "mm"
            | "bmm"
    )
}

fn reads_weight_here(node: &FxNode, input: &FxNode) -> bool {
    matches!(input.op, OpKind::Placeholder | OpKind::GetAttr)
        || node.source.is_none()
        || node.source == input.source
}

/// Users that compute (the output node lists the values a forward saves for the backward).
fn compute_users(g: &FxGraph, i: usize) -> impl Iterator<Item = usize> + '_ {
    g.nodes[i]
        .users
        .iter()
        .copied()
        .filter(|&u| g.nodes[u].op != OpKind::Output)
}

fn key(loc: &SourceLoc) -> LocKey {
    (loc.file.clone(), loc.line)
}

fn push_unique(v: &mut Vec<ModId>, m: ModId) {
    if !v.contains(&m) {
        v.push(m);
    }
}

pub fn is_compute(n: &FxNode) -> bool {
    matches!(
        n.op,
        OpKind::CallFunction | OpKind::CallMethod | OpKind::CallModule
    )
}

fn is_getitem(n: &FxNode) -> bool {
    n.target == "operator.getitem" || n.target == "getitem"
}

fn op_name(n: &FxNode) -> &str {
    let t = n
        .target
        .strip_prefix("torch.ops.aten.")
        .unwrap_or(&n.target);
    t.split('.').next().unwrap_or(t)
}

/// `F.linear` decomposes into `view(x)`, `mm`/`addmm`, `_unsafe_view`: the flattening view whose
/// only user is the weight's matmul, and the `_unsafe_view` after it, belong to the same module
/// (a user's own `.view` after the call is a plain `view`, and belongs to the caller).
fn extend_linear(g: &FxGraph, anchor: &mut [Option<ModId>]) {
    for i in 0..g.nodes.len() {
        let Some(m) = anchor[i] else { continue };
        let node = &g.nodes[i];
        if !matches!(op_name(node), "mm" | "addmm" | "bmm" | "baddbmm") {
            continue;
        }
        for &j in &node.inputs {
            let inp = &g.nodes[j];
            // The flattened input of q, k and v projections is one `view` with three users:
            // it was made by the first.
            if anchor[j].is_none()
                && matches!(op_name(inp), "view" | "reshape" | "_unsafe_view")
                && inp.source == node.source
                && compute_users(g, j).next() == Some(i)
                && compute_users(g, j)
                    .all(|u| matches!(op_name(&g.nodes[u]), "mm" | "addmm" | "bmm" | "baddbmm"))
            {
                anchor[j] = Some(m);
            }
        }
        let users: Vec<usize> = compute_users(g, i).collect();
        if let [u] = users[..]
            && anchor[u].is_none()
            && op_name(&g.nodes[u]) == "_unsafe_view"
        {
            anchor[u] = Some(m);
        }
    }
}

/// The frame (module whose code runs) of a statement that uses module `a`'s weights: `a` itself
/// when the code reads one of its attributes (`self.weight`: the statement is in `a`'s own
/// forward), else `a`'s parent (the code calls `self.q_proj(x)`, a torch module whose inside
/// has no source comment of its own).
fn frame_of_anchor(
    a: ModId,
    code: &str,
    attrs: Option<&HashMap<ModId, Vec<String>>>,
    paths: &Paths,
) -> ModId {
    if a == ROOT {
        return ROOT;
    }
    let own = attrs
        .and_then(|m| m.get(&a))
        .is_some_and(|list| list.iter().any(|at| mentions(code, at)));
    if own { a } else { paths.parent(a) }
}

/// `code` reads `self.<attr>` (followed by something that cannot continue a name).
fn mentions(code: &str, attr: &str) -> bool {
    let needle = format!("self.{attr}");
    code.match_indices(&needle).any(|(at, _)| {
        let after = code[at + needle.len()..].chars().next();
        let before = code[..at].chars().next_back();
        !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
    })
}

/// `y` of every `self.y(` in `code`.
fn called_names(code: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("self.") {
        if code[..at]
            .chars()
            .next_back()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
        {
            continue;
        }
        let rest = &code[at + 5..];
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len > 0 && rest[len..].starts_with('(') && !out.contains(&&rest[..len]) {
            out.push(&rest[..len]);
        }
    }
    out
}

/// Consecutive compute nodes under the same source comment; nodes without one are left out.
fn statements(g: &FxGraph) -> Vec<Stmt> {
    let mut out: Vec<Stmt> = Vec::new();
    let mut last: Option<&SourceLoc> = None;
    for (i, node) in g.nodes.iter().enumerate() {
        if !is_compute(node) {
            continue;
        }
        let Some(loc) = node.source.as_ref() else {
            last = None;
            continue;
        };
        match (last, out.last_mut()) {
            (Some(l), Some(s)) if l == loc => s.nodes.push(i),
            _ => out.push(Stmt {
                nodes: vec![i],
                first: i,
                anchored: None,
                frame: None,
            }),
        }
        last = Some(loc);
    }
    out
}

/// The statement just before or after, when it runs in the same function call (same file and
/// function, a few lines further on): its frame, and whether it came from weights.
fn run_neighbour(g: &FxGraph, stmts: &[Stmt], si: usize, loc: &SourceLoc) -> Option<(ModId, bool)> {
    const SPAN: u32 = 40;
    let same = |s: &Stmt, before: bool| -> bool {
        g.nodes[s.first].source.as_ref().is_some_and(|l| {
            l.file == loc.file
                && l.function == loc.function
                && l.backward_of == loc.backward_of
                && if before != loc.backward_of {
                    l.line < loc.line && loc.line - l.line <= SPAN
                } else {
                    l.line > loc.line && l.line - loc.line <= SPAN
                }
        })
    };
    // A statement after a `return` is not in the same call (a caller reading its callee's
    // result, both `forward` in one file).
    let returns = |s: &Stmt| {
        g.nodes[s.first]
            .source
            .as_ref()
            .is_some_and(|l| l.code.trim_start().starts_with("return"))
    };
    let me = &stmts[si];
    let (earlier, later) = if loc.backward_of {
        (stmts.get(si + 1), si.checked_sub(1).map(|p| &stmts[p]))
    } else {
        (si.checked_sub(1).map(|p| &stmts[p]), stmts.get(si + 1))
    };
    let prev_ok = earlier.filter(|s| !returns(s));
    let next_ok = later.filter(|_| !returns(me));
    let (prev, next) = if loc.backward_of {
        (next_ok, prev_ok)
    } else {
        (prev_ok, next_ok)
    };
    let prev = prev.filter(|s| same(s, true));
    let next = next.filter(|s| same(s, false));
    let anchored = |s: &Stmt| s.anchored.map(|f| (f, true));
    let resolved = |s: &Stmt| s.frame.map(|f| (f.0, false));
    prev.and_then(anchored)
        .or_else(|| next.and_then(anchored))
        .or_else(|| prev.and_then(resolved))
}

/// Of the frames a line ran in, the one that fits the context best: each candidate's layer
/// indices are replaced by the context's where the paths agree (`layers.0.attn` in the context of
/// `layers.5.mlp` is `layers.5.attn`), then the longest shared prefix wins.
fn choose(cands: &[ModId], ctx: &[ModId], paths: &mut Paths) -> ModId {
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

fn is_index(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_needs_a_whole_name() {
        assert!(mentions("return self.weight * x", "weight"));
        assert!(!mentions("return self.weight_g * x", "weight"));
        assert!(!mentions("return other.self.weight", "weight"));
        assert!(mentions("cos = self.cos_cached[:T]", "cos_cached"));
    }

    #[test]
    fn called_names_are_method_calls_on_self() {
        assert_eq!(
            called_names("return self.lm_head(self.ln_f(x)) + self.bias"),
            ["lm_head", "ln_f"]
        );
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
}
