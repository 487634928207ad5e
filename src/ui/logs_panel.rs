//! The logs panel (bottom): a picker of the current run's log files, a level / text filter, and
//! the records in a virtualised table whose refs (passes, models, graph files, nodes) are chips
//! that jump to what they name.
//!
//! Logs reach 100k records: the filtered row list is cached in [`LogsPanelState`] and rebuilt
//! only when the log or the filter changes; only visible rows are laid out.

use super::code_view::contains_ignore_case;
use crate::app::logs::LogState;
use crate::app::phase::{PhaseState, find_node};
use crate::app::{App, Workspace};
use crate::model::index::{LogKind, Run};
use crate::model::log::{Level, LogRecord, LogRef, ParsedLog};
use egui::{Color32, RichText};
use egui_extras::{Column, TableBuilder};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The level checkboxes, in order. ERROR also covers CRITICAL; records with no level (bare
/// Dynamo lines) get their own box, drawn only when the log has some.
const LEVEL_BOXES: [&str; 6] = ["DEBUG", "INFO", "EVENT", "WARNING", "ERROR", "no level"];

fn level_box(l: Level) -> usize {
    match l {
        Level::Debug => 0,
        Level::Info => 1,
        Level::Event => 2,
        Level::Warning => 3,
        Level::Error | Level::Critical => 4,
        Level::None => 5,
    }
}

/// View state of the logs panel.
pub struct LogsPanelState {
    /// Which level boxes are ticked (indexed like [`LEVEL_BOXES`]).
    pub levels: [bool; 6],
    /// Text the message or location must contain (ASCII case ignored).
    pub text: String,
    /// Index into the log's records of the record shown in full below the table.
    pub selected: Option<usize>,
    cache: Option<Filtered>,
}

impl Default for LogsPanelState {
    fn default() -> Self {
        LogsPanelState {
            levels: [true; 6],
            text: String::new(),
            selected: None,
            cache: None,
        }
    }
}

/// The filter's answer for one log, with what it was computed from.
struct Filtered {
    log: Arc<ParsedLog>,
    levels: [bool; 6],
    text: String,
    /// Indices into `log.records` of the records shown, in file order.
    rows: Vec<usize>,
    /// Records per level box.
    counts: [usize; 6],
}

impl LogsPanelState {
    /// `(shown, total)` records of the log last drawn.
    pub fn shown(&self) -> Option<(usize, usize)> {
        self.cache
            .as_ref()
            .map(|c| (c.rows.len(), c.log.records.len()))
    }

    /// Brings the cache up to date with `log` and the filter; a no-op while neither changed.
    fn refresh(&mut self, log: &Arc<ParsedLog>) {
        let text = self.text.trim();
        if let Some(c) = &self.cache
            && Arc::ptr_eq(&c.log, log)
            && c.levels == self.levels
            && c.text == text
        {
            return;
        }
        let same_log = self
            .cache
            .as_ref()
            .is_some_and(|c| Arc::ptr_eq(&c.log, log));
        let mut c = match self.cache.take() {
            Some(c) if same_log => c,
            _ => {
                self.selected = None;
                Filtered {
                    log: log.clone(),
                    levels: self.levels,
                    text: String::new(),
                    rows: Vec::new(),
                    counts: count_levels(log),
                }
            }
        };
        c.levels = self.levels;
        c.text.clear();
        c.text.push_str(text);
        // Reuses the row vector's allocation.
        c.rows.clear();
        let keep = |r: &LogRecord| self.levels[level_box(r.level)] && matches_text(r, text);
        c.rows.extend(
            log.records
                .iter()
                .enumerate()
                .filter(|(_, r)| keep(r))
                .map(|(i, _)| i),
        );
        self.cache = Some(c);
    }
}

fn count_levels(log: &ParsedLog) -> [usize; 6] {
    let mut counts = [0; 6];
    for r in &log.records {
        counts[level_box(r.level)] += 1;
    }
    counts
}

fn matches_text(r: &LogRecord, text: &str) -> bool {
    text.is_empty()
        || contains_ignore_case(&r.message, text)
        || r.location
            .as_deref()
            .is_some_and(|l| contains_ignore_case(l, text))
}

/// Where a ref chip goes when clicked.
enum Jump {
    Graph(PathBuf),
    Node(String),
    Copy(String),
}

/// Draws the panel.
pub fn show(app: &mut App, state: &mut LogsPanelState, ui: &mut egui::Ui) {
    // egui 0.36 sizes a panel to its content: claim the whole height, or the panel shrinks
    // to one row while the log loads and stays that small.
    ui.set_min_height(ui.available_height());
    if app.workspace.is_none() {
        ui.weak("Nothing open.");
        return;
    }
    ui.horizontal(|ui| pick_log(app, ui));
    let Some(ws) = &app.workspace else { return };
    let Some(lv) = app.peek::<LogState>().and_then(|s| s.view.as_ref()) else {
        ui.weak("This run has no log files.");
        return;
    };
    let reading = format!("Reading {}…", file_name(&lv.path));
    let Some(log) = super::loading::show(ui, &lv.log, &reading).cloned() else {
        return;
    };
    state.refresh(&log);
    if log.records.is_empty() {
        ui.weak(format!("{} has no records.", file_name(&lv.path)));
        return;
    }
    filter_row(ui, state, &log);
    let ctx = JumpCtx {
        ws,
        phase: app.phase.as_ref(),
        run: log_run(ws, &lv.path).or_else(|| current_run(ws, app.phase.as_ref())),
    };
    let jump = records(ui, state, &log, &ctx);
    match jump {
        Some(Jump::Graph(p)) => app.select_graph(&p),
        Some(Jump::Node(n)) => app.reveal_node(n),
        Some(Jump::Copy(s)) => ui.ctx().copy_text(s),
        None => {}
    }
}

/// The picker row; opens the log picked, or the backend's debug.log when none is open, so
/// there is something to read at once.
fn pick_log(app: &mut App, ui: &mut egui::Ui) {
    let Some(ws) = &app.workspace else { return };
    let run = current_run(ws, app.phase.as_ref());
    let open = app.peek::<LogState>().and_then(|s| s.view.as_ref());
    let mut pick = log_picker(ui, run, open.map(|l| l.path.as_path()));
    if open.is_none() {
        pick = pick.or_else(|| run.and_then(default_log));
    }
    if let Some(p) = pick {
        let (log, cx) = app.part::<LogState>();
        log.open(&cx, &p);
    }
}

/// The run whose logs to list: the one holding the open phase, else the first.
fn current_run<'a>(ws: &'a Workspace, phase: Option<&PhaseState>) -> Option<&'a Run> {
    let holding = phase.and_then(|ph| ws.index.runs.iter().find(|r| ph.key.starts_with(&r.path)));
    holding.or_else(|| ws.index.runs.first())
}

