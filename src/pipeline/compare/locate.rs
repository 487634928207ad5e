//! Finding the dump behind a path the user gave, and choosing the step and rank to compare.
//!
//! A side may be a TorchAir npy dump root (or a rank folder), an msprobe dump (a step folder,
//! a `proc`/`rank`/`pid` folder, or `dump.json`), a run folder holding one, or an archive of
//! any of these (opened in place). A folder holding both kinds is read as both; the kind both
//! sides have is compared.

use super::CompareError;
use crate::model::tensor::{DumpCatalog, MsprobeStep};
use crate::pipeline::failure::Failure;
use crate::sources::{data_dump, msprobe, names, vfs};
use std::collections::BTreeSet;
use std::path::Path;

/// What one path holds.
#[derive(Debug, Default)]
pub struct Found {
    pub npy: Option<DumpCatalog>,
    pub msprobe: Vec<MsprobeStep>,
    /// dump.json files found but not readable, one line each.
    pub problems: Vec<String>,
}

/// Finds the dumps under `path` (mounting an archive first).
pub fn find(path: &Path, side: &str) -> Result<Found, CompareError> {
    let mut found = Found::default();
    match vfs::open_root(path) {
        Ok(w) => found.problems.extend(w),
        Err(e) => {
            return Err(CompareError::NotADump {
                side: side.into(),
                path: path.into(),
                why: e.to_string(),
            });
        }
    }
    if !vfs::exists(path) {
        return Err(CompareError::Missing {
            side: side.into(),
            path: path.into(),
        });
    }
    if vfs::is_file(path) {
        if path.file_name().is_some_and(|n| n == "dump.json") {
            found
                .msprobe
                .push(read_json(path).map_err(|why| CompareError::NotADump {
                    side: side.into(),
                    path: path.into(),
                    why: why.to_string(),
                })?);
            return Ok(found);
        }
        return Err(CompareError::NotADump {
            side: side.into(),
            path: path.into(),
            why: "expected a dump folder, a dump.json or msprobe's compare_result_*.csv".into(),
        });
    }
    found.npy = data_dump::scan(path).ok().filter(|c| !c.is_empty());
    let own = path.join("dump.json");
    if vfs::is_file(&own) {
        match read_json(&own) {
            Ok(s) => found.msprobe.push(s),
            Err(e) => found.problems.push(format!("{}: {e}", own.display())),
        }
    } else {
        let (steps, errors) = msprobe::scan(path);
        found.msprobe = steps;
        found.problems.extend(errors);
    }
    if found.npy.is_none() && found.msprobe.is_empty() {
        let mut why =
            "no TorchAir npy dump (worldsize<W>_global_rank<R>/graph_<K>/<step>/*.npy) and no \
                       msprobe dump (step<N>/<proc|rank|pid><N>/dump.json) found"
                .to_string();
        if let Some(p) = found.problems.first() {
            why.push_str(&format!("; {p}"));
        }
        return Err(CompareError::NotADump {
            side: side.into(),
            path: path.into(),
            why,
        });
    }
    Ok(found)
}

