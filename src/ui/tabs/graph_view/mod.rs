//! The central graph view: the current pass drawn with the phase's union layout, with
//! pan/zoom, fit, search, keyboard walking, cone highlight and a minimap.
//!
//! View state (zoom, pan, search text) lives in [`GraphViewState`]; the data (which pass, which
//! node) lives in the app, so switching passes keeps both the selection and the viewport.

mod canvas;
mod changes;
mod data_overlay;
mod fold_paint;
mod fold_view;
mod groups;
mod minimap;
mod navigation;
mod pass_strip;
mod rank_picker;
mod scene;
mod search;
pub mod shapes;

use crate::app::{App, Nav};
use egui::{Pos2, Rect};
use scene::Scene;
use std::sync::Arc;
use std::time::Instant;

pub use navigation::Viewport;

/// egui memory key of the view's zoom/pan (egui_graphs' `MetadataFrame`).
pub const VIEW_ID: &str = "fxray_graph";

pub struct GraphViewState {
    scene: Option<Scene>,
    /// The compared graph (A) in side-by-side view.
    scene_a: Option<Scene>,
    /// Colour what the compared pass added, changed and removed (default on).
    pub diff_overlay: bool,
    /// Show the compared graph (A) left of the pass on screen (B).
    /// The graph was replaced by the same pass of another rank: the viewport and the open
    /// boxes stay until the new module tree has arrived (its fold must not refit either).
    pub keep_view: bool,
    pub side_by_side: bool,
    /// Nodes drawn as (added, changed, removed ghosts) by the overlay.
    pub diff_counts: (usize, usize, usize),
    pub search: search::Search,
    /// Highlight the selection's upstream/downstream cone and fade the rest.
    pub cone: bool,
    /// Sub-graphs folded into their box.
    pub collapsed: Vec<String>,
    /// Frames left in which to fit the whole graph (egui_graphs fits once on its own first
    /// frame; ours must come after it).
    fit_frames: u8,
    minimap: minimap::Minimap,
    /// CPU time of the last graph frame (egui_graphs + our layers), for the status bar and
    /// benchmarks.
    pub last_frame_ms: f32,
    /// Colour nodes by their dumped data.
    pub data: data_overlay::DataOverlay,
    /// Screen rect of the canvas in the last frame.
    pub canvas: Option<Rect>,
    /// Group nodes by module: `None` decides by size (graphs over
    /// [`fold_view::FOLD_ABOVE`] nodes open folded).
    pub fold_mode: Option<bool>,
    /// Draw numbered sub-modules of one structure (`layers.0–82`) as one box (default on).
    pub group_repeats: bool,
    /// Open module boxes (by path) carried over to the same pass of another rank, applied once
    /// its module tree is known.
    carried_open: Option<Vec<String>>,
}

impl Default for GraphViewState {
    fn default() -> Self {
        GraphViewState {
            scene: None,
            scene_a: None,
            diff_overlay: true,
            side_by_side: false,
            keep_view: false,
            diff_counts: (0, 0, 0),
            search: search::Search::default(),
            cone: false,
            collapsed: Vec::new(),
            fit_frames: 0,
            minimap: minimap::Minimap::default(),
            last_frame_ms: 0.0,
            data: Default::default(),
            canvas: None,
            fold_mode: None,
            group_repeats: true,
            carried_open: None,
        }
    }
}

impl GraphViewState {
    /// Nodes (union ids) of the pass on screen, with their canvas centres; for tests/benches.
    pub fn screen_pos_of(&self, ui_ctx: &egui::Context, qualified: &str) -> Option<Pos2> {
        let scene = self.scene.as_ref()?;
        let id = scene.layout.union.id(qualified)?;
        let canvas = scene.pos(id)?;
        let vp = Viewport::load_ctx(ui_ctx);
        Some(vp.to_screen(canvas, self.canvas?))
    }

    /// Sub-graph boxes of the pass on screen: (name, nodes, folded).
    pub fn groups(&self) -> Vec<(String, usize, bool)> {
        self.scene.as_ref().map_or_else(Vec::new, |s| {
            s.groups
                .iter()
                .map(|g| (g.name.clone(), g.nodes, g.collapsed))
                .collect()
        })
    }

