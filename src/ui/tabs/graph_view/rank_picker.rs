//! The rank picker beside the pass picker, for a run that is one rank of a launch: shows the
//! same pass of another rank, keeping the selection, the folding and the viewport. Ranks whose
//! graph of this pass differs from the majority's are marked `≠`.

use crate::app::App;

pub fn show(app: &mut App, ui: &mut egui::Ui) {
    let Some(place) = app.rank_place() else {
        return;
    };
    let here = app
        .phase
        .as_ref()
        .and_then(|p| p.current_path())
        .map(|p| p.to_path_buf());
    let matrices = app.rank_matrices();
    // The matrix row of the pass on screen: the one holding its file.
    let row = matrices.get(place.launch).and_then(|m| {
        let col = m.column(place.rank)?;
        m.passes
            .iter()
            .find(|r| r.paths.get(col).and_then(|p| p.as_deref()) == here.as_deref())
    });
    let differs = |r: u32| row.is_some_and(|row| row.differs_at(r));
    let label = |r: u32| {
        if differs(r) {
            format!("rank {r} ≠")
        } else {
            format!("rank {r}")
        }
    };
    let mut target = None;
    egui::ComboBox::from_label("Rank")
        .selected_text(label(place.rank))
        .show_ui(ui, |ui| {
            for &r in &place.ranks {
                if ui.selectable_label(r == place.rank, label(r)).clicked() {
                    target = Some(r);
                }
            }
        })
        .response
        .on_hover_text(format!(
            "This run is rank {} of a launch of {} ranks: show this pass in another rank \
             (≠: that rank's graph differs from the majority's)",
            place.rank,
            place.ranks.len()
        ));
    if let Some(r) = target {
        app.select_rank(r);
    }
}
