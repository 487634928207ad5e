//! Original against optimized, start to finish (docs/formats.md §4.5): find the two stage dumps
//! of npugraph_ex (and a float64 reference) and the phase whose passes joined them, pair every
//! optimized node with the original node it stands for through the pass history, judge each
//! pair with torch's accuracy check against a float64 reference and name the pass where the numbers part
//! (`analysis::accuracy::stages`).

use crate::analysis::accuracy::metrics;
use crate::analysis::accuracy::stages::{self, Agreement, NO_FINDING};
pub use crate::analysis::accuracy::stages::{Origin, StagePair};
use crate::analysis::accuracy::stats::Summary;
use crate::analysis::accuracy::tolerance::{self, Judged};
use crate::analysis::diff::consecutive_diffs;
use crate::model::fx::{FxFile, OpKind};
use crate::model::index::PassFile;
use crate::model::progress::{Progress, Unit};
use crate::model::tensor::{DumpCatalog, StepDump, fmt_value};
use crate::sources::{data_dump, discover, load, tensor_file};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

/// What to compare: the phase's pass files in order and the dump folders.
#[derive(Debug, Clone, Default)]
pub struct StageSpec {
    pub passes: Vec<PathBuf>,
    /// Each pass as its file names it: `004 apply_pattern_passes`.
    pub pass_names: Vec<String>,
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
    #[error("no {what} in common: {sides}")]
    NothingInCommon { what: &'static str, sides: String },
    #[error(
        "no pair could be judged: {why} (are the dumps of this phase? is --step or --rank \
         one both stages ran?)"
    )]
    NothingJudged { why: String },
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
    /// The pass whose diff shows it, when one touched the node: the pass that built it, else
    /// the last that changed it.
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
    let index = discover::discover(root).map_err(|e| StageError::Unreadable {
        path: root.to_path_buf(),
        why: e.to_string(),
    })?;
    find_in(root, &index)
}

/// [`find`] in the index of `root`, already discovered.
pub fn find_in(
    root: &Path,
    index: &crate::model::index::DebugIndex,
) -> Result<StageSpec, StageError> {
    let unreadable = |why: String| StageError::Unreadable {
        path: root.to_path_buf(),
        why,
    };
    let mut roots: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
    for d in &index.data_dumps {
        let folder = d.folder().to_path_buf();
        roots.entry(folder).or_default().push(d.path.clone());
    }
    let phases = phases_of(index);
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
    // (folder, node names, holds float64 tensors)
    let dumps: Vec<(PathBuf, HashSet<String>, bool)> = roots
        .into_iter()
        .map(|(root, ranks)| {
            let cat = data_dump::scan_ranks(&ranks);
            let f64 = is_float64(&cat);
            (root, node_names(&cat), f64)
        })
        .collect();
    let mut best: Option<(usize, StageSpec)> = None;
    let mut ambiguous = false;
    for phase in phases {
        let (passes, pass_names) = paths_and_names(phase);
        let (n0, n1) = end_names(phase).map_err(|e| unreadable(e.to_string()))?;
        let only0: HashSet<&String> = n0.difference(&n1).collect();
        let only1: HashSet<&String> = n1.difference(&n0).collect();
        let score = |names: &HashSet<String>| {
            let hits = |set: &HashSet<&String>| names.iter().filter(|n| set.contains(n)).count();
            (hits(&only0), hits(&only1))
        };
        let covered: usize = dumps
            .iter()
            .map(|(_, names, _)| {
                let known = |n: &&String| n0.contains(*n) || n1.contains(*n);
                names.iter().filter(known).count()
            })
            .sum();
        if covered == 0 || best.as_ref().is_some_and(|(c, _)| *c >= covered) {
            continue;
        }
        let scored: Vec<(usize, usize)> = dumps.iter().map(|(_, n, _)| score(n)).collect();
        // The float64 one is the reference, never a stage.
        let pick = |key: &dyn Fn(&(usize, usize)) -> i64| {
            (0..dumps.len())
                .filter(|&i| !dumps[i].2)
                .max_by_key(|&i| (key(&scored[i]), std::cmp::Reverse(i)))
        };
        let (Some(orig), Some(opt)) = (
            pick(&|&(a, b)| a as i64 - b as i64),
            pick(&|&(a, b)| b as i64 - a as i64),
        ) else {
            continue;
        };
        // Told apart when the original names more of what the passes removed, or fewer of what
        // they made, than the optimized does.
        let key = |i: usize| scored[i].0 as i64 - scored[i].1 as i64;
        if orig == opt || key(orig) <= key(opt) {
            ambiguous = true;
            continue;
        }
        let reference = (0..dumps.len())
            .filter(|&i| dumps[i].2 && scored[i].0 > scored[i].1)
            .max_by_key(|&i| scored[i].0);
        best = Some((
            covered,
            StageSpec {
                passes,
                pass_names,
                original: dumps[orig].0.clone(),
                optimized: dumps[opt].0.clone(),
                reference: reference.map(|i| dumps[i].0.clone()),
                rank: None,
                step: None,
            },
        ));
    }
    match best {
        Some((_, s)) => Ok(s),
        None if ambiguous => Err(StageError::Ambiguous),
        None => Err(StageError::NotStages {
            path: root.to_path_buf(),
            found: "no phase whose pass files name the dumps' nodes".into(),
        }),
    }
}

