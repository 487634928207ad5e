//! The row above the graph: what the pass on screen is compared with (A), the diff counts of
//! A → the pass on screen, the text diff button, and "find the first pass where …".
//!
//! The chosen A sticks while scrubbing: stepping to another pass compares that pass with the
//! same A (re-issuing `app.compare_with`), until "previous pass" is picked again or another
//! phase is opened.

use crate::analysis::diff::{DiffCounts, FirstQuery};
use crate::app::App;
use crate::app::compare::{Elsewhere, Found};
use crate::app::phase::PhaseState;
use egui::containers::menu::{MenuButton, MenuConfig};
use egui::text::{LayoutJob, TextFormat};
use egui::{Color32, RichText};
use std::path::PathBuf;

/// Colours of added / removed / changed: those of the graph's diff overlay and pass strip.
use super::palette::{ADDED, CHANGED, REMOVED};

#[derive(Default)]
pub struct CompareBarState {
    /// The A chosen in the menu, for the phase it was chosen in: `(phase key, A path)`.
    sticky: Option<(PathBuf, PathBuf)>,
    /// Text of the "Find first pass…" box.
    pub find_text: String,
}

/// A command chosen in the bar, applied after the frame's borrows of the phase are over.
enum Action {
    Compare(Option<PathBuf>),
    TextDiff,
    Find(FirstQuery),
}

pub fn show(
    app: &mut App,
    state: &mut CompareBarState,
    show_text_diff: &mut bool,
    ui: &mut egui::Ui,
) {
    if app.phase.is_none() {
        return;
    }
    keep_sticky(app, state);
    let Some(ph) = &app.phase else { return };
    let mut action = None;
    // One row of constant height, whatever the window width and the pass: the graph below
    // must not move while scrubbing. The buttons and counts keep their room on the right; the
    // "Compared with" menu is truncated in a narrow window.
    let height = ui.spacing().interact_size.y + 2.0;
    let (left, right) = egui::Sides::new()
        .shrink_left()
        .truncate()
        .height(height)
        .show(
            ui,
            |ui| compare_menu(ui, app, ph),
            |ui| {
                // Right to left.
                let mut action = find_menu(ui, ph, state);
                let can_diff =
                    ph.current_path().is_some() && (ph.current > 0 || active_compare(ph).is_some());
                if ui
                    .add_enabled(can_diff, egui::Button::new("Text diff"))
                    .on_hover_text("Line diff of the two graph files (A, then the pass on screen)")
                    .on_disabled_hover_text(
                        "The first pass has nothing before it: pick an A to compare with",
                    )
                    .clicked()
                {
                    merge(&mut action, Some(Action::TextDiff));
                }
                counts_view(ui, ph);
                action
            },
        );
    merge(&mut action, left);
    merge(&mut action, right);
    ui.add_space(2.0);
    match action {
        Some(Action::Compare(a)) => {
            state.sticky = match (&a, &app.phase) {
                (Some(a), Some(ph)) => Some((ph.key.clone(), a.clone())),
                _ => None,
            };
            app.compare_with(a);
        }
        Some(Action::TextDiff) => {
            super::text_diff_view::open(app);
            *show_text_diff = true;
        }
        Some(Action::Find(q)) => app.find_first_pass(q),
        None => {}
    }
}

fn merge(into: &mut Option<Action>, a: Option<Action>) {
    if into.is_none() {
        *into = a;
    }
}

/// Re-applies the chosen A when the pass on screen changed; forgets it in another phase.
fn keep_sticky(app: &mut App, state: &mut CompareBarState) {
    let Some(ph) = &app.phase else { return };
    let Some((key, a)) = &state.sticky else {
        return;
    };
    if *key != ph.key {
        state.sticky = None;
        return;
    }
    let up_to_date = ph
        .compare
        .as_ref()
        .is_some_and(|c| c.b_pass == ph.current && c.a_path == *a);
    // `compare_with` does nothing until the pass on screen is loaded; retried every frame.
    if !up_to_date && ph.current_file().is_some() {
        let a = a.clone();
        app.compare_with(Some(a));
    }
}

// ---------------------------------------------------------------------------------------------
// Compared with: [A ▾]

/// The explicit compare of the pass on screen, if one applies.
fn active_compare(ph: &PhaseState) -> Option<&crate::app::compare::Compare> {
    ph.compare.as_ref().filter(|c| c.b_pass == ph.current)
}

