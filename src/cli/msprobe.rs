//! `fxray msprobe PATH`: msprobe `dump.json` entries linked to the FX nodes of the graph that ran
//! (docs/formats.md §4.1), with the share linked to a node doing the same op.

use super::emit;
use crate::analysis::msprobe_link::{self, StepLinks};
use crate::error::{Error, Result};
use crate::model::fx::FxFile;
use crate::model::index::PhaseKind;
use crate::model::tensor::MsprobeStep;
use crate::sources::{load, msprobe};
use serde::Serialize;
use std::fmt::Write;
use std::path::{Path, PathBuf};

pub struct Options<'a> {
    pub graph: Option<&'a Path>,
    pub step: Option<u32>,
    pub json: bool,
}

#[derive(Serialize)]
struct Linked<'a> {
    /// The graphs the entries were linked to: the forward one, then the backward one.
    graphs: Vec<&'a Path>,
    #[serde(flatten)]
    links: StepLinks,
}

/// A graph msprobe entries can be linked to, with its nodes' modules.
pub struct Candidate {
    pub path: PathBuf,
    pub file: FxFile,
    pub modules: Vec<String>,
    pub backward: bool,
}

impl Candidate {
    pub fn read(path: &Path) -> Result<Candidate> {
        let file = load::graph(path)?;
        let gm = crate::pipeline::modules::for_graph_file(path, &file);
        let n = file.graphs.first().map_or(0, |g| g.nodes.len());
        Ok(Candidate {
            path: path.to_path_buf(),
            modules: (0..n).map(|i| gm.path(i).to_string()).collect(),
            backward: PhaseKind::of_path(path) == Some(PhaseKind::Backward),
            file,
        })
    }

    pub fn link(&self, step: &MsprobeStep) -> Option<StepLinks> {
        let g = self.file.graphs.first()?;
        let m: Vec<&str> = self.modules.iter().map(String::as_str).collect();
        Some(msprobe_link::link(g, &m, step, self.backward))
    }
}

/// The last pass of every phase under `root` (what ran).
fn last_passes(root: &Path) -> Vec<PathBuf> {
    let Ok(index) = crate::pipeline::tree::index(root) else {
        return Vec::new();
    };
    index
        .phases()
        .filter_map(|p| p.passes.last().map(|f| f.path.clone()))
        .collect()
}

/// Each step's forward entries linked to the forward graph (of those given) that links most of
/// them to the same op, and its backward entries likewise to a backward graph.
pub fn link_all(steps: &[MsprobeStep], graphs: &[Candidate]) -> Vec<(Vec<usize>, StepLinks)> {
    let best = |s: &MsprobeStep, backward: bool| {
        graphs
            .iter()
            .enumerate()
            .filter(|(_, c)| c.backward == backward)
            .filter_map(|(k, c)| Some((k, c.link(s)?)))
            .max_by_key(|(k, l)| (l.same_op(), l.linked(), std::cmp::Reverse(*k)))
    };
    steps
        .iter()
        .filter_map(|s| match (best(s, false), best(s, true)) {
            (Some((f, fl)), Some((b, bl))) => Some((vec![f, b], StepLinks::merge(fl, bl, s))),
            (Some((k, l)), None) | (None, Some((k, l))) => Some((vec![k], l)),
            (None, None) => None,
        })
        .collect()
}