/// One `dump.json`, its step and process read from its folders' names where they follow
/// msprobe's layout (`step<N>/<who>/dump.json`), else step 0 and its folder's name.
fn read_json(path: &Path) -> Result<MsprobeStep, Failure> {
    let who_dir = path.parent();
    let name = |d: Option<&Path>| {
        d.and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let who = name(who_dir);
    let step = names::msprobe_step_dir(&name(who_dir.and_then(Path::parent))).unwrap_or(0);
    msprobe::read(path, step, &who).map_err(Failure::unreadable)
}

/// The rank an msprobe process folder names: `rank3` → 3; `proc…`/`pid…` → none (one process,
/// whose id differs from run to run).
pub fn msprobe_rank(who: &str) -> Option<u32> {
    who.strip_prefix("rank")?.parse().ok()
}

/// Picks a value both sides have: the asked one (each side must have it), else the smallest in
/// common. Values only one side has become notes.
pub fn choose(
    what: &str,
    asked: Option<u32>,
    target: &BTreeSet<u32>,
    golden: &BTreeSet<u32>,
    notes: &mut Vec<String>,
) -> Result<u32, CompareError> {
    let list = |s: &BTreeSet<u32>| {
        let v: Vec<String> = s.iter().map(u32::to_string).collect();
        if v.is_empty() {
            "none".to_string()
        } else {
            v.join(", ")
        }
    };
    if let Some(n) = asked {
        for (side, set) in [("target", target), ("golden", golden)] {
            if !set.contains(&n) {
                return Err(CompareError::NoSuch {
                    side: side.into(),
                    what: what.into(),
                    asked: n,
                    have: list(set),
                });
            }
        }
        return Ok(n);
    }
    let common: BTreeSet<u32> = target.intersection(golden).copied().collect();
    for (side, set, other) in [("target", target, golden), ("golden", golden, target)] {
        for n in set.difference(other) {
            notes.push(format!("{what} {n}: only the {side} has it, not compared"));
        }
    }
    let Some(&first) = common.iter().next() else {
        return Err(CompareError::NothingInCommon {
            what: what.into(),
            target: list(target),
            golden: list(golden),
        });
    };
    if common.len() > 1 {
        notes.push(format!(
            "{what}s {} are on both sides: {what} {first} compared (--{what} for another)",
            list(&common)
        ));
    }
    Ok(first)
}

/// The data dump folder and tensors of one npy side (rank, graph, step chosen).
pub struct NpySel<'a> {
    pub step: &'a crate::model::tensor::StepDump,
    pub describe: String,
}

/// Chooses the rank, graph and step of two npy catalogs.
pub fn select_npy<'a>(
    t: &'a DumpCatalog,
    g: &'a DumpCatalog,
    step: Option<u32>,
    rank: Option<u32>,
    notes: &mut Vec<String>,
) -> Result<(NpySel<'a>, NpySel<'a>), CompareError> {
    let ranks = |c: &DumpCatalog| c.ranks.iter().map(|r| r.rank).collect::<BTreeSet<u32>>();
    let r = choose("rank", rank, &ranks(t), &ranks(g), notes)?;
    let rank_of = |c: &'a DumpCatalog| c.ranks.iter().find(|x| x.rank == r);
    let (Some(tr), Some(gr)) = (rank_of(t), rank_of(g)) else {
        return Err(CompareError::Internal("chosen rank vanished".into()));
    };
    // The graph both dumped with the most nodes (a run dumps one graph per compiled model).
    let graph = tr
        .graphs
        .iter()
        .filter(|x| gr.graphs.iter().any(|y| y.name == x.name))
        .max_by_key(|x| x.steps.first().map_or(0, |s| s.nodes.len()))
        .map(|x| x.name.clone())
        .ok_or_else(|| CompareError::NothingInCommon {
            what: "graph".into(),
            target: tr
                .graphs
                .iter()
                .map(|x| x.name.clone())
                .collect::<Vec<_>>()
                .join(", "),
            golden: gr
                .graphs
                .iter()
                .map(|x| x.name.clone())
                .collect::<Vec<_>>()
                .join(", "),
        })?;
    let graph_of =
        |rd: &'a crate::model::tensor::RankDump| rd.graphs.iter().find(|x| x.name == graph);
    let (Some(tg), Some(gg)) = (graph_of(tr), graph_of(gr)) else {
        return Err(CompareError::Internal("chosen graph vanished".into()));
    };
    if tr.graphs.len() > 1 || gr.graphs.len() > 1 {
        notes.push(format!(
            "{graph} compared (the largest graph both sides dumped)"
        ));
    }
    let steps = |x: &crate::model::tensor::GraphDump| {
        x.steps.iter().map(|s| s.step).collect::<BTreeSet<u32>>()
    };
    let s = choose("step", step, &steps(tg), &steps(gg), notes)?;
    let sel = |x: &'a crate::model::tensor::GraphDump, rd: &crate::model::tensor::RankDump| {
        x.steps.iter().find(|y| y.step == s).map(|st| NpySel {
            step: st,
            describe: format!("{}, rank {}, {graph}, step {s}", x.kind(), rd.rank),
        })
    };
    match (sel(tg, tr), sel(gg, gr)) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(CompareError::Internal("chosen step vanished".into())),
    }
}

