//! The run tree: runs → models → phases → passes, with node counts and status badges, then
//! captures, logs and dumps. Clicking a pass shows it; clicking a log opens the logs panel.

use super::ViewState;
use crate::analysis::graph_facts::GraphFacts;
use crate::app::App;
use crate::app::compiles::CompilesState;
use crate::app::live::FileStatus;
use crate::model::index::{CaptureFile, CaptureKind, DebugIndex, PassFile, Run};
use std::path::{Path, PathBuf};

enum Click {
    Graph(PathBuf),
    Log(PathBuf),
    Capture(PathBuf),
}

pub fn show(app: &mut App, view: &mut ViewState, tabs: &mut super::tabs::Tabs, ui: &mut egui::Ui) {
    if app.workspace.is_none() {
        if app.opening.is_some() {
            crate::ui::loading::busy(ui, "indexing…");
        } else {
            ui.weak("Nothing open. File ▸ Open folder…, or drop a folder or an archive here.");
        }
        return;
    }
    let current = app
        .phase
        .as_ref()
        .and_then(|p| p.current_path())
        .map(Path::to_path_buf);
    let mut click = None;
    let no_compiles = CompilesState::default();
    egui::ScrollArea::vertical()
        .auto_shrink(false)
        .show(ui, |ui| {
            if let Some(ws) = &app.workspace {
                let timeline = app
                    .peek::<crate::app::timeline::TimelineState>()
                    .and_then(crate::app::timeline::TimelineState::open_path);
                let facts = Facts { app };
                runs(
                    ui,
                    &ws.index,
                    app.peek::<CompilesState>().unwrap_or(&no_compiles),
                    &facts,
                    current.as_deref(),
                    timeline,
                    &mut click,
                );
                loose(
                    ui,
                    &ws.index,
                    &facts,
                    current.as_deref(),
                    timeline,
                    &mut click,
                );
            }
            // The views' own sections (autotune kernels, compiles), in tab order.
            tabs.tree_sections(app, ui);
        });
    match click {
        Some(Click::Graph(p)) => app.select_graph(&p),
        Some(Click::Log(p)) => {
            let (log, cx) = app.part::<crate::app::logs::LogState>();
            log.open(&cx, &p);
            view.show_logs = true;
        }
        Some(Click::Capture(p)) => {
            app.open_timeline(&p);
            app.nav
                .push(crate::app::Nav::ShowTab(crate::app::TabId::TIMELINE));
        }
        None => {}
    }
}

fn runs(
    ui: &mut egui::Ui,
    index: &DebugIndex,
    compiles: &crate::app::compiles::CompilesState,
    facts: &Facts,
    current: Option<&Path>,
    timeline: Option<&Path>,
    click: &mut Option<Click>,
) {
    let ctx = RunCtx {
        compiles,
        facts,
        current,
        timeline,
    };
    for (i, run) in index.runs.iter().enumerate() {
        // The ranks of a launch are one entry, rank by rank, shown where its first folder is.
        match index.launch_of(i).map(|(l, _)| l) {
            Some(l) if l.ranks.iter().map(|r| r.run).min() == Some(i) => {
                egui::CollapsingHeader::new(format!(
                    "{} · launch of {} ranks",
                    l.name,
                    l.ranks.len()
                ))
                .id_salt(("launch", &l.root, &l.name))
                .default_open(true)
                .show(ui, |ui| {
                    for (k, lr) in l.ranks.iter().enumerate() {
                        let run = &index.runs[lr.run];
                        let here = current.is_some_and(|c| c.starts_with(&run.path));
                        run_entry(ui, run, k == 0 || here, &ctx, click);
                    }
                });
            }
            Some(_) => {}
            None => run_entry(ui, run, true, &ctx, click),
        }
    }
}

/// What every run entry of the tree reads.
struct RunCtx<'a> {
    compiles: &'a crate::app::compiles::CompilesState,
    facts: &'a Facts<'a>,
    current: Option<&'a Path>,
    timeline: Option<&'a Path>,
}

