//! How one FX node and one edge are painted inside egui_graphs.
//!
//! egui_graphs walks every node and edge each frame and clones both end nodes per edge, so the
//! payloads here are cheap to clone (`Arc` + `Copy` flags) and `shapes` returns nothing for
//! what is off screen or absent from the current pass: that culling is what keeps thousands of
//! nodes smooth. Text is drawn only when it would be legible (level of detail).

use crate::ui::palette;
use egui::{Color32, CornerRadius, Pos2, Rect, Shape, Stroke, StrokeKind, Vec2};
use egui_graphs::{DisplayEdge, DisplayNode, DrawContext, EdgeProps, Node, NodeProps};
use petgraph::Directed;
use petgraph::graph::DefaultIx;
use std::sync::Arc;

/// Below this on-screen font size labels are skipped: unreadable, and the costliest part.
const MIN_TEXT_PX: f32 = 5.5;
/// A node's name at zoom 1.
pub const FONT_PX: f32 = 12.0;

/// What a node shows; rebuilt when the pass changes, shared by clones.
#[derive(Debug)]
pub struct NodeLook {
    pub name: String,
    pub target: String,
    pub subtitle: String,
    pub fill: Color32,
    pub family: crate::analysis::op_family::OpFamily,
    pub size: Vec2,
}

/// How a node is emphasised right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mark {
    #[default]
    Plain,
    /// Upstream of the selection (its producers, transitively).
    Upstream,
    /// Downstream of the selection (its users, transitively).
    Downstream,
    /// Outside the highlighted cone: drawn faded.
    Faded,
    /// A search hit.
    Hit,
}

/// What the compared pass did to a node or edge (the diff overlay).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DiffMark {
    #[default]
    Same,
    Added,
    Changed,
    /// Gone in the pass on screen: drawn as a ghost where it was.
    Removed,
}

impl DiffMark {
    pub fn color(self) -> Option<Color32> {
        match self {
            DiffMark::Same => None,
            DiffMark::Added => Some(palette::ADDED),
            DiffMark::Changed => Some(palette::CHANGED),
            DiffMark::Removed => Some(crate::ui::palette::REMOVED),
        }
    }
}

#[derive(Debug, Clone)]
pub struct NodeData {
    pub look: Arc<NodeLook>,
    /// The node is drawn (it exists in the pass on screen, or is a removed node's ghost).
    pub present: bool,
    pub selected: bool,
    pub mark: Mark,
    pub diff: DiffMark,
    /// A fill chosen by the data overlay, instead of the op family's.
    pub tint: Option<Color32>,
    /// How bad the tinted value is (higher is worse), for a folded box to take its worst node's.
    pub tint_severity: Option<f32>,
}

#[derive(Debug, Clone)]
pub struct EdgeData {
    /// Canvas polyline from the layout (source bottom → target top, through bend points).
    pub route: Arc<[Pos2]>,
    pub present: bool,
    /// Drawn as a straight segment (too long to route): drawn fainter.
    pub direct: bool,
    pub mark: Mark,
    pub diff: DiffMark,
}

pub type FxGraphUi =
    egui_graphs::Graph<NodeData, EdgeData, Directed, DefaultIx, NodeShape, EdgeShape>;
pub type FxNodeUi = egui_graphs::Node<NodeData, EdgeData, Directed, DefaultIx, NodeShape>;
pub type FxEdgeUi =
    egui_graphs::Edge<NodeData, EdgeData, Directed, DefaultIx, NodeShape, EdgeShape>;

#[derive(Debug, Clone)]
pub struct NodeShape {
    loc: Pos2,
    data: NodeData,
    hovered: bool,
}

impl From<NodeProps<NodeData>> for NodeShape {
    fn from(p: NodeProps<NodeData>) -> Self {
        NodeShape {
            loc: p.location(),
            hovered: p.hovered,
            data: p.payload,
        }
    }
}

impl NodeShape {
    fn canvas_rect(&self) -> Rect {
        Rect::from_center_size(self.loc, self.data.look.size)
    }
}

impl DisplayNode<NodeData, EdgeData, Directed, DefaultIx> for NodeShape {
    fn closest_boundary_point(&self, dir: Vec2) -> Pos2 {
        // Edges follow the layout's routes, so this only serves egui_graphs' own fallbacks.
        let half = self.data.look.size / 2.0;
        let d = dir.normalized();
        let t = (half.x / d.x.abs().max(1e-6)).min(half.y / d.y.abs().max(1e-6));
        self.loc + d * t
    }

