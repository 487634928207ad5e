//! msprobe entries linked to the FX nodes of a graph (docs/formats.md §4.1).
//!
//! msprobe names what it measured by the eager call it hooked, not by FX node: a module's call
//! (`Module.layers.0.mlp.gate_proj.Linear.forward.0`) or an API's n-th call in the step
//! (`Aten.add.Tensor.3.forward`, `Functional.linear.0.forward`). The graph knows each node's
//! target, its place in execution order (file order is topological) and, through
//! [`modules`](crate::analysis::modules), its module. So:
//!
//! - **A module call** is the node that leaves the module with the call's output: of the nodes
//!   in the module (or below it) whose value is used outside it, the one whose dtype and shape
//!   are the output's; a module called m times has m such nodes, in order. `High` when one
//!   node per call has the output's type, `Medium` when the count is off, `Low` (module only)
//!   when no node leaving the module has the output's type: the last one is taken.
//! - **An aten call** (`Aten`, `NPU`) is the n-th node with that target. `Medium` (op + order),
//!   `High` when the module the dump was in at that call (the last module entry before it: keys
//!   are in call order) holds the node too.
//! - **A functional / tensor / torch call** decomposes into aten nodes (`linear` → `addmm` or
//!   `mm`): its anchor op, counted within the module the dump was in (`Medium`), else counted
//!   over the graph (`Low`).
//!
//! Entries of the other direction (a backward entry against a forward graph) are not linked.

mod api;
mod module_call;

use crate::analysis::modules::Confidence;
use crate::model::fx::{FxGraph, FxNode, OpKind, Short, TensorType, file_name};
use crate::model::msprobe::StackFrame;
use crate::model::tensor::{MsprobeCall, MsprobeStep, MsprobeTensor};
use rustc_hash::FxHashMap;
use rustc_hash::FxHashMap as HashMap;
use serde::Serialize;
use smallvec::SmallVec;
use std::cell::OnceCell;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

/// One entry of a step, linked (or not) to a node.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Link {
    /// Index into [`MsprobeStep::entries`].
    pub entry: usize,
    /// The entry's key, shared with it.
    pub key: std::sync::Arc<str>,
    /// The node holding the entry's first output (its call, for an API).
    /// A node name (inline up to 24 bytes): no allocation per entry of a 50k-entry step.
    pub node: Option<Short>,
    /// Each output slot's node, when found (`output.1` → `_to_copy_3`). Inline for the one
    /// output most calls have: no allocation per entry.
    pub outputs: SmallVec<[(Short, Short); 1]>,
    /// Index in the graph's nodes of the node whose type is the entry's first output's
    /// (`outputs`' first, else `node`): kept as the linker found it, as a lookup by name
    /// per entry was a third of linking a 50k-node graph.
    #[serde(skip)]
    pub holder: Option<usize>,
    /// `None` when not linked.
    pub confidence: Confidence,
    /// The node does what the entry says: the same aten op for an API call, the output's
    /// dtype and shape for a module call.
    pub same_op: bool,
    /// The node's value has the dtype and shape of the entry's first output.
    pub same_type: bool,
    pub reason: String,
}

/// The links of one msprobe step to one graph.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StepLinks {
    pub step: u32,
    pub who: String,
    /// Entries of the graph's direction (forward or backward): what could be linked.
    pub considered: usize,
    /// One per entry of the step, in its order.
    pub links: Vec<Link>,
}

impl StepLinks {
    pub fn linked(&self) -> usize {
        self.links.iter().filter(|l| l.node.is_some()).count()
    }

    pub fn same_op(&self) -> usize {
        self.links.iter().filter(|l| l.same_op).count()
    }

    /// Links to a node doing the same op whose value has the entry's output dtype and shape.
    pub fn exact(&self) -> usize {
        self.links
            .iter()
            .filter(|l| l.same_op && l.same_type)
            .count()
    }

    /// Share of the considered entries linked to a node doing the same op, 0..=1.
    pub fn same_op_share(&self) -> f64 {
        if self.considered == 0 {
            0.0
        } else {
            self.same_op() as f64 / self.considered as f64
        }
    }

    /// `32/32 entries linked, 32 to a node with the same op or output (100%), 30 also with
    /// the output's dtype and shape (94%)`.
    pub fn describe(&self) -> String {
        let share = |n: usize| 100.0 * n as f64 / self.considered.max(1) as f64;
        format!(
            "{}/{} entries linked, {} to a node with the same op or output ({:.0}%), {} also \
             with the output's dtype and shape ({:.0}%)",
            self.linked(),
            self.considered,
            self.same_op(),
            100.0 * self.same_op_share(),
            self.exact(),
            share(self.exact())
        )
    }

