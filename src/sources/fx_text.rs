//! Parser for FX `GraphModule.print_readable()` text (formats.md §5): npugraph_ex pass dumps
//! (`NNN_aot_*_graph*.txt`), `dynamo_out_graph.txt`, Inductor `fx_graph_readable.py`,
//! `fx_graph_transformed.py` and `fx_graph_runnable.py`.
//!
//! The parser is a line-driven state machine over a stack of indentation frames (class, the
//! `forward` method, other methods) with a hand-written scanner for each statement. It never
//! fails: what it does not understand lands in [`FxFile::unparsed`] (one line, with a reason) or
//! [`FxFile::problems`] (file-level, e.g. truncation), and the rest of the file still loads.
//! Recursion only happens inside one argument expression and is bounded by [`MAX_DEPTH`].
//!
//! Decisions worth knowing:
//! - Code outside any class (the imports/config preamble and the `load_args` / `__main__`
//!   trailer of `fx_graph_runnable.py`, or anything after the last class) is skipped silently.
//!   A bare `def forward(...)` outside a class (as `gm.code` prints it) becomes a graph named
//!   `forward`.
//! - In `fx_graph_runnable.py` the submodule classes are written at top level *before* `Repro`
//!   and attached in `Repro.__init__` (`self.true_graph_0 = true_graph_0_0()`); those links
//!   make them sub-graphs of `Repro`, and graphs are ordered parent first (pre-order).
//! - Placeholders and the output node carry no [`SourceLoc`]: FX prints no stack-trace comment
//!   for them, so the comment in effect belongs to the nodes after it.
//! - A Dynamo alias line (`l_x_ = L_x_`) renames the placeholder; the node keeps the signature
//!   line as its `line`.

use crate::model::fx::{
    Arg, FxFile, FxGraph, FxNode, OpKind, SourceLoc, TensorType, UnparsedLine, ValueMeta,
};
use petgraph::graph::{DiGraph, NodeIndex};
use std::borrow::Cow;
use std::collections::HashMap;

/// Deepest bracket nesting inside one statement. Real graphs nest 3–4 levels; the bound keeps
/// hostile input (`[[[[…`) from overflowing the stack.
const MAX_DEPTH: usize = 64;

/// A statement spread over several lines (expanded signatures, long returns) is abandoned past
/// this size, so an unclosed bracket cannot swallow the rest of a huge file into one buffer.
const MAX_STATEMENT_BYTES: usize = 4 << 20;

type PResult<T> = Result<T, Cow<'static, str>>;

/// Positional and keyword arguments of a call.
type CallArgs = (Vec<Arg>, Vec<(String, Arg)>);

/// Parses one graph text file. Never panics; see the module docs for what is skipped.
pub fn parse_fx(text: &str) -> FxFile {
    let mut parser = Parser::default();
    if text.trim().is_empty() {
        parser.problems.push("the file is empty".into());
        return parser.finish();
    }
    let cut_start = text.rfind('\n').map_or(0, |i| i + 1);
    let may_be_cut = !text.ends_with('\n');
    let mut offset = 0;
    for (i, raw) in text.split('\n').enumerate() {
        let last_may_be_cut = may_be_cut && offset == cut_start;
        offset += raw.len() + 1;
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        let line: Cow<str> = if raw.contains('\x1b') {
            Cow::Owned(strip_ansi(raw))
        } else {
            Cow::Borrowed(raw)
        };
        parser.line(i + 1, &line, last_may_be_cut);
    }
    parser.end_of_file();
    parser.finish()
}

// ---------------------------------------------------------------------------------------------
// File-level state machine
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq)]
enum FrameKind {
    /// Body of `class X(torch.nn.Module):`, graph index into `Parser::graphs`.
    Class(usize),
    /// Body of that class's `forward`.
    Forward(usize),
    /// Body of `__init__`, where `fx_graph_runnable.py` attaches submodule classes.
    Init(usize),
    /// Any other method or top-level function: skipped.
    OtherDef,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    indent: usize,
    kind: FrameKind,
}

/// A statement whose brackets are still open at the end of its first line.
#[derive(Debug)]
struct Pending {
    line: usize,
    indent: usize,
    depth: i64,
    /// The statement so far, comments stripped, lines joined.
    text: String,
    /// The first line as written, for the unparsed report.
    first_line: String,
}