    fn shapes(&mut self, ctx: &DrawContext) -> Vec<Shape> {
        if !self.data.present {
            return Vec::new();
        }
        let zoom = ctx.meta.zoom;
        let rect = Rect::from_center_size(
            ctx.meta.canvas_to_screen_pos(self.loc),
            self.data.look.size * zoom,
        );
        if !ctx.painter.clip_rect().intersects(rect) {
            return Vec::new();
        }
        let dark = ctx.ctx.global_style().visuals.dark_mode;
        let look = &self.data.look;
        let mut fill = self.data.tint.unwrap_or(look.fill);
        if self.data.mark == Mark::Faded || self.data.diff == DiffMark::Removed {
            fill = fill.gamma_multiply(0.25);
        }
        let radius = CornerRadius::same((6.0 * zoom).clamp(0.0, 8.0) as u8);
        let mut shapes = Vec::with_capacity(5);
        shapes.push(Shape::rect_filled(rect, radius, fill));
        if let Some(stroke) = self.outline(zoom, dark) {
            shapes.push(Shape::rect_stroke(
                rect,
                radius,
                stroke,
                StrokeKind::Outside,
            ));
        }
        let font_px = FONT_PX * zoom;
        if font_px >= MIN_TEXT_PX {
            self.labels(ctx, rect, font_px, &mut shapes);
        }
        shapes
    }

    fn update(&mut self, state: &NodeProps<NodeData>) {
        self.loc = state.location();
        self.hovered = state.hovered;
        self.data = state.payload.clone();
    }

    fn is_inside(&self, pos: Pos2) -> bool {
        // Ghosts of removed nodes are shown, not picked: they are not in the pass on screen.
        self.data.present && self.data.diff != DiffMark::Removed && self.canvas_rect().contains(pos)
    }
}

impl NodeShape {
    fn outline(&self, zoom: f32, dark: bool) -> Option<Stroke> {
        let w = (2.5 * zoom).clamp(1.0, 3.0);
        let fg = if dark { Color32::WHITE } else { Color32::BLACK };
        if self.data.selected {
            return Some(Stroke::new(w + 1.0, palette::SELECTED));
        }
        match self.data.mark {
            Mark::Upstream => Some(Stroke::new(w, palette::UPSTREAM)),
            Mark::Downstream => Some(Stroke::new(w, palette::DOWNSTREAM)),
            Mark::Hit => Some(Stroke::new(w, palette::HIT)),
            _ if self.hovered => Some(Stroke::new(w, fg)),
            // What the compared pass did, when nothing more pressing is shown.
            _ => self
                .data
                .diff
                .color()
                .map(|c| Stroke::new((3.0 * zoom).clamp(1.5, 3.5), c)),
        }
    }

    fn labels(&self, ctx: &DrawContext, rect: Rect, font_px: f32, shapes: &mut Vec<Shape>) {
        let look = &self.data.look;
        let text_color = if self.data.mark == Mark::Faded || self.data.diff == DiffMark::Removed {
            Color32::from_white_alpha(90)
        } else {
            Color32::WHITE
        };
        let lines = [
            (
                look.name.as_str(),
                egui::FontId::proportional(font_px),
                text_color,
            ),
            (
                look.target.as_str(),
                egui::FontId::proportional(font_px * 0.85),
                text_color.gamma_multiply(0.85),
            ),
            (
                look.subtitle.as_str(),
                egui::FontId::monospace(font_px * 0.8),
                text_color.gamma_multiply(0.75),
            ),
        ];
        let line_h = rect.height() / 3.2;
        let mut y = rect.top() + line_h * 0.2;
        for (text, font, color) in lines {
            if !text.is_empty() {
                let galley = ctx.painter.layout_no_wrap(text.to_owned(), font, color);
                let x = rect.center().x - galley.size().x.min(rect.width() - 4.0) / 2.0;
                shapes.push(Shape::galley(Pos2::new(x, y), galley, color));
            }
            y += line_h;
        }
    }
}

#[derive(Debug, Clone)]
pub struct EdgeShape {
    data: EdgeData,
}

impl From<EdgeProps<EdgeData>> for EdgeShape {
    fn from(p: EdgeProps<EdgeData>) -> Self {
        EdgeShape { data: p.payload }
    }
}

