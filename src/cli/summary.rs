//! `fxray summary PATH [--json]`. Each pass after the first of its phase also shows its change
//! to the previous pass (`+added −removed ~changed`, see `analysis::diff`).

use super::emit;
use crate::analysis::summary::{GraphSummary, Summary};
use crate::error::{Error, Result};
use std::fmt::Write;
use std::path::Path;

pub fn run(path: &Path, json: bool) -> Result<()> {
    let index = crate::pipeline::tree::index(path)?;
    if index.is_empty() {
        return Err(Error::user(format!(
            "{}: no torch.compile debug artifacts found (looked for run_*/, model__N/, \
             NNN_aot_*.txt, fx_graph_*.py, graph_K_*.json, worldsize*_global_rank*/, \
             step*/…/dump.json); was the compile run with TORCH_COMPILE_DEBUG=1?",
            path.display()
        )));
    }
    let summary = crate::pipeline::summary::summarize(&index);
    let text = if json {
        super::json_text(&summary)?
    } else {
        render(&summary)
    };
    emit(&text, None)
}

fn render(s: &Summary) -> String {
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
            if let Some(n) = &m.note {
                let _ = write!(o, "  [{n}]");
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
                if let Some(n) = &ph.note {
                    let _ = write!(o, "  [{n}]");
                }
                o.push('\n');
                for p in &ph.passes {
                    let _ = write!(o, "      {:03} {:<44} {}", p.index, p.name, facts(p));
                    if let Some(c) = &p.diff {
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
