//! One node's dumped tensors: statistics, badges and histogram of each.

use super::*;

/// Which node's dump is shown: its graph dump, rank and step, and the ranks it has.
#[derive(Clone, Copy)]
pub(super) struct Shown<'a> {
    pub g: &'a GraphDump,
    pub rank: u32,
    pub step: u32,
    pub node: &'a str,
    pub ranks: &'a [u32],
}

pub(super) fn node_dump(
    ui: &mut egui::Ui,
    tensors: &TensorsState,
    state: &mut TensorPanelState,
    at: Shown,
) -> Option<Action> {
    let Shown { g, step, node, .. } = at;
    let s = g.steps.iter().find(|s| s.step == step)?;
    let Some(nd) = s.nodes.get(node) else {
        ui.weak(format!("{node}: nothing dumped in step {step}"));
        return None;
    };
    let mut action = None;
    for f in &nd.files {
        ui.push_id(&f.path, |ui| {
            if let Some(a) = tensor_view(ui, tensors, state, at, f) {
                action = Some(a);
            }
        });
    }
    action
}

pub(super) fn tensor_view(
    ui: &mut egui::Ui,
    tensors: &TensorsState,
    state: &mut TensorPanelState,
    at: Shown,
    f: &DumpFile,
) -> Option<Action> {
    let slot = f.name.slot();
    let summary = tensors.summary(&f.path);
    let is_output = f.name.io == crate::model::tensor::Io::Output;
    // Inputs fold to one line (shape and badges), outputs open: what the node computed first.
    let id = ui.make_persistent_id(("tensor", &slot));
    let mut action = None;
    egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, is_output)
        .show_header(ui, |ui| {
            ui.label(RichText::new(&slot).strong().monospace());
            match summary {
                Some(Ok(s)) => {
                    ui.label(RichText::new(s.info.describe()).monospace());
                    badges(ui, s);
                }
                Some(Err(e)) => {
                    ui.colored_label(ui.visuals().warn_fg_color, e);
                }
                None => crate::ui::loading::busy(ui, ""),
            }
        })
        .body(|ui| {
            let Some(Ok(s)) = summary else { return };
            if let Some(w) = &s.warning {
                ui.colored_label(ui.visuals().warn_fg_color, w);
            }
            stats_grid(ui, s);
            if let Some(h) = &s.stats.histogram {
                ui.label(RichText::new(format!("{slot} histogram")).small().weak());
                histogram(ui, "histogram", h);
            }
            action = compare_row(ui, tensors, at, f);
            if !s.info.shape.is_empty() && s.stats.count > 0 {
                egui::CollapsingHeader::new(format!("{slot} heatmap and values"))
                    .default_open(false)
                    .show(ui, |ui| {
                        if let Some(a) = slice_view(ui, tensors, state, &f.path, &s.info.shape) {
                            action = Some(a);
                        }
                    });
            }
        });
    action
}

/// NaN / +Inf / −Inf / zero counts; a coloured badge for each non-zero bad count.
pub(super) fn badges(ui: &mut egui::Ui, s: &TensorSummary) {
    let st = &s.stats;
    let badge = |ui: &mut egui::Ui, text: String, fill: Color32| {
        ui.label(
            RichText::new(text)
                .color(Color32::WHITE)
                .background_color(fill)
                .strong(),
        );
    };
    if st.nan > 0 {
        badge(ui, format!("NaN {}", st.nan), NAN_COLOUR);
    }
    if st.pos_inf > 0 {
        badge(ui, format!("+Inf {}", st.pos_inf), INF_COLOUR);
    }
    if st.neg_inf > 0 {
        badge(ui, format!("-Inf {}", st.neg_inf), INF_COLOUR);
    }
}

pub(super) fn stats_grid(ui: &mut egui::Ui, s: &TensorSummary) {
    let st = &s.stats;
    let v = |x: Option<f64>| x.map_or("—".to_string(), fmt_value);
    egui::Grid::new("stats")
        .num_columns(4)
        .spacing([8.0, 1.0])
        .show(ui, |ui| {
            for (k1, v1, k2, v2) in [
                ("min", v(st.min), "max", v(st.max)),
                ("mean", v(st.mean), "std", v(st.std)),
                (
                    "zeros",
                    st.zero.to_string(),
                    "elements",
                    st.count.to_string(),
                ),
                (
                    "NaN",
                    st.nan.to_string(),
                    "±Inf",
                    format!("{}/{}", st.pos_inf, st.neg_inf),
                ),
            ] {
                ui.weak(k1);
                ui.monospace(v1);
                ui.weak(k2);
                ui.monospace(v2);
                ui.end_row();
            }
        });
}

pub(crate) fn histogram(ui: &mut egui::Ui, id: &str, h: &crate::model::tensor::Histogram) {
    use egui_plot::{Bar, BarChart, Plot};
    let n = h.counts.len().max(1) as f64;
    let w = (h.hi - h.lo) / n;
    let bars: Vec<Bar> = h
        .counts
        .iter()
        .enumerate()
        .map(|(k, &c)| Bar::new(h.lo + (k as f64 + 0.5) * w, c as f64).width(w))
        .collect();
    Plot::new(id)
        .height(90.0)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .show_grid(false)
        .y_axis_min_width(24.0)
        .show(ui, |p| {
            p.bar_chart(BarChart::new("count", bars).color(crate::ui::palette::HISTOGRAM))
        });
}
