//! `fxray bisect RUN`: the one pass that changed the numbers, and the node where it did, found
//! by replaying every pass's graph on the run's own inputs (docs/formats.md §4.6).
//!
//! The stage compare (`stages`) judges two dumps made on the device and names every pass that
//! touched a departing node; when several did, it cannot say which broke it. Every pass file is
//! Python, so fxray runs each one itself, in a child Python with torch (`assets/replay.py`,
//! started like the runner's compiles and stopped with its process group): pass 000 in float64
//! is the reference, each later pass's nodes are paired with the pass before's through the pass
//! history (`analysis::accuracy::replay`) and judged with torch's own `same` rule, and the
//! guilty pass is the first with a node that departs while its inputs agree.

use crate::analysis::accuracy::replay;
use crate::analysis::diff::consecutive_diffs;
use crate::model::fx::FxFile;
use crate::model::index::PassFile;
use crate::model::progress::{Progress, Unit};
use crate::runner::process::{RunEvent, RunHandle, Stream};
use crate::runner::spec::Launch;
use crate::sources::{discover, load};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What to replay.
#[derive(Debug, Clone, Default)]
pub struct BisectSpec {
    /// The phase's pass files, in order.
    pub passes: Vec<PathBuf>,
    /// `004 apply_pattern_passes`, one per pass file.
    pub pass_names: Vec<String>,
    /// The graph's inputs: a tensor dump of either stage, an npy dump, or a `torch.save`d
    /// tuple, list or dict.
    pub inputs: PathBuf,
    /// More tensors by node name (the other stage's dump): constants a pass folded, random
    /// ops' values.
    pub values: Option<PathBuf>,
    /// The interpreter with torch; `None`: the one the Run tab would pick.
    pub python: Option<PathBuf>,
    /// Python files defining `REFERENCES = {"ns::op": fn}`: implementations of ops this torch
    /// lacks (a user's own kernels). They are run, so only files the user names.
    pub references: Vec<PathBuf>,
    pub step: Option<u32>,
    pub rank: Option<u32>,
}

#[derive(Debug, thiserror::Error)]
pub enum BisectError {
    #[error("{}: {why}", path.display())]
    Unreadable { path: PathBuf, why: String },
    #[error(
        "{}: {found}; a bisect replays a phase's pass files on the graph's inputs: give them \
         with --inputs DUMP (npugraph_ex's tensor dump of either stage, an npy dump, or a \
         torch.save'd tuple, list or dict of the inputs)",
        path.display()
    )]
    NoInputs { path: PathBuf, found: String },
    #[error("{}: no phase {asked} here (it has: {have})", path.display())]
    NoPhase {
        path: PathBuf,
        asked: String,
        have: String,
    },
    #[error("no Python with torch to replay the passes: {0} (give one with --python)")]
    NoPython(String),
    #[error("the replay could not run: {0}")]
    Replay(String),
    #[error("the bisect was called off")]
    Cancelled,
    /// The bisect on the server failed: its words, or the link's.
    #[error("{0}")]
    There(String),
}

impl From<BisectError> for crate::error::Error {
    fn from(e: BisectError) -> Self {
        crate::error::Error::user(e.to_string())
    }
}

