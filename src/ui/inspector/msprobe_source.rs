//! Where the msprobe entries linked to the selected node were called from: `stack.json`'s
//! user frame of each entry (docs/formats.md §4.1), its full stack on hover.

use crate::app::tensors::TensorsState;
use egui::RichText;

/// One row per distinct entry key linked to `node` (steps repeat the same calls).
pub(super) fn show(ui: &mut egui::Ui, tensors: &TensorsState, node: &str) {
    let Some(links) = &tensors.links else { return };
    let mut seen = std::collections::HashSet::new();
    for (k, l) in links.of_node(node) {
        let Some(s) = tensors.msprobe.get(k) else {
            continue;
        };
        let (Some(e), Some(f)) = (s.entries.get(l.entry), s.source_of(l.entry)) else {
            continue;
        };
        if !seen.insert(e.key.clone()) {
            continue;
        }
        if seen.len() == 1 {
            ui.add_space(4.0);
            ui.label(RichText::new("msprobe call site").strong())
                .on_hover_text("From msprobe's stack.json: the line that made the linked call");
        }
        let stack: Vec<String> = s
            .stack_of(l.entry)
            .iter()
            .map(|f| format!("{}:{} in {}", f.file, f.line, f.func))
            .collect();
        ui.add(egui::Label::new(format!("{} · {}", f.describe(), e.key)).selectable(true))
            .on_hover_text(stack.join("\n"));
        if !f.code.is_empty() {
            ui.add(egui::Label::new(RichText::new(&f.code).monospace()).wrap());
        }
    }
}
