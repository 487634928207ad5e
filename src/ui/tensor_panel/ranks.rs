//! The selected node's outputs on every rank that dumped them: one row per rank, the rank that
//! stands apart from the others marked (`analysis::rank_spread`).

use super::*;
use crate::analysis::rank_spread;
use crate::model::tensor::TensorStats;

pub(super) fn rank_table(
    ui: &mut egui::Ui,
    tensors: &TensorsState,
    graph: &str,
    step: u32,
    node: &str,
    ranks: &[u32],
) {
    if ranks.len() < 2 {
        return;
    }
    let outputs = |r: u32| {
        let s = tensors
            .catalog
            .graph(r, graph)?
            .steps
            .iter()
            .find(|s| s.step == step)?;
        Some(s.nodes.get(node)?.outputs().collect::<Vec<_>>())
    };
    let mut slots: Vec<String> = ranks
        .iter()
        .filter_map(|&r| outputs(r))
        .flatten()
        .map(|f| f.name.slot())
        .collect();
    slots.sort();
    slots.dedup();
    for slot in slots {
        let rows: Vec<(u32, Option<&TensorStats>)> = ranks
            .iter()
            .map(|&r| {
                let st = outputs(r).and_then(|fs| {
                    let f = fs.into_iter().find(|f| f.name.slot() == slot)?;
                    tensors.summary(&f.path)?.as_ref().ok().map(|s| &s.stats)
                });
                (r, st)
            })
            .collect();
        let known: Vec<(u32, &TensorStats)> =
            rows.iter().filter_map(|(r, s)| Some((*r, (*s)?))).collect();
        let apart = rank_spread::farthest(&known.iter().map(|(_, s)| *s).collect::<Vec<_>>())
            .map(|(i, why)| (known[i].0, why));
        ui.add_space(4.0);
        ui.strong(format!("{slot} on {} ranks, step {step}", rows.len()));
        let v = |x: Option<f64>| x.map_or("—".to_string(), fmt_value);
        egui::Grid::new(("rank_table", &slot))
            .striped(true)
            .num_columns(6)
            .show(ui, |ui| {
                for h in ["rank", "min", "max", "mean", "NaN", "Inf"] {
                    ui.strong(h);
                }
                ui.end_row();
                for (r, st) in &rows {
                    match apart.as_ref().filter(|(a, _)| a == r) {
                        Some((_, why)) => {
                            ui.label(
                                RichText::new(format!("rank {r} · farthest"))
                                    .strong()
                                    .color(ui.visuals().warn_fg_color),
                            )
                            .on_hover_text(why);
                        }
                        None => {
                            ui.monospace(format!("rank {r}"));
                        }
                    }
                    let Some(s) = st else {
                        ui.weak("no dump");
                        ui.end_row();
                        continue;
                    };
                    ui.monospace(v(s.min));
                    ui.monospace(v(s.max));
                    ui.monospace(v(s.mean));
                    let count = |n: u64, c: Color32| {
                        let t = RichText::new(n.to_string()).monospace();
                        if n > 0 { t.color(c).strong() } else { t }
                    };
                    ui.label(count(s.nan, NAN_COLOUR));
                    ui.label(count(s.inf(), INF_COLOUR));
                    ui.end_row();
                }
            });
    }
}