    /// What the box of module `path` says on hover (its repeat group, how the group differs),
    /// when the view is folded and the module is in the tree.
    pub fn box_summary(&self, path: &str) -> Option<String> {
        let s = self.scene.as_ref()?;
        let m = s.fold.as_ref()?.tree.find(path)?;
        Some(s.box_summary(m))
    }

    /// Module boxes on screen: (path, nodes of the pass inside, folded), outer boxes first.
    pub fn module_boxes(&self) -> Vec<(String, u32, bool)> {
        let Some(f) = self.scene.as_ref().and_then(|s| s.fold.as_ref()) else {
            return Vec::new();
        };
        f.layout
            .boxes
            .iter()
            .map(|b| {
                (
                    f.tree.modules[b.module as usize].path.clone(),
                    f.stats[b.module as usize].present,
                    b.folded,
                )
            })
            .collect()
    }

    /// Screen centre of module `path`'s box (its title bar when open), for tests.
    pub fn module_box_pos(&self, ctx: &egui::Context, path: &str) -> Option<Pos2> {
        let f = self.scene.as_ref()?.fold.as_ref()?;
        let b = f.placed(f.tree.find(path)?)?;
        let vp = Viewport::load_ctx(ctx);
        let p = if b.folded {
            Pos2::new((b.rect[0] + b.rect[2]) / 2.0, (b.rect[1] + b.rect[3]) / 2.0)
        } else {
            Pos2::new(
                (b.rect[0] + b.rect[2]) / 2.0,
                b.rect[1] + crate::analysis::fold::layout::TITLE_H / 2.0,
            )
        };
        Some(vp.to_screen(p, self.canvas?))
    }

    /// Canvas rect of module `path`'s box and what the pass on screen did inside it
    /// (added, removed, changed), for tests and benches.
    pub fn module_box(&self, path: &str) -> Option<(Rect, (u32, u32, u32))> {
        let f = self.scene.as_ref()?.fold.as_ref()?;
        let m = f.tree.find(path)?;
        let b = f.placed(m)?;
        let s = &f.stats[m as usize];
        Some((
            Rect::from_min_max(
                Pos2::new(b.rect[0], b.rect[1]),
                Pos2::new(b.rect[2], b.rect[3]),
            ),
            (s.added, s.removed, s.changed),
        ))
    }

    /// The colour a module's box takes from the data overlay (its worst node's).
    pub fn box_tint(&self, path: &str) -> Option<egui::Color32> {
        let f = self.scene.as_ref()?.fold.as_ref()?;
        f.stats[f.tree.find(path)? as usize].tint.map(|(_, c)| c)
    }

    /// The line a module's box carries under its count (its parameters' gradients against the
    /// golden), when it carries one.
    pub fn box_line(&self, path: &str) -> Option<&str> {
        let s = self.scene.as_ref()?;
        s.box_lines.get(path).map(|(_, t)| t.as_str())
    }

    /// Module boxes drawn (0 when the graph is not folded).
    pub fn box_count(&self) -> usize {
        self.scene
            .as_ref()
            .and_then(|s| s.fold.as_ref())
            .map_or(0, |f| f.layout.boxes.len())
    }

    /// The graph is drawn grouped by module.
    pub fn is_folded(&self) -> bool {
        self.scene.as_ref().is_some_and(|s| s.fold.is_some())
    }

    /// Union node count and the number present in the pass on screen.
    pub fn counts(&self) -> (usize, usize) {
        self.scene
            .as_ref()
            .map_or((0, 0), |s| (s.present.len(), s.counted.present))
    }
}

