//! The timeline's rank picker: the same capture (model, `graph_K`, kind) of another rank of the
//! launch, shown one rank at a time.

use crate::app::App;
use crate::app::timeline::TimelineState;

pub fn show(app: &mut App, ui: &mut egui::Ui) {
    let ranks = app.timeline_ranks();
    if ranks.len() < 2 {
        return;
    }
    let open = app
        .peek::<TimelineState>()
        .and_then(TimelineState::open_path)
        .map(std::path::Path::to_path_buf);
    let current = ranks
        .iter()
        .find(|(_, p)| Some(p) == open.as_ref())
        .map(|(r, _)| *r);
    let mut target = None;
    ui.horizontal(|ui| {
        egui::ComboBox::from_label("Rank")
            .selected_text(current.map_or("rank ?".into(), |r| format!("rank {r}")))
            .show_ui(ui, |ui| {
                for (r, p) in &ranks {
                    if ui
                        .selectable_label(Some(*r) == current, format!("rank {r}"))
                        .clicked()
                    {
                        target = Some(p.clone());
                    }
                }
            })
            .response
            .on_hover_text("The same capture in another rank of this launch");
        ui.weak(format!("{} ranks captured this graph", ranks.len()));
    });
    if let Some(p) = target {
        app.open_timeline(&p);
    }
}
