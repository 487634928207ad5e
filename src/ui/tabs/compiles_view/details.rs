//! The selected graph break (its code location, reason, user stack and the graphs on either
//! side) or the selected compile (status, user frame, times, graphs, searchable guards).

use super::{Action, CompilesViewState, status_colour, status_icon};
use crate::analysis::compiles;
use crate::app::Workspace;
use crate::app::compiles::{CompilesState, Story};
use crate::model::compile::{Compile, StackFrame};
use std::sync::Arc;

pub(super) fn show(
    ui: &mut egui::Ui,
    state: &CompilesState,
    ws: Option<&Workspace>,
    view: &mut CompilesViewState,
    stories: &[Arc<Story>],
    action: &mut Option<Action>,
) {
    if let Some(((si, ci), bi)) = state.selected_break
        && let Some(story) = stories.get(si)
        && let Some(c) = story.trace.compiles.get(ci)
        && let Some(b) = c.breaks.get(bi)
    {
        let at = b.location.as_ref().map_or("?".into(), |l| l.to_string());
        ui.heading(format!("Graph break at {at}"));
        if let Some(code) = b.user_stack.last().and_then(|f| f.code.as_deref()) {
            ui.monospace(code);
        }
        ui.label(b.title());
        ui.add_space(4.0);
        ui.strong("Graphs on either side");
        graph_row(ui, ws, state, story, (si, ci), "before the break", action);
        match compiles::compile_after_break(&story.trace, ci, b) {
            Some(next) => graph_row(ui, ws, state, story, (si, next), "after the break", action),
            None => {
                ui.weak("after the break: no compile resumed after it in this trace");
            }
        }
        egui::CollapsingHeader::new("Reason")
            .default_open(true)
            .show(ui, |ui| {
                ui.add(egui::Label::new(egui::RichText::new(&b.reason).monospace()).wrap());
            });
        egui::CollapsingHeader::new(format!("User stack ({} frames)", b.user_stack.len()))
            .default_open(true)
            .show(ui, |ui| stack(ui, &b.user_stack));
        ui.separator();
    }
    let Some((si, ci)) = state.selected else {
        if state.selected_break.is_none() {
            ui.weak("Click a compile, a graph break or a recompile to see it here.");
        }
        return;
    };
    let Some(story) = stories.get(si) else {
        return;
    };
    compile_details(ui, ws, state, view, story, (si, ci), action);
}

/// One side of a break: the compile, its model (click: open its Dynamo graph) or, without a
/// model folder, the graph kinds the trace holds.
fn graph_row(
    ui: &mut egui::Ui,
    ws: Option<&Workspace>,
    state: &CompilesState,
    story: &Story,
    c: (usize, usize),
    side: &str,
    action: &mut Option<Action>,
) {
    let Some(compile) = story.trace.compiles.get(c.1) else {
        return;
    };
    ui.horizontal(|ui| {
        ui.label(format!(
            "{side}: {} {}",
            compile.label(),
            compile.co_name().unwrap_or("?")
        ));
        match (state.link_of(c), state.model_graph(ws, c)) {
            (Some(l), Some(path)) => {
                if ui
                    .button(format!("open {}", l.model))
                    .on_hover_text(path.display().to_string())
                    .clicked()
                {
                    *action = Some(Action::OpenGraph(path));
                }
            }
            _ => {
                let n = compile
                    .dynamo_graph()
                    .map_or(0, |g| g.text.lines().filter(|l| l.contains(" = ")).count());
                ui.weak(format!("graph in the trace only ({n} lines)"));
            }
        }
    });
}

