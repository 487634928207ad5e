//! Comparing the pass on screen: with which graph (A) — another pass, the same pass of another
//! rank or run, the Dynamo graph — and "find the first pass where …", searched in the
//! background over the loaded passes.

use super::App;
use super::jobs::Apply;
use crate::analysis::diff::{self, FirstQuery, GraphDiff};
use crate::model::fx::FxFile;
use crate::model::index::{DebugIndex, Run};
use crate::sources::load;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The graphs the pass on screen can be compared with, beyond the passes of its own phase.
#[derive(Debug, Default)]
pub struct Elsewhere {
    /// False when the pass on screen is not in the index (a loose file).
    pub indexed: bool,
    /// The same pass in other runs / ranks: `(rank 1 · 005 view_to_reshape, path)`.
    pub same_pass: Vec<(String, PathBuf)>,
    /// The model's Dynamo graph: `(model__0 dynamo_out_graph.txt, path)`.
    pub dynamo: Option<(String, PathBuf)>,
}

/// An explicit A side for the diff of the pass on screen (another pass, rank, run, or the
/// Dynamo graph).
#[derive(Debug, Clone)]
pub struct Compare {
    pub a_path: PathBuf,
    /// `A` as the UI names it (file name, or `rank 1 · 005 view_to_reshape`).
    pub label: String,
    /// The pass (of this phase) it is compared with.
    pub b_pass: usize,
    /// A, and the diff A → the pass.
    pub result: super::Loading<(Arc<FxFile>, Arc<GraphDiff>)>,
}

/// A "find first pass" search and what it found.
#[derive(Debug, Clone)]
pub struct FindFirst {
    pub query: FirstQuery,
    /// `None` while searching.
    pub outcome: Option<Found>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// `alias: node disappears in 002 optimize_noop_ops`.
    Found(String),
    /// `no_such_node: node appears: not found`.
    NotFound(String),
}

impl App {
    /// Starts the comparison `Nav::Compare` asked for, once its graph is loaded; forgets it
    /// when another graph is on screen.
    pub(super) fn poll_compare_after_load(&mut self) {
        let Some((b, a)) = self.compare_after_load.clone() else {
            return;
        };
        let Some(ph) = &self.phase else {
            self.compare_after_load = None;
            return;
        };
        if ph.current_path() != Some(b.as_path()) {
            self.compare_after_load = None;
        } else if ph.current_file().is_some() {
            self.compare_after_load = None;
            self.compare_with(Some(a));
        }
    }

    /// Compares the pass on screen with the graph file `a` (any pass, rank, run or the Dynamo
    /// graph) instead of the previous pass; `None` goes back to the previous pass.
    pub fn compare_with(&mut self, a: Option<PathBuf>) {
        let Some(ph) = &mut self.phase else { return };
        let Some(a_path) = a else {
            ph.compare = None;
            return;
        };
        let (Some(b), Some(key)) = (ph.current_file().cloned(), Some(ph.key.clone())) else {
            return;
        };
        let b_pass = ph.current;
        let known = ph.pass_of(&a_path).and_then(|i| ph.files[i].clone());
        let label = compare_label(self.workspace.as_ref().map(|w| &w.index), &a_path);
        ph.compare = Some(Compare {
            a_path: a_path.clone(),
            label,
            b_pass,
            result: super::Loading::Loading,
        });
        self.jobs.spawn(move |out| {
            let a_file = match known {
                Some(f) => Ok(f),
                None => load::graph(&a_path)
                    .map(Arc::new)
                    .map_err(|e| e.to_string()),
            };
            let result = a_file.map(|a| {
                let d = Arc::new(diff::diff(&a, &b));
                (a, d)
            });
            out.send(CompareMsg::Compared {
                key,
                a_path,
                b_pass,
                result,
            });
        });
    }

    /// What else the pass on screen can be compared with (for the "Compared with" menu).
    pub fn compare_elsewhere(&self) -> Elsewhere {
        let (Some(ws), Some(ph)) = (&self.workspace, &self.phase) else {
            return Elsewhere::default();
        };
        let index = &ws.index;
        let Some(here) = ph.current_path().and_then(|p| locate(index, p)) else {
            return Elsewhere::default();
        };
        let model = &index.runs[here.run].models[here.model];
        Elsewhere {
            indexed: true,
            same_pass: same_pass_elsewhere(index, &here),
            dynamo: model
                .dynamo_graph
                .clone()
                .map(|d| (format!("{} dynamo_out_graph.txt", model.name), d)),
        }
    }

