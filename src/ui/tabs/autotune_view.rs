//! AscendC autotune: fused kernels, their candidates and the winner (issue 9).
//!
//! A table of the fused kernels (candidates, winner, speed-up of the winner over the slowest,
//! the md5 kernel-key check), and for the selected kernel a bar chart of its candidates'
//! timings with the winner marked, its files (opened in the code viewer), the post-grad FX
//! nodes its name lists, and what evidence is missing. Log text can be pasted in.

use crate::app::autotune::AutotuneState;
use crate::app::part::Cx;
use crate::app::{Nav, TabId};
use crate::model::autotune::{AutotuneReport, FusedKernel};
use crate::ui::code_view::{CodeViewState, text_body};
use egui::RichText;
use egui_plot::{Bar, BarChart, Legend, Plot, PlotPoint, Text};

use crate::ui::palette::{CANDIDATE as OTHER, WINNER};

#[derive(Default)]
pub struct AutotuneViewState {
    /// The selected kernel, by name.
    pub selected: Option<String>,
    pub paste_open: bool,
    pub paste_text: String,
    /// What the chart drew on the last frame (for tests and the status line).
    chart: Option<ChartFacts>,
    code: CodeViewState,
}

/// The bars the chart drew: which kernel, each bar's height, which bar is the winner.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartFacts {
    pub kernel: String,
    pub timings_us: Vec<Option<f64>>,
    pub winner: Option<usize>,
}

impl AutotuneViewState {
    pub fn chart(&self) -> Option<&ChartFacts> {
        self.chart.as_ref()
    }
}

/// The Autotune tab.
impl crate::ui::tab::FeatureTab for AutotuneViewState {
    type Feature = AutotuneState;

    fn id(&self) -> TabId {
        TabId::AUTOTUNE
    }

    fn title(&self) -> &'static str {
        "Autotune"
    }

    fn show(&mut self, a: &mut AutotuneState, cx: &mut Cx, ui: &mut egui::Ui) {
        show(a, cx, self, ui);
    }

    fn tree_section(&mut self, _: Option<&mut AutotuneState>, cx: &mut Cx, ui: &mut egui::Ui) {
        let Some(ws) = cx.workspace else { return };
        let mut kernel = None;
        tree_section(ui, &ws.index, &mut kernel);
        if let Some(name) = kernel {
            cx.nav.push(Nav::ShowTab(TabId::AUTOTUNE));
            self.selected = Some(name);
        }
    }
}

fn show(a: &mut AutotuneState, cx: &mut Cx, state: &mut AutotuneViewState, ui: &mut egui::Ui) {
    a.ensure(cx);
    toolbar(a, state, ui);
    if state.paste_open {
        paste_box(a, cx, state, ui);
    }
    kernel_file_window(a, state, ui.ctx());
    let Some(report) = a.report.clone() else {
        state.chart = None;
        if a.loading {
            crate::ui::loading::busy(ui, "Looking for autotune evidence…");
        } else {
            ui.weak("Open a folder, or paste inductor_asc log lines.");
        }
        return;
    };
    if report.kernels.is_empty() {
        state.chart = None;
        ui.weak("No autotune evidence found in this folder.");
        ui.weak(
            "fxray looks for autofused_* kernel folders, cache entries with optimize_tiling, \
             and inductor_asc log lines in *.log, *.out and console files; or paste the log.",
        );
        return;
    }
    if state
        .selected
        .as_ref()
        .is_none_or(|s| !report.kernels.iter().any(|k| &k.name == s))
    {
        state.selected = report.kernels.first().map(|k| k.name.clone());
    }
    report_problems(&report, ui);
    let table_h = (ui.available_height() * 0.38).max(120.0);
    egui::ScrollArea::vertical()
        .id_salt("autotune_table")
        .max_height(table_h)
        .auto_shrink([false, true])
        .show(ui, |ui| table(&report, state, ui));
    ui.separator();
    let Some(k) = state
        .selected
        .as_ref()
        .and_then(|s| report.kernels.iter().find(|k| &k.name == s))
    else {
        return;
    };
    details(a, cx, state, k, ui);
}

