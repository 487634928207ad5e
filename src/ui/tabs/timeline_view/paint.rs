//! Painting the timeline: the ruler, one lane per stream, a bar per task coloured by its type,
//! the dependency arrows and the selected range. Only what is on screen is drawn, and runs of
//! bars thinner than a point are merged into one, so a 20k-task stream costs about one shape
//! per pixel column when zoomed out.

use super::geometry::{self, BAR_H, Geometry, LANE_H, NAMES_W, RULER_H};
use crate::analysis::timeline_stats::{DepKind, Timeline};
use egui::{Color32, FontId, Painter, Rect, Stroke, pos2, vec2};

/// The colour of a task type: fixed for the aclGraph types, hashed for any other.
pub fn type_colour(name: &str) -> Color32 {
    let fixed = &crate::ui::palette::TASK_TYPES;
    if let Some((_, c)) = fixed.iter().find(|(n, _)| *n == name) {
        return *c;
    }
    let h = name
        .bytes()
        .fold(2166136261u32, |h, b| (h ^ b as u32).wrapping_mul(16777619));
    let hue = (h % 360) as f32 / 360.0;
    egui::ecolor::Hsva::new(hue, 0.55, 0.8, 1.0).into()
}

/// What the painter needs besides the data.
pub struct PaintState<'a> {
    pub hovered: Option<u32>,
    pub hovered_dep: Option<usize>,
    pub selected: Option<u32>,
    pub matches: &'a [u32],
    pub range: Option<(f64, f64)>,
    pub show_arrows: bool,
}

/// Counts of what was drawn (for the benchmark and the status line).
#[derive(Debug, Default, Clone, Copy)]
pub struct Drawn {
    pub bars: usize,
    pub merged: usize,
    pub arrows: usize,
}

pub fn paint(p: &Painter, g: &Geometry, tl: &Timeline, st: &PaintState) -> Drawn {
    let visuals = p.ctx().global_style().visuals.clone();
    let text = visuals.text_color();
    let weak = visuals.weak_text_color();
    let trace = &tl.trace;
    let bars = g.bars();
    let mut drawn = Drawn::default();
    p.rect_filled(g.canvas, 0.0, visuals.extreme_bg_color);
    ruler(p, g, weak);
    let (t0, t1) = g.visible();
    let font = FontId::proportional(11.0);
    let below_ruler = p.with_clip_rect(g.canvas.with_min_y(bars.top()));
    // One colour lookup per type, not per task.
    let colours: Vec<Color32> = trace.types.iter().map(|t| type_colour(t)).collect();
    for (li, lane) in trace.lanes.iter().enumerate() {
        let li = li as u32;
        let top = g.lane_top(li);
        if top > g.canvas.bottom() {
            break;
        }
        if top + LANE_H < bars.top() {
            continue;
        }
        if li % 2 == 1 {
            below_ruler.rect_filled(
                Rect::from_min_max(
                    pos2(g.canvas.left(), top),
                    pos2(g.canvas.right(), top + LANE_H),
                ),
                0.0,
                visuals.faint_bg_color,
            );
        }
        let lp = p.with_clip_rect(bars);
        let mid = g.lane_mid(li);
        // A run of sub-point bars, flushed as one rectangle.
        let mut run: Option<(f32, f32, Color32)> = None;
        let flush = |run: &mut Option<(f32, f32, Color32)>, drawn: &mut Drawn| {
            if let Some((a, b, c)) = run.take() {
                lp.rect_filled(
                    Rect::from_min_max(
                        pos2(a, mid - BAR_H / 2.0),
                        pos2(b.max(a + 1.0), mid + BAR_H / 2.0),
                    ),
                    0.0,
                    c,
                );
                drawn.merged += 1;
            }
        };
        for &ti in &lane.tasks[geometry::window(trace, lane, t0, t1)] {
            let task = &trace.tasks[ti as usize];
            let colour = colours[task.kind as usize];
            let x0 = g.x(task.ts);
            let x1 = g.x(task.end());
            if x1 - x0 < 1.0 {
                match &mut run {
                    Some((_, b, _)) if x0 <= *b + 1.0 => *b = b.max(x1),
                    _ => {
                        flush(&mut run, &mut drawn);
                        run = Some((x0, x1, colour));
                    }
                }
                continue;
            }
            flush(&mut run, &mut drawn);
            let r = Rect::from_min_max(pos2(x0, mid - BAR_H / 2.0), pos2(x1, mid + BAR_H / 2.0));
            lp.rect_filled(r, 2.0, colour);
            if task.name.starts_with("dead_lock_") {
                // Marked by torch_npu's deadlock_check (`*_filtered_deadlock_check.json`).
                lp.rect_stroke(
                    r,
                    2.0,
                    Stroke::new(2.0, Color32::RED),
                    egui::StrokeKind::Inside,
                );
            }
            drawn.bars += 1;
            if r.width() > 28.0 {
                let label = short_name(&task.name);
                lp.with_clip_rect(r.shrink(2.0).intersect(bars)).text(
                    pos2(r.left() + 3.0, mid),
                    egui::Align2::LEFT_CENTER,
                    label,
                    font.clone(),
                    Color32::BLACK,
                );
            }
        }
        flush(&mut run, &mut drawn);
        // The stream's name over the names column.
        below_ruler.text(
            pos2(g.canvas.left() + 4.0, mid),
            egui::Align2::LEFT_CENTER,
            &lane.name,
            FontId::monospace(12.0),
            text,
        );
    }
    let lp = p.with_clip_rect(bars);
    for (i, &m) in st.matches.iter().enumerate() {
        if i > 2000 {
            break;
        }
        lp.rect_stroke(
            g.task_rect(trace, m).expand(1.5),
            2.0,
            Stroke::new(1.5, Color32::YELLOW),
            egui::StrokeKind::Outside,
        );
    }
    if let Some(h) = st.hovered {
        lp.rect_stroke(
            g.task_rect(trace, h).expand(1.0),
            2.0,
            Stroke::new(1.5, text),
            egui::StrokeKind::Outside,
        );
    }
    if let Some(s) = st.selected.filter(|&s| (s as usize) < trace.tasks.len()) {
        lp.rect_stroke(
            g.task_rect(trace, s).expand(2.0),
            2.0,
            Stroke::new(2.5, visuals.selection.stroke.color),
            egui::StrokeKind::Outside,
        );
    }
    if st.show_arrows {
        drawn.arrows = arrows(&lp, g, tl, t0, t1, st.hovered_dep);
    }
    if let Some((a, b)) = st.range {
        let (a, b) = (a.min(b), a.max(b));
        let r = Rect::from_min_max(
            pos2(g.x(a).max(bars.left() - 1.0), g.canvas.top()),
            pos2(g.x(b).min(bars.right() + 1.0), g.canvas.bottom()),
        );
        let sel = visuals.selection.bg_fill;
        p.with_clip_rect(g.canvas.with_min_x(bars.left())).rect(
            r,
            0.0,
            sel.gamma_multiply(0.25),
            Stroke::new(1.0, sel),
            egui::StrokeKind::Inside,
        );
    }
    p.line_segment(
        [
            pos2(bars.left(), g.canvas.top()),
            pos2(bars.left(), g.canvas.bottom()),
        ],
        Stroke::new(1.0, weak),
    );
    drawn
}