    /// One step's links to a forward graph and to a backward graph, each entry taken from the
    /// graph of its direction. Both must be links of the same step.
    pub fn merge(forward: StepLinks, backward: StepLinks, step: &MsprobeStep) -> StepLinks {
        let mut links = forward.links;
        for (l, b) in links.iter_mut().zip(backward.links) {
            let dir_backward = step
                .entries
                .get(l.entry)
                .and_then(|e| e.call.as_ref())
                .is_some_and(MsprobeCall::backward);
            if dir_backward {
                *l = b;
            }
        }
        StepLinks {
            considered: forward.considered + backward.considered,
            links,
            ..forward
        }
    }
}

/// Links every entry of `step` to a node of `graph`. `modules[i]` is the dotted module of
/// `graph.nodes[i]` (`""`: the root, or unknown); `backward` says which entries the graph runs.
pub fn link(graph: &FxGraph, modules: &[&str], step: &MsprobeStep, backward: bool) -> StepLinks {
    let mut ctx = Ctx::new(graph, modules);
    ctx.backward = backward;
    let mut out = StepLinks {
        step: step.step,
        who: step.who.clone(),
        // Sized once: grown by doubling, a 50k-entry step's links were copied and
        // page-faulted in again at every growth.
        links: Vec::with_capacity(step.entries.len()),
        ..StepLinks::default()
    };
    // The module the dump was in at each call: the last module entry before it (call order).
    let mut inside: Option<(usize, &str)> = None;
    let module_calls = module_call::Calls::of(step, backward);
    let by_key = KeyIndex::new(step);
    let parents = parent_modules(step, &by_key);
    let sources = call_sites(step, &by_key);
    let api_calls = api::Calls::of(step, backward, &parents, &sources);
    // An API's ops and nodes, once per API rather than per call, by the API's number.
    let mut apis: Vec<Option<Rc<api::Api>>> = vec![None; api_calls.apis()];
    for (i, e) in step.entries.iter().enumerate() {
        let mut l = Link {
            entry: i,
            key: e.key.clone(),
            node: None,
            outputs: SmallVec::new(),
            holder: None,
            confidence: Confidence::None,
            same_op: false,
            same_type: false,
            reason: String::new(),
        };
        let out0 = e
            .tensors
            .iter()
            .find(|t| t.slot.starts_with("output"))
            .map(RecTy::of);
        match &e.call {
            None => l.reason = "not an msprobe key this viewer reads".into(),
            Some(c) if c.backward() != backward => {
                l.reason = format!(
                    "a {} entry; this graph is a {}",
                    dir(c.backward()),
                    dir(backward)
                );
            }
            Some(MsprobeCall::ParamsGrad { .. }) => {
                l.reason =
                    "a parameter's gradient: an output of the backward graph, not a call".into();
            }
            Some(MsprobeCall::Module { path, class, n, .. }) => {
                out.considered += 1;
                let path = root_path(path);
                inside = Some((i, path));
                let call = module_call::Call {
                    entry: i,
                    path,
                    class,
                    n: *n,
                    tensors: &e.tensors,
                };
                module_call::link(&ctx, &module_calls, &call, &mut l);
            }
            Some(MsprobeCall::Api { prefix, op, n, .. }) => {
                out.considered += 1;
                // construct.json's parent where there is one (a call after a sub-module
                // returned is its parent's, not the sub-module's), else the last module entry.
                let parent = parents[i].and_then(|k| {
                    let p = step.entries[k].call.as_ref()?.module()?;
                    Some((k, root_path(p)))
                });
                let at = parent.or(inside).map(|(k, p)| api::Inside {
                    path: p,
                    calls: module_calls.count_at(k),
                    call: module_calls.call_of(k),
                });
                let src = sources[i];
                let a = match api_calls.api_of(i) {
                    Some(id) => apis[id]
                        .get_or_insert_with(|| Rc::new(api::Api::new(&ctx, prefix, op)))
                        .clone(),
                    None => Rc::new(api::Api::new(&ctx, prefix, op)),
                };
                let call = api::ApiCall {
                    n: *n,
                    at,
                    src,
                    out0,
                    entry: i,
                };
                api::link(&ctx, &a, call, &api_calls, &mut l);
            }
        }
        // The type is that of the node holding the first output (an op's reshape, say).
        if let (Some(k), Some(out0)) = (l.holder, out0) {
            l.same_type = same_type(ctx.ty(k), out0);
        }
        out.links.push(l);
    }
    out
}