/// The spec for the run at `run`: its phase (by `phase`, a phase name or folder; else the one
/// whose passes the stage dumps name, else the first with two passes or more) and its inputs
/// (`inputs`, else the run's own stage dump).
pub fn find(
    run: &Path,
    inputs: Option<&Path>,
    phase: Option<&str>,
) -> Result<BisectSpec, BisectError> {
    let unreadable = |why: String| BisectError::Unreadable {
        path: run.to_path_buf(),
        why,
    };
    let index = discover::discover(run).map_err(|e| unreadable(e.to_string()))?;
    let stages = crate::pipeline::stages::find_in(run, &index).ok();
    let phases: Vec<(&str, &Path, &[PassFile])> = index
        .phases()
        .filter(|p| p.passes.len() >= 2)
        .map(|p| (p.name.as_str(), p.path.as_path(), p.passes.as_slice()))
        .collect();
    let chosen = match phase {
        Some(want) => phases
            .iter()
            .find(|(name, dir, _)| *name == want || dir.ends_with(want) || Path::new(want) == *dir),
        None => stages
            .as_ref()
            .and_then(|s| {
                phases
                    .iter()
                    .find(|(_, _, p)| p.first().map(|f| &f.path) == s.passes.first())
            })
            .or_else(|| phases.first()),
    };
    let Some((_, _, passes)) = chosen else {
        return Err(BisectError::NoPhase {
            path: run.to_path_buf(),
            asked: phase.unwrap_or("with two pass files or more").to_string(),
            have: phases
                .iter()
                .map(|(n, ..)| *n)
                .collect::<Vec<_>>()
                .join(", "),
        });
    };
    // Both stages dump the graph's inputs under the same placeholder names, so either feeds
    // the replay; the float64 reference does not (its inputs are cast).
    let dumps: Vec<PathBuf> = match &stages {
        Some(s) => vec![s.original.clone(), s.optimized.clone()],
        None => {
            let mut v: Vec<PathBuf> = index
                .data_dumps
                .iter()
                .map(|d| d.folder().to_path_buf())
                .collect();
            v.dedup();
            v.retain(|d| {
                crate::sources::data_dump::scan(d)
                    .is_ok_and(|c| !c.is_empty() && !crate::pipeline::stages::is_float64(&c))
            });
            v
        }
    };
    let (inputs, values) = match (inputs, dumps.as_slice()) {
        (Some(i), d) => (i.to_path_buf(), d.last().cloned()),
        (None, [only]) => (only.clone(), None),
        (None, [first, .., last]) => (first.clone(), Some(last.clone())),
        (None, []) => {
            return Err(BisectError::NoInputs {
                path: run.to_path_buf(),
                found: "no tensor dump of this run holds the graph's inputs".into(),
            });
        }
    };
    Ok(BisectSpec {
        passes: passes.iter().map(|p| p.path.clone()).collect(),
        pass_names: passes
            .iter()
            .map(|p| format!("{:03} {}", p.index, p.name))
            .collect(),
        inputs,
        values,
        ..Default::default()
    })
}

/// The run folder a pass file is in (`run_…` above `npugraph_ex/model__N/<phase>/`), or its
/// phase's folder when none is named so: what `fxray bisect` takes.
pub fn run_of(pass: &Path) -> PathBuf {
    pass.ancestors()
        .find(|a| {
            a.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("run_"))
        })
        .or_else(|| pass.parent())
        .unwrap_or(pass)
        .to_path_buf()
}

