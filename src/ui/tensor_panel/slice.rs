//! A 2-D slice of a tensor: heatmap and value table, paged.

use super::*;

/// The heatmap and paged value table of one 2-D slice (read in the background on demand).
pub(super) fn slice_view(
    ui: &mut egui::Ui,
    tensors: &TensorsState,
    state: &mut TensorPanelState,
    path: &std::path::Path,
    shape: &[u64],
) -> Option<Action> {
    state.lead.resize(shape.len().saturating_sub(2), 0);
    lead_pickers(ui, "slice", &mut state.lead, shape);
    let lead = state.lead.clone();
    let view = tensors
        .slice
        .as_ref()
        .filter(|v| v.path == path && v.lead == lead);
    let Some(view) = view else {
        crate::ui::loading::busy(ui, "");
        return Some(Action::LoadSlice(path.to_path_buf(), lead));
    };
    if let Some(sl) = crate::ui::loading::show(ui, &view.result, "") {
        heatmap(ui, sl);
        value_table(ui, state, sl);
    }
    None
}

/// `d0=… d1=…` pickers of a 2-D slice's leading indices (`lead`, one per leading dim of
/// `shape`, clamped to it), after `label`; nothing for a tensor of two dims or fewer.
pub(crate) fn lead_pickers(ui: &mut egui::Ui, label: &str, lead: &mut [u64], shape: &[u64]) {
    if lead.is_empty() || shape.len() < lead.len() + 2 {
        return;
    }
    ui.horizontal_wrapped(|ui| {
        ui.weak(label);
        for (k, v) in lead.iter_mut().enumerate() {
            let max = shape[k].saturating_sub(1);
            *v = (*v).min(max);
            ui.add(
                egui::DragValue::new(v)
                    .range(0..=max)
                    .prefix(format!("d{k}=")),
            );
        }
        ui.weak(", :, :");
    });
}

/// Blue (negative) – white – red (positive), by the slice's largest finite |value|; NaN
/// magenta, ±Inf black.
pub(crate) fn heat_colour(v: f64, scale: f64) -> Color32 {
    if v.is_nan() {
        return crate::ui::palette::HEAT_NAN;
    }
    if v.is_infinite() {
        return Color32::BLACK;
    }
    let t = if scale > 0.0 {
        (v / scale).clamp(-1.0, 1.0)
    } else {
        0.0
    };
    let k = (255.0 * (1.0 - t.abs())) as u8;
    if t >= 0.0 {
        Color32::from_rgb(255, k, k)
    } else {
        Color32::from_rgb(k, k, 255)
    }
}

/// A heatmap of `r_cells × c_cells` cells at most 320 × 240 points, the value of each from
/// `value(row, col)` coloured by `heat_colour(v, scale)`; returns its response and cell size.
pub(crate) fn paint_cells(
    ui: &mut egui::Ui,
    r_cells: usize,
    c_cells: usize,
    scale: f64,
    value: impl Fn(usize, usize) -> Option<f64>,
) -> (egui::Response, egui::Painter, egui::Vec2) {
    let (r_cells, c_cells) = (r_cells.max(1), c_cells.max(1));
    let width = ui.available_width().min(320.0);
    let cell = width / c_cells as f32;
    let height = (cell * r_cells as f32).min(240.0);
    let cell_h = height / r_cells as f32;
    let (resp, painter) = ui.allocate_painter(egui::vec2(width, height), egui::Sense::hover());
    for rc in 0..r_cells {
        for cc in 0..c_cells {
            let Some(v) = value(rc, cc) else { continue };
            let min = resp.rect.min + egui::vec2(cc as f32 * cell, rc as f32 * cell_h);
            painter.rect_filled(
                egui::Rect::from_min_size(min, egui::vec2(cell, cell_h)),
                0.0,
                heat_colour(v, scale),
            );
        }
    }
    (resp, painter, egui::vec2(cell, cell_h))
}

pub(super) fn heatmap(ui: &mut egui::Ui, sl: &crate::model::tensor::Slice2d) {
    let (rows, cols) = (sl.rows.max(1), sl.cols.max(1));
    let (r_cells, c_cells) = (rows.min(HEAT_CELLS), cols.min(HEAT_CELLS));
    let scale = sl
        .values
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let at = |r: usize, c: usize| -> Option<f64> { sl.values.get(r * sl.cols + c).copied() };
    let (resp, _, size) = paint_cells(ui, r_cells, c_cells, scale, |rc, cc| {
        at(rc * rows / r_cells, cc * cols / c_cells)
    });
    let (cell, cell_h) = (size.x, size.y);
    if let Some(p) = resp.hover_pos() {
        let d = p - resp.rect.min;
        let c = ((d.x / cell) as usize).min(c_cells - 1) * cols / c_cells;
        let r = ((d.y / cell_h) as usize).min(r_cells - 1) * rows / r_cells;
        if let Some(v) = at(r, c) {
            resp.on_hover_text(format!("[{r}, {c}] = {}", fmt_value(v)));
        }
    }
    let sampled = if rows > r_cells || cols > c_cells {
        format!(", sampled to {r_cells}×{c_cells}")
    } else {
        String::new()
    };
    ui.label(
        RichText::new(format!(
            "{rows}×{cols} slice, colour scale ±{}{sampled}{}",
            fmt_value(scale),
            if sl.cut { " (first values only)" } else { "" }
        ))
        .small()
        .weak(),
    );
}

pub(super) fn value_table(
    ui: &mut egui::Ui,
    state: &mut TensorPanelState,
    sl: &crate::model::tensor::Slice2d,
) {
    let rows = sl.rows;
    state.row = state.row.min(rows.saturating_sub(1)) / PAGE_ROWS * PAGE_ROWS;
    ui.horizontal(|ui| {
        if ui.small_button("◀").clicked() {
            state.row = state.row.saturating_sub(PAGE_ROWS);
        }
        ui.weak(format!(
            "rows {}–{} of {rows}",
            state.row,
            (state.row + PAGE_ROWS).min(rows).saturating_sub(1)
        ));
        if ui.small_button("▶").clicked() && state.row + PAGE_ROWS < rows {
            state.row += PAGE_ROWS;
        }
    });
    let cols = sl.cols.min(TABLE_COLS);
    egui::Grid::new("values")
        .striped(true)
        .spacing([6.0, 0.0])
        .show(ui, |ui| {
            for r in state.row..(state.row + PAGE_ROWS).min(rows) {
                ui.weak(r.to_string());
                for c in 0..cols {
                    let v = sl.values.get(r * sl.cols + c);
                    ui.monospace(v.map_or("·".to_string(), |v| fmt_value(*v)));
                }
                if sl.cols > cols {
                    ui.weak("…");
                }
                ui.end_row();
            }
        });
}
