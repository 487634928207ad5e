//! `fxray tensors DUMP_ROOT`: statistics of dumped tensors (npy data dumps and msprobe
//! `dump.json`), and `--first nan|inf` for the NaN tracer.

use super::emit;
use crate::analysis::nan_trace::{self, Bad, Trace};
use crate::analysis::tensor_stats;
use crate::error::{Error, Result};
use crate::model::fx::FxGraph;
use crate::model::tensor::{DumpCatalog, MsprobeStep, TensorSummary, fmt_value};
use crate::sources::{data_dump, load, msprobe};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

pub struct Options<'a> {
    pub node: Option<&'a str>,
    pub step: Option<u32>,
    pub rank: Option<u32>,
    pub json: bool,
    pub first: Option<&'a str>,
    pub graph: Option<&'a Path>,
}

/// One dumped file with its statistics, as `--json` prints it.
#[derive(Serialize)]
struct Record<'a> {
    rank: u32,
    graph: &'a str,
    step: u32,
    node: &'a str,
    target: &'a str,
    slot: String,
    file: &'a Path,
    #[serde(skip_serializing_if = "Option::is_none")]
    summary: Option<&'a TensorSummary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
}

pub fn run(root: &Path, o: &Options) -> Result<()> {
    let catalog = data_dump::scan(root).ok();
    let (probe, probe_errors) = msprobe::scan(root);
    if catalog.is_none() && probe.is_empty() {
        return Err(Error::user(format!(
            "{}: no data dump (worldsize<W>_global_rank<R>/graph_<K>/<step>/*.npy) and no msprobe \
             dump (step<N>/rank<R>|pid<P>/dump.json) found",
            root.display()
        )));
    }
    let catalog = catalog.unwrap_or_default();
    if let Some(first) = o.first {
        let bad = Bad::parse(first).ok_or_else(|| {
            Error::user(format!("--first {first}: expected nan, inf, +inf or -inf"))
        })?;
        return first_bad(&catalog, bad, o);
    }
    let files: Vec<PathBuf> = selected(&catalog, o)
        .map(|(.., f)| f.path.clone())
        .collect();
    let summaries: HashMap<PathBuf, Result<TensorSummary, String>> =
        tensor_stats::summarize_all(&files).into_iter().collect();
    let probe: Vec<&MsprobeStep> = probe
        .iter()
        .filter(|s| o.step.is_none_or(|n| s.step == n))
        .collect();
    let text = if o.json {
        let records: Vec<Record> = selected(&catalog, o)
            .map(|(rank, graph, step, node, f)| {
                let r = summaries.get(&f.path);
                Record {
                    rank,
                    graph,
                    step,
                    node: &node.node,
                    target: &node.target,
                    slot: f.name.slot(),
                    file: &f.path,
                    summary: r.and_then(|r| r.as_ref().ok()),
                    error: r.and_then(|r| r.as_ref().err()).map(String::as_str),
                }
            })
            .collect();
        let odd: Vec<&Path> = odd_files(&catalog, o).collect();
        let v = serde_json::json!({
            "tensors": records,
            "odd_names": odd,
            "warnings": catalog.warnings,
            "msprobe": probe,
            "msprobe_errors": probe_errors,
        });
        let mut s = serde_json::to_string_pretty(&v).map_err(|e| Error::Internal(e.to_string()))?;
        s.push('\n');
        s
    } else {
        let mut out = String::new();
        for (rank, graph, step, node, f) in selected(&catalog, o) {
            let _ = write!(
                out,
                "rank {rank} {graph} step {step}  {}  {}  ",
                node.node,
                f.name.slot()
            );
            match summaries.get(&f.path) {
                Some(Ok(s)) => out.push_str(&line(s)),
                Some(Err(e)) => out.push_str(&format!("unreadable: {e}")),
                None => {}
            }
            out.push('\n');
        }
        for p in odd_files(&catalog, o) {
            let _ = writeln!(out, "not a dump file name: {}", p.display());
        }
        for w in &catalog.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        for s in &probe {
            msprobe_text(&mut out, s, o.node);
        }
        for e in &probe_errors {
            let _ = writeln!(out, "msprobe: {e}");
        }
        out
    };
    emit(&text, None)
}

/// `f32 [2, 8]  min=… max=… mean=… std=…  nan=0 +inf=0 -inf=3 zero=1`.
pub fn line(s: &TensorSummary) -> String {
    let st = &s.stats;
    let f = |x: Option<f64>| x.map_or("-".to_string(), fmt_value);
    let mut l = format!(
        "{}  min={} max={} mean={} std={}  nan={} +inf={} -inf={} zero={}",
        s.info.describe(),
        f(st.min),
        f(st.max),
        f(st.mean),
        f(st.std),
        st.nan,
        st.pos_inf,
        st.neg_inf,
        st.zero
    );
    if let Some(w) = &s.warning {
        l.push_str(&format!("  ({w})"));
    }
    l
}