/// The replay's plan (the JSON `assets/replay.py` reads): each pass with the pass before's
/// pairs, what its diff changed, and the earlier pass whose text it repeats.
pub fn plan(spec: &BisectSpec) -> Result<Value, BisectError> {
    let texts: Vec<Result<String, BisectError>> = spec
        .passes
        .par_iter()
        .map(|p| {
            crate::sources::read::read_text(p)
                .map(|t| t.text)
                .map_err(|e| BisectError::Unreadable {
                    path: p.clone(),
                    why: e.to_string(),
                })
        })
        .collect();
    let texts: Vec<String> = texts.into_iter().collect::<Result<_, _>>()?;
    // Most passes change nothing (the 415-layer forward has 4 distinct texts of 11): each text
    // is parsed once, and a repeated one is the same graph.
    let same_as: Vec<Option<usize>> = (0..texts.len())
        .map(|k| (0..k).find(|&j| texts[j] == texts[k]))
        .collect();
    let distinct: Vec<usize> = (0..texts.len()).filter(|&k| same_as[k].is_none()).collect();
    let parsed: Vec<FxFile> = distinct
        .par_iter()
        .map(|&k| crate::sources::fx_text::parse_fx(&texts[k]))
        .collect();
    let refs: Vec<&FxFile> = (0..texts.len())
        .map(|k| {
            let first = same_as[k].unwrap_or(k);
            &parsed[distinct.binary_search(&first).unwrap_or_default()]
        })
        .collect();
    let diffs = consecutive_diffs(&refs);
    let steps = replay::steps(&refs, &diffs);
    let passes: Vec<Value> = spec
        .passes
        .iter()
        .enumerate()
        .map(|(k, path)| {
            let step = k.checked_sub(1).and_then(|s| steps.get(s));
            let name = spec.pass_names.get(k).cloned().unwrap_or_default();
            json!({
                "index": k,
                "file": path,
                "name": name.split_once(' ').map_or(name.as_str(), |(_, n)| n),
                "graph": null,
                "same_as": same_as[k],
                "pairs": step.map(|s| &s.pairs),
                "changed": step.map(|s| &s.changed),
            })
        })
        .collect();
    Ok(json!({
        "passes": passes,
        "inputs": {"path": spec.inputs, "kind": "auto", "step": spec.step, "rank": spec.rank},
        "device": "cpu",
        "values": spec.values,
        "references": spec.references,
        "report": "answer",
    }))
}

/// A node that departs from its partner in the pass before.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Depart {
    pub node: String,
    pub target: String,
    pub paired_with: Option<String>,
    pub inputs_agree: bool,
    pub max_abs: Option<f64>,
    pub max_rel: Option<f64>,
    pub cosine: Option<f64>,
}

/// A node the replay could not check, and why (an op this torch lacks, a value it has not).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Unchecked {
    pub node: String,
    pub target: String,
    pub why: String,
    /// The pass that brought the node in.
    pub since_name: Option<String>,
}

/// One pass replayed (or not: its text repeats an earlier pass's).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PassResult {
    pub index: usize,
    pub name: String,
    pub replayed: bool,
    pub nodes: usize,
    pub seconds: f64,
    pub departs: Vec<Depart>,
    pub departs_total: usize,
    pub unchecked: Vec<Unchecked>,
    pub unchecked_total: usize,
    pub error: Option<String>,
}

/// The pass that broke the numbers, and where.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Guilty {
    pub index: usize,
    pub name: String,
    pub node: String,
    pub target: String,
    pub paired_with: Option<String>,
    pub numbers: String,
    /// The node's module, as fxray infers it in that pass's graph.
    pub module: Option<String>,
}

/// What a bisect found.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Bisect {
    pub pass_files: Vec<PathBuf>,
    pub pass_names: Vec<String>,
    pub inputs: PathBuf,
    /// `torch 2.6.0, Python 3.11` as the child reported them.
    pub replayed_with: String,
    /// Which file fed which placeholder.
    pub fed: Vec<(String, String)>,
    pub passes: Vec<PassResult>,
    pub guilty: Option<Guilty>,
    /// Nodes the replay could not compute: an op this torch lacks with no dumped value to
    /// stand in (a node whose op cannot run here but whose value the device dumped is judged
    /// on that value, and a problem line says so), and what follows it.
    pub unchecked: Vec<Unchecked>,
    /// What the user must know: inputs not this run's, values missing, ops not checked.
    pub problems: Vec<String>,
    /// The answer in one sentence.
    pub answer: String,
}

/// A line of progress while the bisect runs: what the window shows and the CLI prints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Note {
    /// A pass is done: `pass 004 apply_pattern_passes: 212 nodes replayed in 0.4 s, none departs`.
    Pass(String),
    /// Something the user must know.
    Problem(String),
}

