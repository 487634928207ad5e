//! `fxray diff A B [--json]` and `fxray bench diff A B`: A and B are graph files or
//! `PHASE_DIR:k` selectors (the pass numbered k in that phase folder).

use super::emit;
use crate::analysis::diff::{self, DiffReport, EdgeKind, GraphDiff, NodeStatus};
use crate::error::{Error, Result};
use crate::model::fx::{FxFile, FxNode};
use crate::model::fx_fmt::{meta_text, short_target};
use crate::model::index::PassFile;
use crate::sources::{load, vfs};
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub fn run(a: &Path, b: &Path, json: bool) -> Result<()> {
    let (pa, pb) = (resolve(a)?, resolve(b)?);
    let (fa, fb) = (load::graph(&pa)?, load::graph(&pb)?);
    let d = diff::diff(&fa, &fb);
    let text = if json {
        super::json_text(&d.report(&fa, &fb))?
    } else {
        render(&d, &fa, &fb)
    };
    emit(&text, None)
}

/// A graph file as given, or `PHASE_DIR:k` → the pass with index k (the `NNN` prefix; 0/1 for
/// Inductor's readable/transformed graphs) in that phase folder.
pub fn resolve(sel: &Path) -> Result<PathBuf> {
    if vfs::is_file(sel) {
        return Ok(sel.to_path_buf());
    }
    let selector = sel
        .to_str()
        .and_then(|s| s.rsplit_once(':'))
        .filter(|(dir, k)| {
            !dir.is_empty() && !k.is_empty() && k.bytes().all(|c| c.is_ascii_digit())
        });
    let Some((dir, k)) = selector else {
        if vfs::is_dir(sel) {
            return Err(Error::user(format!(
                "{}: is a folder; name a graph file or a pass as PHASE_DIR:k (e.g. {}:1)",
                sel.display(),
                sel.display()
            )));
        }
        return Err(Error::user(format!(
            "{}: no such graph file (or PHASE_DIR:k pass selector)",
            sel.display()
        )));
    };
    let dir = Path::new(dir);
    let k: u32 = k
        .parse()
        .map_err(|_| Error::user(format!("{}: pass number out of range", sel.display())))?;
    if !vfs::is_dir(dir) {
        return Err(Error::user(format!(
            "{}: no such phase folder (in selector {})",
            dir.display(),
            sel.display()
        )));
    }
    let index = crate::pipeline::tree::index(dir)?;
    let phases: Vec<_> = index
        .runs
        .iter()
        .flat_map(|r| &r.models)
        .flat_map(|m| &m.phases)
        .collect();
    // A path inside an archive has no real path: it is compared as made absolute.
    let canon = |p: &Path| {
        std::fs::canonicalize(p)
            .or_else(|_| std::path::absolute(p))
            .unwrap_or_else(|_| p.to_path_buf())
    };
    let want = canon(dir);
    let phase = phases
        .iter()
        .find(|p| canon(&p.path) == want)
        .or_else(|| (phases.len() == 1).then(|| &phases[0]));
    // A phase folder, or any folder of numbered dumps (a copy, a folder of loose passes).
    let (passes, where_): (Vec<&PassFile>, &Path) = match phase {
        Some(ph) => (ph.passes.iter().collect(), &ph.path),
        None => (
            index
                .loose_graphs
                .iter()
                .filter(|g| g.path.parent().is_some_and(|d| canon(d) == want))
                .collect(),
            dir,
        ),
    };
    if passes.is_empty() {
        return Err(Error::user(format!(
            "{}: no numbered pass dumps here ({} phase folder(s) inside; name one, e.g. …/forward:{k})",
            dir.display(),
            phases.len()
        )));
    }
    let found: Vec<&&PassFile> = passes.iter().filter(|p| p.index == k).collect();
    match found.as_slice() {
        [p] => Ok(p.path.clone()),
        [] => {
            let lo = passes.iter().map(|p| p.index).min().unwrap_or(0);
            let hi = passes.iter().map(|p| p.index).max().unwrap_or(0);
            Err(Error::user(format!(
                "{}: no pass {k} in {} (passes {lo}..={hi})",
                sel.display(),
                where_.display()
            )))
        }
        many => Err(Error::user(format!(
            "{}: {} files numbered {k} in {}; name the file",
            sel.display(),
            many.len(),
            where_.display()
        ))),
    }
}

