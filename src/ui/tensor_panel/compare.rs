//! A tensor compared with its dump at another step or on another rank.

use super::*;

/// "vs step 0" / "vs rank 1" buttons, and the comparison once computed.
pub(super) fn compare_row(
    ui: &mut egui::Ui,
    tensors: &TensorsState,
    at: super::stats::Shown,
    f: &DumpFile,
) -> Option<Action> {
    let super::stats::Shown {
        g,
        rank,
        step,
        node,
        ranks,
    } = at;
    let same_slot = |g: &GraphDump, s: u32| -> Option<PathBuf> {
        let st = g.steps.iter().find(|x| x.step == s)?;
        let nd = st.nodes.get(node)?;
        nd.files
            .iter()
            .find(|x| {
                x.name.io == f.name.io && x.name.index == f.name.index && x.name.sub == f.name.sub
            })
            .map(|x| x.path.clone())
    };
    let mut others: Vec<(String, PathBuf)> = g
        .steps
        .iter()
        .filter(|s| s.step != step)
        .filter_map(|s| Some((format!("vs step {}", s.step), same_slot(g, s.step)?)))
        .collect();
    for r in ranks.iter().filter(|r| **r != rank) {
        if let Some(p) = tensors
            .catalog
            .graph(*r, &g.name)
            .and_then(|og| same_slot(og, step))
        {
            others.push((format!("vs rank {r}"), p));
        }
    }
    let mut action = None;
    if !others.is_empty() {
        ui.horizontal_wrapped(|ui| {
            for (label, p) in others {
                if ui.small_button(&label).clicked() {
                    let what = label.trim_start_matches("vs ");
                    action = Some(Action::Compare(
                        p,
                        f.path.clone(),
                        format!("{what} vs this"),
                    ));
                }
            }
        });
    }
    if let Some(c) = tensors.compare.as_ref().filter(|c| c.b == f.path)
        && let Some(r) = crate::ui::loading::show(ui, &c.result, "")
    {
        let at = r
            .argmax
            .as_ref()
            .map(|i| format!(" at {i:?}"))
            .unwrap_or_default();
        ui.label(
            RichText::new(format!(
                "{}: max abs diff {}{at}, max rel diff {}, cosine {}{}",
                c.label,
                fmt_value(r.max_abs_diff),
                fmt_value(r.max_rel_diff),
                r.cosine.map_or("—".into(), |x| format!("{x:.6}")),
                if r.non_finite > 0 {
                    format!(" ({} pairs with NaN/Inf skipped)", r.non_finite)
                } else {
                    String::new()
                }
            ))
            .small(),
        );
    }
    action
}
