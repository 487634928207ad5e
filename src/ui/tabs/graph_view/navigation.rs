//! Moving around the graph: the toolbar, keyboard shortcuts, fit / zoom to selection, walking
//! producers and consumers with the arrow keys, wheel panning.

use super::{GraphViewState, VIEW_ID};
use crate::app::App;
use egui::{Pos2, Rect, Vec2};
use egui_graphs::MetadataFrame;

/// egui_graphs' zoom and pan, read and written through egui memory.
/// Screen = canvas × zoom + pan + canvas-rect top-left.
#[derive(Debug, Clone, Copy)]
pub struct Viewport {
    pub zoom: f32,
    pub pan: Vec2,
}

impl Viewport {
    pub fn load(ui: &egui::Ui) -> Self {
        let m = MetadataFrame::new(Some(VIEW_ID.to_string())).load(ui);
        Viewport {
            zoom: m.zoom,
            pan: m.pan,
        }
    }

    /// The same as [`Viewport::load`], from the context (tests and benches).
    pub fn load_ctx(ctx: &egui::Context) -> Self {
        let m = meta_ctx(ctx);
        Viewport {
            zoom: m.zoom,
            pan: m.pan,
        }
    }

    /// The same as [`Viewport::save`], from the context (benches).
    pub fn save_ctx(self, ctx: &egui::Context) {
        let mut m = meta_ctx(ctx);
        m.zoom = self.zoom;
        m.pan = self.pan;
        ctx.data_mut(|d| d.insert_persisted(meta_key(), m));
    }

    pub fn save(self, ui: &mut egui::Ui) {
        let mut m = MetadataFrame::new(Some(VIEW_ID.to_string())).load(ui);
        m.zoom = self.zoom;
        m.pan = self.pan;
        m.save(ui);
    }

    pub fn to_screen(self, canvas: Pos2, rect: Rect) -> Pos2 {
        (canvas.to_vec2() * self.zoom + self.pan).to_pos2() + rect.min.to_vec2()
    }

    pub fn to_canvas(self, screen: Pos2, rect: Rect) -> Pos2 {
        ((screen - rect.min - self.pan) / self.zoom).to_pos2()
    }

    /// Zoom and pan that show canvas rect `r` whole inside `view` (a screen rect).
    pub fn fitting(r: Rect, view: Rect) -> Self {
        let size = r.size().max(Vec2::splat(1.0));
        let zoom = ((view.width() / size.x).min(view.height() / size.y) * 0.94).clamp(1e-4, 2.0);
        Viewport {
            zoom,
            pan: view.size() / 2.0 - r.center().to_vec2() * zoom,
        }
    }

    /// Keeps the zoom, puts canvas point `p` at the centre of `view`.
    pub fn centred_on(self, p: Pos2, view: Rect) -> Self {
        Viewport {
            zoom: self.zoom,
            pan: view.size() / 2.0 - p.to_vec2() * self.zoom,
        }
    }

    /// Zooms by `factor` keeping the screen point `anchor` fixed.
    pub fn zoomed(self, factor: f32, anchor: Pos2, view: Rect) -> Self {
        let canvas = self.to_canvas(anchor, view);
        let zoom = (self.zoom * factor).clamp(1e-4, 4.0);
        let pan = (anchor - view.min) - canvas.to_vec2() * zoom;
        Viewport { zoom, pan }
    }
}

/// The key `MetadataFrame::load` uses (it hashes its own id once more).
fn meta_key() -> egui::Id {
    egui::Id::new(MetadataFrame::new(Some(VIEW_ID.to_string())).get_id())
}

fn meta_ctx(ctx: &egui::Context) -> MetadataFrame {
    ctx.data_mut(|d| d.get_persisted(meta_key()))
        .unwrap_or_else(|| MetadataFrame::new(Some(VIEW_ID.to_string())))
}

