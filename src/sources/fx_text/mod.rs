//! Parser for FX `GraphModule.print_readable()` text (docs/formats.md §5): npugraph_ex pass dumps
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
    Arg, FxFile, FxGraph, FxNode, OpKind, Short, SourceLoc, TensorType, UnparsedLine, ValueMeta,
};
use std::borrow::Cow;
use std::collections::HashMap;

mod build;
mod expr;
mod interface;
mod lines;
mod scan;
mod signature;
mod statements;

use expr::*;
pub use interface::interface;
use lines::*;
use scan::*;
pub use signature::parse_meta;
use signature::*;

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
    let mut parser = Parser {
        lines: text.bytes().filter(|&b| b == b'\n').count(),
        ..Parser::default()
    };
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
        let line = crate::sources::read::strip_ansi(raw);
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
    source: Option<std::sync::Arc<SourceLoc>>,
    /// `x: "f32[2]"; y: "f32[2]";` lines of unlifted export signatures.
    pending_annotations: Vec<(String, String)>,
    /// Line of the `"""` opening a metadata block we are inside
    /// (`print_readable(include_meta=True)`).
    meta_block: Option<usize>,
    /// Scratch for de-duplicating `inputs`: `seen[j] == stamp` means already listed.
    seen: Vec<u32>,
    /// Each annotation's text and meaning, by its text (see `meta_of`).
    metas: rustc_hash::FxHashMap<std::sync::Arc<str>, ValueMeta>,
    /// Each target's text (see `intern`).
    targets: rustc_hash::FxHashSet<std::sync::Arc<str>>,
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
    /// Lines in the file: a bound on the first graph's nodes (one per line at most), reserved
    /// up front. Growing a 100k-node graph by doubling copied it into fresh pages the kernel
    /// zeroed first: half of a 415-layer parse, and more the bigger the file.
    lines: usize,
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
        if self.graphs.is_empty() {
            b.reserve(self.lines);
        }
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
            StackComment::Loc(mut loc) => {
                loc.file = self.graphs[g].intern(&loc.file);
                self.graphs[g].source = Some(std::sync::Arc::new(loc));
            }
            StackComment::NoStack => self.graphs[g].source = None,
            StackComment::Other => {}
            StackComment::Malformed => {
                self.graphs[g].source = None;
                self.unparsed_line(no, raw, "stack-trace comment not understood");
            }
        }
    }
}