    /// Searches the loaded passes of the phase for the first pass where `query` holds, in the
    /// background; the app then shows that pass (selecting the node the query is about).
    /// Does nothing until every pass is loaded ("node changes" also waits for the diffs).
    pub fn find_first_pass(&mut self, query: FirstQuery) {
        let Some(ph) = &mut self.phase else { return };
        let Some(files) = ph
            .files
            .iter()
            .cloned()
            .collect::<Option<Vec<Arc<FxFile>>>>()
        else {
            return;
        };
        let diffs: Option<Vec<Arc<GraphDiff>>> = ph.diffs.iter().skip(1).cloned().collect();
        if matches!(query, FirstQuery::NodeChanges(_)) && diffs.is_none() {
            return;
        }
        ph.find = Some(FindFirst {
            query: query.clone(),
            outcome: None,
        });
        let key = ph.key.clone();
        self.jobs.spawn(move |out| {
            let found = search(&files, diffs.as_deref(), &query);
            out.send(CompareMsg::FoundFirstPass { key, query, found });
        });
    }

    /// A search finished: shows the pass found (the search is still the one asked for in the
    /// phase on screen: [`CompareMsg::is_current`]).
    fn on_found_first_pass(&mut self, query: FirstQuery, found: Option<(usize, Option<String>)>) {
        let Some(ph) = self.phase.as_mut() else {
            return;
        };
        let Some(find) = ph.find.as_mut() else {
            return;
        };
        let (subject, what) = query_text(&query);
        let Some((i, select)) = found.filter(|(i, _)| *i < ph.passes.len()) else {
            find.outcome = Some(Found::NotFound(format!("{subject}: {what}: not found")));
            return;
        };
        let p = &ph.passes[i];
        find.outcome = Some(Found::Found(format!(
            "{subject}: {what} in {:03} {}",
            p.index, p.name
        )));
        let path = p.path.clone();
        self.select_graph(&path);
        if let Some(name) = select {
            self.reveal_node(name);
        }
    }
}

/// Results of comparing the pass on screen, keyed by its phase and what was asked.
pub enum CompareMsg {
    /// The chosen A graph loaded and diffed against pass `b_pass`.
    Compared {
        key: PathBuf,
        a_path: PathBuf,
        b_pass: usize,
        result: Result<(Arc<FxFile>, Arc<GraphDiff>), String>,
    },
    /// "Find first pass": the pass found and the node to select there.
    FoundFirstPass {
        key: PathBuf,
        query: FirstQuery,
        found: Option<(usize, Option<String>)>,
    },
}

impl Apply<App> for CompareMsg {
    fn is_current(&self, app: &App) -> bool {
        match self {
            CompareMsg::Compared {
                key,
                a_path,
                b_pass,
                ..
            } => app
                .phase
                .as_ref()
                .filter(|p| &p.key == key)
                .and_then(|p| p.compare.as_ref())
                .is_some_and(|c| &c.a_path == a_path && c.b_pass == *b_pass),
            CompareMsg::FoundFirstPass { key, query, .. } => app
                .phase
                .as_ref()
                .filter(|p| &p.key == key)
                .and_then(|p| p.find.as_ref())
                .is_some_and(|f| &f.query == query && f.outcome.is_none()),
        }
    }

    fn apply(self, app: &mut App) {
        match self {
            CompareMsg::Compared { result, .. } => {
                if let Some(c) = app.phase.as_mut().and_then(|p| p.compare.as_mut()) {
                    c.result = result.into();
                }
            }
            CompareMsg::FoundFirstPass { query, found, .. } => {
                app.on_found_first_pass(query, found)
            }
        }
    }
}

/// The query's subject and what it asks, as the bar says it.
pub fn query_text(q: &FirstQuery) -> (&str, &str) {
    match q {
        FirstQuery::NodeAppears(s) => (s, "node appears"),
        FirstQuery::NodeDisappears(s) => (s, "node disappears"),
        FirstQuery::NodeChanges(s) => (s, "node changes"),
        FirstQuery::TargetAppears(s) => (s, "target appears"),
        FirstQuery::TargetDisappears(s) => (s, "target disappears"),
    }
}

