//! The Accuracy tab (issue 23): the open run against its golden run, pair by pair, as
//! tb_graph_ascend's precision list does, sortable, with filters for errors and for tensors only
//! one side has; a click on a row selects its node in the graph. *First divergence* selects the
//! first node in graph order whose added error passes its dtype's tolerance, and says why.

use crate::analysis::accuracy::{Comparison, Level, Pair, metrics::Metric};
use crate::app::accuracy::AccuracyState;
use crate::app::part::Cx;
use crate::app::{Loading, Nav};
use crate::ui::tab::FeatureTab;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum SortBy {
    /// The target's call order.
    #[default]
    Order,
    Error,
    AddedError,
    Cosine,
    MaxAbsErr,
    Result,
}

#[derive(Default)]
pub struct AccuracyTab {
    errors_only: bool,
    show_unpaired: bool,
    filter: String,
    sort: SortBy,
    /// Rows of the table, as `pairs` indices, for (comparison, sort, filters) in `built`.
    rows: Vec<usize>,
    built: Option<(usize, SortBy, bool, String)>,
    /// What *First divergence* said last.
    said: Option<String>,
}

fn metric(m: Metric) -> String {
    match (m.value(), m.word()) {
        (Some(v), _) => format!("{v:.6}"),
        (None, Some(w)) => w.to_string(),
        _ => String::new(),
    }
}

fn num(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v:.3e}"))
}

fn level_colour(ui: &egui::Ui, l: Level) -> egui::Color32 {
    match l {
        Level::Pass => crate::ui::palette::OK,
        Level::Warning => ui.visuals().warn_fg_color,
        Level::Error => ui.visuals().error_fg_color,
    }
}

impl AccuracyTab {
    fn refresh(&mut self, c: &Arc<Comparison>) {
        let key = (
            Arc::as_ptr(c) as usize,
            self.sort,
            self.errors_only,
            self.filter.clone(),
        );
        if self.built.as_ref() == Some(&key) {
            return;
        }
        let needle = self.filter.to_lowercase();
        let keep = |p: &Pair| {
            (!self.errors_only || p.result != Level::Pass)
                && (needle.is_empty()
                    || p.key.to_lowercase().contains(&needle)
                    || p.node.as_deref().is_some_and(|n| n.contains(&needle)))
        };
        let mut rows: Vec<usize> = (0..c.pairs.len()).filter(|&i| keep(&c.pairs[i])).collect();
        // Largest first, what has no value last.
        let desc = |v: Option<f64>| {
            let (missing, x) = ordered(v);
            (missing, std::cmp::Reverse(x))
        };
        match self.sort {
            SortBy::Order => rows.sort_by_key(|&i| c.pairs[i].order),
            SortBy::Error => rows.sort_by_key(|&i| desc(c.pairs[i].error)),
            SortBy::AddedError => rows.sort_by_key(|&i| desc(c.pairs[i].added_error)),
            SortBy::Cosine => rows.sort_by_key(|&i| {
                ordered(c.pairs[i].metrics.as_ref().and_then(|m| m.cosine.value()))
            }),
            SortBy::MaxAbsErr => rows.sort_by_key(|&i| {
                desc(
                    c.pairs[i]
                        .metrics
                        .as_ref()
                        .and_then(|m| m.max_abs_err.value()),
                )
            }),
            SortBy::Result => rows.sort_by_key(|&i| std::cmp::Reverse(c.pairs[i].result)),
        }
        self.rows = rows;
        self.built = Some(key);
    }
}

/// A total order on optional floats for sorting (missing and NaN last).
fn ordered(v: Option<f64>) -> (bool, i64) {
    match v.filter(|v| !v.is_nan()) {
        Some(v) => (false, (v.clamp(-1e300, 1e300) * 1e6) as i64),
        None => (true, 0),
    }
}

impl FeatureTab for AccuracyTab {
    type Feature = AccuracyState;

    fn id(&self) -> crate::app::TabId {
        crate::app::TabId::ACCURACY
    }

