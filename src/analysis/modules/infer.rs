//! One graph, on its own evidence plus what the caller knows (parameters, the forward graph).
//! The rules are described in the parent module's docs.

use super::Confidence;
use super::anchors::{Seeds, seed};
use super::backward::{backward_children, weight_gradients};
use super::callers::{Calls, caller_frame, inner_modules};
use super::children::{called_child, place_call, tied_children, weightless_children};
use super::code::{mentions, reads_attribute, whole_call};
use super::evidence::{Evidence, push_unique};
use super::frames::{Indexed, KnownFrames, LineFrames, LocKey, frame_of_anchor, is_index};
use super::ops::{compute_users, is_compute, op_name};
use super::paths::{ModId, Paths, ROOT};
use super::runs::{is_helper, runs};
use super::statements::{Stmt, kind, run_inputs, statement_reads, statements};
use crate::model::fx::{FxGraph, OpKind, SourceLoc};
use rustc_hash::FxHashMap as HashMap;

/// The result for one graph.
pub struct Inferred {
    pub modules: Vec<(ModId, Confidence)>,
    /// Nodes computed from one module's weights only (`t(w)`), by node index.
    pub weight: Vec<bool>,
    /// The frame of every statement, by source line (for the backward).
    pub frames: LineFrames,
}

