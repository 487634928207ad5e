//! `fxray ranks PATH [--json]`: the rank matrix of every launch under PATH — each graph file ×
//! each rank, with node counts, and the ranks whose graph differs from the majority's.

use super::emit;
use crate::analysis::ranks::{self, RankMatrix};
use crate::error::{Error, Result};
use crate::sources::load;
use std::fmt::Write;
use std::path::Path;

pub fn run(path: &Path, json: bool) -> Result<()> {
    let matrices = matrices(path)?;
    let text = if json {
        let v = serde_json::json!({ "runs": matrices });
        super::json_text(&v)?
    } else {
        matrices.iter().map(render).collect::<Vec<_>>().join("\n")
    };
    emit(&text, None)
}

/// The matrix of every launch under `path`, its graph files parsed in parallel.
pub fn matrices(path: &Path) -> Result<Vec<RankMatrix>> {
    let index = crate::pipeline::tree::index(path)?;
    if index.launches.is_empty() {
        let ranked = index.runs.iter().filter(|r| r.rank.is_some()).count();
        return Err(Error::user(format!(
            "{}: no launch of several ranks found ({ranked} run folder(s) with a -rank_R \
             suffix; ranks of one launch sit in the same folder and start within {} s)",
            path.display(),
            crate::model::launch::WINDOW_MICROS / 1_000_000
        )));
    }
    let runs: std::collections::HashSet<usize> = index
        .launches
        .iter()
        .flat_map(|l| l.ranks.iter().map(|r| r.run))
        .collect();
    let files = index
        .runs
        .iter()
        .enumerate()
        .filter(|(i, _)| runs.contains(i))
        .flat_map(|(_, r)| &r.models)
        .flat_map(|m| {
            m.dynamo_graph.iter().map(|p| p.as_path()).chain(
                m.phases
                    .iter()
                    .flat_map(|ph| ph.passes.iter().map(|p| p.path.as_path())),
            )
        })
        .map(Path::to_path_buf)
        .collect::<Vec<_>>();
    let facts = crate::pipeline::facts::of_all(&files);
    Ok(index
        .launches
        .iter()
        .map(|l| ranks::matrix(&index, l, &facts))
        .collect())
}

fn render(m: &RankMatrix) -> String {
    let mut o = String::new();
    let ranks: Vec<String> = m.ranks.iter().map(u32::to_string).collect();
    let _ = writeln!(
        o,
        "{}: {} ranks ({})",
        m.run,
        m.ranks.len(),
        ranks.join(", ")
    );
    let _ = write!(o, "  {:<10} {:<9} {:<40}", "model", "phase", "pass");
    for r in &m.ranks {
        let _ = write!(o, " {:>7}", format!("rank {r}"));
    }
    o.push('\n');
    for row in &m.passes {
        let pass = format!("{:03} {}", row.pass, row.name);
        let _ = write!(o, "  {:<10} {:<9} {:<40}", row.model, row.phase, pass);
        for r in &m.ranks {
            let cell = match row.nodes.get(&r.to_string()) {
                Some(n) => n.to_string(),
                None if row.missing.contains(r) => "-".to_string(),
                None => "?".to_string(),
            };
            let mark = if row.differs_at(*r) { "*" } else { " " };
            let _ = write!(o, " {cell:>6}{mark}");
        }
        o.push('\n');
    }
    match m.first_divergence() {
        None => o.push_str("every rank compiled the same graphs\n"),
        Some(first) => {
            let _ = writeln!(
                o,
                "* differs from the majority; first at {}",
                first.differs_text().unwrap_or_default()
            );
        }
    }
    o
}

/// `fxray bench ranks PATH`: the cost of the rank matrix on every launch under PATH, its graphs
/// parsed once beforehand: fingerprinting every graph file (what the facts job adds per file)
/// and building the matrices from the facts (what the app does when facts change), best of
/// `rounds`.
pub fn bench(path: &Path, rounds: usize) -> Result<()> {
    use crate::analysis::graph_facts::GraphFacts;
    use rayon::prelude::*;
    let index = crate::pipeline::tree::index(path)?;
    if index.launches.is_empty() {
        return Err(Error::user(format!(
            "{}: no launch of several ranks found",
            path.display()
        )));
    }
    let paths: Vec<&Path> = index.graph_files().collect();
    let files: Vec<_> = paths
        .par_iter()
        .filter_map(|p| load::graph(p).ok())
        .collect();
    let nodes: usize = files.iter().map(|f| f.node_count()).sum();
    let best = |f: &dyn Fn()| {
        (0..rounds)
            .map(|_| {
                let t = std::time::Instant::now();
                f();
                t.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let fingerprint_s = best(&|| {
        let sum: u64 = files
            .iter()
            .map(crate::analysis::graph_facts::fingerprint)
            .fold(0, u64::wrapping_add);
        std::hint::black_box(sum);
    });
    let facts: std::collections::HashMap<_, _> = paths
        .iter()
        .zip(&files)
        .map(|(p, f)| (p.to_path_buf(), GraphFacts::of(f)))
        .collect();
    let matrix_s = best(&|| {
        for l in &index.launches {
            std::hint::black_box(ranks::matrix(&index, l, &facts));
        }
    });
    let ranks: usize = index.launches.iter().map(|l| l.ranks.len()).sum();
    println!(
        "fingerprint_s={fingerprint_s:.4} matrix_s={matrix_s:.6} files={} nodes={nodes} ranks={ranks}",
        files.len()
    );
    Ok(())
}