/// One class being parsed.
#[derive(Debug, Default)]
struct GraphBuilder {
    graph: FxGraph,
    /// Enclosing class, by indentation or by `__init__` attachment.
    parent: Option<usize>,
    /// Attribute name the parent uses for this submodule (`true_graph_0`).
    attr: String,
    /// `(attribute, class name)` pairs from `self.attr = Cls()` in `__init__`.
    attached: Vec<(String, String)>,
    has_forward: bool,
    returned: bool,
    /// A non-placeholder node exists: alias and pytree-flatten lines are no longer valid.
    body_started: bool,
    source: Option<SourceLoc>,
    /// `x: "f32[2]"; y: "f32[2]";` lines of unlifted export signatures.
    pending_annotations: Vec<(String, String)>,
    /// Line of the `"""` opening a metadata block we are inside
    /// (`print_readable(include_meta=True)`).
    meta_block: Option<usize>,
    /// Scratch for de-duplicating `inputs`: `seen[j] == stamp` means already listed.
    seen: Vec<u32>,
}

#[derive(Default)]
struct Parser {
    graphs: Vec<GraphBuilder>,
    frames: Vec<Frame>,
    pending: Option<Pending>,
    unparsed: Vec<UnparsedLine>,
    problems: Vec<String>,
    /// Node references collected while scanning one statement (reused to avoid allocation).
    refs: Vec<usize>,
}

impl Parser {
    fn line(&mut self, no: usize, line: &str, may_be_cut: bool) {
        let body = line.trim_start_matches([' ', '\t']);
        let indent = line.len() - body.len();
        let body = body.trim_end();
        if self.pending.is_some() {
            self.continue_pending(no, indent, line, body, may_be_cut);
            return;
        }
        if self.in_meta_block(indent, body) {
            return;
        }
        if body.is_empty() {
            return;
        }
        if body.starts_with('#') {
            self.comment(no, line, body);
            return;
        }
        if self.frames.is_empty() && !body.starts_with("class ") && !body.starts_with("def ") {
            return; // preamble / trailer code outside any class
        }
        let stmt = match logical_line(body) {
            LogicalLine::Complete(s) => s,
            LogicalLine::Open(s, depth) => {
                self.pending = Some(Pending {
                    line: no,
                    indent,
                    depth,
                    text: s.to_string(),
                    first_line: line.trim_end().to_string(),
                });
                return;
            }
        };
        if stmt.is_empty() {
            return;
        }
        self.statement(no, indent, stmt, line, may_be_cut);
    }

    fn continue_pending(
        &mut self,
        no: usize,
        indent: usize,
        line: &str,
        body: &str,
        may_be_cut: bool,
    ) {
        if body.is_empty() || body.starts_with('#') {
            return;
        }
        let Some(mut p) = self.pending.take() else {
            return;
        };
        let closes = body.starts_with([')', ']', '}']);
        if indent <= p.indent && !closes {
            // The statement never closed: report it, then read this line on its own.
            self.unparsed_line(
                p.line,
                &p.first_line,
                "brackets opened here are never closed",
            );
            self.line(no, line, may_be_cut);
            return;
        }
        let (delta, comment) = scan_brackets(body);
        let piece = comment.map_or(body, |c| body[..c].trim_end());
        if !p.text.ends_with(['(', '[', '{']) && !piece.starts_with([')', ']', '}']) {
            p.text.push(' ');
        }
        p.text.push_str(piece);
        p.depth += delta;
        if p.text.len() > MAX_STATEMENT_BYTES {
            self.unparsed_line(
                p.line,
                &p.first_line,
                "statement too long (unclosed bracket?)",
            );
            return;
        }
        if p.depth > 0 {
            self.pending = Some(p);
            return;
        }
        let text = std::mem::take(&mut p.text);
        self.statement(p.line, p.indent, &text, &text, false);
    }

    /// One complete statement (possibly joined from several lines).
    fn statement(&mut self, no: usize, indent: usize, stmt: &str, raw: &str, may_be_cut: bool) {
        let header = Header::of(stmt);
        self.close_frames_for(no, indent, header.is_some());
        let top = self.frames.last().map(|f| f.kind);
        let result = match top {
            None => self.top_level(no, indent, stmt, header),
            Some(FrameKind::Class(g)) => self.class_body(no, indent, g, stmt, header),
            Some(FrameKind::Forward(g)) => match header {
                Some(_) => Err("a `class` or `def` inside `forward`".into()),
                None => self.forward_statement(g, no, stmt, may_be_cut),
            },
            Some(FrameKind::Init(g)) => {
                self.init_statement(g, stmt);
                self.push_def_frame(indent, header);
                Ok(())
            }
            Some(FrameKind::OtherDef) => {
                self.push_def_frame(indent, header);
                Ok(())
            }
        };
        if let Err(reason) = result {
            self.unparsed_line(no, raw, reason);
        }
    }