pub fn toolbar(app: &mut App, st: &mut GraphViewState, ui: &mut egui::Ui) {
    // Wrapped: a narrow window must not push the toolbar (and the canvas) under the inspector.
    ui.horizontal_wrapped(|ui| {
        // A control that does not fit moves to the next row whole, never broken in two
        // ("Change" / "s: 0").
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
        pass_picker(app, ui);
        super::rank_picker::show(app, ui);
        ui.separator();
        super::search::bar(app, st, ui);
        ui.separator();
        ui.toggle_value(&mut st.diff_overlay, "Diff").on_hover_text(
            "Colour what this pass changed: added green, changed amber, removed as red ghosts (D)",
        );
        ui.toggle_value(&mut st.side_by_side, "Side by side")
            .on_hover_text("The compared graph (A) left of this pass (B), panning together (S)");
        ui.toggle_value(&mut st.cone, "Cone")
            .on_hover_text("Highlight the selection's producers (blue) and users (orange); C");
        super::data_overlay::controls(app, &mut st.data, ui);
        fold_controls(app, st, ui);
        super::changes::menu(app, st, ui);
        if ui
            .button("Fit")
            .on_hover_text("Show the whole graph (F)")
            .clicked()
        {
            st.fit_frames = 1;
        }
    });
}

/// `Modules` (group nodes by module) and the fold menu.
fn fold_controls(app: &App, st: &mut GraphViewState, ui: &mut egui::Ui) {
    let Some(ph) = &app.phase else { return };
    let tree = ph.layout.as_ref().and_then(|l| ph.fold_for(l));
    let Some(tree) = tree.filter(|t| t.modules.len() > 1) else {
        return;
    };
    let mut on = st.is_folded();
    if ui
        .toggle_value(&mut on, "Modules")
        .on_hover_text(
            "Group nodes by module into boxes: click a box to open it, Backspace folds the \
             selection's box, Enter opens the box under the pointer",
        )
        .changed()
    {
        st.fold_mode = Some(on);
    }
    if !on {
        return;
    }
    ui.toggle_value(&mut st.group_repeats, "Repeats")
        .on_hover_text(
            "Draw numbered sub-modules of one structure (layers.0–414) as one box: open it to see \
         one of them, ◀ ▶ for the others. Off: a box for every one.",
        );
    let max_depth = tree.modules.iter().map(|m| m.depth).max().unwrap_or(0);
    let mut chosen: Option<Vec<bool>> = None;
    ui.menu_button("Fold", |ui| {
        // Repeat groups stay one box each, whatever the depth.
        let stand_in = st
            .scene
            .as_ref()
            .and_then(|s| s.fold.as_ref())
            .map(|f| f.layout.stand_in.clone())
            .unwrap_or_default();
        for d in 1..=max_depth {
            let e = tree.expanded_to_in(d, &stand_in);
            let shown = tree.visible_items_in(&e, &stand_in);
            if ui
                .button(format!("Fold to depth {d}  ({shown} boxes and nodes)"))
                .clicked()
            {
                chosen = Some(e);
                ui.close();
            }
        }
        if ui.button("Expand all").clicked() {
            chosen = Some(vec![true; tree.modules.len()]);
            ui.close();
        }
    });
    if let (Some(e), Some(scene)) = (chosen, st.scene.as_mut()) {
        scene.set_expanded(e);
        st.fit_frames = 1;
    }
}

fn pass_picker(app: &mut App, ui: &mut egui::Ui) {
    let Some(ph) = &app.phase else { return };
    let n = ph.passes.len();
    let mut target = None;
    if ui
        .add_enabled(ph.current > 0, egui::Button::new("◀"))
        .on_hover_text("Previous pass ([)")
        .clicked()
    {
        target = Some(ph.current.saturating_sub(1));
    }
    let label = |i: usize| {
        let p = &ph.passes[i];
        let nodes = ph.files[i]
            .as_ref()
            .map_or(String::from("…"), |f| f.node_count().to_string());
        format!("{:03} {}  ({nodes} nodes)", p.index, p.name)
    };
    let current = label(ph.current);
    egui::ComboBox::from_id_salt("pass_picker")
        .selected_text(current)
        .width(300.0)
        .show_ui(ui, |ui| {
            for i in 0..n {
                if ui.selectable_label(i == ph.current, label(i)).clicked() {
                    target = Some(i);
                }
            }
        });
    if ui
        .add_enabled(ph.current + 1 < n, egui::Button::new("▶"))
        .on_hover_text("Next pass (])")
        .clicked()
    {
        target = Some(ph.current + 1);
    }
    ui.weak(format!("{}/{}", ph.current + 1, n));
    if let Some(t) = target {
        let delta = t as isize - ph.current as isize;
        app.step_pass(delta);
    }
}