/// Each entry's call site: its own stack's user frame; a backward call has no stack, so its
/// forward call's (`….3.backward` → `….3.forward`), which the backward graph's
/// `Backward of forward node` comments cite.
fn call_sites<'a>(step: &'a MsprobeStep, by_key: &KeyIndex) -> Vec<Option<&'a StackFrame>> {
    (0..step.entries.len())
        .map(|i| {
            step.source_of(i).or_else(|| {
                let fwd = step.entries[i].key.strip_suffix(".backward")?;
                step.source_of(by_key.get(&format!("{fwd}.forward"))?)
            })
        })
        .collect()
}

/// Each entry's parent module call (construct.json), as an entry index.
fn parent_modules(step: &MsprobeStep, by_key: &KeyIndex) -> Vec<Option<usize>> {
    step.entries
        .iter()
        .map(|e| {
            let k = by_key.get(e.parent.as_deref()?)?;
            matches!(step.entries[k].call, Some(MsprobeCall::Module { .. })).then_some(k)
        })
        .collect()
}

/// Each entry by its key, built when a key is first looked up: only construct.json's parents
/// and backward calls (for their forward's stack) ask, and a forward dump without
/// construct.json has neither, while hashing every key of a 50k-entry step was a tenth of
/// linking it.
struct KeyIndex<'a> {
    step: &'a MsprobeStep,
    index: OnceCell<HashMap<&'a str, usize>>,
}

impl<'a> KeyIndex<'a> {
    fn new(step: &'a MsprobeStep) -> KeyIndex<'a> {
        KeyIndex {
            step,
            index: OnceCell::new(),
        }
    }

    fn get(&self, key: &str) -> Option<usize> {
        let index = self.index.get_or_init(|| {
            let step = self.step;
            step.entries
                .iter()
                .enumerate()
                .map(|(i, e)| (&*e.key, i))
                .collect()
        });
        index.get(key).copied()
    }
}

fn dir(backward: bool) -> &'static str {
    if backward { "backward" } else { "forward" }
}

/// msprobe's `__root__` is the module path `""`.
fn root_path(p: &str) -> &str {
    if p == "__root__" { "" } else { p }
}

/// The graph and its modules, with the indexes and caches every entry's link reads: a step of
/// an aten-level dump has an entry per call, so nothing is a walk of the whole graph per entry.
struct Ctx<'a> {
    graph: &'a FxGraph,
    /// The graph is a backward graph (its source comments are `Backward of forward node`).
    backward: bool,
    modules: &'a [&'a str],
    /// Each node's tensor type, by node index, as an index into `type_table` ([`NO_TYPE`]:
    /// none). The type test runs several times per entry: through the nodes themselves (152
    /// bytes apart, the shape behind one more pointer) it missed the cache on every node of a
    /// 415-layer graph, where those of an 83-layer one stayed in it. A model's layers repeat
    /// their types, so the table is a few hundred entries whatever the depth.
    types: Vec<u32>,
    type_table: Vec<Ty>,
    /// The node's only user when that user is a reshape (`view`, `_unsafe_view`, `reshape`),
    /// by node index ([`NO_NODE`]: none): the step an API call's value takes when its op ran
    /// on flattened operands, read for every call, where the node's users and their targets
    /// were two more misses.
    view_user: Vec<u32>,
    /// `call_function` nodes by module path, in graph order. Sorted by path: the modules
    /// within one are a range (a scan of every module per call made a 415-layer link
    /// quadratic).
    by_module: BTreeMap<&'a str, Vec<usize>>,
    /// Every module path ending in the same segments, by those segments (`rotary_emb` →
    /// `layers.0.self_attn.rotary_emb`, …), sorted; built when a call first needs one.
    by_tail: OnceCell<HashMap<&'a str, Vec<&'a str>>>,
    /// `call_function` nodes by target (without `torch.ops.`), in graph order.
    by_target: HashMap<&'a str, Vec<usize>>,
    /// A module's nodes, widened (`module_call`), by path; `None`: no node is in it.
    widened: RefCell<HashMap<String, Option<Rc<Vec<usize>>>>>,
    /// What each of those modules hands on (`module_call`), by path.
    exits: RefCell<HashMap<String, Nodes>>,
    /// The nodes an API call's ops match, by `prefix.op`.
    matching: RefCell<HashMap<String, Rc<Vec<usize>>>>,
    /// Those nodes by the source line they cite (file name, line), by `prefix.op`: a scan of
    /// every such node per call made a 415-layer link quadratic.
    by_line: RefCell<HashMap<String, Rc<Lines<'a>>>>,
    /// Those nodes in a module, in its ancestors or below it, by (`prefix.op`, module path).
    related: RefCell<HashMap<(String, String), Nodes>>,
}

