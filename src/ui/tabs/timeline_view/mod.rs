//! The timeline of a captured aclGraph model instance (issue 7), in the style of a flame-graph
//! view: one lane per stream, a bar per task coloured by type, arrows from record to wait.
//! View state ([`TimelineViewState`]: zoom, pan, hover, range, search) is kept apart from the
//! data; painting culls to what is on screen ([`paint`]); input is in [`interact`].

mod details;
mod geometry;
mod interact;
mod options;
mod paint;
mod rank_picker;

use crate::analysis::timeline_stats::{self, RangeStats, Timeline};
use crate::app::App;
use crate::app::part::Cx;
use crate::app::timeline::TimelineState;
use geometry::{Geometry, LANE_H, RULER_H};
pub use options::ViewOptions;
pub use paint::Drawn;
use std::path::PathBuf;
use std::sync::Arc;

/// How the timeline is shown: zoom, pan, hover, search (apart from the app's data).
#[derive(Default)]
pub struct TimelineViewState {
    pub options: ViewOptions,
    /// Fit the whole trace on the next frame.
    pub fit_pending: bool,
    /// The file the view was last fitted to: a newly opened file is fitted once.
    fitted_for: Option<PathBuf>,
    pub hovered: Option<u32>,
    /// The arrow under the pointer (index into the timeline's deps), when no task is.
    pub hovered_dep: Option<usize>,
    /// The selected time range (in drag order).
    pub range: Option<(f64, f64)>,
    range_stats: Option<Arc<RangeStats>>,
    drag: Option<interact::DragMode>,
    pub search: String,
    searched: String,
    pub matches: Vec<u32>,
    /// Position in `matches` of the last match shown.
    match_at: Option<usize>,
    pub hide_arrows: bool,
    /// The canvas as drawn last frame (tests and the benchmark aim at tasks through it).
    last: Option<Geometry>,
    pub drawn: Drawn,
    /// The graph's selected node last frame: a change selects its task.
    last_node: Option<String>,
}

impl TimelineViewState {
    /// Screen rectangle of `task` as drawn last frame.
    pub fn task_rect(&self, app: &App, task: u32) -> Option<egui::Rect> {
        let g = self.last?;
        let tl = app.peek::<TimelineState>()?.loaded()?;
        ((task as usize) < tl.trace.tasks.len()).then(|| g.task_rect(&tl.trace, task))
    }

    /// Screen ends of arrow `dep` as drawn last frame.
    pub fn dep_ends(&self, app: &App, dep: usize) -> Option<(egui::Pos2, egui::Pos2)> {
        let g = self.last?;
        Some(g.dep_ends(app.peek::<TimelineState>()?.loaded()?.deps.get(dep)?))
    }

    /// The canvas (ruler + lanes) as drawn last frame.
    pub fn canvas(&self) -> Option<egui::Rect> {
        self.last.map(|g| g.canvas)
    }

    /// Screen x of time `t` last frame.
    pub fn x_of(&self, t: f64) -> Option<f32> {
        self.last.map(|g| g.x(t))
    }

    /// Statistics of the selected range, as shown.
    pub fn range_stats(&self) -> Option<&RangeStats> {
        self.range_stats.as_deref()
    }

    /// Time span visible last frame.
    pub fn visible(&self) -> Option<(f64, f64)> {
        self.last.map(|g| g.visible())
    }
}