/// The run a log file belongs to.
fn log_run<'a>(ws: &'a Workspace, log: &Path) -> Option<&'a Run> {
    ws.index
        .runs
        .iter()
        .find(|r| r.logs.iter().any(|l| l.path == log))
}

/// The log to show first: the backend's (npugraph_ex / TorchAir `debug.log`), else
/// Inductor's, else Dynamo's; an empty file only when all are.
fn default_log(run: &Run) -> Option<PathBuf> {
    let rank = |kind: LogKind| match kind {
        LogKind::Backend => 0,
        LogKind::Inductor => 1,
        LogKind::Dynamo => 2,
    };
    let best = run.logs.iter().min_by_key(|l| (l.size == 0, rank(l.kind)));
    best.map(|l| l.path.clone())
}

/// The log files of `run`; the one picked, if any.
fn log_picker(ui: &mut egui::Ui, run: Option<&Run>, open: Option<&Path>) -> Option<PathBuf> {
    let Some(run) = run else {
        ui.weak("No run in this folder.");
        return None;
    };
    let label = |p: &Path| p.strip_prefix(&run.path).unwrap_or(p).display().to_string();
    let selected = open.map_or_else(|| "pick a log…".to_string(), label);
    let mut pick = None;
    ui.label("Log");
    egui::ComboBox::from_id_salt("log_file")
        .selected_text(selected)
        .width(260.0)
        .show_ui(ui, |ui| {
            for l in &run.logs {
                let text = format!(
                    "{}  ({})",
                    label(&l.path),
                    crate::model::size::human_bytes(l.size)
                );
                if ui
                    .selectable_label(open == Some(l.path.as_path()), text)
                    .clicked()
                {
                    pick = Some(l.path.clone());
                }
            }
        });
    if let Some(p) = open {
        ui.weak(&run.name).on_hover_text(p.display().to_string());
    }
    pick
}

fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// Level boxes, text filter and the count; refilters as soon as either changes, so the count
/// and the table agree within the frame.
fn filter_row(ui: &mut egui::Ui, state: &mut LogsPanelState, log: &Arc<ParsedLog>) {
    let counts = state.cache.as_ref().map_or([0; 6], |c| c.counts);
    ui.horizontal_wrapped(|ui| {
        for (i, name) in LEVEL_BOXES.iter().enumerate() {
            // "no level" only when the log has such records; the named levels always, so the
            // row does not jump from one log to the next.
            if i == 5 && counts[i] == 0 {
                continue;
            }
            ui.checkbox(&mut state.levels[i], *name)
                .on_hover_text(format!("{} record(s)", counts[i]));
            ui.weak(counts[i].to_string());
            ui.add_space(4.0);
        }
        ui.separator();
        ui.add(
            egui::TextEdit::singleline(&mut state.text)
                .hint_text("filter text")
                .desired_width(200.0),
        );
        if !state.text.is_empty()
            && ui
                .small_button("✖")
                .on_hover_text("clear the text filter")
                .clicked()
        {
            state.text.clear();
        }
        ui.separator();
        state.refresh(log);
        if let Some((shown, total)) = state.shown() {
            ui.label(format!("{shown}/{total} records"));
        }
    });
}

/// What the chips need to know to resolve refs.
struct JumpCtx<'a> {
    ws: &'a Workspace,
    phase: Option<&'a PhaseState>,
    /// The run the log belongs to.
    run: Option<&'a Run>,
}

const DETAIL_HEIGHT: f32 = 110.0;

/// The records table, and the selected record in full below it. Returns the chip clicked.
fn records(
    ui: &mut egui::Ui,
    state: &mut LogsPanelState,
    log: &ParsedLog,
    ctx: &JumpCtx,
) -> Option<Jump> {
    let rows = state.cache.as_ref().map_or(&[][..], |c| c.rows.as_slice());
    let detail = state.selected.and_then(|i| log.records.get(i));
    let height = ui.available_height() - if detail.is_some() { DETAIL_HEIGHT } else { 0.0 };
    let (jump, clicked) = ui
        .scope(|ui| {
            // Labels that sense clicks for text selection would swallow row clicks; the
            // selected record's text is selectable in the detail view instead.
            ui.style_mut().interaction.selectable_labels = false;
            records_table(ui, rows, log, state.selected, ctx, height)
        })
        .inner;
    if let Some(i) = clicked {
        state.selected = if state.selected == Some(i) {
            None
        } else {
            Some(i)
        };
    }
    if let Some(rec) = detail {
        record_detail(ui, rec);
    }
    jump
}