/// Node indices in graph order, shared by the calls that ask for them.
type Nodes = Rc<Vec<usize>>;

/// Nodes by the (file name, line) of their source comment.
type Lines<'a> = HashMap<(&'a str, u32), Vec<usize>>;

impl<'a> Ctx<'a> {
    fn new(graph: &'a FxGraph, modules: &'a [&'a str]) -> Ctx<'a> {
        // Hashed while filling, sorted once: a tree insert per node compared long module
        // paths that share their first 20 bytes a dozen times each.
        let mut by_module: FxHashMap<&str, Vec<usize>> = FxHashMap::default();
        let mut by_target: HashMap<&str, Vec<usize>> = HashMap::default();
        for (i, n) in graph.nodes.iter().enumerate() {
            if n.op != OpKind::CallFunction {
                continue;
            }
            by_module
                .entry(modules.get(i).copied().unwrap_or(""))
                .or_default()
                .push(i);
            let t = n.target.strip_prefix("torch.ops.").unwrap_or(&n.target);
            by_target.entry(t).or_default().push(i);
        }
        let by_module: BTreeMap<&str, Vec<usize>> = by_module.into_iter().collect();
        let mut is_view = vec![false; graph.nodes.len()];
        for (t, v) in &by_target {
            if ["aten._unsafe_view.", "aten.view.", "aten.reshape."]
                .iter()
                .any(|r| t.contains(r))
            {
                for &i in v {
                    is_view[i] = true;
                }
            }
        }
        let view_user = graph
            .nodes
            .iter()
            .map(|n| match n.users.as_slice() {
                [u] if is_view[*u] => *u as u32,
                _ => NO_NODE,
            })
            .collect();
        let (types, type_table) = type_table(graph);
        Ctx {
            graph,
            backward: false,
            modules,
            types,
            type_table,
            view_user,
            by_module,
            by_tail: OnceCell::new(),
            by_target,
            widened: RefCell::default(),
            exits: RefCell::default(),
            matching: RefCell::default(),
            by_line: RefCell::default(),
            related: RefCell::default(),
        }
    }

    fn module(&self, i: usize) -> &str {
        self.modules.get(i).copied().unwrap_or("")
    }

    fn node(&self, i: usize) -> &FxNode {
        &self.graph.nodes[i]
    }

    fn ty(&self, i: usize) -> Option<&Ty> {
        self.type_table.get(*self.types.get(i)? as usize)
    }

    /// Node `i`'s only user, when a reshape.
    fn view_user(&self, i: usize) -> Option<usize> {
        self.view_user
            .get(i)
            .filter(|&&u| u != NO_NODE)
            .map(|&u| u as usize)
    }

    /// `call_function` nodes in `path` or below it, in graph order.
    fn nodes_within(&self, path: &str) -> Vec<usize> {
        let mut v: Vec<usize> = if path.is_empty() {
            self.by_module.values().flatten().copied().collect()
        } else {
            // `path` and every path starting `path.` (`/` is the character after `.`).
            let below = self
                .by_module
                .range::<str, _>((
                    std::ops::Bound::Excluded(format!("{path}.").as_str()),
                    std::ops::Bound::Excluded(format!("{path}/").as_str()),
                ))
                .chain(self.by_module.get_key_value(path));
            below.flat_map(|(_, v)| v.iter().copied()).collect()
        };
        v.sort_unstable();
        v
    }

    /// `cands` (the nodes of `key`'s ops) by the line their source comment cites, in this
    /// graph's direction (`Backward of forward node` in a backward graph).
    fn by_line(&self, key: &str, cands: &[usize]) -> Rc<Lines<'a>> {
        if let Some(v) = self.by_line.borrow().get(key) {
            return v.clone();
        }
        let mut lines: Lines<'a> = HashMap::default();
        for &i in cands {
            // By file name: the run and the compile may sit in different folders.
            if let Some(s) = self.graph.nodes[i].source.as_deref()
                && s.backward_of == self.backward
            {
                lines
                    .entry((file_name(&s.file), s.line))
                    .or_default()
                    .push(i);
            }
        }
        let v = Rc::new(lines);
        self.by_line.borrow_mut().insert(key.to_string(), v.clone());
        v
    }

    /// The `call_function` nodes whose target `matches` (`key`'s ops) in module `path`, below
    /// it or in one of its ancestors (a call's module and the node's may be one inside the
    /// other), in graph order. Cached per key and path.
    fn related(&self, key: &str, path: &str, matches: impl Fn(&str) -> bool) -> Rc<Vec<usize>> {
        let k = (key.to_string(), path.to_string());
        if let Some(v) = self.related.borrow().get(&k) {
            return v.clone();
        }
        let v = if path.is_empty() {
            // Everything lies within the root.
            self.matching(key, &matches)
        } else {
            let ancestors =
                std::iter::once("").chain(path.match_indices('.').map(|(at, _)| &path[..at]));
            let mut v: Vec<usize> = self.nodes_within(path);
            for a in ancestors {
                v.extend(self.by_module.get(a).into_iter().flatten().copied());
            }
            v.retain(|&i| matches(&self.graph.nodes[i].target));
            v.sort_unstable();
            Rc::new(v)
        };
        self.related.borrow_mut().insert(k, v.clone());
        v
    }

    /// The module paths that end in the segments of `tail` (and hold nodes, or have a
    /// descendant that does), sorted.
    fn ending_in(&self, tail: &str) -> &[&'a str] {
        let by_tail = self
            .by_tail
            .get_or_init(|| tails(self.by_module.keys().copied()));
        by_tail.get(tail).map_or(&[], Vec::as_slice)
    }

    /// `call_function` nodes whose target `matches` (cached under `key`), in graph order.
    fn matching(&self, key: &str, matches: impl Fn(&str) -> bool) -> Rc<Vec<usize>> {
        if let Some(v) = self.matching.borrow().get(key) {
            return v.clone();
        }
        let mut v: Vec<usize> = self
            .by_target
            .iter()
            .filter(|(t, _)| matches(t))
            .flat_map(|(_, v)| v.iter().copied())
            .collect();
        v.sort_unstable();
        let v = Rc::new(v);
        self.matching
            .borrow_mut()
            .insert(key.to_string(), v.clone());
        v
    }
}

/// Every prefix of each path that ends at a segment, under every tail of it that starts after
/// a dot: `a.b.c` gives `b` → `a.b`, `b.c` → `a.b.c`, `c` → `a.b.c`.
fn tails<'a>(paths: impl Iterator<Item = &'a str>) -> HashMap<&'a str, Vec<&'a str>> {
    let mut by_tail: HashMap<&str, Vec<&str>> = HashMap::default();
    for m in paths {
        let ends = m.match_indices('.').map(|(at, _)| at).chain([m.len()]);
        for end in ends {
            let p = &m[..end];
            for (dot, _) in p.match_indices('.') {
                by_tail.entry(&p[dot + 1..]).or_default().push(p);
            }
        }
    }
    for v in by_tail.values_mut() {
        v.sort_unstable();
        v.dedup();
    }
    by_tail
}

