//! One pair's difference as pictures, under its numbers in the inspector (issue 23): the
//! histogram of target − golden, and |Δ| on the 2-D slice holding the largest difference, that
//! place ringed and named. Computed in the background (`App::load_delta`); drawn here only.

use crate::analysis::accuracy::delta::{Delta, DeltaSlice};
use crate::app::Loading;
use crate::app::accuracy::DeltaView;
use crate::model::tensor::fmt_value;
use crate::ui::tensor_panel::{histogram, lead_pickers, paint_cells};
use egui::{RichText, Stroke, StrokeKind};

/// Draws the pictures of `view` (the pair's difference, of a tensor of `shape`), or that it
/// is being computed; returns the leading indices of another slice when the user picks one.
pub(super) fn show(ui: &mut egui::Ui, view: Option<&DeltaView>, shape: &[u64]) -> Option<Vec<u64>> {
    let d = match view.map(|v| &v.result) {
        Some(Loading::Ready(d)) => d,
        Some(Loading::Failed(e)) => {
            ui.weak(format!("no difference to picture: {e}"));
            return None;
        }
        _ => {
            crate::ui::loading::busy(ui, "computing the difference…");
            return None;
        }
    };
    let odd = if d.non_finite > 0 {
        format!(", {} places NaN/Inf on one side only", d.non_finite)
    } else {
        String::new()
    };
    ui.label(
        RichText::new(format!(
            "Δ histogram (target − golden), {} elements{odd}",
            d.elements
        ))
        .small()
        .weak(),
    );
    match &d.histogram {
        Some(h) => histogram(ui, "delta_histogram", h),
        None => {
            ui.weak("no finite difference");
        }
    }
    let picked = pick_slice(ui, &d.slice.lead, shape);
    heatmap(ui, d);
    picked
}

/// `d0=… d1=…` pickers of the slice's leading indices (N-D tensors); the new indices when one
/// changed.
fn pick_slice(ui: &mut egui::Ui, lead: &[u64], shape: &[u64]) -> Option<Vec<u64>> {
    let mut new = lead.to_vec();
    lead_pickers(ui, "|Δ| slice", &mut new, shape);
    (new != lead).then_some(new)
}

/// `[1, 2, 3]`.
fn index(at: &[u64]) -> String {
    let v: Vec<String> = at.iter().map(u64::to_string).collect();
    format!("[{}]", v.join(", "))
}

fn heatmap(ui: &mut egui::Ui, d: &Delta) {
    let s: &DeltaSlice = &d.slice;
    let lead: Vec<String> = s.lead.iter().map(u64::to_string).collect();
    let what = if lead.is_empty() {
        format!("{}×{}", s.rows, s.cols)
    } else {
        format!("[{}, :, :] ({}×{})", lead.join(", "), s.rows, s.cols)
    };
    let pooled = if (s.cell_rows, s.cell_cols) != (s.rows, s.cols) {
        format!(
            ", each cell the largest of its {}×{} block",
            s.rows.div_ceil(s.cell_rows),
            s.cols.div_ceil(s.cell_cols)
        )
    } else {
        String::new()
    };
    ui.label(
        RichText::new(format!("|Δ| on slice {what}{pooled}"))
            .small()
            .weak(),
    );
    let scale = s.peak.map_or(0.0, |p| p.value);
    let (resp, painter, size) = paint_cells(ui, s.cell_rows, s.cell_cols, scale, |r, c| {
        s.cells.get(r * s.cell_cols + c).copied()
    });
    // The tensor's index of a place of the slice (1-D: one row; 0-d: no index).
    let ndim = d.largest.as_ref().map_or(0, |(a, _)| a.len());
    let at = |p: &crate::analysis::accuracy::delta::Peak| {
        let mut i = s.lead.clone();
        if ndim >= 2 {
            i.push(p.row as u64);
        }
        if ndim >= 1 {
            i.push(p.col as u64);
        }
        i
    };
    let label = match &s.peak {
        Some(p) => {
            // The largest difference ringed: its cell, and a cross through it across the map.
            let min =
                resp.rect.min + egui::vec2(p.cell.1 as f32 * size.x, p.cell.0 as f32 * size.y);
            let cell = egui::Rect::from_min_size(min, size);
            let ring = cell.expand(3.0);
            let ink = crate::ui::palette::SELECTED;
            painter.rect_stroke(ring, 2.0, Stroke::new(2.0, ink), StrokeKind::Outside);
            let faint = Stroke::new(1.0, ink.gamma_multiply(0.35));
            painter.hline(resp.rect.x_range(), cell.center().y, faint);
            painter.vline(cell.center().x, resp.rect.y_range(), faint);
            let whole = d
                .largest
                .as_ref()
                .filter(|(a, _)| *a == at(p))
                .map_or(" (of this slice)", |_| "");
            format!(
                "largest |Δ| {} at {}{whole}",
                fmt_value(p.value),
                index(&at(p))
            )
        }
        None => "no finite difference in this slice".to_string(),
    };
    resp.widget_info(|| {
        egui::WidgetInfo::labeled(
            egui::WidgetType::Image,
            true,
            format!("|Δ| heatmap: {label}"),
        )
    });
    let cut = if s.cut { " (first values only)" } else { "" };
    ui.label(RichText::new(format!("{label}{cut}")).small().strong());
}