/// Two dumps given as a target and its golden that are in fact the two stages of one run
/// (npugraph_ex's `data_dump_stage` original and optimized, beside the run's pass files): the
/// spec that compares them as stages, through the pass history, with the optimized one first.
/// `None` when they are not: the folder above both holds no single run, or no phase of it has
/// one dump's names in its first pass and the other's in its last and not both ways (two runs'
/// dumps of the same stage look alike; only the pass files tell the stages apart).
pub fn of_two(target: &Path, golden: &Path) -> Option<StageSpec> {
    let root = run_beside(target)?;
    if run_beside(golden)? != root {
        return None;
    }
    let index = discover::discover(&root).ok()?;
    if index.runs.len() != 1 {
        return None;
    }
    let names = |p: &Path| data_dump::scan(p).ok().map(|c| node_names(&c));
    let (t, g) = (names(target)?, names(golden)?);
    // Nearly every dumped name is a node of that pass (a dump may leave a node out; a name
    // outside the pass is another graph's).
    let within = |x: &HashSet<String>, pass: &HashSet<String>| {
        !x.is_empty() && x.iter().filter(|n| pass.contains(*n)).count() * 50 >= x.len() * 49
    };
    for phase in phases_of(&index) {
        let Ok((first, last)) = end_names(phase) else {
            continue;
        };
        let stages = |orig: &HashSet<String>, opt: &HashSet<String>| {
            within(orig, &first) && within(opt, &last)
        };
        let (optimized, original) = match (stages(&g, &t), stages(&t, &g)) {
            (true, false) => (target, golden),
            (false, true) => (golden, target),
            _ => continue,
        };
        // And the run's own finding agrees: these two, this way round (two runs' dumps of one
        // stage can fit a phase's ends both; only the whole run's dumps tell them apart).
        let found = find_in(&root, &index).ok()?;
        if !(same_path(&found.original, original) && same_path(&found.optimized, optimized)) {
            return None;
        }
        let (passes, pass_names) = paths_and_names(phase);
        return Some(StageSpec {
            passes,
            pass_names,
            original: original.to_path_buf(),
            optimized: optimized.to_path_buf(),
            reference: found.reference,
            rank: None,
            step: None,
        });
    }
    None
}

