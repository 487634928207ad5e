//! msprobe statistics: the table of a step's entries, and the selected node's linked records.

use super::*;

/// msprobe's statistics as a table of their own: the selected step's entries, those with
/// `null` max/min (NaN/Inf inside) in red; a linked entry's key selects its node.
pub(super) fn msprobe_table(
    ui: &mut egui::Ui,
    tensors: &TensorsState,
    step: Option<u32>,
) -> Option<Action> {
    let steps = &tensors.msprobe;
    let chosen: Vec<usize> = (0..steps.len())
        .filter(|&k| step.is_none_or(|n| steps[k].step == n))
        .collect();
    let chosen = if chosen.is_empty() && !steps.is_empty() {
        vec![0]
    } else {
        chosen
    };
    let mut action = None;
    for k in chosen {
        let s = steps[k].as_ref();
        let links = tensors.links.as_ref().and_then(|l| l.step(k));
        let bad = s
            .entries
            .iter()
            .filter(|e| e.tensors.iter().any(|t| t.null_stats()))
            .count();
        egui::CollapsingHeader::new(format!(
            "msprobe step {} · {} · {} entries, {bad} with null stats",
            s.step,
            s.who,
            s.entries.len()
        ))
        .id_salt(("msprobe", s.step, &s.who))
        .show(ui, |ui| {
            egui::Grid::new(("msprobe_grid", s.step, &s.who))
                .striped(true)
                .num_columns(6)
                .show(ui, |ui| {
                    for h in ["entry", "slot", "dtype", "max", "min", "mean"] {
                        ui.strong(h);
                    }
                    ui.end_row();
                    let v = |x: Option<f64>| x.map_or("null".to_string(), fmt_value);
                    let mut rows = 0;
                    for (i, e) in s.entries.iter().enumerate() {
                        let link = links.and_then(|l| l.links.get(i));
                        for t in &e.tensors {
                            rows += 1;
                            if rows > MAX_MSPROBE_ROWS {
                                continue;
                            }
                            let key = RichText::new(&*e.key).small();
                            let key = if t.null_stats() {
                                key.color(NAN_COLOUR)
                            } else {
                                key
                            };
                            // The node of this slot (an output's own node, else the entry's).
                            let node = link.and_then(|l| {
                                l.outputs
                                    .iter()
                                    .find(|(slot, _)| *slot == t.slot)
                                    .map(|(_, n)| n)
                                    .or(l.node.as_ref())
                            });
                            match (node, link) {
                                (Some(n), Some(l)) => {
                                    let r = ui.link(key).on_hover_text(format!(
                                        "{n} ({:?}): {}",
                                        l.confidence, l.reason
                                    ));
                                    if r.clicked() {
                                        action = Some(Action::Reveal(n.to_string()));
                                    }
                                }
                                _ => {
                                    let r = ui.label(key);
                                    if let Some(l) = link {
                                        r.on_hover_text(&l.reason);
                                    }
                                }
                            }
                            ui.monospace(t.slot.as_str());
                            ui.monospace(short_torch_dtype(&t.dtype));
                            ui.monospace(v(t.max));
                            ui.monospace(v(t.min));
                            ui.monospace(v(t.mean));
                            ui.end_row();
                        }
                    }
                    if rows > MAX_MSPROBE_ROWS {
                        ui.weak(format!("… {} more", rows - MAX_MSPROBE_ROWS));
                        ui.end_row();
                    }
                });
        });
    }
    action
}

/// The msprobe records linked to the selected node, every step: one row per output slot that
/// is this node's value, `null` statistics in red. In tensor mode each record's file (`.pt`,
/// or `.npy` on MindSpore) opens below as heatmap and values.
pub(super) fn node_msprobe(
    ui: &mut egui::Ui,
    tensors: &TensorsState,
    state: &mut TensorPanelState,
    node: &str,
) -> Option<Action> {
    let links = tensors.links.as_ref()?;
    if links.result.is_loading() {
        crate::ui::loading::busy(ui, "linking msprobe entries to nodes…");
        return None;
    }
    let found = links.of_node(node);
    ui.add_space(4.0);
    if found.is_empty() {
        ui.weak(format!("msprobe: no entry linked to {node}"));
        return None;
    }
    let mut files = Vec::new();
    ui.strong(format!("msprobe of {node}"));
    let v = |x: Option<f64>| {
        let t = RichText::new(x.map_or("null".to_string(), fmt_value)).monospace();
        if x.is_none() { t.color(NAN_COLOUR) } else { t }
    };
    egui::Grid::new(("node_msprobe", node))
        .striped(true)
        .num_columns(7)
        .show(ui, |ui| {
            for h in ["step", "entry", "slot", "max", "min", "mean", "link"] {
                ui.strong(h);
            }
            ui.end_row();
            for (k, l) in found {
                let Some(s) = tensors.msprobe.get(k) else {
                    continue;
                };
                let Some(e) = s.entries.get(l.entry) else {
                    continue;
                };
                let mine = |slot: &str| {
                    l.outputs.iter().any(|(x, n)| x == slot && n == node)
                        || (l.outputs.is_empty() && slot.starts_with("output"))
                };
                for t in e.tensors.iter().filter(|t| mine(&t.slot)) {
                    ui.monospace(format!("step {}", s.step));
                    let key = RichText::new(&*e.key).small();
                    ui.label(if t.null_stats() {
                        key.color(NAN_COLOUR)
                    } else {
                        key
                    });
                    ui.monospace(format!("{} {}", t.slot, short_torch_dtype(&t.dtype)));
                    ui.label(v(t.max));
                    ui.label(v(t.min));
                    ui.label(v(t.mean));
                    ui.weak(format!("{:?}", l.confidence).to_lowercase())
                        .on_hover_text(&l.reason);
                    ui.end_row();
                    if let Some(p) = s.tensor_file(t) {
                        let shape: Vec<u64> = t.shape.iter().map(|&d| d.max(0) as u64).collect();
                        files.push((format!("step {} {}", s.step, t.slot), p, shape));
                    }
                }
            }
        });
    let mut action = None;
    for (what, path, shape) in files.iter().filter(|(_, _, s)| !s.is_empty()) {
        egui::CollapsingHeader::new(format!("{what} values"))
            .id_salt(("msprobe_values", path))
            .default_open(false)
            .show(ui, |ui| {
                if let Some(a) = slice_view(ui, tensors, state, path, shape) {
                    action = Some(a);
                }
            });
    }
    action
}

/// `torch.bfloat16` → `bf16`; numpy descriptors go through `short_dtype`.
pub(super) fn short_torch_dtype(d: &str) -> String {
    match (fx_dtype_of_torch(d), d.strip_prefix("torch.")) {
        (Some(fx), _) => fx.to_string(),
        (None, Some(x)) => x.to_string(),
        (None, None) => short_dtype(d),
    }
}