/// Fit, reveal, keyboard, wheel and pinch, applied to the viewport before egui_graphs draws
/// the frame (so the frame shows them without lag).
pub fn before_frame(app: &mut App, st: &mut GraphViewState, ui: &mut egui::Ui, rect: Rect) {
    let mut vp = Viewport::load(ui);
    let before = (vp.zoom, vp.pan);
    keyboard(app, st, ui, rect, &mut vp);
    wheel(ui, rect, &mut vp);
    if st.fit_frames > 0
        && let Some(scene) = &st.scene
    {
        vp = Viewport::fitting(scene.bounds(), rect);
        st.fit_frames -= 1;
    }
    if app
        .nav
        .take(|r| (*r == crate::app::Nav::RevealSelected).then_some(()))
        .is_some()
        && let Some(ph) = app.phase.as_ref()
    {
        // A node hidden in a folded box: open the boxes around it first.
        if let (Some(scene), Some(sel)) = (st.scene.as_mut(), ph.selected.as_deref())
            && let Some(id) = scene.layout.union.id(sel)
        {
            scene.reveal(id);
        }
        if let Some(p) = selected_pos(app, st) {
            vp = reveal(vp, p, rect);
        }
    }
    if (vp.zoom, vp.pan) != before {
        vp.save(ui);
    }
}

/// Brings canvas point `p` on screen at a zoom where labels are readable.
fn reveal(vp: Viewport, p: Pos2, rect: Rect) -> Viewport {
    let zoomed = Viewport {
        zoom: vp.zoom.max(0.9),
        ..vp
    };
    zoomed.centred_on(p, rect)
}

fn selected_pos(app: &App, st: &GraphViewState) -> Option<Pos2> {
    let scene = st.scene.as_ref()?;
    let sel = app.phase.as_ref()?.selected.as_deref()?;
    scene.pos(scene.layout.union.id(sel)?)
}

fn keyboard(
    app: &mut App,
    st: &mut GraphViewState,
    ui: &mut egui::Ui,
    rect: Rect,
    vp: &mut Viewport,
) {
    use crate::ui::shortcuts::{GRAPH, Graph, pressed};
    for action in pressed(GRAPH, ui.ctx()) {
        match action {
            Graph::Search => st.search.focus = true,
            Graph::Fit => st.fit_frames = 1,
            Graph::PreviousPass => app.step_pass(-1),
            Graph::NextPass => app.step_pass(1),
            Graph::PreviousChange => super::changes::jump(app, st, false),
            Graph::NextChange => super::changes::jump(app, st, true),
            Graph::Cone => st.cone = !st.cone,
            Graph::DiffOverlay => st.diff_overlay = !st.diff_overlay,
            Graph::SideBySide => st.side_by_side = !st.side_by_side,
            Graph::Deselect => app.select_node(None),
            Graph::CloseSelectedBox => {
                if let Some(scene) = st.scene.as_mut()
                    && let Some(sel) = app.phase.as_ref().and_then(|p| p.selected.as_deref())
                    && let Some(id) = scene.layout.union.id(sel)
                    && let Some(m) = scene.open_box_of(id)
                {
                    scene.toggle(m);
                }
            }
            Graph::ToggleHoveredBox => {
                if let Some(scene) = st.scene.as_mut()
                    && let Some(p) = ui.input(|i| i.pointer.hover_pos())
                    && let Some(super::scene::Item::Box(m)) = scene.pick(vp.to_canvas(p, rect))
                {
                    scene.toggle(m);
                }
            }
            Graph::ZoomToSelection => {
                if let Some(p) = selected_pos(app, st) {
                    *vp = Viewport { zoom: 1.0, ..*vp }.centred_on(p, rect);
                }
            }
            Graph::ZoomIn => *vp = vp.zoomed(1.25, rect.center(), rect),
            Graph::ZoomOut => *vp = vp.zoomed(0.8, rect.center(), rect),
            Graph::WalkUp => walk_to(app, st, Walk::Up),
            Graph::WalkDown => walk_to(app, st, Walk::Down),
            Graph::WalkLeft => walk_to(app, st, Walk::Left),
            Graph::WalkRight => walk_to(app, st, Walk::Right),
        }
    }
}