/// The summary line, then the nodes grouped by status.
fn render(d: &GraphDiff, a: &FxFile, b: &FxFile) -> String {
    let r: DiffReport = d.report(a, b);
    let c = d.counts();
    let mut o = format!("{c}");
    if c.rewired > 0 {
        let _ = write!(o, ", {} rewired edge(s)", c.rewired);
    }
    o.push('\n');
    let node_a = |q: &str| diff::resolve(a, q).map(|(g, i)| &a.graphs[g].nodes[i]);
    let node_b = |q: &str| diff::resolve(b, q).map(|(g, i)| &b.graphs[g].nodes[i]);
    if !r.added.is_empty() {
        let _ = writeln!(o, "\nadded ({})", r.added.len());
        for n in &r.added {
            let _ = writeln!(o, "  + {n}{}", describe(node_b(n)));
        }
    }
    if !r.removed.is_empty() {
        let _ = writeln!(o, "\nremoved ({})", r.removed.len());
        for n in &r.removed {
            let _ = writeln!(o, "  - {n}{}", describe(node_a(n)));
        }
    }
    if c.changed > 0 {
        let _ = writeln!(o, "\nchanged ({})", c.changed);
        for p in &d.pairs {
            let (Some(ga), Some(gb)) = (p.a.map(|i| &a.graphs[i]), p.b.map(|i| &b.graphs[i]))
            else {
                continue;
            };
            for (j, s) in p.status_b.iter().enumerate() {
                let NodeStatus::Changed { fields } = *s else {
                    continue;
                };
                let Some(i) = p.b_to_a[j] else { continue };
                let (an, bn) = (&ga.nodes[i], &gb.nodes[j]);
                let name = diff::qualified_name(b, p.b.unwrap_or(0), j).unwrap_or_default();
                let _ = writeln!(o, "  ~ {name}  [{fields}]");
                for (f, x, y) in diff::change_details(an, bn, fields) {
                    let _ = writeln!(
                        o,
                        "      {}: {} \u{2192} {}",
                        f.as_str(),
                        clip(&x),
                        clip(&y)
                    );
                }
            }
        }
    }
    if !r.renamed.is_empty() {
        let _ = writeln!(o, "\nrenamed ({})", r.renamed.len());
        for e in &r.renamed {
            let _ = writeln!(o, "  {} \u{2192} {}", e.from, e.to);
        }
    }
    if !r.rewired.is_empty() {
        let _ = writeln!(o, "\nrewired edges ({})", r.rewired.len());
        for e in &r.rewired {
            let sign = match e.kind {
                EdgeKind::Added => '+',
                EdgeKind::Removed => '-',
            };
            let _ = writeln!(o, "  {sign} {} \u{2192} {}", e.from, e.to);
        }
    }
    o
}

fn describe(n: Option<&FxNode>) -> String {
    let Some(n) = n else { return String::new() };
    let mut s = format!("  {}", short_target(n));
    if let Some(m) = meta_text(n) {
        let _ = write!(s, "  {m}");
    }
    s
}

/// At most ~100 characters of a value, cut on a character boundary.
fn clip(s: &str) -> String {
    const MAX: usize = 100;
    if s.chars().count() <= MAX {
        return s.to_string();
    }
    let cut: String = s.chars().take(MAX).collect();
    format!("{cut}…")
}

/// `fxray bench diff A B`: best of `rounds` diffs of two parsed files.
pub fn bench(a: &Path, b: &Path, rounds: usize) -> Result<()> {
    let (pa, pb) = (resolve(a)?, resolve(b)?);
    let (fa, fb) = (load::graph(&pa)?, load::graph(&pb)?);
    let mut times = Vec::with_capacity(rounds);
    let mut counts = Default::default();
    for _ in 0..rounds.max(1) {
        let t = Instant::now();
        let d = diff::diff(&fa, &fb);
        times.push(t.elapsed());
        counts = d.counts();
    }
    let best = super::measure::min(&times);
    let median = super::measure::median(&mut times);
    let count = |f: &FxFile| f.graphs.iter().map(|g| g.nodes.len()).sum::<usize>();
    println!("a={}", pa.display());
    println!("b={}", pb.display());
    let counts: diff::DiffCounts = counts;
    println!("rounds={} {counts}", times.len());
    println!(
        "diff_best_s={:.4} diff_median_s={:.4}",
        best.as_secs_f64(),
        median.as_secs_f64()
    );
    println!(
        "diff_s={:.4} nodes_a={} nodes_b={}",
        best.as_secs_f64(),
        count(&fa),
        count(&fb)
    );
    Ok(())
}
