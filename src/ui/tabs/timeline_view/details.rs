//! Text about tasks: the hover tooltip, the selected task's details and the statistics table
//! of the selected range.

use super::paint::{fmt_t, type_colour};
use crate::analysis::timeline_stats::{RangeStats, StatRow, Timeline};
use crate::model::timeline::{Task, Trace};
use serde_json::Value;

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Name, stream, time and every arg, in the writer's order.
pub fn task_grid(ui: &mut egui::Ui, trace: &Trace, task: &Task, id: &str) {
    let kind = trace.kind_name(task);
    ui.horizontal(|ui| {
        let (r, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
        ui.painter().rect_filled(r, 2.0, type_colour(kind));
        ui.strong(&task.name);
    });
    egui::Grid::new(id)
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.weak("stream");
            ui.label(&trace.lanes[task.lane as usize].name);
            ui.end_row();
            ui.weak("ts");
            ui.label(fmt_t(task.ts));
            ui.end_row();
            ui.weak("dur");
            ui.label(fmt_t(task.dur));
            ui.end_row();
            for (k, v) in task.args.iter().chain(&task.extra) {
                ui.weak(k);
                ui.label(value_text(v));
                ui.end_row();
            }
        });
}

/// Counts and total/avg/min/max durations of a range, per task type and per stream.
pub fn range_table(ui: &mut egui::Ui, s: &RangeStats, logical: bool) {
    ui.label(format!(
        "range {} – {} ({} {}): {} tasks",
        fmt_t(s.t0),
        fmt_t(s.t1),
        fmt_t(s.t1 - s.t0),
        if logical { "logical units" } else { "units" },
        s.tasks
    ));
    rows(ui, "by task type", "range_by_type", &s.by_type, true);
    rows(ui, "by stream", "range_by_stream", &s.by_stream, false);
}

fn rows(ui: &mut egui::Ui, title: &str, id: &str, rows: &[StatRow], colour: bool) {
    ui.strong(title);
    egui::Grid::new(id)
        .num_columns(6)
        .striped(true)
        .show(ui, |ui| {
            for h in ["", "count", "total", "avg", "min", "max"] {
                ui.weak(h);
            }
            ui.end_row();
            for r in rows {
                ui.horizontal(|ui| {
                    if colour {
                        let (rect, _) =
                            ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
                        ui.painter().rect_filled(rect, 2.0, type_colour(&r.name));
                    }
                    ui.label(&r.name);
                });
                ui.label(r.count.to_string());
                ui.label(fmt_t(r.total));
                ui.label(fmt_t(r.avg()));
                ui.label(fmt_t(r.min));
                ui.label(fmt_t(r.max));
                ui.end_row();
            }
        });
}

/// One swatch per task type with its count, in order of first appearance.
pub fn legend(ui: &mut egui::Ui, trace: &Trace) {
    let mut counts = vec![0usize; trace.types.len()];
    for t in &trace.tasks {
        counts[t.kind as usize] += 1;
    }
    ui.horizontal_wrapped(|ui| {
        for (name, n) in trace.types.iter().zip(counts) {
            let (r, _) = ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
            ui.painter().rect_filled(r, 2.0, type_colour(name));
            let name = if name.is_empty() { "(no type)" } else { name };
            ui.small(format!("{name} {n}"));
        }
    });
}

/// The record or wait paired with `task` (same handle), as a link; returns it when clicked.
pub fn partner(ui: &mut egui::Ui, tl: &Timeline, task: u32) -> Option<u32> {
    let p = tl
        .pairing
        .pairs
        .iter()
        .find(|p| p.record == task || p.wait == task)?;
    let (other, what) = if p.record == task {
        (p.wait, "waited for by")
    } else {
        (p.record, "waits for")
    };
    let o = &tl.trace.tasks[other as usize];
    let stream = &tl.trace.lanes[o.lane as usize].name;
    let mut clicked = None;
    ui.horizontal_wrapped(|ui| {
        ui.weak(what);
        if ui.link(format!("{} on {stream}", o.name)).clicked() {
            clicked = Some(other);
        }
    });
    clicked
}
