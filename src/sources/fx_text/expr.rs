//! Expressions: the right-hand side of a node assignment, call arguments and values,
//! resolved against the graph's names as they are parsed.

use super::*;

/// What the right-hand side of `name = …` is.
pub(super) enum Rhs<'a> {
    Node {
        op: OpKind,
        target: String,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    },
    /// A bare name: a Dynamo placeholder alias, if valid.
    Name(&'a str),
}

/// Argument parsing: resolves names against the graph so far and records node references
/// in order of appearance.
pub(super) struct ArgCx<'g> {
    pub(super) names: &'g crate::model::names::NameIndex,
    pub(super) refs: &'g mut Vec<usize>,
}

impl ArgCx<'_> {
    pub(super) fn rhs<'a>(&mut self, sc: &mut Scan<'a>) -> PResult<Rhs<'a>> {
        sc.ws();
        if sc.eat_str("self.") {
            let path = sc.dotted().ok_or("expected an attribute after `self.`")?;
            let (op, args, kwargs) = if sc.eat(b'(') {
                let (a, k) = self.call_args(sc, 1)?;
                (OpKind::CallModule, a, k)
            } else {
                (OpKind::GetAttr, Vec::new(), Vec::new())
            };
            return self.node_end(sc, op, path.to_string(), args, kwargs);
        }
        if let Some(target) = unary_op(sc) {
            let operand = self.primary(sc, 1)?;
            return self.node_end(
                sc,
                OpKind::CallFunction,
                target.into(),
                vec![operand],
                Vec::new(),
            );
        }
        let lhs = if sc.peek().is_some_and(is_ident_start) {
            let path = sc.dotted().unwrap_or("");
            match sc.peek() {
                Some(b'(') => {
                    sc.bump();
                    return self.call(sc, path);
                }
                Some(b'[') => {
                    sc.bump();
                    let obj = self.name_arg(path);
                    let index = self.subscript(sc)?;
                    return self.node_end(
                        sc,
                        OpKind::CallFunction,
                        "operator.getitem".into(),
                        vec![obj, index],
                        Vec::new(),
                    );
                }
                _ => {}
            }
            if sc.at_stmt_end() {
                return self.bare_path(sc, path);
            }
            self.name_arg(path)
        } else {
            self.primary(sc, 1)?
        };
        sc.ws();
        let op = binary_op(sc).ok_or("unexpected text after the first operand")?;
        let rhs = self.primary(sc, 1)?;
        self.node_end(
            sc,
            OpKind::CallFunction,
            op.into(),
            vec![lhs, rhs],
            Vec::new(),
        )
    }

    /// `name = other` (alias) or `name = x.attr` (FX's rendering of `getattr(x, "attr")`).
    pub(super) fn bare_path<'a>(&mut self, sc: &mut Scan<'a>, path: &'a str) -> PResult<Rhs<'a>> {
        match path.split_once('.') {
            None => Ok(Rhs::Name(path)),
            Some((recv, attr)) if !attr.contains('.') && self.names.contains_key(recv) => {
                let obj = self.name_arg(recv);
                self.node_end(
                    sc,
                    OpKind::CallFunction,
                    "getattr".into(),
                    vec![obj, Arg::Str(attr.to_string())],
                    Vec::new(),
                )
            }
            Some(_) => Err("a bare attribute path is not an FX node".into()),
        }
    }

    /// `target(args)`: a method call when the receiver is a node (`x.view(2, -1)`).
    pub(super) fn call<'a>(&mut self, sc: &mut Scan<'a>, path: &str) -> PResult<Rhs<'a>> {
        let method = path
            .split_once('.')
            .filter(|(recv, m)| !m.contains('.') && self.names.contains_key(recv));
        match method {
            Some((recv, m)) => {
                let obj = self.name_arg(recv);
                let (mut args, kwargs) = self.call_args(sc, 1)?;
                args.insert(0, obj);
                self.node_end(sc, OpKind::CallMethod, m.to_string(), args, kwargs)
            }
            None => {
                let (args, kwargs) = self.call_args(sc, 1)?;
                self.node_end(sc, OpKind::CallFunction, path.to_string(), args, kwargs)
            }
        }
    }

    pub(super) fn node_end<'a>(
        &mut self,
        sc: &mut Scan<'a>,
        op: OpKind,
        target: String,
        args: Vec<Arg>,
        kwargs: Vec<(String, Arg)>,
    ) -> PResult<Rhs<'a>> {
        if !sc.at_stmt_end() {
            return Err("unexpected text after the expression".into());
        }
        Ok(Rhs::Node {
            op,
            target,
            args,
            kwargs,
        })
    }

    /// The index of `x[...]`, after `[`: one value, or a tuple for `x[a, b]`.
    pub(super) fn subscript(&mut self, sc: &mut Scan<'_>) -> PResult<Arg> {
        let (mut items, trailing) = self.seq(sc, b']', 1)?;
        if items.len() == 1 && !trailing {
            Ok(items.pop().unwrap_or(Arg::None))
        } else {
            Ok(Arg::Tuple(items))
        }
    }

    /// A name as an argument: a node reference when it names an earlier node.
    pub(super) fn name_arg(&mut self, name: &str) -> Arg {
        match self.names.get(name) {
            Some(i) => {
                self.refs.push(i);
                Arg::Node(name.into())
            }
            None => Arg::Expr(name.to_string()),
        }
    }

    /// `a, b` without brackets (a `return a, b`) becomes a tuple.
    pub(super) fn value_or_tuple(&mut self, sc: &mut Scan<'_>) -> PResult<Arg> {
        let first = self.value(sc, 1)?;
        sc.ws();
        if sc.peek() != Some(b',') {
            return Ok(first);
        }
        let mut items = vec![first];
        while sc.eat(b',') {
            sc.ws();
            if sc.at_stmt_end() {
                break;
            }
            items.push(self.value(sc, 1)?);
            sc.ws();
        }
        Ok(Arg::Tuple(items))
    }

    /// Call arguments after `(`, through the closing `)`.
    pub(super) fn call_args(&mut self, sc: &mut Scan<'_>, depth: usize) -> PResult<CallArgs> {
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        let mut args = Vec::new();
        let mut kwargs = Vec::new();
        loop {
            sc.ws();
            if sc.eat(b')') {
                return Ok((args, kwargs));
            }
            let save = sc.pos;
            let kw = sc.ident().and_then(|id| {
                sc.ws();
                sc.eat_assign().then_some(id)
            });
            match kw {
                Some(k) => {
                    let v = self.value(sc, depth)?;
                    kwargs.push((k.to_string(), v));
                }
                None => {
                    sc.pos = save;
                    args.push(self.value(sc, depth)?);
                }
            }
            sc.ws();
            if sc.eat(b',') {
                continue;
            }
            if sc.eat(b')') {
                return Ok((args, kwargs));
            }
            return Err(if sc.at_end() {
                "unclosed `(`".into()
            } else {
                "expected `,` or `)` in the call".into()
            });
        }
    }

    /// Items up to `close`, and whether a trailing comma was written (`(x,)` is a tuple).
    pub(super) fn seq(
        &mut self,
        sc: &mut Scan<'_>,
        close: u8,
        depth: usize,
    ) -> PResult<(Vec<Arg>, bool)> {
        let mut items = Vec::new();
        let mut trailing = false;
        loop {
            sc.ws();
            if sc.eat(close) {
                return Ok((items, trailing));
            }
            if sc.at_end() {
                return Err("unclosed bracket".into());
            }
            items.push(self.value(sc, depth)?);
            sc.ws();
            trailing = sc.eat(b',');
            if !trailing {
                sc.ws();
                if sc.eat(close) {
                    return Ok((items, false));
                }
                return Err(if sc.at_end() {
                    "unclosed bracket".into()
                } else {
                    "expected `,` or a closing bracket".into()
                });
            }
        }
    }

    /// One argument value. Operators make it an `Arg::Expr` kept verbatim (`s77 + 1`); node
    /// names inside it still count as references.
    pub(super) fn value(&mut self, sc: &mut Scan<'_>, depth: usize) -> PResult<Arg> {
        sc.ws();
        let start = sc.pos;
        let first = self.primary(sc, depth)?;
        sc.ws();
        if value_ends(sc) {
            return Ok(first);
        }
        loop {
            if !expr_op(sc) {
                return Err("unexpected text in an argument".into());
            }
            self.primary(sc, depth)?;
            sc.ws();
            if value_ends(sc) {
                break;
            }
        }
        Ok(Arg::Expr(sc.slice(start, sc.pos).trim_end().to_string()))
    }

    pub(super) fn primary(&mut self, sc: &mut Scan<'_>, depth: usize) -> PResult<Arg> {
        if depth > MAX_DEPTH {
            return Err(too_deep());
        }
        sc.ws();
        let start = sc.pos;
        let c = sc.peek().ok_or("expected a value")?;
        let arg = match c {
            b'[' => {
                sc.bump();
                Arg::List(self.seq(sc, b']', depth + 1)?.0)
            }
            b'(' => {
                sc.bump();
                let (mut items, trailing) = self.seq(sc, b')', depth + 1)?;
                if items.len() == 1 && !trailing {
                    items.pop().unwrap_or(Arg::None)
                } else {
                    Arg::Tuple(items)
                }
            }
            b'{' => {
                sc.bump();
                self.dict(sc, depth + 1)?;
                Arg::Expr(sc.slice(start, sc.pos).to_string())
            }
            b'\'' | b'"' => Arg::Str(string_lit(sc)?),
            b'0'..=b'9' | b'.' => number(sc)?,
            b'-' | b'+' => self.signed(sc, depth)?,
            b'~' | b'*' => {
                while matches!(sc.peek(), Some(b'~' | b'*')) {
                    sc.bump();
                }
                self.primary(sc, depth + 1)?;
                Arg::Expr(sc.slice(start, sc.pos).to_string())
            }
            c if is_ident_start(c) => self.name_value(sc, depth)?,
            _ => return Err("unexpected character in an argument".into()),
        };
        Ok(arg)
    }

    /// `-1`, `-0.5`, `-inf`, or a unary operator on an expression.
    pub(super) fn signed(&mut self, sc: &mut Scan<'_>, depth: usize) -> PResult<Arg> {
        let start = sc.pos;
        let negative = sc.peek() == Some(b'-');
        match sc.peek_at(1) {
            Some(b'0'..=b'9' | b'.') => return number(sc),
            Some(b'i')
                if sc.rest()[1..].starts_with("inf")
                    && !sc.peek_at(4).is_some_and(is_ident_byte) =>
            {
                sc.pos += 4;
                return Ok(Arg::Float(if negative {
                    f64::NEG_INFINITY
                } else {
                    f64::INFINITY
                }));
            }
            _ => {}
        }
        sc.bump();
        self.primary(sc, depth + 1)?;
        Ok(Arg::Expr(sc.slice(start, sc.pos).to_string()))
    }

    /// Names, keywords, dotted paths (`torch.float16`) and calls (`device(type='cpu')`).
    pub(super) fn name_value(&mut self, sc: &mut Scan<'_>, depth: usize) -> PResult<Arg> {
        let start = sc.pos;
        let path = sc.dotted().unwrap_or("");
        if matches!(sc.peek(), Some(b'\'' | b'"')) && matches!(path, "r" | "b" | "u" | "rb" | "br")
        {
            let s = string_lit(sc)?;
            return Ok(if path.contains('b') {
                Arg::Expr(sc.slice(start, sc.pos).to_string())
            } else {
                Arg::Str(s)
            });
        }
        let plain = match path {
            "None" => Some(Arg::None),
            "True" => Some(Arg::Bool(true)),
            "False" => Some(Arg::Bool(false)),
            "inf" => Some(Arg::Float(f64::INFINITY)),
            "nan" => Some(Arg::Float(f64::NAN)),
            "not" | "lambda" => {
                self.primary(sc, depth + 1)?;
                return Ok(Arg::Expr(sc.slice(start, sc.pos).to_string()));
            }
            _ => None,
        };
        if !matches!(sc.peek(), Some(b'(' | b'[')) {
            if let Some(arg) = plain {
                return Ok(arg);
            }
            if path.contains('.') {
                return Ok(Arg::Expr(path.to_string()));
            }
            return Ok(self.name_arg(path));
        }
        // Calls, subscripts and attribute chains on them: kept verbatim, references counted.
        loop {
            match sc.peek() {
                Some(b'(') => {
                    sc.bump();
                    self.call_args(sc, depth + 1)?;
                }
                Some(b'[') => {
                    sc.bump();
                    self.seq(sc, b']', depth + 1)?;
                }
                Some(b'.') if sc.peek_at(1).is_some_and(is_ident_start) => {
                    sc.bump();
                    sc.dotted();
                }
                _ => break,
            }
        }
        Ok(Arg::Expr(sc.slice(start, sc.pos).to_string()))
    }

    /// `{k: v, ...}` after `{`, through `}`.
    pub(super) fn dict(&mut self, sc: &mut Scan<'_>, depth: usize) -> PResult<()> {
        loop {
            sc.ws();
            if sc.eat(b'}') {
                return Ok(());
            }
            self.value(sc, depth)?;
            sc.ws();
            if sc.eat(b':') {
                self.value(sc, depth)?;
                sc.ws();
            }
            if sc.eat(b',') {
                continue;
            }
            if sc.eat(b'}') {
                return Ok(());
            }
            return Err("expected `,` or `}` in a dict".into());
        }
    }
}
