//! Original against optimized, start to finish (docs/formats.md §4.5): find the two stage dumps
//! of npugraph_ex (and a float64 reference) and the phase whose passes joined them, pair every
//! optimized node with the original node it stands for through the pass history, judge each
//! pair with the minifier's rule and name the pass where the numbers part
//! (`analysis::accuracy::stages`).

use crate::analysis::accuracy::metrics;
use crate::analysis::accuracy::stages::{self, Agreement, NO_FINDING};
pub use crate::analysis::accuracy::stages::{Origin, StagePair};
use crate::analysis::accuracy::stats::Summary;
use crate::analysis::accuracy::tolerance::{self, Judged};
use crate::analysis::diff::consecutive_diffs;
use crate::model::fx::{FxFile, OpKind};
use crate::model::progress::{Progress, Unit};
use crate::model::tensor::{DumpCatalog, StepDump, fmt_value};
use crate::sources::{data_dump, discover, load, names, tensor_file};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// What to compare: the phase's pass files in order and the dump folders.
#[derive(Debug, Clone, Default)]
pub struct StageSpec {
    pub passes: Vec<PathBuf>,
    pub original: PathBuf,
    pub optimized: PathBuf,
    /// The original graph run in float64 (its names).
    pub reference: Option<PathBuf>,
    pub rank: Option<u32>,
    pub step: Option<u32>,
}

/// Why a stage compare cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    #[error("{}: {why}", path.display())]
    Unreadable { path: PathBuf, why: String },
    #[error(
        "{}: {found}; a stage compare needs npugraph_ex's tensor dumps of both stages \
         (data_dump_stage=\"original\" and \"optimized\") and the phase's pass files (to \
         compare against a golden run instead: fxray compare TARGET GOLDEN)",
        path.display()
    )]
    NotStages { path: PathBuf, found: String },
    #[error(
        "cannot tell the original dump from the optimized one: no pass renamed a node; give \
         them in order: fxray compare OPTIMIZED ORIGINAL --passes PHASE"
    )]
    Ambiguous,
    #[error("{side} has no {what} {asked} (it has: {have})")]
    NoSuch {
        side: &'static str,
        what: &'static str,
        asked: u32,
        have: String,
    },
    #[error("the stage compare was called off")]
    Cancelled,
}

impl From<StageError> for crate::error::Error {
    fn from(e: StageError) -> Self {
        crate::error::Error::user(e.to_string())
    }
}

/// One pair judged.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub judged: Option<Judged>,
    pub cosine: Option<f64>,
    pub max_abs_err: Option<f64>,
    /// Why it was not judged (a side has no tensor, shapes differ, unreadable file).
    pub why: Option<String>,
    /// Each stage's tensor: dtype as the dump writes it, shape and statistics.
    pub original: Option<Side>,
    pub optimized: Option<Side>,
}

/// One stage's tensor of a pair, for showing both side by side.
#[derive(Debug, Clone, Serialize)]
pub struct Side {
    pub dtype: String,
    pub shape: Vec<u64>,
    pub summary: Summary,
}

impl Check {
    pub fn agrees(&self) -> Agreement {
        self.judged.map(|j| j.agrees)
    }

    /// `cosine 0.99910, max abs err 4.1e-3, rmse vs fp64 3.0e-4 > 1.0e-5`.
    pub fn numbers(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = self.cosine {
            parts.push(format!("cosine {c:.7}"));
        }
        if let Some(m) = self.max_abs_err {
            parts.push(format!("max abs err {}", fmt_value(m)));
        }
        if let Some(j) = &self.judged
            && let (Some(r), Some(b)) = (j.res_error, j.bound())
        {
            let cmp = if r > b { ">" } else { "≤" };
            parts.push(format!(
                "rmse vs fp64 {} {cmp} {}",
                fmt_value(r),
                fmt_value(b)
            ));
        }
        parts.join(", ")
    }
}

