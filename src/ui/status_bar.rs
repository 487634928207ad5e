//! The status bar: what is open, what is loading, the last error, the view's cost.

use super::ViewState;
use crate::app::App;

pub fn show(app: &App, view: &ViewState, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        if let Some(p) = &app.opening {
            ui.spinner();
            ui.label(format!("indexing {}", p.display()));
        } else if let Some(ws) = &app.workspace {
            ui.label(format!(
                "{}  ·  {} files",
                ws.index.root.display(),
                ws.index.files_seen
            ));
            if !ws.facts_done {
                ui.spinner();
                ui.label(format!("parsing graphs {}", ws.facts.len()));
            }
            if !ws.index.warnings.is_empty() {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    format!("⚠ {} warning(s)", ws.index.warnings.len()),
                )
                .on_hover_text(ws.index.warnings.join("\n"));
            }
        }
        if let Some(e) = &app.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        } else if let Some(n) = &app.notice {
            ui.label(n);
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let (total, shown) = view.graph.counts();
            if total > 0 {
                ui.weak(format!(
                    "{shown} nodes shown of {total} in all passes  ·  {:.1} ms/frame",
                    view.graph.last_frame_ms
                ))
                .on_hover_text("CPU time of the graph view in the last frame");
            }
        });
    });
}
