//! The statements of a graph class: `__init__` attachments and the `forward` body (node
//! assignments, aliases, annotations, tuple unpacking, in-place ops, `return`).

use super::*;

impl Parser {
    /// `self.true_graph_0 = true_graph_0_0()` in `__init__` attaches a submodule class.
    pub(super) fn init_statement(&mut self, g: usize, stmt: &str) {
        let mut sc = Scan::new(stmt);
        if !sc.eat_str("self.") {
            return;
        }
        let Some(attr) = sc.ident() else { return };
        sc.ws();
        if !sc.eat(b'=') {
            return;
        }
        sc.ws();
        let Some(cls) = sc.ident() else { return };
        if sc.eat(b'(') && sc.eat(b')') && sc.at_end() {
            self.graphs[g]
                .attached
                .push((attr.to_string(), cls.to_string()));
        }
    }

    // -----------------------------------------------------------------------------------------
    // Statements inside `forward`
    // -----------------------------------------------------------------------------------------

    pub(super) fn forward_statement(
        &mut self,
        g: usize,
        no: usize,
        stmt: &str,
        may_be_cut: bool,
    ) -> PResult<()> {
        if self.graphs[g].returned {
            return Err("code after `return`".into());
        }
        if stmt == "pass" {
            return Ok(());
        }
        if stmt == "\"\"\"" {
            self.graphs[g].meta_block = Some(no);
            return Ok(());
        }
        if let Some(rest) = strip_keyword(stmt, "return") {
            return self.output(g, no, rest);
        }
        let mut sc = Scan::new(stmt);
        let name = sc.ident().ok_or("not an FX statement")?;
        sc.ws();
        match sc.peek() {
            Some(b':') => {
                sc.bump();
                sc.ws();
                let ann = annotation(&mut sc)?;
                sc.ws();
                if sc.at_end() || sc.peek() == Some(b';') {
                    if self.graphs[g].body_started {
                        return Err("annotation without a value".into());
                    }
                    return self.annotation_only(g, name, ann, &mut sc);
                }
                if !sc.eat_assign() {
                    return Err("expected `=` after the annotation".into());
                }
                self.assignment(g, no, name, Some(ann), &mut sc, may_be_cut)
            }
            Some(b',') => self.tuple_assignment(g, no, stmt),
            Some(b'[') => self.setitem(g, no, name, &mut sc),
            _ if sc.eat_assign() => self.assignment(g, no, name, None, &mut sc, may_be_cut),
            _ => match aug_op(&mut sc) {
                Some(target) => self.inplace(g, no, name, target, &mut sc),
                None => Err("not an FX statement".into()),
            },
        }
    }

    /// `x[i] = v;  setitem = x`: FX's rendering of `operator.setitem(x, i, v)`, a node named
    /// by the alias that follows it on the same line.
    fn setitem(&mut self, g: usize, no: usize, obj: &str, sc: &mut Scan<'_>) -> PResult<()> {
        sc.bump();
        self.refs.clear();
        let b = &self.graphs[g];
        let args = {
            let mut cx = ArgCx {
                names: &b.graph.by_name,
                refs: &mut self.refs,
            };
            let o = cx.name_arg(obj);
            let index = cx.subscript(sc)?;
            sc.ws();
            if !sc.eat_assign() {
                return Err("expected `=` after a subscript".into());
            }
            sc.ws();
            let value = cx.primary(sc, 1)?;
            vec![o, index, value]
        };
        sc.ws();
        if !sc.eat(b';') {
            return Err("a subscript assignment without the node that names it".into());
        }
        sc.ws();
        let name = sc.ident().ok_or("expected the setitem node's name")?;
        sc.ws();
        if !sc.eat_assign() {
            return Err("expected `=` after the setitem node's name".into());
        }
        sc.ws();
        if sc.ident() != Some(obj) || !sc.at_stmt_end() {
            return Err("the setitem node must name the assigned object".into());
        }
        let b = &mut self.graphs[g];
        if b.graph.by_name.contains_key(name) {
            return Err(format!("`{name}` is defined twice").into());
        }
        let source = b.source.clone();
        b.body_started = true;
        let target = b.intern("operator.setitem");
        let node = b.annotated(
            FxNode::new(
                name.to_string(),
                OpKind::CallFunction,
                target,
                args,
                Vec::new(),
                no,
            ),
            None,
            source,
        );
        b.push_node(node, &self.refs);
        Ok(())
    }