pub fn show(t: &mut TimelineState, cx: &mut Cx, state: &mut TimelineViewState, ui: &mut egui::Ui) {
    let Some(open) = t.open.as_ref() else {
        ui.weak("No capture open. Pick a capture JSON (⏱) in the tree.");
        return;
    };
    let path = open.path.clone();
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let Some(tl) =
        crate::ui::loading::show(ui, &open.timeline, &format!("loading {file}…")).cloned()
    else {
        return;
    };
    let load_time = open.load_time;
    if state.fitted_for.as_ref() != Some(&path) {
        state.fitted_for = Some(path.clone());
        state.fit_pending = true;
        state.range = None;
        state.range_stats = None;
        state.searched.clear();
        state.matches.clear();
        state.match_at = None;
    }
    follow_node_selection(t, cx.selection.node, state, &tl);
    header(ui, &tl, &file, load_time);
    rank_picker::show(t, cx, ui);
    if let Some(link) = &t.nodes {
        let pass = link
            .pass
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        ui.weak(format!("{} · {pass}", link.map.describe()));
    }
    toolbar(t, cx, state, &tl, ui);
    let trace = &tl.trace;
    let details_h = if t.selected.is_some() || state.range.is_some() {
        (ui.available_height() * 0.45).max(160.0)
    } else {
        0.0
    };
    let want_h = RULER_H + trace.lanes.len() as f32 * LANE_H + 6.0;
    let h = want_h.min((ui.available_height() - details_h).max(RULER_H + LANE_H));
    let (canvas, resp) = ui.allocate_exact_size(
        egui::vec2(ui.available_width(), h),
        egui::Sense::click_and_drag(),
    );
    let (lo, hi) = trace.span();
    let mut g = Geometry {
        canvas,
        opts: state.options,
    };
    let fit_scale = {
        let mut o = ViewOptions::default();
        o.show_range(lo, hi, g.width());
        o.scale
    };
    if state.fit_pending {
        state.options.show_range(lo, hi, g.width());
        state.fit_pending = false;
    }
    g.opts = state.options;
    let action = interact::interact(ui, &resp, &g, trace, state, fit_scale);
    g.opts = state.options;
    // The hover is computed before a zoom moved the bars: recompute it on the frame's layout.
    state.hovered = resp.hover_pos().and_then(|p| g.task_at(trace, p));
    state.hovered_dep = match (state.hovered, resp.hover_pos()) {
        (None, Some(p)) if !state.hide_arrows => g.dep_at(&tl, p),
        _ => None,
    };
    if let Some(interact::Action::Select(task)) = action {
        t.select_task(cx, task);
    }
    update_range_stats(state, &tl);
    let painter = ui.painter_at(canvas);
    state.drawn = paint::paint(
        &painter,
        &g,
        &tl,
        &paint::PaintState {
            hovered: state.hovered,
            hovered_dep: state.hovered_dep,
            selected: t.selected,
            matches: &state.matches,
            range: state.range,
            show_arrows: !state.hide_arrows,
        },
    );
    state.last = Some(g);
    if let Some(d) = state.hovered_dep.and_then(|i| tl.deps.get(i))
        && state.drag.is_none()
    {
        let what = match d.kind {
            timeline_stats::DepKind::Flow => "flow from the file (record end → wait start)",
            timeline_stats::DepKind::Pair(timeline_stats::PairKind::Event) => {
                "event record → wait (paired by handle)"
            }
            timeline_stats::DepKind::Pair(timeline_stats::PairKind::Mem) => {
                "memory write → wait value (paired by address)"
            }
            timeline_stats::DepKind::Handover => "STREAM_ACTIVE hand-over",
        };
        resp.on_hover_ui_at_pointer(|ui| {
            ui.strong(&d.label);
            ui.label(format!(
                "{what}: {} → {}",
                trace.lanes[d.from_lane as usize].name, trace.lanes[d.to_lane as usize].name
            ));
        });
    } else if let Some(h) = state.hovered
        && state.drag.is_none()
    {
        resp.on_hover_ui_at_pointer(|ui| {
            details::task_grid(ui, trace, &trace.tasks[h as usize], "timeline_tooltip")
        });
    }
    details::legend(ui, trace);
    let mut goto = None;
    if details_h > 0.0 {
        ui.separator();
        egui::ScrollArea::vertical()
            .id_salt("timeline_details")
            .auto_shrink(false)
            .show(ui, |ui| {
                ui.horizontal_top(|ui| {
                    if let Some(s) = t.selected.filter(|&s| (s as usize) < trace.tasks.len()) {
                        ui.vertical(|ui| {
                            ui.set_max_width(420.0);
                            if let Some((node, conf)) =
                                t.nodes.as_ref().and_then(|l| l.map.by_task.get(&s))
                            {
                                ui.label(format!("FX node {node} ({conf:?} confidence)"))
                                    .on_hover_text(
                                        "linked by op type and order; selected in the graph and inspector",
                                    );
                            }
                            if let Some(other) = details::partner(ui, &tl, s) {
                                goto = Some(other);
                            }
                            details::task_grid(
                                ui,
                                trace,
                                &trace.tasks[s as usize],
                                "timeline_task",
                            );
                        });
                        ui.separator();
                    }
                    if let Some(rs) = &state.range_stats {
                        ui.vertical(|ui| details::range_table(ui, rs, trace.logical_time));
                    }
                });
            });
    }
    if let Some(task) = goto {
        t.select_task(cx, Some(task));
        let width = state.last.map_or(800.0, |g| g.width());
        reveal(state, &tl, task, width);
    }
}

fn header(ui: &mut egui::Ui, tl: &Timeline, file: &str, load_time: Option<std::time::Duration>) {
    let t = &tl.trace;
    ui.horizontal_wrapped(|ui| {
        ui.strong(format!("⏱ {file}"));
        let arrows = if t.flows.is_empty() {
            format!("{} record/wait pairs", tl.pairing.pairs.len())
        } else {
            format!("{} flows", t.flows.len())
        };
        ui.label(format!(
            "{} tasks · {} streams · {arrows}",
            t.tasks.len(),
            t.lanes.len()
        ));
        if let Some(d) = load_time {
            ui.weak(format!("loaded in {:.0} ms", d.as_secs_f64() * 1e3));
        }
    });
    if t.logical_time {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            "ts/dur are logical: they give the order of tasks within a stream, not hardware time; streams are not comparable in time",
        );
    }
    if let Some(why) = &t.incomplete {
        ui.colored_label(ui.visuals().error_fg_color, format!("incomplete: {why}"));
    }
    for q in &t.quirks {
        ui.weak(format!("note: {q}"));
    }
}