    /// Pops the frames a line at `indent` is no longer inside. A line that is not a
    /// `class`/`def` header does not close a `forward` still waiting for its `return`: such a
    /// line is garbage inside the graph (reported as unparsed), not the end of the graph.
    fn close_frames_for(&mut self, no: usize, indent: usize, is_header: bool) {
        if !is_header {
            let open_forward = self
                .frames
                .iter()
                .rev()
                .take_while(|f| f.indent >= indent)
                .any(|f| matches!(f.kind, FrameKind::Forward(g) if !self.graphs[g].returned));
            if open_forward {
                return;
            }
        }
        while let Some(top) = self.frames.last().copied() {
            if top.indent < indent {
                break;
            }
            self.frames.pop();
            self.frame_closed(top, Some(no));
        }
    }

    fn top_level(
        &mut self,
        no: usize,
        indent: usize,
        stmt: &str,
        header: Option<Header<'_>>,
    ) -> PResult<()> {
        match header {
            Some(Header::Class(name)) => {
                self.open_class(no, indent, name, None);
                Ok(())
            }
            Some(Header::Def("forward")) => {
                let g = self.new_graph(no, "forward", None);
                self.open_forward(g, no, indent, stmt)
            }
            Some(Header::Def(..)) => {
                self.push_frame(indent, FrameKind::OtherDef);
                Ok(())
            }
            None if stmt.starts_with("class ") => Err("incomplete `class` header".into()),
            None => Ok(()),
        }
    }

    fn class_body(
        &mut self,
        no: usize,
        indent: usize,
        g: usize,
        stmt: &str,
        header: Option<Header<'_>>,
    ) -> PResult<()> {
        match header {
            Some(Header::Class(name)) => {
                self.open_class(no, indent, name, Some(g));
                Ok(())
            }
            Some(Header::Def("forward")) if !self.graphs[g].has_forward => {
                self.open_forward(g, no, indent, stmt)
            }
            Some(Header::Def("forward")) => {
                self.push_frame(indent, FrameKind::OtherDef);
                Err("a second `forward` in the same class".into())
            }
            Some(Header::Def("__init__")) => {
                self.push_frame(indent, FrameKind::Init(g));
                Ok(())
            }
            Some(Header::Def(..)) => {
                self.push_frame(indent, FrameKind::OtherDef);
                Ok(())
            }
            None if stmt == "pass" || is_docstring(stmt) => Ok(()),
            None if stmt.starts_with("def ") || stmt.starts_with("class ") => {
                Err("incomplete `def`/`class` header".into())
            }
            None => Err(format!(
                "unexpected line in the body of class `{}`",
                self.graphs[g].graph.name
            )
            .into()),
        }
    }

    /// Inside a method we skip, a nested `def`/`class` still needs its own frame so that its
    /// end (by indentation) is seen.
    fn push_def_frame(&mut self, indent: usize, header: Option<Header<'_>>) {
        if header.is_some() {
            self.push_frame(indent, FrameKind::OtherDef);
        }
    }

    fn push_frame(&mut self, indent: usize, kind: FrameKind) {
        self.frames.push(Frame { indent, kind });
    }

    fn new_graph(&mut self, no: usize, name: &str, parent: Option<usize>) -> usize {
        let mut b = GraphBuilder {
            parent,
            attr: name.to_string(),
            ..Default::default()
        };
        b.graph.name = name.to_string();
        b.graph.line = no;
        self.graphs.push(b);
        self.graphs.len() - 1
    }

    fn open_class(&mut self, no: usize, indent: usize, name: &str, parent: Option<usize>) {
        let g = self.new_graph(no, name, parent);
        self.push_frame(indent, FrameKind::Class(g));
    }

    /// Pushes the `forward` frame even when the signature does not parse, so the body still
    /// loads (its references to unknown names become `Arg::Expr`).
    fn open_forward(&mut self, g: usize, no: usize, indent: usize, stmt: &str) -> PResult<()> {
        self.graphs[g].has_forward = true;
        self.push_frame(indent, FrameKind::Forward(g));
        let params = parse_signature(stmt)?;
        let b = &mut self.graphs[g];
        let skip_self = params.first().is_some_and(|p| p.name == "self");
        for p in params.into_iter().skip(usize::from(skip_self)) {
            b.add_placeholder(p.name.to_string(), p.target.to_string(), p.ann, no);
        }
        Ok(())
    }

    /// Skips the lines of a `"""` metadata block. A line dedented out of the `forward` body
    /// ends the block too, so a stray `"""` cannot swallow the rest of the file.
    fn in_meta_block(&mut self, indent: usize, body: &str) -> bool {
        let Some(frame) = self.frames.last().copied() else {
            return false;
        };
        let FrameKind::Forward(g) = frame.kind else {
            return false;
        };
        let Some(start) = self.graphs[g].meta_block else {
            return false;
        };
        if body == "\"\"\"" {
            self.graphs[g].meta_block = None;
            return true;
        }
        if body.is_empty() || indent > frame.indent {
            return true;
        }
        self.graphs[g].meta_block = None;
        self.problems.push(format!(
            "the `\"\"\"` block opened at line {start} is never closed"
        ));
        false
    }