/// The folder a tensor dump sits in beside its run's debug folder (`<run>/dump_original` next
/// to `<run>/torch_compile_debug`; `dump` may be the dump's rank folder): where npugraph_ex
/// writes a stage dump. `None` for a dump anywhere else: a folder above it (a home, `/tmp`, a
/// server's `/`) is not a run, and walking it would cost more than it could tell.
pub(crate) fn run_beside(dump: &Path) -> Option<PathBuf> {
    let dump = std::path::absolute(dump).ok()?;
    let is_rank = dump
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("worldsize"));
    let root = if is_rank { dump.parent()? } else { &dump }.parent()?;
    // At least two named folders deep, a server's mount name not counted.
    let named = root
        .components()
        .filter(|c| matches!(c, std::path::Component::Normal(n) if !n.to_string_lossy().starts_with("ssh:")))
        .count();
    (named >= 2 && crate::sources::vfs::is_dir(&root.join("torch_compile_debug")))
        .then(|| root.to_path_buf())
}

fn same_path(a: &Path, b: &Path) -> bool {
    std::path::absolute(a).ok() == std::path::absolute(b).ok()
}

/// Every phase with two pass files or more, in order.
fn phases_of(index: &crate::model::index::DebugIndex) -> Vec<&[PassFile]> {
    index
        .phases()
        .filter(|p| p.passes.len() >= 2)
        .map(|p| p.passes.as_slice())
        .collect()
}

/// The node names of a phase's first and last pass (top-level graph): what tells its original
/// dump from its optimized one.
fn end_names(phase: &[PassFile]) -> crate::error::Result<(HashSet<String>, HashSet<String>)> {
    let names = |p: &PassFile| load::graph(&p.path).map(|f| top_names(&f));
    let (first, last) = (phase.first(), phase.last());
    match (first, last) {
        (Some(a), Some(b)) => Ok((names(a)?, names(b)?)),
        _ => Ok(Default::default()),
    }
}