fn pass_label(ph: &PhaseState, i: usize) -> String {
    ph.passes
        .get(i)
        .map(|p| format!("{:03} {}", p.index, p.name))
        .unwrap_or_default()
}

fn compare_menu(ui: &mut egui::Ui, app: &App, ph: &PhaseState) -> Option<Action> {
    let a_text = match active_compare(ph) {
        Some(c) => c.label.clone(),
        None if ph.current > 0 => format!("previous pass ({})", pass_label(ph, ph.current - 1)),
        None => "nothing (first pass)".into(),
    };
    let mut action = None;
    let button = egui::Button::new(format!("Compared with: {a_text} ⏷")).truncate();
    let (r, _) = MenuButton::from_button(button).ui(ui, |ui| {
        ui.set_max_height(ui.ctx().content_rect().height() * 0.7);
        egui::ScrollArea::vertical().show(ui, |ui| {
            action = compare_items(ui, ph, &app.compare_elsewhere());
        });
    });
    r.on_hover_text(format!(
        "A: {a_text}\nThe graph the pass on screen is diffed against: pick another pass, rank, run, or the Dynamo graph"
    ));
    action
}

fn compare_items(ui: &mut egui::Ui, ph: &PhaseState, elsewhere: &Elsewhere) -> Option<Action> {
    let mut action = None;
    let chosen = active_compare(ph).map(|c| c.a_path.as_path());
    let mut pick = |ui: &mut egui::Ui, a: Option<PathBuf>| {
        action = Some(Action::Compare(a));
        ui.close();
    };
    if item(ui, chosen.is_none(), true, "previous pass")
        .on_hover_text("What this pass changed (the default)")
        .clicked()
    {
        pick(ui, None);
    }
    ui.separator();
    ui.weak("A pass of this phase");
    for (i, p) in ph.passes.iter().enumerate() {
        let text = format!("{:03} {}", p.index, p.name);
        let selected = chosen == Some(p.path.as_path());
        if item(ui, selected, i != ph.current, &text).clicked() {
            pick(ui, Some(p.path.clone()));
        }
    }
    if !elsewhere.indexed {
        return action;
    }
    let others = &elsewhere.same_pass;
    ui.separator();
    ui.weak("The same pass in other runs / ranks");
    if others.is_empty() {
        ui.weak("  (no other run or rank has it)");
    }
    for (label, path) in others {
        if item(ui, chosen == Some(path.as_path()), true, label)
            .on_hover_text(path.display().to_string())
            .clicked()
        {
            pick(ui, Some(path.clone()));
        }
    }
    if let Some((text, dynamo)) = &elsewhere.dynamo {
        ui.separator();
        if item(ui, chosen == Some(dynamo.as_path()), true, text)
            .on_hover_text("The graph Dynamo captured, before AOT autograd")
            .clicked()
        {
            pick(ui, Some(dynamo.clone()));
        }
    }
    action
}

/// One choice of A. The tree and the pass strip name passes too: the accessible label says
/// what this one does (`compare with 000 graph`).
fn item(ui: &mut egui::Ui, selected: bool, enabled: bool, text: &str) -> egui::Response {
    let r = ui.add_enabled(enabled, egui::Button::selectable(selected, text));
    let label = format!("compare with {text}");
    r.widget_info(|| {
        egui::WidgetInfo::selected(egui::WidgetType::SelectableLabel, enabled, selected, &label)
    });
    r
}

// ---------------------------------------------------------------------------------------------
// Counts

/// The counts of A → the pass on screen, or why there are none. Drawn right to left.
fn counts_view(ui: &mut egui::Ui, ph: &PhaseState) {
    if let Some(c) = active_compare(ph) {
        // Right to left, with the A's path on the error: not the usual loading row.
        if let Some(e) = c.result.error() {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("✖ could not compare: {e}"),
            )
            .on_hover_text(c.a_path.display().to_string());
            return;
        }
        if c.result.ready().is_none() {
            crate::ui::loading::busy(ui, "comparing…");
            return;
        }
    } else if ph.current == 0 {
        ui.weak("first pass: nothing before it");
        return;
    }
    match ph.diff_view() {
        Some((_, d, label)) => {
            let counts = d.counts();
            let r = ui.add(egui::Label::new(counts_job(ui, &counts)).selectable(false));
            r.on_hover_text(format!(
                "A: {label}\nB: {}\nadded {}, removed {}, changed {}, renamed {}, unchanged {}, rewired edges {}",
                pass_label(ph, ph.current),
                counts.added,
                counts.removed,
                counts.changed,
                counts.renamed,
                counts.unchanged,
                counts.rewired
            ));
        }
        None => {
            let failed = ph.load_errors.iter().any(Option::is_some);
            if failed {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    "no diff: a pass could not be loaded",
                );
            } else {
                crate::ui::loading::busy(ui, "diffing passes…");
            }
        }
    }
}

