//! msprobe statistics of the selected node, per step.

use super::*;

/// msprobe's statistics as a table of their own: the selected step's entries, those with
/// `null` max/min (NaN/Inf inside) in red.
pub(super) fn msprobe_table(
    ui: &mut egui::Ui,
    steps: &[std::sync::Arc<MsprobeStep>],
    step: Option<u32>,
) {
    let chosen: Vec<&MsprobeStep> = steps
        .iter()
        .map(|s| s.as_ref())
        .filter(|s| step.is_none_or(|n| s.step == n))
        .collect();
    let chosen = if chosen.is_empty() {
        steps.iter().take(1).map(|s| s.as_ref()).collect()
    } else {
        chosen
    };
    for s in chosen {
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
                    for e in &s.entries {
                        for t in &e.tensors {
                            rows += 1;
                            if rows > MAX_MSPROBE_ROWS {
                                continue;
                            }
                            let key = RichText::new(&e.key).small();
                            ui.label(if t.null_stats() {
                                key.color(NAN_COLOUR)
                            } else {
                                key
                            });
                            ui.monospace(&t.slot);
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
}

/// `torch.bfloat16` → `bf16`; numpy descriptors go through `short_dtype`.
pub(super) fn short_torch_dtype(d: &str) -> String {
    match d.strip_prefix("torch.") {
        Some("bfloat16") => "bf16".into(),
        Some("float16") => "f16".into(),
        Some("float32") => "f32".into(),
        Some("float64") => "f64".into(),
        Some(x) if x.starts_with("int") => format!("i{}", &x[3..]),
        Some(x) => x.to_string(),
        None => short_dtype(d),
    }
}