/// Where the numbers part: a pair and what to say about it.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// Index into [`StageCompare::pairs`].
    pub pair: usize,
    /// The pass whose diff shows it (the last pass that touched the node), when one did.
    pub pass: Option<usize>,
    pub sentence: String,
}

/// The answer: every pair judged and where the numbers part.
#[derive(Debug, Clone, Serialize)]
pub struct StageCompare {
    pub pass_files: Vec<PathBuf>,
    /// `004 apply_pattern_passes`, one per pass file.
    pub pass_names: Vec<String>,
    pub pairs: Vec<StagePair>,
    pub checks: Vec<Check>,
    pub findings: Vec<Finding>,
    /// The first finding's sentence, or that no pass changed the numbers.
    pub answer: String,
    /// Which tolerance was used, in words.
    pub tolerance: String,
    pub original: PathBuf,
    pub optimized: PathBuf,
    pub reference: Option<PathBuf>,
    pub rank: u32,
    pub step: u32,
    /// Tensor nodes of the optimized graph that stand for no original node (a decomposition's
    /// interior).
    pub unpaired: usize,
}

impl StageCompare {
    /// `(agree, depart, not judged)` over every pair.
    pub fn counts(&self) -> (usize, usize, usize) {
        let count = |v: Agreement| self.checks.iter().filter(|k| k.agrees() == v).count();
        (count(Some(true)), count(Some(false)), count(None))
    }
}

/// Finds the stage dumps under `root` (a run folder holding the pass files and the dumps) and
/// the phase that joins them.
pub fn find(root: &Path) -> Result<StageSpec, StageError> {
    let unreadable = |why: String| StageError::Unreadable {
        path: root.to_path_buf(),
        why,
    };
    let index = discover::discover(root).map_err(|e| unreadable(e.to_string()))?;
    let mut roots: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for d in &index.data_dumps {
        let parent = d.path.parent().unwrap_or(&d.path).to_path_buf();
        roots.entry(parent).or_default().push(d.path.clone());
    }
    let phases = phases_of(&index);
    if roots.len() < 2 || phases.is_empty() {
        return Err(StageError::NotStages {
            path: root.to_path_buf(),
            found: format!(
                "{} tensor dump folder(s) and {} phase(s) with pass files",
                roots.len(),
                phases.len()
            ),
        });
    }
    let dumps: Vec<(PathBuf, HashSet<String>)> = roots
        .into_iter()
        .map(|(root, ranks)| {
            let cat = data_dump::scan_ranks(&ranks);
            (root, node_names(&cat))
        })
        .collect();
    let mut best: Option<(usize, StageSpec)> = None;
    for passes in phases {
        let (first, last) = (
            load::graph(&passes[0]).map_err(|e| unreadable(e.to_string()))?,
            load::graph(&passes[passes.len() - 1]).map_err(|e| unreadable(e.to_string()))?,
        );
        let (n0, n1) = (top_names(&first), top_names(&last));
        let only0: HashSet<&String> = n0.difference(&n1).collect();
        let only1: HashSet<&String> = n1.difference(&n0).collect();
        let score = |names: &HashSet<String>| {
            let hits = |set: &HashSet<&String>| names.iter().filter(|n| set.contains(n)).count();
            (hits(&only0), hits(&only1))
        };
        let covered: usize = dumps
            .iter()
            .map(|(_, names)| {
                names
                    .iter()
                    .filter(|n| n0.contains(*n) || n1.contains(*n))
                    .count()
            })
            .sum();
        if best.as_ref().is_some_and(|(c, _)| *c >= covered) {
            continue;
        }
        let scored: Vec<(usize, usize)> = dumps.iter().map(|(_, n)| score(n)).collect();
        let pick = |key: &dyn Fn(&(usize, usize)) -> i64| {
            (0..dumps.len()).max_by_key(|&i| (key(&scored[i]), std::cmp::Reverse(i)))
        };
        let (Some(orig), Some(opt)) = (
            pick(&|&(a, b)| a as i64 - b as i64),
            pick(&|&(a, b)| b as i64 - a as i64),
        ) else {
            continue;
        };
        if orig == opt || scored[orig].0 == scored[orig].1 {
            return Err(StageError::Ambiguous);
        }
        // The reference holds the original's names in float64: another dump named alike.
        let reference = (0..dumps.len())
            .filter(|&i| i != orig && i != opt && scored[i] == scored[orig])
            .find(|&i| is_float64(&dumps[i].0));
        best = Some((
            covered,
            StageSpec {
                passes,
                original: dumps[orig].0.clone(),
                optimized: dumps[opt].0.clone(),
                reference: reference.map(|i| dumps[i].0.clone()),
                rank: None,
                step: None,
            },
        ));
    }
    best.map(|(_, s)| s).ok_or(StageError::Ambiguous)
}

