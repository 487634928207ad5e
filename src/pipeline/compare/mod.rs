//! Accuracy compare, start to finish: find both dumps, choose the step and rank, pair their
//! tensors, compute every pair in parallel (both files memory-mapped, one pass per pair),
//! judge them with msprobe's rules and find the first divergence (`analysis::accuracy`).
//! Also reads msprobe's own compare CSV into the same result.

mod compute;
pub mod delta;
mod link;
pub mod locate;
mod pair_data;
pub mod remote;
mod side_graph;
mod sides;

use crate::analysis::accuracy::pairing::Naming;
use crate::analysis::accuracy::{
    Comparison, Mode, Unpaired, mixed, msprobe_csv, pairing, rules, verdict,
};
use crate::model::progress::{Progress, Unit};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use delta::{CELLS, delta};
pub use pair_data::open_tensor;

/// What to compare when a dump holds several steps or ranks.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub step: Option<u32>,
    pub rank: Option<u32>,
    /// The FX graph msprobe calls are linked to, so their pairs name a node.
    pub graph: Option<PathBuf>,
    /// Other graphs it may be (the window: every pass of the phase on screen): an npy dump
    /// against an msprobe dump links through the one whose node names cover the npy dump's
    /// best, the last on a tie (the graph that ran).
    pub graphs: Vec<PathBuf>,
    /// How far the compare is (the window's progress line), and the window's way to call it
    /// off when another compare replaces it.
    pub progress: Arc<Progress>,
}

/// Why a compare could not be made at all (a pair that cannot be read is not one: it gets its
/// own line and the rest is compared).
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    #[error("{side} {}: no such file or folder", path.display())]
    Missing { side: String, path: PathBuf },
    #[error("{side} {}: {why}", path.display())]
    NotADump {
        side: String,
        path: PathBuf,
        why: String,
    },
    #[error("{side} has no {what} {asked} (it has: {have})")]
    NoSuch {
        side: String,
        what: String,
        asked: u32,
        have: String,
    },
    #[error("no {what} in common: the target has {target}, the golden {golden}")]
    NothingInCommon {
        what: String,
        target: String,
        golden: String,
    },
    #[error(
        "the target is {target}, the golden {golden}: an npy dump and an msprobe dump pair \
         through the nodes of their graph, give it with --graph GRAPH_FILE"
    )]
    Mixed { target: String, golden: String },
    #[error("{}: {why}", path.display())]
    Csv { path: PathBuf, why: String },
    #[error("the compare was called off")]
    Cancelled,
    #[error("internal error: {0}")]
    Internal(String),
}

impl From<CompareError> for crate::error::Error {
    fn from(e: CompareError) -> Self {
        match e {
            CompareError::Internal(m) => crate::error::Error::Internal(m),
            other => crate::error::Error::user(other.to_string()),
        }
    }
}

/// Where the two sides came from, for the window and the CLI's header.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Described {
    pub target: String,
    pub golden: String,
}

/// True for msprobe's compare CSV (`compare_result_*.csv`, or any `.csv`).
pub fn is_compare_csv(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
}

/// msprobe's own compare CSV, read into a comparison.
pub fn open_csv(path: &Path) -> Result<Comparison, CompareError> {
    let text = crate::sources::read::read_text(path).map_err(|e| CompareError::Csv {
        path: path.into(),
        why: e.to_string(),
    })?;
    msprobe_csv::read(&text.text).map_err(|e| CompareError::Csv {
        path: path.into(),
        why: e.to_string(),
    })
}

