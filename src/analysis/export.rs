//! Exporting a parsed graph file: JSON (the shape `fxray export --format json` promises) and
//! Graphviz DOT.

use crate::analysis::modules::GraphModules;
use crate::analysis::op_family;
use crate::model::fx::{FxFile, FxGraph, FxNode, ValueMeta};
use crate::model::fx_fmt::short_target;
use serde_json::{Value, json};
use std::fmt::Write;

/// `{"file", "unparsed": [{"line","text"}], "problems": [...], "graphs": [{"name","parent","nodes": [...]}]}`.
pub fn to_json(file_label: &str, file: &FxFile) -> Value {
    to_json_with_modules(file_label, file, &GraphModules::default())
}

/// [`to_json`], every node with its `"module"` (dotted path, `""` for the root or unknown).
pub fn to_json_with_modules(file_label: &str, file: &FxFile, modules: &GraphModules) -> Value {
    let graphs: Vec<Value> = file
        .graphs
        .iter()
        .enumerate()
        .map(|(gi, g)| graph_json(file, gi, g, modules))
        .collect();
    json!({
        "file": file_label,
        "unparsed": file.unparsed.iter().map(|u| json!({"line": u.line, "text": u.text})).collect::<Vec<_>>(),
        "problems": file.problems,
        "graphs": graphs,
    })
}

/// [`to_json_with_modules`] written to `out` as it is made (pretty, the same text): one node's
/// value at a time, so a 100k-node graph never exists as one JSON tree in memory.
pub fn write_json_with_modules(
    out: &mut impl std::io::Write,
    file_label: &str,
    file: &FxFile,
    modules: &GraphModules,
) -> serde_json::Result<()> {
    serde_json::to_writer_pretty(
        out,
        &Streamed {
            file_label,
            file,
            modules,
        },
    )
}

struct Streamed<'a> {
    file_label: &'a str,
    file: &'a FxFile,
    modules: &'a GraphModules,
}

impl serde::Serialize for Streamed<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let file = self.file;
        // Keys in the order a `Value` object keeps them (sorted), so the text is the same.
        let mut m = s.serialize_map(Some(4))?;
        m.serialize_entry("file", self.file_label)?;
        m.serialize_entry(
            "graphs",
            &Seq(|| {
                file.graphs.iter().enumerate().map(|(gi, g)| StreamedGraph {
                    file,
                    gi,
                    g,
                    modules: self.modules,
                })
            }),
        )?;
        m.serialize_entry("problems", &file.problems)?;
        let unparsed: Vec<Value> = file
            .unparsed
            .iter()
            .map(|u| json!({"line": u.line, "text": u.text}))
            .collect();
        m.serialize_entry("unparsed", &unparsed)?;
        m.end()
    }
}

/// A sequence serialised from an iterator made on demand.
struct Seq<F>(F);

impl<F, I, T> serde::Serialize for Seq<F>
where
    F: Fn() -> I,
    I: Iterator<Item = T>,
    T: serde::Serialize,
{
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((self.0)())
    }
}

struct StreamedGraph<'a> {
    file: &'a FxFile,
    gi: usize,
    g: &'a FxGraph,
    modules: &'a GraphModules,
}

impl serde::Serialize for StreamedGraph<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (file, g) = (self.file, self.g);
        let head = graph_head(file, g);
        let mut m = s.serialize_map(Some(5))?;
        m.serialize_entry("line", &g.line)?;
        m.serialize_entry("name", &g.name)?;
        m.serialize_entry(
            "nodes",
            &Seq(|| {
                g.nodes
                    .iter()
                    .enumerate()
                    .map(|(ni, n)| node_with_module(file, self.gi, ni, g, n, self.modules))
            }),
        )?;
        m.serialize_entry("parent", &head.0)?;
        m.serialize_entry("used_by", &head.1)?;
        m.end()
    }
}

/// A graph's parent class and the node of it that uses the graph.
fn graph_head(file: &FxFile, g: &FxGraph) -> (Option<String>, Option<String>) {
    let parent = g
        .parent
        .and_then(|p| file.graphs.get(p))
        .map(|p| p.name.clone());
    let used_by = g
        .parent
        .and_then(|p| file.graphs.get(p))
        .zip(g.used_by)
        .and_then(|(p, i)| p.nodes.get(i))
        .map(|n| n.name.to_string());
    (parent, used_by)
}