/// Every phase with pass files: the paths in order.
fn phases_of(index: &crate::model::index::DebugIndex) -> Vec<Vec<PathBuf>> {
    index
        .runs
        .iter()
        .flat_map(|r| &r.models)
        .flat_map(|m| &m.phases)
        .filter(|p| p.passes.len() >= 2)
        .map(|p| p.passes.iter().map(|f| f.path.clone()).collect())
        .collect()
}

/// The spec of dumps given by role: the phase under `passes` (a phase, model or run folder)
/// whose first pass names the original dump's nodes and whose last the optimized's best.
pub fn explicit(
    passes: &Path,
    optimized: &Path,
    original: &Path,
    reference: Option<&Path>,
) -> Result<StageSpec, StageError> {
    let unreadable = |path: &Path, why: String| StageError::Unreadable {
        path: path.to_path_buf(),
        why,
    };
    let index = discover::discover(passes).map_err(|e| unreadable(passes, e.to_string()))?;
    let names = |p: &Path| {
        data_dump::scan(p)
            .map(|c| node_names(&c))
            .map_err(|e| unreadable(p, e.to_string()))
    };
    let (n_orig, n_opt) = (names(original)?, names(optimized)?);
    let mut best: Option<(usize, Vec<PathBuf>)> = None;
    for phase in phases_of(&index) {
        let first = load::graph(&phase[0]).map_err(|e| unreadable(&phase[0], e.to_string()))?;
        let last = phase[phase.len() - 1].clone();
        let last = load::graph(&last).map_err(|e| unreadable(&last, e.to_string()))?;
        let (a, b) = (top_names(&first), top_names(&last));
        let score = n_orig.intersection(&a).count() + n_opt.intersection(&b).count();
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, phase));
        }
    }
    let Some((_, passes_found)) = best.filter(|(s, _)| *s > 0) else {
        return Err(StageError::NotStages {
            path: passes.to_path_buf(),
            found: "no phase here whose pass files name the dumps' nodes".into(),
        });
    };
    Ok(StageSpec {
        passes: passes_found,
        original: original.to_path_buf(),
        optimized: optimized.to_path_buf(),
        reference: reference.map(Path::to_path_buf),
        rank: None,
        step: None,
    })
}

fn node_names(cat: &DumpCatalog) -> HashSet<String> {
    cat.ranks
        .iter()
        .flat_map(|r| &r.graphs)
        .flat_map(|g| &g.steps)
        .flat_map(|s| s.nodes.keys().cloned())
        .collect()
}

fn top_names(f: &FxFile) -> HashSet<String> {
    f.graphs
        .first()
        .map(|g| g.nodes.iter().map(|n| n.name.to_string()).collect())
        .unwrap_or_default()
}

/// Its first floating tensor is float64.
fn is_float64(dump: &Path) -> bool {
    let Ok(cat) = data_dump::scan(dump) else {
        return false;
    };
    cat.files()
        .filter_map(|f| tensor_file::open(&f.path).ok())
        .find(|a| a.elem.is_float())
        .is_some_and(|a| a.elem == crate::model::npy::Elem::F64)
}

/// The pass's label as its file names it: `004 apply_pattern_passes`.
fn pass_label(path: &Path, i: usize) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    if let Some((n, pass)) = names::pass_file(&name) {
        return format!("{n:03} {pass}");
    }
    match names::graph_dump_file(&name) {
        Some(g) => format!("{:03} {}", g.stage, g.stage_name()),
        None => format!("{i:03} {name}"),
    }
}