/// The part of `v` (in graph order) that belongs to call `n` of `calls`.
fn chunk<T>(v: &[T], calls: u32, n: u32) -> &[T] {
    let (calls, n) = (calls.max(1) as usize, n as usize);
    if n >= calls {
        return &[];
    }
    if v.len() < calls {
        return v.get(n..=n).unwrap_or(&[]);
    }
    let per = v.len() / calls;
    let end = if n + 1 == calls {
        v.len()
    } else {
        (n + 1) * per
    };
    &v[n * per..end]
}

/// `m` is `path` or lies below it (`""` holds everything).
fn within(m: &str, path: &str) -> bool {
    path.is_empty()
        || m == path
        || m.strip_prefix(path)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// `torch.bfloat16` as the FX annotation writes it (`bf16`).
fn fx_dtype(torch: &str) -> Option<&'static str> {
    crate::model::tensor::fx_dtype_of_torch(torch)
}

/// The FX dtypes a torch dtype of msprobe's has a short name for
/// ([`fx_dtype_of_torch`](crate::model::tensor::fx_dtype_of_torch)), numbered: the type test
/// compares numbers, not names.
const FX_DTYPES: [&str; 11] = [
    "bf16", "f16", "f32", "f64", "i64", "i32", "i16", "i8", "u8", "b8", "c64",
];

fn dtype_code(fx: &str) -> Option<u8> {
    FX_DTYPES.iter().position(|d| *d == fx).map(|i| i as u8)
}

