//! History: what the pass on screen did to the node, and every pass that did something to it.

use super::*;

pub(super) struct HistoryCache {
    pub(super) phase: PathBuf,
    pub(super) node: String,
    /// Passes and consecutive diffs loaded when it was made.
    pub(super) loaded: (usize, usize),
    /// The phase's first pass, to tell a reopened phase from the one it was made for.
    pub(super) first: Option<Weak<FxFile>>,
    pub(super) entries: Option<Arc<Vec<HistoryEntry>>>,
}

impl InspectorState {
    /// The history of `node` in the phase, once every pass and diff is loaded.
    pub(super) fn history(
        &mut self,
        ph: &PhaseState,
        node: &str,
    ) -> Option<Arc<Vec<HistoryEntry>>> {
        let loaded = (
            ph.files.iter().filter(|f| f.is_some()).count(),
            ph.diffs.iter().filter(|d| d.is_some()).count(),
        );
        let first = ph.files.first().and_then(Option::as_ref);
        let same_first = |w: &Option<Weak<FxFile>>| match (w, first) {
            (Some(w), Some(f)) => std::ptr::eq(w.as_ptr(), Arc::as_ptr(f)),
            (None, None) => true,
            _ => false,
        };
        let hit = self.history.as_ref().filter(|c| {
            c.phase == ph.key && c.node == node && c.loaded == loaded && same_first(&c.first)
        });
        if let Some(c) = hit {
            return c.entries.clone();
        }
        let entries = ph.history(node).map(Arc::new);
        self.history = Some(HistoryCache {
            phase: ph.key.clone(),
            node: node.to_string(),
            loaded,
            first: first.map(Arc::downgrade),
            entries: entries.clone(),
        });
        entries
    }
}

pub(super) fn history_section(
    ui: &mut egui::Ui,
    ph: &PhaseState,
    state: &mut InspectorState,
) -> Option<Action> {
    let qualified = ph.selected.as_deref()?;
    changed_by_this_pass(ui, ph, qualified);
    ui.add_space(4.0);
    ui.label(RichText::new("History").strong())
        .on_hover_text("every pass of this phase that added, changed, renamed or removed the node");
    let Some(entries) = state.history(ph, qualified) else {
        if ph.load_errors.iter().any(Option::is_some) {
            ui.weak("needs every pass: a pass could not be loaded");
        } else {
            crate::ui::loading::busy(ui, "diffing the passes…");
        }
        return None;
    };
    history_rows(ui, ph, &entries)
}

/// Quiet passes (nothing happened to the node), summarised in one line.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Quiet {
    Unchanged,
    Absent,
}

pub(super) fn history_rows(
    ui: &mut egui::Ui,
    ph: &PhaseState,
    entries: &[HistoryEntry],
) -> Option<Action> {
    if entries.iter().all(|e| e.event == HistoryEvent::Absent) {
        ui.weak("in no pass of this phase");
        return None;
    }
    let mut action = None;
    let mut quiet: Option<(Quiet, usize)> = None;
    let flush = |ui: &mut egui::Ui, q: &mut Option<(Quiet, usize)>| {
        if let Some((kind, n)) = q.take() {
            let s = if n == 1 { "" } else { "es" };
            let what = match kind {
                Quiet::Unchanged => "unchanged",
                Quiet::Absent => "absent",
            };
            ui.horizontal(|ui| {
                ui.add_space(16.0);
                ui.weak(format!("{what} in {n} pass{s}"));
            });
        }
    };
    for e in entries {
        let kind = match e.event {
            HistoryEvent::Unchanged if e.renamed_from.is_none() => Some(Quiet::Unchanged),
            HistoryEvent::Absent => Some(Quiet::Absent),
            _ => None,
        };
        if let Some(k) = kind {
            match &mut quiet {
                Some((q, n)) if *q == k => *n += 1,
                _ => {
                    flush(ui, &mut quiet);
                    quiet = Some((k, 1));
                }
            }
            continue;
        }
        flush(ui, &mut quiet);
        merge(&mut action, history_row(ui, ph, e));
    }
    flush(ui, &mut quiet);
    action
}

