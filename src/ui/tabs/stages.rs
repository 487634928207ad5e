//! The Accuracy tab's stage section: npugraph_ex's original stage against its optimized one,
//! the pass where the numbers part in one sentence, and a button that shows it on the graph.

use crate::app::Loading;
use crate::app::part::Cx;
use crate::app::stages::StagesState;

/// Draws the section when the open run holds both stage dumps (nothing otherwise).
pub fn section(stages: &StagesState, cx: &mut Cx, ui: &mut egui::Ui) {
    let c = match &stages.result {
        Loading::Idle => return,
        Loading::Loading => {
            let doing = format!("original against optimized: {}", stages.progress_line());
            crate::ui::loading::busy(ui, doing);
            ui.separator();
            return;
        }
        Loading::Failed(e) => {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("original against optimized: {e}"),
            );
            ui.separator();
            return;
        }
        Loading::Ready(c) => c.clone(),
    };
    ui.strong("Original against optimized");
    let mut go = None;
    if c.findings.is_empty() {
        ui.colored_label(crate::ui::palette::OK, &c.answer);
    }
    for (i, f) in c.findings.iter().enumerate() {
        ui.horizontal_wrapped(|ui| {
            let pass = f.pass.and_then(|p| c.pass_names.get(p));
            if let Some(pass) = pass
                && ui
                    .button(format!("Show in {pass}"))
                    .on_hover_text("that pass on the graph, its changes marked, the node selected")
                    .clicked()
            {
                go = Some(i);
            }
            ui.colored_label(ui.visuals().error_fg_color, &f.sentence);
        });
    }
    let (agree, depart, unjudged) = c.counts();
    ui.horizontal_wrapped(|ui| {
        ui.label(format!(
            "{} pairs: {agree} agree, {depart} depart, {unjudged} not judged",
            c.pairs.len(),
        ));
        let reference = if c.reference.is_some() {
            "tolerance from the float64 reference"
        } else {
            "no float64 reference: allclose only"
        };
        ui.weak(reference).on_hover_text(&c.tolerance);
    });
    ui.separator();
    if let Some(i) = go {
        stages.go_to_finding(cx, i);
    }
}
