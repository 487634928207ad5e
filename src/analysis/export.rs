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

fn graph_json(file: &FxFile, gi: usize, g: &FxGraph, modules: &GraphModules) -> Value {
    let parent = g
        .parent
        .and_then(|p| file.graphs.get(p))
        .map(|p| p.name.clone());
    let used_by = g
        .parent
        .and_then(|p| file.graphs.get(p))
        .zip(g.used_by)
        .and_then(|(p, i)| p.nodes.get(i))
        .map(|n| n.name.clone());
    json!({
        "name": g.name,
        "parent": parent,
        "used_by": used_by,
        "line": g.line,
        "nodes": g.nodes.iter().enumerate().map(|(ni, n)| {
            let mut v = node_json(file, g, n);
            v["module"] = Value::String(modules.path_in(file, gi, ni).to_string());
            v
        }).collect::<Vec<_>>(),
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
        for e in g.dag.raw_edges() {
            let _ = writeln!(
                out,
                "{indent}g{gi}n{} -> g{gi}n{};",
                e.source().index(),
                e.target().index()
            );
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
