//! The rank matrix of a launch: one row per graph file (the Dynamo graph, then each phase's
//! passes), one column per rank, each cell the node count of that rank's graph, marked `≠`
//! in the diff colour when it differs from the majority's. A click opens the cell's graph side
//! by side with rank 0's.

use crate::app::part::Cx;
use crate::app::ranks::{self, RanksState};
use crate::ui::palette::{CHANGED, REMOVED};
use egui::RichText;

#[derive(Default)]
pub struct RanksViewState {
    /// Which launch is shown (index into the index's launches).
    pub launch: usize,
}

/// The Ranks tab.
impl crate::ui::tab::FeatureTab for RanksViewState {
    type Feature = RanksState;

    fn id(&self) -> crate::app::TabId {
        crate::app::TabId::RANKS
    }

    fn title(&self) -> &'static str {
        "Ranks"
    }

    fn show(&mut self, ranks: &mut RanksState, cx: &mut Cx, ui: &mut egui::Ui) {
        show(ranks, cx, self, ui);
    }
}

fn show(ranks: &mut RanksState, cx: &mut Cx, state: &mut RanksViewState, ui: &mut egui::Ui) {
    let matrices = cx
        .workspace
        .map(|ws| ranks.matrices(ws))
        .unwrap_or_default();
    if matrices.is_empty() {
        ui.weak(
            "No launch of several ranks here: ranks are run_…-rank_R folders of one folder \
             whose start times are seconds apart.",
        );
        return;
    }
    let place = cx
        .workspace
        .zip(cx.selection.pass)
        .and_then(|(ws, pass)| ranks::place(&ws.index, pass));
    if let Some(place) = place
        && matrices.len() > 1
        && ui.button("Show the launch on screen").clicked()
    {
        state.launch = place.launch;
    }
    let li = state.launch.min(matrices.len() - 1);
    ui.horizontal(|ui| {
        egui::ComboBox::from_id_salt("ranks_launch")
            .selected_text(&matrices[li].run)
            .show_ui(ui, |ui| {
                for (i, m) in matrices.iter().enumerate() {
                    ui.selectable_value(&mut state.launch, i, &m.run);
                }
            });
        let m = &matrices[li];
        ui.label(format!("{} ranks", m.ranks.len()));
        match m.first_divergence() {
            Some(row) => ui.colored_label(
                REMOVED,
                format!(
                    "first divergence: {}",
                    row.differs_text().unwrap_or_default()
                ),
            ),
            None => ui.weak("every rank compiled the same graphs"),
        };
    });
    ui.weak("≠: the rank's graph differs from the majority's (structure, not names). Click a cell to see it beside rank 0's.");
    ui.separator();
    let m = &matrices[li];
    let mut open = None;
    egui::ScrollArea::both().auto_shrink(false).show(ui, |ui| {
        egui::Grid::new("rank_matrix")
            .striped(true)
            .spacing([10.0, 3.0])
            .show(ui, |ui| {
                ui.strong("model");
                ui.strong("phase");
                ui.strong("pass");
                for r in &m.ranks {
                    ui.strong(format!("rank {r}"));
                }
                ui.end_row();
                for (ri, row) in m.passes.iter().enumerate() {
                    ui.label(&row.model);
                    ui.label(&row.phase);
                    ui.label(format!("{:03} {}", row.pass, row.name));
                    for (col, &r) in m.ranks.iter().enumerate() {
                        let nodes = row.nodes.get(&r.to_string());
                        let missing = row.paths.get(col).is_none_or(Option::is_none);
                        let text = match nodes {
                            Some(n) => n.to_string(),
                            None if missing => "—".to_string(),
                            None => "…".to_string(),
                        };
                        let differs = row.differs_at(r);
                        let shown = if differs { format!("{text} ≠") } else { text };
                        let name = format!("rank {r} · {}: {shown}", row.title());
                        let rich = if differs {
                            RichText::new(shown).color(if missing {
                                REMOVED
                            } else {
                                CHANGED
                            })
                        } else {
                            RichText::new(shown)
                        };
                        let resp = ui.add_enabled(!missing, egui::Button::new(rich).frame(differs));
                        resp.widget_info(|| {
                            egui::WidgetInfo::labeled(egui::WidgetType::Button, !missing, &name)
                        });
                        let hover = match (differs, missing) {
                            (_, true) => format!("rank {r} has no such graph"),
                            (true, false) => format!(
                                "rank {r}: differs from the majority's graph; click to see it beside rank {}",
                                m.ranks[0]
                            ),
                            (false, false) => format!("rank {r}: as the majority; click to compare"),
                        };
                        if resp.on_hover_text(hover).clicked() {
                            open = Some((ri, r));
                        }
                    }
                    ui.end_row();
                }
            });
    });
    if let Some((row, rank)) = open {
        ranks.open_cell(cx, li, row, rank);
    }
}