/// Compile `at.1` of story `at.0`.
fn compile_details(
    ui: &mut egui::Ui,
    ws: Option<&Workspace>,
    state: &CompilesState,
    view: &mut CompilesViewState,
    story: &Story,
    at: (usize, usize),
    action: &mut Option<Action>,
) {
    let Some(c) = story.trace.compiles.get(at.1) else {
        return;
    };
    let st = c.status();
    ui.horizontal(|ui| {
        ui.colored_label(status_colour(ui, st), status_icon(st));
        ui.heading(format!("{} {}", c.label(), c.co_name().unwrap_or("?")));
        ui.label(st.label());
        if ui.button("🔥 Flame chart").clicked() {
            *action = Some(Action::Flame(at.0, Some(c.id())));
        }
    });
    if let Some(l) = c.location() {
        ui.monospace(l.to_string());
    }
    ui.label(format!("why: {}", compiles::why(&story.trace, at.1)));
    if let Some(r) = &c.recompile_reason {
        ui.colored_label(ui.visuals().warn_fg_color, format!("guard failed: {r}"));
    }
    if let Some(ty) = c.fail_type() {
        let at = c
            .fail_location()
            .map(|l| format!(" at {l}"))
            .unwrap_or_default();
        ui.colored_label(ui.visuals().error_fg_color, format!("failed{at}: {ty}"));
        if let Some(r) = c.fail_reason() {
            ui.add(egui::Label::new(egui::RichText::new(r).monospace()).wrap());
        }
    }
    for r in c.restart_reasons() {
        ui.weak(format!("restarted: {}", r.lines().next().unwrap_or(r)));
    }
    graph_row(ui, ws, state, story, at, "graph", action);
    times(ui, story, c);
    super::metrics::show(ui, c, at);
    egui::CollapsingHeader::new(format!("Graphs in the trace ({})", c.graphs.len()))
        .id_salt(("trace_graphs", at))
        .show(ui, |ui| {
            for g in &c.graphs {
                egui::CollapsingHeader::new(format!(
                    "{} (attempt {}, line {})",
                    g.kind.event(),
                    g.attempt,
                    g.line
                ))
                .id_salt(("trace_graph", at, g.line))
                .show(ui, |ui| {
                    ui.monospace(&g.text);
                });
            }
        });
    egui::CollapsingHeader::new(format!("User stack ({} frames)", c.user_stack.len()))
        .id_salt(("user_stack", at))
        .show(ui, |ui| stack(ui, &c.user_stack));
    egui::CollapsingHeader::new(format!("Guards ({})", c.guard_count()))
        .id_salt(("guards", at))
        .default_open(true)
        .show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.label("🔍");
                ui.add(
                    egui::TextEdit::singleline(&mut view.guard_query)
                        .hint_text("search guards")
                        .desired_width(240.0),
                );
            });
            let shown = compiles::search_guards(c, &view.guard_query);
            ui.weak(format!("{} of {} shown", shown.len(), c.guards.len()));
            for g in shown.into_iter().take(500) {
                ui.horizontal(|ui| {
                    ui.add_space(g.depth as f32 * 8.0);
                    ui.strong(&g.kind);
                    ui.label(egui::RichText::new(&g.text).monospace());
                });
            }
        });
}

/// The metrics' times per phase, and the flame chart's total for comparison.
fn times(ui: &mut egui::Ui, story: &Story, c: &Compile) {
    let rows = [
        ("entire frame", "entire_frame_compile_time_s"),
        ("backend", "backend_compile_time_s"),
        ("inductor", "inductor_compile_time_s"),
        ("code gen", "code_gen_time_s"),
        ("before restart", "dynamo_time_before_restart_s"),
    ];
    ui.horizontal_wrapped(|ui| {
        for (label, key) in rows {
            if let Some(v) = c.metric_f64(key) {
                ui.label(format!("{label} {v:.3} s"));
            }
        }
        if let Some(f) = compiles::flame_total_s(&story.trace, &c.id()) {
            ui.weak(format!("· flame chart entire_frame_compile {f:.3} s"));
        }
        for key in ["graph_node_count", "graph_op_count", "graph_input_count"] {
            if let Some(v) = c.metric_f64(key) {
                ui.weak(format!(
                    "{} {v}",
                    key.trim_start_matches("graph_").replace('_', " ")
                ));
            }
        }
    });
}

fn stack(ui: &mut egui::Ui, frames: &[StackFrame]) {
    for f in frames {
        ui.label(format!("{} in {}", f.loc, f.name));
        if let Some(code) = &f.code {
            ui.horizontal(|ui| {
                ui.add_space(16.0);
                ui.monospace(code);
            });
        }
    }
}