pub fn infer(g: &FxGraph, ev: &Evidence<'_>, paths: &mut Paths) -> Inferred {
    let n = g.nodes.len();
    let Seeds {
        wd,
        mut out,
        mut context,
        mut anchor,
    } = seed(g, ev, paths);

    // Statements, their frames from weights, and their runs (one call of one function each).
    let mut stmts = statements(g);
    let attrs = ev.attrs;
    // A line that reads a child's weight without calling the child (`self.dt_proj.weight @ x`,
    // `conv1d.weight.squeeze(1)`) runs in the caller: torch records a module only when it is
    // called.
    for s in &stmts {
        for &i in &s.nodes {
            if let Some(a) = anchor[i]
                && a != ROOT
                && reads_attribute_of(&s.loc.code, a, attrs, paths)
            {
                let up = paths.parent(a);
                anchor[i] = Some(if is_index(paths.name(a)) {
                    paths.parent(up)
                } else {
                    up
                });
            }
        }
    }
    for s in stmts.iter_mut() {
        let mut counts: Vec<(ModId, usize)> = Vec::new();
        for &i in &s.nodes {
            if let Some(a) = anchor[i]
                && let Some(f) = frame_of_anchor(a, s.loc, attrs, paths)
            {
                count(&mut counts, f);
            }
        }
        if let Some(f) = commonest(&counts) {
            s.anchored = Some(f);
            s.frame = Some((f, Confidence::Medium));
            s.own = true;
            for &i in &s.nodes {
                context[i] = Some(anchor[i].unwrap_or(f));
            }
        }
    }
    let locs: Vec<&SourceLoc> = stmts.iter().map(|s| s.loc).collect();
    // The kinds of the frames each line ran in elsewhere, once per line (not per statement).
    let mut kinds_elsewhere: HashMap<LocKey, Vec<u32>> = HashMap::default();
    let kinds: Vec<Vec<u32>> = stmts
        .iter()
        .map(|s| {
            let elsewhere = kinds_elsewhere.entry(key(s.loc)).or_insert_with_key(|k| {
                let mut v = Vec::new();
                for &f in ev.frames.map_or(&[][..], |fr| fr.get(k)) {
                    push_unique(&mut v, kind(f, paths));
                }
                v
            });
            let mut v: Vec<u32> = s.anchored.iter().map(|&f| kind(f, paths)).collect();
            for &k in elsewhere.iter() {
                push_unique(&mut v, k);
            }
            v
        })
        .collect();
    let run = runs(&locs, &statement_reads(g, &stmts), &kinds);
    let mut run_counts: HashMap<usize, Vec<(ModId, usize)>> = HashMap::default();
    for (si, s) in stmts.iter().enumerate() {
        if let Some(f) = s.anchored {
            count(run_counts.entry(run[si]).or_default(), f);
        }
    }
    // A run whose weights say two frames took in the caller's lines after a callee whose
    // `return` printed none (the head's line after an MoE block's loop): it says nothing.
    let run_anchor: HashMap<usize, ModId> = run_counts
        .iter()
        .filter(|(_, c)| c.len() == 1)
        .map(|(&r, c)| (r, c[0].0))
        .collect();

    // Frames by source line: this graph's anchored statements, then what the caller knows.
    let mut frames = LineFrames::default();
    for s in &stmts {
        if let Some(f) = s.anchored {
            frames.add(key(s.loc), f, true);
        }
    }

    // Where each file's lines ran, from the weights: (line, kind of frame), by file.
    let mut own_lines: HashMap<std::sync::Arc<str>, Vec<(u32, u32)>> = HashMap::default();
    for s in &stmts {
        if let Some(f) = s.anchored
            && !s.loc.backward_of
            && !is_helper(s.loc)
        {
            own_lines
                .entry(s.loc.file.clone())
                .or_default()
                .push((s.loc.line, kind(f, paths)));
        }
    }
    for v in own_lines.values_mut() {
        v.sort_unstable();
        v.dedup();
    }

    // Modules by name (`self_attn` → every `layers.N.self_attn`), for code that calls them.
    let named = module_names(&anchor, ev, paths);

    // Unanchored statements, in graph order.
    let mut run_frame: HashMap<usize, ModId> = HashMap::default();
    // What each statement's frame was chosen by (for the child its backward differentiates).
    let mut stmt_ctx: Vec<Vec<ModId>> = vec![Vec::new(); stmts.len()];
    let mut first_of_run: HashMap<usize, usize> = HashMap::default();
    for (si, &r) in run.iter().enumerate() {
        first_of_run.entry(r).or_insert(si);
    }
    let run_inputs = run_inputs(g, &stmts, &run);
    // Values whose module is no helper's guess (a helper runs for whichever module the
    // statements around it say) nor a frame this loop moved up: the ones that can refute
    // another frame.
    let mut firm: Vec<bool> = anchor.iter().map(Option::is_some).collect();
    let inner = inner_modules(&anchor, ev, paths);
    let mut known_frames = KnownFrames::default();
    let mut called_by_line: HashMap<LocKey, Indexed> = HashMap::default();
    for si in 0..stmts.len() {
        // Every statement has a frame once its turn is over (it had one, or this loop gives
        // it one), so the last framed statement above is the one just above.
        let prev_frame = si.checked_sub(1).and_then(|p| stmts[p].frame).map(|f| f.0);
        if let Some((f, _)) = stmts[si].frame {
            run_frame.entry(run[si]).or_insert(f);
            for &i in &stmts[si].nodes {
                firm[i] = true;
            }
            continue;
        }
        let loc = stmts[si].loc;
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
        let k = key(loc);
        let known = known_frames.get(&k, &frames, ev.frames, paths);
        let known_own = frames.own.contains(&k) || ev.frames.is_some_and(|f| f.own.contains(&k));
        // `x = x + self.attn(self.norm(x))`: the line calls child modules, so it runs in
        // their parent.
        let called: &Indexed = called_by_line.entry(k.clone()).or_insert_with(|| {
            let list = named
                .iter()
                .filter(|(name, _)| mentions(&loc.code, name))
                .flat_map(|(_, ids)| ids.iter().map(|&m| paths.parent(m)))
                .collect();
            Indexed::new(list, paths)
        });
        // A backward reads the forward's saved activations: where its run read them says which
        // layer it differentiates better than the gradient it was handed.
        // Its inputs vote (a saved activation counts twice; a helper's, those of its whole
        // run): a value one layer recomputed and the next reuses (the rotary `cos`) is outvoted.
        let mut ctx_or_prev: Vec<ModId> = Vec::new();
        if loc.backward_of {
            let mut votes: Vec<(ModId, usize)> = Vec::new();
            let own_inputs: Vec<usize> = stmts[si]
                .nodes
                .iter()
                .flat_map(|&i| g.nodes[i].inputs.iter().copied())
                .filter(|j| !stmts[si].nodes.contains(j))
                .collect();
            let inputs = if is_helper(loc) {
                run_inputs.get(&run[si]).map_or(&[][..], Vec::as_slice)
            } else {
                &own_inputs[..]
            };
            for &j in inputs {
                let saved = g.nodes[j].op == OpKind::Placeholder;
                if let Some(m) = context[j].or(if saved { None } else { out[j].map(|o| o.0) }) {
                    count(&mut votes, m);
                    if saved {
                        count(&mut votes, m);
                        // A value the line itself made in the forward (the final norm's
                        // `rsqrt`, beside the last layer's output it scales) says whose call
                        // this is.
                        if known.contains(m) {
                            count(&mut votes, m);
                            count(&mut votes, m);
                        }
                    }
                }
            }
            votes.sort_by_key(|&(_, c)| std::cmp::Reverse(c));
            ctx_or_prev.extend(votes.iter().map(|v| v.0));
        }
        for &m in &ctx {
            push_unique(&mut ctx_or_prev, m);
        }
        if ctx_or_prev.is_empty() {
            ctx_or_prev.extend(prev_frame);
        }
        let resolved = run_frame.get(&run[si]).copied();
        let reads: Vec<ModId> = run_inputs
            .get(&run[si])
            .into_iter()
            .flatten()
            .filter_map(|&j| context[j].or(anchor[j]).or(out[j].map(|o| o.0)))
            .collect();
        let calls = Calls {
            graph: g,
            stmts: &stmts,
            run: &run,
            first_of_run: &first_of_run,
            reads: &reads,
            inner: &inner,
            run_anchor: &run_anchor,
        };
        let caller = caller_frame(&calls, si, &named, paths);
        let helper = is_helper(loc) && !loc.backward_of;
        let (frame, own) = if let Some(&f) = run_anchor.get(&run[si]) {
            ((f, Confidence::Medium), true)
        } else if !called.is_empty() {
            (
                (called.choose(&ctx_or_prev, paths), Confidence::Medium),
                true,
            )
        } else if let (true, Some(f)) = (helper, resolved.or(caller.map(|c| c.0))) {
            ((f, Confidence::Low), false)
        } else if !known.is_empty() {
            // A backward whose saved values say first "this line ran in X", X being one of
            // the line's frames, is X's (the final norm's `rsqrt` beside the last layer's output:
            // a deeper path shared with that layer must not win).
            let f = match ctx_or_prev.first() {
                Some(&m) if loc.backward_of && known.contains(m) => m,
                _ => known.choose(&ctx_or_prev, paths),
            };
            ((f, Confidence::Medium), known_own)
        } else if let Some(f) = resolved {
            ((f, Confidence::Low), false)
        } else if let Some((f, own)) = caller.filter(|_| !loc.backward_of) {
            ((f, Confidence::Low), own)
        } else if let Some(first) = ctx.first() {
            let c = ctx.iter().fold(*first, |a, &b| paths.common(a, b));
            ((c, Confidence::Low), false)
        } else {
            ((prev_frame.unwrap_or(ROOT), Confidence::Low), false)
        };
        let guessed = frame.0;
        // A helper works for whoever handed it its values; only a module's `forward` returns.
        let frame = if loc.backward_of || !called.is_empty() || is_helper(loc) {
            frame
        } else {
            let reads = |j: usize| context[j].or(anchor[j]).or(out[j].map(|o| o.0));
            // Where `f`'s call began is known only when the frame is its run's.
            let from_run =
                run_anchor.contains_key(&run[si]) || (known.is_empty() && resolved.is_some());
            let start = first_of_run
                .get(&run[si])
                .filter(|_| from_run)
                .and_then(|&r| stmts[r].nodes.iter().min().copied())
                .unwrap_or(usize::MAX);
            let f = returned(
                g,
                &stmts[si].nodes,
                (frame.0, start),
                reads,
                &firm,
                &context,
                paths,
            );
            (nearest_function(loc, f, &own_lines, paths), frame.1)
        };
        if !helper && frame.0 == guessed {
            for &i in &stmts[si].nodes {
                firm[i] = true;
            }
        }
        // Rule 12: the `forward` of a weightless child whose call printed no line.
        let frame = match ev.classes {
            Some(c) if stmts[si].nodes.iter().all(|&i| anchor[i].is_none()) => c
                .callee(frame.0, loc, paths)
                .map_or(frame, |m| (m, frame.1)),
            _ => frame,
        };
        stmts[si].frame = Some(frame);
        stmts[si].own = own;
        stmt_ctx[si] = ctx_or_prev;
        run_frame.entry(run[si]).or_insert(frame.0);
        known_frames.add(&k, frame.0, paths);
        frames.add(k, frame.0, own);
        for &i in &stmts[si].nodes {
            context[i] = Some(frame.0);
        }
    }

    // else a weightless child their line calls, else their statement's frame.
    let mut sub: Vec<Option<ModId>> = vec![None; n];
    // The forward's calls of each line, indexed once (a line calls one child per layer).
    let mut calls_by_line: HashMap<LocKey, Indexed> = HashMap::default();
    for (si, s) in stmts.iter().enumerate() {
        let Some((f, _)) = s.frame else { continue };
        let k = key(s.loc);
        let tied = tied_children(g, s, f, attrs, &named, &mut anchor, paths);
        if s.loc.backward_of {
            // The gradient of a line that called one child is that child's.
            let calls = calls_by_line.entry(k.clone()).or_insert_with(|| {
                let list = ev
                    .frames
                    .map_or(&[][..], |fr| fr.calls.get(&k).map_or(&[], |c| c.as_slice()));
                Indexed::new(list.to_vec(), paths)
            });
            if !calls.is_empty() {
                let ctx = if stmt_ctx[si].is_empty() {
                    vec![f]
                } else {
                    stmt_ctx[si].clone()
                };
                let child = calls.choose(&ctx, paths);
                let whole = whole_call(&s.loc.code).is_some()
                    || ev.frames.is_some_and(|fr| fr.whole.contains(&k));
                place_call(g, s, child, whole, &anchor, &mut sub);
            }
            backward_children(g, s, f, &anchor, &context, &mut sub, paths);
        }
        let weightless = if s.own {
            weightless_children(g, s, f, &anchor, &named, &mut sub, paths)
        } else {
            None
        };
        if !s.loc.backward_of
            && let Some(c) = tied
                .or(weightless)
                .or_else(|| called_child(s, &anchor, paths))
        {
            frames.add_call(k, c);
        }
    }
    let grads = weight_gradients(g, ev.grad_of);
    for s in &stmts {
        for &i in &s.nodes {
            if let Some(a) = anchor[i] {
                out[i] = Some((a, Confidence::High));
            } else if let Some(m) = grads[i] {
                out[i] = Some((m, Confidence::High));
            } else if let Some(m) = sub[i] {
                out[i] = Some((m, Confidence::Medium));
            } else if let Some(f) = s.frame {
                out[i] = Some(f);
            }
        }
    }
    one_child_lines(&stmts, &out, &mut frames, paths);
    for (i, m) in grads.iter().enumerate() {
        if out[i].is_none()
            && let Some(m) = m
        {
            out[i] = Some((*m, Confidence::High));
        }
    }
    fill_by_data_flow(g, &mut out, paths);
    saved_views(g, &mut out);

    Inferred {
        modules: out
            .into_iter()
            .map(|o| o.unwrap_or((ROOT, Confidence::None)))
            .collect(),
        weight: wd.iter().map(Option::is_some).collect(),
        frames,
    }
}