    fn innermost_forward(&self) -> Option<usize> {
        match self.frames.last()?.kind {
            FrameKind::Forward(g) => Some(g),
            _ => None,
        }
    }

    fn frame_closed(&mut self, frame: Frame, at_line: Option<usize>) {
        match frame.kind {
            FrameKind::Forward(g) => {
                let b = &mut self.graphs[g];
                if b.returned {
                    return;
                }
                let name = &b.graph.name;
                self.problems.push(match at_line {
                    None => format!(
                        "file ends inside `forward` of `{name}` without a `return`: truncated or \
                         still being written?"
                    ),
                    Some(l) => format!(
                        "`forward` of `{name}` (class at line {}) ends at line {l} without a \
                         `return`",
                        b.graph.line
                    ),
                });
            }
            FrameKind::Class(g) => {
                let b = &self.graphs[g];
                if b.has_forward {
                    return;
                }
                let name = &b.graph.name;
                self.problems.push(match at_line {
                    None => {
                        format!("file ends inside class `{name}` before its `forward`: truncated?")
                    }
                    Some(_) => format!(
                        "class `{name}` (line {}) has no `forward` method",
                        b.graph.line
                    ),
                });
            }
            FrameKind::Init(_) | FrameKind::OtherDef => {}
        }
    }

    fn end_of_file(&mut self) {
        if let Some(p) = self.pending.take() {
            self.unparsed_line(
                p.line,
                &p.first_line,
                "file ends before this statement's brackets close",
            );
            self.problems.push(format!(
                "file ends inside the statement that starts at line {}: truncated?",
                p.line
            ));
        }
        for b in &self.graphs {
            if let Some(start) = b.meta_block {
                self.problems.push(format!(
                    "file ends inside the `\"\"\"` block opened at line {start}: truncated?"
                ));
            }
        }
        while let Some(f) = self.frames.pop() {
            self.frame_closed(f, None);
        }
    }

    fn unparsed_line(&mut self, no: usize, text: &str, reason: impl Into<Cow<'static, str>>) {
        self.unparsed.push(UnparsedLine {
            line: no,
            text: text.trim_end().to_string(),
            reason: reason.into().into_owned(),
        });
    }

    fn comment(&mut self, no: usize, raw: &str, body: &str) {
        let Some(g) = self.innermost_forward() else {
            return;
        };
        match parse_stack_comment(body) {
            StackComment::Loc(loc) => self.graphs[g].source = Some(loc),
            StackComment::NoStack => self.graphs[g].source = None,
            StackComment::Other => {}
            StackComment::Malformed => {
                self.graphs[g].source = None;
                self.unparsed_line(no, raw, "stack-trace comment not understood");
            }
        }
    }

    /// `self.true_graph_0 = true_graph_0_0()` in `__init__` attaches a submodule class.
    fn init_statement(&mut self, g: usize, stmt: &str) {
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

    fn forward_statement(
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
            _ if sc.eat_assign() => self.assignment(g, no, name, None, &mut sc, may_be_cut),
            _ => match aug_op(&mut sc) {
                Some(target) => self.inplace(g, no, name, target, &mut sc),
                None => Err("not an FX statement".into()),
            },
        }
    }

    fn assignment(
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
        b.push_node(
            FxNode {
                name: name.to_string(),
                op,
                target,
                args,
                kwargs,
                annotation: ann.map(str::to_string),
                meta: ann.map(parse_meta),
                source,
                line: no,
                inputs: Vec::new(),
                users: Vec::new(),
                subgraphs: Vec::new(),
            },
            &self.refs,
        );
        Ok(())
    }

    /// `l_x_ = L_x_`: Dynamo names the placeholder for target `L_x_` `l_x_`.
    fn alias(
        &mut self,
        g: usize,
        name: &str,
        ann: Option<&str>,
        other: &str,
        may_be_cut: bool,
    ) -> PResult<()> {
        let b = &mut self.graphs[g];
        let Some(&i) = b.graph.by_name.get(other) else {
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
        b.graph.nodes[i].name = name.to_string();
        b.graph.by_name.insert(name.to_string(), i);
        Ok(())
    }

    /// `x: "f32[2]"; y: "f32[2]";` (unlifted export signatures).
    fn annotation_only(
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
            if let Some(&i) = b.graph.by_name.get(name) {
                let node = &mut b.graph.nodes[i];
                if node.op == OpKind::Placeholder && node.annotation.is_none() {
                    node.annotation = Some(ann.to_string());
                    node.meta = Some(parse_meta(ann));
                }
            }
            b.pending_annotations
                .push((name.to_string(), ann.to_string()));
        }
        Ok(())
    }