/// `▶ 005 view_to_reshape  changed: target`, the pass a link to it.
pub(super) fn history_row(ui: &mut egui::Ui, ph: &PhaseState, e: &HistoryEntry) -> Option<Action> {
    let pass = ph.passes.get(e.pass)?;
    let mut action = None;
    ui.horizontal_wrapped(|ui| {
        let here = e.pass == ph.current;
        let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
        if here {
            ui.painter().text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                "▶",
                egui::TextStyle::Small.resolve(ui.style()),
                ui.visuals().hyperlink_color,
            );
        }
        let text = format!("{:03} {}", pass.index, pass.name);
        let mut rich = RichText::new(&text).monospace();
        if here {
            rich = rich.strong();
        }
        // The tree lists the same pass names: the history's links say where they are.
        let r = link(ui, rich);
        let label = format!("{text} (history)");
        r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Link, true, &label));
        let r = r.on_hover_text(if here {
            "the pass on screen"
        } else {
            "show this pass"
        });
        if r.clicked() && !here {
            let select = e.name.clone().filter(|n| ph.selected.as_deref() != Some(n));
            action = Some(Action::GoToPass(pass.path.clone(), select));
        }
        let (green, red, amber) = (
            crate::ui::palette::ADDED,
            crate::ui::palette::REMOVED,
            crate::ui::palette::CHANGED,
        );
        match e.event {
            HistoryEvent::Appeared if e.pass == 0 => {
                ui.weak("in the first pass");
            }
            HistoryEvent::Appeared => {
                ui.colored_label(green, "appeared");
            }
            HistoryEvent::Changed(fields) => {
                ui.colored_label(amber, format!("changed: {fields}"));
            }
            HistoryEvent::Vanished => {
                ui.colored_label(red, "vanished");
            }
            HistoryEvent::Unchanged | HistoryEvent::Absent => {}
        }
        if let Some(from) = &e.renamed_from {
            ui.colored_label(amber, format!("renamed from {from}"));
        }
    });
    action
}

/// What the pass on screen (or the chosen A → the pass on screen) did to the node.
pub(super) fn changed_by_this_pass(ui: &mut egui::Ui, ph: &PhaseState, qualified: &str) {
    let Some(file) = ph.current_file() else {
        return;
    };
    let Some((a_file, d, label)) = ph.diff_view() else {
        return;
    };
    let explicit = ph.compare.as_ref().is_some_and(|c| c.b_pass == ph.current);
    let Some((g, i)) = diff::resolve(file, qualified) else {
        // Not in this pass: say so when this pass (or A → it) removed it.
        let removed = diff::resolve(&a_file, qualified)
            .and_then(|(g, i)| d.status_a(g, i))
            .is_some_and(|s| s == NodeStatus::Removed);
        if removed {
            ui.add_space(4.0);
            let text = if explicit {
                format!("Removed since {label}")
            } else {
                "Removed by this pass".into()
            };
            ui.colored_label(crate::ui::palette::REMOVED, text);
        }
        return;
    };
    let Some(status) = d.status_b(g, i) else {
        return;
    };
    let a_node = d
        .b_to_a(g, i)
        .and_then(|(ga, ia)| Some((ga, ia, a_file.graphs.get(ga)?.nodes.get(ia)?)));
    let renamed_from = d
        .pair_of_b(g)
        .filter(|p| p.is_renamed_b(i))
        .and(a_node)
        .and_then(|(ga, ia, _)| diff::qualified_name(&a_file, ga, ia));
    ui.add_space(4.0);
    if !status.is_change() && renamed_from.is_none() {
        let text = if explicit {
            format!("Unchanged since {label}")
        } else {
            "Not changed by this pass".into()
        };
        ui.weak(text);
        return;
    }
    let title = if explicit {
        format!("Changed since {label}")
    } else {
        "Changed by this pass".into()
    };
    ui.label(RichText::new(title).strong())
        .on_hover_text(format!("compared with {label}"));
    let (green, red) = (crate::ui::palette::ADDED, crate::ui::palette::REMOVED);
    if status == NodeStatus::Added {
        ui.colored_label(green, "added: not in A");
        return;
    }
    if let Some(from) = renamed_from {
        key_value(ui, "name", |ui| {
            ui.add(egui::Label::new(RichText::new(from).monospace().color(red)).selectable(true));
            ui.label(RichText::new("→").monospace());
            ui.add(
                egui::Label::new(RichText::new(qualified).monospace().color(green))
                    .selectable(true),
            );
        });
    }
    let (Some((_, _, a)), Some(b)) = (a_node, file.graphs.get(g).and_then(|x| x.nodes.get(i)))
    else {
        return;
    };
    for (field, before, after) in diff::change_details(a, b, status.fields()) {
        key_value(ui, field.as_str(), |ui| {
            ui.add(
                egui::Label::new(RichText::new(cut(&before)).monospace().color(red))
                    .selectable(true),
            );
            ui.label(RichText::new("→").monospace());
            ui.add(
                egui::Label::new(RichText::new(cut(&after)).monospace().color(green))
                    .selectable(true),
            );
        });
    }
}

pub(super) fn cut(s: &str) -> String {
    match s.char_indices().nth(MAX_DETAIL_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}