/// Replays the passes of `spec`. `note` hears a line per pass as it ends; `progress` counts
/// passes and calls the bisect off (the child's process group is stopped).
pub fn bisect(
    spec: &BisectSpec,
    progress: &Progress,
    mut note: impl FnMut(Note),
) -> Result<Bisect, BisectError> {
    progress.stage("reading the passes", 0, Unit::Items);
    let plan = plan(spec)?;
    let python =
        crate::runner::python::resolve(spec.python.as_deref()).map_err(BisectError::NoPython)?;
    let script = crate::runner::replay_path().map_err(BisectError::Replay)?;
    let dir = crate::paths::cache_dir();
    std::fs::create_dir_all(&dir).map_err(|e| BisectError::Replay(e.to_string()))?;
    // The plan goes through a file in fxray's cache, never beside the run being viewed.
    let plan_file = tempfile_in(&dir, &plan)?;
    let launch = Launch {
        program: python,
        args: vec![
            script.display().to_string(),
            plan_file.path().display().to_string(),
        ],
        cwd: dir.clone(),
        env: vec![("PYTHONUNBUFFERED".into(), "1".into())],
        debug_root: dir.join("no-debug-root"),
        dies_with_caller: true,
    };
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = RunHandle::start(&launch, move |e| {
        let _ = tx.send(e);
    });
    progress.stage(
        "replaying the passes",
        spec.passes.len() as u64,
        Unit::Items,
    );
    let mut out = Bisect {
        pass_files: spec.passes.clone(),
        pass_names: spec.pass_names.clone(),
        inputs: spec.inputs.clone(),
        ..Default::default()
    };
    let mut stderr: Vec<String> = Vec::new();
    let mut answered = false;
    let exit = loop {
        if progress.cancelled() {
            handle.stop(Duration::from_millis(500));
            return Err(BisectError::Cancelled);
        }
        let event = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(e) => e,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break None,
        };
        match event {
            RunEvent::Line {
                stream: Stream::Stdout,
                text,
            } => {
                let Ok(v) = serde_json::from_str::<Value>(&text) else {
                    stderr.push(text);
                    if stderr.len() > 40 {
                        stderr.remove(0);
                    }
                    continue;
                };
                answered |= take(&mut out, &v, spec, progress, &mut note)?;
                if answered {
                    // Its answer is in: a child that lingers (an atexit hook, a grandchild on
                    // the pipes) is stopped with its group when the handle drops.
                    break None;
                }
            }
            RunEvent::Line { text, .. } => {
                stderr.push(text);
                if stderr.len() > 40 {
                    stderr.remove(0);
                }
            }
            RunEvent::Exited { exit, .. } => break Some(exit),
            RunEvent::Failed(why) => return Err(BisectError::Replay(why)),
            RunEvent::Started { .. } | RunEvent::RunFolder(_) => {}
        }
    };
    drop(plan_file);
    if !answered {
        let tail = stderr
            .iter()
            .rev()
            .take(12)
            .rev()
            .cloned()
            .collect::<Vec<_>>()
            .join("\n");
        let problems = out.problems.join("; ");
        return Err(BisectError::Replay(format!(
            "{} before it answered{}{}",
            exit.map_or("the replay ended".to_string(), |e| format!(
                "the replay ended with {e}"
            )),
            if problems.is_empty() {
                String::new()
            } else {
                format!(": {problems}")
            },
            if tail.is_empty() {
                String::new()
            } else {
                format!("\n{tail}")
            },
        )));
    }
    Ok(out)
}

/// A plan file in fxray's cache, removed when dropped.
struct PlanFile(PathBuf);

