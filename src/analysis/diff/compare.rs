//! Comparing two matched nodes field by field (target, inputs, args, kwargs, dtype, shape,
//! source), and the before / after texts of what changed.

use super::*;

/// A node reference as the diff sees it: a B node index, an unmatched A node, or a name that is
/// no node of the graph (compared as text).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Ref<'g> {
    Node(usize),
    Unmatched,
    Name(&'g str),
}

pub(super) fn collect_refs<'g>(
    arg: &'g Arg,
    g: &FxGraph,
    map: Option<&[Option<usize>]>,
    out: &mut Vec<Ref<'g>>,
) {
    match arg {
        Arg::Node(name) => out.push(match g.by_name.get(name) {
            Some(i) => match map {
                Some(m) => m
                    .get(i)
                    .copied()
                    .flatten()
                    .map_or(Ref::Unmatched, Ref::Node),
                None => Ref::Node(i),
            },
            None => Ref::Name(name),
        }),
        Arg::List(items) | Arg::Tuple(items) => {
            for x in items {
                collect_refs(x, g, map, out);
            }
        }
        _ => {}
    }
}

/// Node references of `n`'s args then kwargs; A's mapped to B through `map`.
pub(super) fn refs_of<'g>(
    n: &'g FxNode,
    g: &FxGraph,
    map: Option<&[Option<usize>]>,
    out: &mut Vec<Ref<'g>>,
) {
    out.clear();
    for a in &n.args {
        collect_refs(a, g, map, out);
    }
    for (_, a) in &n.kwargs {
        collect_refs(a, g, map, out);
    }
}

/// Equal as literals; node references compare equal to each other (they are `inputs`).
pub(super) fn lit_eq(a: &Arg, b: &Arg) -> bool {
    match (a, b) {
        (Arg::Node(_), Arg::Node(_)) => true,
        (Arg::Int(x), Arg::Int(y)) => x == y,
        (Arg::Float(x), Arg::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        (Arg::Bool(x), Arg::Bool(y)) => x == y,
        (Arg::Str(x), Arg::Str(y)) => x == y,
        (Arg::Expr(x), Arg::Expr(y)) => x == y,
        (Arg::None, Arg::None) => true,
        (Arg::List(x), Arg::List(y)) | (Arg::Tuple(x), Arg::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| lit_eq(p, q))
        }
        _ => false,
    }
}

pub(super) fn args_equal(a: &[Arg], b: &[Arg]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| lit_eq(x, y))
}

pub(super) fn kwargs_equal(a: &[(String, Arg)], b: &[(String, Arg)]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.iter()
        .zip(b)
        .all(|((k, x), (l, y))| k == l && lit_eq(x, y))
    {
        return true;
    }
    // Same keywords in another order.
    a.iter()
        .all(|(k, x)| b.iter().any(|(l, y)| k == l && lit_eq(x, y)))
}

pub(super) fn literals_equal(a: &FxNode, b: &FxNode) -> bool {
    args_equal(&a.args, &b.args) && kwargs_equal(&a.kwargs, &b.kwargs)
}

/// The dtype side of an annotation: element type, device and wrapper; `Sym`; other text.
pub(super) fn dtype_of(n: &FxNode) -> Option<(&str, Option<&str>, Option<&str>)> {
    match &n.meta {
        Some(ValueMeta::Tensor(t)) => {
            Some((t.dtype.as_str(), t.device.as_deref(), t.wrapper.as_deref()))
        }
        Some(ValueMeta::Sym(_)) => Some(("Sym", None, None)),
        Some(ValueMeta::Other(s)) => Some((s.as_str(), None, None)),
        None => None,
    }
}

/// Sizes, strides, `Sym` expression.
pub(super) type ShapeKey<'n> = (&'n [Short], Option<&'n [Short]>, Option<&'n str>);

/// The shape side of an annotation: sizes and strides; a `Sym`'s expression.
pub(super) fn shape_of(n: &FxNode) -> Option<ShapeKey<'_>> {
    match &n.meta {
        Some(ValueMeta::Tensor(t)) => Some((&t.shape, t.stride.as_deref(), None)),
        Some(ValueMeta::Sym(e)) => Some((&[], None, Some(e.as_str()))),
        Some(ValueMeta::Other(_)) | None => None,
    }
}