    pub(super) fn assignment(
        &mut self,
        g: usize,
        no: usize,
        name: &str,
        ann: Option<&str>,
        sc: &mut Scan<'_>,
        may_be_cut: bool,
    ) -> PResult<()> {
        self.refs.clear();
        let b = &self.graphs[g];
        if b.graph.by_name.contains_key(name) {
            return Err(format!("`{name}` is defined twice").into());
        }
        let rhs = {
            let mut cx = ArgCx {
                names: &b.graph.by_name,
                refs: &mut self.refs,
            };
            cx.rhs(sc)?
        };
        let (op, target, args, kwargs) = match rhs {
            Rhs::Node {
                op,
                target,
                args,
                kwargs,
            } => (op, target, args, kwargs),
            Rhs::Name(other) => {
                return self.alias(g, name, ann, other, may_be_cut);
            }
        };
        let b = &mut self.graphs[g];
        let source = b.source.clone();
        b.body_started = true;
        let target = b.intern(&target);
        let node = b.annotated(
            FxNode::new(name.to_string(), op, target, args, kwargs, no),
            ann,
            source,
        );
        b.push_node(node, &self.refs);
        Ok(())
    }

    /// `l_x_ = L_x_`: Dynamo names the placeholder for target `L_x_` `l_x_`.
    pub(super) fn alias(
        &mut self,
        g: usize,
        name: &str,
        ann: Option<&str>,
        other: &str,
        may_be_cut: bool,
    ) -> PResult<()> {
        let b = &mut self.graphs[g];
        let Some(i) = b.graph.by_name.get(other) else {
            return Err(format!("assignment of unknown name `{other}`").into());
        };
        let node = &b.graph.nodes[i];
        // A last line cut mid-way (`mul = arg0_1` from `mul = arg0_1 * 2`) must not rename a
        // placeholder; nor may anything after the first real node.
        let is_alias = ann.is_none()
            && !b.body_started
            && !may_be_cut
            && node.op == OpKind::Placeholder
            && node.name == node.target;
        if !is_alias {
            return Err("assignment of a bare name (not a placeholder alias)".into());
        }
        b.graph.by_name.remove(other);
        b.graph.nodes[i].name = name.into();
        b.graph.by_name.insert(name, i);
        Ok(())
    }

    /// `x: "f32[2]"; y: "f32[2]";` (unlifted export signatures).
    pub(super) fn annotation_only(
        &mut self,
        g: usize,
        first: &str,
        ann: &str,
        sc: &mut Scan<'_>,
    ) -> PResult<()> {
        let mut found = vec![(first, ann)];
        loop {
            sc.ws();
            if sc.at_end() {
                break;
            }
            if !sc.eat(b';') {
                return Err("expected `;` between annotations".into());
            }
            sc.ws();
            if sc.at_end() {
                break;
            }
            let name = sc.ident().ok_or("expected a name")?;
            sc.ws();
            if !sc.eat(b':') {
                return Err("expected `:` after the name".into());
            }
            sc.ws();
            found.push((name, annotation(sc)?));
        }
        let b = &mut self.graphs[g];
        for (name, ann) in found {
            if let Some(i) = b.graph.by_name.get(name) {
                let node = &b.graph.nodes[i];
                if node.op == OpKind::Placeholder && node.annotation.is_none() {
                    let (text, meta) = b.meta_of(ann);
                    let node = &mut b.graph.nodes[i];
                    node.annotation = Some(text);
                    node.meta = Some(meta);
                }
            }
            b.pending_annotations
                .push((name.to_string(), ann.to_string()));
        }
        Ok(())
    }