/// The paths of `passes` and their labels (`004 apply_pattern_passes`).
fn paths_and_names(passes: &[PassFile]) -> (Vec<PathBuf>, Vec<String>) {
    passes
        .iter()
        .map(|p| (p.path.clone(), format!("{:03} {}", p.index, p.name)))
        .unzip()
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
    let mut best: Option<(usize, &[PassFile])> = None;
    for phase in phases_of(&index) {
        let (a, b) = end_names(phase).map_err(|e| unreadable(passes, e.to_string()))?;
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
    let (passes, pass_names) = paths_and_names(passes_found);
    Ok(StageSpec {
        passes,
        pass_names,
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
pub(crate) fn is_float64(cat: &DumpCatalog) -> bool {
    cat.files()
        .filter_map(|f| tensor_file::open(&f.path).ok())
        .find(|a| a.elem.is_float())
        .is_some_and(|a| a.elem == crate::model::npy::Elem::F64)
}

/// The `what` (rank or step) every side has: the asked one, else the smallest in common.
fn common(
    what: &'static str,
    asked: Option<u32>,
    sides: &[(&'static str, BTreeSet<u32>)],
) -> Result<u32, StageError> {
    let have = |v: &BTreeSet<u32>| match v.is_empty() {
        true => "none".to_string(),
        false => v.iter().map(u32::to_string).collect::<Vec<_>>().join(", "),
    };
    if let Some(n) = asked {
        if let Some((side, set)) = sides.iter().find(|(_, set)| !set.contains(&n)) {
            return Err(StageError::NoSuch {
                side,
                what,
                asked: n,
                have: have(set),
            });
        }
        return Ok(n);
    }
    let mut all = sides.iter().map(|(_, s)| s.clone());
    let first = all.next().unwrap_or_default();
    let shared = all.fold(first, |acc, s| acc.intersection(&s).copied().collect());
    shared
        .first()
        .copied()
        .ok_or_else(|| StageError::NothingInCommon {
            what,
            sides: sides
                .iter()
                .map(|(side, set)| format!("{side} {}", have(set)))
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The output tensor file of each node of step `step` of rank `rank`.
fn files_at(cat: &DumpCatalog, rank: u32, step: u32) -> BTreeMap<&str, &Path> {
    let r = cat.ranks.iter().find(|r| r.rank == rank);
    let s = r.and_then(|r| {
        r.graphs
            .iter()
            .flat_map(|g| &g.steps)
            .find(|s| s.step == step)
    });
    s.map(outputs).unwrap_or_default()
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
    let mut cats = vec![
        ("the original dump", &orig_cat),
        ("the optimized dump", &opt_cat),
    ];
    if let Some(c) = &ref_cat {
        cats.push(("the reference dump", c));
    }
    let ranks: Vec<(&'static str, BTreeSet<u32>)> = cats
        .iter()
        .map(|(side, c)| (*side, c.ranks.iter().map(|r| r.rank).collect()))
        .collect();
    let rank = common("rank", spec.rank, &ranks)?;
    let steps: Vec<(&'static str, BTreeSet<u32>)> = cats
        .iter()
        .map(|(side, c)| {
            let r = c.ranks.iter().filter(|r| r.rank == rank);
            let s = r.flat_map(|r| &r.graphs).flat_map(|g| &g.steps);
            (*side, s.map(|s| s.step).collect())
        })
        .collect();
    let step = common("step", spec.step, &steps)?;
    let (orig_files, opt_files) = (
        files_at(&orig_cat, rank, step),
        files_at(&opt_cat, rank, step),
    );
    let ref_files = ref_cat.as_ref().map(|c| files_at(c, rank, step));

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

    // "No pass changed the numbers" must mean numbers were compared.
    if pairs.is_empty() {
        return Err(StageError::NothingJudged {
            why: "no node of the last pass stands for a node of the first".into(),
        });
    }
    if checks.iter().all(|k| k.judged.is_none()) {
        let why = checks
            .iter()
            .find_map(|k| k.why.clone())
            .unwrap_or_default();
        return Err(StageError::NothingJudged {
            why: format!("none of {} pairs, e.g. {why}", pairs.len()),
        });
    }
    // A spec made by hand may name no pass: its files' names then.
    let pass_names: Vec<String> = match spec.pass_names.len() == spec.passes.len() {
        true => spec.pass_names.clone(),
        false => spec
            .passes
            .iter()
            .enumerate()
            .map(|(i, p)| {
                format!(
                    "{i:03} {}",
                    crate::model::fx::file_name(&p.to_string_lossy())
                )
            })
            .collect(),
    };
    let agree: Vec<Agreement> = checks.iter().map(Check::agrees).collect();
    let name = |i: usize| pass_names.get(i).cloned().unwrap_or_else(|| i.to_string());
    let findings: Vec<Finding> = stages::findings(&pairs, &agree)
        .into_iter()
        .map(|p| Finding {
            pair: p,
            // The pass the sentence names first: the one that built it, or the last to change it.
            pass: match &pairs[p].origin {
                Origin::Replaced { pass, .. } => Some(*pass),
                o => o.passes().last().copied(),
            },
            sentence: stages::sentence(
                &pairs[p],
                &name,
                &checks[p].numbers(),
                stages::unjudged_inputs(&pairs, &agree, p),
            ),
        })
        .collect();
    let answer = findings
        .first()
        .map_or_else(|| NO_FINDING.to_string(), |f| f.sentence.clone());
    let tolerance = if spec.reference.is_some() {
        "torch's accuracy check against the float64 reference (torch._dynamo.utils.same, as \
         its minifier calls it, tol 1e-4): allclose(rtol = atol = 1e-4), else rmse(fp64, \
         optimized) ≤ m · rmse(fp64, original) + 1e-5 (m = 3 for half precision or under 1,000 \
         elements, else 2)"
            .to_string()
    } else {
        "allclose(rtol = atol = 1e-4) only: no float64 reference dump was given (run the \
         original graph in float64 and dump it for torch's accuracy check)"
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
        rank,
        step,
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
