//! The minimap: the whole pass in a corner, the visible part framed; click or drag to move.

use super::navigation::Viewport;
use super::scene::Scene;
use crate::model::fx::FxFile;
use egui::{Mesh, Pos2, Rect, Sense, Shape, Stroke, StrokeKind, Vec2};
use std::sync::Arc;

const SIZE: Vec2 = Vec2::new(200.0, 150.0);
const MARGIN: f32 = 10.0;

#[derive(Default)]
pub struct Minimap {
    /// Node dots of the pass on screen, built once per pass and placement.
    cached: Option<((usize, u64), Rect, Arc<Mesh>)>,
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
        let mesh = match &self.cached {
            Some((k, r, m)) if *k == key && *r == area => m.clone(),
            _ => {
                let m = Arc::new(dots(scene, &map));
                self.cached = Some((key, area, m.clone()));
                m
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
        painter.add(Shape::Mesh(mesh));
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

fn dots(scene: &Scene, map: &Map) -> Mesh {
    let mut mesh = Mesh::default();
    if let Some(f) = &scene.fold {
        for b in f.layout.boxes.iter().filter(|b| b.folded) {
            let r = Rect::from_min_max(
                map.apply(Pos2::new(b.rect[0], b.rect[1])),
                map.apply(Pos2::new(b.rect[2], b.rect[3])),
            );
            mesh.add_colored_rect(r, crate::ui::palette::MODULE);
        }
    }
    for (i, present) in scene.present.iter().enumerate() {
        if !present {
            continue;
        }
        let Some(p) = scene.pos(i as u32) else {
            continue;
        };
        let (w, h) = scene.layout.sizes.get(i).copied().unwrap_or((100.0, 40.0));
        let r = Rect::from_center_size(
            map.apply(p),
            (Vec2::new(w, h) * map.scale).max(Vec2::splat(1.2)),
        );
        mesh.add_colored_rect(r, crate::ui::palette::MINIMAP_NODE);
    }
    mesh
}
