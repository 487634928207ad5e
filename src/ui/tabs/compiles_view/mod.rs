//! The Compiles view (issue 15): why a run has several graphs. One row per compile id with a
//! status icon, its user frame, compile time and the model its graph went to; the graph breaks
//! with their line and reason; the recompiles with the failing guard. Below, the selected
//! compile or break in detail ([`details`]). The flame chart of compile time opens in the
//! timeline view, which draws it.

mod details;
mod metrics;
mod tree_notes;

pub use tree_notes::model_note;

use crate::app::compiles::{CompilesState, Story};
use crate::app::part::Cx;
use crate::app::{Nav, TabId};
use crate::model::compile::Status;
use std::sync::Arc;

/// How the Compiles view is shown (apart from the loaded stories).
#[derive(Default)]
pub struct CompilesViewState {
    /// Filters the selected compile's guards.
    pub guard_query: String,
}

pub fn status_icon(s: Status) -> &'static str {
    match s {
        Status::Ok => "✔",
        Status::GraphBreak => "✂",
        Status::Restarted => "↻",
        Status::Failed => "✖",
        Status::Unknown => "…",
    }
}

pub fn status_colour(ui: &egui::Ui, s: Status) -> egui::Color32 {
    match s {
        Status::Ok => egui::Color32::from_rgb(0x4c, 0xaf, 0x50),
        Status::GraphBreak | Status::Restarted => ui.visuals().warn_fg_color,
        Status::Failed => ui.visuals().error_fg_color,
        Status::Unknown => ui.visuals().weak_text_color(),
    }
}

/// What the user asked for this frame (applied after drawing).
pub(crate) enum Action {
    Select((usize, usize)),
    SelectBreak((usize, usize), usize),
    OpenGraph(std::path::PathBuf),
    Flame(usize, Option<String>),
}

/// The Compiles tab.
impl crate::ui::tab::FeatureTab for CompilesViewState {
    type Feature = CompilesState;

    fn id(&self) -> TabId {
        TabId::COMPILES
    }

    fn title(&self) -> &'static str {
        "Compiles"
    }

    fn show(&mut self, state: &mut CompilesState, cx: &mut Cx, ui: &mut egui::Ui) {
        show(state, cx, self, ui);
    }

    fn tree_section(&mut self, st: Option<&mut CompilesState>, cx: &mut Cx, ui: &mut egui::Ui) {
        let Some(st) = st else { return };
        let mut pick = None;
        tree_notes::tree_section(ui, st, &mut pick);
        if let Some(c) = pick {
            st.select(c);
            cx.nav.push(Nav::ShowTab(TabId::COMPILES));
        }
    }
}

fn show(state: &mut CompilesState, cx: &mut Cx, view: &mut CompilesViewState, ui: &mut egui::Ui) {
    if state.stories.is_empty() {
        if state.loading {
            crate::ui::loading::busy(ui, "reading the trace log…");
        } else {
            ui.weak(
                "No trace log in this tree. torch writes torch_compile_debug/tlparse/\
                 dedicated_log_torch_trace_*.log with TORCH_COMPILE_DEBUG=1 (or TORCH_TRACE=DIR).",
            );
        }
        return;
    }
    let stories: Vec<Arc<Story>> = state.stories.clone();
    let mut action = None;
    // Files of a folder that claim the same rank: said once, above them all.
    let traces: Vec<_> = stories
        .iter()
        .map(|s| (s.path.as_path(), &s.trace))
        .collect();
    for clash in crate::analysis::compile_rows::rank_clashes(&traces) {
        ui.colored_label(ui.visuals().warn_fg_color, format!("⚠ {clash}"));
    }
    let avail = ui.available_height();
    // Both ways: a wide row must scroll, not widen the view (the details below would then
    // lay out wider than the window and be cut instead of wrapped).
    egui::ScrollArea::both()
        .id_salt("compiles_list")
        .max_height((avail * 0.5).max(120.0))
        .auto_shrink([false, true])
        .show(ui, |ui| {
            for (si, story) in stories.iter().enumerate() {
                story_list(ui, state, si, story, &mut action);
            }
        });
    ui.separator();
    egui::ScrollArea::vertical()
        .id_salt("compiles_details")
        .auto_shrink(false)
        .show(ui, |ui| {
            details::show(ui, state, cx.workspace, view, &stories, &mut action);
        });
    match action {
        Some(Action::Select(c)) => state.select(c),
        Some(Action::SelectBreak(c, b)) => state.select_break(c, b),
        Some(Action::OpenGraph(graph)) => {
            cx.nav.push(Nav::Go { graph, node: None });
        }
        Some(Action::Flame(s, compile)) => {
            if let Some(story) = stories.get(s) {
                cx.nav.push(Nav::Flame {
                    story: story.path.clone(),
                    compile,
                });
            }
        }
        None => {}
    }
}

