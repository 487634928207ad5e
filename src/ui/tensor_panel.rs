//! The selected node's dumped tensors, shown under the node in the inspector (issue 6): for
//! each input and output in the chosen step and rank, its shape, dtype, statistics, NaN/Inf
//! badges and histogram; a compare with another step or rank; the NaN/Inf tracer; msprobe
//! statistics. Everything drawn here was computed in the background (`app::tensors`).

use crate::analysis::nan_trace::Bad;
use crate::app::App;
use crate::app::phase::PhaseState;
use crate::app::tensors::TensorsState;
use crate::model::tensor::{
    DumpFile, GraphDump, MsprobeStep, TensorSummary, fmt_value, short_dtype,
};
use egui::{Color32, RichText};
use std::path::PathBuf;

const NAN_COLOUR: Color32 = Color32::from_rgb(210, 40, 40);
const INF_COLOUR: Color32 = Color32::from_rgb(225, 120, 20);
/// Rows of the msprobe table before "… N more".
const MAX_MSPROBE_ROWS: usize = 300;

#[derive(Default)]
pub struct TensorPanelState {
    /// The step shown; the first step of the dump until the user picks one.
    pub step: Option<u32>,
    /// The rank shown; the best-matching rank until the user picks one.
    pub rank: Option<u32>,
    /// Leading indices of the 2-D slice shown in heatmaps (N-D tensors).
    pub lead: Vec<u64>,
    /// First row of the value table's page.
    pub row: usize,
}

/// Rows per page of the value table, and columns shown before "…".
const PAGE_ROWS: usize = 16;
const TABLE_COLS: usize = 8;
/// Heatmap cells a side at most (larger slices are sampled).
const HEAT_CELLS: usize = 96;

/// What the user asked for, applied to the app once the inspector has been drawn.
pub enum Action {
    /// What to look for, in which rank and step.
    Trace(Bad, u32, u32),
    Compare(PathBuf, PathBuf, String),
    LoadSlice(PathBuf, Vec<u64>),
    Reveal(String),
    Attach,
}

pub fn show(
    tensors: &TensorsState,
    phase: &PhaseState,
    state: &mut TensorPanelState,
    ui: &mut egui::Ui,
) -> Option<Action> {
    ui.add_space(8.0);
    ui.separator();
    let mut action = None;
    ui.horizontal(|ui| {
        ui.strong("Dumped data");
        if tensors.pending > 0 {
            ui.spinner();
            ui.weak(format!("summarising {} files…", tensors.pending));
        }
        if ui
            .small_button("Attach dump…")
            .on_hover_text("A data dump (worldsize*_global_rank*) or msprobe dump kept elsewhere")
            .clicked()
        {
            action = Some(Action::Attach);
        }
    });
    for e in &tensors.errors {
        ui.colored_label(ui.visuals().warn_fg_color, e);
    }
    if tensors.is_empty() {
        ui.weak("No tensor dump found with this run.");
        return action;
    }
    let graph = phase.current_file().and_then(|f| f.graphs.first());
    if let Some(graph) = graph
        && let Some((best_rank, g, q)) = tensors.best_match(graph)
    {
        let ranks: Vec<u32> = tensors
            .catalog
            .ranks
            .iter()
            .filter(|r| r.graphs.iter().any(|x| x.name == g.name))
            .map(|r| r.rank)
            .collect();
        let rank = state
            .rank
            .filter(|r| ranks.contains(r))
            .unwrap_or(best_rank.rank);
        let g = tensors.catalog.graph(rank, &g.name).unwrap_or(g);
        let quality = if q.score() >= 0.9 {
            ui.visuals().text_color()
        } else {
            ui.visuals().warn_fg_color
        };
        ui.label(RichText::new(format!("{} · {}", g.name, q.describe())).color(quality))
            .on_hover_text("How many dumped node names (and targets) this pass has");
        let step = pick_step_rank(ui, state, g, &ranks, rank);
        if let Some(a) = tracer(ui, tensors, rank, step) {
            action = Some(a);
        }
        if let Some(sel) = phase.selected.as_deref() {
            let node = sel.rsplit('/').next().unwrap_or(sel);
            if let Some(a) = node_dump(ui, tensors, state, g, rank, step, node, &ranks) {
                action = Some(a);
            }
        }
        ui.add_space(4.0);
        if let Some(a) = bad_nodes(ui, tensors, g, step, graph) {
            action = Some(a);
        }
    } else if !tensors.catalog.is_empty() {
        ui.weak("No dumped graph matches this pass's node names.");
    }
    if !tensors.msprobe.is_empty() {
        msprobe_table(ui, &tensors.msprobe, state.step);
    }
    action
}

