//! `fxray compare TARGET GOLDEN`: a run against its golden run, tensor by tensor, with
//! msprobe's metrics and results and fxray's first divergence; `fxray compare CSV` reads
//! msprobe's own compare result. `--csv FILE` writes msprobe's columns.

use super::emit;
use crate::analysis::accuracy::{Comparison, Level, Metric, Mode, Pair, msprobe_csv};
use crate::error::{Error, Result};
use crate::model::tensor::fmt_value;
use crate::pipeline::compare::{self as pipeline, Described};
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

pub struct Options<'a> {
    pub step: Option<u32>,
    pub rank: Option<u32>,
    pub graph: Option<&'a Path>,
    pub json: bool,
    pub csv: Option<&'a Path>,
}

pub fn run(target: &Path, golden: Option<&Path>, o: &Options) -> Result<()> {
    let (c, described) = load(target, golden, o)?;
    if let Some(out) = o.csv {
        std::fs::write(out, msprobe_csv::write(&c)).map_err(|e| Error::io(out, &e))?;
    }
    let text = if o.json {
        super::json_text(&Json::of(&c))?
    } else {
        text(&c, &described)
    };
    emit(&text, None)
}

/// The comparison the command prints: computed from two dumps, or read from msprobe's CSV.
pub fn load(target: &Path, golden: Option<&Path>, o: &Options) -> Result<(Comparison, Described)> {
    if pipeline::is_compare_csv(target) {
        if let Some(g) = golden {
            return Err(Error::user(format!(
                "{}: a compare CSV is a finished compare; give it alone, without {}",
                target.display(),
                g.display()
            )));
        }
        let c = pipeline::open_csv(target)?;
        let d = Described {
            target: format!("{} (msprobe compare result)", target.display()),
            golden: String::new(),
        };
        return Ok((c, d));
    }
    let Some(golden) = golden else {
        return Err(Error::user(
            "fxray compare TARGET GOLDEN: the golden dump is missing (or give msprobe's compare_result_*.csv alone)",
        ));
    };
    let opts = pipeline::Options {
        step: o.step,
        rank: o.rank,
        graph: o.graph.map(Path::to_path_buf),
        ..Default::default()
    };
    Ok(pipeline::compare(target, golden, &opts)?)
}

/// The JSON shape of docs/formats.md §4.4.
#[derive(Serialize)]
struct Json<'a> {
    pairs: Vec<JsonPair<'a>>,
    unpaired: Unpaired<'a>,
    first_divergence: Option<FirstJson<'a>>,
}

#[derive(Serialize)]
struct JsonPair<'a> {
    key: &'a str,
    golden_key: &'a str,
    node: Option<&'a str>,
    slot: &'a str,
    dtype: &'a str,
    golden_dtype: &'a str,
    shape: &'a [u64],
    cosine: Option<Metric>,
    euc_dist: Option<Metric>,
    max_abs_err: Option<Metric>,
    max_rel_err: Option<Metric>,
    one_thousandth_ratio: Option<Metric>,
    five_thousandths_ratio: Option<Metric>,
    norm_ratio: Option<f64>,
    added_error: Option<f64>,
    result: Level,
    reason: &'a str,
}

#[derive(Serialize)]
struct Unpaired<'a> {
    target: Vec<&'a str>,
    golden: Vec<&'a str>,
}

#[derive(Serialize)]
struct FirstJson<'a> {
    key: &'a str,
    node: Option<&'a str>,
    why: &'a str,
}

fn finite(v: Option<f64>) -> Option<f64> {
    v.filter(|x| x.is_finite())
}

