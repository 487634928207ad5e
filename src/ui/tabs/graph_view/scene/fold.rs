//! Folding the scene by module: which boxes are open, what a box says, where it is hit.

use super::*;

/// Repeat groups and how each differs from the largest of its parent.
pub type Groups = (Vec<crate::analysis::fold::RepeatGroup>, Vec<Option<String>>);

impl Scene {
    /// Groups the nodes by module with `tree` (`None`: back to the flat layout); `expanded`
    /// says which boxes are open.
    pub fn set_fold(&mut self, tree: Option<(Arc<FoldTree>, Vec<bool>)>) {
        let fold = tree.map(|(t, e)| {
            let groups = self.repeat_groups(&t);
            (t, e, groups)
        });
        self.set_fold_grouped(fold);
    }

    /// [`Self::set_fold`] with the repeat groups already found (the opening fold state is
    /// chosen with them).
    pub fn set_fold_grouped(&mut self, fold: Option<(Arc<FoldTree>, Vec<bool>, Groups)>) {
        self.fold = fold.map(|(t, e, (groups, differs))| {
            FoldView::new(
                t,
                e,
                groups,
                differs,
                self.layout.union.edges(),
                &self.layout.sizes,
            )
        });
        self.index();
        self.recount();
    }

    /// Drops the fold after `group_repeats` changed: the view folds again from the top, at
    /// the depth that reads with or without the groups.
    pub fn regroup(&mut self) {
        if self.fold.is_some() {
            self.set_fold(None);
            self.opens_folded = Some(true);
        }
    }

    /// The repeat groups of `tree` in the pass on screen (none when the view draws every
    /// member), and how each differs from the largest group of its parent.
    pub fn repeat_groups(&self, tree: &FoldTree) -> Groups {
        let look = |n: u32| {
            self.graph
                .node(*self.node_idx.get(n as usize)?)
                .filter(|x| x.payload().present)
                .map(|x| x.payload().look.clone())
        };
        if !self.group_repeats {
            return (Vec::new(), Vec::new());
        }
        // The pass's own edges: the union's hold every pass's rewiring.
        let groups = crate::analysis::fold::repeat_groups(
            tree,
            &self.pass_edges,
            |n| {
                let l = look(n)?;
                crate::analysis::fold::structure_key(&l.target, &l.subtitle)
            },
            |n| look(n).is_some_and(|l| crate::analysis::backward_owner::is_tangent(&l.name)),
        );
        let looks: Vec<Option<Arc<crate::ui::tabs::graph_view::shapes::NodeLook>>> =
            (0..tree.module_of.len() as u32).map(look).collect();
        let look = |n: u32| {
            let l = looks[n as usize].as_ref()?;
            Some((l.target.as_str(), l.subtitle.as_str()))
        };
        let notes = crate::analysis::fold::group_notes(tree, &groups, &self.pass_edges, look);
        let differs = notes
            .into_iter()
            .map(|n| {
                let from = n.largest.zip(n.differs).map(|(l, what)| {
                    format!(
                        "differs from {}: {what}",
                        crate::analysis::fold::group_label(tree, &groups[l].members)
                    )
                });
                match (from, n.border) {
                    (Some(f), Some(b)) => Some(format!("{f}\n{b}")),
                    (f, b) => f.or(b),
                }
            })
            .collect();
        (groups, differs)
    }

    /// Draws the member `delta` steps away in `m`'s repeat group instead of the one drawn.
    pub fn step_member(&mut self, m: ModIx, delta: isize) {
        let Some(f) = self.fold.as_mut() else { return };
        let Some(next) = f.step_member(m, delta) else {
            return;
        };
        if let Some(e) = f.show_member(next) {
            self.set_expanded(e);
        }
    }

    /// Opens a folded box, folds an open one.
    pub fn toggle(&mut self, m: ModIx) {
        let Some(f) = &self.fold else { return };
        let mut e = f.expanded().to_vec();
        if let Some(x) = e.get_mut(m as usize) {
            *x = !*x;
        }
        self.set_expanded(e);
    }

    /// Opens every box that hides union node `id`; true when something opened.
    pub fn reveal(&mut self, id: u32) -> bool {
        let Some(f) = &self.fold else { return false };
        let Some(&m) = f.tree.module_of.get(id as usize) else {
            return false;
        };
        // A node of a group member not drawn: that member is drawn instead.
        let hidden = f.tree.ancestry(m).into_iter().find(|&a| {
            f.layout
                .stand_in
                .get(a as usize)
                .copied()
                .flatten()
                .is_some()
        });
        let mut switched = None;
        if let Some(a) = hidden
            && let Some(f) = self.fold.as_mut()
        {
            switched = f.show_member(a);
        }
        let Some(f) = &self.fold else { return false };
        let mut changed = switched.is_some();
        let mut e = switched.unwrap_or_else(|| f.expanded().to_vec());
        for a in f.tree.ancestry(m) {
            if !e[a as usize] {
                e[a as usize] = true;
                changed = true;
            }
        }
        if changed {
            self.set_expanded(e);
        }
        changed
    }

