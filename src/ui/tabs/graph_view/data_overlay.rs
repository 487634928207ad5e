//! Colouring the graph by the dumped data of its nodes: NaN/±Inf in their outputs, the largest
//! |value| they produced, or how much their output changed since the step before. The values
//! come from the app's tensor summaries (computed in the background); this only maps them to
//! colours, once per change.

use crate::analysis::tensor_overlay::{self as overlay, NodeLevel, OverlayStat};
use crate::app::App;
use egui::Color32;
use std::collections::HashMap;
use std::sync::Arc;

/// Node fills by node name, with a generation the scene compares to know when to repaint.
#[derive(Debug, Default)]
pub struct Tints {
    pub generation: u64,
    pub by_name: HashMap<String, Color32>,
    /// How bad each node's value is, when the overlay ranks nodes (higher is worse): folded
    /// boxes take their worst node's colour.
    pub severity: HashMap<String, f32>,
    /// One line for the legend.
    pub legend: String,
}

/// A line some module boxes carry, by module path, in its colour.
pub type BoxLines = HashMap<String, (Color32, String)>;

#[derive(Default)]
pub struct DataOverlay {
    pub stat: Option<OverlayStat>,
    /// Colour by each node's error against the golden run instead (when one is attached).
    pub vs_golden: bool,
    /// The dump step shown (default: the last).
    pub step: Option<u32>,
    cache: Option<(Key, Arc<Tints>)>,
    /// The golden fills, with the comparison and pass they were made for (held, so their
    /// addresses cannot be reused by others while compared).
    #[allow(clippy::type_complexity)]
    golden_cache: Option<(
        Arc<crate::analysis::accuracy::Comparison>,
        Arc<crate::model::fx::FxFile>,
        Arc<Tints>,
    )>,
    generation: u64,
    /// The module boxes' gradient lines of the compare they were made of.
    grads: Option<(Arc<crate::analysis::accuracy::Comparison>, Arc<BoxLines>)>,
}

#[derive(Debug, Clone, PartialEq)]
struct Key {
    stat: OverlayStat,
    rank: u32,
    graph: String,
    step: u32,
    summaries: usize,
    diffs_ready: bool,
    file: usize,
}

pub use crate::ui::palette::{CLEAN, INF, NAN};
use crate::ui::palette::{RAMP_HIGH as HIGH, RAMP_LOW as LOW};

/// The compare with the golden, once one is done.
fn comparison(app: &App) -> Option<&Arc<crate::analysis::accuracy::Comparison>> {
    app.peek::<crate::app::accuracy::AccuracyState>()?
        .comparison()
}

/// The overlay's controls for the toolbar: shown only when the run has a data dump or a golden.
pub fn controls(app: &App, st: &mut DataOverlay, ui: &mut egui::Ui) {
    if comparison(app).is_some() {
        ui.separator();
        ui.checkbox(&mut st.vs_golden, "error vs golden")
            .on_hover_text("Colour nodes by how far their output is from the golden run's");
    }
    let Some((_, g)) = matched(app) else { return };
    ui.separator();
    egui::ComboBox::from_label("Colour by data")
        .selected_text(st.stat.map_or("off", OverlayStat::label))
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut st.stat, None, "off");
            for s in OverlayStat::ALL {
                ui.selectable_value(&mut st.stat, Some(s), s.label());
            }
        })
        .response
        .on_hover_text("Colour nodes by their dumped data");
    if st.stat.is_some() {
        let steps: Vec<u32> = g.steps.iter().map(|s| s.step).collect();
        let cur = st
            .step
            .filter(|s| steps.contains(s))
            .or(steps.last().copied());
        egui::ComboBox::from_id_salt("data_overlay_step")
            .selected_text(cur.map_or("step ?".into(), |s| format!("step {s}")))
            .show_ui(ui, |ui| {
                for s in steps {
                    ui.selectable_value(&mut st.step, Some(s), format!("step {s}"));
                }
            });
    }
}

/// The (rank, graph) of the dump that matches the pass on screen.
fn matched(app: &App) -> Option<(u32, &crate::model::tensor::GraphDump)> {
    let file = app.phase.as_ref()?.current_file()?;
    let (r, g, q) = app.tensors.best_match(file.graphs.first()?)?;
    (q.score() > 0.0).then_some((r.rank, g))
}