/// Forward lines whose nodes all landed in one child of their frame, every time they ran: the
/// line is that child's call and nothing else, so its backward is the child's (see
/// `LineFrames::whole`).
fn one_child_lines(
    stmts: &[Stmt<'_>],
    out: &[Option<(ModId, Confidence)>],
    frames: &mut LineFrames,
    paths: &Paths,
) {
    let mut verdict: HashMap<LocKey, bool> = HashMap::default();
    for s in stmts.iter().filter(|s| !s.loc.backward_of) {
        let Some((f, _)) = s.frame else { continue };
        let mut mods = s.nodes.iter().map(|&i| out[i].map(|o| o.0));
        let first = mods.next().flatten();
        let one = first.filter(|&c| c != f && paths.within(c, f) && mods.all(|m| m == Some(c)));
        let ok = verdict.entry(key(s.loc)).or_insert(true);
        *ok &= one.is_some();
        if let Some(c) = one {
            frames.add_call(key(s.loc), c);
        }
    }
    for (k, ok) in verdict {
        if ok {
            frames.whole.insert(k);
        }
    }
}

/// A statement read as going on in frame `f` (its run, the statement before, the same line
/// elsewhere) is in `f`'s caller when it reads a value that reached the caller from outside and
/// went to another of the caller's children, but never to `f`: a function sees only what it is
/// handed, so `f` has returned (`x + attn(ln1(x)) + mlp(ln2(x))`: the sum reads `x`, which
/// only the norms read, so it is the block's, not the attention's or the MLP's). A value made
/// inside the caller (the norm's output handed to the attention) may be `f`'s argument, read
/// late: it says nothing. Nor can `f`'s call, begun at node `start` (its run's first), read a
/// value another module made after that: while `f` runs, only `f` and what it calls do (the
/// second residual sum reads the MLP's output, made after the attention's run began). Only a
/// `firm` value (not a helper's, not moved by this rule) refutes so, and no value of `f`'s own
/// ancestors refutes at all: one misplaced value must not move every statement after it up
/// too. Checked up the tree until nothing refutes.
fn returned(
    g: &FxGraph,
    nodes: &[usize],
    (mut f, start): (ModId, usize),
    reads: impl Fn(usize) -> Option<ModId>,
    firm: &[bool],
    context: &[Option<ModId>],
    paths: &Paths,
) -> ModId {
    let Some(&first) = nodes.iter().min() else {
        return f;
    };
    'up: while f != ROOT {
        // The caller of a list's element (`layers.1`) is the list's owner: a `ModuleList`
        // runs no code, and every element is handed the same values (the rotary `cos`).
        let mut parent = paths.parent(f);
        if is_index(paths.name(f)) && parent != ROOT {
            parent = paths.parent(parent);
        }
        for &i in nodes {
            for &j in &g.nodes[i].inputs {
                if nodes.contains(&j) {
                    continue;
                }
                let Some(src) = reads(j) else { continue };
                if paths.within(src, f) || paths.within(f, src) {
                    continue;
                }
                if j > start && firm[j] {
                    f = parent;
                    continue 'up;
                }
                if paths.within(src, parent) {
                    continue;
                }
                let (mut seen, mut sibling) = (false, false);
                for &u in g.nodes[j].users.iter().filter(|&&u| u < first) {
                    let Some(r) = context[u] else { continue };
                    if paths.within(r, f) {
                        seen = true;
                    } else if r != parent && paths.within(r, parent) {
                        sibling = true;
                    }
                }
                if sibling && !seen {
                    f = parent;
                    continue 'up;
                }
            }
        }
        break;
    }
    f
}