impl PlanFile {
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for PlanFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn tempfile_in(dir: &Path, plan: &Value) -> Result<PlanFile, BisectError> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let path = dir.join(format!(
        "bisect-plan-{}-{}.json",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&path, plan.to_string()).map_err(|e| {
        BisectError::Replay(format!("cannot write the plan to {}: {e}", path.display()))
    })?;
    Ok(PlanFile(path))
}

/// A `pass` event. The child writes a non-finite number as `"nan"` or `"inf"` (its lines are
/// strict JSON), so a departure's numbers are read by hand: the result crosses a link as
/// postcard too, which has no room for a number that may be text.
fn pass_result(v: &Value) -> Option<PassResult> {
    let mut bare = v.clone();
    let departs = bare.as_object_mut()?.remove("departs");
    let mut p: PassResult = serde_json::from_value(bare).ok()?;
    let num = |d: &Value, k: &str| match d.get(k)? {
        Value::Number(n) => n.as_f64(),
        Value::String(t) => t.parse().ok(),
        _ => None,
    };
    let text = |d: &Value, k: &str| d.get(k).and_then(Value::as_str).map(str::to_string);
    p.departs = departs
        .as_ref()
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|d| Depart {
            node: text(d, "node").unwrap_or_default(),
            target: text(d, "target").unwrap_or_default(),
            paired_with: text(d, "paired_with"),
            inputs_agree: d
                .get("inputs_agree")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            max_abs: num(d, "max_abs"),
            max_rel: num(d, "max_rel"),
            cosine: num(d, "cosine"),
        })
        .collect();
    Some(p)
}