impl DisplayEdge<NodeData, EdgeData, Directed, DefaultIx, NodeShape> for EdgeShape {
    fn shapes(
        &mut self,
        start: &Node<NodeData, EdgeData, Directed, DefaultIx, NodeShape>,
        end: &Node<NodeData, EdgeData, Directed, DefaultIx, NodeShape>,
        ctx: &DrawContext,
    ) -> Vec<Shape> {
        if !self.data.present || !start.payload().present || !end.payload().present {
            return Vec::new();
        }
        let route = &self.data.route;
        if route.len() < 2 {
            return Vec::new();
        }
        // Cull on the route's bounding box before transforming every point.
        let bbox = Rect::from_points(route);
        let screen_bbox = Rect::from_min_max(
            ctx.meta.canvas_to_screen_pos(bbox.min),
            ctx.meta.canvas_to_screen_pos(bbox.max),
        );
        let clip = ctx.painter.clip_rect();
        if !clip.intersects(screen_bbox.expand(4.0)) {
            return Vec::new();
        }
        let dark = ctx.ctx.global_style().visuals.dark_mode;
        let mut stroke = edge_stroke(self.data.mark, self.data.direct, dark, ctx.meta.zoom);
        if let (Some(c), Mark::Plain) = (self.data.diff.color(), self.data.mark) {
            stroke = Stroke::new(stroke.width.max(1.6), c.gamma_multiply(0.85));
        }
        let points: Vec<Pos2> = route
            .iter()
            .map(|p| ctx.meta.canvas_to_screen_pos(*p))
            .collect();
        // A long edge (saved activations in backward graphs span thousands of layers) is drawn
        // in full only when one of its ends is in focus; otherwise as two short stubs, so a
        // zoomed-out backward graph is not a hairball of straight lines.
        let focused = [start, end]
            .iter()
            .any(|n| n.hovered() || n.payload().selected)
            || matches!(self.data.mark, Mark::Upstream | Mark::Downstream);
        if self.data.direct && !focused {
            return stubs(&points, stroke, ctx.meta.zoom);
        }
        let mut shapes = Vec::with_capacity(2);
        if let Some(head) = arrow_head(&points, stroke, ctx.meta.zoom) {
            shapes.push(head);
        }
        shapes.push(Shape::line(points, stroke));
        shapes
    }

    fn update(&mut self, state: &EdgeProps<EdgeData>) {
        self.data = state.payload.clone();
    }

    fn is_inside(
        &self,
        _start: &Node<NodeData, EdgeData, Directed, DefaultIx, NodeShape>,
        _end: &Node<NodeData, EdgeData, Directed, DefaultIx, NodeShape>,
        _pos: Pos2,
    ) -> bool {
        false
    }
}

/// The first and last few pixels of a long edge, with the arrow head.
fn stubs(points: &[Pos2], stroke: Stroke, zoom: f32) -> Vec<Shape> {
    let len = 24.0 * zoom;
    if len < 2.0 || points.len() < 2 {
        return Vec::new();
    }
    let (a, b) = (points[0], points[1]);
    let (y, z) = (points[points.len() - 2], points[points.len() - 1]);
    let start_end = a + (b - a).normalized() * len;
    let end_start = z - (z - y).normalized() * len;
    let mut shapes = vec![
        Shape::line_segment([a, start_end], stroke),
        Shape::line_segment([end_start, z], stroke),
    ];
    shapes.extend(arrow_head(&[end_start, z], stroke, zoom));
    shapes
}

fn edge_stroke(mark: Mark, direct: bool, dark: bool, zoom: f32) -> Stroke {
    let base = if dark {
        palette::EDGE_DARK
    } else {
        palette::EDGE_LIGHT
    };
    let color = match mark {
        Mark::Upstream => palette::UPSTREAM,
        Mark::Downstream => palette::DOWNSTREAM,
        Mark::Faded => base.gamma_multiply(0.2),
        _ if direct => base.gamma_multiply(0.45),
        _ => base,
    };
    let width = match mark {
        Mark::Upstream | Mark::Downstream => 2.0,
        _ => (1.4 * zoom).clamp(0.6, 1.4),
    };
    Stroke::new(width, color)
}

/// A small filled triangle at the end of the polyline, once the view is close enough to see it.
fn arrow_head(points: &[Pos2], stroke: Stroke, zoom: f32) -> Option<Shape> {
    if zoom < 0.3 {
        return None;
    }
    let (&tip, &prev) = (points.last()?, points.get(points.len().checked_sub(2)?)?);
    let dir = (tip - prev).normalized();
    if !dir.is_finite() {
        return None;
    }
    let size = (7.0 * zoom).clamp(4.0, 9.0);
    let normal = dir.rot90();
    let base = tip - dir * size;
    Some(Shape::convex_polygon(
        vec![
            tip,
            base + normal * size * 0.45,
            base - normal * size * 0.45,
        ],
        stroke.color,
        Stroke::NONE,
    ))
}
