//! msprobe entries linked to the nodes of the pass on screen (docs/formats.md §4.1), computed in
//! the background once the pass and its modules are known, again when either changes.

use super::jobs::Msg;
use super::tensors::TensorsMsg;
use super::{App, Loading};
use crate::analysis::msprobe_link::{self, Link, StepLinks};
use crate::model::tensor::MsprobeStep;
use std::path::PathBuf;
use std::sync::Arc;

/// What a set of links was computed for; a result for another key is dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkKey {
    /// The tensors generation (bumped per workspace).
    generation: u64,
    /// The phase key and the pass on screen.
    phase: PathBuf,
    pass: usize,
    /// msprobe steps known (an attached dump adds some).
    steps: usize,
    /// The module tree the modules came from (its address: a new tree is a new key).
    tree: usize,
}

pub struct MsprobeLinks {
    pub key: LinkKey,
    /// One per step of `TensorsState::msprobe`, in its order.
    pub result: Loading<Arc<Vec<StepLinks>>>,
}

impl MsprobeLinks {
    /// The links naming `node`, with the step each belongs to (index into the msprobe steps).
    pub fn of_node<'a>(&'a self, node: &'a str) -> Vec<(usize, &'a Link)> {
        self.result.ready().map_or_else(Vec::new, |all| {
            all.iter()
                .enumerate()
                .flat_map(|(k, s)| s.of_node(node).map(move |l| (k, l)))
                .collect()
        })
    }

    /// The links of step `k` of the msprobe steps.
    pub fn step(&self, k: usize) -> Option<&StepLinks> {
        self.result.ready()?.get(k)
    }
}

impl App {
    /// Starts the link job when the pass on screen, its modules or the msprobe steps changed.
    /// Cheap when nothing did: called once per frame.
    pub(super) fn want_msprobe_links(&mut self) {
        let t = &self.tensors;
        if t.msprobe.is_empty() {
            return;
        }
        let Some(ph) = &self.phase else { return };
        let (Some((layout, tree)), Some(file)) = (ph.fold.clone(), ph.current_file().cloned())
        else {
            return;
        };
        let key = LinkKey {
            generation: t.generation(),
            phase: ph.key.clone(),
            pass: ph.current,
            steps: t.msprobe.len(),
            tree: Arc::as_ptr(&tree) as usize,
        };
        if t.links.as_ref().is_some_and(|l| l.key == key) {
            return;
        }
        let backward = ph.key.file_name().is_some_and(|n| n == "backward");
        let steps: Vec<Arc<MsprobeStep>> = t.msprobe.clone();
        self.tensors.links = Some(MsprobeLinks {
            key: key.clone(),
            result: Loading::Loading,
        });
        self.jobs.spawn(move |send| {
            let Some(g) = file.graphs.first() else {
                return;
            };
            let modules: Vec<&str> = g
                .nodes
                .iter()
                .map(|n| super::phase::union_module(&layout, &tree, &n.name).unwrap_or(""))
                .collect();
            let links = steps
                .iter()
                .map(|s| msprobe_link::link(g, &modules, s, backward))
                .collect();
            send(Msg::Tensors(TensorsMsg::Links {
                key,
                links: Arc::new(links),
            }));
        });
    }
}