fn toolbar(a: &AutotuneState, state: &mut AutotuneViewState, ui: &mut egui::Ui) {
    ui.horizontal(|ui| {
        match &a.report {
            Some(r) => {
                let s = &r.sources;
                ui.label(format!("{} fused kernels", r.kernels.len()));
                let logs = match s.logs.len() {
                    0 => "no log".to_string(),
                    1 => "1 log".to_string(),
                    n => format!("{n} logs"),
                };
                ui.weak(format!(
                    "· {logs} · {} debug folders · {} cache entries",
                    s.debug_dirs, s.cache_entries
                ))
                .on_hover_text(s.logs.join("\n"));
            }
            None => {
                ui.label("Autotune");
            }
        }
        if a.loading {
            crate::ui::loading::busy(ui, "");
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let label = if a.pasted.is_some() {
                "Pasted log ✓"
            } else {
                "Paste log…"
            };
            ui.toggle_value(&mut state.paste_open, label)
                .on_hover_text("join inductor_asc log lines copied from a console");
        });
    });
}

fn paste_box(a: &mut AutotuneState, cx: &Cx, state: &mut AutotuneViewState, ui: &mut egui::Ui) {
    ui.group(|ui| {
        ui.weak("Paste the lines the backend printed ([…] [RANK0] [INFO] Static compile …, Autotune completed …, Kernel …: Timing = … us):");
        egui::ScrollArea::vertical()
            .id_salt("autotune_paste")
            .max_height(120.0)
            .show(ui, |ui| {
                ui.add(
                    egui::TextEdit::multiline(&mut state.paste_text)
                        .code_editor()
                        .desired_rows(5)
                        .desired_width(f32::INFINITY)
                        .hint_text("log text"),
                );
            });
        ui.horizontal(|ui| {
            if ui.button("Join pasted log").clicked() {
                a.paste_log(cx, &state.paste_text);
                state.paste_open = false;
            }
            if a.pasted.is_some() && ui.button("Forget pasted log").clicked() {
                state.paste_text.clear();
                a.paste_log(cx, "");
            }
        });
    });
}

fn report_problems(report: &AutotuneReport, ui: &mut egui::Ui) {
    if report.problems.is_empty() {
        return;
    }
    egui::CollapsingHeader::new(format!("{} log problems", report.problems.len()))
        .id_salt("autotune_log_problems")
        .show(ui, |ui| {
            for p in &report.problems {
                ui.label(RichText::new(p).color(ui.visuals().warn_fg_color));
            }
        });
}

