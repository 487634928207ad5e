//! The byte scanner of one statement, and its tokens: operators, numbers, string literals.

use super::*;

/// Byte cursor over one statement. Positions only ever stop on ASCII bytes or the end, so
/// slicing is on char boundaries; `slice` is still checked.
pub(super) struct Scan<'a> {
    pub(super) s: &'a str,
    pub(super) b: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> Scan<'a> {
    pub(super) fn new(s: &'a str) -> Self {
        Scan {
            s,
            b: s.as_bytes(),
            pos: 0,
        }
    }
    pub(super) fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }
    pub(super) fn peek_at(&self, k: usize) -> Option<u8> {
        self.b.get(self.pos + k).copied()
    }
    pub(super) fn bump(&mut self) {
        self.pos += 1;
    }
    pub(super) fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }
    pub(super) fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        self.pos += usize::from(hit);
        hit
    }
    pub(super) fn eat_str(&mut self, t: &str) -> bool {
        let hit = self.rest().starts_with(t);
        if hit {
            self.pos += t.len();
        }
        hit
    }
    /// `=` but not `==`.
    pub(super) fn eat_assign(&mut self) -> bool {
        if self.peek() == Some(b'=') && self.peek_at(1) != Some(b'=') {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    pub(super) fn rest(&self) -> &'a str {
        self.s.get(self.pos..).unwrap_or("")
    }
    pub(super) fn slice(&self, a: usize, b: usize) -> &'a str {
        self.s.get(a..b).unwrap_or("")
    }
    pub(super) fn at_end(&self) -> bool {
        self.pos >= self.b.len()
    }
    /// End of statement: nothing left, or the `;  a = b = None` tail.
    pub(super) fn at_stmt_end(&mut self) -> bool {
        self.ws();
        self.at_end() || self.peek() == Some(b';')
    }
    pub(super) fn ident(&mut self) -> Option<&'a str> {
        let start = self.pos;
        if !self.peek().is_some_and(is_ident_start) {
            return None;
        }
        while self.peek().is_some_and(is_ident_byte) {
            self.pos += 1;
        }
        Some(self.slice(start, self.pos))
    }
    /// `a.b.c` (no spaces).
    pub(super) fn dotted(&mut self) -> Option<&'a str> {
        let start = self.pos;
        self.ident()?;
        while self.peek() == Some(b'.') && self.peek_at(1).is_some_and(is_ident_start) {
            self.pos += 1;
            self.ident();
        }
        Some(self.slice(start, self.pos))
    }
}

pub(super) fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}
pub(super) fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}
pub(super) fn is_ident(s: &str) -> bool {
    s.as_bytes().first().is_some_and(|&c| is_ident_start(c)) && s.bytes().all(is_ident_byte)
}

pub(super) fn too_deep() -> Cow<'static, str> {
    format!("brackets nested deeper than {MAX_DEPTH} levels").into()
}

pub(super) fn value_ends(sc: &Scan<'_>) -> bool {
    match sc.peek() {
        None => true,
        Some(b',' | b')' | b']' | b'}' | b':' | b';') => true,
        Some(b'=') => sc.peek_at(1) != Some(b'='),
        _ => false,
    }
}

/// Any operator inside an argument expression (the expression is kept verbatim).
pub(super) fn expr_op(sc: &mut Scan<'_>) -> bool {
    if binary_op(sc).is_some() {
        return true;
    }
    let save = sc.pos;
    if let Some(word) = sc.ident()
        && matches!(word, "and" | "or" | "in" | "is" | "not" | "if" | "else")
    {
        return true;
    }
    sc.pos = save;
    false
}