/// The header, compile rows, breaks and recompiles of one trace log.
fn story_list(
    ui: &mut egui::Ui,
    state: &CompilesState,
    si: usize,
    story: &Story,
    action: &mut Option<Action>,
) {
    let t = &story.trace;
    let name = story
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let breaks = t.graph_breaks();
    ui.horizontal(|ui| {
        ui.strong(format!(
            "{} compile ids · {} graph breaks · {} recompiles",
            t.compiles.len(),
            breaks.len(),
            t.recompiles().count()
        ));
        if let Some(r) = t.rank {
            ui.label(format!("rank {r}"));
        }
        ui.weak(&name)
            .on_hover_text(story.path.display().to_string());
        if ui
            .button("🔥 Flame chart")
            .on_hover_text("compile time of every compile, from the trace's chromium events")
            .clicked()
        {
            *action = Some(Action::Flame(si, None));
        }
    });
    if let Some(why) = &t.stopped {
        ui.colored_label(ui.visuals().warn_fg_color, format!("⚠ {why}"));
    }
    for w in t.rank_warnings() {
        ui.colored_label(ui.visuals().warn_fg_color, format!("⚠ {name}: {w}"));
    }
    if !t.problems.is_empty() {
        let n = t.problems.len() + t.more_problems;
        let list: Vec<String> = t
            .problems
            .iter()
            .take(20)
            .map(|(l, w)| format!("line {l}: {w}"))
            .collect();
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!("⚠ {n} damaged lines skipped"),
        )
        .on_hover_text(list.join("\n"));
    }
    egui::Grid::new(("compile_rows", si))
        .striped(true)
        .num_columns(6)
        .show(ui, |ui| {
            // One row per attempt: a restarted attempt is its own row, with its own status,
            // reason and the model folder it wrote.
            for r in state.rows.get(si).map_or(&[][..], Vec::as_slice) {
                let (ci, st) = (r.compile, r.status);
                ui.colored_label(status_colour(ui, st), status_icon(st))
                    .on_hover_text(st.label());
                let selected = state.selected == Some((si, ci)) && r.last;
                let co = r.co_name.as_deref().unwrap_or("?");
                if ui
                    .selectable_label(selected, format!("{} {co}", r.label))
                    .clicked()
                {
                    *action = Some(Action::Select((si, ci)));
                }
                ui.weak(
                    t.compiles
                        .get(ci)
                        .and_then(|c| c.location())
                        .map(|l| l.short())
                        .unwrap_or_default(),
                );
                ui.label(r.time_s.map(|s| format!("{s:.3} s")).unwrap_or_default());
                ui.label(
                    r.model
                        .as_ref()
                        .map(|m| format!("➡ {m}"))
                        .unwrap_or_default(),
                );
                let why = match &r.restart_reason {
                    Some(reason) if !r.last => format!("restarted: {reason}"),
                    _ => r.why.clone(),
                };
                // One line a row (torch's reasons run to several): the rest on hover.
                let first = why.lines().next().unwrap_or_default();
                ui.add(egui::Label::new(egui::RichText::new(first).weak()).extend())
                    .on_hover_text(&why);
                ui.end_row();
            }
        });
    if !breaks.is_empty() {
        ui.add_space(4.0);
        ui.strong("Graph breaks");
        for (ci, c) in t.compiles.iter().enumerate() {
            for (bi, b) in c.breaks.iter().enumerate() {
                let at = b.location.as_ref().map_or("?".into(), |l| l.short());
                let selected = state.selected_break == Some(((si, ci), bi));
                if ui
                    .selectable_label(selected, format!("✂ {at}  {}  {}", c.label(), b.title()))
                    .on_hover_text(&b.reason)
                    .clicked()
                {
                    *action = Some(Action::SelectBreak((si, ci), bi));
                }
            }
        }
    }
    let recompiles: Vec<(usize, &crate::model::compile::Compile)> = t
        .compiles
        .iter()
        .enumerate()
        .filter(|(_, c)| c.recompile_reason.is_some())
        .collect();
    if !recompiles.is_empty() {
        ui.add_space(4.0);
        ui.strong("Recompiles");
        for (ci, c) in recompiles {
            let reason = c.recompile_reason.as_deref().unwrap_or("");
            if ui
                .selectable_label(
                    state.selected == Some((si, ci)),
                    format!("↻ {} guard failed: {reason}", c.label()),
                )
                .clicked()
            {
                *action = Some(Action::Select((si, ci)));
            }
        }
    }
    ui.add_space(6.0);
}
