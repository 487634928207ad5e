//! Logical lines, class and def headers, docstrings and stack-trace comments.

use super::*;

pub(super) enum LogicalLine<'a> {
    Complete(&'a str),
    /// Brackets still open at the end of the line; depth given.
    Open(&'a str, i64),
}

/// Strips a trailing `# comment` and tells whether the statement continues on the next line.
/// Only a line ending in an opening bracket or a comma may continue: a garbage line with an
/// unclosed bracket must not swallow the good lines after it.
pub(super) fn logical_line(body: &str) -> LogicalLine<'_> {
    let may_continue = body.ends_with(['(', '[', '{', ',']);
    if !may_continue && !body.contains('#') {
        return LogicalLine::Complete(body);
    }
    let (depth, comment) = scan_brackets(body);
    let stmt = comment.map_or(body, |c| body[..c].trim_end());
    if depth > 0 && stmt.ends_with(['(', '[', '{', ',']) {
        LogicalLine::Open(stmt, depth)
    } else {
        LogicalLine::Complete(stmt)
    }
}

/// Net bracket depth of `s` and the byte offset of a `#` comment, ignoring string contents.
pub(super) fn scan_brackets(s: &str) -> (i64, Option<usize>) {
    let b = s.as_bytes();
    let mut depth = 0i64;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth -= 1,
            b'#' => return (depth, Some(i)),
            q @ (b'\'' | b'"') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            _ => {}
        }
        i += 1;
    }
    (depth, None)
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Header<'a> {
    Class(&'a str),
    /// The method or function name.
    Def(&'a str),
}

impl<'a> Header<'a> {
    pub(super) fn of(stmt: &'a str) -> Option<Self> {
        if !stmt.ends_with(':') {
            return None;
        }
        if let Some(rest) = stmt.strip_prefix("class ") {
            let rest = rest.trim_start();
            let end = rest.find(['(', ':'])?;
            let name = rest[..end].trim();
            if name.is_empty() || name.contains(char::is_whitespace) {
                return None;
            }
            if rest[end..].starts_with('(') && !rest.trim_end_matches(':').trim_end().ends_with(')')
            {
                return None;
            }
            return Some(Header::Class(name));
        }
        let rest = stmt.strip_prefix("def ")?.trim_start();
        let end = rest.find('(')?;
        let name = rest[..end].trim_end();
        is_ident(name).then_some(Header::Def(name))
    }
}

pub(super) fn is_docstring(stmt: &str) -> bool {
    (stmt.starts_with("\"\"\"") && stmt.len() >= 6 && stmt.ends_with("\"\"\""))
        || (stmt.starts_with('"') && stmt.ends_with('"') && stmt.len() >= 2)
}

pub(super) fn strip_keyword<'a>(stmt: &'a str, kw: &str) -> Option<&'a str> {
    let rest = stmt.strip_prefix(kw)?;
    match rest.bytes().next() {
        None => Some(rest),
        Some(c) if !is_ident_byte(c) => Some(rest),
        _ => None,
    }
}

pub(super) enum StackComment {
    Loc(SourceLoc),
    NoStack,
    Other,
    Malformed,
}

/// `# File: /x.py:12 in f, code: y = f(x)`, optionally after `Backward of forward node: `,
/// `Annotation: {...}`, `ac_graph_id: …` / `recompute: …`, or `# key: value #` prefixes.
pub(super) fn parse_stack_comment(body: &str) -> StackComment {
    let text = skip_annotation(body.trim_start_matches('#'));
    if let Some(i) = text.find("File: ") {
        let backward = text[..i].trim_end().ends_with("Backward of forward node:");
        return match parse_summary(&text[i + "File: ".len()..]) {
            Some(mut loc) => {
                loc.backward_of = backward;
                StackComment::Loc(loc)
            }
            None => StackComment::Malformed,
        };
    }
    if text.contains("No stacktrace found for following nodes") {
        StackComment::NoStack
    } else {
        StackComment::Other
    }
}

/// Skips ` Annotation: {...}` so text inside the dict cannot look like `File: `.
pub(super) fn skip_annotation(text: &str) -> &str {
    let Some(start) = text.find("Annotation: {") else {
        return text;
    };
    let open = start + "Annotation: ".len();
    match matching_close(&text[open..]) {
        Some(len) => &text[open + len..],
        None => text,
    }
}

/// Length up to and including the bracket closing the one `s` starts with, skipping strings.
pub(super) fn matching_close(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            q @ (b'\'' | b'"') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// `/x.py:12 in f, code: src` (torch ≥ 2.1) or `/x.py:12, code: src` (older).
pub(super) fn parse_summary(s: &str) -> Option<SourceLoc> {
    let (head, code) = match s.find(", code:") {
        Some(i) => {
            let code = &s[i + ", code:".len()..];
            (&s[..i], code.strip_prefix(' ').unwrap_or(code))
        }
        None => (s, ""),
    };
    let (loc, function) = match head.rfind(" in ") {
        Some(i) => (&head[..i], head[i + 4..].trim()),
        None => (head, ""),
    };
    let (file, line) = loc.rsplit_once(':')?;
    let line = line.trim().parse::<u32>().ok()?;
    Some(SourceLoc {
        file: file.trim().into(),
        line,
        function: function.to_string(),
        code: code.to_string(),
        backward_of: false,
    })
}