    /// `arg0, arg1, = fx_pytree.tree_flatten_spec(([x, y], {}), self._in_spec)`: the flat
    /// names on the left are the real placeholders; the signature only had the user's names.
    fn tuple_assignment(&mut self, g: usize, no: usize, stmt: &str) -> PResult<()> {
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
                    .or_else(|| from_sig.and_then(|n| n.annotation.clone()))
            });
            b.add_placeholder(name.to_string(), name.to_string(), ann.as_deref(), no);
        }
        Ok(())
    }

    /// `a += b;  name = a`: FX prints in-place operators as a statement plus a rebinding.
    fn inplace(
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
        b.push_node(
            FxNode {
                name: name.to_string(),
                op: OpKind::CallFunction,
                target: target.to_string(),
                args: vec![rhs.0, rhs.1],
                kwargs: Vec::new(),
                annotation: ann.map(str::to_string),
                meta: ann.map(parse_meta),
                source,
                line: no,
                inputs: Vec::new(),
                users: Vec::new(),
                subgraphs: Vec::new(),
            },
            &self.refs,
        );
        Ok(())
    }

    fn output(&mut self, g: usize, no: usize, rest: &str) -> PResult<()> {
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
            FxNode {
                name: "output".into(),
                op: OpKind::Output,
                target: "output".into(),
                args: vec![value],
                kwargs: Vec::new(),
                annotation: None,
                meta: None,
                source: None,
                line: no,
                inputs: Vec::new(),
                users: Vec::new(),
                subgraphs: Vec::new(),
            },
            &self.refs,
        );
        Ok(())
    }

    // -----------------------------------------------------------------------------------------
    // Assembly
    // -----------------------------------------------------------------------------------------

    fn finish(mut self) -> FxFile {
        self.attach_runnable_submodules();
        let order = self.preorder();
        let mut new_index = vec![usize::MAX; self.graphs.len()];
        for (new, &old) in order.iter().enumerate() {
            new_index[old] = new;
        }
        let mut builders: Vec<Option<GraphBuilder>> = self.graphs.into_iter().map(Some).collect();
        let mut graphs = Vec::with_capacity(order.len());
        let mut attrs = Vec::with_capacity(order.len());
        for &old in &order {
            let Some(b) = builders[old].take() else {
                continue;
            };
            let mut graph = b.graph;
            graph.parent = b
                .parent
                .and_then(|p| new_index.get(p).copied())
                .filter(|&p| p < graphs.len());
            fill_users_and_dag(&mut graph);
            graphs.push(graph);
            attrs.push(b.attr);
        }
        link_subgraphs(&mut graphs, &attrs);
        if graphs.is_empty() && self.problems.is_empty() {
            self.problems
                .push("no `class …(torch.nn.Module):` header found: not an FX graph text?".into());
        }
        FxFile {
            graphs,
            unparsed: self.unparsed,
            problems: self.problems,
        }
    }

    /// `fx_graph_runnable.py` writes submodule classes at top level and attaches them in
    /// `Repro.__init__`; make those classes children of the class that attaches them.
    fn attach_runnable_submodules(&mut self) {
        let mut top_level: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, b) in self.graphs.iter().enumerate() {
            if b.parent.is_none() {
                top_level.entry(b.graph.name.clone()).or_default().push(i);
            }
        }
        for p in 0..self.graphs.len() {
            let attached = std::mem::take(&mut self.graphs[p].attached);
            for (attr, cls) in attached {
                let Some(candidates) = top_level.get(&cls) else {
                    continue;
                };
                let child = candidates
                    .iter()
                    .copied()
                    .find(|&c| c != p && self.graphs[c].parent.is_none());
                if let Some(c) = child {
                    self.graphs[c].parent = Some(p);
                    self.graphs[c].attr = attr;
                }
            }
        }
    }

    /// Parents before children, siblings in file order. Parent links from `__init__` may form
    /// a cycle in hostile input: a graph not reached from a root becomes a root itself.
    fn preorder(&mut self) -> Vec<usize> {
        let n = self.graphs.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, b) in self.graphs.iter().enumerate() {
            if let Some(p) = b.parent {
                children[p].push(i);
            }
        }
        let mut visited = vec![false; n];
        let mut order = Vec::with_capacity(n);
        let roots: Vec<usize> = (0..n)
            .filter(|&g| self.graphs[g].parent.is_none())
            .collect();
        for root in roots.into_iter().chain(0..n) {
            if visited[root] {
                continue;
            }
            self.graphs[root].parent = None;
            let mut stack = vec![root];
            while let Some(g) = stack.pop() {
                if visited[g] {
                    continue;
                }
                visited[g] = true;
                order.push(g);
                stack.extend(children[g].iter().rev().filter(|&&c| !visited[c]));
            }
        }
        order
    }
}