/// The step of one side: `rank`, `step` as asked, else the first.
fn side<'a>(
    cat: &'a DumpCatalog,
    label: &'static str,
    rank: Option<u32>,
    step: Option<u32>,
) -> Result<&'a StepDump, StageError> {
    let have = |v: Vec<u32>| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let r = match rank {
        Some(r) => cat
            .ranks
            .iter()
            .find(|x| x.rank == r)
            .ok_or_else(|| StageError::NoSuch {
                side: label,
                what: "rank",
                asked: r,
                have: have(cat.ranks.iter().map(|x| x.rank).collect()),
            })?,
        None => cat.ranks.first().ok_or(StageError::NoSuch {
            side: label,
            what: "rank",
            asked: 0,
            have: "none".into(),
        })?,
    };
    let steps: Vec<&StepDump> = r.graphs.iter().flat_map(|g| &g.steps).collect();
    match step {
        Some(s) => steps
            .into_iter()
            .find(|x| x.step == s)
            .ok_or_else(|| StageError::NoSuch {
                side: label,
                what: "step",
                asked: s,
                have: have(
                    r.graphs
                        .iter()
                        .flat_map(|g| &g.steps)
                        .map(|x| x.step)
                        .collect(),
                ),
            }),
        None => steps
            .into_iter()
            .min_by_key(|x| x.step)
            .ok_or(StageError::NoSuch {
                side: label,
                what: "step",
                asked: 0,
                have: "none".into(),
            }),
    }
}

/// The output tensor file of each node of a step.
fn outputs(step: &StepDump) -> BTreeMap<&str, &Path> {
    step.nodes
        .iter()
        .filter_map(|(name, n)| Some((name.as_str(), n.outputs().next()?.path.as_path())))
        .collect()
}

