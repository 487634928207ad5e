//! The ranks of a launch in the app: which rank the pass on screen belongs to, switching rank
//! (the same model, phase and pass in the other rank's folder, keeping the selection; the graph
//! view keeps its viewport and folding), the rank matrix of each launch, a matrix cell opened
//! side by side with rank 0, and the same capture of another rank for the timeline.

use super::part::{Cx, Feature};
use super::timeline::TimelineState;
use super::workspace::Workspace;
use super::{App, Nav};
use crate::analysis::ranks::{self, RankMatrix};
use crate::model::index::{DebugIndex, Model, Run};
use crate::model::launch::Launch;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The Ranks feature: the rank matrix of every launch, built from the facts parsed so far.
#[derive(Default)]
pub struct RanksState {
    /// The matrices, with what they were built from.
    cache: Option<(CacheKey, Arc<Vec<RankMatrix>>)>,
}

impl Feature for RanksState {}

/// What the matrices were built from: how much of the open folder was parsed (the state is
/// dropped when another folder opens).
type CacheKey = (u64, bool, usize);

/// The pass on screen among the ranks of its launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankPlace {
    /// Index into `DebugIndex::launches`.
    pub launch: usize,
    pub rank: u32,
    pub ranks: Vec<u32>,
}

/// The launch and rank of graph file `path`, when its run is one rank of a launch.
pub fn place(index: &DebugIndex, path: &Path) -> Option<RankPlace> {
    let run = index.locate(path)?.run;
    let (launch, rank) = index.launch_of(run)?;
    Some(RankPlace {
        launch: index
            .launches
            .iter()
            .position(|l| std::ptr::eq(l, launch))?,
        rank,
        ranks: launch.rank_numbers(),
    })
}

impl RanksState {
    /// The rank matrix of every launch of `ws`, from the facts parsed so far (rebuilt when
    /// more facts arrive or the index changes).
    pub fn matrices(&mut self, ws: &Workspace) -> Arc<Vec<RankMatrix>> {
        let key = (ws.facts_rev, ws.facts_done, ws.index.files_seen);
        if let Some((k, m)) = &self.cache
            && *k == key
        {
            return m.clone();
        }
        let m: Arc<Vec<RankMatrix>> = Arc::new(
            ws.index
                .launches
                .iter()
                .map(|l| ranks::matrix(&ws.index, l, &ws.facts))
                .collect(),
        );
        self.cache = Some((key, m.clone()));
        m
    }

    /// Opens row `row`'s graph of `rank` (launch `launch`) side by side with rank 0's (with the
    /// first other rank that differs, or the next one, when `rank` is 0).
    pub fn open_cell(&mut self, cx: &mut Cx, launch: usize, row: usize, rank: u32) {
        let Some(ws) = cx.workspace else { return };
        let matrices = self.matrices(ws);
        let Some(m) = matrices.get(launch) else {
            return;
        };
        let Some(r) = m.passes.get(row) else { return };
        let path_of = |k: u32| m.column(k).and_then(|c| r.paths.get(c).cloned().flatten());
        let Some(b) = path_of(rank) else { return };
        let other = m.ranks.iter().copied().filter(|&k| k != rank);
        let a_rank = if rank == m.ranks[0] {
            let mut others: Vec<u32> = other.collect();
            others.sort_by_key(|k| !r.differs_at(*k));
            others.into_iter().find(|&k| path_of(k).is_some())
        } else {
            Some(m.ranks[0]).filter(|&k| path_of(k).is_some())
        };
        match a_rank.and_then(path_of) {
            Some(a) => cx.nav.push(Nav::Compare { graph: b, with: a }),
            None => cx.nav.push(Nav::Go {
                graph: b,
                node: None,
            }),
        }
    }
}

impl App {
    /// The launch and rank of the graph on screen, when its run is one rank of a launch.
    pub fn rank_place(&self) -> Option<RankPlace> {
        let index = &self.workspace.as_ref()?.index;
        place(index, self.phase.as_ref()?.current_path()?)
    }