/// Takes in one event of the child; true once it has answered. An answer that claims more
/// than the replay showed (nothing replayed, a guilty pass that does not read) is an error.
fn take(
    out: &mut Bisect,
    v: &Value,
    spec: &BisectSpec,
    progress: &Progress,
    note: &mut impl FnMut(Note),
) -> Result<bool, BisectError> {
    let text = |k: &str| {
        v.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match v.get("event").and_then(Value::as_str) {
        Some("start") => {
            out.replayed_with = format!("torch {}, Python {}", text("torch"), text("python"));
        }
        Some("inputs") => {
            if let Some(fed) = v.get("fed").and_then(Value::as_object) {
                out.fed = fed
                    .iter()
                    .map(|(k, f)| (k.clone(), f.as_str().unwrap_or_default().to_string()))
                    .collect();
            }
        }
        Some("pass") => {
            let Some(p) = pass_result(v) else {
                return Ok(false);
            };
            progress.add(1);
            note(Note::Pass(pass_line(&p, spec)));
            out.passes.push(p);
        }
        Some("problem") => {
            let m = text("message");
            note(Note::Problem(m.clone()));
            out.problems.push(m);
        }
        Some("answer") => {
            let bad = |what: &str| BisectError::Replay(format!("the replay's answer: {what}"));
            out.guilty = match v.get("guilty").filter(|g| !g.is_null()) {
                Some(g) => Some(
                    serde_json::from_value::<Guilty>(g.clone())
                        .map_err(|e| bad(&format!("its guilty pass does not read ({e})")))?,
                ),
                None => None,
            };
            out.unchecked = match v.get("unchecked").filter(|u| !u.is_null()) {
                Some(u) => serde_json::from_value(u.clone())
                    .map_err(|e| bad(&format!("its unchecked nodes do not read ({e})")))?,
                None => Vec::new(),
            };
            if out.guilty.is_none() && !out.passes.iter().any(|p| p.replayed) {
                let why = v
                    .get("sentence")
                    .and_then(Value::as_str)
                    .unwrap_or("no pass could be replayed");
                return Err(BisectError::Replay(why.to_string()));
            }
            if let Some(g) = &mut out.guilty {
                g.module = module_of(spec, g.index, &g.node);
            }
            out.answer = answer(out, spec);
            return Ok(true);
        }
        _ => {}
    }
    Ok(false)
}

fn label(spec: &BisectSpec, k: usize, name: &str) -> String {
    spec.pass_names
        .get(k)
        .cloned()
        .unwrap_or_else(|| format!("{k:03} {name}"))
}

/// `pass 004 apply_pattern_passes: 212 nodes replayed in 0.4 s, none departs`.
fn pass_line(p: &PassResult, spec: &BisectSpec) -> String {
    let head = format!("pass {}", label(spec, p.index, &p.name));
    if let Some(e) = &p.error {
        return format!("{head}: could not be replayed: {e}");
    }
    if !p.replayed {
        return format!("{head}: nothing to run again (it repeats the pass before)");
    }
    let departs = match p.departs_total.max(p.departs.len()) {
        0 => "none departs".to_string(),
        n => format!("{n} depart"),
    };
    let unchecked = match p.unchecked_total.max(p.unchecked.len()) {
        0 => String::new(),
        n => format!(", {n} not checked"),
    };
    format!(
        "{head}: {} nodes replayed in {:.1} s, {departs}{unchecked}",
        p.nodes, p.seconds
    )
}

/// The module of node `node` in pass `k`, as the window folds it.
fn module_of(spec: &BisectSpec, k: usize, node: &str) -> Option<String> {
    let path = spec.passes.get(k)?;
    let file = load::graph(path).ok()?;
    let g = file.graphs.first()?;
    let i = g.by_name.get(node)?;
    let m = crate::pipeline::modules::for_graph_file(path, &file);
    let p = m.path(i).to_string();
    (!p.is_empty()).then_some(p)
}

/// The answer: the guilty pass and node, or that every pass keeps the numbers; and what was
/// not checked, since an answer that hides it would claim more than the replay showed.
fn answer(out: &Bisect, spec: &BisectSpec) -> String {
    let replayed = out.passes.iter().filter(|p| p.replayed).count();
    let failed: Vec<String> = out
        .passes
        .iter()
        .filter(|p| p.error.is_some())
        .map(|p| format!("pass {}", label(spec, p.index, &p.name)))
        .collect();
    let mut s = match &out.guilty {
        Some(g) => {
            let mut what = g.target.clone();
            if let Some(m) = &g.module {
                what.push_str(", ");
                what.push_str(m);
            }
            let kept = match g.index {
                0 | 1 => format!("pass {} keeps the numbers", pass_number(spec, 0)),
                k => format!(
                    "passes {}–{} keep the numbers",
                    pass_number(spec, 0),
                    pass_number(spec, k - 1)
                ),
            };
            format!(
                "pass {} broke it: `{}` ({what}) departs ({}); {kept}",
                label(spec, g.index, &g.name),
                g.node,
                g.numbers
            )
        }
        // Said only of what was checked: an op this torch lacks hides what comes after it,
        // and a pass that could not be replayed is not a pass that kept the numbers.
        None if out.unchecked.is_empty() && failed.is_empty() => format!(
            "every pass keeps the numbers within floating-point noise ({replayed} replayed)"
        ),
        None => {
            format!("no pass changed the numbers of the nodes it could check ({replayed} replayed)")
        }
    };
    if !failed.is_empty() {
        s.push_str(&format!("; could not be replayed: {}", failed.join(", ")));
    }
    if !out.unchecked.is_empty() {
        let mut ops: Vec<String> = out.unchecked.iter().map(|u| u.target.clone()).collect();
        ops.sort();
        ops.dedup();
        s.push_str(&format!(
            "; not checked: {} node{} ({}: give their reference implementations with \
             --references)",
            out.unchecked.len(),
            if out.unchecked.len() == 1 { "" } else { "s" },
            ops.join(", ")
        ));
    }
    s
}

fn pass_number(spec: &BisectSpec, k: usize) -> String {
    spec.pass_names
        .get(k)
        .and_then(|n| n.split(' ').next())
        .map_or(format!("{k:03}"), str::to_string)
}

/// A bisect as the CLI and the window ask for it, run where the run's files are: here, or by
/// the agent on the server the run lies on, with that server's Python (and its torch_npu, so
/// NPU ops run for real there).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Ask {
    pub run: PathBuf,
    pub inputs: Option<PathBuf>,
    pub phase: Option<String>,
    pub step: Option<u32>,
    pub python: Option<PathBuf>,
    pub references: Vec<PathBuf>,
}

