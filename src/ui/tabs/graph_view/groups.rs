//! Sub-graphs of higher-order ops (`cond` branches, loop bodies) drawn as labelled boxes behind
//! their nodes; clicking a box's title folds or unfolds it.

use super::GraphViewState;
use super::navigation::Viewport;
use egui::{Color32, Rect, Sense, Stroke, StrokeKind, Vec2};

const TITLE_H: f32 = 18.0;
const PAD: f32 = 6.0;
const ACCENT: Color32 = crate::ui::palette::GROUP;

/// Screen rects of each group's body and title, in `scene.groups` order.
fn geometry(st: &GraphViewState, vp: Viewport, canvas: Rect) -> Vec<(Rect, Rect)> {
    let Some(scene) = &st.scene else {
        return Vec::new();
    };
    scene
        .groups
        .iter()
        .map(|g| {
            let r = Rect::from_min_max(
                vp.to_screen(g.rect.min, canvas),
                vp.to_screen(g.rect.max, canvas),
            )
            .expand(PAD * vp.zoom.min(1.0));
            let body = if g.collapsed {
                Rect::from_min_size(r.min, Vec2::new(r.width().max(160.0), TITLE_H + 6.0))
            } else {
                r
            };
            // The title sits inside the box's top edge so neighbouring boxes' titles never overlap.
            let body = Rect::from_min_max(body.min - Vec2::new(0.0, TITLE_H), body.max);
            let title = Rect::from_min_size(body.min, Vec2::new(body.width(), TITLE_H));
            (body, title)
        })
        .collect()
}

/// Paints the boxes; called before egui_graphs so they sit behind the nodes.
pub fn paint(ui: &mut egui::Ui, st: &GraphViewState, canvas: Rect) {
    let Some(scene) = &st.scene else { return };
    let vp = Viewport::load(ui);
    let painter = ui.painter_at(canvas);
    for (g, (body, title)) in scene.groups.iter().zip(geometry(st, vp, canvas)) {
        if !canvas.intersects(body.union(title)) {
            continue;
        }
        painter.rect(
            body,
            6.0,
            ACCENT.gamma_multiply(0.08),
            Stroke::new(1.2, ACCENT.gamma_multiply(0.7)),
            StrokeKind::Outside,
        );
        let sign = if g.collapsed { "[+]" } else { "[−]" };
        let text = format!("{sign} {}  ({} nodes)", g.name, g.nodes);
        let galley = painter.layout_no_wrap(text, egui::FontId::proportional(11.0), ACCENT);
        painter.with_clip_rect(title.intersect(canvas)).galley(
            title.left_center() + Vec2::new(4.0, -galley.size().y / 2.0),
            galley,
            ACCENT,
        );
    }
}

/// The fold toggles; called after egui_graphs so the titles win the click over the canvas.
pub fn interact(ui: &mut egui::Ui, st: &mut GraphViewState, canvas: Rect) {
    let vp = Viewport::load(ui);
    let names: Vec<String> = st.scene.as_ref().map_or_else(Vec::new, |s| {
        s.groups.iter().map(|g| g.name.clone()).collect()
    });
    let mut toggle = None;
    for (name, (_, title)) in names.iter().zip(geometry(st, vp, canvas)) {
        let visible = title.intersect(canvas);
        if !visible.is_positive() {
            continue;
        }
        let resp = ui.interact(visible, ui.id().with(("group", name)), Sense::click());
        let label = format!("fold {name}");
        resp.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Button, true, &label));
        if resp
            .on_hover_text("Fold or unfold this sub-graph")
            .clicked()
        {
            toggle = Some(name.clone());
        }
    }
    if let Some(name) = toggle {
        match st.collapsed.iter().position(|c| *c == name) {
            Some(i) => {
                st.collapsed.remove(i);
            }
            None => st.collapsed.push(name),
        }
    }
}