/// The virtualised table of the records `rows` (indices into `log.records`). Returns the chip
/// clicked and the record whose row was clicked.
fn records_table(
    ui: &mut egui::Ui,
    rows: &[usize],
    log: &ParsedLog,
    selected: Option<usize>,
    ctx: &JumpCtx,
    height: f32,
) -> (Option<Jump>, Option<usize>) {
    let row_h = ui.spacing().interact_size.y;
    let mut jump = None;
    let mut clicked = None;
    TableBuilder::new(ui)
        .id_salt("log_records")
        .striped(true)
        .resizable(true)
        .sense(egui::Sense::click())
        .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
        // The message gets what is left: it is what people read.
        .column(Column::auto().at_least(30.0))
        .column(Column::auto().at_most(160.0).clip(true))
        .column(Column::exact(30.0))
        .column(Column::initial(130.0).clip(true))
        .column(Column::initial(130.0).clip(true))
        .column(Column::remainder().at_least(160.0).clip(true))
        .min_scrolled_height(0.0)
        .max_scroll_height(height.max(60.0))
        .header(row_h, |mut h| {
            for title in ["line", "time", "lvl", "location", "refs", "message"] {
                h.col(|ui| {
                    ui.strong(title);
                });
            }
        })
        .body(|body| {
            body.rows(row_h, rows.len(), |mut row| {
                let Some(rec) = rows
                    .get(row.index())
                    .and_then(|&i| log.records.get(i).map(|r| (i, r)))
                else {
                    return;
                };
                let (i, rec) = rec;
                row.set_selected(selected == Some(i));
                if let Some(j) = record_row(&mut row, rec, ctx) {
                    jump = Some(j);
                }
                if row.response().clicked() {
                    clicked = Some(i);
                }
            });
        });
    (jump, clicked)
}

fn record_row(
    row: &mut egui_extras::TableRow<'_, '_>,
    rec: &LogRecord,
    ctx: &JumpCtx,
) -> Option<Jump> {
    row.col(|ui| {
        ui.weak(rec.line.to_string());
    });
    row.col(|ui| {
        let time = rec.time.as_deref().unwrap_or("");
        // The date is the same on every line; the clock is what tells records apart.
        let clock = time.rsplit(' ').next().unwrap_or(time);
        ui.monospace(clock).on_hover_text(time);
    });
    row.col(|ui| {
        let (text, color) = level_style(rec.level, ui.visuals());
        ui.label(RichText::new(text).monospace().color(color))
            .on_hover_text(level_name(rec.level));
    });
    row.col(|ui| {
        ui.add(egui::Label::new(rec.location.as_deref().unwrap_or("")).truncate());
    });
    let mut jump = None;
    row.col(|ui| {
        for r in &rec.refs {
            if let Some(j) = ref_chip(ui, rec, r, ctx) {
                jump = Some(j);
            }
        }
    });
    row.col(|ui| message_cell(ui, rec));
    jump
}

fn message_cell(ui: &mut egui::Ui, rec: &LogRecord) {
    let lines = rec.line_count();
    if lines > 1 {
        ui.weak(format!("+{}", lines - 1)).on_hover_text(format!(
            "{} more line(s); click the row to read them",
            lines - 1
        ));
    }
    let r = ui.add(egui::Label::new(rec.first_line()).truncate());
    if lines > 1 {
        r.on_hover_ui(|ui| {
            ui.set_max_width(700.0);
            let shown: Vec<&str> = rec.message.lines().take(40).collect();
            ui.monospace(shown.join("\n"));
            if lines > 40 {
                ui.weak(format!("… {} more", lines - 40));
            }
        });
    }
}

/// Three letters in the level's colour, as log viewers do: the column stays narrow.
fn level_style(l: Level, v: &egui::Visuals) -> (&'static str, Color32) {
    match l {
        Level::Debug => ("DBG", v.weak_text_color()),
        Level::Info => ("INF", v.text_color()),
        Level::Event => ("EVT", super::palette::LOG_EVENT),
        Level::Warning => ("WRN", v.warn_fg_color),
        Level::Error => ("ERR", v.error_fg_color),
        Level::Critical => ("CRT", v.error_fg_color),
        Level::None => ("", v.weak_text_color()),
    }
}

