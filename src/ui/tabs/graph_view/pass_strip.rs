//! The pass strip: every pass of the phase in execution order, each with a small bar chart of
//! what it changed from the pass before (+added −removed ~changed); passes that changed
//! nothing are dimmed. Click a pass to show it.

use crate::app::App;
use egui::{Rect, Sense, Stroke, StrokeKind, Vec2};

const HEIGHT: f32 = 30.0;
use crate::ui::palette::{ADDED, CHANGED, REMOVED};

pub fn show(app: &mut App, ui: &mut egui::Ui) {
    let Some(ph) = &app.phase else { return };
    let n = ph.passes.len();
    if n < 2 {
        return;
    }
    let width = ui.available_width();
    let (rect, _) = ui.allocate_exact_size(Vec2::new(width, HEIGHT), Sense::hover());
    let cell_w = (width / n as f32).max(4.0);
    // Bars scale with the log of the count, so one big pass does not flatten the others.
    let max = ph
        .diffs
        .iter()
        .flatten()
        .map(|d| {
            let c = d.counts();
            c.added.max(c.removed).max(c.changed)
        })
        .max()
        .unwrap_or(1)
        .max(1);
    let scale = |v: usize| ((v as f32 + 1.0).ln() / (max as f32 + 1.0).ln()) * (HEIGHT - 12.0);
    let painter = ui.painter_at(rect);
    let mut clicked = None;
    for i in 0..n {
        let cell = Rect::from_min_size(
            rect.min + Vec2::new(i as f32 * cell_w, 0.0),
            Vec2::new(cell_w - 2.0, HEIGHT),
        );
        let counts = ph.diffs[i].as_ref().map(|d| d.counts());
        let changed = counts.is_some_and(|c| !c.is_empty());
        let bg = if i == ph.current {
            ui.visuals().selection.bg_fill
        } else if changed {
            ui.visuals().faint_bg_color
        } else {
            ui.visuals().extreme_bg_color
        };
        painter.rect_filled(cell, 3.0, bg);
        if let Some(c) = counts {
            let bar_w = ((cell.width() - 6.0) / 3.0).max(1.0);
            for (k, (v, color)) in [(c.added, ADDED), (c.removed, REMOVED), (c.changed, CHANGED)]
                .into_iter()
                .enumerate()
            {
                if v == 0 {
                    continue;
                }
                let h = scale(v);
                let x = cell.left() + 3.0 + k as f32 * bar_w;
                let bar = Rect::from_min_max(
                    egui::pos2(x, cell.bottom() - 9.0 - h),
                    egui::pos2(x + bar_w - 1.0, cell.bottom() - 9.0),
                );
                painter.rect_filled(bar, 0.0, color);
            }
        }
        let p = &ph.passes[i];
        if cell_w > 22.0 {
            let color = if changed || i == 0 {
                ui.visuals().text_color()
            } else {
                ui.visuals().weak_text_color()
            };
            painter.text(
                egui::pos2(cell.center().x, cell.bottom() - 1.0),
                egui::Align2::CENTER_BOTTOM,
                format!("{:03}", p.index),
                egui::FontId::monospace(8.5),
                color,
            );
        }
        let nodes = ph.files[i]
            .as_ref()
            .map_or("…".to_string(), |f| f.node_count().to_string());
        let summary = match counts {
            Some(c) if c.is_empty() => "no change".to_string(),
            Some(c) => c.to_string(),
            None if i == 0 => "first graph".to_string(),
            None => "comparing…".to_string(),
        };
        let label = format!("pass {:03} {}", p.index, p.name);
        let resp = ui.interact(cell, ui.id().with(("pass_strip", i)), Sense::click());
        resp.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Button, true, &label));
        let resp = resp.on_hover_text(format!(
            "{:03} {}\n{nodes} nodes · {summary}",
            p.index, p.name
        ));
        if resp.hovered() {
            painter.rect_stroke(
                cell,
                3.0,
                Stroke::new(1.0, ui.visuals().strong_text_color()),
                StrokeKind::Inside,
            );
        }
        if resp.clicked() {
            clicked = Some(i);
        }
    }
    if let Some(i) = clicked {
        let delta = i as isize - ph.current as isize;
        app.step_pass(delta);
    }
}
