//! `fxray summary PATH [--json]`. Each pass after the first of its phase also shows its change
//! to the previous pass (`+added −removed ~changed`, see `analysis::diff`).

use super::emit;
use crate::analysis::diff::DiffCounts;
use crate::analysis::graph_facts::GraphFacts;
use crate::analysis::summary::{GraphSummary, Summary};
use crate::error::{Error, Result};
use crate::model::index::DebugIndex;
use crate::pipeline::facts;
use crate::sources::load;
use serde_json::Value;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

pub fn run(path: &Path, json: bool) -> Result<()> {
    let index = load::index(path)?;
    if index.is_empty() {
        return Err(Error::user(format!(
            "{}: no torch.compile debug artifacts found (looked for run_*/, model__N/, \
             NNN_aot_*.txt, fx_graph_*.py, graph_K_*.json, worldsize*_global_rank*/, \
             step*/…/dump.json); was the compile run with TORCH_COMPILE_DEBUG=1?",
            path.display()
        )));
    }
    let (facts, diffs) = parse_and_diff(&index);
    let summary = Summary::build(&index, &facts);
    let text = if json {
        let internal = |e: serde_json::Error| Error::Internal(e.to_string());
        let mut v = serde_json::to_value(&summary).map_err(internal)?;
        add_diffs(&mut v, &diffs);
        super::json_text(&v)?
    } else {
        render(&summary, &diffs)
    };
    emit(&text, None)
}

/// Facts of every graph file of the index, and for every pass but the first of its phase, its
/// diff counts against the previous pass (absent when either file could not be read).
pub fn parse_and_diff(
    index: &DebugIndex,
) -> (HashMap<PathBuf, GraphFacts>, HashMap<PathBuf, DiffCounts>) {
    let phases: Vec<Vec<PathBuf>> = index
        .runs
        .iter()
        .flat_map(|r| &r.models)
        .flat_map(|m| &m.phases)
        .map(|ph| ph.passes.iter().map(|p| p.path.clone()).collect())
        .collect();
    let (mut facts, diffs) = facts::of_phases(&phases);
    let rest: Vec<PathBuf> = index
        .graph_files()
        .filter(|p| !facts.contains_key(*p))
        .map(Path::to_path_buf)
        .collect();
    facts.extend(parse_all(&rest));
    (facts, diffs)
}

/// Adds `"diff": {"added", "removed", "changed", "renamed"}` to every pass object of the JSON
/// summary that has diff counts.
fn add_diffs(v: &mut Value, diffs: &HashMap<PathBuf, DiffCounts>) {
    let runs = v.get_mut("runs").and_then(Value::as_array_mut);
    for run in runs.into_iter().flatten() {
        let models = run.get_mut("models").and_then(Value::as_array_mut);
        for m in models.into_iter().flatten() {
            let phases = m.get_mut("phases").and_then(Value::as_array_mut);
            for ph in phases.into_iter().flatten() {
                let passes = ph.get_mut("passes").and_then(Value::as_array_mut);
                for p in passes.into_iter().flatten() {
                    let Some(path) = p.get("path").and_then(Value::as_str) else {
                        continue;
                    };
                    let Some(c) = diffs.get(Path::new(path)) else {
                        continue;
                    };
                    if let Some(obj) = p.as_object_mut() {
                        obj.insert(
                            "diff".into(),
                            serde_json::json!({
                                "added": c.added,
                                "removed": c.removed,
                                "changed": c.changed,
                                "renamed": c.renamed,
                            }),
                        );
                    }
                }
            }
        }
    }
}

/// The facts of every graph file (parsed in parallel; on a server, by its agent); a file that
/// cannot be read gets its reason.
pub fn parse_all(paths: &[PathBuf]) -> HashMap<PathBuf, GraphFacts> {
    let all = std::sync::Mutex::new(HashMap::new());
    facts::of_files(paths, |p, f| {
        all.lock().expect("facts").insert(p, f);
    });
    all.into_inner().expect("facts")
}