fn level_name(l: Level) -> &'static str {
    match l {
        Level::Debug => "DEBUG",
        Level::Info => "INFO",
        Level::Event => "EVENT",
        Level::Warning => "WARNING",
        Level::Error => "ERROR",
        Level::Critical => "CRITICAL",
        Level::None => "no level",
    }
}

fn record_detail(ui: &mut egui::Ui, rec: &LogRecord) {
    ui.separator();
    ui.horizontal(|ui| {
        ui.strong(format!("line {}", rec.line));
        if let Some(l) = &rec.location {
            ui.weak(l);
        }
        if let Some(t) = &rec.time {
            ui.weak(t);
        }
    });
    egui::ScrollArea::vertical()
        .id_salt("log_record_detail")
        .max_height(DETAIL_HEIGHT - 30.0)
        .auto_shrink([false, true])
        .show(ui, |ui| {
            ui.add(
                egui::Label::new(RichText::new(&rec.message).monospace())
                    .selectable(true)
                    .wrap(),
            );
        });
}

// ---------------------------------------------------------------------------------------------
// Ref chips

/// A small button naming the ref; disabled when fxray has nowhere to go. Returns its jump when
/// clicked.
fn ref_chip(ui: &mut egui::Ui, rec: &LogRecord, r: &LogRef, ctx: &JumpCtx) -> Option<Jump> {
    let target = resolve(rec, r, ctx);
    let (text, what) = chip_text(r);
    let hover = match &target {
        Some(Jump::Graph(p)) => format!("{what}\nopen {}", p.display()),
        Some(Jump::Node(n)) => format!("{what}\nshow node {n}"),
        Some(Jump::Copy(s)) => format!("{what}\n{s}\nclick to copy"),
        None => format!("{what}\nnot found in the open folder"),
    };
    let resp = ui.add_enabled(
        target.is_some(),
        egui::Button::new(RichText::new(text).small()).small(),
    );
    let resp = resp.on_hover_text(&hover).on_disabled_hover_text(&hover);
    if resp.clicked() { target } else { None }
}

/// The chip's text (kind-prefixed, so it never reads like a node or file label elsewhere) and
/// a description for its tooltip.
fn chip_text(r: &LogRef) -> (String, &'static str) {
    match r {
        LogRef::Pass(p) => (format!("pass: {p}"), "FX pass"),
        LogRef::Model(m) => (format!("model: {m}"), "compiled model"),
        LogRef::FxGraph(g) => (
            format!("graph: {g}"),
            "fx graph name (output_code.py's fx_graph_name)",
        ),
        LogRef::AclGraph(id) => (format!("aclgraph: {id}"), "captured NPU graph"),
        LogRef::Path(p) => (format!("file: {}", file_name(Path::new(p))), "file"),
        LogRef::Node(n) => (format!("node: {n}"), "FX node"),
    }
}

fn resolve(rec: &LogRecord, r: &LogRef, ctx: &JumpCtx) -> Option<Jump> {
    match r {
        LogRef::Pass(name) => pass_target(rec, name, ctx).map(Jump::Graph),
        LogRef::Model(name) => ctx
            .run
            .and_then(|run| run.models.iter().find(|m| m.name == *name))
            .and_then(first_graph)
            .map(Jump::Graph),
        LogRef::FxGraph(g) => runs(ctx)
            .flat_map(|run| &run.models)
            .find(|m| m.graph_name.as_deref() == Some(g.as_str()))
            .and_then(first_graph)
            .map(Jump::Graph),
        LogRef::Path(p) => Some(
            graph_file(ctx.ws, Path::new(p)).map_or_else(|| Jump::Copy(p.clone()), Jump::Graph),
        ),
        LogRef::AclGraph(id) => Some(Jump::Copy(id.clone())),
        LogRef::Node(n) => {
            let file = ctx.phase?.current_file()?;
            find_node(file, n).map(|_| Jump::Node(n.clone()))
        }
    }
}

