//! `forward` signatures and their annotations (`f32[4, 16]`, `Sym(s0)`): the value metadata of
//! placeholders and annotated nodes.

use super::*;

pub(super) struct Param<'a> {
    /// Node name: the parameter without `*`.
    pub(super) name: &'a str,
    /// As written, with `*` for varargs.
    pub(super) target: &'a str,
    pub(super) ann: Option<&'a str>,
}

/// `def forward(self, a: "f32[2]", b, *args) -> T:` → parameters in order.
pub(super) fn parse_signature(stmt: &str) -> PResult<Vec<Param<'_>>> {
    let mut sc = Scan::new(stmt);
    if !sc.eat_str("def") {
        return Err("expected `def`".into());
    }
    sc.ws();
    sc.ident().ok_or("expected the method name")?;
    sc.ws();
    if !sc.eat(b'(') {
        return Err("expected `(` after the method name".into());
    }
    let mut params = Vec::new();
    loop {
        sc.ws();
        if sc.eat(b')') {
            break;
        }
        let start = sc.pos;
        while sc.eat(b'*') {}
        let name = sc.ident().ok_or("expected a parameter name")?;
        let target = sc.slice(start, sc.pos);
        sc.ws();
        let ann = if sc.eat(b':') {
            sc.ws();
            Some(annotation(&mut sc)?)
        } else {
            None
        };
        sc.ws();
        if sc.eat_assign() {
            let mut refs = Vec::new();
            let names = crate::model::names::NameIndex::default();
            let mut cx = ArgCx {
                names: &names,
                refs: &mut refs,
            };
            cx.value(&mut sc, 1)?;
        }
        params.push(Param { name, target, ann });
        sc.ws();
        if sc.eat(b',') {
            continue;
        }
        if sc.eat(b')') {
            break;
        }
        return Err("expected `,` or `)` in the signature".into());
    }
    sc.ws();
    if sc.eat_str("->") {
        while sc.peek().is_some_and(|c| c != b':') {
            sc.bump();
        }
    }
    if !sc.eat(b':') || !sc.at_end() {
        return Err("expected `:` at the end of the signature".into());
    }
    Ok(params)
}

/// An annotation after `name:`: `"f32[2]"` quoted, or unquoted up to the next top-level
/// `,` `)` `=` `;` (older torch: `arg0_1: f32[20, 20]`).
pub(super) fn annotation<'a>(sc: &mut Scan<'a>) -> PResult<&'a str> {
    if let Some(q @ (b'"' | b'\'')) = sc.peek() {
        sc.bump();
        let start = sc.pos;
        while let Some(c) = sc.peek() {
            if c == q {
                let ann = sc.slice(start, sc.pos);
                sc.bump();
                return Ok(ann);
            }
            sc.bump();
        }
        return Err("unterminated annotation string".into());
    }
    let start = sc.pos;
    let mut depth = 0usize;
    while let Some(c) = sc.peek() {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth == 0 => break,
            b')' | b']' | b'}' => depth -= 1,
            b',' | b';' if depth == 0 => break,
            b'=' if depth == 0 && sc.peek_at(1) != Some(b'=') => break,
            _ => {}
        }
        sc.bump();
    }
    let ann = sc.slice(start, sc.pos).trim_end();
    if ann.is_empty() {
        Err("empty annotation".into())
    } else {
        Ok(ann)
    }
}

/// Understands `f32[4, 4][4, 1]cpu`, `Sym(s77)`, `Cls(core)`, `DTensor(core, placements)`.
pub fn parse_meta(ann: &str) -> ValueMeta {
    let ann = ann.trim();
    if let Some(inner) = ann.strip_prefix("Sym(").and_then(|r| r.strip_suffix(')')) {
        return ValueMeta::Sym(inner.to_string());
    }
    if let Some(t) = tensor_core(ann) {
        return ValueMeta::Tensor(std::sync::Arc::new(t));
    }
    if let Some(open) = ann.find('(')
        && ann.ends_with(')')
        && is_ident(&ann[..open])
    {
        let inner = &ann[open + 1..ann.len() - 1];
        let core = inner[..top_level_comma(inner).unwrap_or(inner.len())].trim();
        if let Some(mut t) = tensor_core(core) {
            t.wrapper = Some(ann[..open].to_string());
            return ValueMeta::Tensor(std::sync::Arc::new(t));
        }
    }
    ValueMeta::Other(ann.to_string())
}

pub(super) fn tensor_core(s: &str) -> Option<TensorType> {
    let open = s.find('[')?;
    let dtype = &s[..open];
    let valid_dtype = dtype.as_bytes().first().is_some_and(u8::is_ascii_lowercase)
        && dtype
            .bytes()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'_');
    if !valid_dtype {
        return None;
    }
    let rest = &s[open..];
    let len = matching_close(rest)?;
    let shape = split_dims(&rest[1..len - 1]);
    let mut rest = &rest[len..];
    let mut stride = None;
    if rest.starts_with('[') {
        let len = matching_close(rest)?;
        stride = Some(split_dims(&rest[1..len - 1]));
        rest = &rest[len..];
    }
    let device = match rest {
        "" => None,
        d if is_device(d) => Some(d.into()),
        _ => return None,
    };
    Some(TensorType {
        dtype: dtype.into(),
        shape,
        stride,
        device,
        wrapper: None,
    })
}

/// `cpu`, `cuda:0`, `npu:1`, `meta`.
pub(super) fn is_device(d: &str) -> bool {
    let (kind, index) = match d.split_once(':') {
        Some((k, i)) => (k, Some(i)),
        None => (d, None),
    };
    !kind.is_empty()
        && kind.bytes().all(|c| c.is_ascii_lowercase() || c == b'_')
        && index.is_none_or(|i| !i.is_empty() && i.bytes().all(|c| c.is_ascii_digit()))
}

/// Dims split on top-level commas only: `Max(1, s0)` and `((s27 + 3)//2)` stay whole.
pub(super) fn split_dims(inner: &str) -> Vec<Short> {
    if inner.trim().is_empty() {
        return Vec::new();
    }
    let mut dims = Vec::new();
    let mut rest = inner;
    while let Some(i) = top_level_comma(rest) {
        dims.push(rest[..i].trim().into());
        rest = &rest[i + 1..];
    }
    dims.push(rest.trim().into());
    dims
}

pub(super) fn top_level_comma(s: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in s.bytes().enumerate() {
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => return Some(i),
            _ => {}
        }
    }
    None
}
