//! `fxray compare RUN` (a run holding both stage dumps) and `fxray compare OPTIMIZED ORIGINAL
//! --passes PHASE [--reference FP64]`: npugraph_ex's original against its optimized stage, and
//! the pass where the numbers part.

use super::emit;
use crate::error::Result;
use crate::pipeline::stages::{self, StageCompare, StageSpec};
use std::fmt::Write;
use std::path::Path;

pub struct Options<'a> {
    pub passes: Option<&'a Path>,
    pub reference: Option<&'a Path>,
    pub step: Option<u32>,
    pub rank: Option<u32>,
    pub json: bool,
}

/// The spec the command line names: dumps by role with `--passes`, else found in `run`.
pub fn spec(run: &Path, original: Option<&Path>, o: &Options) -> Result<StageSpec> {
    let mut spec = match (o.passes, original) {
        (Some(passes), Some(original)) => stages::explicit(passes, run, original, o.reference)?,
        (Some(_), None) => {
            return Err(crate::error::Error::user(
                "--passes compares two stage dumps: fxray compare OPTIMIZED ORIGINAL --passes PHASE",
            ));
        }
        (None, _) => {
            let mut s = stages::find(run)?;
            if o.reference.is_some() {
                s.reference = o.reference.map(Path::to_path_buf);
            }
            s
        }
    };
    spec.step = o.step;
    spec.rank = o.rank;
    Ok(spec)
}

pub fn run(target: &Path, original: Option<&Path>, o: &Options) -> Result<()> {
    let spec = spec(target, original, o)?;
    run_spec(spec, None, o)
}

/// `fxray compare TARGET GOLDEN` given the two stage dumps of one run: said, then compared as
/// stages (a golden compare would pair them by name, blind to what the passes renamed).
pub fn run_given_as_golden(mut spec: StageSpec, o: &Options) -> Result<()> {
    let dir = spec
        .passes
        .first()
        .and_then(|p| p.parent())
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let note = format!(
        "{} is the optimized and {} the original stage dump of one run (pass files in {dir}): \
         compared as stages, through the pass history, as `fxray compare RUN` does",
        spec.optimized.display(),
        spec.original.display(),
    );
    spec.step = o.step;
    spec.rank = o.rank;
    run_spec(spec, Some(note), o)
}

fn run_spec(spec: StageSpec, note: Option<String>, o: &Options) -> Result<()> {
    let c = stages::compare(&spec, &Default::default())?;
    let text = if o.json {
        if let Some(n) = &note {
            eprintln!("fxray: {n}");
        }
        super::json_text(&c)?
    } else {
        let mut t = note.map(|n| format!("{n}\n\n")).unwrap_or_default();
        t.push_str(&text(&c));
        t
    };
    emit(&text, None)
}

fn text(c: &StageCompare) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "original   {} (rank {}, step {})",
        c.original.display(),
        c.rank,
        c.step
    );
    let _ = writeln!(s, "optimized  {}", c.optimized.display());
    match &c.reference {
        Some(r) => {
            let _ = writeln!(s, "reference  {} (float64)", r.display());
        }
        None => {
            let _ = writeln!(s, "reference  none");
        }
    }
    let dir = c
        .pass_files
        .first()
        .and_then(|p| p.parent())
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let _ = writeln!(s, "passes     {} files in {dir}", c.pass_files.len());
    let _ = writeln!(s, "tolerance  {}", c.tolerance);
    let _ = writeln!(s);
    let _ = writeln!(s, "{}", c.answer);
    for f in c.findings.iter().skip(1) {
        let _ = writeln!(s, "also: {}", f.sentence);
    }
    // Two dumps cannot split a node several passes touched; a replay of each pass can.
    if let Some(f) = c.findings.first()
        && c.pairs[f.pair].origin.passes().len() > 1
    {
        let beside = c.original.parent().unwrap_or(&c.original);
        let run = match c.pass_files.first() {
            Some(p) if p.starts_with(beside) => beside.display().to_string(),
            Some(p) => format!(
                "{} --inputs {}",
                crate::pipeline::bisect::run_of(p).display(),
                c.original.display()
            ),
            None => String::new(),
        };
        let _ = writeln!(
            s,
            "several passes touched `{}`: `fxray bisect {run}` replays each on the run's inputs \
             and names the one that broke it",
            c.pairs[f.pair].node
        );
    }
    let (agree, depart, unjudged) = c.counts();
    let _ = writeln!(
        s,
        "\n{} pairs: {agree} agree, {depart} depart ({} where the numbers part, {} downstream), \
         {unjudged} not judged; {} optimized nodes stand for no original node",
        c.pairs.len(),
        c.findings.len(),
        depart - c.findings.len(),
        c.unpaired
    );
    let _ = writeln!(
        s,
        "\n{:<24} {:<24} {:<34} {:<8} {:>10} {:>11}",
        "node", "original", "how", "verdict", "cosine", "max abs err"
    );
    for (p, k) in c.pairs.iter().zip(&c.checks) {
        let how = match &p.origin {
            stages::Origin::Kept => "kept".to_string(),
            stages::Origin::Changed { passes, .. } => format!(
                "changed by {}",
                passes
                    .iter()
                    .map(|&i| c.pass_names[i].clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            stages::Origin::Replaced { pass, .. } => format!("built by {}", c.pass_names[*pass]),
        };
        let verdict = match (k.agrees(), &k.why) {
            (Some(true), _) => "agrees".to_string(),
            (Some(false), _) => "DEPARTS".to_string(),
            (None, Some(w)) => format!("— {w}"),
            (None, None) => "—".to_string(),
        };
        let num = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map(f).unwrap_or_default();
        let _ = writeln!(
            s,
            "{:<24} {:<24} {:<34} {:<8} {:>10} {:>11}",
            p.node,
            p.original,
            how,
            verdict,
            num(k.cosine, &|v| format!("{v:.7}")),
            num(k.max_abs_err, &crate::model::tensor::fmt_value),
        );
    }
    s
}

/// `fxray bench stages RUN`: the find once, the compare `rounds` times; best and median, and
/// the peak memory of the compare alone.
pub fn bench(run: &Path, rounds: usize) -> Result<()> {
    use super::measure;
    let t = std::time::Instant::now();
    let spec = stages::find(run)?;
    let find_s = t.elapsed().as_secs_f64();
    let measure::Rounds {
        last: c,
        mut times,
        before_kib: before,
        peak_kib: peak,
    } = measure::rounds(rounds, || stages::compare(&spec, &Default::default()))?;
    let (agree, depart, unjudged) = c.counts();
    let files = |d: &Path| crate::sources::data_dump::scan(d).map_or(0, |cat| cat.files().count());
    println!(
        "passes={} original_files={} optimized_files={} pairs={} agree={agree} depart={depart} \
         unjudged={unjudged} unpaired={} findings={} threads={}",
        c.pass_files.len(),
        files(&c.original),
        files(&c.optimized),
        c.pairs.len(),
        c.unpaired,
        c.findings.len(),
        rayon::current_num_threads()
    );
    println!("answer: {}", c.answer);
    println!(
        "find_s={find_s:.3} compare_best_s={:.3} compare_median_s={:.3}",
        measure::min(&times).as_secs_f64(),
        measure::median(&mut times).as_secs_f64()
    );
    if let (Some(b), Some(p)) = (before, peak) {
        println!(
            "rss_before_mib={:.0} compare_peak_rss_mib={:.0}",
            b / 1024.0,
            p / 1024.0
        );
    }
    Ok(())
}
