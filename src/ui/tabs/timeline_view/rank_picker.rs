//! The timeline's rank picker: the same capture (model, `graph_K`, kind) of another rank of the
//! launch, shown one rank at a time.

use crate::app::part::Cx;
use crate::app::ranks::captures_across_ranks;
use crate::app::timeline::TimelineState;

pub fn show(timeline: &mut TimelineState, cx: &Cx, ui: &mut egui::Ui) {
    let open = timeline.open_path().map(std::path::Path::to_path_buf);
    let ranks = match (cx.workspace, &open) {
        (Some(ws), Some(open)) => captures_across_ranks(&ws.index, open),
        _ => Vec::new(),
    };
    if ranks.len() < 2 {
        return;
    }
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
        timeline.open(cx, &p);
    }
}