impl GraphBuilder {
    fn add_placeholder(&mut self, name: String, target: String, ann: Option<&str>, no: usize) {
        if self.graph.by_name.contains_key(&name) {
            return;
        }
        self.push_node(
            FxNode {
                name,
                op: OpKind::Placeholder,
                target,
                args: Vec::new(),
                kwargs: Vec::new(),
                annotation: ann.map(str::to_string),
                meta: ann.map(parse_meta),
                source: None,
                line: no,
                inputs: Vec::new(),
                users: Vec::new(),
                subgraphs: Vec::new(),
            },
            &[],
        );
    }

    /// Appends `node` with `inputs` = `refs` de-duplicated in order, and indexes its name.
    fn push_node(&mut self, mut node: FxNode, refs: &[usize]) {
        let idx = self.graph.nodes.len();
        let stamp = u32::try_from(idx + 1).unwrap_or(u32::MAX);
        for &r in refs {
            if let Some(s) = self.seen.get_mut(r)
                && *s != stamp
            {
                *s = stamp;
                node.inputs.push(r);
            }
        }
        self.seen.push(0);
        self.graph.by_name.insert(node.name.clone(), idx);
        self.graph.nodes.push(node);
    }
}

fn fill_users_and_dag(graph: &mut FxGraph) {
    let n = graph.nodes.len();
    let edges: usize = graph.nodes.iter().map(|x| x.inputs.len()).sum();
    let mut dag = DiGraph::with_capacity(n, edges);
    for _ in 0..n {
        dag.add_node(());
    }
    for i in 0..n {
        for k in 0..graph.nodes[i].inputs.len() {
            let j = graph.nodes[i].inputs[k];
            graph.nodes[j].users.push(i);
            dag.add_edge(NodeIndex::new(j), NodeIndex::new(i), ());
        }
    }
    graph.dag = dag;
}

/// Links each sub-graph to the nodes using it: every user of a parent `get_attr` of the
/// submodule (the `cond`; a repeated `invoke_subgraph` body has several), or a `call_module`
/// of it. `used_by` is the first of them. Each parent's nodes are scanned once.
fn link_subgraphs(graphs: &mut [FxGraph], attrs: &[String]) {
    let mut children_of: HashMap<usize, Vec<usize>> = HashMap::new();
    for (c, g) in graphs.iter().enumerate() {
        if let Some(p) = g.parent {
            children_of.entry(p).or_default().push(c);
        }
    }
    for (p, children) in children_of {
        let links = subgraph_users(graphs, p, &children, attrs);
        for (c, users) in links {
            graphs[c].used_by = users.first().copied();
            for u in users {
                graphs[p].nodes[u].subgraphs.push(c);
            }
        }
    }
}