/// The fills for the pass on screen, recomputed only when something they depend on changed.
pub fn tints(app: &mut App, st: &mut DataOverlay) -> Option<Arc<Tints>> {
    if st.vs_golden {
        return golden_tints(app, st);
    }
    let stat = st.stat?;
    let (rank, graph, step) = {
        let (rank, g) = matched(app)?;
        let step = st
            .step
            .filter(|s| g.steps.iter().any(|x| x.step == *s))
            .or(g.steps.last().map(|s| s.step))?;
        (rank, g.name.clone(), step)
    };
    if stat == OverlayStat::StepDiff {
        app.request_step_diffs(rank, &graph, step);
    }
    let key = Key {
        stat,
        rank,
        graph: graph.clone(),
        step,
        summaries: app.tensors.summaries.len(),
        diffs_ready: app
            .tensors
            .step_diffs
            .get(&(rank, graph.clone(), step))
            .is_some_and(Option::is_some),
        file: app
            .phase
            .as_ref()
            .and_then(|p| p.current_file())
            .map_or(0, |f| Arc::as_ptr(f) as usize),
    };
    if let Some((k, t)) = &st.cache
        && *k == key
    {
        return Some(t.clone());
    }
    let t = &app.tensors;
    let dump = t.catalog.graph(rank, &graph)?;
    let step_dump = dump.steps.iter().find(|s| s.step == step)?;
    let summary = |p: &std::path::Path| t.summary(p).and_then(|r| r.as_ref().ok()).map(|a| &**a);
    let levels: HashMap<String, NodeLevel> = match stat {
        OverlayStat::NanInf => overlay::nan_inf(step_dump, summary),
        OverlayStat::MaxAbs => overlay::max_abs(step_dump, summary),
        OverlayStat::StepDiff => t
            .step_diffs
            .get(&(rank, graph.clone(), step))
            .cloned()
            .flatten()
            .map(|d| {
                d.iter()
                    .map(|(k, v)| (k.clone(), NodeLevel::Value(*v)))
                    .collect()
            })
            .unwrap_or_default(),
    };
    let values: Vec<f64> = levels
        .values()
        .filter_map(|l| match l {
            NodeLevel::Value(v) => Some(*v),
            _ => None,
        })
        .collect();
    let by_name = levels
        .iter()
        .map(|(name, level)| {
            let c = match level {
                NodeLevel::Nan => NAN,
                NodeLevel::Inf => INF,
                NodeLevel::Clean => CLEAN,
                NodeLevel::Value(v) => ramp(overlay::scale(*v, values.iter().copied())),
            };
            (name.clone(), c)
        })
        .collect();
    let legend = legend(stat, step, &levels, &values, key.diffs_ready);
    st.generation += 1;
    let tints = Arc::new(Tints {
        generation: st.generation,
        by_name,
        severity: HashMap::new(),
        legend,
    });
    st.cache = Some((key, tints.clone()));
    Some(tints)
}

/// Each node's error against the golden (fxray's ‖t − g‖ / ‖g‖ of its worst output), on a log
/// ramp; nodes only one side has in the divergence colour, whatever their error.
fn golden_tints(app: &App, st: &mut DataOverlay) -> Option<Arc<Tints>> {
    let c = comparison(app)?.clone();
    let file = app.phase.as_ref()?.current_file()?.clone();
    if let Some((kc, kf, t)) = &st.golden_cache
        && Arc::ptr_eq(kc, &c)
        && Arc::ptr_eq(kf, &file)
    {
        return Some(t.clone());
    }
    let g = file.graphs.first()?;
    let mut levels: HashMap<String, Option<f64>> = HashMap::new();
    for n in &g.nodes {
        if c.unpaired_of(&n.name).next().is_some() {
            levels.insert(n.name.to_string(), None);
        } else if let Some(e) = c.node_error(&n.name) {
            levels.insert(n.name.to_string(), Some(e));
        }
    }
    let values: Vec<f64> = levels
        .values()
        .flatten()
        .copied()
        .filter(|v| v.is_finite())
        .collect();
    let by_name = levels
        .iter()
        .map(|(name, e)| {
            let colour = match e {
                None => crate::ui::palette::UNPAIRED,
                Some(v) if !v.is_finite() => NAN,
                Some(v) => ramp(overlay::scale(*v, values.iter().copied())),
            };
            (name.clone(), colour)
        })
        .collect();
    // Worse than any error: NaN/Inf apart (3), then a node only one side has (2).
    let severity = levels
        .iter()
        .map(|(name, e)| {
            let s = match e {
                None => 2.0,
                Some(v) if !v.is_finite() => 3.0,
                Some(v) => overlay::scale(*v, values.iter().copied()) as f32,
            };
            (name.clone(), s)
        })
        .collect();
    let unpaired = levels.values().filter(|e| e.is_none()).count();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let legend = if values.is_empty() {
        format!(
            "error vs golden: no node of this pass is paired; {unpaired} only one side has (red)"
        )
    } else {
        format!(
            "error vs golden: ‖t−g‖/‖g‖ from {lo:.2e} (blue) to {hi:.2e} (yellow), log scale; \
             {unpaired} node(s) only one side has (red); NaN/Inf apart (magenta)"
        )
    };
    st.generation += 1;
    let t = Arc::new(Tints {
        generation: st.generation,
        by_name,
        severity,
        legend,
    });
    st.golden_cache = Some((c, file, t.clone()));
    Some(t)
}

