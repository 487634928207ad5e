//! The folded view's state inside a scene: the phase's module tree, which boxes are open, the
//! placement of that fold state, and per-box figures for the pass on screen (node count, op
//! families, what the pass changed).

use crate::analysis::fold::layout::PlacedBox;
use crate::analysis::fold::{
    FoldCache, FoldLayout, FoldTree, ModIx, RepeatGroup, group_label, place,
};
use egui::Color32;
use std::collections::HashMap;
use std::sync::Arc;

/// Text smaller than this on screen does not read (issue 24: box titles and node labels at
/// the opening fit are at least this tall).
pub const READABLE_PX: f32 = 11.0;
/// A level opened below the top (beyond the wrappers the top opens with) reads only with this
/// much to spare: a level that reads by a hair reads or not as one pass's nodes more or fewer
/// move the fit, and the same tree must open the same boxes whether a pass file or its folder
/// was opened (a Qwen3-MoE backward's second level read at 12.2 px from its pass file, 12.0 from
/// its folder).
pub const DEEPER_MARGIN: f32 = 1.15;
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
    /// Numbered siblings of one structure (`layers.0–414`), from the pass on screen when the
    /// fold was set: each group is drawn as one box, its shown member.
    pub groups: Vec<RepeatGroup>,
    /// Group of each module, as an index into `groups`.
    pub group_of: Vec<Option<u32>>,
    /// Per group: the member drawn (the others are one click away).
    pub shown: Vec<ModIx>,
    /// Per group: how it differs from the largest group of its parent, and how its members differ
    /// at their boundary (`None` for the largest when its members are alike throughout).
    pub differs: Vec<Option<String>>,
}

/// Per module, the group member shown in its stead, when it is a hidden member of a group.
pub fn stand_in_of(tree: &FoldTree, groups: &[RepeatGroup], shown: &[ModIx]) -> Vec<Option<ModIx>> {
    let mut out = vec![None; tree.modules.len()];
    for (g, &s) in groups.iter().zip(shown) {
        for &m in &g.members {
            if m != s {
                out[m as usize] = Some(s);
            }
        }
    }
    out
}

impl FoldView {
    /// `groups` and `differs` from [`repeat_groups`](crate::analysis::fold::repeat_groups) on
    /// the pass on screen; each group shows its first member.
    pub fn new(
        tree: Arc<FoldTree>,
        expanded: Vec<bool>,
        groups: Vec<RepeatGroup>,
        differs: Vec<Option<String>>,
        edges: &[(u32, u32)],
        sizes: &[(f32, f32)],
    ) -> Self {
        let n = tree.modules.len();
        let mut group_of = vec![None; n];
        for (i, g) in groups.iter().enumerate() {
            for &m in &g.members {
                group_of[m as usize] = Some(i as u32);
            }
        }
        let shown: Vec<ModIx> = groups.iter().map(|g| g.members[0]).collect();
        let mut cache = FoldCache::default();
        let stand_in = stand_in_of(&tree, &groups, &shown);
        let layout =
            place(&tree, edges, sizes, &expanded, &stand_in, &mut cache).unwrap_or_default();
        FoldView {
            tree,
            layout,
            cache,
            stats: vec![BoxStats::default(); n],
            bundle_present: Vec::new(),
            groups,
            group_of,
            shown,
            differs,
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
        let stand_in = stand_in_of(&self.tree, &self.groups, &self.shown);
        if let Ok(l) = place(
            &self.tree,
            edges,
            sizes,
            &expanded,
            &stand_in,
            &mut self.cache,
        ) {
            self.layout = l;
        }
    }

    /// The group of `m` when it has two members or more.
    pub fn group(&self, m: ModIx) -> Option<usize> {
        let g = (*self.group_of.get(m as usize)?)? as usize;
        (self.groups[g].members.len() > 1).then_some(g)
    }

    /// Draws `member` for its group instead of the member drawn now; what was open inside the
    /// one is opened inside the other (by relative path). Returns the expansion to place.
    pub fn show_member(&mut self, member: ModIx) -> Option<Vec<bool>> {
        let g = self.group(member)?;
        let old = self.shown[g];
        if old == member {
            return None;
        }
        let mut e = self.expanded().to_vec();
        let (from, to) = (
            self.tree.modules[old as usize].path.clone(),
            self.tree.modules[member as usize].path.clone(),
        );
        let open: Vec<String> = self
            .tree
            .modules
            .iter()
            .enumerate()
            .filter(|(i, md)| {
                e[*i] && (md.path == from || md.path.starts_with(&format!("{from}.")))
            })
            .map(|(_, md)| format!("{to}{}", &md.path[from.len()..]))
            .collect();
        for p in open {
            if let Some(m) = self.tree.find(&p) {
                e[m as usize] = true;
            }
        }
        self.shown[g] = member;
        Some(e)
    }

    /// The member `delta` steps from the one drawn for `m`'s group (wrapping round).
    pub fn step_member(&self, m: ModIx, delta: isize) -> Option<ModIx> {
        let g = self.group(m)?;
        let members = &self.groups[g].members;
        let at = members.iter().position(|&x| x == self.shown[g])? as isize;
        let n = members.len() as isize;
        Some(members[(at + delta).rem_euclid(n) as usize])
    }

    /// `layers.0–414 ×415` for the member drawn for a group.
    /// `label` (module `m`'s path, or its group's) without what the frame it is drawn in says:
    /// its parent's path, or its grandparent's for a numbered one (`layers.3`, `layers.0–5`).
    pub fn within_parent<'a>(&self, m: ModIx, label: &'a str) -> &'a str {
        let md = &self.tree.modules[m as usize];
        let numbered = md.name.bytes().all(|b| b.is_ascii_digit());
        let mut frame = md.parent;
        if numbered {
            frame = frame.and_then(|p| self.tree.modules[p as usize].parent);
        }
        let Some(frame) = frame.map(|p| &self.tree.modules[p as usize].path) else {
            return label;
        };
        label
            .strip_prefix(frame.as_str())
            .and_then(|rest| rest.strip_prefix('.'))
            .unwrap_or(label)
    }

    pub fn group_title(&self, m: ModIx) -> Option<String> {
        let g = self.group(m)?;
        Some(group_label(&self.tree, &self.groups[g].members))
    }

    /// What the pass did to the members of `m`'s group, said once: "changed the same way in 415
    /// of 415", "changed in 2 of 415: layers.7, 12". `None` when it changed none of them.
    pub fn group_changes(&self, m: ModIx) -> Option<String> {
        let g = self.group(m)?;
        let members = &self.groups[g].members;
        let changed: Vec<ModIx> = members
            .iter()
            .copied()
            .filter(|&x| self.stats[x as usize].changes() > 0)
            .collect();
        let first = *changed.first()?;
        let counts = |x: ModIx| {
            let s = &self.stats[x as usize];
            (s.added, s.removed, s.changed)
        };
        let n = members.len();
        if changed.iter().all(|&x| counts(x) == counts(first)) && changed.len() > 1 {
            return Some(format!("changed the same way in {} of {n}", changed.len()));
        }
        let numbers: Vec<u64> = changed
            .iter()
            .filter_map(|&x| self.tree.modules[x as usize].name.parse().ok())
            .collect();
        Some(format!(
            "changed in {} of {n}: {}",
            changed.len(),
            crate::analysis::fold::ranges(&numbers, 4)
        ))
    }

    pub fn placed(&self, m: ModIx) -> Option<&PlacedBox> {
        let i = (*self.layout.box_of.get(m as usize)?)?;
        self.layout.boxes.get(i as usize)
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