/// For each child of graph `p`: the parent's nodes that use it, in file order.
fn subgraph_users(
    graphs: &[FxGraph],
    p: usize,
    children: &[usize],
    attrs: &[String],
) -> Vec<(usize, Vec<usize>)> {
    let Some(parent) = graphs.get(p) else {
        return Vec::new();
    };
    let mut uses: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, node) in parent.nodes.iter().enumerate() {
        match node.op {
            OpKind::GetAttr => uses
                .entry(node.target.as_str())
                .or_default()
                .extend(&node.users),
            OpKind::CallModule => uses.entry(node.target.as_str()).or_default().push(i),
            _ => {}
        }
    }
    children
        .iter()
        .filter_map(|&c| {
            let mut users = uses.get(attrs.get(c)?.as_str())?.clone();
            users.sort_unstable();
            users.dedup();
            Some((c, users))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Lines, headers, comments
// ---------------------------------------------------------------------------------------------

enum LogicalLine<'a> {
    Complete(&'a str),
    /// Brackets still open at the end of the line; depth given.
    Open(&'a str, i64),
}

/// Strips a trailing `# comment` and tells whether the statement continues on the next line.
/// Only a line ending in an opening bracket or a comma may continue: a garbage line with an
/// unclosed bracket must not swallow the good lines after it.
fn logical_line(body: &str) -> LogicalLine<'_> {
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
fn scan_brackets(s: &str) -> (i64, Option<usize>) {
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
enum Header<'a> {
    Class(&'a str),
    /// The method or function name.
    Def(&'a str),
}

impl<'a> Header<'a> {
    fn of(stmt: &'a str) -> Option<Self> {
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

fn is_docstring(stmt: &str) -> bool {
    (stmt.starts_with("\"\"\"") && stmt.len() >= 6 && stmt.ends_with("\"\"\""))
        || (stmt.starts_with('"') && stmt.ends_with('"') && stmt.len() >= 2)
}

fn strip_keyword<'a>(stmt: &'a str, kw: &str) -> Option<&'a str> {
    let rest = stmt.strip_prefix(kw)?;
    match rest.bytes().next() {
        None => Some(rest),
        Some(c) if !is_ident_byte(c) => Some(rest),
        _ => None,
    }
}

/// Removes ANSI colour sequences (`print_readable(colored=True)`).
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        }
    }
    out
}

enum StackComment {
    Loc(SourceLoc),
    NoStack,
    Other,
    Malformed,
}

/// `# File: /x.py:12 in f, code: y = f(x)`, optionally after `Backward of forward node: `,
/// `Annotation: {...}`, `ac_graph_id: …` / `recompute: …`, or `# key: value #` prefixes.
fn parse_stack_comment(body: &str) -> StackComment {
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
fn skip_annotation(text: &str) -> &str {
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
fn matching_close(s: &str) -> Option<usize> {
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
fn parse_summary(s: &str) -> Option<SourceLoc> {
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
        file: file.trim().to_string(),
        line,
        function: function.to_string(),
        code: code.to_string(),
        backward_of: false,
    })
}

// ---------------------------------------------------------------------------------------------
// Signatures and annotations
// ---------------------------------------------------------------------------------------------

struct Param<'a> {
    /// Node name: the parameter without `*`.
    name: &'a str,
    /// As written, with `*` for varargs.
    target: &'a str,
    ann: Option<&'a str>,
}

/// `def forward(self, a: "f32[2]", b, *args) -> T:` → parameters in order.
fn parse_signature(stmt: &str) -> PResult<Vec<Param<'_>>> {
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
            let names = HashMap::new();
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
fn annotation<'a>(sc: &mut Scan<'a>) -> PResult<&'a str> {
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
        return ValueMeta::Tensor(t);
    }
    if let Some(open) = ann.find('(')
        && ann.ends_with(')')
        && is_ident(&ann[..open])
    {
        let inner = &ann[open + 1..ann.len() - 1];
        let core = inner[..top_level_comma(inner).unwrap_or(inner.len())].trim();
        if let Some(mut t) = tensor_core(core) {
            t.wrapper = Some(ann[..open].to_string());
            return ValueMeta::Tensor(t);
        }
    }
    ValueMeta::Other(ann.to_string())
}

fn tensor_core(s: &str) -> Option<TensorType> {
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
        d if is_device(d) => Some(d.to_string()),
        _ => return None,
    };
    Some(TensorType {
        dtype: dtype.to_string(),
        shape,
        stride,
        device,
        wrapper: None,
    })
}

/// `cpu`, `cuda:0`, `npu:1`, `meta`.
fn is_device(d: &str) -> bool {
    let (kind, index) = match d.split_once(':') {
        Some((k, i)) => (k, Some(i)),
        None => (d, None),
    };
    !kind.is_empty()
        && kind.bytes().all(|c| c.is_ascii_lowercase() || c == b'_')
        && index.is_none_or(|i| !i.is_empty() && i.bytes().all(|c| c.is_ascii_digit()))
}

/// Dims split on top-level commas only: `Max(1, s0)` and `((s27 + 3)//2)` stay whole.
fn split_dims(inner: &str) -> Vec<String> {
    if inner.trim().is_empty() {
        return Vec::new();
    }
    let mut dims = Vec::new();
    let mut rest = inner;
    while let Some(i) = top_level_comma(rest) {
        dims.push(rest[..i].trim().to_string());
        rest = &rest[i + 1..];
    }
    dims.push(rest.trim().to_string());
    dims
}

fn top_level_comma(s: &str) -> Option<usize> {
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

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

/// Byte cursor over one statement. Positions only ever stop on ASCII bytes or the end, so
/// slicing is on char boundaries; `slice` is still checked.
struct Scan<'a> {
    s: &'a str,
    b: &'a [u8],
    pos: usize,
}