    /// `arg0, arg1, = fx_pytree.tree_flatten_spec(([x, y], {}), self._in_spec)`: the flat
    /// names on the left are the real placeholders; the signature only had the user's names.
    pub(super) fn tuple_assignment(&mut self, g: usize, no: usize, stmt: &str) -> PResult<()> {
        let mut sc = Scan::new(stmt);
        let mut targets: Vec<(&str, Option<&str>)> = Vec::new();
        loop {
            sc.ws();
            if sc.eat_assign() {
                break;
            }
            let name = sc
                .ident()
                .ok_or("expected a name in the tuple assignment")?;
            sc.ws();
            let ann = if sc.eat(b':') {
                sc.ws();
                Some(annotation(&mut sc)?)
            } else {
                None
            };
            sc.ws();
            if !sc.eat(b',') {
                sc.ws();
                if !sc.eat_assign() {
                    return Err("expected `,` or `=` in the tuple assignment".into());
                }
                targets.push((name, ann));
                break;
            }
            targets.push((name, ann));
        }
        sc.ws();
        if !sc.rest().starts_with("fx_pytree.tree_flatten_spec(") {
            return Err("tuple assignment other than `fx_pytree.tree_flatten_spec`".into());
        }
        let b = &mut self.graphs[g];
        if b.body_started {
            return Err("`tree_flatten_spec` after the first node".into());
        }
        let old: Vec<FxNode> = std::mem::take(&mut b.graph.nodes);
        b.graph.by_name.clear();
        b.seen.clear();
        for (name, ann) in targets {
            let ann = ann.map(str::to_string).or_else(|| {
                let pending = b.pending_annotations.iter().rev().find(|(n, _)| n == name);
                let from_sig = old.iter().find(|n| n.name == name);
                pending
                    .map(|(_, a)| a.clone())
                    .or_else(|| from_sig.and_then(|n| n.annotation.as_deref().map(str::to_string)))
            });
            b.add_placeholder(name.to_string(), name.to_string(), ann.as_deref(), no);
        }
        Ok(())
    }

    /// `a += b;  name = a`: FX prints in-place operators as a statement plus a rebinding.
    pub(super) fn inplace(
        &mut self,
        g: usize,
        no: usize,
        lhs: &str,
        target: &str,
        sc: &mut Scan<'_>,
    ) -> PResult<()> {
        self.refs.clear();
        let b = &self.graphs[g];
        let rhs = {
            let mut cx = ArgCx {
                names: &b.graph.by_name,
                refs: &mut self.refs,
            };
            let lhs_arg = cx.name_arg(lhs);
            let rhs = cx.value(sc, 1)?;
            (lhs_arg, rhs)
        };
        sc.ws();
        if !sc.eat(b';') {
            return Err("in-place operator without `;  name = ...`".into());
        }
        sc.ws();
        let name = sc.ident().ok_or("expected the result name after `;`")?;
        sc.ws();
        let ann = if sc.eat(b':') {
            sc.ws();
            Some(annotation(sc)?)
        } else {
            None
        };
        sc.ws();
        let rebinds_lhs = sc.eat_assign() && {
            sc.ws();
            sc.ident() == Some(lhs)
        };
        if !rebinds_lhs || !sc.at_stmt_end() {
            return Err("expected `name = <lhs>` after the in-place operator".into());
        }
        if b.graph.by_name.contains_key(name) {
            return Err(format!("`{name}` is defined twice").into());
        }
        let b = &mut self.graphs[g];
        let source = b.source.clone();
        b.body_started = true;
        let target = b.intern(target);
        let node = b.annotated(
            FxNode::new(
                name.to_string(),
                OpKind::CallFunction,
                target,
                vec![rhs.0, rhs.1],
                Vec::new(),
                no,
            ),
            ann,
            source,
        );
        b.push_node(node, &self.refs);
        Ok(())
    }

    pub(super) fn output(&mut self, g: usize, no: usize, rest: &str) -> PResult<()> {
        self.refs.clear();
        let b = &self.graphs[g];
        let mut sc = Scan::new(rest);
        sc.ws();
        if sc.at_end() {
            return Err("empty `return`".into());
        }
        let value = {
            let mut cx = ArgCx {
                names: &b.graph.by_name,
                refs: &mut self.refs,
            };
            if sc.eat_str("pytree.tree_unflatten(") {
                let (args, _) = cx.call_args(&mut sc, 1)?;
                args.into_iter()
                    .next()
                    .ok_or("`tree_unflatten` without arguments")?
            } else {
                cx.value_or_tuple(&mut sc)?
            }
        };
        if !sc.at_stmt_end() {
            return Err("unexpected text after the returned value".into());
        }
        let b = &mut self.graphs[g];
        b.returned = true;
        b.push_node(
            FxNode::new(
                "output",
                OpKind::Output,
                "output",
                vec![value],
                Vec::new(),
                no,
            ),
            &self.refs,
        );
        Ok(())
    }
}
