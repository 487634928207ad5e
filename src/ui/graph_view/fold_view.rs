//! The folded view's state inside a scene: the phase's module tree, which boxes are open, the
//! placement of that fold state, and per-box figures for the pass on screen (node count, op
//! families, what the pass changed).

use crate::analysis::fold::layout::PlacedBox;
use crate::analysis::fold::{FoldCache, FoldLayout, FoldTree, ModIx, RepeatRun, place};
use egui::Color32;
use std::collections::HashMap;
use std::sync::Arc;

/// Text smaller than this on screen does not read (issue 24: box titles and node labels at
/// the opening fit are at least this tall).
pub const READABLE_PX: f32 = 11.0;
/// The most boxes and nodes placed to find the opening depth: a bound on the work, far above
/// what reads at fit on any screen.
pub const MAX_OPEN_ITEMS: usize = 2_000;

/// Per module, for the pass on screen.
#[derive(Debug, Clone, Default)]
pub struct BoxStats {
    /// Nodes of the pass inside (all depths).
    pub present: u32,
    pub added: u32,
    pub changed: u32,
    pub removed: u32,
    /// Op-family fills and how many nodes have each, commonest first.
    pub families: Vec<(Color32, u32)>,
    /// The selected node is inside.
    pub selected: bool,
    /// Search hits inside.
    pub hits: u32,
    /// The data overlay's colour of the worst node inside (the highest severity).
    pub tint: Option<(f32, Color32)>,
}

impl BoxStats {
    pub fn changes(&self) -> u32 {
        self.added + self.changed + self.removed
    }
}

pub struct FoldView {
    pub tree: Arc<FoldTree>,
    pub layout: FoldLayout,
    cache: FoldCache,
    pub stats: Vec<BoxStats>,
    /// Per drawn edge of `layout.edges`: how many of its union edges the pass has.
    pub bundle_present: Vec<u32>,
    /// Structurally equal siblings (`layers.0–23`), from the first pass that has them.
    pub runs: Vec<RepeatRun>,
    /// Run of each module, as an index into `runs`.
    pub run_of: Vec<Option<u32>>,
}

impl FoldView {
    pub fn new(
        tree: Arc<FoldTree>,
        expanded: Vec<bool>,
        edges: &[(u32, u32)],
        sizes: &[(f32, f32)],
    ) -> Self {
        let mut cache = FoldCache::default();
        let layout = place(&tree, edges, sizes, &expanded, &mut cache).unwrap_or_default();
        let n = tree.modules.len();
        FoldView {
            tree,
            layout,
            cache,
            stats: vec![BoxStats::default(); n],
            bundle_present: Vec::new(),
            runs: Vec::new(),
            run_of: vec![None; n],
        }
    }

    pub fn expanded(&self) -> &[bool] {
        &self.layout.expanded
    }

    /// Places `expanded` (the cache keeps every module whose subtree did not change).
    pub fn set_expanded(
        &mut self,
        expanded: Vec<bool>,
        edges: &[(u32, u32)],
        sizes: &[(f32, f32)],
    ) {
        if let Ok(l) = place(&self.tree, edges, sizes, &expanded, &mut self.cache) {
            self.layout = l;
        }
    }

    pub fn placed(&self, m: ModIx) -> Option<&PlacedBox> {
        let i = (*self.layout.box_of.get(m as usize)?)?;
        self.layout.boxes.get(i as usize)
    }

    /// Sets the repeated runs (once per scene: structure, not what a pass did to it).
    pub fn set_runs(&mut self, runs: Vec<RepeatRun>) {
        self.run_of = vec![None; self.tree.modules.len()];
        for (i, r) in runs.iter().enumerate() {
            for &m in &r.members {
                self.run_of[m as usize] = Some(i as u32);
            }
        }
        self.runs = runs;
    }

    /// `layers.0–23: 24 × the same block` for a member of a run.
    pub fn run_label(&self, m: ModIx) -> Option<String> {
        let run = &self.runs[(*self.run_of.get(m as usize)?)? as usize];
        let first = &self.tree.modules[*run.members.first()? as usize];
        let last = &self.tree.modules[*run.members.last()? as usize];
        let prefix = first
            .path
            .strip_suffix(first.name.as_str())
            .unwrap_or_default();
        let changed: Vec<&str> = run
            .members
            .iter()
            .filter(|&&x| self.stats[x as usize].changes() > 0)
            .map(|&x| self.tree.modules[x as usize].name.as_str())
            .collect();
        let mut s = format!(
            "{prefix}{}–{}: {} × the same block",
            first.name,
            last.name,
            run.members.len()
        );
        if !changed.is_empty() && changed.len() < run.members.len() {
            s.push_str(&format!(
                "; this pass changed {prefix}{}",
                changed.join(", ")
            ));
        }
        Some(s)
    }

    /// Recounts the per-box figures. `node(i)` gives union node i's (present, diff, fill,
    /// selected, hit) for the pass on screen.
    pub fn recount(&mut self, node: impl Fn(usize) -> Option<NodeFacts>) {
        let tree = &self.tree;
        let mut stats = vec![BoxStats::default(); tree.modules.len()];
        let mut fams: Vec<HashMap<Color32, u32>> = vec![HashMap::new(); tree.modules.len()];
        for (i, &m) in tree.module_of.iter().enumerate() {
            let Some(f) = node(i) else { continue };
            let mut at = Some(m);
            while let Some(x) = at {
                let s = &mut stats[x as usize];
                if f.present {
                    s.present += 1;
                    *fams[x as usize].entry(f.fill).or_default() += 1;
                }
                match f.diff {
                    Some(Change::Added) => s.added += 1,
                    Some(Change::Changed) => s.changed += 1,
                    Some(Change::Removed) => s.removed += 1,
                    None => {}
                }
                s.selected |= f.selected;
                if let Some((sev, c)) = f.tint.filter(|_| f.present)
                    && s.tint.is_none_or(|(w, _)| sev > w)
                {
                    s.tint = Some((sev, c));
                }
                s.hits += u32::from(f.hit);
                at = tree.modules[x as usize].parent;
            }
        }
        for (s, f) in stats.iter_mut().zip(fams) {
            let mut v: Vec<(Color32, u32)> = f.into_iter().collect();
            v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.to_array().cmp(&b.0.to_array())));
            s.families = v;
        }
        self.stats = stats;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Added,
    Changed,
    Removed,
}

/// What the box figures need to know of one node.
#[derive(Debug, Clone, Copy)]
pub struct NodeFacts {
    pub present: bool,
    pub diff: Option<Change>,
    pub fill: Color32,
    /// The data overlay's colour with its severity, when it ranks nodes (error vs golden).
    pub tint: Option<(f32, Color32)>,
    pub selected: bool,
    pub hit: bool,
}
