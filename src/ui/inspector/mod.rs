//! The node inspector (right panel): everything the dump says about the selected node, with
//! every node it names one click away; the graph's summary when no node is selected.
//!
//! Drawing never changes the app: widgets report an [`Action`], applied once the frame's
//! borrows of the phase are over.

use super::tensor_panel::{self, TensorPanelState};
use crate::analysis::diff::{self, HistoryEntry, HistoryEvent, NodeStatus};
use crate::analysis::graph_facts::GraphFacts;
use crate::analysis::op_family::{self, ALL_FAMILIES, OpFamily};
use crate::app::App;
use crate::app::accuracy::AccuracyState;
use crate::app::phase::PhaseState;
use crate::model::fx::{Arg, FxFile, FxGraph, FxNode, OpKind, SourceLoc, ValueMeta};
use crate::model::fx_fmt::short_target;
use crate::model::output_code::OutputCodeIndex;
use egui::{Color32, RichText};
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Weak};

mod args;
mod golden;
mod golden_delta;
mod history;
mod kernels;
mod msprobe_source;
mod node;
mod stage;
mod summary;

use args::*;
use history::*;
use kernels::*;
use node::*;
use summary::*;

/// Node links drawn for one argument list at most; the output node of a 20k-node graph
/// names thousands of values, and a few hundred links are all anyone reads.
const MAX_ARG_LINKS: usize = 300;
/// Rows of a producers / users / code-lines list before "… N more".
const MAX_LIST_ROWS: usize = 200;
/// Width of the key column ("target", "shape", …).
const KEY_WIDTH: f32 = 64.0;

/// Before / after values of a changed field longer than this are cut (the output node of a
/// 20k-node graph lists thousands of inputs).
const MAX_DETAIL_CHARS: usize = 400;

/// What a click in the inspector asks for.
enum Action {
    Reveal(String),
    Deselect,
    CodeLine(usize),
    /// Show this pass of the phase, then select the node under this name (renamed there).
    GoToPass(PathBuf, Option<String>),
    /// Fold this module's box in the graph (a breadcrumb part was clicked).
    FoldModule(String),
}

/// The inspector's own state: the selected node's history, kept while nothing it depends on
/// changes.
#[derive(Default)]
pub struct InspectorState {
    history: Option<HistoryCache>,
}

/// Draws the inspector. Sets `show_code` when the user asks for a line of `output_code.py`.
pub fn show(
    app: &mut App,
    state: &mut InspectorState,
    tensors: &mut TensorPanelState,
    ui: &mut egui::Ui,
    show_code: &mut bool,
) {
    let Some(ph) = &app.phase else {
        nothing_open(app, ui);
        return;
    };
    let facts = app
        .workspace
        .as_ref()
        .zip(ph.current_path())
        .and_then(|(w, p)| w.facts.get(p));
    let mut action = None;
    let mut tensor_action = None;
    let mut golden_ask = None;
    let picked_before = (tensors.step, tensors.rank);
    // Drawn before a golden is ever attached: the feature's empty state says so.
    let no_golden = AccuracyState::default();
    let acc = app.peek::<AccuracyState>().unwrap_or(&no_golden);
    let has_golden = acc.golden.is_some();
    egui::ScrollArea::vertical()
        .id_salt("inspector")
        .auto_shrink(false)
        .show(ui, |ui| {
            action = phase_view(ui, ph, facts, state);
            if let Some((_, node)) = ph.selected_node() {
                msprobe_source::show(ui, &app.tensors, &node.name);
            }
            // Before the dumped data: where the numbers part is what the user came for.
            stage::show(acc, ph, ui);
            tensor_action = tensor_panel::show(&app.tensors, ph, tensors, ui);
            golden_ask = golden::show(acc, ph.selected.as_deref(), ui);
        });
    match golden_ask {
        Some(golden::Ask::PickGolden) => app.nav.push(crate::app::Nav::PickGolden { file: false }),
        Some(golden::Ask::Delta(key, lead)) => {
            let (acc, cx) = app.part::<AccuracyState>();
            acc.load_delta(&cx, &key, lead);
        }
        None => {}
    }
    if let Some(a) = tensor_action {
        tensor_panel::apply(app, tensors, a);
    }
    // The step and rank pickers act on both sides of a compare with a golden run.
    if (tensors.step, tensors.rank) != picked_before && has_golden {
        let (acc, mut cx) = app.part::<AccuracyState>();
        acc.compare_at(&mut cx, tensors.step, tensors.rank);
    }
    match action {
        Some(Action::GoToPass(path, select)) => {
            app.select_graph(&path);
            if let Some(q) = select {
                app.select_node(Some(q));
            }
        }
        Some(Action::Reveal(q)) => app.reveal_node(q),
        Some(Action::Deselect) => app.select_node(None),
        Some(Action::FoldModule(path)) => app.nav.push(crate::app::Nav::Fold(path)),
        Some(Action::CodeLine(n)) if app.phase.is_some() => {
            app.nav.push(crate::app::Nav::CodeLine(n));
            *show_code = true;
        }
        Some(Action::CodeLine(_)) | None => {}
    }
}

fn nothing_open(app: &App, ui: &mut egui::Ui) {
    if app.opening.is_some() {
        crate::ui::loading::busy(ui, "Opening…");
    } else if app.workspace.is_some() {
        ui.weak("Pick a graph in the tree to inspect its nodes.");
    } else {
        ui.weak(
            "Nothing open. File ▸ Open folder… or Open archive…, or drop a torch_compile_debug \
             folder or a .tar.gz / .zip of one here.",
        );
    }
}

fn phase_view(
    ui: &mut egui::Ui,
    ph: &PhaseState,
    facts: Option<&GraphFacts>,
    state: &mut InspectorState,
) -> Option<Action> {
    let Some(file) = ph.current_file() else {
        pass_not_loaded(ui, ph);
        return None;
    };
    if let Some((graph, node)) = ph.selected_node() {
        return node_view(ui, ph, state, file, graph, node);
    }
    let mut action = None;
    if let Some(sel) = &ph.selected {
        // Selections persist across passes; say so when this pass has no such node.
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(format!("{sel} is not in this pass")).italics());
            if ui.small_button("clear").clicked() {
                action = Some(Action::Deselect);
            }
        });
        // Where it went (and came from): the pass that removed it is one click away.
        merge(&mut action, history_section(ui, ph, state));
        ui.separator();
    }
    summary_view(ui, ph, file, facts);
    action
}

fn pass_not_loaded(ui: &mut egui::Ui, ph: &PhaseState) {
    match ph.load_errors.get(ph.current).and_then(Option::as_ref) {
        Some(e) => {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("Could not load this pass: {e}"),
            );
        }
        None => {
            crate::ui::loading::busy(ui, "Loading the graph…");
        }
    }
}

/// Keeps the first action of a frame: one click per frame is all a user makes.
fn merge(into: &mut Option<Action>, a: Option<Action>) {
    if into.is_none() {
        *into = a;
    }
}

/// A link whose accessible role stays `Link` (UI tests and screen readers look links up by
/// role and name): egui 0.36 gives link text that is selectable the `Label` role, so links
/// are drawn with text selection off.
fn link(ui: &mut egui::Ui, text: impl Into<egui::WidgetText>) -> egui::Response {
    let selectable = ui.style().interaction.selectable_labels;
    ui.style_mut().interaction.selectable_labels = false;
    let r = ui.link(text);
    ui.style_mut().interaction.selectable_labels = selectable;
    r
}