/// Runs `ask` where its run lies; `note` hears a line per pass as it ends.
pub fn ask(
    ask: &Ask,
    progress: &Progress,
    mut note: impl FnMut(Note),
) -> Result<Bisect, BisectError> {
    // A run on a server replays there: its inputs and the references it runs must be the
    // server's too, named as such (a bare path would be whatever lies there).
    if crate::sources::remote::is_remote(&ask.run) {
        let local = ask
            .inputs
            .iter()
            .chain(&ask.references)
            .find(|p| !crate::sources::remote::is_remote(p));
        if let Some(p) = local {
            return Err(BisectError::There(format!(
                "{} is on this machine and the run on a server: give it as ssh://host/path (the \
                 replay runs beside the run)",
                p.display()
            )));
        }
    }
    let mut answer = None;
    let there = crate::pipeline::remote::there::<BisectOp>(ask.clone(), progress.flag(), |item| {
        match item {
            Item::Note(n) => note(n),
            Item::Done(r) => answer = Some(*r),
        }
        Ok(())
    });
    match there {
        Some(Err(failed)) => Err(BisectError::There(failed.to_string())),
        Some(Ok(())) if progress.cancelled() => Err(BisectError::Cancelled),
        Some(Ok(())) => answer
            .unwrap_or_else(|| Err("the agent sent no answer to the bisect".into()))
            .map_err(BisectError::There),
        None => here(ask, progress, note),
    }
}

fn here(ask: &Ask, progress: &Progress, note: impl FnMut(Note)) -> Result<Bisect, BisectError> {
    let mut spec = find(&ask.run, ask.inputs.as_deref(), ask.phase.as_deref())?;
    spec.step = ask.step;
    spec.python = ask.python.clone();
    spec.references = ask.references.clone();
    bisect(&spec, progress, note)
}

/// What the agent sends back: a line per pass, then the answer (an error in its words).
#[derive(Debug, Serialize, Deserialize)]
pub enum Item {
    Note(Note),
    Done(Box<Result<Bisect, String>>),
}

/// `fxray bisect` run by the agent beside the files.
pub struct BisectOp;

impl crate::pipeline::remote::Op for BisectOp {
    const NAME: &'static str = "bisect";
    type Args = Ask;
    type Item = Item;

    /// The run, and each other path that is a server's (`python` may be a bare name there).
    fn paths(a: &mut Ask) -> Vec<&mut PathBuf> {
        let remote = |p: &&mut PathBuf| crate::sources::remote::is_remote(p);
        std::iter::once(&mut a.run)
            .chain(a.inputs.as_mut())
            .chain(a.python.as_mut().filter(remote))
            .chain(a.references.iter_mut())
            .collect()
    }

    fn item_paths(item: &mut Item) -> Vec<&mut PathBuf> {
        match item {
            Item::Done(r) => match &mut **r {
                Ok(b) => std::iter::once(&mut b.inputs)
                    .chain(b.pass_files.iter_mut())
                    .collect(),
                Err(_) => Vec::new(),
            },
            Item::Note(_) => Vec::new(),
        }
    }

    fn run(a: Ask, stop: &std::sync::atomic::AtomicBool, send: &(dyn Fn(Item) + Sync)) {
        let progress = Progress::default();
        let done = std::sync::atomic::AtomicBool::new(false);
        let result = std::thread::scope(|s| {
            // The client's cancel reaches the replay through its progress.
            s.spawn(|| {
                while !done.load(std::sync::atomic::Ordering::Relaxed) {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        progress.cancel();
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
            let r = here(&a, &progress, |n| send(Item::Note(n)));
            done.store(true, std::sync::atomic::Ordering::Relaxed);
            r
        });
        send(Item::Done(Box::new(result.map_err(|e| e.to_string()))));
    }
}