fn node_with_module(
    file: &FxFile,
    gi: usize,
    ni: usize,
    g: &FxGraph,
    n: &FxNode,
    modules: &GraphModules,
) -> Value {
    let mut v = node_json(file, g, n);
    v["module"] = Value::String(modules.path_in(file, gi, ni).to_string());
    v
}

fn graph_json(file: &FxFile, gi: usize, g: &FxGraph, modules: &GraphModules) -> Value {
    let (parent, used_by) = graph_head(file, g);
    json!({
        "name": g.name,
        "parent": parent,
        "used_by": used_by,
        "line": g.line,
        "nodes": g.nodes.iter().enumerate().map(|(ni, n)| node_with_module(file, gi, ni, g, n, modules)).collect::<Vec<_>>(),
    })
}

fn node_json(file: &FxFile, g: &FxGraph, n: &FxNode) -> Value {
    let names = |idx: &[usize]| -> Vec<&str> {
        idx.iter()
            .filter_map(|&i| g.nodes.get(i))
            .map(|m| m.name.as_str())
            .collect()
    };
    let tensor = n.tensor();
    let sym = match &n.meta {
        Some(ValueMeta::Sym(e)) => Some(e.as_str()),
        _ => None,
    };
    json!({
        "name": n.name,
        "op": n.op.as_str(),
        "target": n.target,
        "inputs": names(&n.inputs),
        "users": names(&n.users),
        "args": n.args.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        "kwargs": n.kwargs.iter().map(|(k, v)| (k.clone(), Value::String(v.to_string()))).collect::<serde_json::Map<_, _>>(),
        "dtype": tensor.map(|t| t.dtype.as_str()),
        "shape": tensor.map(|t| &t.shape),
        "stride": tensor.and_then(|t| t.stride.as_ref()),
        "device": tensor.and_then(|t| t.device.as_deref()),
        "sym": sym,
        "annotation": n.annotation,
        "source": n.source.as_ref().map(|s| s.short()),
        "source_code": n.source.as_ref().map(|s| s.code.as_str()),
        "line": n.line,
        "family": op_family::family(n),
        "subgraphs": n.subgraphs.iter().filter_map(|&i| file.graphs.get(i)).map(|s| s.name.as_str()).collect::<Vec<_>>(),
    })
}

/// Graphviz DOT, top to bottom, nodes coloured by op family; sub-graphs as clusters.
pub fn to_dot(file: &FxFile) -> String {
    let mut out = String::new();
    let title = file.graphs.first().map_or("graph", |g| g.name.as_str());
    let _ = writeln!(out, "digraph {} {{", quote(title));
    out.push_str("  rankdir=TB;\n  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n");
    for (gi, g) in file.graphs.iter().enumerate() {
        let indent = if gi == 0 { "  " } else { "    " };
        if gi > 0 {
            let _ = writeln!(
                out,
                "  subgraph cluster_{gi} {{\n    label={};",
                quote(&g.name)
            );
        }
        for (ni, n) in g.nodes.iter().enumerate() {
            let [r, gr, b] = op_family::family(n).rgb();
            let mut label = format!("{}\\n{}", escape(&n.name), escape(&short_target(n)));
            if let Some(m) = &n.meta {
                let _ = write!(label, "\\n{}", escape(&m.to_string()));
            }
            let _ = writeln!(
                out,
                "{indent}g{gi}n{ni} [label=\"{label}\", fillcolor=\"#{r:02x}{gr:02x}{b:02x}\", fontcolor=\"white\"];"
            );
        }
        for (from, to) in g.edges() {
            let _ = writeln!(out, "{indent}g{gi}n{from} -> g{gi}n{to};");
        }
        if gi > 0 {
            out.push_str("  }\n");
        }
    }
    // Link each sub-graph to the node that calls it, dashed, so the nesting is visible.
    for (gi, g) in file.graphs.iter().enumerate() {
        if let (Some(p), Some(u)) = (g.parent, g.used_by)
            && !g.nodes.is_empty()
        {
            let _ = writeln!(out, "  g{p}n{u} -> g{gi}n0 [style=dashed, color=gray];");
        }
    }
    out.push_str("}\n");
    out
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn quote(s: &str) -> String {
    format!("\"{}\"", escape(s))
}