/// Chooses the step and process of two msprobe dumps.
pub fn select_msprobe<'a>(
    t: &'a [MsprobeStep],
    g: &'a [MsprobeStep],
    step: Option<u32>,
    rank: Option<u32>,
    notes: &mut Vec<String>,
) -> Result<(&'a MsprobeStep, &'a MsprobeStep), CompareError> {
    let steps = |v: &[MsprobeStep]| v.iter().map(|s| s.step).collect::<BTreeSet<u32>>();
    let s = choose("step", step, &steps(t), &steps(g), notes)?;
    let at = |v: &'a [MsprobeStep]| v.iter().filter(|x| x.step == s).collect::<Vec<_>>();
    let (ts, gs) = (at(t), at(g));
    let ranks = |v: &[&MsprobeStep]| {
        v.iter()
            .filter_map(|x| msprobe_rank(&x.who))
            .collect::<BTreeSet<u32>>()
    };
    let (rt, rg) = (ranks(&ts), ranks(&gs));
    // Process folders (`proc<PID>`) carry no rank: one process per side is the pair.
    let pick = |v: &[&'a MsprobeStep], r: Option<u32>| -> Option<&'a MsprobeStep> {
        match r {
            Some(r) => v
                .iter()
                .find(|x| msprobe_rank(&x.who) == Some(r))
                .or_else(|| v.iter().find(|x| msprobe_rank(&x.who).is_none()))
                .copied(),
            None => v.first().copied(),
        }
    };
    let r = if rt.is_empty() || rg.is_empty() {
        if let Some(asked) = rank {
            for (side, set) in [("target", &rt), ("golden", &rg)] {
                if !set.is_empty() && !set.contains(&asked) {
                    return Err(CompareError::NoSuch {
                        side: side.into(),
                        what: "rank".into(),
                        asked,
                        have: set
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(", "),
                    });
                }
            }
        }
        rank.or_else(|| rt.union(&rg).next().copied())
    } else {
        Some(choose("rank", rank, &rt, &rg, notes)?)
    };
    match (pick(&ts, r), pick(&gs, r)) {
        (Some(a), Some(b)) => Ok((a, b)),
        _ => Err(CompareError::Internal("chosen step vanished".into())),
    }
}

/// Chooses the rank, graph and step of an npy catalog and the msprobe step (and process) of the
/// other side: a step both have; the rank the msprobe side names, else the npy dump's first.
pub fn select_mixed<'a>(
    npy: &'a DumpCatalog,
    probe: &'a [MsprobeStep],
    step: Option<u32>,
    rank: Option<u32>,
    notes: &mut Vec<String>,
) -> Result<(NpySel<'a>, &'a MsprobeStep), CompareError> {
    let npy_ranks: BTreeSet<u32> = npy.ranks.iter().map(|r| r.rank).collect();
    let probe_ranks: BTreeSet<u32> = probe.iter().filter_map(|x| msprobe_rank(&x.who)).collect();
    // msprobe's `proc<PID>` folders carry no rank: the npy side's choice stands.
    let r = if probe_ranks.is_empty() {
        choose("rank", rank, &npy_ranks, &npy_ranks, notes)?
    } else {
        choose("rank", rank, &npy_ranks, &probe_ranks, notes)?
    };
    let Some(rd) = npy.ranks.iter().find(|x| x.rank == r) else {
        return Err(CompareError::Internal("chosen rank vanished".into()));
    };
    let Some(g) = rd
        .graphs
        .iter()
        .max_by_key(|x| x.steps.first().map_or(0, |s| s.nodes.len()))
    else {
        return Err(CompareError::NothingInCommon {
            what: "graph".into(),
            target: "none".into(),
            golden: "an msprobe dump".into(),
        });
    };
    if rd.graphs.len() > 1 {
        notes.push(format!("{} compared (the largest graph dumped)", g.name));
    }
    let npy_steps: BTreeSet<u32> = g.steps.iter().map(|s| s.step).collect();
    let probe_steps: BTreeSet<u32> = probe.iter().map(|s| s.step).collect();
    let s = choose("step", step, &npy_steps, &probe_steps, notes)?;
    let (p, _) = select_msprobe(probe, probe, Some(s), Some(r), &mut Vec::new())?;
    let Some(st) = g.steps.iter().find(|x| x.step == s) else {
        return Err(CompareError::Internal("chosen step vanished".into()));
    };
    let sel = NpySel {
        step: st,
        describe: format!("{}, rank {r}, {}, step {s}", g.kind(), g.name),
    };
    Ok((sel, p))
}