fn ramp(f: f64) -> Color32 {
    let f = f as f32;
    let c = |i: usize| (LOW[i] + (HIGH[i] - LOW[i]) * f) as u8;
    Color32::from_rgb(c(0), c(1), c(2))
}

fn legend(
    stat: OverlayStat,
    step: u32,
    levels: &HashMap<String, NodeLevel>,
    values: &[f64],
    diffs_ready: bool,
) -> String {
    match stat {
        OverlayStat::NanInf => {
            let n = levels.values().filter(|l| **l == NodeLevel::Nan).count();
            let i = levels.values().filter(|l| **l == NodeLevel::Inf).count();
            format!(
                "step {step}: {n} node(s) with NaN outputs (magenta), {i} with ±Inf (orange), {} clean (green); undumped nodes keep their colour",
                levels.len() - n - i
            )
        }
        _ if stat == OverlayStat::StepDiff && !diffs_ready => {
            format!("step {step}: comparing each node's output with the step before…")
        }
        _ if values.is_empty() => format!("step {step}: no values (first step, or no dump)"),
        _ => {
            let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            format!(
                "step {step}: {} from {lo:.3e} (blue) to {hi:.3e} (yellow), log scale",
                stat.label()
            )
        }
    }
}

/// The lines module boxes carry while a golden compare is open, whatever the overlay: the
/// gradients of the module's own parameters (once per compare).
pub fn box_lines(app: &App, st: &mut DataOverlay) -> Arc<BoxLines> {
    let Some(c) = comparison(app) else {
        st.grads = None;
        return Arc::default();
    };
    if let Some((k, lines)) = &st.grads
        && Arc::ptr_eq(k, c)
    {
        return lines.clone();
    }
    let lines = Arc::new(grad_lines(c));
    st.grads = Some((c.clone(), lines.clone()));
    lines
}

/// Each module's parameter gradients against the golden, one line per module box: the
/// parameters by result (`∇ weight, bias: pass`; `∇ weight: error · bias: pass`), in the worst
/// result's colour.
fn grad_lines(c: &crate::analysis::accuracy::Comparison) -> BoxLines {
    use crate::analysis::accuracy::Level;
    c.parameter_gradients()
        .into_iter()
        .map(|(path, params)| {
            let worst = params.iter().map(|p| p.1).max().unwrap_or(Level::Pass);
            let colour = match worst {
                Level::Pass => crate::ui::palette::OK,
                Level::Warning => crate::ui::palette::CHANGED,
                Level::Error => crate::ui::palette::REMOVED,
            };
            let mut by_level: Vec<(Level, Vec<&str>)> = Vec::new();
            for (name, level) in &params {
                match by_level.iter_mut().find(|(l, _)| l == level) {
                    Some((_, names)) => names.push(name),
                    None => by_level.push((*level, vec![name.as_str()])),
                }
            }
            let parts: Vec<String> = by_level
                .iter()
                .map(|(l, names)| format!("{}: {}", names.join(", "), l.as_str()))
                .collect();
            (path, (colour, format!("∇ {}", parts.join(" · "))))
        })
        .collect()
}