/// Compares the dump at `target` with the one at `golden`.
pub fn compare(
    target: &Path,
    golden: &Path,
    o: &Options,
) -> Result<(Comparison, Described), CompareError> {
    let progress = &o.progress;
    progress.stage("finding the dumps", 0, Unit::Items);
    // An archive side is read under the compare's progress (its bytes counted, called off
    // with it); each side runs on its own thread, so each sets it there.
    let find = |path: &Path, side: &str| {
        crate::sources::archive::reading_with(progress.clone(), || locate::find(path, side))
    };
    let (ft, fg) = rayon::join(|| find(target, "target"), || find(golden, "golden"));
    if progress.cancelled() {
        return Err(CompareError::Cancelled);
    }
    let (ft, fg) = (ft?, fg?);
    let mut notes: Vec<String> = Vec::new();
    for (side, f) in [("target", &ft), ("golden", &fg)] {
        notes.extend(f.problems.iter().map(|p| format!("{side}: {p}")));
    }
    let (st, sg) = match (
        &ft.npy,
        &fg.npy,
        ft.msprobe.is_empty(),
        fg.msprobe.is_empty(),
    ) {
        (Some(a), Some(b), ..) => {
            let (x, y) = locate::select_npy(a, b, o.step, o.rank, &mut notes)?;
            if crate::pipeline::stages::of_two(target, golden).is_some() {
                notes.push(
                    "these are the optimized and original stage dumps of one run: `fxray \
                     compare RUN` pairs them through the pass history, where a pass renamed \
                     or rebuilt a node"
                        .into(),
                );
            }
            let given: Vec<PathBuf> = o.graph.iter().chain(&o.graphs).cloned().collect();
            let mut read = |sel: &locate::NpySel, side: &str| {
                let mut s = sides::npy(sel, progress);
                if sel.step.is_timed() {
                    return s;
                }
                match side_graph::find(sel.step, &given) {
                    Some((graph, file)) => {
                        side_graph::read_through(&mut s, &file);
                        notes.push(format!(
                            "{side}: the dump records no op nor order (npugraph_ex's tensor \
                             dump): read through its graph {}, whose nodes it names",
                            graph.display()
                        ));
                    }
                    None => notes.push(format!(
                        "{side}: the dump records no op nor order (npugraph_ex's tensor dump) \
                         and no graph here names its nodes: same-named nodes are compared, \
                         calls in name order, so the first divergence may not be the graph's \
                         first (give its pass file with --graph)"
                    )),
                }
                s
            };
            let st = read(&x, "target");
            let sg = read(&y, "golden");
            (st, sg)
        }
        (_, _, false, false) => {
            let (x, y) =
                locate::select_msprobe(&ft.msprobe, &fg.msprobe, o.step, o.rank, &mut notes)?;
            let (mut a, mut b) = (sides::msprobe(x), sides::msprobe(y));
            if let Some(graph) = &o.graph {
                let g = link::Graph::read(graph)?;
                notes.push(g.name(&mut a, x, "target"));
                notes.push(g.name(&mut b, y, "golden"));
            }
            (a, b)
        }
        _ => {
            let kind = |f: &locate::Found| {
                if f.npy.is_some() {
                    "an npy data dump"
                } else {
                    "an msprobe dump"
                }
                .to_string()
            };
            let Some(graph) = &o.graph else {
                return Err(CompareError::Mixed {
                    target: kind(&ft),
                    golden: kind(&fg),
                });
            };
            mixed(&ft, &fg, graph, o, &mut notes)?
        }
    };
    let described = Described {
        target: format!("{} ({})", target.display(), st.describe),
        golden: format!("{} ({})", golden.display(), sg.describe),
    };
    let c = compare_sides(&st, &sg, notes, progress);
    if progress.cancelled() {
        return Err(CompareError::Cancelled);
    }
    Ok((c, described))
}

/// An npy dump against an msprobe dump (either way round): the msprobe calls linked to the
/// graph's nodes, then paired with the npy nodes through those links.
fn mixed(
    ft: &locate::Found,
    fg: &locate::Found,
    graph: &Path,
    o: &Options,
    notes: &mut Vec<String>,
) -> Result<(sides::Side, sides::Side), CompareError> {
    let (npy, probe, npy_is_target) = match (&ft.npy, &fg.npy) {
        (Some(c), None) => (c, &fg.msprobe, true),
        (None, Some(c)) => (c, &ft.msprobe, false),
        _ => return Err(CompareError::Internal("not a mixed compare".into())),
    };
    let (sel, step) = locate::select_mixed(npy, probe, o.step, o.rank, notes)?;
    let graph = if o.graphs.is_empty() {
        graph.to_path_buf()
    } else {
        let (best, note) = link::best_for(&o.graphs, &sel);
        notes.extend(note);
        best.unwrap_or_else(|| graph.to_path_buf())
    };
    let g = link::Graph::read(&graph)?;
    let n = sides::npy(&sel, &o.progress);
    let mut m = sides::msprobe(step);
    let who = if npy_is_target { "golden" } else { "target" };
    notes.push(g.name(&mut m, step, who));
    Ok(if npy_is_target { (n, m) } else { (m, n) })
}

fn compare_sides(
    st: &sides::Side,
    sg: &sides::Side,
    notes: Vec<String>,
    progress: &Progress,
) -> Comparison {
    let mode = if st.has_data() && sg.has_data() {
        Mode::Tensor
    } else {
        Mode::Statistics
    };
    let paired = match (st.naming, sg.naming) {
        (Naming::Nodes, Naming::Msprobe) => mixed::pair(&st.tensors, &sg.tensors, true),
        (Naming::Msprobe, Naming::Nodes) => mixed::pair(&sg.tensors, &st.tensors, false),
        _ => pairing::pair(&st.tensors, &sg.tensors, st.naming),
    };
    let computed = compute::all(st, sg, &paired.pairs, mode, progress);
    let unpaired = |side: &sides::Side, idx: &[usize]| -> Vec<Unpaired> {
        idx.iter()
            .map(|&i| {
                let t = &side.tensors[i];
                Unpaired {
                    key: t.key.clone(),
                    call: t.call.clone(),
                    node: t.node.clone(),
                    slot: t.slot.clone(),
                    role: t.role,
                    dtype: t.dtype.clone(),
                    order: t.order,
                }
            })
            .collect()
    };
    let mut failed = Vec::with_capacity(computed.len());
    let mut c = Comparison::default();
    c.mode = Some(mode);
    c.unpaired_target = unpaired(st, &paired.unpaired_target);
    c.unpaired_golden = unpaired(sg, &paired.unpaired_golden);
    c.pairing = paired.how;
    c.notes = notes;
    for x in computed {
        failed.push(x.failed);
        c.pairs.push(x.pair);
    }
    rules::apply(&mut c.pairs, mode);
    for (p, f) in c.pairs.iter_mut().zip(&failed) {
        if f.is_some() {
            p.result = crate::analysis::accuracy::Level::Error;
        }
        p.reason = compute::reason(p, f.as_ref());
    }
    verdict::judge(&mut c);
    c.index();
    c
}