pub(super) fn compare<'g>(
    an: &'g FxNode,
    bn: &'g FxNode,
    ga: &FxGraph,
    gb: &FxGraph,
    a2b: &[Option<usize>],
    refs_a: &mut Vec<Ref<'g>>,
    refs_b: &mut Vec<Ref<'g>>,
) -> Fields {
    let mut f = Fields::EMPTY;
    // A placeholder's target is its own (original) name: renaming covers it.
    let target_differs = an.op != bn.op || (an.op != OpKind::Placeholder && an.target != bn.target);
    if target_differs {
        f.insert(Field::Target);
    }
    refs_of(an, ga, Some(a2b), refs_a);
    refs_of(bn, gb, None, refs_b);
    if refs_a != refs_b {
        f.insert(Field::Inputs);
    }
    if !args_equal(&an.args, &bn.args) {
        f.insert(Field::Args);
    }
    if !kwargs_equal(&an.kwargs, &bn.kwargs) {
        f.insert(Field::Kwargs);
    }
    if an.meta != bn.meta {
        if dtype_of(an) != dtype_of(bn) {
            f.insert(Field::Dtype);
        }
        if shape_of(an) != shape_of(bn) {
            f.insert(Field::Shape);
        }
    }
    if an.source != bn.source {
        f.insert(Field::Source);
    }
    f
}

/// Before → after text of each changed field of a matched pair, for the CLI and the inspector:
/// short targets, argument lists as written, annotations, `file:line` sources.
pub fn change_details(a: &FxNode, b: &FxNode, fields: Fields) -> Vec<(Field, String, String)> {
    fields
        .iter()
        .map(|f| {
            let (x, y) = match f {
                Field::Target => (target_text(a), target_text(b)),
                Field::Inputs => (refs_text(a), refs_text(b)),
                Field::Args => (args_text(&a.args), args_text(&b.args)),
                Field::Kwargs => (kwargs_text(&a.kwargs), kwargs_text(&b.kwargs)),
                Field::Dtype | Field::Shape => (meta_text(a), meta_text(b)),
                Field::Source => (source_text(a), source_text(b)),
            };
            (f, x, y)
        })
        .collect()
}

pub(super) fn target_text(n: &FxNode) -> String {
    match n.op {
        OpKind::CallFunction | OpKind::Output => short_target(n),
        OpKind::Placeholder => "placeholder".into(),
        _ => format!("{} {}", n.op.as_str(), short_target(n)),
    }
}

pub(super) fn refs_text(n: &FxNode) -> String {
    fn walk(a: &Arg, out: &mut Vec<String>) {
        match a {
            Arg::Node(s) => out.push(s.to_string()),
            Arg::List(v) | Arg::Tuple(v) => v.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    n.args.iter().for_each(|a| walk(a, &mut out));
    n.kwargs.iter().for_each(|(_, a)| walk(a, &mut out));
    if out.is_empty() {
        return "(none)".into();
    }
    out.join(", ")
}

pub(super) fn args_text(args: &[Arg]) -> String {
    let v: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    format!("({})", v.join(", "))
}

pub(super) fn kwargs_text(kw: &[(String, Arg)]) -> String {
    let v: Vec<String> = kw.iter().map(|(k, a)| format!("{k}={a}")).collect();
    format!("{{{}}}", v.join(", "))
}

pub(super) fn meta_text(n: &FxNode) -> String {
    match &n.meta {
        Some(ValueMeta::Tensor(t)) => {
            let mut s = format!("{}[{}]", t.dtype, t.shape.join(", "));
            if let Some(st) = &t.stride {
                s.push_str(&format!("[{}]", st.join(", ")));
            }
            if let Some(d) = &t.device {
                s.push_str(d);
            }
            if let Some(w) = &t.wrapper {
                s = format!("{w}({s})");
            }
            s
        }
        Some(m) => m.to_string(),
        None => "-".into(),
    }
}

pub(super) fn source_text(n: &FxNode) -> String {
    n.source.as_ref().map_or_else(|| "-".into(), |s| s.short())
}
