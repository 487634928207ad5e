//! `fxray tensors DUMP_ROOT`: statistics of dumped tensors (npy data dumps, npugraph_ex's `.pt`
//! tensor dumps and msprobe `dump.json`), and `--first nan|inf` for the NaN tracer.

use super::emit;
use crate::analysis::nan_trace::{self, Bad};
use crate::error::{Error, Result};
use crate::model::fx::FxGraph;
use crate::model::tensor::{DumpCatalog, MsprobeStep, TensorSummary, fmt_value};
use crate::pipeline::failure::Failure;
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
             dump (step<N>/proc<PID>|rank<R>|pid<P>/dump.json) found",
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
    let summaries: HashMap<PathBuf, Result<TensorSummary, Failure>> =
        crate::pipeline::tensors::summarize_all(&files)
            .into_iter()
            .collect();
    let probe: Vec<&MsprobeStep> = probe
        .iter()
        .filter(|s| o.step.is_none_or(|n| s.step == n))
        .collect();
    // msprobe's tensor mode: each record's `.pt` (`.npy` on MindSpore), summarised as a data
    // dump's files are.
    let probe_files: Vec<ProbeFile> = probe
        .iter()
        .flat_map(|s| {
            s.entries
                .iter()
                .filter(|e| o.node.is_none_or(|n| e.key.contains(n)))
                .flat_map(move |e| {
                    e.tensors.iter().filter_map(move |t| {
                        Some(ProbeFile {
                            step: s.step,
                            who: &s.who,
                            key: &e.key,
                            slot: &t.slot,
                            file: s.tensor_file(t)?,
                            summary: None,
                            error: None,
                        })
                    })
                })
        })
        .collect();
    let paths: Vec<PathBuf> = probe_files.iter().map(|f| f.file.clone()).collect();
    let probe_files: Vec<ProbeFile> = probe_files
        .into_iter()
        .zip(crate::pipeline::tensors::summarize_all(&paths))
        .map(|(mut f, (_, r))| {
            match r {
                Ok(s) => f.summary = Some(s),
                Err(e) => f.error = Some(e.to_string()),
            }
            f
        })
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
                    error: r.and_then(|r| r.as_ref().err()).map(Failure::message),
                }
            })
            .collect();
        let odd: Vec<&Path> = odd_files(&catalog, o).collect();
        let v = serde_json::json!({
            "tensors": records,
            "odd_names": odd,
            "warnings": catalog.warnings,
            "msprobe": probe,
            "msprobe_files": probe_files,
            "msprobe_errors": probe_errors,
        });
        super::json_text(&v)?
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
        for f in &probe_files {
            let _ = write!(
                out,
                "msprobe step {} {}  {}  {}  ",
                f.step, f.who, f.key, f.slot
            );
            match (&f.summary, &f.error) {
                (Some(s), _) => out.push_str(&line(s)),
                (_, Some(e)) => out.push_str(&format!("unreadable {}: {e}", f.file.display())),
                _ => {}
            }
            out.push('\n');
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

/// A tensor-mode msprobe record's file and fxray's statistics of it.
#[derive(serde::Serialize)]
struct ProbeFile<'a> {
    step: u32,
    who: &'a str,
    key: &'a str,
    slot: &'a str,
    file: PathBuf,
    summary: Option<TensorSummary>,
    error: Option<String>,
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

/// The first (step, rank, node) whose outputs hold `bad`: steps in order, every rank at each
/// step (the rank whose first such node comes earliest in graph order wins).
fn first_bad(cat: &DumpCatalog, bad: Bad, o: &Options) -> Result<()> {
    let graph_file = match o.graph {
        Some(p) => Some(load::graph(p)?),
        None => None,
    };
    let graph: Option<&FxGraph> = graph_file.as_ref().and_then(|f| f.graphs.first());
    let ranks: Vec<&crate::model::tensor::RankDump> = cat
        .ranks
        .iter()
        .filter(|r| o.rank.is_none_or(|n| r.rank == n))
        .collect();
    // The dump graphs to search, by name: with a graph, the one whose names match it best.
    let mut names: Vec<&str> = ranks
        .iter()
        .flat_map(|r| &r.graphs)
        .map(|g| g.name.as_str())
        .collect();
    names.sort();
    names.dedup();
    if let Some(g) = graph {
        let q = |name: &str| {
            ranks
                .iter()
                .filter_map(|r| r.graphs.iter().find(|d| d.name == name))
                .filter_map(|d| d.steps.first())
                .map(|s| nan_trace::match_quality(g, s).score())
                .fold(0.0, f64::max)
        };
        names.sort_by(|a, b| q(b).total_cmp(&q(a)));
        names.truncate(1);
    }
    let mut found: Option<(nan_trace::RankTrace, &str)> = None;
    'search: for name in names {
        let per_rank: Vec<(u32, &crate::model::tensor::GraphDump)> = ranks
            .iter()
            .filter_map(|r| Some((r.rank, r.graphs.iter().find(|d| d.name == name)?)))
            .collect();
        let mut steps: Vec<u32> = per_rank
            .iter()
            .flat_map(|(_, g)| g.steps.iter().map(|s| s.step))
            .filter(|s| o.step.is_none_or(|n| *s == n))
            .collect();
        steps.sort();
        steps.dedup();
        for step in steps {
            let here: Vec<(u32, &crate::model::tensor::StepDump)> = per_rank
                .iter()
                .filter_map(|(r, g)| Some((*r, g.steps.iter().find(|s| s.step == step)?)))
                .collect();
            let paths: Vec<PathBuf> = here
                .iter()
                .flat_map(|(_, s)| s.nodes.values())
                .flat_map(|n| &n.files)
                .map(|f| f.path.clone())
                .collect();
            let sums: HashMap<PathBuf, TensorSummary> =
                crate::pipeline::tensors::summarize_all(&paths)
                    .into_iter()
                    .filter_map(|(p, r)| r.ok().map(|s| (p, s)))
                    .collect();
            let lookup = |p: &Path| sums.get(p).map(|s| &s.stats);
            if let Some(t) = nan_trace::first_bad_in_step(step, &here, graph, bad, &lookup) {
                found = Some((t, name));
                break 'search;
            }
        }
    }
    match found {
        Some((rt, gname)) => {
            let t = &rt.trace;
            let mut out = format!("{}\n", t.node);
            for l in t.explain() {
                let _ = writeln!(out, "{l}");
            }
            let _ = writeln!(out, "where: rank {}, {gname}, step {}", rt.rank, rt.step);
            if rt.ranks > 1 {
                let _ = writeln!(out, "across ranks: {}", rt.describe());
            }
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

/// `fxray bench tensors`: writes a `mib` MiB float32 `.npy` (normal-ish values, a NaN every
/// 2^20 elements) to a temp folder, then summarises it `rounds` times. Peak memory is the
/// process's high-water mark (reset just before) over its resident set before summarising:
/// the mapped file counts once, as page cache, and no second copy is made.
pub fn bench(mib: usize, rounds: usize) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("fxray-bench-tensors-{}", std::process::id()));
    let path = dir.join("big-aten.mm.default.OUTPUT.0.20260101000000000000.npy");
    let io = |p: &Path, e: std::io::Error| Error::io(p, &e);
    std::fs::create_dir_all(&dir).map_err(|e| io(&dir, e))?;
    let n = mib * (1 << 20) / 4;
    let result = (|| {
        write_bench_npy(&path, mib)?;
        let bytes = std::fs::metadata(&path).map_err(|e| io(&path, e))?.len();
        let super::measure::Rounds {
            last: s,
            mut times,
            before_kib: baseline,
            peak_kib: peak,
        } = super::measure::rounds(rounds, || crate::pipeline::tensors::summarize_file(&path))?;
        let best = super::measure::min(&times).as_secs_f64();
        println!(
            "file_mib={mib} elements={n} rounds={rounds} threads={}",
            rayon::current_num_threads()
        );
        println!(
            "nan={} min={} max={} mean={:.6} std={:.6}",
            s.stats.nan,
            fmt_value(s.stats.min.unwrap_or(f64::NAN)),
            fmt_value(s.stats.max.unwrap_or(f64::NAN)),
            s.stats.mean.unwrap_or(f64::NAN),
            s.stats.std.unwrap_or(f64::NAN)
        );
        println!(
            "stats_best_s={best:.4} stats_median_s={:.4}",
            super::measure::median(&mut times).as_secs_f64()
        );
        println!("stats_gb_s={:.2}", bytes as f64 / 1e9 / best);
        if let (Some(b), Some(p)) = (baseline, peak) {
            println!(
                "rss_before_mib={:.0} peak_rss_mib={:.0} peak_over_before_mib={:.0} (file {mib} MiB: at most one copy = the mapping)",
                b / 1024.0,
                p / 1024.0,
                (p - b) / 1024.0
            );
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// A `mib` MiB float32 `.npy` at `path`: normal-ish values, a NaN every 2^20 elements (the
/// benchmarks' tensor).
pub(super) fn write_bench_npy(path: &Path, mib: usize) -> Result<()> {
    use std::io::Write;
    let io = |p: &Path, e: std::io::Error| Error::io(p, &e);
    let n = mib * (1 << 20) / 4;
    let file = std::fs::File::create(path).map_err(|e| io(path, e))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    w.write_all(&crate::sources::npy::f32_header(n))
        .map_err(|e| io(path, e))?;
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut buf = Vec::with_capacity(1 << 20);
    for i in 0..n {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        // Sum of two uniforms: a cheap bell shape in [-4, 4).
        let a = (state >> 40) as f32 / (1u64 << 24) as f32;
        let b = ((state >> 16) & 0xFF_FFFF) as f32 / (1u64 << 24) as f32;
        let x = if i % (1 << 20) == 12345 {
            f32::NAN
        } else {
            (a + b - 1.0) * 4.0
        };
        buf.extend_from_slice(&x.to_le_bytes());
        if buf.len() >= 1 << 20 {
            w.write_all(&buf).map_err(|e| io(path, e))?;
            buf.clear();
        }
    }
    w.write_all(&buf).map_err(|e| io(path, e))?;
    w.flush().map_err(|e| io(path, e))?;
    Ok(())
}