pub fn show(app: &mut App, st: &mut GraphViewState, ui: &mut egui::Ui) {
    if app.phase.is_none() {
        ui.centered_and_justified(|ui| {
            ui.weak(if app.workspace.is_some() {
                "Select a pass in the tree on the left."
            } else {
                "Open a torch_compile_debug folder: File ▸ Open folder…, or drop it here."
            })
        });
        return;
    }
    let fold_request = app.nav.take(|r| match r {
        Nav::Fold(path) => Some(path.clone()),
        _ => None,
    });
    if app
        .nav
        .take(|r| (*r == Nav::KeepView).then_some(()))
        .is_some()
    {
        st.keep_view = true;
    }
    let keep_view = st.keep_view;
    navigation::toolbar(app, st, ui);
    pass_strip::show(app, ui);
    let Some(ph) = &app.phase else { return };
    let (layout, file) = match (ph.layout.clone(), ph.current_file().cloned()) {
        (Some(l), Some(f)) if ph.drawable() => (l, f),
        _ => {
            loading(app, ui);
            return;
        }
    };
    if st
        .scene
        .as_ref()
        .is_none_or(|s| !Arc::ptr_eq(&s.layout, &layout))
    {
        // Another rank's pass keeps the viewport and the open boxes; so does the union layout
        // taking over from the preview of the same phase.
        let after_preview = st
            .scene
            .as_ref()
            .is_some_and(|s| s.preview_of.as_ref() == Some(&ph.key));
        let keep = keep_view || after_preview;
        st.carried_open = keep
            .then(|| st.scene.as_ref().and_then(open_modules))
            .flatten();
        let mut scene = Scene::new(layout.clone());
        scene.preview_of = ph.preview_of.map(|_| ph.key.clone());
        if after_preview {
            scene.opens_folded = st.scene.as_ref().and_then(|s| s.opens_folded);
        }
        st.scene = Some(scene);
        st.scene_a = None;
        st.fit_frames = if keep { 0 } else { 2 };
    }
    st.search.refresh(&file);
    let started = Instant::now();
    let selected = ph.selected.clone();
    let compared = ph.diff_view();
    let fold_tree = ph.fold_for(&layout);
    let side_by_side = st.side_by_side && compared.is_some();
    let diff = compared
        .as_ref()
        .filter(|_| st.diff_overlay || side_by_side)
        .map(|(a, d, _)| (&**a, &**d));
    let tints = data_overlay::tints(app, &mut st.data);
    if let Some(t) = &tints {
        ui.weak(&t.legend);
    }
    let box_lines = data_overlay::box_lines(app, &mut st.data);
    let Some(scene) = st.scene.as_mut() else {
        return;
    };
    scene.box_lines = box_lines;
    let hits = st.search.hit_ids(scene);
    let view = scene::SceneView {
        diff,
        side: scene::Side::After,
        selected: selected.as_deref(),
        cone: st.cone,
        hits_generation: st.search.generation(),
        collapsed: &st.collapsed,
        tints: tints.as_deref(),
    };
    scene.apply(&file, &view, &hits);
    st.diff_counts = scene.counted.diff;
    let tree_known = fold_tree.is_some();
    if scene.group_repeats != st.group_repeats {
        scene.group_repeats = st.group_repeats;
        scene.regroup();
    }
    let refolded = sync_fold(scene, st.fold_mode, fold_tree, ui.available_size());
    if let Some(open) = st.carried_open.take_if(|_| scene.fold.is_some()) {
        reopen(scene, &open);
    } else if refolded && !keep_view {
        st.fit_frames = 1;
    }
    // Kept until the module tree has arrived (the fold it brings must not refit either).
    if keep_view && tree_known {
        st.keep_view = false;
    }
    // The inspector's breadcrumb folds a module.
    if let Some(path) = fold_request
        && let Some(m) = scene.fold.as_ref().and_then(|f| f.tree.find(&path))
        && !scene.is_folded(m)
    {
        scene.toggle(m);
    }

    let full = ui.available_rect_before_wrap().intersect(ui.clip_rect());
    let (rect_a, rect) = if side_by_side {
        let (l, r) = full.split_left_right_at_fraction(0.5);
        (
            Some(l.shrink2(egui::vec2(2.0, 0.0))),
            r.shrink2(egui::vec2(2.0, 0.0)),
        )
    } else {
        (None, full)
    };
    st.canvas = Some(rect);
    navigation::before_frame(app, st, ui, rect);
    if let (Some(ra), Some((a, d, label))) = (rect_a, compared.as_ref()) {
        let scene_a = st.scene_a.get_or_insert_with(|| Scene::new(layout.clone()));
        let view_a = scene::SceneView {
            diff: Some((&**a, &**d)),
            side: scene::Side::Before,
            selected: selected.as_deref(),
            cone: st.cone,
            hits_generation: 0,
            collapsed: &st.collapsed,
            tints: None,
        };
        scene_a.apply(a, &view_a, &[]);
        let expanded = st
            .scene
            .as_ref()
            .and_then(|s| s.fold.as_ref())
            .map(|f| f.expanded().to_vec());
        match (expanded, scene_a.fold.is_some()) {
            (Some(e), true)
                if scene_a
                    .fold
                    .as_ref()
                    .is_some_and(|f| f.expanded() != e.as_slice()) =>
            {
                scene_a.set_expanded(e)
            }
            (Some(e), false) => {
                if let Some(t) = app.phase.as_ref().and_then(|p| p.fold_for(&layout)) {
                    scene_a.set_fold(Some((t, e)));
                }
            }
            (None, true) => scene_a.set_fold(None),
            _ => {}
        }
        let vp = Viewport::load(ui);
        let r = canvas::show(ui, scene_a, ra, vp);
        caption(ui, ra, &format!("A: {label}"));
        if let Some(id) = r.clicked {
            let name = scene_a.layout.union.names().get(id as usize).cloned();
            app.select_node(name);
        }
    }
    groups::paint(ui, st, rect);
    let Some(scene) = st.scene.as_mut() else {
        return;
    };
    let title = side_by_side.then(|| {
        let p = &app
            .phase
            .as_ref()
            .map(|p| (p.passes[p.current].index, p.passes[p.current].name.clone()));
        p.as_ref()
            .map_or_else(String::new, |(i, n)| format!("B: {i:03} {n}"))
    });
    let vp = Viewport::load(ui);
    let response = canvas::show(ui, scene, rect, vp);
    if let Some(t) = title {
        caption(ui, rect, &t);
    }
    if let Some((m, delta)) = response.stepped {
        scene.step_member(m, delta);
    }
    match (response.clicked, response.toggled) {
        (Some(id), _) => {
            let name = scene.layout.union.names().get(id as usize).cloned();
            app.select_node(name);
        }
        (None, Some(m)) => scene.toggle(m),
        (None, None) if response.response.clicked() => app.select_node(None),
        _ => {}
    }
    navigation::after_frame(app, st, ui, &response.response);
    groups::interact(ui, st, rect);
    if let Some(scene) = st.scene.as_ref() {
        st.minimap.show(ui, scene, rect, &file);
    }
    st.last_frame_ms = started.elapsed().as_secs_f32() * 1000.0;
}