/// A `forward`'s lines are one run of lines in its file, apart from any other class's: a
/// statement read as going on in `f` whose nearest line with a known frame (from weights) is
/// the code of one of `f`'s callers, and none of `f`'s own lines (known in that file) that near,
/// is that caller's (BART's
/// `hidden_states = residual + hidden_states` at line 293, beside the layer's norm at 294, far
/// from the attention's `out_proj` line after whose call it comes). Only up, never to another
/// branch.
fn nearest_function(
    loc: &SourceLoc,
    f: ModId,
    own_lines: &HashMap<std::sync::Arc<str>, Vec<(u32, u32)>>,
    paths: &Paths,
) -> ModId {
    let Some(lines) = own_lines.get(&loc.file) else {
        return f;
    };
    let at = lines.partition_point(|&(l, _)| l < loc.line);
    let dist = |k: usize| lines[k].0.abs_diff(loc.line);
    let best = [at.checked_sub(1), (at < lines.len()).then_some(at)]
        .into_iter()
        .flatten()
        .map(dist)
        .min();
    let Some(best) = best else { return f };
    let nearest: Vec<u32> = lines
        .iter()
        .filter(|&&(l, _)| l.abs_diff(loc.line) == best)
        .map(|&(_, k)| k)
        .collect();
    // Where `f`'s own code is must be known (a module whose every line is a child's call
    // prints none: GPT-2's attention around its Conv1D).
    let fk = kind(f, paths);
    if nearest.contains(&fk) || !lines.iter().any(|&(_, k)| k == fk) {
        return f;
    }
    let mut up = f;
    while up != ROOT {
        up = paths.parent(up);
        if nearest.contains(&kind(up, paths)) {
            return up;
        }
    }
    f
}