/// The first pass where `q` holds, and the node to select there.
fn search(
    files: &[Arc<FxFile>],
    diffs: Option<&[Arc<GraphDiff>]>,
    q: &FirstQuery,
) -> Option<(usize, Option<String>)> {
    let files: Vec<&FxFile> = files.iter().map(|f| &**f).collect();
    let history = |name: &str| diffs.map(|d| diff::node_history_in(&files, d, name));
    // "changes" from the node's history, made of the consecutive diffs.
    let found = match q {
        FirstQuery::NodeChanges(name) => history(name)?
            .iter()
            .find(|e| e.is_change())
            .map(|e| e.pass),
        _ => diff::first_pass_where(&files, q.clone()),
    }?;
    let select = match q {
        FirstQuery::NodeAppears(n) | FirstQuery::NodeChanges(n) => {
            // Followed across renames: the node's name in that pass.
            let renamed = history(n).and_then(|h| h.get(found).and_then(|e| e.name.clone()));
            Some(renamed.unwrap_or_else(|| n.clone()))
        }
        // Selected still: the inspector says it is not in this pass.
        FirstQuery::NodeDisappears(n) => Some(n.clone()),
        FirstQuery::TargetAppears(t) => {
            let f = files[found];
            f.graphs.iter().enumerate().find_map(|(g, gr)| {
                gr.nodes
                    .iter()
                    .position(|n| diff::target_matches(n, t))
                    .and_then(|k| diff::qualified_name(f, g, k))
            })
        }
        FirstQuery::TargetDisappears(_) => None,
    };
    Some((found, select))
}

/// Where the pass on screen sits in the index.
struct Here {
    run: usize,
    model: usize,
    phase: usize,
    pass: usize,
}

fn locate(index: &DebugIndex, path: &Path) -> Option<Here> {
    let at = index.locate(path)?;
    Some(Here {
        run: at.run,
        model: at.model?,
        phase: at.phase?,
        pass: at.pass?,
    })
}

fn run_label(run: &Run) -> String {
    match run.rank {
        Some(r) => format!("rank {r}"),
        None => run.name.clone(),
    }
}

/// The pass with the same number and name, in the same model and phase, of every other run:
/// `rank 1 · 005 view_to_reshape` (runs of the same rank told apart by their folder name).
fn same_pass_elsewhere(index: &DebugIndex, here: &Here) -> Vec<(String, PathBuf)> {
    let model = &index.runs[here.run].models[here.model];
    let phase = &model.phases[here.phase];
    let pass = &phase.passes[here.pass];
    let found: Vec<(&Run, PathBuf)> = index
        .runs
        .iter()
        .enumerate()
        .filter(|&(ri, _)| ri != here.run)
        .filter_map(|(_, other)| {
            let p = other
                .models
                .iter()
                .filter(|m| m.name == model.name)
                .flat_map(|m| m.phases.iter().filter(|p| p.name == phase.name))
                .flat_map(|p| p.passes.iter())
                .find(|p| p.index == pass.index && p.name == pass.name)?;
            Some((other, p.path.clone()))
        })
        .collect();
    let pass_text = format!("{:03} {}", pass.index, pass.name);
    found
        .iter()
        .map(|(run, path)| {
            let same = found
                .iter()
                .filter(|(r, _)| run_label(r) == run_label(run))
                .count();
            let who = if same > 1 && run.rank.is_some() {
                format!("{} ({})", run_label(run), run.name)
            } else {
                run_label(run)
            };
            (format!("{who} · {pass_text}"), path.clone())
        })
        .collect()
}

/// How the UI names a graph file to compare with: `rank 1 · model__0 · forward · 005 view_to_reshape`.
fn compare_label(index: Option<&DebugIndex>, path: &Path) -> String {
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some(index) = index else { return file };
    for run in &index.runs {
        for m in &run.models {
            let mut where_ = vec![];
            if let Some(r) = run.rank {
                where_.push(format!("rank {r}"));
            }
            if m.dynamo_graph.as_deref() == Some(path) {
                where_.push(format!("{} · dynamo graph", m.name));
                return where_.join(" · ");
            }
            for ph in &m.phases {
                if let Some(p) = ph.passes.iter().find(|p| p.path == path) {
                    where_.push(format!(
                        "{} · {} · {:03} {}",
                        m.name, ph.name, p.index, p.name
                    ));
                    return where_.join(" · ");
                }
            }
        }
    }
    file
}
