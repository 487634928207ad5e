//! A compile's `compilation_metrics` in the details pane, in the groups `--json` gives them
//! (`MetricGroups`): phase times, cache, guards, graph counts, failure, restart reasons and the
//! backward's times, keys as torch writes them.

use crate::model::compile::{Compile, MetricGroups};
use serde_json::Value;
use std::collections::BTreeMap;

pub(super) fn show(ui: &mut egui::Ui, c: &Compile, salt: (usize, usize)) {
    let g = MetricGroups::of(c);
    let groups: [(&str, &BTreeMap<String, Value>); 6] = [
        ("times", &g.times),
        ("cache", &g.cache),
        ("guards", &g.guards),
        ("graph", &g.graph),
        ("fail", &g.fail),
        ("backward", &g.backward),
    ];
    let n: usize = groups.iter().map(|(_, m)| m.len()).sum::<usize>() + g.restart_reasons.len();
    egui::CollapsingHeader::new(format!("Compilation metrics ({n})"))
        .id_salt(("metrics", salt))
        .show(ui, |ui| {
            if n == 0 {
                ui.weak("the trace logged no compilation_metrics for this compile");
            }
            for (name, m) in groups.iter().filter(|(_, m)| !m.is_empty()) {
                ui.strong(*name);
                egui::Grid::new(("metrics_group", salt, *name))
                    .striped(true)
                    .show(ui, |ui| {
                        for (k, v) in *m {
                            ui.monospace(k);
                            ui.label(value_text(v));
                            ui.end_row();
                        }
                    });
            }
            if !g.restart_reasons.is_empty() {
                ui.strong("restart_reasons");
                for r in &g.restart_reasons {
                    ui.add(egui::Label::new(egui::RichText::new(r).monospace()).wrap());
                }
            }
        });
}

/// A string without its quotes; numbers and lists as JSON.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}