fn render(s: &Summary, diffs: &HashMap<PathBuf, DiffCounts>) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{} ({:?}, {} files)",
        s.root.display(),
        s.opened,
        s.files_seen
    );
    for l in &s.launches {
        let ranks: Vec<String> = l.ranks.iter().map(u32::to_string).collect();
        let _ = writeln!(
            o,
            "\nlaunch: {} ranks ({}) from {} in {}",
            l.ranks.len(),
            ranks.join(", "),
            l.name,
            l.root.display()
        );
        if l.differs.is_empty() {
            o.push_str("  every rank compiled the same graphs\n");
        }
        for d in &l.differs {
            let _ = writeln!(o, "  differs: {d}");
        }
    }
    for run in &s.runs {
        let _ = write!(o, "\n{}", run.name);
        if let Some(t) = &run.time {
            let _ = write!(o, "  {t}");
        }
        if let Some(p) = run.pid {
            let _ = write!(o, "  pid {p}");
        }
        if let Some(r) = run.rank {
            let _ = write!(o, "  rank {r}");
        }
        if !run.siblings.is_empty() {
            let _ = write!(o, "  (same process: {})", run.siblings.join(", "));
        }
        o.push('\n');
        for m in &run.models {
            let _ = write!(o, "  {} ({:?})", m.name, m.backend);
            if let Some(g) = &m.graph_name {
                let _ = write!(o, "  {g}");
            }
            if m.orphan {
                o.push_str("  [orphan: only the Dynamo graph]");
            }
            o.push('\n');
            if let Some(g) = &m.dynamo_graph {
                let _ = writeln!(o, "    dynamo_out_graph.txt  {}", facts(g));
            }
            for ph in &m.phases {
                let _ = write!(o, "    {}: {} graph(s)", ph.name, ph.passes.len());
                if ph.output_code.is_some() {
                    o.push_str(", output_code.py");
                }
                if !ph.artifacts.is_empty() {
                    let _ = write!(o, ", {} other file(s)", ph.artifacts.len());
                }
                o.push('\n');
                for p in &ph.passes {
                    let _ = write!(o, "      {:03} {:<44} {}", p.index, p.name, facts(p));
                    if let Some(c) = diffs.get(&p.path) {
                        let _ = write!(o, "  +{} \u{2212}{} ~{}", c.added, c.removed, c.changed);
                        if c.renamed > 0 {
                            let _ = write!(o, " renamed {}", c.renamed);
                        }
                    }
                    o.push('\n');
                }
            }
            for c in &m.captures {
                let _ = writeln!(
                    o,
                    "    capture {} {:?}  {}",
                    c.graph,
                    c.kind,
                    file_name(&c.path)
                );
            }
        }
        for l in &run.logs {
            let _ = writeln!(
                o,
                "  log {:?}  {} ({} bytes)",
                l.kind,
                rel(&l.path, &run.path),
                l.size
            );
        }
    }
    if !s.graphs.is_empty() {
        o.push_str("\ngraph files\n");
        for g in &s.graphs {
            let _ = writeln!(o, "  {}  {}", g.path.display(), facts(g));
        }
    }
    for c in &s.captures {
        let _ = writeln!(o, "capture {} {:?}  {}", c.graph, c.kind, c.path.display());
    }
    for d in &s.data_dumps {
        let steps: Vec<String> = d
            .graphs
            .iter()
            .flat_map(|g| {
                g.steps
                    .iter()
                    .map(move |(s, n)| format!("{} step {s}: {n} files", g.name))
            })
            .collect();
        let _ = writeln!(
            o,
            "\ndata dump {} (rank {}/{}): {}",
            d.path.display(),
            d.rank,
            d.world_size,
            steps.join(", ")
        );
    }
    for m in &s.msprobe {
        let _ = writeln!(o, "msprobe step {} {}: {}", m.step, m.who, m.path.display());
    }
    for k in &s.autotune {
        let _ = writeln!(o, "autotune kernel {} ({} files)", k.name, k.files.len());
    }
    if !s.warnings.is_empty() {
        o.push_str("\nwarnings\n");
        for w in &s.warnings {
            let _ = writeln!(o, "  {w}");
        }
    }
    o
}

fn facts(g: &GraphSummary) -> String {
    let mut s = format!("{} nodes", g.nodes);
    if g.subgraph_nodes > 0 {
        let _ = write!(s, " (+{} in sub-graphs)", g.subgraph_nodes);
    }
    if g.status != "ok" {
        let _ = write!(s, "  [{}]", g.status);
    }
    s
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn rel(p: &Path, base: &Path) -> String {
    p.strip_prefix(base).unwrap_or(p).display().to_string()
}