/// A node's tensor type as the links compare it: the dims parsed once (`None`: symbolic), the
/// dtype numbered (`None`: one no msprobe record has).
struct Ty {
    dtype: Option<u8>,
    dims: Vec<Option<i64>>,
}

/// An msprobe record's type as the links compare it, read once per record (a call's test
/// runs on several nodes).
#[derive(Clone, Copy)]
struct RecTy<'a> {
    dtype: Option<u8>,
    shape: &'a [i64],
}

impl<'a> RecTy<'a> {
    fn of(rec: &'a MsprobeTensor) -> RecTy<'a> {
        RecTy {
            dtype: fx_dtype(&rec.dtype).and_then(dtype_code),
            shape: &rec.shape,
        }
    }
}

/// No tensor type (see `Ctx::types`).
const NO_TYPE: u32 = u32::MAX;

/// No node (see `Ctx::view_user`).
const NO_NODE: u32 = u32::MAX;

/// Each node's type as an index into a table of the graph's distinct types. Nodes annotated
/// alike share their annotation's text when parsed, so the text's address finds a type seen
/// before without reading it; a type without an annotation is compared by value.
fn type_table<'a>(graph: &'a FxGraph) -> (Vec<u32>, Vec<Ty>) {
    let mut by_text: FxHashMap<*const u8, u32> = FxHashMap::default();
    let mut by_value: FxHashMap<(&'a str, &'a [Short]), u32> = FxHashMap::default();
    let mut table: Vec<Ty> = Vec::new();
    let mut intern = |t: &'a TensorType, table: &mut Vec<Ty>| -> u32 {
        *by_value
            .entry((t.dtype.as_str(), &t.shape))
            .or_insert_with(|| {
                table.push(Ty {
                    dtype: dtype_code(&t.dtype),
                    dims: t.shape.iter().map(|d| d.parse::<i64>().ok()).collect(),
                });
                table.len() as u32 - 1
            })
    };
    let types = graph
        .nodes
        .iter()
        .map(|n| {
            let Some(t) = n.tensor() else { return NO_TYPE };
            match &n.annotation {
                Some(a) => *by_text
                    .entry(a.as_ptr())
                    .or_insert_with(|| intern(t, &mut table)),
                None => intern(t, &mut table),
            }
        })
        .collect();
    (types, table)
}

/// The node's annotated value has the record's dtype and shape (a symbolic dim matches any).
fn same_type(t: Option<&Ty>, rec: RecTy) -> bool {
    let Some(t) = t else { return false };
    if rec.dtype.is_none() || t.dtype != rec.dtype || t.dims.len() != rec.shape.len() {
        return false;
    }
    t.dims
        .iter()
        .zip(rec.shape)
        .all(|(d, &r)| d.is_none_or(|d| d == r))
}

/// `bf16[2, 8, 16]`.
fn describe(rec: &MsprobeTensor) -> String {
    let dims: Vec<String> = rec.shape.iter().map(i64::to_string).collect();
    format!(
        "{}[{}]",
        fx_dtype(&rec.dtype).unwrap_or(&rec.dtype),
        dims.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tail index answers as the scan of every module it replaced.
    #[test]
    fn tails_equal_the_scan_of_every_module() {
        let paths = [
            "",
            "rotary_emb",
            "model.rotary_emb",
            "layers.0.self_attn.rotary_emb",
            "layers.0.self_attn.rotary_emb.inv",
            "layers.1.self_attn",
            "layers.10.mlp",
            "a.b.a.b",
            "x.mlp_up",
        ];
        let scan = |path: &str| {
            let tail = format!(".{path}");
            let mut other: Vec<&str> = Vec::new();
            for m in paths {
                for (at, _) in m.match_indices(&tail) {
                    let p = &m[..at + tail.len()];
                    if p.len() == m.len() || m[p.len()..].starts_with('.') {
                        other.push(p);
                    }
                }
            }
            other.sort();
            other.dedup();
            other
        };
        let index = tails(paths.into_iter());
        for q in [
            "rotary_emb",
            "self_attn.rotary_emb",
            "self_attn",
            "mlp",
            "b",
            "a.b",
            "0",
            "inv",
            "up",
            "layers",
        ] {
            let got = index.get(q).cloned().unwrap_or_default();
            assert_eq!(got, scan(q), "{q}");
        }
        assert_eq!(
            index["rotary_emb"],
            ["layers.0.self_attn.rotary_emb", "model.rotary_emb"]
        );
    }
}