/// `+3 −5 ~2 renamed 1, 240 unchanged` (as `DiffCounts` displays it), the numbers coloured.
fn counts_job(ui: &egui::Ui, c: &DiffCounts) -> LayoutJob {
    let font = egui::TextStyle::Body.resolve(ui.style());
    let plain = ui.visuals().text_color();
    let weak = ui.visuals().weak_text_color();
    let mut job = LayoutJob::default();
    let mut add = |text: &str, color: Color32| {
        job.append(text, 0.0, TextFormat::simple(font.clone(), color));
    };
    let tint = |n: usize, c: Color32| if n == 0 { weak } else { c };
    add(&format!("+{}", c.added), tint(c.added, ADDED));
    add(" ", plain);
    add(&format!("\u{2212}{}", c.removed), tint(c.removed, REMOVED));
    add(" ", plain);
    add(&format!("~{}", c.changed), tint(c.changed, CHANGED));
    add(
        &format!(" renamed {}, {} unchanged", c.renamed, c.unchanged),
        plain,
    );
    debug_assert_eq!(job.text, c.to_string());
    job
}

// ---------------------------------------------------------------------------------------------
// Find first pass…

/// Makes a query from the text of the box.
type MakeQuery = fn(String) -> FirstQuery;

fn find_menu(ui: &mut egui::Ui, ph: &PhaseState, state: &mut CompareBarState) -> Option<Action> {
    let mut action = None;
    let config = MenuConfig::new().close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
    MenuButton::new("Find first pass…")
        .config(config)
        .ui(ui, |ui| {
            ui.set_min_width(260.0);
            ui.label(RichText::new("First pass where…").strong());
            let edit = egui::TextEdit::singleline(&mut state.find_text)
                .hint_text("node name or target (aten.addmm)")
                .desired_width(240.0);
            let r = ui.add(edit);
            r.widget_info(|| {
                egui::WidgetInfo::labeled(egui::WidgetType::TextEdit, true, "first pass query")
            });
            let q = state.find_text.trim().to_string();
            let loaded = ph.files.iter().all(Option::is_some);
            let failed = ph.load_errors.iter().any(Option::is_some);
            let enabled = loaded && !q.is_empty();
            let buttons: [(&str, MakeQuery); 5] = [
                ("node appears", FirstQuery::NodeAppears),
                ("node disappears", FirstQuery::NodeDisappears),
                ("node changes", FirstQuery::NodeChanges),
                ("target appears", FirstQuery::TargetAppears),
                ("target disappears", FirstQuery::TargetDisappears),
            ];
            // "changes" reads the node's history, made of the consecutive diffs.
            let diffs_ready = ph.diffs.iter().skip(1).all(Option::is_some);
            ui.horizontal_wrapped(|ui| {
                for (text, make) in buttons {
                    let on = enabled && (diffs_ready || text != "node changes");
                    if ui.add_enabled(on, egui::Button::new(text)).clicked() {
                        action = Some(Action::Find(make(q.clone())));
                    }
                }
            });
            if failed {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    "a pass could not be loaded: searching needs every pass",
                );
            } else if !loaded {
                crate::ui::loading::busy(ui, "loading passes…");
            }
            match ph.find.as_ref().map(|f| &f.outcome) {
                Some(Some(Found::Found(t))) => {
                    ui.label(t);
                }
                Some(Some(Found::NotFound(t))) => {
                    ui.colored_label(ui.visuals().warn_fg_color, t);
                }
                Some(None) => {
                    crate::ui::loading::busy(ui, "searching…");
                }
                None => {}
            }
        });
    action
}