/// Paths of the open module boxes of a folded scene.
fn open_modules(scene: &Scene) -> Option<Vec<String>> {
    let f = scene.fold.as_ref()?;
    Some(
        f.expanded()
            .iter()
            .zip(&f.tree.modules)
            .filter(|(open, _)| **open)
            .map(|(_, m)| m.path.clone())
            .collect(),
    )
}

/// Opens the boxes named in `open` (and folds the rest), as far as this tree has them.
fn reopen(scene: &mut Scene, open: &[String]) {
    let Some(f) = &scene.fold else { return };
    let open: std::collections::HashSet<&str> = open.iter().map(String::as_str).collect();
    let e: Vec<bool> = f
        .tree
        .modules
        .iter()
        .enumerate()
        .map(|(i, m)| i == crate::analysis::fold::ROOT as usize || open.contains(m.path.as_str()))
        .collect();
    scene.set_expanded(e);
}

/// Groups the scene by module, or not, as the mode (or the graph's size) says; true when the
/// placement changed (the view then fits it).
///
/// A graph that reads whole at fit (node labels at least `READABLE_PX` on the canvas of size
/// `view`) opens whole; any other opens grouped, at the deepest depth whose box titles still
/// read at fit, whatever its size.
fn sync_fold(
    scene: &mut Scene,
    mode: Option<bool>,
    tree: Option<Arc<crate::analysis::fold::FoldTree>>,
    view: egui::Vec2,
) -> bool {
    let tree = tree.filter(|t| t.modules.len() > 1);
    let view = Rect::from_min_size(Pos2::ZERO, view.max(egui::vec2(100.0, 100.0)));
    let fit = |b: Rect| Viewport::fitting(b, view).zoom;
    if tree.is_some() && scene.opens_folded.is_none() {
        let whole = fit(scene.bounds()) * shapes::FONT_PX >= fold_view::READABLE_PX;
        scene.opens_folded = Some(!whole);
    }
    let auto = scene.opens_folded.unwrap_or(false);
    let want = mode.unwrap_or(auto) && tree.is_some();
    match (want, scene.fold.is_some(), tree) {
        (true, false, Some(t)) => {
            // Each repeat group is one box: 415 layers read as one.
            let groups = scene.repeat_groups(&t);
            let shown: Vec<_> = groups.0.iter().map(|g| g.members[0]).collect();
            let stand_in = fold_view::stand_in_of(&t, &groups.0, &shown);
            // The top level: with the wrappers it opens (`model` holding nearly all the graph,
            // `layers` showing one group box), whose titles need only read.
            let top = t.expanded_to_in(1, &stand_in);
            let reads = |l: &crate::analysis::fold::FoldLayout| {
                let [x0, y0, x1, y1] = l.bounds;
                let b = Rect::from_min_max(Pos2::new(x0, y0), Pos2::new(x1, y1));
                // The smallest title drawn: an open box's when there is one (the root's box
                // has no title to read).
                let open = |b: &&crate::analysis::fold::layout::PlacedBox| {
                    !b.folded && b.module != crate::analysis::fold::ROOT
                };
                let any_open = l.boxes.iter().any(|b| open(&b));
                let deeper = l
                    .boxes
                    .iter()
                    .filter(open)
                    .any(|b| !top.get(b.module as usize).copied().unwrap_or(false));
                let need = if deeper {
                    fold_view::READABLE_PX * fold_view::DEEPER_MARGIN
                } else {
                    fold_view::READABLE_PX
                };
                fit(b) * fold_paint::title_px(!any_open) >= need
            };
            let e = t
                .readable_expansion(
                    scene.layout.union.edges(),
                    &scene.layout.sizes,
                    &stand_in,
                    fold_view::MAX_OPEN_ITEMS,
                    reads,
                )
                .unwrap_or_else(|| t.expanded_to_in(1, &stand_in));
            scene.set_fold_grouped(Some((t, e, groups)));
            true
        }
        (false, true, _) => {
            scene.set_fold(None);
            true
        }
        _ => false,
    }
}

