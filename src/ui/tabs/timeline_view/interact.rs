//! Mouse and keyboard on the canvas: wheel or W/S zoom at the cursor, drag or A/D pan,
//! shift-drag (or a drag on the ruler) selects a time range, click selects a task, F fits.

use super::TimelineViewState;
use super::geometry::{Geometry, LANE_H};
use crate::model::timeline::Trace;
use crate::ui::shortcuts;
use egui::{Event, MouseWheelUnit, Response};

/// How a drag started: moving the view, or selecting a range from this time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DragMode {
    Pan,
    Range(f64),
}

/// What the user did that the app must apply.
pub enum Action {
    /// Clicked a task, or empty space (`None`).
    Select(Option<u32>),
}

/// Zoom step per wheel line or key press.
const STEP: f64 = 1.25;

pub fn interact(
    ui: &egui::Ui,
    resp: &Response,
    g: &Geometry,
    trace: &Trace,
    st: &mut TimelineViewState,
    fit_scale: f64,
) -> Option<Action> {
    let min_scale = fit_scale / 4.0;
    let left = g.left();
    let width = g.width();
    st.hovered = resp.hover_pos().and_then(|p| g.task_at(trace, p));
    let anchor = resp
        .hover_pos()
        .map_or(left + width / 2.0, |p| p.x.max(left));
    if resp.hovered() {
        let (lines_y, lines_x) = ui.input(|i| {
            let mut y = 0.0;
            let mut x = 0.0;
            for e in &i.events {
                if let Event::MouseWheel { unit, delta, .. } = e {
                    let k = match unit {
                        MouseWheelUnit::Point => 1.0 / 40.0,
                        MouseWheelUnit::Line => 1.0,
                        MouseWheelUnit::Page => 10.0,
                    };
                    y += delta.y * k;
                    x += delta.x * k;
                }
            }
            (y, x)
        });
        let over_names = resp.hover_pos().is_some_and(|p| p.x < left);
        if lines_y != 0.0 && over_names {
            // Over the stream names the wheel scrolls the lanes.
            st.options.scroll_y -= lines_y * LANE_H;
        } else if lines_y != 0.0 {
            st.options
                .zoom_at(left, anchor, STEP.powf(lines_y as f64), min_scale);
        }
        if lines_x != 0.0 {
            st.options.pan(lines_x * 40.0);
        }
    }
    for action in shortcuts::pressed(shortcuts::TIMELINE, ui.ctx()) {
        use shortcuts::Timeline;
        match action {
            Timeline::ZoomIn => st.options.zoom_at(left, anchor, STEP * STEP, min_scale),
            Timeline::ZoomOut => st
                .options
                .zoom_at(left, anchor, 1.0 / (STEP * STEP), min_scale),
            Timeline::PanLeft => st.options.pan(width * 0.2),
            Timeline::PanRight => st.options.pan(-width * 0.2),
            Timeline::Fit => st.fit_pending = true,
            Timeline::ClearRange => st.range = None,
        }
    }
    if resp.drag_started() {
        let shift = ui.input(|i| i.modifiers.shift);
        // Where the button went down, not where the drag was recognised.
        let pos = ui
            .input(|i| i.pointer.press_origin())
            .or(resp.interact_pointer_pos());
        let on_ruler = pos.is_some_and(|p| g.ruler().contains(p));
        st.drag = Some(match pos {
            Some(p) if shift || on_ruler => DragMode::Range(g.t(p.x.max(left))),
            _ => DragMode::Pan,
        });
    }
    if resp.dragged() {
        match st.drag {
            Some(DragMode::Pan) => {
                st.options.pan(resp.drag_delta().x);
                st.options.scroll_y -= resp.drag_delta().y;
            }
            Some(DragMode::Range(t0)) => {
                if let Some(p) = resp.interact_pointer_pos() {
                    st.range = Some((t0, g.t(p.x.max(left))));
                }
            }
            None => {}
        }
    }
    if resp.drag_stopped() {
        st.drag = None;
        // A click-sized range is no range.
        if let Some((a, b)) = st.range
            && ((b - a) * g.opts.scale).abs() < 3.0
        {
            st.range = None;
        }
    }
    st.options.scroll_y = st
        .options
        .scroll_y
        .clamp(0.0, g.max_scroll(trace.lanes.len()));
    if resp.clicked() {
        return Some(Action::Select(st.hovered));
    }
    None
}
