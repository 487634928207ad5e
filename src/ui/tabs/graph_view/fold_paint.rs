//! Painting the folded view's own items: module boxes (folded: name, node count, op-family
//! bar and the pass's diff badge; open: a frame with a title bar) and bundled edges.

use super::scene::{Item, Scene};
use crate::analysis::fold::layout::TITLE_H;
use crate::ui::palette;
use egui::{Align2, Color32, CornerRadius, FontId, Pos2, Rect, Shape, Stroke, StrokeKind, Vec2};
use egui_graphs::DrawContext;

/// Below this on-screen size, box text is skipped (unreadable, and the costly part).
const MIN_TEXT_PX: f32 = 6.0;
/// A folded box's title is large for its box: it must read at the zoom that fits ~100 boxes.
const FOLDED_FONT: f32 = 28.0;
/// An open box's title, at zoom 1: large enough to read where a model's top level fits a
/// screen (issue 33).
const OPEN_FONT: f32 = 24.0;

/// The size of a box title at zoom 1.
pub(super) fn title_px(folded: bool) -> f32 {
    if folded { FOLDED_FONT } else { OPEN_FONT }
}
const FOLDED_TITLE_H: f32 = 36.0;

pub fn item(scene: &Scene, item: Item, ctx: &DrawContext, shapes: &mut Vec<Shape>) {
    match item {
        Item::Box(m) => module_box(scene, m, ctx, shapes),
        Item::Bundle(k) => bundle(scene, k, ctx, shapes),
        _ => {}
    }
}

fn screen_rect(ctx: &DrawContext, r: [f32; 4]) -> Rect {
    Rect::from_min_max(
        ctx.meta.canvas_to_screen_pos(Pos2::new(r[0], r[1])),
        ctx.meta.canvas_to_screen_pos(Pos2::new(r[2], r[3])),
    )
}

