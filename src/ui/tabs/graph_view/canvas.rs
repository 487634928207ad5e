//! Our own canvas over egui_graphs' model: the scene's spatial index says what is on screen,
//! and only that is shaped (with the model's `DisplayNode`/`DisplayEdge` shapes) and painted.
//!
//! egui_graphs' `GraphView` walks and clones every node each frame and asks for a repaint
//! every frame; here a frame costs what is visible, and nothing asks for the next frame: egui
//! paints again only on input, a state change or a job's result.

use super::VIEW_ID;
use super::fold_paint;
use super::navigation::Viewport;
use super::scene::{Item, Scene};
use egui::{Pos2, Rect, Sense, Shape};
use egui_graphs::{DisplayEdge, DisplayNode, DrawContext, MetadataFrame, SettingsStyle};

/// What the canvas saw this frame.
pub struct CanvasResponse {
    pub response: egui::Response,
    /// A node (union id) clicked.
    pub clicked: Option<u32>,
    /// A module box whose title was clicked (expand / fold it).
    pub toggled: Option<u32>,
    /// An open group member's ◀ or ▶ was clicked: (module, −1 or +1).
    pub stepped: Option<(u32, isize)>,
}

/// Paints `scene` in `rect` with viewport `vp` and reports clicks.
pub fn show(ui: &mut egui::Ui, scene: &mut Scene, rect: Rect, vp: Viewport) -> CanvasResponse {
    let response = ui.allocate_rect(rect, Sense::click_and_drag());
    let to_canvas = |p: Pos2| vp.to_canvas(p, rect);
    let hover = response
        .hover_pos()
        .filter(|_| !response.dragged())
        .map(to_canvas);
    let hovered = hover.and_then(|p| scene.pick(p));
    scene.set_hovered(hovered.and_then(Item::node));
    let painter = ui.painter_at(rect);
    let mut meta = MetadataFrame::new(Some(VIEW_ID.to_string()));
    meta.zoom = vp.zoom;
    meta.pan = vp.pan + rect.min.to_vec2();
    let style = SettingsStyle::new();
    let ctx = DrawContext {
        ctx: ui.ctx(),
        painter: &painter,
        style: &style,
        is_directed: true,
        meta: &meta,
    };
    let (a, b) = (to_canvas(rect.min), to_canvas(rect.max));
    // A margin so edges and outlines that start just off screen are still drawn.
    let m = 40.0 / vp.zoom.max(1e-4);
    let area = [a.x - m, a.y - m, b.x + m, b.y + m];
    // A whole model at fit: nodes are a pixel or two and edges invisible, so only the boxes
    // are asked of the index, and the nodes come as binned cells (a few thousand at most,
    // however large the graph).
    let dots = vp.zoom < DOT_ZOOM;
    let mut boxes = Vec::new();
    let mut edges = Vec::new();
    let mut nodes = Vec::new();
    if dots {
        boxes = scene.visible_boxes(area);
    } else {
        for item in scene.visible(area) {
            match item {
                Item::Box(_) | Item::Bundle(_) => boxes.push(item),
                Item::Edge(_) => edges.push(item),
                Item::Node(_) => nodes.push(item),
            }
        }
    }
    // Outer boxes first, so nested ones sit on top of their parents.
    boxes.sort_by_key(|i| scene.paint_order(*i));
    let mut shapes: Vec<Shape> = Vec::new();
    for &item in &boxes {
        fold_paint::item(scene, item, &ctx, &mut shapes);
    }
    if dots {
        let mut mesh = egui::Mesh::default();
        for (c, fill) in scene.dot_bins(vp.zoom).query(area) {
            let r = Rect::from_min_max(
                vp.to_screen(Pos2::new(c[0], c[1]), rect),
                vp.to_screen(Pos2::new(c[2], c[3]), rect),
            );
            mesh.add_colored_rect(r, fill);
        }
        shapes.push(Shape::mesh(mesh));
    }
    for item in edges {
        let Item::Edge(e) = item else { continue };
        let Some((edge, start, end)) = scene.edge_parts(e) else {
            continue;
        };
        let mut shape = super::shapes::EdgeShape::from(edge.props().clone());
        shapes.extend(DisplayEdge::shapes(&mut shape, start, end, &ctx));
    }
    for item in nodes {
        let Item::Node(id) = item else { continue };
        if let Some(node) = scene.node_mut(id) {
            let props = node.props().clone();
            let display = node.display_mut();
            display.update(&props);
            shapes.extend(display.shapes(&ctx));
        }
    }
    painter.extend(shapes);
    finish(ui, scene, rect, vp, response, boxes)
}

/// Below this zoom, nodes are drawn as binned dots (see [`Scene::dot_bins`]).
const DOT_ZOOM: f32 = 0.04;

/// Clicks on nodes, and the box widgets (see below).
fn finish(
    ui: &mut egui::Ui,
    scene: &mut Scene,
    rect: Rect,
    vp: Viewport,
    response: egui::Response,
    boxes: Vec<Item>,
) -> CanvasResponse {
    let to_canvas = |p: Pos2| vp.to_canvas(p, rect);
    let mut clicked = None;
    if response.clicked()
        && let Some(p) = response.interact_pointer_pos().map(to_canvas)
        && let Some(Item::Node(id)) = scene.pick(p)
    {
        clicked = Some(id);
    }
    // Each box on screen is a widget (a folded box whole, an open one by its title bar): it
    // takes the click that opens or folds it, and says its module to screen readers and tests.
    let mut toggled = None;
    let mut stepped = None;
    for item in boxes {
        let Item::Box(m) = item else { continue };
        let Some((area, path)) = scene.box_hit_area(m) else {
            continue;
        };
        let hit = Rect::from_min_max(vp.to_screen(area.min, rect), vp.to_screen(area.max, rect))
            .intersect(rect);
        if hit.width() < 1.0 || hit.height() < 1.0 {
            continue;
        }
        let r = ui.interact(hit, response.id.with(("module", m)), Sense::click());
        r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Button, true, &path));
        let r = r.on_hover_ui(|ui| {
            ui.label(scene.box_summary(m));
        });
        if r.clicked() {
            toggled = Some(m);
        }
        // Added after the title bar's widget, so they take their clicks first.
        for (k, area) in scene.member_arrows(m).into_iter().flatten().enumerate() {
            let hit =
                Rect::from_min_max(vp.to_screen(area.min, rect), vp.to_screen(area.max, rect))
                    .intersect(rect);
            if hit.width() < 1.0 || hit.height() < 1.0 {
                continue;
            }
            let (delta, word) = if k == 0 {
                (-1, "previous")
            } else {
                (1, "next")
            };
            let label = format!("{word} of {path}'s group");
            let r = ui.interact(hit, response.id.with(("member", m, k)), Sense::click());
            r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Button, true, &label));
            if r.on_hover_text(&label).clicked() {
                stepped = Some((m, delta));
                toggled = None;
            }
        }
    }
    CanvasResponse {
        response,
        clicked,
        toggled,
        stepped,
    }
}
