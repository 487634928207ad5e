//! The Accuracy tab's stage section: npugraph_ex's original stage against its optimized one,
//! the pass where the numbers part in one sentence, and a button that shows it on the graph.

use crate::app::Loading;
use crate::app::accuracy::AccuracyState;
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

/// *Find the pass*: every pass of the open run replayed on its inputs, a line per pass as it
/// ends, and the pass that broke the numbers with a button that shows it on the graph. Offered
/// where the run holds a tensor dump of its inputs (a stage dump).
pub fn bisect_section(acc: &mut AccuracyState, cx: &mut Cx, ui: &mut egui::Ui) {
    let root = cx.workspace.map(|w| w.index.root.clone());
    let has_dump = cx.workspace.is_some_and(|w| !w.index.data_dumps.is_empty());
    let ours = acc.bisect.run.is_some() && acc.bisect.run == root;
    if !has_dump && !ours {
        return;
    }
    let mut start = false;
    let mut go = false;
    ui.horizontal_wrapped(|ui| {
        let label = if acc.bisect.running() && ours {
            "Find the pass again"
        } else {
            "Find the pass"
        };
        start = ui
            .button(label)
            .on_hover_text(
                "replay every pass of this run on its inputs in a Python with torch, and name \
                 the one pass that changed the numbers, and the node where it did",
            )
            .clicked();
        let label = ui.label("Python");
        ui.add(
            egui::TextEdit::singleline(&mut acc.bisect.python)
                .hint_text("as the Run tab picks")
                .desired_width(220.0),
        )
        .labelled_by(label.id)
        .on_hover_text("the interpreter with torch that replays the passes");
        let b = &acc.bisect;
        if ours && b.running() {
            crate::ui::loading::busy(
                ui,
                b.lines
                    .last()
                    .cloned()
                    .unwrap_or("starting the replay…".into()),
            );
        }
    });
    let b = &acc.bisect;
    if ours {
        match &b.result {
            Loading::Ready(r) => {
                ui.horizontal_wrapped(|ui| {
                    if let Some(g) = &r.guilty {
                        let pass = r.pass_names.get(g.index).cloned().unwrap_or_default();
                        go = ui
                            .button(format!("Show in {pass}"))
                            .on_hover_text(
                                "that pass on the graph, its changes marked, the node selected",
                            )
                            .clicked();
                        ui.colored_label(ui.visuals().error_fg_color, &r.answer);
                    } else {
                        ui.colored_label(crate::ui::palette::OK, &r.answer);
                    }
                });
                for p in &r.problems {
                    ui.weak(format!("note: {p}"));
                }
            }
            Loading::Failed(e) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("bisect: {e}"));
            }
            _ => {}
        }
        if !b.lines.is_empty() {
            egui::CollapsingHeader::new(format!("Passes replayed ({})", b.lines.len()))
                .id_salt("bisect_lines")
                .show(ui, |ui| {
                    for l in &b.lines {
                        ui.label(egui::RichText::new(l).monospace());
                    }
                });
        }
    }
    ui.separator();
    if go {
        acc.bisect.go_to_guilty(cx);
    }
    if start {
        acc.find_the_pass(cx);
    }
}
