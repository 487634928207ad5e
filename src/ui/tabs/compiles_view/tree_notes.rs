//! The compile story in the run tree: above each model, why it exists
//! (`graph break at models.py:121`, `recompile: …`), and a Compiles section listing each
//! compile id with its status.

use super::{status_colour, status_icon};
use crate::app::compiles::CompilesState;

/// The line above a model row saying why the model exists, when the trace tells.
pub fn model_note(ui: &mut egui::Ui, state: &CompilesState, run: &str, model: &str) {
    let Some(why) = state
        .notes
        .iter()
        .find(|((r, m), _)| r == run && m == model)
        .map(|(_, w)| w)
    else {
        return;
    };
    let colour = if why.starts_with("first compile") {
        ui.visuals().weak_text_color()
    } else {
        ui.visuals().warn_fg_color
    };
    ui.label(
        egui::RichText::new(format!("⤵ {why}"))
            .small()
            .color(colour),
    );
}

/// The tree's Compiles section; `pick` is set to the compile clicked.
pub fn tree_section(ui: &mut egui::Ui, state: &CompilesState, pick: &mut Option<(usize, usize)>) {
    if state.stories.is_empty() {
        return;
    }
    for (si, story) in state.stories.iter().enumerate() {
        let t = &story.trace;
        let mut title = format!("⏱ Compiles ({})", t.compiles.len());
        if let Some(r) = t.rank {
            title.push_str(&format!(" · rank {r}"));
        }
        egui::CollapsingHeader::new(title)
            .id_salt(("tree_compiles", si))
            .default_open(true)
            .show(ui, |ui| {
                for (ci, c) in t.compiles.iter().enumerate() {
                    let st = c.status();
                    ui.horizontal(|ui| {
                        ui.colored_label(status_colour(ui, st), status_icon(st));
                        let text = format!("{} {}", c.label(), c.co_name().unwrap_or("?"));
                        if ui
                            .selectable_label(state.selected == Some((si, ci)), text)
                            .clicked()
                        {
                            *pick = Some((si, ci));
                        }
                    });
                }
            });
    }
}