/// `+a −r ~c` for what the pass changed inside, or nothing.
pub fn badge(added: u32, removed: u32, changed: u32) -> Option<String> {
    let mut parts = Vec::new();
    if added > 0 {
        parts.push(format!("+{added}"));
    }
    if removed > 0 {
        parts.push(format!("−{removed}"));
    }
    if changed > 0 {
        parts.push(format!("~{changed}"));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

fn module_box(scene: &Scene, m: u32, ctx: &DrawContext, shapes: &mut Vec<Shape>) {
    let Some(f) = &scene.fold else { return };
    let Some(placed) = f.placed(m) else { return };
    let st = &f.stats[m as usize];
    let md = &f.tree.modules[m as usize];
    let rect = screen_rect(ctx, placed.rect);
    let zoom = ctx.meta.zoom;
    let dark = ctx.ctx.global_style().visuals.dark_mode;
    let fill = if dark {
        palette::MODULE_FILL_DARK
    } else {
        palette::MODULE_FILL_LIGHT
    };
    let text = if dark {
        Color32::from_gray(230)
    } else {
        Color32::from_gray(20)
    };
    let frame = if st.selected {
        Stroke::new(3.0, palette::SELECTED)
    } else if st.hits > 0 {
        Stroke::new(2.5, palette::HIT)
    } else if st.changes() > 0 && placed.folded {
        Stroke::new(2.5, badge_colour(st.added, st.removed, st.changed))
    } else {
        Stroke::new(1.2, palette::MODULE)
    };
    let radius = CornerRadius::same((8.0 * zoom).clamp(1.0, 8.0) as u8);
    let empty = st.present == 0;
    // A folded box takes its worst node's colour when the overlay ranks nodes.
    let body_fill = if placed.folded {
        st.tint.map_or(fill, |(_, c)| c)
    } else {
        fill.gamma_multiply(0.35)
    };
    let body_fill = if empty {
        body_fill.gamma_multiply(0.4)
    } else {
        body_fill
    };
    shapes.push(Shape::rect_filled(rect, radius, body_fill));
    shapes.push(Shape::rect_stroke(rect, radius, frame, StrokeKind::Outside));
    // Folded boxes carry bigger text than nodes: they must read at the zoom that fits 80 of them.
    let font = title_px(placed.folded) * zoom;
    // Box titles are short and bold in their box: they still read a little smaller than labels.
    if font < MIN_TEXT_PX - 1.0 {
        if placed.folded {
            family_bar(st, rect.shrink(rect.height() * 0.3), shapes);
        }
        return;
    }
    let pad = 10.0 * zoom;
    let title_h = if placed.folded {
        FOLDED_TITLE_H
    } else {
        TITLE_H
    } * zoom;
    let sign = if placed.folded { "▸" } else { "▾" };
    let group = f.group_title(m);
    // Inside its parent's frame a box says only what the frame does not (`embed_tokens`, not
    // `model.embed_tokens`): full paths do not fit a box at a readable size.
    let short = |label: &'_ str| f.within_parent(m, label).to_owned();
    let title = match &group {
        // A repeat group is one box: folded it names the group, open the member drawn.
        // `layers.0–414` here, its count `×415` on the line under it (the box is narrow).
        Some(g) if placed.folded => {
            format!(
                "{sign} {}",
                short(g.rsplit_once(' ').map_or(g.as_str(), |x| x.0))
            )
        }
        Some(g) => format!("{sign} {}  ·  one of {}", short(&md.path), short(g)),
        None if md.path.is_empty() => format!("{sign} (root)"),
        None => format!("{sign} {}", short(&md.path)),
    };
    let title_rect = Rect::from_min_size(rect.min, Vec2::new(rect.width(), title_h));
    let badge_text = badge(st.added, st.removed, st.changed);
    let mut right = rect.right() - pad;
    let mut left = rect.left() + pad;
    // An open group member's ◀ ▶ (the other members, one click away) before its title.
    if let Some(arrows) = scene.member_arrows(m) {
        for (r, glyph) in arrows.iter().zip(["◀", "▶"]) {
            let c = ctx.meta.canvas_to_screen_pos(r.center());
            let g = ctx
                .painter
                .layout_no_wrap(glyph.into(), FontId::proportional(font), text);
            shapes.push(Shape::galley(c - g.size() / 2.0, g, text));
        }
        left = rect.left() + (4.0 + 2.0 * TITLE_H) * zoom;
    }
    if let Some(b) = &badge_text {
        let g = ctx.painter.layout_no_wrap(
            b.clone(),
            FontId::monospace(font * 0.9),
            badge_colour(st.added, st.removed, st.changed),
        );
        let pos = Pos2::new(right - g.size().x, title_rect.center().y - g.size().y / 2.0);
        right = pos.x - pad;
        shapes.push(Shape::galley(pos, g, text));
    }
    let title_w = right - left;
    if title_w > 12.0 {
        let g = line(ctx, title, FontId::proportional(font), text, title_w);
        let pos = Pos2::new(left, title_rect.center().y - g.size().y / 2.0);
        shapes.push(Shape::galley(pos, g, text));
    }
    let inner_w = rect.width() - 2.0 * pad;
    // The count (and, on a run's first box, the run), under the title.
    let times = group.as_ref().and_then(|g| g.rsplit_once(' ')).map(|x| x.1);
    let count = match (times, f.group_changes(m)) {
        (Some(t), Some(c)) => format!("{t} · {} nodes each · {c}", st.present),
        (Some(t), None) => format!("{t} · {} nodes each", st.present),
        _ => format!("{} nodes", st.present),
    };
    // An open box's count sits in the padding above its content; after it, in its own colour,
    // the gradients of the module's own parameters against the golden.
    let size = if placed.folded { 0.62 } else { 0.6 };
    let font_id = FontId::proportional(font * size);
    let mut job = egui::text::LayoutJob::default();
    let grey = text.gamma_multiply(0.7);
    job.append(&count, 0.0, egui::TextFormat::simple(font_id.clone(), grey));
    if let Some((colour, note)) = scene.box_lines.get(&md.path) {
        job.append(
            &format!("  ·  {note}"),
            0.0,
            egui::TextFormat::simple(font_id, *colour),
        );
    }
    job.wrap = egui::text::TextWrapping::truncate_at_width(inner_w.max(1.0));
    let g = ctx.ctx.fonts_mut(|f| f.layout_job(job));
    shapes.push(Shape::galley(
        Pos2::new(rect.left() + pad, rect.top() + title_h),
        g,
        text,
    ));
    if !placed.folded {
        return;
    }
    let bar = Rect::from_min_max(
        Pos2::new(rect.left() + pad, rect.bottom() - pad - 7.0 * zoom),
        Pos2::new(rect.right() - pad, rect.bottom() - pad),
    );
    family_bar(st, bar, shapes);
}

/// One line of text cut to `max_w` pixels with an ellipsis (box titles never spill out).
fn line(
    ctx: &DrawContext,
    text: String,
    font: FontId,
    color: Color32,
    max_w: f32,
) -> std::sync::Arc<egui::Galley> {
    let mut job = egui::text::LayoutJob::simple_singleline(text, font, color);
    job.wrap = egui::text::TextWrapping::truncate_at_width(max_w.max(1.0));
    ctx.ctx.fonts_mut(|f| f.layout_job(job))
}

fn family_bar(st: &super::fold_view::BoxStats, bar: Rect, shapes: &mut Vec<Shape>) {
    let total: u32 = st.families.iter().map(|f| f.1).sum();
    if total == 0 || bar.width() < 2.0 {
        return;
    }
    let mut x = bar.left();
    for &(c, n) in &st.families {
        let w = bar.width() * n as f32 / total as f32;
        shapes.push(Shape::rect_filled(
            Rect::from_min_max(Pos2::new(x, bar.top()), Pos2::new(x + w, bar.bottom())),
            0.0,
            c,
        ));
        x += w;
    }
}

fn badge_colour(added: u32, removed: u32, changed: u32) -> Color32 {
    if removed > 0 && added == 0 && changed == 0 {
        palette::REMOVED
    } else if added > 0 && removed == 0 && changed == 0 {
        palette::ADDED
    } else {
        palette::CHANGED
    }
}

fn bundle(scene: &Scene, k: u32, ctx: &DrawContext, shapes: &mut Vec<Shape>) {
    let Some(f) = &scene.fold else { return };
    let Some(d) = f.layout.edges.get(k as usize) else {
        return;
    };
    let present = f.bundle_present.get(k as usize).copied().unwrap_or(0);
    if present == 0 || d.path.len() < 2 {
        return;
    }
    let dark = ctx.ctx.global_style().visuals.dark_mode;
    let base = if dark {
        palette::EDGE_DARK
    } else {
        palette::EDGE_LIGHT
    };
    let zoom = ctx.meta.zoom;
    let width = ((1.0 + (present as f32).log2() * 0.5) * zoom.clamp(0.5, 1.5)).clamp(0.8, 4.0);
    let pts: Vec<Pos2> = d
        .path
        .iter()
        .map(|&[x, y]| ctx.meta.canvas_to_screen_pos(Pos2::new(x, y)))
        .collect();
    let stroke = Stroke::new(width, base);
    if let (Some(&tip), Some(&prev)) = (pts.last(), pts.get(pts.len() - 2))
        && zoom >= 0.2
    {
        let dir = (tip - prev).normalized();
        if dir.is_finite() {
            let size = (7.0 * zoom).clamp(4.0, 9.0) + width;
            let n = dir.rot90();
            let b = tip - dir * size;
            shapes.push(Shape::convex_polygon(
                vec![tip, b + n * size * 0.45, b - n * size * 0.45],
                base,
                Stroke::NONE,
            ));
        }
    }
    if present > 1 && 11.0 * zoom >= MIN_TEXT_PX {
        let mid = pts[pts.len() / 2];
        let g = ctx.painter.layout_no_wrap(
            present.to_string(),
            FontId::proportional((11.0 * zoom).min(14.0)),
            base,
        );
        let r = Align2::LEFT_CENTER.anchor_size(mid + Vec2::new(4.0, 0.0), g.size());
        shapes.push(Shape::galley(r.min, g, base));
    }
    shapes.push(Shape::line(pts, stroke));
}