fn walk_to(app: &mut App, st: &GraphViewState, dir: Walk) {
    if let Some(next) = walk(app, st, dir) {
        app.reveal_node(next);
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Walk {
    Up,
    Down,
    Left,
    Right,
}

/// The node one step away from the selection: its first producer/user, or its neighbour in
/// the same layer.
fn walk(app: &App, st: &GraphViewState, dir: Walk) -> Option<String> {
    let scene = st.scene.as_ref()?;
    let names = scene.layout.union.names();
    let sel = app
        .phase
        .as_ref()?
        .selected
        .as_deref()
        .and_then(|s| scene.layout.union.id(s));
    let Some(sel) = sel else {
        // Nothing selected: start at the top-left-most node of the pass.
        return first_node(scene).map(|i| names[i as usize].clone());
    };
    let x = |i: u32| scene.pos(i).map_or(0.0, |p| p.x);
    let next = match dir {
        Walk::Up => scene
            .pass_edges
            .iter()
            .filter(|e| e.1 == sel)
            .map(|e| e.0)
            .min_by(|a, b| x(*a).total_cmp(&x(*b))),
        Walk::Down => scene
            .pass_edges
            .iter()
            .filter(|e| e.0 == sel)
            .map(|e| e.1)
            .min_by(|a, b| x(*a).total_cmp(&x(*b))),
        Walk::Left | Walk::Right => {
            let layer = scene.layout.layout.layer.get(sel as usize).copied();
            let here = x(sel);
            let same = (0..scene.present.len() as u32).filter(|&i| {
                scene.present[i as usize]
                    && scene.layout.layout.layer.get(i as usize).copied() == layer
                    && i != sel
            });
            if dir == Walk::Left {
                same.filter(|&i| x(i) < here)
                    .max_by(|a, b| x(*a).total_cmp(&x(*b)))
            } else {
                same.filter(|&i| x(i) > here)
                    .min_by(|a, b| x(*a).total_cmp(&x(*b)))
            }
        }
    }?;
    names.get(next as usize).cloned()
}

fn first_node(scene: &super::scene::Scene) -> Option<u32> {
    (0..scene.present.len() as u32)
        .filter(|&i| scene.present[i as usize] && scene.pos(i).is_some())
        .min_by(|&a, &b| {
            let (pa, pb) = (
                scene.pos(a).unwrap_or_default(),
                scene.pos(b).unwrap_or_default(),
            );
            (pa.y, pa.x)
                .partial_cmp(&(pb.y, pb.x))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
}

/// Plain wheel pans, Ctrl+wheel and pinch zoom around the pointer, in proportion to the
/// gesture (egui_graphs' own zoom moves by fixed steps per frame, which overshoots).
fn wheel(ui: &egui::Ui, rect: Rect, vp: &mut Viewport) {
    let Some(pointer) = ui
        .input(|i| i.pointer.hover_pos())
        .filter(|p| rect.contains(*p))
    else {
        return;
    };
    if ui.ctx().layer_id_at(pointer) != Some(ui.layer_id()) {
        return;
    }
    let (zoom, scroll) = ui.input(|i| (i.zoom_delta(), i.smooth_scroll_delta));
    if zoom != 1.0 {
        *vp = vp.zoomed(zoom, pointer, rect);
    } else if scroll != Vec2::ZERO {
        vp.pan += scroll;
    }
}

/// Dragging the background pans.
pub fn after_frame(
    _app: &mut App,
    _st: &mut GraphViewState,
    ui: &mut egui::Ui,
    response: &egui::Response,
) {
    if response.dragged_by(egui::PointerButton::Primary)
        || response.dragged_by(egui::PointerButton::Middle)
    {
        let mut vp = Viewport::load(ui);
        vp.pan += response.drag_delta();
        vp.save(ui);
    }
}
