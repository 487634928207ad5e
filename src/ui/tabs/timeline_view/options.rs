//! Where the time axis is: the time at the canvas's left edge and the scale. Kept apart from
//! the data so zoom and pan are plain arithmetic (and testable).

/// Screen ↔ time mapping of the canvas.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ViewOptions {
    /// Time at the left edge of the bars area.
    pub start: f64,
    /// Points per time unit.
    pub scale: f64,
    /// Lanes scrolled up by this many points (when they do not all fit).
    pub scroll_y: f32,
}

impl Default for ViewOptions {
    fn default() -> Self {
        ViewOptions {
            start: 0.0,
            scale: 1.0,
            scroll_y: 0.0,
        }
    }
}

/// Never zoom in further than this many points per unit (a 0.5-long NOP is 2,000 px wide).
const MAX_SCALE: f64 = 4000.0;

impl ViewOptions {
    /// Screen x of time `t`, the bars area starting at `left`.
    pub fn x(&self, left: f32, t: f64) -> f32 {
        left + ((t - self.start) * self.scale) as f32
    }

    /// Time at screen x.
    pub fn t(&self, left: f32, x: f32) -> f64 {
        self.start + (x - left) as f64 / self.scale
    }

    /// Shows `[t0, t1]` across `width` points, with a small margin.
    pub fn show_range(&mut self, t0: f64, t1: f64, width: f32) {
        let span = (t1 - t0).abs().max(1e-6);
        let margin = span * 0.02;
        self.scale = (width.max(1.0) as f64 / (span + 2.0 * margin)).min(MAX_SCALE);
        self.start = t0.min(t1) - margin;
    }

    /// Zooms by `factor` (> 1 zooms in), keeping the time under screen x `anchor` fixed.
    pub fn zoom_at(&mut self, left: f32, anchor: f32, factor: f64, min_scale: f64) {
        let t = self.t(left, anchor);
        self.scale = (self.scale * factor).clamp(min_scale, MAX_SCALE);
        self.start = t - (anchor - left) as f64 / self.scale;
    }

    /// Moves the view so the content follows a drag of `dx` points.
    pub fn pan(&mut self, dx: f32) {
        self.start -= dx as f64 / self.scale;
    }

    /// Time range visible across `width` points.
    pub fn visible(&self, width: f32) -> (f64, f64) {
        (self.start, self.start + width as f64 / self.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zoom_keeps_the_time_under_the_cursor() {
        let mut o = ViewOptions::default();
        o.show_range(0.0, 1000.0, 500.0);
        let before = o.t(100.0, 350.0);
        o.zoom_at(100.0, 350.0, 4.0, 1e-9);
        assert!((o.t(100.0, 350.0) - before).abs() < 1e-9);
        let (a, b) = o.visible(500.0);
        assert!(b - a < 300.0, "zoomed in: {a}..{b}");
    }

    #[test]
    fn pan_moves_content_with_the_drag() {
        let mut o = ViewOptions {
            start: 10.0,
            scale: 2.0,
            scroll_y: 0.0,
        };
        o.pan(20.0);
        assert_eq!(o.start, 0.0);
    }
}