type Sel<'a> = (
    u32,
    &'a str,
    u32,
    &'a crate::model::tensor::NodeDump,
    &'a crate::model::tensor::DumpFile,
);

fn selected<'a>(cat: &'a DumpCatalog, o: &'a Options) -> impl Iterator<Item = Sel<'a>> + 'a {
    cat.ranks
        .iter()
        .filter(move |r| o.rank.is_none_or(|n| r.rank == n))
        .flat_map(move |r| {
            r.graphs.iter().flat_map(move |g| {
                g.steps
                    .iter()
                    .filter(move |s| o.step.is_none_or(|n| s.step == n))
                    .flat_map(move |s| {
                        s.execution_order()
                            .into_iter()
                            .filter(move |n| o.node.is_none_or(|x| n.node == x))
                            .flat_map(move |n| {
                                n.files
                                    .iter()
                                    .map(move |f| (r.rank, g.name.as_str(), s.step, n, f))
                            })
                    })
            })
        })
}

fn odd_files<'a>(cat: &'a DumpCatalog, o: &'a Options) -> impl Iterator<Item = &'a Path> + 'a {
    cat.ranks
        .iter()
        .flat_map(|r| &r.graphs)
        .flat_map(|g| &g.steps)
        .filter(move |s| o.step.is_none_or(|n| s.step == n))
        .flat_map(|s| s.odd_names.iter().map(PathBuf::as_path))
}

fn msprobe_text(out: &mut String, s: &MsprobeStep, node: Option<&str>) {
    let _ = writeln!(
        out,
        "msprobe step {} {}  {}",
        s.step,
        s.who,
        s.path.display()
    );
    let f = |x: Option<f64>| x.map_or("null".to_string(), fmt_value);
    for e in &s.entries {
        if node.is_some_and(|n| !e.key.contains(n)) {
            continue;
        }
        for t in &e.tensors {
            let _ = writeln!(
                out,
                "  {}  {}  {} {:?}  max={} min={} mean={} norm={}",
                e.key,
                t.slot,
                t.dtype,
                t.shape,
                f(t.max),
                f(t.min),
                f(t.mean),
                f(t.norm)
            );
        }
    }
}

fn first_bad(cat: &DumpCatalog, bad: Bad, o: &Options) -> Result<()> {
    let graph_file = match o.graph {
        Some(p) => Some(load::graph(p)?),
        None => None,
    };
    let graph: Option<&FxGraph> = graph_file.as_ref().and_then(|f| f.graphs.first());
    let mut found: Option<(Trace, u32, u32, String)> = None;
    'search: for r in cat
        .ranks
        .iter()
        .filter(|r| o.rank.is_none_or(|n| r.rank == n))
    {
        // With a graph, the dump graph whose names match it best; else every dump graph.
        let mut graphs: Vec<_> = r.graphs.iter().collect();
        if let Some(g) = graph {
            graphs.sort_by(|a, b| {
                let q = |d: &crate::model::tensor::GraphDump| {
                    d.steps
                        .first()
                        .map_or(0.0, |s| nan_trace::match_quality(g, s).score())
                };
                q(b).total_cmp(&q(a))
            });
            graphs.truncate(1);
        }
        for gd in graphs {
            for s in gd
                .steps
                .iter()
                .filter(|s| o.step.is_none_or(|n| s.step == n))
            {
                let paths: Vec<PathBuf> = s
                    .nodes
                    .values()
                    .flat_map(|n| &n.files)
                    .map(|f| f.path.clone())
                    .collect();
                let sums: HashMap<PathBuf, TensorSummary> = tensor_stats::summarize_all(&paths)
                    .into_iter()
                    .filter_map(|(p, r)| r.ok().map(|s| (p, s)))
                    .collect();
                let lookup = |p: &Path| sums.get(p).map(|s| &s.stats);
                if let Some(t) = nan_trace::first_bad(s, graph, bad, &lookup) {
                    found = Some((t, r.rank, s.step, gd.name.clone()));
                    break 'search;
                }
            }
        }
    }
    match found {
        Some((t, rank, step, gname)) => {
            let mut out = format!("{}\n", t.node);
            for l in t.explain() {
                let _ = writeln!(out, "{l}");
            }
            let _ = writeln!(out, "where: rank {rank}, {gname}, step {step}");
            emit(&out, None)
        }
        None => {
            eprintln!(
                "no dumped output holds {}{}",
                bad.label(),
                o.step.map(|s| format!(" in step {s}")).unwrap_or_default()
            );
            Ok(())
        }
    }
}
