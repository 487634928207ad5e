//! msprobe entries linked to the nodes of the pass on screen (docs/formats.md §4.1), computed in
//! the background once the pass and its modules are known, again when either changes.

use super::{App, Loading};
use crate::analysis::fold::FoldTree;
use crate::analysis::msprobe_link::{self, Link, StepLinks};
use crate::model::index::PhaseKind;
use crate::model::tensor::MsprobeStep;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// What a set of links was computed for; a result for another key is dropped.
#[derive(Debug, Clone)]
pub struct LinkKey {
    /// The tensors generation (bumped per workspace).
    generation: u64,
    /// The phase key and the pass on screen.
    phase: PathBuf,
    pass: usize,
    /// msprobe steps known (an attached dump adds some).
    steps: usize,
    /// The module tree the modules came from: held, so that its address cannot be reused by
    /// a new tree while this key lives (a new tree is a new key).
    tree: Arc<FoldTree>,
}

impl PartialEq for LinkKey {
    fn eq(&self, o: &Self) -> bool {
        self.is(o.generation, &o.phase, o.pass, o.steps, &o.tree)
    }
}

impl LinkKey {
    fn is(
        &self,
        generation: u64,
        phase: &std::path::Path,
        pass: usize,
        steps: usize,
        tree: &Arc<FoldTree>,
    ) -> bool {
        self.generation == generation
            && self.phase == phase
            && self.pass == pass
            && self.steps == steps
            && Arc::ptr_eq(&self.tree, tree)
    }
}

/// The links of every msprobe step, with an index by node (a frame looks one node up).
pub struct LinkSet {
    /// One per step of `TensorsState::msprobe`, in its order.
    pub steps: Vec<StepLinks>,
    /// Node name → (step, link) pairs naming it.
    by_node: HashMap<String, Vec<(usize, usize)>>,
}

impl LinkSet {
    pub fn new(steps: Vec<StepLinks>) -> LinkSet {
        let mut by_node: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
        for (k, s) in steps.iter().enumerate() {
            for (i, l) in s.links.iter().enumerate() {
                let mut names: Vec<&str> = l
                    .node
                    .iter()
                    .map(|n| n.as_str())
                    .chain(l.outputs.iter().map(|(_, n)| n.as_str()))
                    .collect();
                names.sort();
                names.dedup();
                for n in names {
                    by_node.entry(n.to_string()).or_default().push((k, i));
                }
            }
        }
        LinkSet { steps, by_node }
    }
}

pub struct MsprobeLinks {
    pub key: LinkKey,
    pub result: Loading<Arc<LinkSet>>,
}

impl MsprobeLinks {
    /// The links naming `node`, with the step each belongs to (index into the msprobe steps).
    pub fn of_node(&self, node: &str) -> Vec<(usize, &Link)> {
        let Some(set) = self.result.ready() else {
            return Vec::new();
        };
        set.by_node.get(node).map_or_else(Vec::new, |v| {
            v.iter()
                .filter_map(|&(k, i)| Some((k, set.steps.get(k)?.links.get(i)?)))
                .collect()
        })
    }

    /// The links of step `k` of the msprobe steps.
    pub fn step(&self, k: usize) -> Option<&StepLinks> {
        self.result.ready()?.steps.get(k)
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
        let (generation, steps_n) = (t.generation(), t.msprobe.len());
        if t.links
            .as_ref()
            .is_some_and(|l| l.key.is(generation, &ph.key, ph.current, steps_n, &tree))
        {
            return;
        }
        let key = LinkKey {
            generation,
            phase: ph.key.clone(),
            pass: ph.current,
            steps: steps_n,
            tree: tree.clone(),
        };
        let backward = PhaseKind::of_path(&ph.key) == Some(PhaseKind::Backward);
        let steps: Vec<Arc<MsprobeStep>> = t.msprobe.clone();
        self.tensors.links = Some(MsprobeLinks {
            key: key.clone(),
            result: Loading::Loading,
        });
        self.jobs.spawn(move |out| {
            let Some(g) = file.graphs.first() else {
                // A pass with no graph links nothing; say so rather than spin forever.
                out.send(LinksMsg {
                    key,
                    links: Arc::new(LinkSet::new(Vec::new())),
                });
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
            out.send(LinksMsg {
                key,
                links: Arc::new(LinkSet::new(links)),
            });
        });
    }
}

/// The links of `key`, made in the background.
pub struct LinksMsg {
    key: LinkKey,
    links: Arc<LinkSet>,
}

impl super::jobs::Apply<App> for LinksMsg {
    fn is_current(&self, app: &App) -> bool {
        let links = app.tensors.links.as_ref();
        links.is_some_and(|l| l.key == self.key)
    }

    fn apply(self, app: &mut App) {
        if let Some(l) = app.tensors.links.as_mut() {
            l.result = Loading::Ready(self.links);
        }
    }
}
