//! The status bar: what is open, what is loading, the last error, the view's cost.

use super::ViewState;
use crate::app::App;

pub fn show(app: &mut App, view: &ViewState, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        if app.workspace.is_some() {
            live(app, ui);
        }
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
        if let Some(e) = app.live.failed.as_ref().or(app.error.as_ref()) {
            ui.colored_label(ui.visuals().error_fg_color, e);
        } else if let Some(n) = &app.notice {
            ui.label(n);
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            if let Some(npu) = &app.run.env.npu {
                let text = if npu.devices.is_empty() {
                    "no NPU".to_string()
                } else {
                    npu.summary()
                };
                ui.weak(text)
                    .on_hover_text(format!("{} (found by {})", npu.summary(), npu.source));
                ui.separator();
            }
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

/// Whether the folder is watched (and how), follow mode, and what landed unseen.
fn live(app: &mut App, ui: &mut egui::Ui) {
    use crate::app::live::WatchBackend;
    match &app.live.backend {
        Some(b @ WatchBackend::Native) => {
            let green = crate::ui::palette::OK;
            dot(ui, green);
            ui.colored_label(green, "live")
                .on_hover_text(format!("{b}: new files appear as they are written"));
        }
        Some(b @ WatchBackend::Polling { .. }) => {
            let warn = ui.visuals().warn_fg_color;
            dot(ui, warn);
            ui.colored_label(warn, "polling")
                .on_hover_text(b.to_string());
        }
        None => {}
    }
    if app.live.backend.is_some() {
        let mut follow = app.live.follow;
        if ui
            .checkbox(&mut follow, "Follow")
            .on_hover_text("Jump to each new pass as it is written")
            .changed()
        {
            app.set_follow(follow);
        }
        if app.live.unseen > 0
            && ui
                .button(format!("{} new", app.live.unseen))
                .on_hover_text("Passes written since; click to show the newest")
                .clicked()
        {
            app.show_newest();
        }
        if !app.live.writing.is_empty() {
            ui.weak(format!("writing {}", app.live.writing.len()));
        }
    }
    ui.separator();
}

/// A small filled circle (the UI font has no reliable "●").
fn dot(ui: &mut egui::Ui, color: egui::Color32) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(8.0, 8.0), egui::Sense::hover());
    ui.painter().circle_filled(rect.center(), 3.5, color);
}
