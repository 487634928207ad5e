//! The NaN/Inf tracer: the nodes whose dumps hold NaN or Inf, and where the first bad value
//! came from.

use super::*;

pub(super) fn tracer(
    ui: &mut egui::Ui,
    tensors: &TensorsState,
    rank: u32,
    step: u32,
    ranks: usize,
) -> Option<Action> {
    let mut action = None;
    ui.horizontal(|ui| {
        if ui
            .button("First NaN")
            .on_hover_text(
                "Select the first node (graph order) whose outputs hold NaN in this step",
            )
            .clicked()
        {
            action = Some(Action::Trace(Bad::Nan, rank, step));
        }
        if ui
            .button("First Inf")
            .on_hover_text("The same for ±Inf (kept apart: masks produce −Inf on purpose)")
            .clicked()
        {
            action = Some(Action::Trace(Bad::Inf, rank, step));
        }
    });
    if ranks > 1 {
        ui.horizontal(|ui| {
            if ui
                .button("First NaN, all ranks")
                .on_hover_text("The first step, rank and node (graph order) whose outputs hold NaN")
                .clicked()
            {
                action = Some(Action::TraceAcross(Bad::Nan));
            }
            if ui.button("First Inf, all ranks").clicked() {
                action = Some(Action::TraceAcross(Bad::Inf));
            }
        });
    }
    if let Some(tv) = &tensors.trace
        && tv.step.is_none_or(|s| s == step)
    {
        if let Some((_, _, what)) = &tv.found {
            ui.label(
                RichText::new(format!("first {}: {what}", tv.bad.label()))
                    .small()
                    .strong(),
            );
        }
        match &tv.result {
            Ok(t) => {
                for l in t.explain() {
                    ui.label(RichText::new(l).small());
                }
            }
            Err(e) => {
                ui.weak(e);
            }
        }
    }
    action
}

/// The nodes of this step whose outputs hold NaN, and those holding ±Inf, in graph order; a
/// click selects one.
pub(super) fn bad_nodes(
    ui: &mut egui::Ui,
    tensors: &TensorsState,
    g: &GraphDump,
    step: u32,
    graph: &crate::model::fx::FxGraph,
) -> Option<Action> {
    let s = g.steps.iter().find(|s| s.step == step)?;
    let mut action = None;
    for bad in [Bad::Nan, Bad::Inf] {
        let names: Vec<&str> = graph
            .nodes
            .iter()
            .filter_map(|n| s.nodes.get(n.name.as_str()))
            .filter(|nd| {
                nd.outputs().any(|f| {
                    tensors
                        .summary(&f.path)
                        .and_then(|r| r.as_ref().ok())
                        .is_some_and(|x| bad.count(&x.stats) > 0)
                })
            })
            .map(|nd| nd.node.as_str())
            .collect();
        if names.is_empty() {
            continue;
        }
        egui::CollapsingHeader::new(
            RichText::new(format!(
                "{} in the outputs of {} nodes",
                bad.label(),
                names.len()
            ))
            .color(if bad == Bad::Nan {
                NAN_COLOUR
            } else {
                INF_COLOUR
            }),
        )
        .id_salt(("bad_nodes", bad.label(), step))
        .show(ui, |ui| {
            ui.horizontal_wrapped(|ui| {
                for n in names {
                    if ui.link(RichText::new(n).monospace().small()).clicked() {
                        action = Some(Action::Reveal(n.to_string()));
                    }
                }
            });
        });
    }
    action
}