/// The compare of `spec`, every pair in parallel; `progress` counts pairs and calls it off.
pub fn compare(spec: &StageSpec, progress: &Progress) -> Result<StageCompare, StageError> {
    let scan = |p: &Path| {
        data_dump::scan(p).map_err(|e| StageError::Unreadable {
            path: p.to_path_buf(),
            why: e.to_string(),
        })
    };
    progress.stage("reading pass files", spec.passes.len() as u64, Unit::Items);
    let files: Vec<FxFile> = spec
        .passes
        .par_iter()
        .map(|p| {
            let f = load::graph(p).map_err(|e| StageError::Unreadable {
                path: p.clone(),
                why: e.to_string(),
            });
            progress.add(1);
            f
        })
        .collect::<Result<_, _>>()?;
    if progress.cancelled() {
        return Err(StageError::Cancelled);
    }
    let refs: Vec<&FxFile> = files.iter().collect();
    let diffs = consecutive_diffs(&refs);
    let pairs = stages::pair_stages(&refs, &diffs);

    let (orig_cat, opt_cat) = (scan(&spec.original)?, scan(&spec.optimized)?);
    let ref_cat = spec.reference.as_deref().map(scan).transpose()?;
    let orig = side(&orig_cat, "the original dump", spec.rank, spec.step)?;
    let opt = side(&opt_cat, "the optimized dump", spec.rank, spec.step)?;
    let refer = match &ref_cat {
        Some(c) => Some(side(c, "the reference dump", spec.rank, spec.step)?),
        None => None,
    };
    let (orig_files, opt_files) = (outputs(orig), outputs(opt));
    let ref_files = refer.map(outputs);

    progress.stage("comparing pairs", pairs.len() as u64, Unit::Items);
    let checks: Vec<Check> = pairs
        .par_iter()
        .map(|p| {
            let c = if progress.cancelled() {
                unjudged("called off".into())
            } else {
                check(
                    orig_files.get(p.original.as_str()).copied(),
                    opt_files.get(p.node.as_str()).copied(),
                    ref_files
                        .as_ref()
                        .and_then(|m| m.get(p.original.as_str()).copied()),
                )
            };
            progress.add(1);
            c
        })
        .collect();
    if progress.cancelled() {
        return Err(StageError::Cancelled);
    }

    let pass_names: Vec<String> = spec
        .passes
        .iter()
        .enumerate()
        .map(|(i, p)| pass_label(p, i))
        .collect();
    let agree: Vec<Agreement> = checks.iter().map(Check::agrees).collect();
    let name = |i: usize| pass_names.get(i).cloned().unwrap_or_else(|| i.to_string());
    let findings: Vec<Finding> = stages::findings(&pairs, &agree)
        .into_iter()
        .map(|p| Finding {
            pair: p,
            pass: pairs[p].origin.passes().last().copied(),
            sentence: stages::sentence(&pairs[p], &name, &checks[p].numbers()),
        })
        .collect();
    let answer = findings
        .first()
        .map_or_else(|| NO_FINDING.to_string(), |f| f.sentence.clone());
    let tolerance = if spec.reference.is_some() {
        "torch's minifier rule against the float64 reference: rmse(fp64, optimized) ≤ m · \
         rmse(fp64, original) + 1e-5 (m = 3 for half precision or under 1,000 elements, else 2), \
         after allclose(rtol = atol = 1e-4)"
            .to_string()
    } else {
        "allclose(rtol = atol = 1e-4) only: no float64 reference dump was given (run the \
         original graph in float64 and dump it to use the minifier's rule)"
            .to_string()
    };
    let last = files.last().and_then(|f| f.graphs.first());
    let unpaired = last.map_or(0, |g| {
        let paired: HashSet<usize> = pairs.iter().map(|p| p.index).collect();
        g.nodes
            .iter()
            .enumerate()
            .filter(|(i, n)| {
                !paired.contains(i)
                    && !matches!(n.op, OpKind::Output)
                    && opt_files.contains_key(n.name.as_str())
            })
            .count()
    });
    Ok(StageCompare {
        pass_files: spec.passes.clone(),
        pass_names,
        pairs,
        checks,
        findings,
        answer,
        tolerance,
        original: spec.original.clone(),
        optimized: spec.optimized.clone(),
        reference: spec.reference.clone(),
        rank: opt_cat.ranks.first().map_or(0, |r| r.rank),
        step: opt.step,
        unpaired,
    })
}

fn unjudged(why: String) -> Check {
    Check {
        judged: None,
        cosine: None,
        max_abs_err: None,
        why: Some(why),
        original: None,
        optimized: None,
    }
}

fn check(orig: Option<&Path>, opt: Option<&Path>, reference: Option<&Path>) -> Check {
    let (Some(orig), Some(opt)) = (orig, opt) else {
        let which = match (orig, opt) {
            (None, None) => "neither dump has it",
            (None, _) => "the original dump has no tensor for it",
            _ => "the optimized dump has no tensor for it",
        };
        return unjudged(which.into());
    };
    let open = |p: &Path| {
        tensor_file::open(p).map_err(|e| {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            format!("{name}: {e}")
        })
    };
    let (a, b) = match (open(orig), open(opt)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return unjudged(e),
    };
    let r = match reference.map(open).transpose() {
        Ok(r) => r,
        Err(e) => return unjudged(e),
    };
    let (m, sum_b, sum_a) = metrics::compare(&b, &a);
    let side = |x: &crate::model::npy::NpyArray, summary| Side {
        dtype: x.info.dtype.clone(),
        shape: x.info.shape.clone(),
        summary,
    };
    let (original, optimized) = (Some(side(&a, sum_a)), Some(side(&b, sum_b)));
    match tolerance::judge(&a, &b, r.as_ref()) {
        Ok(j) => Check {
            judged: Some(j),
            cosine: m.cosine.value(),
            max_abs_err: m.max_abs_err.value(),
            why: None,
            original,
            optimized,
        },
        Err(e) => Check {
            original,
            optimized,
            ..unjudged(e.to_string())
        },
    }
}