impl<'a> Json<'a> {
    fn of(c: &'a Comparison) -> Json<'a> {
        Json {
            pairs: c
                .pairs
                .iter()
                .map(|p| {
                    let m = |f: fn(&crate::analysis::accuracy::TensorMetrics) -> Metric| {
                        p.metrics.as_ref().map(f)
                    };
                    JsonPair {
                        key: &p.key,
                        golden_key: &p.golden_key,
                        node: p.node.as_deref(),
                        slot: &p.slot,
                        dtype: &p.dtype,
                        golden_dtype: &p.golden_dtype,
                        shape: &p.shape,
                        cosine: m(|m| m.cosine),
                        euc_dist: m(|m| m.euc_dist),
                        max_abs_err: m(|m| m.max_abs_err),
                        max_rel_err: m(|m| m.max_rel_err),
                        one_thousandth_ratio: m(|m| m.one_thousandth_ratio),
                        five_thousandths_ratio: m(|m| m.five_thousandths_ratio),
                        norm_ratio: finite(p.norm_ratio),
                        added_error: finite(p.added_error),
                        result: p.result,
                        reason: &p.reason,
                    }
                })
                .collect(),
            unpaired: Unpaired {
                target: c.unpaired_target.iter().map(|u| u.key.as_str()).collect(),
                golden: c.unpaired_golden.iter().map(|u| u.key.as_str()).collect(),
            },
            first_divergence: c.first_divergence.as_ref().map(|f| FirstJson {
                key: &f.key,
                node: f.node.as_deref(),
                why: &f.why,
            }),
        }
    }
}

fn metric(m: Option<Metric>) -> String {
    match m {
        Some(Metric::Value(v)) => fmt_value(v),
        Some(other) => other.word().unwrap_or("-").to_string(),
        None => "-".into(),
    }
}

fn pair_line(p: &Pair, mode: Mode) -> String {
    let opt = |v: Option<f64>| v.map_or("-".to_string(), fmt_value);
    let mut l = format!("{:7} {}", p.result.as_str(), p.key);
    if p.golden_key != p.key {
        let _ = write!(l, " ~ {}", p.golden_key);
    }
    if let Some(n) = &p.node
        && *n != p.call
    {
        let _ = write!(l, " [{n}]");
    }
    match (mode, &p.metrics) {
        (Mode::Tensor, Some(m)) => {
            let _ = write!(
                l,
                "  cos={} maxabs={} maxrel={} r1={} norm_ratio={} err={}",
                metric(Some(m.cosine)),
                metric(Some(m.max_abs_err)),
                metric(Some(m.max_rel_err)),
                metric(Some(m.one_thousandth_ratio)),
                opt(p.norm_ratio),
                opt(p.error)
            );
        }
        _ => {
            let _ = write!(l, "  norm_ratio={} err={}", opt(p.norm_ratio), opt(p.error));
        }
    }
    if let Some(a) = p.added_error {
        let _ = write!(l, " added={}", fmt_value(a));
    }
    if !p.reason.is_empty() {
        let _ = write!(l, "  ({})", p.reason);
    }
    l
}

fn text(c: &Comparison, d: &Described) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "target: {}", d.target);
    if !d.golden.is_empty() {
        let _ = writeln!(out, "golden: {}", d.golden);
    }
    let mode = c.mode.unwrap_or(Mode::Tensor);
    let [pass, warn, err] = c.counts();
    let _ = writeln!(
        out,
        "{} mode; {} pairs ({}); unpaired: {} target, {} golden; msprobe results: {pass} pass, {warn} warning, {err} error",
        match mode {
            Mode::Tensor => "tensor",
            Mode::Statistics => "statistics",
        },
        c.pairs.len(),
        c.pairing,
        c.unpaired_target.len(),
        c.unpaired_golden.len()
    );
    match &c.first_divergence {
        Some(f) => {
            let node = f
                .node
                .as_deref()
                .map(|n| format!(" (node {n})"))
                .unwrap_or_default();
            let _ = writeln!(out, "first divergence: {}{node}", f.key);
            let _ = writeln!(out, "  {}", f.why);
        }
        None => {
            let _ = writeln!(
                out,
                "first divergence: none (every pair within its dtype's tolerance)"
            );
        }
    }
    for n in &c.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out.push('\n');
    for p in &c.pairs {
        let _ = writeln!(out, "{}", pair_line(p, mode));
    }
    for (side, list) in [
        ("target", &c.unpaired_target),
        ("golden", &c.unpaired_golden),
    ] {
        for u in list.iter() {
            let node = u
                .node
                .as_deref()
                .map(|n| format!(" [{n}]"))
                .unwrap_or_default();
            let _ = writeln!(out, "only in {side}: {}{node}", u.key);
        }
    }
    out
}

/// `fxray bench compare TARGET GOLDEN`: the whole compare (find, read, pair, compute) timed,
/// best of `rounds`, with the peak resident memory; with `msprobe` (a Python with
/// mindstudio-probe), `msprobe compare` on the same two msprobe dumps beside it.
pub fn bench(target: &Path, golden: &Path, rounds: usize, msprobe: Option<&Path>) -> Result<()> {
    let bytes: u64 = [target, golden].iter().map(|p| tensor_bytes(p)).sum();
    let super::measure::Rounds {
        last: (c, _),
        mut times,
        before_kib: before,
        peak_kib: peak,
    } = super::measure::rounds(rounds, || {
        pipeline::compare(target, golden, &pipeline::Options::default())
    })?;
    let best = super::measure::min(&times).as_secs_f64();
    println!(
        "pairs={} unpaired={} tensor_bytes_gb={:.3} threads={}",
        c.pairs.len(),
        c.unpaired_target.len() + c.unpaired_golden.len(),
        bytes as f64 / 1e9,
        rayon::current_num_threads()
    );
    println!(
        "fxray_best_s={best:.3} fxray_median_s={:.3} fxray_gb_s={:.2}",
        super::measure::median(&mut times).as_secs_f64(),
        bytes as f64 / 1e9 / best
    );
    if let (Some(b), Some(p)) = (before, peak) {
        println!(
            "fxray_rss_before_mib={:.0} fxray_peak_rss_mib={:.0}",
            b / 1024.0,
            p / 1024.0
        );
    }
    let Some(python) = msprobe else {
        return Ok(());
    };
    let json = |p: &Path, side: &str| -> Result<std::path::PathBuf> {
        let found = pipeline::locate::find(p, side)?;
        found
            .msprobe
            .first()
            .map(|s| s.path.clone())
            .ok_or_else(|| {
                Error::user(format!(
                    "{}: no msprobe dump.json for msprobe to compare",
                    p.display()
                ))
            })
    };
    let (tj, gj) = (json(target, "target")?, json(golden, "golden")?);
    let out = std::env::temp_dir().join(format!("fxray-bench-msprobe-{}", std::process::id()));
    let exe = python.with_file_name("msprobe");
    let t = std::time::Instant::now();
    let status = std::process::Command::new(&exe)
        .args(["compare", "-tp"])
        .arg(&tj)
        .arg("-gp")
        .arg(&gj)
        .arg("-o")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| Error::user(format!("{}: {e}", exe.display())))?;
    let msprobe_s = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&out);
    if !status.success() {
        return Err(Error::user(format!(
            "{} compare failed: {status}",
            exe.display()
        )));
    }
    println!(
        "msprobe_s={msprobe_s:.3} msprobe_peak_rss_mib={:.0} speedup={:.1}",
        crate::platform::children_usage().peak_mib(),
        msprobe_s / best
    );
    Ok(())
}

/// Bytes of the `.pt`/`.npy` files under `path`.
fn tensor_bytes(path: &Path) -> u64 {
    walkdir::WalkDir::new(path)
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.path()
                .extension()
                .is_some_and(|x| x == "pt" || x == "npy")
        })
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}