fn run_entry(ui: &mut egui::Ui, run: &Run, open: bool, ctx: &RunCtx, click: &mut Option<Click>) {
    let RunCtx {
        compiles,
        facts,
        current,
        timeline,
    } = *ctx;
    let mut title = run.name.clone();
    if let Some(r) = run.rank {
        title = format!("rank {r} · {title}");
    }
    egui::CollapsingHeader::new(title)
        .id_salt(&run.path)
        .default_open(open)
        .show(ui, |ui| {
            if let Some(t) = &run.time {
                ui.weak(format!(
                    "{t}  pid {}",
                    run.pid.map_or("?".into(), |p| p.to_string())
                ));
            }
            for model in &run.models {
                super::tabs::compiles_view::model_note(ui, compiles, &run.name, &model.name);
                let mut head = format!("{}  [{:?}]", model.name, model.backend);
                if let Some(g) = &model.graph_name {
                    head.push_str(&format!(" · {g}"));
                }
                if model.is_orphan() {
                    head.push_str(" · orphan (Dynamo graph only)");
                }
                if let Some(n) = run.model_note(model) {
                    head.push_str(&format!(" · {n}"));
                }
                egui::CollapsingHeader::new(head)
                    .id_salt(&model.path)
                    .default_open(true)
                    .show(ui, |ui| {
                        if let Some(d) = &model.dynamo_graph
                            && entry(
                                ui,
                                "dynamo_out_graph",
                                facts.get(d),
                                current == Some(d.as_path()),
                            )
                        {
                            *click = Some(Click::Graph(d.clone()));
                        }
                        for phase in &model.phases {
                            let mut title =
                                format!("{}  ({} graphs)", phase.name, phase.passes.len());
                            if let Some(n) = run.phase_note(model, phase) {
                                title.push_str(&format!(" · {n}"));
                            }
                            egui::CollapsingHeader::new(title)
                                .id_salt(&phase.path)
                                .default_open(true)
                                .show(ui, |ui| {
                                    for p in &phase.passes {
                                        if pass_entry(ui, p, facts.get(&p.path), current) {
                                            *click = Some(Click::Graph(p.path.clone()));
                                        }
                                    }
                                });
                        }
                        for c in &model.captures {
                            if capture_entry(ui, c, timeline) {
                                *click = Some(Click::Capture(c.path.clone()));
                            }
                        }
                    });
            }
            for log in &run.logs {
                let name = log
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let parent = log
                    .path
                    .parent()
                    .and_then(|p| p.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if ui
                    .selectable_label(false, format!("📄 {parent}/{name}"))
                    .clicked()
                {
                    *click = Some(Click::Log(log.path.clone()));
                }
            }
        });
}

fn loose(
    ui: &mut egui::Ui,
    index: &DebugIndex,
    facts: &Facts,
    current: Option<&Path>,
    timeline: Option<&Path>,
    click: &mut Option<Click>,
) {
    for p in &index.loose_graphs {
        if pass_entry(ui, p, facts.get(&p.path), current) {
            *click = Some(Click::Graph(p.path.clone()));
        }
    }
    for c in &index.loose_captures {
        if capture_entry(ui, c, timeline) {
            *click = Some(Click::Capture(c.path.clone()));
        }
    }
    for d in &index.data_dumps {
        let steps: usize = d.graphs.iter().map(|g| g.steps.len()).sum();
        // Its folder names the dump (the rank alone would not tell a run's stages apart).
        let folder = d
            .folder()
            .file_name()
            .map_or("data dump".into(), |n| n.to_string_lossy());
        ui.weak(format!(
            "🗄 {folder} rank {} · {} graph(s), {steps} step(s)",
            d.rank,
            d.graphs.len()
        ))
        .on_hover_text(d.path.display().to_string());
    }
    for m in &index.msprobe {
        ui.weak(format!("🗄 msprobe step {} · {}", m.step, m.who))
            .on_hover_text(m.path.display().to_string());
    }
}

/// What the tree knows of a graph file: its facts, or that it is still being written.
struct Facts<'a> {
    app: &'a App,
}

enum Row<'a> {
    Writing,
    Pending,
    Known(&'a GraphFacts),
}

impl<'a> Facts<'a> {
    fn get(&self, path: &Path) -> Row<'a> {
        let known = self.app.workspace.as_ref().and_then(|w| w.facts.get(path));
        match (self.app.file_status(path), known) {
            (FileStatus::Writing, _) => Row::Writing,
            (_, Some(f)) => Row::Known(f),
            (_, None) => Row::Pending,
        }
    }
}

/// A capture JSON row (opens the timeline); true when clicked.
fn capture_entry(ui: &mut egui::Ui, c: &CaptureFile, open: Option<&Path>) -> bool {
    let kind = match c.kind {
        CaptureKind::Raw => "raw",
        CaptureKind::Aligned => "aligned",
        CaptureKind::Filtered => "filtered",
        CaptureKind::DeadlockCheck => "deadlock check",
    };
    ui.selectable_label(
        open == Some(c.path.as_path()),
        format!("⏱ capture {} · {kind}", c.graph),
    )
    .on_hover_text(format!("{}\nclick to show its timeline", c.path.display()))
    .clicked()
}

fn pass_entry(ui: &mut egui::Ui, p: &PassFile, f: Row, current: Option<&Path>) -> bool {
    let label = format!("{:03} {}", p.index, p.name);
    entry(ui, &label, f, current == Some(p.path.as_path()))
}

/// One clickable tree row with its node count and status badge; true when clicked.
fn entry(ui: &mut egui::Ui, label: &str, f: Row, selected: bool) -> bool {
    let mut clicked = false;
    ui.horizontal(|ui| {
        clicked = ui.selectable_label(selected, label).clicked();
        match f {
            Row::Pending => {
                ui.weak("…");
            }
            Row::Writing => {
                ui.weak("writing…").on_hover_text(
                    "the file is still being written; it is read once it stops changing",
                );
            }
            Row::Known(f) => {
                ui.weak(f.nodes.to_string());
                let (mark, color) = match f.status() {
                    "ok" => ("", ui.visuals().text_color()),
                    "warning" => ("⚠", ui.visuals().warn_fg_color),
                    _ => ("✖", ui.visuals().error_fg_color),
                };
                if !mark.is_empty() {
                    let text = f.problems.join("\n");
                    let shown = egui::RichText::new(mark).color(color);
                    super::copyable::copyable_label(ui, shown, &text);
                }
            }
        }
    });
    clicked
}