/// Kernel names carry a hash and a counter (`MatMulV2_4c1d…f5_1`): show the op type first.
fn short_name(name: &str) -> String {
    let parts: Vec<&str> = name.split('_').collect();
    let kept: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|p| !(p.len() >= 16 && p.bytes().all(|b| b.is_ascii_hexdigit())))
        .collect();
    kept.join("_")
}

/// Tick marks at 1, 2 or 5 × 10^k units, at least ~80 points apart.
fn ruler(p: &Painter, g: &Geometry, colour: Color32) {
    let r = g.ruler();
    let (t0, t1) = g.visible();
    let min_step = 80.0 / g.opts.scale;
    let mag = 10f64.powf(min_step.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= min_step)
        .unwrap_or(10.0 * mag);
    let mut t = (t0 / step).floor() * step;
    let rp = p.with_clip_rect(r.with_max_y(g.canvas.bottom()));
    while t <= t1 {
        let x = g.x(t);
        rp.line_segment(
            [pos2(x, r.bottom() - 5.0), pos2(x, g.canvas.bottom())],
            Stroke::new(0.5, colour.gamma_multiply(0.4)),
        );
        rp.text(
            pos2(x + 2.0, r.top() + 2.0),
            egui::Align2::LEFT_TOP,
            fmt_t(t),
            FontId::proportional(10.0),
            colour,
        );
        t += step;
    }
    p.line_segment(
        [
            pos2(g.canvas.left(), r.bottom()),
            pos2(g.canvas.right(), r.bottom()),
        ],
        Stroke::new(1.0, colour),
    );
    let _ = NAMES_W;
    let _ = RULER_H;
}

pub fn fmt_t(t: f64) -> String {
    if t.abs() >= 1e4 || t.fract().abs() < 1e-9 {
        format!("{t:.0}")
    } else {
        let s = format!("{t:.2}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Arrows between lanes; an arrow whose both ends are off the same side is skipped.
fn arrows(
    p: &Painter,
    g: &Geometry,
    tl: &Timeline,
    t0: f64,
    t1: f64,
    hovered: Option<usize>,
) -> usize {
    let mut n = 0;
    for (i, d) in tl.deps.iter().enumerate() {
        if (d.from_ts < t0 && d.to_ts < t0) || (d.from_ts > t1 && d.to_ts > t1) {
            continue;
        }
        let colour = match d.kind {
            DepKind::Handover => crate::ui::palette::DEP_HANDOVER,
            _ => crate::ui::palette::DEP_OTHER,
        };
        let (a, b) = g.dep_ends(d);
        let width = if hovered == Some(i) { 3.5 } else { 1.5 };
        p.line_segment([a, b], Stroke::new(width, colour));
        let dir = (b - a).normalized();
        let side = vec2(-dir.y, dir.x) * 4.0;
        p.add(egui::Shape::convex_polygon(
            vec![b, b - dir * 8.0 + side, b - dir * 8.0 - side],
            colour,
            Stroke::NONE,
        ));
        p.circle_filled(a, 2.5, colour);
        n += 1;
    }
    n
}
