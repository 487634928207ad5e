//! The minimap: the whole pass in a corner, the visible part framed; click or drag to move.

use super::navigation::Viewport;
use super::scene::Scene;
use crate::model::fx::FxFile;
use egui::{Color32, ColorImage, Pos2, Rect, Sense, Stroke, StrokeKind, TextureHandle, Vec2};
use std::sync::Arc;

const SIZE: Vec2 = Vec2::new(200.0, 150.0);
const MARGIN: f32 = 10.0;

#[derive(Default)]
pub struct Minimap {
    /// Node dots of the pass on screen as one picture, drawn once per pass and placement: a
    /// frame then paints one textured rectangle, however many nodes the pass has.
    cached: Option<((usize, u64), Rect, TextureHandle)>,
}

impl Minimap {
    pub fn show(&mut self, ui: &mut egui::Ui, scene: &Scene, canvas: Rect, file: &Arc<FxFile>) {
        if canvas.width() < SIZE.x * 2.0 || canvas.height() < SIZE.y * 2.0 {
            return;
        }
        let area = Rect::from_min_size(canvas.max - SIZE - Vec2::splat(MARGIN), SIZE);
        let world = scene.bounds();
        let vp = Viewport::load(ui);
        let visible = Rect::from_min_max(
            vp.to_canvas(canvas.min, canvas),
            vp.to_canvas(canvas.max, canvas),
        );
        if visible.contains_rect(world) {
            // Everything is on screen already: the map would only hide part of it.
            return;
        }
        let map = fit(world, area.shrink(4.0));
        let key = (Arc::as_ptr(file) as usize, scene.generation());
        let texture = match &self.cached {
            Some((k, r, t)) if *k == key && *r == area => t.clone(),
            _ => {
                let image = dots(scene, &map, area, ui.ctx().pixels_per_point());
                let t =
                    ui.ctx()
                        .load_texture("fxray-minimap", image, egui::TextureOptions::NEAREST);
                self.cached = Some((key, area, t.clone()));
                t
            }
        };
        let painter = ui.painter_at(area);
        let bg = ui.visuals().extreme_bg_color;
        painter.rect(
            area,
            4.0,
            bg,
            Stroke::new(1.0, ui.visuals().weak_text_color()),
            StrokeKind::Inside,
        );
        let uv = Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0));
        painter.image(texture.id(), area, uv, Color32::WHITE);
        let vp = Viewport::load(ui);
        let visible = Rect::from_min_max(
            vp.to_canvas(canvas.min, canvas),
            vp.to_canvas(canvas.max, canvas),
        );
        let frame =
            Rect::from_min_max(map.apply(visible.min), map.apply(visible.max)).intersect(area);
        painter.rect_stroke(
            frame,
            0.0,
            Stroke::new(1.5, crate::ui::palette::SELECTED),
            StrokeKind::Inside,
        );

        let resp = ui.interact(area, ui.id().with("minimap"), Sense::click_and_drag());
        if let Some(p) = resp
            .interact_pointer_pos()
            .filter(|_| resp.clicked() || resp.dragged())
        {
            let target = map.invert(p);
            vp.centred_on(target, canvas).save(ui);
        }
    }
}

/// A uniform scale + offset from canvas to minimap.
struct Map {
    scale: f32,
    offset: Vec2,
}

impl Map {
    fn apply(&self, p: Pos2) -> Pos2 {
        (p.to_vec2() * self.scale + self.offset).to_pos2()
    }
    fn invert(&self, p: Pos2) -> Pos2 {
        ((p.to_vec2() - self.offset) / self.scale).to_pos2()
    }
}

fn fit(world: Rect, area: Rect) -> Map {
    let s = (area.width() / world.width().max(1.0)).min(area.height() / world.height().max(1.0));
    let offset = area.center().to_vec2() - world.center().to_vec2() * s;
    Map { scale: s, offset }
}

/// The nodes (and folded boxes) of `scene` as a picture of `area` at `ppp` pixels per point;
/// every node at least one pixel.
fn dots(scene: &Scene, map: &Map, area: Rect, ppp: f32) -> ColorImage {
    let (w, h) = (
        (area.width() * ppp).round().max(1.0) as usize,
        (area.height() * ppp).round().max(1.0) as usize,
    );
    let mut image = ColorImage::filled([w, h], Color32::TRANSPARENT);
    let mut fill = |r: Rect, colour: Color32| {
        let px = |v: f32, o: f32, n: usize| (((v - o) * ppp).floor().max(0.0) as usize).min(n - 1);
        let (xa, xb) = (px(r.min.x, area.min.x, w), px(r.max.x, area.min.x, w));
        let (ya, yb) = (px(r.min.y, area.min.y, h), px(r.max.y, area.min.y, h));
        let (x0, x1, y0, y1) = (xa.min(xb), xa.max(xb), ya.min(yb), ya.max(yb));
        for y in y0..=y1 {
            image.pixels[y * w + x0..=y * w + x1].fill(colour);
        }
    };
    if let Some(f) = &scene.fold {
        for b in f.layout.boxes.iter().filter(|b| b.folded) {
            let r = Rect::from_min_max(
                map.apply(Pos2::new(b.rect[0], b.rect[1])),
                map.apply(Pos2::new(b.rect[2], b.rect[3])),
            );
            fill(r, crate::ui::palette::MODULE);
        }
    }
    for (i, present) in scene.present.iter().enumerate() {
        if !present {
            continue;
        }
        let Some(p) = scene.pos(i as u32) else {
            continue;
        };
        let (nw, nh) = scene.layout.sizes.get(i).copied().unwrap_or((100.0, 40.0));
        fill(
            Rect::from_center_size(map.apply(p), Vec2::new(nw, nh) * map.scale),
            crate::ui::palette::MINIMAP_NODE,
        );
    }
    image
}