fn caption(ui: &egui::Ui, rect: Rect, text: &str) {
    let painter = ui.painter_at(rect);
    let galley = painter.layout_no_wrap(
        text.to_owned(),
        egui::FontId::proportional(13.0),
        ui.visuals().strong_text_color(),
    );
    let r = Rect::from_min_size(
        rect.min + egui::vec2(6.0, 6.0),
        galley.size() + egui::vec2(10.0, 6.0),
    );
    painter.rect_filled(r, 4.0, ui.visuals().extreme_bg_color);
    painter.galley(
        r.min + egui::vec2(5.0, 3.0),
        galley,
        ui.visuals().strong_text_color(),
    );
}

fn loading(app: &App, ui: &mut egui::Ui) {
    let Some(ph) = &app.phase else { return };
    let loaded = ph.files.iter().filter(|f| f.is_some()).count();
    ui.centered_and_justified(|ui| {
        ui.horizontal_centered(|ui| {
            if let Some(e) = ph.load_errors.get(ph.current).and_then(|e| e.as_deref()) {
                ui.colored_label(ui.visuals().error_fg_color, e);
            } else if let Some(e) = &ph.layout_error {
                ui.colored_label(ui.visuals().error_fg_color, e);
            } else {
                // A pass other than the one drawn first, before the union layout is in.
                let wait = if ph.preview_of.is_some() {
                    let p = &ph.passes[ph.current];
                    format!("pass {:03} {} is not ready yet: ", p.index, p.name)
                } else {
                    String::new()
                };
                let doing = if loaded < ph.passes.len() {
                    format!("{wait}reading passes {loaded}/{}", ph.passes.len())
                } else {
                    let nodes = ph.current_file().map_or(0, |f| f.node_count());
                    format!(
                        "{wait}laying out {nodes} nodes across {} passes…",
                        ph.passes.len()
                    )
                };
                crate::ui::loading::busy(ui, doing);
            }
        });
    });
}

/// The graph tab: the compare bar over the pass graph.
#[derive(Default)]
pub struct GraphTab {
    pub graph: GraphViewState,
    pub compare: crate::ui::compare_bar::CompareBarState,
}

impl crate::ui::tab::Tab for GraphTab {
    fn id(&self) -> crate::app::TabId {
        crate::app::TabId::GRAPH
    }

    fn title(&self) -> &'static str {
        "Graph"
    }

    fn ui(&mut self, app: &mut App, view: &mut crate::ui::ViewState, ui: &mut egui::Ui) {
        if app
            .nav
            .take(|r| (*r == Nav::SideBySide).then_some(()))
            .is_some()
        {
            self.graph.side_by_side = true;
        }
        crate::ui::compare_bar::show(app, &mut self.compare, &mut view.show_text_diff, ui);
        show(app, &mut self.graph, ui);
    }
}
