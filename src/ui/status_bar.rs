//! The status bar: what is open, what is loading, the last error.

use crate::app::App;

pub fn show(app: &App, ui: &mut egui::Ui) {
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
                    format!("{} warning(s)", ws.index.warnings.len()),
                )
                .on_hover_text(ws.index.warnings.join("\n"));
            }
        }
        if let Some(e) = &app.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
    });
}