/// FX's `magic_methods`, longest token first. Not followed by `=` (that would be `+=`).
pub(super) fn binary_op(sc: &mut Scan<'_>) -> Option<&'static str> {
    const OPS: [(&str, &str); 19] = [
        ("**", "operator.pow"),
        ("//", "operator.floordiv"),
        ("<<", "operator.lshift"),
        (">>", "operator.rshift"),
        ("<=", "operator.le"),
        (">=", "operator.ge"),
        ("==", "operator.eq"),
        ("!=", "operator.ne"),
        ("+", "operator.add"),
        ("-", "operator.sub"),
        ("*", "operator.mul"),
        ("/", "operator.truediv"),
        ("%", "operator.mod"),
        ("@", "operator.matmul"),
        ("&", "operator.and_"),
        ("|", "operator.or_"),
        ("^", "operator.xor"),
        ("<", "operator.lt"),
        (">", "operator.gt"),
    ];
    let rest = sc.rest();
    let (tok, target) = OPS.iter().find(|(tok, _)| rest.starts_with(tok))?;
    let augmented = !tok.ends_with('=') && rest.as_bytes().get(tok.len()) == Some(&b'=');
    if augmented {
        return None;
    }
    sc.pos += tok.len();
    Some(target)
}

/// `-x`, `+x`, `~x`, `not x` at the start of a right-hand side (not a signed number).
pub(super) fn unary_op(sc: &mut Scan<'_>) -> Option<&'static str> {
    let rest = sc.rest();
    let next = rest.as_bytes().get(1).copied();
    let is_number = next.is_some_and(|c| c.is_ascii_digit() || c == b'.')
        || (rest.get(1..).is_some_and(|r| r.starts_with("inf"))
            && !rest.as_bytes().get(4).copied().is_some_and(is_ident_byte));
    let target = match rest.as_bytes().first()? {
        b'-' if !is_number => "operator.neg",
        b'+' if !is_number => "operator.pos",
        b'~' => "operator.invert",
        b'n' if rest.starts_with("not ") => {
            sc.pos += 3;
            return Some("operator.not_");
        }
        _ => return None,
    };
    sc.pos += 1;
    Some(target)
}

/// `+=` and friends: FX's `inplace_methods`.
pub(super) fn aug_op(sc: &mut Scan<'_>) -> Option<&'static str> {
    const OPS: [(&str, &str); 13] = [
        ("**=", "operator.ipow"),
        ("//=", "operator.ifloordiv"),
        ("<<=", "operator.ilshift"),
        (">>=", "operator.irshift"),
        ("+=", "operator.iadd"),
        ("-=", "operator.isub"),
        ("*=", "operator.imul"),
        ("/=", "operator.itruediv"),
        ("%=", "operator.imod"),
        ("@=", "operator.imatmul"),
        ("&=", "operator.iand"),
        ("|=", "operator.ior"),
        ("^=", "operator.ixor"),
    ];
    let rest = sc.rest();
    let (tok, target) = OPS.iter().find(|(tok, _)| rest.starts_with(tok))?;
    sc.pos += tok.len();
    Some(target)
}

pub(super) fn number(sc: &mut Scan<'_>) -> PResult<Arg> {
    let start = sc.pos;
    if matches!(sc.peek(), Some(b'-' | b'+')) {
        sc.bump();
    }
    let digits = |sc: &mut Scan<'_>| {
        while sc.peek().is_some_and(|c| c.is_ascii_digit() || c == b'_') {
            sc.bump();
        }
    };
    let mut float = false;
    if sc.rest().starts_with("0x") || sc.rest().starts_with("0X") {
        sc.pos += 2;
        while sc.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
            sc.bump();
        }
        let text = sc.slice(start, sc.pos);
        let (neg, hex) = match text.strip_prefix('-') {
            Some(h) => (true, h),
            None => (false, text.trim_start_matches('+')),
        };
        return Ok(match i64::from_str_radix(&hex[2..], 16) {
            Ok(v) if neg => Arg::Int(-v),
            Ok(v) => Arg::Int(v),
            Err(_) => Arg::Expr(text.to_string()),
        });
    }
    digits(sc);
    if sc.eat(b'.') {
        float = true;
        digits(sc);
    }
    if matches!(sc.peek(), Some(b'e' | b'E'))
        && (sc.peek_at(1).is_some_and(|c| c.is_ascii_digit())
            || (matches!(sc.peek_at(1), Some(b'+' | b'-'))
                && sc.peek_at(2).is_some_and(|c| c.is_ascii_digit())))
    {
        float = true;
        sc.pos += 2;
        digits(sc);
    }
    if sc.peek().is_some_and(is_ident_byte) {
        // `1j`, `2L`: keep verbatim.
        while sc.peek().is_some_and(is_ident_byte) {
            sc.bump();
        }
        return Ok(Arg::Expr(sc.slice(start, sc.pos).to_string()));
    }
    let text = sc.slice(start, sc.pos);
    if text == "-" || text == "+" || text == "." {
        return Err("malformed number".into());
    }
    let clean: Cow<str> = if text.contains('_') {
        Cow::Owned(text.replace('_', ""))
    } else {
        Cow::Borrowed(text)
    };
    // An int beyond i64 stays verbatim rather than silently losing digits as a float.
    let parsed = if float {
        clean.parse::<f64>().ok().map(Arg::Float)
    } else {
        clean.parse::<i64>().ok().map(Arg::Int)
    };
    Ok(parsed.unwrap_or_else(|| Arg::Expr(text.to_string())))
}

/// A Python string literal in single or double quotes, unescaped.
pub(super) fn string_lit(sc: &mut Scan<'_>) -> PResult<String> {
    let Some(q) = sc.peek() else {
        return Err("expected a string".into());
    };
    sc.bump();
    let start = sc.pos;
    let mut escaped = false;
    loop {
        match sc.peek() {
            None => return Err("unterminated string".into()),
            Some(b'\\') => {
                escaped = true;
                sc.pos = (sc.pos + 2).min(sc.b.len());
            }
            Some(c) if c == q => break,
            Some(_) => sc.bump(),
        }
    }
    let raw = sc.slice(start, sc.pos);
    sc.bump();
    Ok(if escaped {
        unescape(raw)
    } else {
        raw.to_string()
    })
}

pub(super) fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('0') => out.push('\0'),
            Some(e @ ('x' | 'u' | 'U')) => {
                let len = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = chars.by_ref().take(len).collect();
                match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                    Some(ch) => out.push(ch),
                    None => {
                        out.push('\\');
                        out.push(e);
                        out.push_str(&hex);
                    }
                }
            }
            Some(other @ ('\\' | '\'' | '"')) => out.push(other),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}