    /// The innermost open box holding union node `id` (what Backspace folds).
    pub fn open_box_of(&self, id: u32) -> Option<ModIx> {
        let f = self.fold.as_ref()?;
        let m = *f.tree.module_of.get(id as usize)?;
        f.tree
            .ancestry(m)
            .into_iter()
            .rev()
            .find(|&a| a != crate::analysis::fold::ROOT && f.expanded()[a as usize])
    }

    /// Opens or folds boxes; the placement follows (cached modules are reused).
    pub fn set_expanded(&mut self, expanded: Vec<bool>) {
        let Some(f) = self.fold.as_mut() else { return };
        f.set_expanded(expanded, self.layout.union.edges(), &self.layout.sizes);
        self.index();
        self.recount();
    }

    pub fn is_folded(&self, m: ModIx) -> bool {
        self.fold
            .as_ref()
            .and_then(|f| f.placed(m))
            .is_some_and(|b| b.folded)
    }

    /// Where a click opens or folds module `m` (canvas: the whole folded box, an open box's
    /// title bar), and its path.
    pub fn box_hit_area(&self, m: ModIx) -> Option<(egui::Rect, String)> {
        let f = self.fold.as_ref()?;
        let b = f.placed(m)?;
        let bottom = if b.folded {
            b.rect[3]
        } else {
            b.rect[1] + crate::analysis::fold::layout::TITLE_H
        };
        let r = egui::Rect::from_min_max(
            Pos2::new(b.rect[0], b.rect[1]),
            Pos2::new(b.rect[2], bottom),
        );
        // A folded repeat group says it is one (`layers.0–82 ×83`), to screen readers too.
        let label = f
            .group_title(m)
            .filter(|_| b.folded)
            .unwrap_or_else(|| f.tree.modules[m as usize].path.clone());
        Some((r, label))
    }

    /// The ◀ ▶ buttons on an open repeat group member's title bar (canvas rects: previous,
    /// next member), at its right end.
    pub fn member_arrows(&self, m: ModIx) -> Option<[egui::Rect; 2]> {
        let f = self.fold.as_ref()?;
        f.group(m)?;
        let b = f.placed(m).filter(|b| !b.folded)?;
        let h = crate::analysis::fold::layout::TITLE_H;
        let square = |right: f32| {
            egui::Rect::from_min_max(
                Pos2::new(right - h, b.rect[1]),
                Pos2::new(right, b.rect[1] + h),
            )
        };
        Some([square(b.rect[2] - h), square(b.rect[2])])
    }

    /// What a box's tooltip says: module, nodes, what the pass did inside, the repeated run.
    pub fn box_summary(&self, m: ModIx) -> String {
        let Some(f) = &self.fold else {
            return String::new();
        };
        let md = &f.tree.modules[m as usize];
        let st = &f.stats[m as usize];
        let mut s = format!(
            "{}\n{} nodes in this pass ({} in all passes)",
            md.path, st.present, md.total
        );
        match crate::ui::tabs::graph_view::fold_paint::badge(st.added, st.removed, st.changed) {
            Some(b) => s.push_str(&format!("\nthis pass: {b} (added, removed, changed)")),
            None => s.push_str("\nthis pass changed nothing here"),
        }
        if let Some(g) = f.group_title(m) {
            s.push_str(&format!("\n{g}: one box for all of them, this one drawn"));
            if let Some(d) = f.group(m).and_then(|g| f.differs[g].as_ref()) {
                s.push('\n');
                s.push_str(d);
            }
            if let Some(c) = f.group_changes(m) {
                s.push_str(&format!("\nthis pass {c}"));
            }
        }
        let open = f.placed(m).is_some_and(|b| !b.folded);
        s.push_str(if open {
            "\nclick the title to fold"
        } else {
            "\nclick to open"
        });
        s
    }

    /// Boxes are painted outer first; bundles over boxes.
    pub fn paint_order(&self, item: Item) -> u32 {
        match (item, &self.fold) {
            (Item::Box(m), Some(f)) => f.tree.modules[m as usize].depth,
            _ => u32::MAX,
        }
    }
}
