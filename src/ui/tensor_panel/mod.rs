//! The selected node's dumped tensors, shown under the node in the inspector (issue 6): for
//! each input and output in the chosen step and rank, its shape, dtype, statistics, NaN/Inf
//! badges and histogram; a compare with another step or rank; the NaN/Inf tracer; msprobe
//! statistics. Everything drawn here was computed in the background (`app::tensors`).

use crate::analysis::nan_trace::Bad;
use crate::app::App;
use crate::app::phase::PhaseState;
use crate::app::tensors::TensorsState;
use crate::model::tensor::{
    DumpFile, GraphDump, TensorSummary, fmt_value, fx_dtype_of_torch, short_dtype,
};
use egui::{Color32, RichText};
use std::path::PathBuf;

mod compare;
mod msprobe;
mod ranks;
mod slice;
mod stats;
mod tracer;

use compare::*;
use msprobe::*;
use ranks::*;
use slice::*;
use stats::*;
use tracer::*;

pub(crate) use slice::{lead_pickers, paint_cells};
pub(crate) use stats::histogram;

use super::palette::{INF as INF_COLOUR, NAN as NAN_COLOUR};
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
    /// The first (step, rank, node) holding it, over every rank.
    TraceAcross(Bad),
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
            crate::ui::loading::busy(ui, format!("summarising {} files…", tensors.pending));
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
        // Each rank once: several dumps of one rank (a run's original and optimized stages)
        // are not several ranks.
        let mut ranks: Vec<u32> = tensors
            .catalog
            .ranks
            .iter()
            .filter(|r| r.graphs.iter().any(|x| x.name == g.name))
            .map(|r| r.rank)
            .collect();
        ranks.sort_unstable();
        ranks.dedup();
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
        if let Some(a) = tracer(ui, tensors, rank, step, ranks.len()) {
            action = Some(a);
        }
        if let Some(sel) = phase.selected.as_deref() {
            let node = sel.rsplit('/').next().unwrap_or(sel);
            let at = stats::Shown {
                g,
                rank,
                step,
                node,
                ranks: &ranks,
            };
            if let Some(a) = node_dump(ui, tensors, state, at) {
                action = Some(a);
            }
            rank_table(ui, tensors, &g.name, step, node, &ranks);
        }
        ui.add_space(4.0);
        if let Some(a) = bad_nodes(ui, tensors, g, step, graph) {
            action = Some(a);
        }
    } else if !tensors.catalog.is_empty() {
        ui.weak("No dumped graph matches this pass's node names.");
    }
    if !tensors.msprobe.is_empty() {
        if let Some(sel) = phase.selected.as_deref() {
            let node = sel.rsplit('/').next().unwrap_or(sel);
            if let Some(a) = node_msprobe(ui, tensors, state, node) {
                action = Some(a);
            }
        }
        if let Some(a) = msprobe_table(ui, tensors, state.step) {
            action = Some(a);
        }
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

pub fn apply(app: &mut App, state: &mut TensorPanelState, action: Action) {
    match action {
        Action::Trace(bad, rank, step) => app.trace_first(bad, Some(rank), step),
        Action::TraceAcross(bad) => {
            app.trace_across(bad);
            // Show the step and rank it was found in.
            if let Some((step, rank, _)) = app.tensors.trace.as_ref().and_then(|t| t.found.clone())
            {
                state.step = Some(step);
                state.rank = Some(rank);
            }
        }
        Action::Compare(a, b, label) => app.compare_tensors(a, b, label),
        Action::LoadSlice(p, lead) => app.load_slice(p, lead),
        Action::Reveal(n) => app.reveal_node(n),
        Action::Attach => app.pick_and_attach_dump(),
    }
}