    fn title(&self) -> &'static str {
        "Accuracy"
    }

    fn show(&mut self, acc: &mut AccuracyState, cx: &mut Cx, ui: &mut egui::Ui) {
        super::stages::section(&acc.stages, cx, ui);
        super::stages::bisect_section(acc, cx, ui);
        ui.horizontal_wrapped(|ui| {
            if ui
                .button("Golden…")
                .on_hover_text("a dump, an msprobe dump or a run folder holding one")
                .clicked()
            {
                cx.nav.push(Nav::PickGolden { file: false });
            }
            if ui
                .button("CSV / archive…")
                .on_hover_text("msprobe's compare_result_*.csv, or an archive of a golden run")
                .clicked()
            {
                cx.nav.push(Nav::PickGolden { file: true });
            }
            match &acc.golden {
                Some(g) => {
                    ui.label(format!("golden: {}", g.display()));
                    if ui.small_button("✖").on_hover_text("forget the golden").clicked() {
                        acc.drop_golden();
                    }
                }
                None => {
                    ui.weak("No golden run: compare this run with its golden (eager, CPU, fp32) to find where they part. Shift-drop a folder here too.");
                }
            }
        });
        let c = match &acc.result {
            Loading::Idle => return,
            Loading::Loading => {
                let doing = format!("with the golden run: {}", acc.progress_line());
                crate::ui::loading::busy(ui, doing);
                return;
            }
            Loading::Failed(e) => {
                ui.colored_label(ui.visuals().error_fg_color, e);
                return;
            }
            Loading::Ready(c) => c.clone(),
        };
        let [pass, warn, err] = c.counts();
        ui.horizontal_wrapped(|ui| {
            ui.label(format!("{} pairs:", c.pairs.len()));
            ui.colored_label(crate::ui::palette::OK, format!("{pass} pass"));
            ui.colored_label(ui.visuals().warn_fg_color, format!("{warn} warning"));
            ui.colored_label(ui.visuals().error_fg_color, format!("{err} error"));
            ui.label(format!(
                "· only in the target {} · only in the golden {}",
                c.unpaired_target.len(),
                c.unpaired_golden.len()
            ));
            ui.weak(&c.pairing);
        });
        for n in c.notes.iter().take(5) {
            ui.colored_label(ui.visuals().warn_fg_color, format!("⚠ {n}"));
        }
        ui.horizontal(|ui| {
            let enabled = c.first_divergence.is_some();
            if ui
                .add_enabled(enabled, egui::Button::new("First divergence"))
                .on_hover_text(
                    "select the first node whose own added error passes its dtype's tolerance",
                )
                .clicked()
            {
                self.said = acc.go_to_first_divergence(cx);
            }
            match (&c.first_divergence, &self.said) {
                (Some(d), _) => {
                    ui.label(format!(
                        "{} ({}): {}",
                        d.node.as_deref().unwrap_or("?"),
                        d.call,
                        d.why
                    ));
                }
                (None, _) => {
                    ui.label("no divergence: every node's added error is within its tolerance");
                }
            }
        });
        ui.horizontal(|ui| {
            ui.checkbox(&mut self.errors_only, "errors and warnings only");
            ui.checkbox(&mut self.show_unpaired, "only one side");
            ui.add(
                egui::TextEdit::singleline(&mut self.filter)
                    .hint_text("filter by key or node")
                    .desired_width(180.0),
            );
            ui.label("sort:");
            for (s, label) in [
                (SortBy::Order, "order"),
                (SortBy::AddedError, "added error"),
                (SortBy::Error, "error"),
                (SortBy::Cosine, "cosine"),
                (SortBy::MaxAbsErr, "MaxAbsErr"),
                (SortBy::Result, "result"),
            ] {
                ui.selectable_value(&mut self.sort, s, label);
            }
        });
        ui.separator();
        let mut select = None;
        if self.show_unpaired {
            egui::ScrollArea::vertical()
                .auto_shrink(false)
                .show(ui, |ui| {
                    for (side, list) in [
                        ("target", &c.unpaired_target),
                        ("golden", &c.unpaired_golden),
                    ] {
                        for u in list {
                            ui.horizontal(|ui| {
                                ui.colored_label(
                                    crate::ui::palette::UNPAIRED,
                                    format!("only in the {side}"),
                                );
                                match &u.node {
                                    Some(n) if ui.link(n).clicked() => select = Some(n.clone()),
                                    Some(_) => {}
                                    None => {
                                        ui.weak("(no node)");
                                    }
                                }
                                ui.label(&u.key);
                                ui.weak(&u.dtype);
                            });
                        }
                    }
                });
        } else {
            self.refresh(&c);
            let row_h = ui.text_style_height(&egui::TextStyle::Body) + 6.0;
            egui::ScrollArea::both().auto_shrink(false).show_rows(
                ui,
                row_h,
                self.rows.len() + 1,
                |ui, range| {
                    egui::Grid::new("accuracy_rows")
                        .striped(true)
                        .num_columns(9)
                        .show(ui, |ui| {
                            for h in [
                                "result",
                                "node",
                                "key",
                                "dtype",
                                "cosine",
                                "MaxAbsErr",
                                "norm ratio",
                                "error",
                                "added",
                            ] {
                                ui.strong(h);
                            }
                            ui.end_row();
                            for &i in self
                                .rows
                                .iter()
                                .skip(range.start.saturating_sub(1))
                                .take(range.len())
                            {
                                let p = &c.pairs[i];
                                ui.colored_label(level_colour(ui, p.result), p.result.as_str())
                                    .on_hover_text(&p.reason);
                                match &p.node {
                                    Some(n) => {
                                        if ui.link(n).clicked() {
                                            select = Some(n.clone());
                                        }
                                    }
                                    None => {
                                        ui.weak("—");
                                    }
                                }
                                ui.label(&p.key);
                                let dtype = if p.dtype == p.golden_dtype {
                                    p.dtype.clone()
                                } else {
                                    format!("{} / {}", p.dtype, p.golden_dtype)
                                };
                                ui.weak(dtype);
                                let m = p.metrics.as_ref();
                                ui.label(m.map(|m| metric(m.cosine)).unwrap_or_default());
                                ui.label(m.map(|m| metric(m.max_abs_err)).unwrap_or_default());
                                ui.label(p.norm_ratio.map_or(String::new(), |v| format!("{v:.4}")));
                                ui.label(num(p.error));
                                ui.label(num(p.added_error));
                                ui.end_row();
                            }
                        });
                },
            );
        }
        if let Some(n) = select {
            match cx.selection.pass {
                Some(graph) => cx.nav.push(Nav::Go {
                    graph: graph.to_path_buf(),
                    node: Some(n),
                }),
                None => cx.nav.push(Nav::ShowTab(crate::app::TabId::GRAPH)),
            }
        }
    }
}
