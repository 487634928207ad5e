//! The selected node against the original stage, when the open run holds npugraph_ex's two
//! stage dumps: the original node it stands for, how the passes made it, and whether its value
//! departs beyond noise (and whether the numbers part there).

use crate::analysis::accuracy::stages::Origin;
use crate::app::accuracy::AccuracyState;
use crate::app::{Loading, PhaseState};

/// Draws the section for the node selected in `ph`, when `ph` is the compared phase: the node
/// is followed to the last pass, whose names the pairs carry.
pub(super) fn show(acc: &AccuracyState, ph: &PhaseState, ui: &mut egui::Ui) {
    let (Loading::Ready(c), Some(selected)) = (&acc.stages.result, ph.selected.as_deref()) else {
        return;
    };
    let Some(last) = c.pass_files.last() else {
        return;
    };
    if ph.pass_of(last).is_none() {
        return;
    }
    let node = if ph.current + 1 == ph.passes.len() {
        Some(selected.to_string())
    } else {
        ph.history(selected)
            .and_then(|h| h.last().and_then(|e| e.name.clone()))
    };
    let Some(i) = node.and_then(|n| c.pairs.iter().position(|p| p.node == n)) else {
        return;
    };
    let (p, k) = (&c.pairs[i], &c.checks[i]);
    ui.separator();
    ui.strong("vs original stage");
    let passes = |list: &[usize]| {
        list.iter()
            .filter_map(|&i| c.pass_names.get(i).cloned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let how = match &p.origin {
        Origin::Kept => "kept by every pass".to_string(),
        Origin::Changed { passes: list, what } => {
            format!("changed by {} ({})", passes(list), what.join("; "))
        }
        Origin::Replaced { pass, .. } => format!("built by {}", passes(&[*pass])),
    };
    ui.label(format!(
        "stands for `{}` ({}) of the original graph; {how}",
        p.original, p.original_target
    ));
    match (k.agrees(), &k.why) {
        (Some(true), _) => {
            ui.colored_label(crate::ui::palette::OK, format!("agrees: {}", k.numbers()));
        }
        (Some(false), _) => {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("departs: {}", k.numbers()),
            );
        }
        (None, why) => {
            ui.weak(format!(
                "not judged: {}",
                why.as_deref().unwrap_or("no data")
            ));
        }
    }
    // Both stages side by side.
    if let (Some(a), Some(b)) = (&k.original, &k.optimized) {
        let v = |x: Option<f64>| x.map_or("—".to_string(), crate::model::tensor::fmt_value);
        egui::Grid::new("stage_sides").striped(true).show(ui, |ui| {
            ui.weak("");
            ui.weak("original");
            ui.weak("optimized");
            ui.end_row();
            let short = crate::model::tensor::short_dtype;
            let rows: [(&str, String, String); 5] = [
                ("dtype", short(&a.dtype), short(&b.dtype)),
                ("shape", format!("{:?}", a.shape), format!("{:?}", b.shape)),
                ("min", v(a.summary.min), v(b.summary.min)),
                ("max", v(a.summary.max), v(b.summary.max)),
                ("mean", v(a.summary.mean), v(b.summary.mean)),
            ];
            for (name, x, y) in rows {
                ui.weak(name);
                ui.monospace(x);
                ui.monospace(y);
                ui.end_row();
            }
        });
    }
    if c.findings.iter().any(|f| f.pair == i) {
        ui.colored_label(
            ui.visuals().error_fg_color,
            "the numbers part here: its inputs agree with the original's",
        );
    }
}
