//! An FX graph as `GraphModule.print_readable()` prints it (docs/formats.md §5).
//!
//! One text file can hold several graphs: the top-level class and, after it, every nested
//! submodule class (the branches of `cond`, `while_loop`, `invoke_subgraph`, …). They are kept
//! flat in file order, each pointing at its parent, so exporters and views can walk them
//! without recursion.

use serde::{Deserialize, Serialize};
pub use thin_vec::{ThinVec, thin_vec};

/// A short string kept inside its owner (up to 24 bytes; longer ones on the heap): node names,
/// dims, dtypes and devices. A 100k-node graph has millions of them, and one allocation each
/// was most of a parse's time and a third of its memory.
pub type Short = compact_str::CompactString;

/// Everything parsed from one graph text file.
///
/// Its serde form (an agent parses a server's graphs and sends them whole) leaves out what
/// linking derives (`users`, `by_name`) and rebuilds it on the way in.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(from = "FxFileWire")]
pub struct FxFile {
    /// Top-level graph first, then nested sub-graphs in file order.
    pub graphs: Vec<FxGraph>,
    /// Lines that are not understood. Kept so the user can see them; never fatal.
    pub unparsed: Vec<UnparsedLine>,
    /// File-level problems in plain words (e.g. "file ends inside `forward` (truncated?)").
    pub problems: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnparsedLine {
    /// 1-based line number in the file.
    pub line: usize,
    pub text: String,
    /// Why it was not understood.
    pub reason: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FxGraph {
    /// Class name: `GraphModule`, `<lambda>`, `Repro`, `true_graph_0`, …
    pub name: String,
    /// Index into `FxFile::graphs` of the enclosing class, `None` for the top level.
    pub parent: Option<usize>,
    /// Index into the parent's `nodes` of the node that uses this sub-graph (the `cond` call),
    /// when one does.
    pub used_by: Option<usize>,
    /// Nodes in file order: placeholders, body, then the `output` node.
    pub nodes: Vec<FxNode>,
    /// Node name → index in `nodes`.
    #[serde(skip)]
    pub by_name: super::names::NameIndex,
    /// 1-based line of the `class` header.
    pub line: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FxNode {
    pub name: Short,
    pub op: OpKind,
    /// `torch.ops.aten.mul.Tensor`, `operator.getitem`, `torch._C._nn.linear`, the method name
    /// for call_method, the attribute path for get_attr, the original placeholder name
    /// (`L_x_`) for Dynamo aliases, `output` for the output node. Shared by the nodes of one
    /// target when parsed (a graph has 100k nodes and a few hundred targets).
    pub target: std::sync::Arc<str>,
    pub args: ThinVec<Arg>,
    pub kwargs: ThinVec<(String, Arg)>,
    /// The quoted annotation as written (`f32[4, 4][4, 1]cpu`), if any: shared by the nodes
    /// annotated alike (a model's layers repeat their shapes).
    pub annotation: Option<std::sync::Arc<str>>,
    /// The annotation, understood.
    pub meta: Option<ValueMeta>,
    /// Shared by the nodes of one source line (a 100k-node graph has a few thousand lines).
    pub source: Option<std::sync::Arc<SourceLoc>>,
    /// 1-based line in the file where the node is defined.
    pub line: usize,
    /// Indices (in the same graph) of nodes referenced by args then kwargs, each once.
    pub inputs: ThinVec<usize>,
    /// Indices of nodes that take this one as input, in file order.
    #[serde(skip)]
    pub users: ThinVec<usize>,
    /// Indices into `FxFile::graphs` of sub-graphs this node refers to (HOP branches).
    pub subgraphs: ThinVec<usize>,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, serde::Deserialize, PartialOrd, Ord,
)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    Placeholder,
    GetAttr,
    CallFunction,
    CallMethod,
    CallModule,
    Output,
}

impl OpKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Placeholder => "placeholder",
            OpKind::GetAttr => "get_attr",
            OpKind::CallFunction => "call_function",
            OpKind::CallMethod => "call_method",
            OpKind::CallModule => "call_module",
            OpKind::Output => "output",
        }
    }
}

/// An argument as written. Node references are kept by name; `FxNode::inputs` has them resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Arg {
    Node(Short),
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    None,
    List(Vec<Arg>),
    Tuple(Vec<Arg>),
    /// Anything else, verbatim: `device(type='cpu')`, `torch.float16`, `inf`, `s77 + 1`.
    Expr(String),
}