    /// Shows the same model, phase and pass of `rank`'s folder, keeping the selected node (by
    /// name); the graph view keeps its viewport and folding. False, with a notice, when that
    /// rank has no such graph.
    pub fn select_rank(&mut self, rank: u32) -> bool {
        let Some(place) = self.rank_place() else {
            return false;
        };
        if place.rank == rank {
            return true;
        }
        let (Some(ws), Some(ph)) = (&self.workspace, &self.phase) else {
            return false;
        };
        let index = &ws.index;
        let Some(here) = ph.current_path().map(Path::to_path_buf) else {
            return false;
        };
        let launch = &index.launches[place.launch];
        let target = launch
            .run_of(rank)
            .and_then(|r| counterpart(index, &here, &index.runs[r]));
        let Some(target) = target else {
            self.notice = Some(format!(
                "rank {rank} has no {}",
                here.file_name()
                    .map_or(String::new(), |n| n.to_string_lossy().into_owned())
            ));
            return false;
        };
        let selected = ph.selected.clone();
        self.select_graph(&target);
        if let Some(ph) = self.phase.as_mut() {
            ph.selected = selected;
            self.nav.push(super::Nav::KeepView);
        }
        true
    }

    /// The rank matrix of every launch of the open folder (the Ranks feature's).
    pub fn rank_matrices(&mut self) -> Arc<Vec<RankMatrix>> {
        let (state, cx) = self.part::<RanksState>();
        match cx.workspace {
            Some(ws) => state.matrices(ws),
            None => Arc::default(),
        }
    }

    /// The captures of the same model, kind and `graph_K` as the open timeline's, one per rank
    /// of its launch: `(rank, path)`, the open one included.
    pub fn timeline_ranks(&self) -> Vec<(u32, PathBuf)> {
        let open = self
            .peek::<TimelineState>()
            .and_then(TimelineState::open_path);
        match (&self.workspace, open) {
            (Some(ws), Some(open)) => captures_across_ranks(&ws.index, open),
            _ => Vec::new(),
        }
    }
}

/// The captures of the same model, kind and `graph_K` as capture `open`, one per rank of its
/// launch: `(rank, path)`, `open` included.
pub fn captures_across_ranks(index: &DebugIndex, open: &Path) -> Vec<(u32, PathBuf)> {
    let Some(run) = run_of(index, open) else {
        return Vec::new();
    };
    let Some((launch, _)) = index.launch_of(run) else {
        return Vec::new();
    };
    let Some((model, capture)) = index.runs[run].models.iter().find_map(|m| {
        m.captures
            .iter()
            .find(|c| c.path == open)
            .map(|c| (m.name.clone(), (c.kind, c.graph.clone())))
    }) else {
        return Vec::new();
    };
    launch_captures(index, launch, &model, &capture)
}

fn launch_captures(
    index: &DebugIndex,
    launch: &Launch,
    model: &str,
    (kind, graph): &(crate::model::index::CaptureKind, String),
) -> Vec<(u32, PathBuf)> {
    launch
        .ranks
        .iter()
        .filter_map(|lr| {
            let m = index
                .runs
                .get(lr.run)?
                .models
                .iter()
                .find(|m| m.name == model)?;
            let c = m
                .captures
                .iter()
                .find(|c| c.kind == *kind && c.graph == *graph)?;
            Some((lr.rank, c.path.clone()))
        })
        .collect()
}

/// The run (index into `DebugIndex::runs`) whose folder holds `path`.
fn run_of(index: &DebugIndex, path: &Path) -> Option<usize> {
    index.locate(path).map(|at| at.run)
}

/// The graph of `other` that stands where `path` stands in its own run: the same model's
/// Dynamo graph, or the pass of the same phase with the same number and name (else number).
fn counterpart(index: &DebugIndex, path: &Path, other: &Run) -> Option<PathBuf> {
    let run = &index.runs[run_of(index, path)?];
    let model = run.models.iter().find(|m| in_model(m, path))?;
    let twin = other.models.iter().find(|m| m.name == model.name)?;
    if model.dynamo_graph.as_deref() == Some(path) {
        return twin.dynamo_graph.clone();
    }
    let (phase, pass) = model.phases.iter().find_map(|ph| {
        ph.passes
            .iter()
            .find(|p| p.path == path)
            .map(|p| (ph.name.as_str(), p))
    })?;
    let passes = &twin.phases.iter().find(|p| p.name == phase)?.passes;
    passes
        .iter()
        .find(|p| p.index == pass.index && p.name == pass.name)
        .or_else(|| passes.iter().find(|p| p.index == pass.index))
        .map(|p| p.path.clone())
}

fn in_model(m: &Model, path: &Path) -> bool {
    m.dynamo_graph.as_deref() == Some(path)
        || m.phases
            .iter()
            .any(|ph| ph.passes.iter().any(|p| p.path == path))
}