/// Step (and rank, when several) selectors; returns the step shown.
fn pick_step_rank(
    ui: &mut egui::Ui,
    state: &mut TensorPanelState,
    g: &GraphDump,
    ranks: &[u32],
    rank: u32,
) -> u32 {
    let steps: Vec<u32> = g.steps.iter().map(|s| s.step).collect();
    let mut step = state
        .step
        .filter(|s| steps.contains(s))
        .or(steps.first().copied())
        .unwrap_or(0);
    ui.horizontal_wrapped(|ui| {
        ui.weak("step");
        for s in &steps {
            if ui
                .selectable_label(step == *s, format!("step {s}"))
                .clicked()
            {
                step = *s;
                state.step = Some(*s);
            }
        }
        if ranks.len() > 1 {
            ui.weak("rank");
            for r in ranks {
                if ui
                    .selectable_label(rank == *r, format!("rank {r}"))
                    .clicked()
                {
                    state.rank = Some(*r);
                }
            }
        }
    });
    step
}

fn tracer(ui: &mut egui::Ui, tensors: &TensorsState, rank: u32, step: u32) -> Option<Action> {
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
    if let Some((_, s, result)) = &tensors.trace
        && *s == step
    {
        match result {
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
fn bad_nodes(
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
            .filter_map(|n| s.nodes.get(&n.name))
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

#[allow(clippy::too_many_arguments)]
fn node_dump(
    ui: &mut egui::Ui,
    tensors: &TensorsState,
    state: &mut TensorPanelState,
    g: &GraphDump,
    rank: u32,
    step: u32,
    node: &str,
    ranks: &[u32],
) -> Option<Action> {
    let s = g.steps.iter().find(|s| s.step == step)?;
    let Some(nd) = s.nodes.get(node) else {
        ui.weak(format!("{node}: nothing dumped in step {step}"));
        return None;
    };
    let mut action = None;
    for f in &nd.files {
        ui.push_id(&f.path, |ui| {
            if let Some(a) = tensor_view(ui, tensors, state, g, rank, step, node, f, ranks) {
                action = Some(a);
            }
        });
    }
    action
}

#[allow(clippy::too_many_arguments)]
fn tensor_view(
    ui: &mut egui::Ui,
    tensors: &TensorsState,
    state: &mut TensorPanelState,
    g: &GraphDump,
    rank: u32,
    step: u32,
    node: &str,
    f: &DumpFile,
    ranks: &[u32],
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
                None => {
                    ui.spinner();
                }
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
                histogram(ui, h);
            }
            action = compare_row(ui, tensors, g, rank, step, node, f, ranks);
            if !s.info.shape.is_empty() && s.stats.count > 0 {
                egui::CollapsingHeader::new(format!("{slot} heatmap and values"))
                    .default_open(false)
                    .show(ui, |ui| {
                        if let Some(a) = slice_view(ui, tensors, state, f, s) {
                            action = Some(a);
                        }
                    });
            }
        });
    action
}

/// The heatmap and paged value table of one 2-D slice (read in the background on demand).
fn slice_view(
    ui: &mut egui::Ui,
    tensors: &TensorsState,
    state: &mut TensorPanelState,
    f: &DumpFile,
    s: &TensorSummary,
) -> Option<Action> {
    let shape = &s.info.shape;
    let nlead = shape.len().saturating_sub(2);
    state.lead.resize(nlead, 0);
    if nlead > 0 {
        ui.horizontal_wrapped(|ui| {
            ui.weak("slice");
            for (k, v) in state.lead.iter_mut().enumerate() {
                let max = shape[k].saturating_sub(1);
                *v = (*v).min(max);
                ui.add(
                    egui::DragValue::new(v)
                        .range(0..=max)
                        .prefix(format!("d{k}=")),
                );
            }
            ui.weak(", :, :");
        });
    }
    let lead = state.lead.clone();
    let view = tensors
        .slice
        .as_ref()
        .filter(|v| v.path == f.path && v.lead == lead);
    let Some(view) = view else {
        ui.spinner();
        return Some(Action::LoadSlice(f.path.clone(), lead));
    };
    match &view.result {
        None => {
            ui.spinner();
        }
        Some(Err(e)) => {
            ui.colored_label(ui.visuals().warn_fg_color, e);
        }
        Some(Ok(sl)) => {
            heatmap(ui, sl);
            value_table(ui, state, sl);
        }
    }
    None
}

/// Blue (negative) – white – red (positive), by the slice's largest finite |value|; NaN
/// magenta, ±Inf black.
fn heat_colour(v: f64, scale: f64) -> Color32 {
    if v.is_nan() {
        return Color32::from_rgb(220, 0, 220);
    }
    if v.is_infinite() {
        return Color32::BLACK;
    }
    let t = if scale > 0.0 {
        (v / scale).clamp(-1.0, 1.0)
    } else {
        0.0
    };
    let k = (255.0 * (1.0 - t.abs())) as u8;
    if t >= 0.0 {
        Color32::from_rgb(255, k, k)
    } else {
        Color32::from_rgb(k, k, 255)
    }
}

fn heatmap(ui: &mut egui::Ui, sl: &crate::model::tensor::Slice2d) {
    let (rows, cols) = (sl.rows.max(1), sl.cols.max(1));
    let (r_cells, c_cells) = (rows.min(HEAT_CELLS), cols.min(HEAT_CELLS));
    let scale = sl
        .values
        .iter()
        .filter(|v| v.is_finite())
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let width = ui.available_width().min(320.0);
    let cell = width / c_cells as f32;
    let height = (cell * r_cells as f32).min(240.0);
    let cell_h = height / r_cells as f32;
    let (resp, painter) = ui.allocate_painter(egui::vec2(width, height), egui::Sense::hover());
    let at = |r: usize, c: usize| -> Option<f64> { sl.values.get(r * sl.cols + c).copied() };
    for rc in 0..r_cells {
        for cc in 0..c_cells {
            let (r, c) = (rc * rows / r_cells, cc * cols / c_cells);
            let Some(v) = at(r, c) else { continue };
            let min = resp.rect.min + egui::vec2(cc as f32 * cell, rc as f32 * cell_h);
            painter.rect_filled(
                egui::Rect::from_min_size(min, egui::vec2(cell, cell_h)),
                0.0,
                heat_colour(v, scale),
            );
        }
    }
    if let Some(p) = resp.hover_pos() {
        let d = p - resp.rect.min;
        let c = ((d.x / cell) as usize).min(c_cells - 1) * cols / c_cells;
        let r = ((d.y / cell_h) as usize).min(r_cells - 1) * rows / r_cells;
        if let Some(v) = at(r, c) {
            resp.on_hover_text(format!("[{r}, {c}] = {}", fmt_value(v)));
        }
    }
    let sampled = if rows > r_cells || cols > c_cells {
        format!(", sampled to {r_cells}×{c_cells}")
    } else {
        String::new()
    };
    ui.label(
        RichText::new(format!(
            "{rows}×{cols} slice, colour scale ±{}{sampled}{}",
            fmt_value(scale),
            if sl.cut { " (first values only)" } else { "" }
        ))
        .small()
        .weak(),
    );
}

fn value_table(
    ui: &mut egui::Ui,
    state: &mut TensorPanelState,
    sl: &crate::model::tensor::Slice2d,
) {
    let rows = sl.rows;
    state.row = state.row.min(rows.saturating_sub(1)) / PAGE_ROWS * PAGE_ROWS;
    ui.horizontal(|ui| {
        if ui.small_button("◀").clicked() {
            state.row = state.row.saturating_sub(PAGE_ROWS);
        }
        ui.weak(format!(
            "rows {}–{} of {rows}",
            state.row,
            (state.row + PAGE_ROWS).min(rows).saturating_sub(1)
        ));
        if ui.small_button("▶").clicked() && state.row + PAGE_ROWS < rows {
            state.row += PAGE_ROWS;
        }
    });
    let cols = sl.cols.min(TABLE_COLS);
    egui::Grid::new("values")
        .striped(true)
        .spacing([6.0, 0.0])
        .show(ui, |ui| {
            for r in state.row..(state.row + PAGE_ROWS).min(rows) {
                ui.weak(r.to_string());
                for c in 0..cols {
                    let v = sl.values.get(r * sl.cols + c);
                    ui.monospace(v.map_or("·".to_string(), |v| fmt_value(*v)));
                }
                if sl.cols > cols {
                    ui.weak("…");
                }
                ui.end_row();
            }
        });
}

/// NaN / +Inf / −Inf / zero counts; a coloured badge for each non-zero bad count.
fn badges(ui: &mut egui::Ui, s: &TensorSummary) {
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

fn stats_grid(ui: &mut egui::Ui, s: &TensorSummary) {
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

fn histogram(ui: &mut egui::Ui, h: &crate::model::tensor::Histogram) {
    use egui_plot::{Bar, BarChart, Plot};
    let n = h.counts.len().max(1) as f64;
    let w = (h.hi - h.lo) / n;
    let bars: Vec<Bar> = h
        .counts
        .iter()
        .enumerate()
        .map(|(k, &c)| Bar::new(h.lo + (k as f64 + 0.5) * w, c as f64).width(w))
        .collect();
    Plot::new("histogram")
        .height(90.0)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .show_grid(false)
        .y_axis_min_width(24.0)
        .show(ui, |p| {
            p.bar_chart(BarChart::new("count", bars).color(Color32::from_rgb(90, 140, 220)))
        });
}

/// "vs step 0" / "vs rank 1" buttons, and the comparison once computed.
#[allow(clippy::too_many_arguments)]
fn compare_row(
    ui: &mut egui::Ui,
    tensors: &TensorsState,
    g: &GraphDump,
    rank: u32,
    step: u32,
    node: &str,
    f: &DumpFile,
    ranks: &[u32],
) -> Option<Action> {
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
    if let Some(c) = tensors.compare.as_ref().filter(|c| c.b == f.path) {
        match &c.result {
            None => {
                ui.spinner();
            }
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().warn_fg_color, e);
            }
            Some(Ok(r)) => {
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
        }
    }
    action
}

/// msprobe's statistics as a table of their own: the selected step's entries, those with
/// `null` max/min (NaN/Inf inside) in red.
fn msprobe_table(ui: &mut egui::Ui, steps: &[std::sync::Arc<MsprobeStep>], step: Option<u32>) {
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
fn short_torch_dtype(d: &str) -> String {
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

pub fn apply(app: &mut App, action: Action) {
    match action {
        Action::Trace(bad, rank, step) => app.trace_first(bad, Some(rank), step),
        Action::Compare(a, b, label) => app.compare_tensors(a, b, label),
        Action::LoadSlice(p, lead) => app.load_slice(p, lead),
        Action::Reveal(n) => app.reveal_node(n),
        Action::Attach => app.pick_and_attach_dump(),
    }
}
