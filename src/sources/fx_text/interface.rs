//! A graph file's outside ([`GraphInterface`]) read without building its nodes: the outer
//! `forward`'s signature, the annotation of every name its body assigns, and its `return`.
//! Every backward of a run is paired with its forward this way before any graph is parsed whole
//! (docs/formats.md §1.2). Lines are read as [`parse_fx`] reads them: comments stripped, a
//! statement whose brackets stay open joined with the lines after it.

use super::*;
use crate::model::fx::{GraphInterface, Value};

/// The interface of the first `forward` in `text` (the outer graph's: print_readable writes a
/// nested class after its parent's body). Never panics; a text with no `forward` gives an empty
/// interface, one cut before its `return` no outputs.
pub fn interface(text: &str) -> GraphInterface {
    let mut out = GraphInterface::default();
    let mut stmts = Statements {
        lines: text.split('\n'),
        replay: None,
    };
    let (def_indent, params) = loop {
        let Some((indent, stmt)) = stmts.next() else {
            return out;
        };
        if matches!(Header::of(&stmt), Some(Header::Def("forward"))) {
            match parse_signature(&stmt) {
                Ok(params) => break (indent, value_list(params)),
                Err(_) => return out,
            }
        }
    };
    // Each name's annotation: the parameters', then every annotated line's.
    let mut anns: HashMap<String, String> = params
        .iter()
        .filter_map(|v| Some((v.name.clone(), v.ann.clone()?)))
        .collect();
    out.inputs = params;
    let mut returned: Option<Vec<Option<String>>> = None;
    for (indent, stmt) in stmts {
        if indent <= def_indent {
            // The body is over at a header or once it has returned; a stray line before its
            // return is garbage inside it (as `parse_fx` reads it).
            if returned.is_some() || Header::of(&stmt).is_some() {
                break;
            }
            continue;
        }
        if let Some(rest) = stmt.strip_prefix("return")
            && (rest.is_empty() || rest.starts_with([' ', '(', '[']))
        {
            returned = Some(returned_names(rest.trim()));
            continue;
        }
        let mut sc = Scan::new(&stmt);
        if let Some(name) = sc.ident() {
            sc.ws();
            if sc.eat(b':') {
                sc.ws();
                if let Ok(ann) = annotation(&mut sc) {
                    anns.insert(name.to_string(), ann.to_string());
                }
            }
        }
    }
    out.outputs = returned
        .unwrap_or_default()
        .into_iter()
        .map(|n| {
            n.map(|name| Value {
                ann: anns.get(&name).cloned(),
                name,
            })
        })
        .collect();
    out
}

fn value_list(params: Vec<Param<'_>>) -> Vec<Value> {
    params
        .into_iter()
        .filter(|p| p.name != "self")
        .map(|p| Value {
            name: p.name.to_string(),
            ann: p.ann.map(str::to_string),
        })
        .collect()
}

/// `(a, b, None)` / `[a]` / `a` / `pytree.tree_unflatten((a, b), self._out_spec)` → the
/// names returned, `None` for an item that is no name.
fn returned_names(rest: &str) -> Vec<Option<String>> {
    let rest = match rest
        .strip_prefix("pytree.tree_unflatten(")
        .and_then(|r| r.strip_suffix(')'))
    {
        Some(args) => top_level_items(args).first().map_or("", |a| a.trim()),
        None => rest,
    };
    let inner = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .or_else(|| rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')));
    let Some(inner) = inner else {
        return vec![name_of(rest)];
    };
    top_level_items(inner).into_iter().map(name_of).collect()
}

/// A returned item's name, when it is one.
fn name_of(item: &str) -> Option<String> {
    let s = item.trim();
    (is_ident(s) && !matches!(s, "None" | "True" | "False")).then(|| s.to_string())
}

/// The comma-separated items of `inner` at bracket depth 0, a trailing empty one left out.
fn top_level_items(inner: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i64, 0);
    let b = inner.as_bytes();
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    let last_empty = items.last().is_some_and(|s| s.trim().is_empty());
    if last_empty {
        items.pop();
    }
    items
}

/// The file's statements with their indentation: comments and blank lines left out, a
/// statement whose brackets stay open joined with the lines after it (bounded as `parse_fx`
/// bounds it).
struct Statements<'a> {
    lines: std::str::Split<'a, char>,
    /// A line to read again: it ended a statement that never closed.
    replay: Option<&'a str>,
}

/// A line's indentation and its text without it.
fn split_indent(line: &str) -> (usize, &str) {
    let body = line.trim_start_matches([' ', '\t']);
    (line.len() - body.len(), body.trim_end())
}

impl<'a> Iterator for Statements<'a> {
    type Item = (usize, Cow<'a, str>);

    fn next(&mut self) -> Option<Self::Item> {
        let mut pending: Option<(usize, i64, String)> = None;
        while let Some(raw) = self.replay.take().or_else(|| self.lines.next()) {
            let raw = raw.strip_suffix('\r').unwrap_or(raw);
            let line = crate::sources::read::strip_ansi(raw);
            let plain: Option<&'a str> = match &line {
                Cow::Borrowed(l) => Some(*l),
                Cow::Owned(_) => None,
            };
            let (indent, body) = split_indent(&line);
            if body.is_empty() || body.starts_with('#') {
                continue;
            }
            if let Some((at, depth, mut text)) = pending.take() {
                if indent <= at && !body.starts_with([')', ']', '}']) {
                    // Never closed: dropped, and this line read again on its own.
                    self.replay = Some(raw);
                    continue;
                }
                let (delta, comment) = scan_brackets(body);
                let piece = comment.map_or(body, |c| body[..c].trim_end());
                if !text.ends_with(['(', '[', '{']) && !piece.starts_with([')', ']', '}']) {
                    text.push(' ');
                }
                text.push_str(piece);
                let depth = depth + delta;
                if text.len() > MAX_STATEMENT_BYTES {
                    continue;
                }
                if depth > 0 {
                    pending = Some((at, depth, text));
                    continue;
                }
                return Some((at, Cow::Owned(text)));
            }
            match logical_line(body) {
                LogicalLine::Complete("") => {}
                LogicalLine::Complete(s) => {
                    let stmt = match plain {
                        Some(l) => match logical_line(split_indent(l).1) {
                            LogicalLine::Complete(s) | LogicalLine::Open(s, _) => Cow::Borrowed(s),
                        },
                        None => Cow::Owned(s.to_string()),
                    };
                    return Some((indent, stmt));
                }
                LogicalLine::Open(s, depth) => pending = Some((indent, depth, s.to_string())),
            }
        }
        None
    }
}