/// AOT's partitioner adds, after the forward's last statement, views of values it saves for the
/// backward (`transpose_20 = transpose(view_7)`) under the source line of the node they copy.
/// Nothing in the forward uses them: they are their input's, wherever the line says.
fn saved_views(g: &FxGraph, out: &mut [Option<(ModId, Confidence)>]) {
    for i in 0..g.nodes.len() {
        let node = &g.nodes[i];
        if !is_compute(node)
            || node.users.is_empty()
            || compute_users(g, i).next().is_some()
            || !matches!(
                op_name(node),
                "t" | "transpose" | "permute" | "view" | "reshape" | "clone" | "detach"
            )
        {
            continue;
        }
        if let [j] = node.inputs[..]
            && is_compute(&g.nodes[j])
            && let Some(m) = out[j]
        {
            out[i] = Some(m);
        }
    }
}

/// Modules by their last name (`self_attn` → every `layers.N.self_attn`), from the weights
/// this graph uses and the parameters it was given.
fn module_names(
    anchor: &[Option<ModId>],
    ev: &Evidence<'_>,
    paths: &Paths,
) -> Vec<(String, Vec<ModId>)> {
    let mut named: Vec<(String, Vec<ModId>)> = Vec::new();
    // By module id: a scan of the modules seen so far per anchored node grew with the layers
    // twice over.
    let mut seen: Vec<bool> = Vec::new();
    for &leaf in anchor.iter().flatten().chain(ev.params.values()) {
        let mut m = leaf;
        while m != ROOT && !seen.get(m as usize).copied().unwrap_or(false) {
            if seen.len() <= m as usize {
                seen.resize(m as usize + 1, false);
            }
            seen[m as usize] = true;
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
    named
}

/// Nodes no statement placed (no source comment: made by a pass, or the graph has no comments):
/// the module of what they feed when their users agree, else the common module of their inputs.
pub fn fill_by_data_flow(g: &FxGraph, out: &mut [Option<(ModId, Confidence)>], paths: &Paths) {
    for i in (0..g.nodes.len()).rev() {
        // A constant the graph holds (`_tensor_constant0`) is read where it is used.
        let constant = g.nodes[i].op == OpKind::GetAttr;
        if out[i].is_some() || !(is_compute(&g.nodes[i]) || constant) {
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

/// The code reads an attribute of module `m` from outside it (`self.dt_proj.weight`,
/// `conv1d.bias`): one of `m`'s own tensors (`weight` and `bias` when not known) after `m`'s name
/// and a dot.
fn reads_attribute_of(
    code: &str,
    m: ModId,
    attrs: Option<&HashMap<ModId, Vec<String>>>,
    paths: &Paths,
) -> bool {
    let name = paths.name(m);
    if is_index(name) {
        return false;
    }
    match attrs.and_then(|a| a.get(&m)) {
        Some(own) => own.iter().any(|attr| reads_attribute(code, name, attr)),
        None => ["weight", "bias"]
            .iter()
            .any(|attr| reads_attribute(code, name, attr)),
    }
}

pub fn key(loc: &SourceLoc) -> LocKey {
    (loc.file.clone(), loc.line)
}

pub fn count(counts: &mut Vec<(ModId, usize)>, m: ModId) {
    match counts.iter_mut().find(|(c, _)| *c == m) {
        Some(c) => c.1 += 1,
        None => counts.push((m, 1)),
    }
}

/// The commonest, the first seen on a tie.
pub fn commonest(counts: &[(ModId, usize)]) -> Option<ModId> {
    let best = counts.iter().map(|c| c.1).max()?;
    counts.iter().find(|c| c.1 == best).map(|c| c.0)
}
