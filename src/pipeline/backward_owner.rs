//! Every backward of a tree paired with its own forward (docs/formats.md §1.2): with a graph
//! break, npugraph_ex writes a backward compiled lazily during `.backward()` into the latest
//! `model__N`, beside another graph's forward. The first pass of each forward and backward is
//! read for its interface only (on a server by its agent, all in one request: only the
//! interfaces cross),
//! `analysis::backward_owner` pairs them, and the answer goes into the index
//! (`Phase::backward_of`), where the run tree, `fxray summary` and module inference
//! (`pipeline::modules::ModuleContext`) read it.

use super::remote::{self, PerFile};
use crate::analysis::backward_owner::{self, Pairing};
use crate::model::fx::GraphInterface;
use crate::model::index::{Backend, BackwardOf, DebugIndex, Model, PhaseKind};
use crate::sources::load;
use std::path::{Path, PathBuf};

/// Pairs every backward of every run of `index`.
pub fn pair_index(index: &mut DebugIndex) {
    let mut runs: Vec<&mut [Model]> = index
        .runs
        .iter_mut()
        .map(|r| r.models.as_mut_slice())
        .collect();
    pair(&mut runs, None);
}

/// Pairs the backward at `phase` of model `model` of one run's `models` (and no other).
pub fn pair_one(models: &mut [Model], model: usize, phase: usize) {
    pair(&mut [models], Some((model, phase)));
}

/// The backends whose backwards land in the latest model folder: npugraph_ex and the legacy
/// backend (Inductor names a folder per compile).
fn lazy(backend: Backend) -> bool {
    matches!(backend, Backend::NpugraphEx | Backend::Torchair)
}

/// The first pass of `m`'s phase of kind `kind`.
fn first_pass(m: &Model, kind: PhaseKind) -> Option<(usize, &Path)> {
    m.phases.iter().enumerate().find_map(|(k, p)| {
        (p.kind() == kind)
            .then(|| p.passes.first().map(|f| (k, f.path.as_path())))
            .flatten()
    })
}

/// One backend of one run: its models with a forward, and the backwards to pair.
struct Group {
    run: usize,
    /// Models (indices into the run's) with a forward, in model order.
    candidates: Vec<usize>,
    /// (model, phase) of each backward.
    backwards: Vec<(usize, usize)>,
}

fn pair(runs: &mut [&mut [Model]], only: Option<(usize, usize)>) {
    let mut groups = Vec::new();
    for (r, models) in runs.iter().enumerate() {
        for backend in [Backend::NpugraphEx, Backend::Torchair] {
            let of = |m: &Model| m.backend == backend && m.name.starts_with("model__");
            let candidates: Vec<usize> = (0..models.len())
                .filter(|&i| of(&models[i]) && first_pass(&models[i], PhaseKind::Forward).is_some())
                .collect();
            let backwards: Vec<(usize, usize)> = (0..models.len())
                .filter(|&i| of(&models[i]))
                .filter_map(|i| first_pass(&models[i], PhaseKind::Backward).map(|(k, _)| (i, k)))
                .filter(|&at| only.is_none_or(|o| o == at))
                .collect();
            // One forward: nothing else its backward could be.
            if candidates.len() >= 2 && !backwards.is_empty() && lazy(backend) {
                groups.push(Group {
                    run: r,
                    candidates,
                    backwards,
                });
            }
        }
    }
    if groups.is_empty() {
        return;
    }
    let mut paths: Vec<PathBuf> = Vec::new();
    for g in &groups {
        let models = &runs[g.run];
        for &i in &g.candidates {
            paths.extend(first_pass(&models[i], PhaseKind::Forward).map(|(_, p)| p.to_path_buf()));
        }
        for &(i, k) in &g.backwards {
            paths.extend(models[i].phases[k].passes.first().map(|f| f.path.clone()));
        }
    }
    let read = remote::read_each::<Interfaces>(&paths);
    let mut at = 0;
    for g in groups {
        let forwards: Vec<Option<&GraphInterface>> = read[at..at + g.candidates.len()]
            .iter()
            .map(Option::as_ref)
            .collect();
        at += g.candidates.len();
        let models = &mut runs[g.run];
        for &(i, k) in &g.backwards {
            let backward = read[at].as_ref();
            at += 1;
            let own = g.candidates.iter().position(|&c| c == i);
            let name = |c: usize| models[g.candidates[c]].name.clone();
            let answer = match backward.map(|b| backward_owner::pair(b, &forwards, own)) {
                Some(Pairing::Forward { forward, alike, .. }) if Some(forward) != own => {
                    let m = &models[g.candidates[forward]];
                    Some(BackwardOf::Model {
                        path: m.path.clone(),
                        name: m.name.clone(),
                        alike: alike.into_iter().map(name).collect(),
                    })
                }
                Some(Pairing::CannotTell { best }) => Some(BackwardOf::CannotTell {
                    nearest: best
                        .filter(|&(_, share)| share > 0.0)
                        .map(|(c, share)| (name(c), share)),
                }),
                // Its own forward's, nothing to tell by, or unreadable: what is on disk.
                _ => None,
            };
            models[i].phases[k].backward_of = answer;
        }
    }
}

/// The interface of each graph file (`sources::fx_text::interface`): `None` for one that
/// cannot be read.
pub struct Interfaces;

impl PerFile for Interfaces {
    const NAME: &'static str = "graph_interfaces";
    type Out = Option<GraphInterface>;

    fn read(path: &Path) -> Option<GraphInterface> {
        load::interface(path)
    }
}