pub fn run(root: &Path, o: &Options) -> Result<()> {
    let (steps, errors) = msprobe::scan(root);
    let steps: Vec<MsprobeStep> = steps
        .into_iter()
        .filter(|s| o.step.is_none_or(|n| s.step == n))
        .collect();
    if steps.is_empty() {
        let why = errors.first().cloned().unwrap_or_else(|| {
            format!(
                "{}: no msprobe dump (step<N>/proc<PID>|rank<R>|pid<P>/dump.json) found",
                root.display()
            )
        });
        return Err(Error::user(why));
    }
    let paths = match o.graph {
        Some(g) => vec![g.to_path_buf()],
        None => last_passes(root),
    };
    if paths.is_empty() {
        return Err(Error::user(format!(
            "{}: no FX graph to link to (give one with --graph)",
            root.display()
        )));
    }
    let graphs: Vec<Candidate> = paths
        .iter()
        .map(|p| Candidate::read(p))
        .collect::<Result<_>>()?;
    let linked = link_all(&steps, &graphs);
    let text = if o.json {
        let v: Vec<Linked> = linked
            .into_iter()
            .map(|(ks, links)| Linked {
                graphs: ks.iter().map(|&k| graphs[k].path.as_path()).collect(),
                links,
            })
            .collect();
        let v = serde_json::json!({ "steps": v, "errors": errors });
        super::json_text(&v)?
    } else {
        let mut out = String::new();
        for (ks, l) in &linked {
            let names: Vec<String> = ks
                .iter()
                .map(|&k| graphs[k].path.display().to_string())
                .collect();
            let _ = writeln!(
                out,
                "msprobe step {} {} → {}",
                l.step,
                l.who,
                names.join(" + ")
            );
            let _ = writeln!(out, "  {}", l.describe());
            for x in &l.links {
                let node = x.node.as_deref().unwrap_or("-");
                let _ = writeln!(
                    out,
                    "  {}  →  {node}  ({:?})  {}",
                    x.key, x.confidence, x.reason
                );
            }
        }
        for e in &errors {
            let _ = writeln!(out, "msprobe: {e}");
        }
        out
    };
    emit(&text, None)
}

/// `fxray bench msprobe GRAPH`: links a synthetic dump as msprobe's mix level would write it
/// for GRAPH (a module entry where each module's first node runs, then an `Aten` entry per
/// aten call, in file order) and prints the entries, the share linked to the same op, and the
/// link time (modules inferred beforehand).
pub fn bench(graph: &Path, rounds: usize) -> Result<()> {
    use std::collections::{HashMap, HashSet};
    let c = Candidate::read(graph)?;
    let Some(g) = c.file.graphs.first() else {
        return Err(Error::user(format!("{}: no graph", graph.display())));
    };
    let rec = r#"{"output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0}]}"#;
    let mut body = Vec::new();
    let mut seen_module = HashSet::new();
    let mut count: HashMap<&str, u32> = HashMap::new();
    for (i, n) in g.nodes.iter().enumerate() {
        let m = c.modules[i].as_str();
        if !m.is_empty() && seen_module.insert(m) {
            body.push(format!(r#""Module.{m}.M.forward.0": {rec}"#));
        }
        if let Some(op) = n.target.strip_prefix("torch.ops.aten.") {
            let k = count.entry(op).or_default();
            body.push(format!(r#""Aten.{op}.{k}.forward": {rec}"#));
            *k += 1;
        }
    }
    let text = format!(
        r#"{{"task": "statistics", "data": {{{}}}}}"#,
        body.join(",")
    );
    let step =
        msprobe::parse(text.as_bytes(), 0, "rank0").map_err(|e| Error::user(e.to_string()))?;
    let mut times = Vec::with_capacity(rounds);
    let mut last = None;
    for _ in 0..rounds {
        let t = std::time::Instant::now();
        let links = c.link(&step);
        times.push(t.elapsed());
        // Dropping the last round's links is not linking (and was 5% of a 415-layer round).
        last = links;
    }
    let l = last.ok_or_else(|| Error::user("the graph has no nodes"))?;
    println!(
        "nodes={} entries={} linked={} same_op={} ({:.1}%)",
        g.nodes.len(),
        step.entries.len(),
        l.linked(),
        l.same_op(),
        100.0 * l.same_op_share()
    );
    println!(
        "link_best_s={:.4} link_median_s={:.4}",
        super::measure::min(&times).as_secs_f64(),
        super::measure::median(&mut times).as_secs_f64()
    );
    Ok(())
}