fn toolbar(
    t: &mut TimelineState,
    cx: &mut Cx,
    state: &mut TimelineViewState,
    tl: &Timeline,
    ui: &mut egui::Ui,
) {
    ui.horizontal(|ui| {
        if ui
            .button("Fit")
            .on_hover_text("Show everything (F)")
            .clicked()
        {
            state.fit_pending = true;
        }
        let width = state.last.map_or(800.0, |g| g.width());
        if ui
            .add_enabled(state.range.is_some(), egui::Button::new("Zoom to range"))
            .clicked()
            && let Some((a, b)) = state.range
        {
            state.options.show_range(a, b, width);
        }
        if ui
            .add_enabled(state.range.is_some(), egui::Button::new("Clear range"))
            .on_hover_text("Esc")
            .clicked()
        {
            state.range = None;
        }
        let mut arrows = !state.hide_arrows;
        ui.checkbox(&mut arrows, "arrows");
        state.hide_arrows = !arrows;
        ui.separator();
        let edit = ui.add(
            egui::TextEdit::singleline(&mut state.search)
                .hint_text("search task name")
                .desired_width(180.0),
        );
        if state.search != state.searched {
            state.searched = state.search.clone();
            state.matches = timeline_stats::search(&tl.trace, &state.search);
            state.match_at = None;
        }
        let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        let n = state.matches.len();
        let prev = ui.add_enabled(n > 0, egui::Button::new("◀")).clicked();
        let next = ui.add_enabled(n > 0, egui::Button::new("▶")).clicked() || enter;
        if n > 0 && (prev || next) {
            let k = match (state.match_at, next) {
                (None, true) => 0,
                (None, false) => n - 1,
                (Some(k), true) => (k + 1) % n,
                (Some(k), false) => (k + n - 1) % n,
            };
            state.match_at = Some(k);
            let task = state.matches[k];
            t.select_task(cx, Some(task));
            reveal(state, tl, task, width);
        }
        if !state.search.trim().is_empty() {
            match state.match_at {
                Some(k) => ui.label(format!("{}/{n}", k + 1)),
                None => ui.label(format!("{n} matches")),
            };
        }
        ui.weak("wheel/W/S zoom · drag/A/D pan · shift-drag or drag the ruler: range");
    });
}

/// When the graph's selected node changed (in the graph view or the inspector), selects and
/// shows its linked task.
fn follow_node_selection(
    timeline: &mut TimelineState,
    node: Option<&str>,
    state: &mut TimelineViewState,
    tl: &Timeline,
) {
    if node == state.last_node.as_deref() {
        return;
    }
    let node = node.map(str::to_string);
    state.last_node = node.clone();
    let before = timeline.selected;
    if let Some(n) = node
        && timeline.select_task_of_node(&n)
        && timeline.selected != before
        && let (Some(t), Some(g)) = (timeline.selected, state.last)
    {
        reveal(state, tl, t, g.width());
    }
}

/// Centres `task`, zooming in when it would be thinner than a few points.
fn reveal(state: &mut TimelineViewState, tl: &Timeline, task: u32, width: f32) {
    let t = &tl.trace.tasks[task as usize];
    if t.dur * state.options.scale < 6.0 {
        state.options.scale = (40.0 / t.dur.max(1e-3)).max(state.options.scale);
    }
    let mid = t.ts + t.dur / 2.0;
    state.options.start = mid - width as f64 / 2.0 / state.options.scale;
    // Scroll its lane into view.
    if let Some(g) = state.last {
        let y = t.lane as f32 * LANE_H;
        let h = g.canvas.height() - RULER_H;
        let o = &mut state.options;
        if y < o.scroll_y || y + LANE_H > o.scroll_y + h {
            o.scroll_y = (y - h / 2.0).clamp(0.0, g.max_scroll(tl.trace.lanes.len()));
        }
    }
}

fn update_range_stats(state: &mut TimelineViewState, tl: &Timeline) {
    match state.range {
        None => state.range_stats = None,
        Some((a, b)) => {
            let (a, b) = (a.min(b), a.max(b));
            if state
                .range_stats
                .as_ref()
                .is_none_or(|s| s.t0 != a || s.t1 != b)
            {
                state.range_stats = Some(Arc::new(timeline_stats::range_stats(&tl.trace, a, b)));
            }
        }
    }
}

/// The timeline tab: a capture's kernels on their streams, or compile time as a flame chart.
impl crate::ui::tab::FeatureTab for TimelineViewState {
    type Feature = TimelineState;

    fn id(&self) -> crate::app::TabId {
        crate::app::TabId::TIMELINE
    }

    fn title(&self) -> &'static str {
        "Timeline"
    }

    fn show(&mut self, timeline: &mut TimelineState, cx: &mut Cx, ui: &mut egui::Ui) {
        show(timeline, cx, self, ui);
    }
}