/// The run tree's list of AscendC kernels (debug and cache folders, one row per name); a click
/// sets `clicked` to the kernel's name, which the tree turns into the Autotune tab with it
/// selected.
fn tree_section(
    ui: &mut egui::Ui,
    index: &crate::model::index::DebugIndex,
    clicked: &mut Option<String>,
) {
    let mut names: Vec<&str> = index.autotune.iter().map(|k| k.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    if names.is_empty() {
        return;
    }
    egui::CollapsingHeader::new(format!("AscendC kernels ({})", names.len()))
        .id_salt("tree_autotune_kernels")
        .default_open(false)
        .show(ui, |ui| {
            for n in names {
                if ui
                    .selectable_label(false, short_name(n))
                    .on_hover_text(format!("{n}\nshow in the Autotune tab"))
                    .clicked()
                {
                    *clicked = Some(n.to_string());
                }
            }
        });
}

/// `autofused_add_mul_6c45c9…`: the md5 suffix cut to six digits (an ASCII md5 only, so the
/// cut is on a character boundary).
pub fn short_name(name: &str) -> String {
    match name.rsplit_once('_') {
        Some((head, tail)) if crate::model::autotune::is_md5(tail) => {
            format!("{head}_{}…", &tail[..6])
        }
        _ => name.to_string(),
    }
}

/// A kernel_key cut to 12 digits (the full key is in the tooltip).
fn short_key(key: &str) -> String {
    match key.char_indices().nth(12) {
        Some((at, _)) => format!("{}…", &key[..at]),
        None => key.to_string(),
    }
}

fn table(report: &AutotuneReport, state: &mut AutotuneViewState, ui: &mut egui::Ui) {
    egui::Grid::new("autotune_kernels")
        .striped(true)
        .num_columns(8)
        .spacing([14.0, 4.0])
        .show(ui, |ui| {
            for h in [
                "kernel",
                "path",
                "candidates",
                "winner",
                "worst",
                "speed-up",
                "key",
                "",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for k in &report.kernels {
                let selected = state.selected.as_deref() == Some(&k.name);
                if ui
                    .selectable_label(selected, short_name(&k.name))
                    .on_hover_text(&k.name)
                    .clicked()
                {
                    state.selected = Some(k.name.clone());
                }
                ui.label(k.path.label());
                ui.label(k.candidates_label());
                ui.label(k.winner_label());
                ui.label(
                    k.best_worst_us()
                        .map_or_else(|| "-".into(), |(_, w)| format!("{w:.2} us")),
                );
                ui.label(k.speedup_label());
                let key = k.key_check_label();
                let color = match k.key_check {
                    Some(false) => ui.visuals().error_fg_color,
                    _ => ui.visuals().text_color(),
                };
                ui.label(RichText::new(key).color(color))
                    .on_hover_text("md5(optimize_tiling) = the winner's kernel_key");
                if k.problems.is_empty() {
                    ui.label("");
                } else {
                    ui.label(
                        RichText::new(format!("⚠ {}", k.problems.len()))
                            .color(ui.visuals().warn_fg_color),
                    )
                    .on_hover_text(k.problems.join("\n"));
                }
                ui.end_row();
            }
        });
}

fn details(
    a: &mut AutotuneState,
    cx: &mut Cx,
    state: &mut AutotuneViewState,
    k: &FusedKernel,
    ui: &mut egui::Ui,
) {
    ui.horizontal(|ui| {
        ui.heading(short_name(&k.name)).on_hover_text(&k.name);
        if let Some(n) = k.top_n {
            ui.weak(format!(
                "TOPN {n}{}",
                k.choices
                    .map(|m| format!(" of {m} tilings"))
                    .unwrap_or_default()
            ));
        }
        if let Some(r) = &k.rank {
            ui.weak(format!("rank {r}"));
        }
    });
    ui.label(format!("winner: {}", winner_text(k)));
    ui.columns(2, |cols| {
        chart(state, k, &mut cols[0]);
        egui::ScrollArea::vertical()
            .id_salt("autotune_details")
            .auto_shrink([false, false])
            .show(&mut cols[1], |ui| {
                // Columns are justified; wrapped warnings read better ragged.
                ui.with_layout(egui::Layout::top_down(egui::Align::Min), |ui| {
                    side(a, cx, k, ui)
                })
            });
    });
}

fn winner_text(k: &FusedKernel) -> String {
    match (k.winner, k.winner_us()) {
        (Some(w), Some(t)) => format!("candidate #{w}, {t:.2} us"),
        (Some(w), None) => format!("candidate #{w} (no timing)"),
        _ => "unknown".into(),
    }
}

fn chart(state: &mut AutotuneViewState, k: &FusedKernel, ui: &mut egui::Ui) {
    let timings: Vec<Option<f64>> = k.candidates.iter().map(|c| c.timing_us).collect();
    state.chart = Some(ChartFacts {
        kernel: k.name.clone(),
        timings_us: timings.clone(),
        winner: k.winner,
    });
    if timings.iter().all(Option::is_none) {
        ui.weak("No timings to chart.");
        return;
    }
    let bars = |winner: bool| -> Vec<Bar> {
        timings
            .iter()
            .enumerate()
            .filter(|(i, _)| (k.winner == Some(*i)) == winner)
            .filter_map(|(i, t)| {
                let t = t.filter(|t| t.is_finite())?;
                let key = k.candidates[i].key.as_deref().unwrap_or("?");
                let color = if winner { WINNER } else { OTHER };
                Some(
                    Bar::new(i as f64, t)
                        .width(0.6)
                        .fill(color.gamma_multiply(0.75))
                        .name(format!("#{i} {}", short_key(key))),
                )
            })
            .collect()
    };
    let n = timings.len();
    let winner_at = k
        .winner
        .and_then(|w| Some((w, timings.get(w).copied().flatten()?)))
        .filter(|(_, t)| t.is_finite());
    Plot::new(("autotune_chart", &k.name))
        .legend(Legend::default())
        .y_axis_label("µs")
        .x_axis_label("candidate")
        .include_y(0.0)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .x_axis_formatter(move |mark, _| {
            let i = mark.value.round();
            if (mark.value - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
                format!("#{i}")
            } else {
                String::new()
            }
        })
        .show(ui, |plot| {
            plot.bar_chart(
                BarChart::new("candidates", bars(false))
                    .color(OTHER)
                    .element_formatter(Box::new(|b, _| format!("{}: {:.2} us", b.name, b.value))),
            );
            plot.bar_chart(
                BarChart::new("winner", bars(true))
                    .color(WINNER)
                    .element_formatter(Box::new(|b, _| {
                        format!("{} (winner): {:.2} us", b.name, b.value)
                    })),
            );
            if let Some((w, t)) = winner_at {
                plot.text(
                    Text::new("winner", PlotPoint::new(w as f64, t), "★ winner")
                        .anchor(egui::Align2::CENTER_BOTTOM)
                        .color(WINNER),
                );
            }
        });
}

fn side(a: &mut AutotuneState, cx: &mut Cx, k: &FusedKernel, ui: &mut egui::Ui) {
    if !k.problems.is_empty() {
        ui.label(RichText::new("Missing or inconsistent").strong());
        for p in &k.problems {
            ui.label(RichText::new(format!("⚠ {p}")).color(ui.visuals().warn_fg_color));
        }
        ui.add_space(6.0);
    }
    if !k.candidates.is_empty() {
        ui.label(RichText::new("Candidates").strong());
        egui::Grid::new(("autotune_candidates", &k.name))
            .striped(true)
            .show(ui, |ui| {
                for c in &k.candidates {
                    let mark = if k.winner == Some(c.index) { "★" } else { "" };
                    ui.label(format!("{mark}#{}", c.index));
                    let full = c.key.as_deref().unwrap_or("?");
                    let key = short_key(full);
                    let resp = match &c.source {
                        Some(p) => {
                            let r = ui.link(RichText::new(key).monospace());
                            if r.clicked() {
                                a.open_kernel_file(cx, p);
                            }
                            r
                        }
                        None => ui.label(RichText::new(key).monospace()),
                    };
                    resp.on_hover_text(format!(
                        "kernel_key {full}\n{}",
                        c.kernel_so.as_deref().unwrap_or("no kernel.so logged")
                    ));
                    ui.label(
                        c.timing_us
                            .map_or_else(|| "-".into(), |t| format!("{t:.2} us")),
                    );
                    ui.weak(if c.in_cache { "cached" } else { "" });
                    ui.end_row();
                }
            });
        ui.add_space(6.0);
    }
    if let Some(ot) = &k.optimize_tiling {
        ui.label(RichText::new("optimize_tiling (kept winner)").strong());
        ui.add(egui::Label::new(RichText::new(&ot.line).monospace()).wrap())
            .on_hover_text(ot.path.display().to_string());
        ui.weak(format!(
            "md5 {} · check {}",
            ot.kernel_key,
            k.key_check_label()
        ));
        ui.add_space(6.0);
    }
    if !k.fx_nodes.is_empty() {
        ui.label(RichText::new(format!("Fused FX nodes ({})", k.ops.join(", "))).strong());
        ui.horizontal_wrapped(|ui| {
            for n in &k.fx_nodes {
                if ui
                    .link(n)
                    .on_hover_text("show in the post-grad graph")
                    .clicked()
                    && let Some(p) = &k.post_grad
                {
                    cx.nav.push(Nav::Go {
                        graph: p.clone(),
                        node: Some(n.to_string()),
                    });
                }
            }
        });
        ui.add_space(6.0);
    }
    if !k.files.is_empty() {
        ui.label(RichText::new("Files").strong());
        for f in &k.files {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if ui
                .link(name)
                .on_hover_text(f.display().to_string())
                .clicked()
            {
                a.open_kernel_file(cx, f);
            }
        }
    }
    if let Some(c) = &k.cache_dir {
        ui.add_space(6.0);
        let hash = c.file_name().map(|n| n.to_string_lossy().into_owned());
        ui.add(
            egui::Label::new(
                RichText::new(format!("cache entry {}", hash.unwrap_or_default())).weak(),
            )
            .truncate(),
        )
        .on_hover_text(c.display().to_string());
    }
}

fn kernel_file_window(a: &mut AutotuneState, state: &mut AutotuneViewState, ctx: &egui::Context) {
    let Some(file) = &a.file else {
        return;
    };
    let title = file
        .path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let path = file.path.display().to_string();
    let code = file.code.clone();
    let mut open = true;
    egui::Window::new(title)
        .id(egui::Id::new("autotune_kernel_file"))
        .open(&mut open)
        .default_size([720.0, 520.0])
        .vscroll(false)
        .show(ctx, |ui| {
            if let Some(c) = crate::ui::loading::show(ui, &code, "") {
                text_body(ui, &mut state.code, c, &path);
            }
        });
    if !open {
        a.close_kernel_file();
    }
}