/// The log's run, else every run.
fn runs<'a>(ctx: &'a JumpCtx) -> Box<dyn Iterator<Item = &'a Run> + 'a> {
    match ctx.run {
        Some(r) => Box::new(std::iter::once(r)),
        None => Box::new(ctx.ws.index.runs.iter()),
    }
}

/// The dump of pass `name`: in the open phase first (the user is looking at it), then in the
/// models the record names, then anywhere in the log's run.
fn pass_target(rec: &LogRecord, name: &str, ctx: &JumpCtx) -> Option<PathBuf> {
    if let Some(p) = ctx
        .phase
        .and_then(|ph| ph.passes.iter().find(|p| p.name == name))
    {
        return Some(p.path.clone());
    }
    let named_models: Vec<&str> = rec
        .refs
        .iter()
        .filter_map(|r| match r {
            LogRef::Model(m) => Some(m.as_str()),
            _ => None,
        })
        .collect();
    let models = || runs(ctx).flat_map(|run| &run.models);
    let in_model = |m: &crate::model::index::Model| {
        m.phases
            .iter()
            .flat_map(|ph| &ph.passes)
            .find(|p| p.name == name)
            .map(|p| p.path.clone())
    };
    models()
        .filter(|m| named_models.contains(&m.name.as_str()))
        .find_map(in_model)
        .or_else(|| models().find_map(in_model))
}

/// A model's first pass, else its Dynamo graph.
fn first_graph(m: &crate::model::index::Model) -> Option<PathBuf> {
    let first = m
        .phases
        .iter()
        .find_map(|ph| ph.passes.first())
        .map(|p| p.path.clone());
    first.or_else(|| m.dynamo_graph.clone())
}

/// The graph file a logged path names. Logs hold the paths of the machine that wrote them, so
/// besides an exact match, a graph file whose path below the opened folder ends the logged path
/// is the same file.
fn graph_file(ws: &Workspace, logged: &Path) -> Option<PathBuf> {
    let root = &ws.index.root;
    ws.index
        .graph_files()
        .find(|g| {
            *g == logged
                || g.strip_prefix(root)
                    .is_ok_and(|rel| !rel.as_os_str().is_empty() && logged.ends_with(rel))
        })
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(level: Level, message: &str) -> LogRecord {
        LogRecord {
            line: 1,
            level,
            time: None,
            pid: None,
            location: Some("passes.py:12".into()),
            thread: None,
            rank: None,
            message: message.into(),
            refs: Vec::new(),
        }
    }

    #[test]
    fn filter_recomputes_only_on_change() {
        let log = Arc::new(ParsedLog {
            format: None,
            records: vec![
                record(Level::Debug, "a"),
                record(Level::Info, "Pass done"),
                record(Level::Critical, "boom"),
            ],
            preamble: Vec::new(),
        });
        let mut s = LogsPanelState::default();
        s.refresh(&log);
        assert_eq!(s.shown(), Some((3, 3)));
        s.levels[level_box(Level::Debug)] = false;
        s.refresh(&log);
        assert_eq!(s.shown(), Some((2, 3)));
        s.text = "DONE".into();
        s.refresh(&log);
        assert_eq!(s.shown(), Some((1, 3)));
        s.text = "passes.py".into();
        s.refresh(&log);
        assert_eq!(s.shown(), Some((2, 3)), "the location matches too");
        let ptr = s.cache.as_ref().map(|c| c.rows.as_ptr());
        s.refresh(&log);
        assert_eq!(
            s.cache.as_ref().map(|c| c.rows.as_ptr()),
            ptr,
            "no rebuild without a change"
        );
    }
}
