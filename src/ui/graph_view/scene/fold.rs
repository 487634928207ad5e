//! Folding the scene by module: which boxes are open, what a box says, where it is hit.

use super::*;

impl Scene {
    /// Groups the nodes by module with `tree` (`None`: back to the flat layout); `expanded`
    /// says which boxes are open.
    pub fn set_fold(&mut self, tree: Option<(Arc<FoldTree>, Vec<bool>)>) {
        self.fold = tree.map(|(t, e)| {
            let mut f = FoldView::new(t, e, self.layout.union.edges(), &self.layout.sizes);
            f.set_runs(crate::analysis::fold::repeated_runs(&f.tree, |n| {
                self.graph
                    .node(self.node_idx[n as usize])
                    .filter(|x| x.payload().present)
                    .map(|x| x.payload().look.target.as_str())
            }));
            f
        });
        self.index();
        self.recount();
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
        let mut e = f.expanded().to_vec();
        let mut changed = false;
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
        Some((r, f.tree.modules[m as usize].path.clone()))
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
        match crate::ui::graph_view::fold_paint::badge(st.added, st.removed, st.changed) {
            Some(b) => s.push_str(&format!("\nthis pass: {b} (added, removed, changed)")),
            None => s.push_str("\nthis pass changed nothing here"),
        }
        if let Some(r) = f.run_label(m) {
            s.push('\n');
            s.push_str(&r);
        }
        let open = f.placed(m).is_some_and(|b| !b.folded);
        s.push_str(if open {
            "\nclick the title to fold"
        } else {
            "\nclick to open"
        });
        s
    }

    /// The run label (`layers.0–23: 24 × the same block`) is written on a run's first box.
    pub fn show_run_label(&self, m: ModIx) -> bool {
        self.fold.as_ref().is_some_and(|f| {
            f.run_of
                .get(m as usize)
                .copied()
                .flatten()
                .is_some_and(|r| f.runs[r as usize].members.first() == Some(&m))
        })
    }

    /// Boxes are painted outer first; bundles over boxes.
    pub fn paint_order(&self, item: Item) -> u32 {
        match (item, &self.fold) {
            (Item::Box(m), Some(f)) => f.tree.modules[m as usize].depth,
            _ => u32::MAX,
        }
    }
}