/// What a node's annotation says about its value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ValueMeta {
    /// Boxed: a node is read far more often than its tensor type, and inline the type was a
    /// third of every node (120 of 336 bytes) that walks over nodes had to bring in.
    /// Shared, like the annotation it comes from.
    Tensor(std::sync::Arc<TensorType>),
    /// `Sym(s77)`, `Sym(2*s77)`: the expression inside.
    Sym(String),
    /// An annotation we keep but do not understand.
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TensorType {
    /// `f32`, `bf16`, `i64`, …
    pub dtype: Short,
    /// Dims as written; symbolic ones kept as expressions (`s77`, `((s27 + 3)//2)`).
    pub shape: Vec<Short>,
    pub stride: Option<Vec<Short>>,
    pub device: Option<Short>,
    /// Tensor subclass wrapper, e.g. `DTensor` for `DTensor(f32[4], ...)`.
    pub wrapper: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SourceLoc {
    /// Shared by the lines of one file (a graph cites a handful of files thousands of times;
    /// module inference keys its tables by file and line).
    pub file: std::sync::Arc<str>,
    pub line: u32,
    pub function: String,
    pub code: String,
    /// True for `# Backward of forward node: File: ...`.
    pub backward_of: bool,
}

/// The file name of a path as Python printed it (`/a/b/models.py`, `C:\\a\\models.py`):
/// either separator, whatever the OS reading it, so not `Path::file_name`.
pub fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

impl SourceLoc {
    /// `models.py:141`: the file's base name and line, as the CLI and the inspector show it.
    pub fn short(&self) -> String {
        format!("{}:{}", file_name(&self.file), self.line)
    }
}

impl FxNode {
    /// A node as a dump writes it, with no annotation nor source yet; `inputs`, `users` and
    /// `subgraphs` are filled when its graph is linked.
    pub fn new(
        name: impl Into<Short>,
        op: OpKind,
        target: impl Into<std::sync::Arc<str>>,
        args: impl Into<ThinVec<Arg>>,
        kwargs: impl Into<ThinVec<(String, Arg)>>,
        line: usize,
    ) -> Self {
        FxNode {
            name: name.into(),
            op,
            target: target.into(),
            args: args.into(),
            kwargs: kwargs.into(),
            annotation: None,
            meta: None,
            source: None,
            line,
            inputs: ThinVec::new(),
            users: ThinVec::new(),
            subgraphs: ThinVec::new(),
        }
    }

    pub fn tensor(&self) -> Option<&TensorType> {
        match &self.meta {
            Some(ValueMeta::Tensor(t)) => Some(t),
            _ => None,
        }
    }
}

impl FxGraph {
    /// Fills what the nodes' `inputs` imply: each node's `users`.
    pub fn link(&mut self) {
        for i in 0..self.nodes.len() {
            for k in 0..self.nodes[i].inputs.len() {
                let j = self.nodes[i].inputs[k];
                self.nodes[j].users.push(i);
            }
        }
    }

    /// Data-flow edges (producer, consumer) by node index, consumers in order.
    pub fn edges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.nodes
            .iter()
            .enumerate()
            .flat_map(|(i, n)| n.inputs.iter().map(move |&j| (j, i)))
    }
}

/// An [`FxFile`] as it crosses a link: its graphs without what linking derives.
#[derive(Deserialize)]
struct FxFileWire {
    graphs: Vec<FxGraph>,
    unparsed: Vec<UnparsedLine>,
    problems: Vec<String>,
}

impl From<FxFileWire> for FxFile {
    fn from(w: FxFileWire) -> Self {
        let mut graphs = w.graphs;
        let count = graphs.len();
        let sizes: Vec<usize> = graphs.iter().map(|g| g.nodes.len()).collect();
        for g in &mut graphs {
            g.parent = g.parent.filter(|&p| p < count);
            g.used_by = g
                .used_by
                .filter(|&u| g.parent.is_some_and(|p| u < sizes[p]));
            for node in &mut g.nodes {
                node.subgraphs.retain(|&s| s < count);
            }
            // A later node of the same name wins, as when parsing.
            g.by_name = g
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| (n.name.as_str(), i))
                .collect();
            // An index past the graph (a hostile or cut message) is dropped, never followed.
            let n = g.nodes.len();
            for node in &mut g.nodes {
                node.inputs.retain(|&j| j < n);
                node.users.clear();
            }
            g.link();
        }
        FxFile {
            graphs,
            unparsed: w.unparsed,
            problems: w.problems,
        }
    }
}

impl FxFile {
    pub fn node_count(&self) -> usize {
        self.graphs.first().map_or(0, |g| g.nodes.len())
    }
}

#[cfg(test)]
mod tests {
    /// Every walk over a 100k-node graph brings each node it visits into the cache: a field
    /// added inline to every node is paid by all of them (see docs/PERFORMANCE.md).
    #[test]
    fn a_node_stays_small() {
        assert!(std::mem::size_of::<super::FxNode>() <= 152);
    }
}

/// The outside of a graph file's outer `forward`, read without parsing its body
/// (`sources::fx_text::interface`): its parameters and what its `return` returns, each with
/// the annotation written on its line. An AOT forward returns its user outputs, then the values
/// it saves for the backward; the backward takes those saved values, by the same names, then
/// one tangent per output: enough to tell a backward's forward (`analysis::backward_owner`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphInterface {
    pub inputs: Vec<Value>,
    /// `None` for a returned item that is no node's name (`None`, a constant).
    pub outputs: Vec<Option<Value>>,
}

/// A named value of a [`GraphInterface`]: a parameter, or a node its `return` returns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Value {
    pub name: String,
    /// The annotation as written (`f32[2, 8, 1]`, `Sym(s0)`); `None` where there is none.
    pub ann: Option<String>,
}