impl<'a> Scan<'a> {
    fn new(s: &'a str) -> Self {
        Scan {
            s,
            b: s.as_bytes(),
            pos: 0,
        }
    }
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }
    fn peek_at(&self, k: usize) -> Option<u8> {
        self.b.get(self.pos + k).copied()
    }
    fn bump(&mut self) {
        self.pos += 1;
    }
    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        let hit = self.peek() == Some(c);
        self.pos += usize::from(hit);
        hit
    }
    fn eat_str(&mut self, t: &str) -> bool {
        let hit = self.rest().starts_with(t);
        if hit {
            self.pos += t.len();
        }
        hit
    }
    /// `=` but not `==`.
    fn eat_assign(&mut self) -> bool {
        if self.peek() == Some(b'=') && self.peek_at(1) != Some(b'=') {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn rest(&self) -> &'a str {
        self.s.get(self.pos..).unwrap_or("")
    }
    fn slice(&self, a: usize, b: usize) -> &'a str {
        self.s.get(a..b).unwrap_or("")
    }
    fn at_end(&self) -> bool {
        self.pos >= self.b.len()
    }
    /// End of statement: nothing left, or the `;  a = b = None` tail.
    fn at_stmt_end(&mut self) -> bool {
        self.ws();
        self.at_end() || self.peek() == Some(b';')
    }
    fn ident(&mut self) -> Option<&'a str> {
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
    fn dotted(&mut self) -> Option<&'a str> {
        let start = self.pos;
        self.ident()?;
        while self.peek() == Some(b'.') && self.peek_at(1).is_some_and(is_ident_start) {
            self.pos += 1;
            self.ident();
        }
        Some(self.slice(start, self.pos))
    }
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}
fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}
fn is_ident(s: &str) -> bool {
    s.as_bytes().first().is_some_and(|&c| is_ident_start(c)) && s.bytes().all(is_ident_byte)
}

/// What the right-hand side of `name = …` is.
enum Rhs<'a> {
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
struct ArgCx<'g> {
    names: &'g HashMap<String, usize>,
    refs: &'g mut Vec<usize>,
}

impl ArgCx<'_> {
    fn rhs<'a>(&mut self, sc: &mut Scan<'a>) -> PResult<Rhs<'a>> {
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
    fn bare_path<'a>(&mut self, sc: &mut Scan<'a>, path: &'a str) -> PResult<Rhs<'a>> {
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
    fn call<'a>(&mut self, sc: &mut Scan<'a>, path: &str) -> PResult<Rhs<'a>> {
        let method = path
            .split_once('.')
            .filter(|(recv, m)| !m.contains('.') && self.names.contains_key(*recv));
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

    fn node_end<'a>(
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
    fn subscript(&mut self, sc: &mut Scan<'_>) -> PResult<Arg> {
        let (mut items, trailing) = self.seq(sc, b']', 1)?;
        if items.len() == 1 && !trailing {
            Ok(items.pop().unwrap_or(Arg::None))
        } else {
            Ok(Arg::Tuple(items))
        }
    }

    /// A name as an argument: a node reference when it names an earlier node.
    fn name_arg(&mut self, name: &str) -> Arg {
        match self.names.get(name) {
            Some(&i) => {
                self.refs.push(i);
                Arg::Node(name.to_string())
            }
            None => Arg::Expr(name.to_string()),
        }
    }

    /// `a, b` without brackets (a `return a, b`) becomes a tuple.
    fn value_or_tuple(&mut self, sc: &mut Scan<'_>) -> PResult<Arg> {
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
    fn call_args(&mut self, sc: &mut Scan<'_>, depth: usize) -> PResult<CallArgs> {
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
    fn seq(&mut self, sc: &mut Scan<'_>, close: u8, depth: usize) -> PResult<(Vec<Arg>, bool)> {
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
    fn value(&mut self, sc: &mut Scan<'_>, depth: usize) -> PResult<Arg> {
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

    fn primary(&mut self, sc: &mut Scan<'_>, depth: usize) -> PResult<Arg> {
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
    fn signed(&mut self, sc: &mut Scan<'_>, depth: usize) -> PResult<Arg> {
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
    fn name_value(&mut self, sc: &mut Scan<'_>, depth: usize) -> PResult<Arg> {
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
    fn dict(&mut self, sc: &mut Scan<'_>, depth: usize) -> PResult<()> {
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

fn too_deep() -> Cow<'static, str> {
    format!("brackets nested deeper than {MAX_DEPTH} levels").into()
}

fn value_ends(sc: &Scan<'_>) -> bool {
    match sc.peek() {
        None => true,
        Some(b',' | b')' | b']' | b'}' | b':' | b';') => true,
        Some(b'=') => sc.peek_at(1) != Some(b'='),
        _ => false,
    }
}

/// Any operator inside an argument expression (the expression is kept verbatim).
fn expr_op(sc: &mut Scan<'_>) -> bool {
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
fn binary_op(sc: &mut Scan<'_>) -> Option<&'static str> {
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
fn unary_op(sc: &mut Scan<'_>) -> Option<&'static str> {
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
fn aug_op(sc: &mut Scan<'_>) -> Option<&'static str> {
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

fn number(sc: &mut Scan<'_>) -> PResult<Arg> {
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
fn string_lit(sc: &mut Scan<'_>) -> PResult<String> {
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

fn unescape(raw: &str) -> String {
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
