//! The Problems tab: everything fxray could not read in the open tree, in one list, worst
//! first, as a compiler's problems pane: graph files that failed or parsed with gaps, what the
//! index did not understand, dumps and trace logs read only in part, a watcher that stopped.
//! A click on a graph file's row shows that graph.

use crate::app::Nav;
use crate::app::part::Cx;
use crate::app::problems::{ProblemsState, Severity};
use crate::ui::tab::FeatureTab;

#[derive(Default)]
pub struct ProblemsTab;

impl FeatureTab for ProblemsTab {
    type Feature = ProblemsState;

    fn id(&self) -> crate::app::TabId {
        crate::app::TabId::PROBLEMS
    }

    fn title(&self) -> &'static str {
        "Problems"
    }

    fn show(&mut self, state: &mut ProblemsState, cx: &mut Cx, ui: &mut egui::Ui) {
        if cx.workspace.is_none() {
            ui.weak("Nothing open.");
            return;
        }
        let Some(list) = &state.list else {
            // Gathered by the app at the start of the next frame, from every feature's state.
            ui.ctx().request_repaint();
            return;
        };
        let errors = list
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count();
        ui.label(format!("{errors} errors, {} warnings", list.len() - errors));
        if list.is_empty() {
            ui.weak("Everything in this tree was read whole.");
            return;
        }
        let mut open = None;
        let row_h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
        egui::ScrollArea::vertical().auto_shrink(false).show_rows(
            ui,
            row_h,
            list.len(),
            |ui, rows| {
                for p in &list[rows] {
                    ui.horizontal(|ui| {
                        let (icon, colour) = match p.severity {
                            Severity::Error => ("✖", ui.visuals().error_fg_color),
                            Severity::Warning => ("⚠", ui.visuals().warn_fg_color),
                        };
                        ui.colored_label(colour, icon);
                        ui.weak(p.what);
                        // The file's name is the link (short, so it stays in the tab); the
                        // whole path on hover.
                        if let Some(g) = &p.graph {
                            let name = g.file_name().unwrap_or_default().to_string_lossy();
                            if ui
                                .link(name)
                                .on_hover_text(g.display().to_string())
                                .clicked()
                            {
                                open = Some(g.clone());
                            }
                        }
                        ui.label(&p.text);
                    });
                }
            },
        );
        if let Some(graph) = open {
            cx.nav.push(Nav::Go { graph, node: None });
        }
    }
}
