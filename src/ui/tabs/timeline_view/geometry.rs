//! Where each lane and task is on screen this frame, and which task is under a point. Tasks of
//! a lane are sorted by start, so everything in a time window is found by binary search.

use super::options::ViewOptions;
use crate::analysis::timeline_stats::{Dep, Timeline};
use crate::model::timeline::{Lane, Trace};
use egui::{Pos2, Rect, pos2};

pub const RULER_H: f32 = 22.0;
pub const LANE_H: f32 = 30.0;
pub const BAR_H: f32 = 20.0;
pub const NAMES_W: f32 = 96.0;

/// The canvas split into the ruler, the lane names and the bars area.
#[derive(Debug, Clone, Copy)]
pub struct Geometry {
    pub canvas: Rect,
    pub opts: ViewOptions,
}

impl Geometry {
    /// Left edge of the bars area (time `opts.start`).
    pub fn left(&self) -> f32 {
        self.canvas.left() + NAMES_W
    }

    pub fn bars(&self) -> Rect {
        Rect::from_min_max(
            pos2(self.left(), self.canvas.top() + RULER_H),
            self.canvas.max,
        )
    }

    pub fn ruler(&self) -> Rect {
        Rect::from_min_max(
            pos2(self.left(), self.canvas.top()),
            pos2(self.canvas.right(), self.canvas.top() + RULER_H),
        )
    }

    pub fn width(&self) -> f32 {
        self.bars().width()
    }

    pub fn lane_top(&self, lane: u32) -> f32 {
        self.canvas.top() + RULER_H + lane as f32 * LANE_H - self.opts.scroll_y
    }

    pub fn lane_mid(&self, lane: u32) -> f32 {
        self.lane_top(lane) + LANE_H / 2.0
    }

    /// Largest useful `scroll_y` for `lanes` lanes.
    pub fn max_scroll(&self, lanes: usize) -> f32 {
        (lanes as f32 * LANE_H - (self.canvas.height() - RULER_H)).max(0.0)
    }

    pub fn x(&self, t: f64) -> f32 {
        self.opts.x(self.left(), t)
    }

    pub fn t(&self, x: f32) -> f64 {
        self.opts.t(self.left(), x)
    }

    pub fn visible(&self) -> (f64, f64) {
        self.opts.visible(self.width())
    }

    /// A task's bar (at least 1 point wide so it can be hovered).
    pub fn task_rect(&self, trace: &Trace, task: u32) -> Rect {
        let t = &trace.tasks[task as usize];
        let y = self.lane_mid(t.lane);
        let x0 = self.x(t.ts);
        let x1 = self.x(t.end()).max(x0 + 1.0);
        Rect::from_min_max(pos2(x0, y - BAR_H / 2.0), pos2(x1, y + BAR_H / 2.0))
    }

    /// An arrow's ends: from the edge of its start lane's bars to the edge of its end lane's.
    pub fn dep_ends(&self, d: &Dep) -> (Pos2, Pos2) {
        let down = d.from_lane < d.to_lane;
        let off = if down { BAR_H / 2.0 } else { -BAR_H / 2.0 };
        (
            pos2(self.x(d.from_ts), self.lane_mid(d.from_lane) + off),
            pos2(self.x(d.to_ts), self.lane_mid(d.to_lane) - off),
        )
    }

    /// The arrow passing within 4 points of `pos`, nearest first.
    pub fn dep_at(&self, tl: &Timeline, pos: Pos2) -> Option<usize> {
        if !self.bars().contains(pos) {
            return None;
        }
        tl.deps
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let (a, b) = self.dep_ends(d);
                (i, segment_distance(pos, a, b))
            })
            .filter(|(_, dist)| *dist <= 4.0)
            .min_by(|x, y| x.1.total_cmp(&y.1))
            .map(|(i, _)| i)
    }

    /// The lane at screen y.
    pub fn lane_at(&self, trace: &Trace, y: f32) -> Option<u32> {
        if y < self.canvas.top() + RULER_H {
            return None;
        }
        let k = ((y - self.canvas.top() - RULER_H + self.opts.scroll_y) / LANE_H).floor();
        (k >= 0.0 && (k as usize) < trace.lanes.len()).then_some(k as u32)
    }

    /// The task under `pos` (within 2 points horizontally, so thin bars can be hit).
    pub fn task_at(&self, trace: &Trace, pos: Pos2) -> Option<u32> {
        if !self.bars().contains(pos) {
            return None;
        }
        let lane = self.lane_at(trace, pos.y)?;
        if (pos.y - self.lane_mid(lane)).abs() > BAR_H / 2.0 {
            return None;
        }
        let slack = 2.0 / self.opts.scale;
        let t = self.t(pos.x);
        let l = &trace.lanes[lane as usize];
        let range = window(trace, l, t - slack, t + slack);
        // The nearest start wins among overlapping candidates.
        l.tasks[range]
            .iter()
            .copied()
            .filter(|&i| {
                let k = &trace.tasks[i as usize];
                k.ts <= t + slack && k.end() >= t - slack
            })
            .min_by(|&a, &b| {
                let da = (trace.tasks[a as usize].ts - t).abs();
                let db = (trace.tasks[b as usize].ts - t).abs();
                da.total_cmp(&db)
            })
    }
}

/// Positions in `lane.tasks` of the tasks that may overlap `[t0, t1]`.
pub fn window(trace: &Trace, lane: &Lane, t0: f64, t1: f64) -> std::ops::Range<usize> {
    let ts = |i: &u32| trace.tasks[*i as usize].ts;
    let a = lane.tasks.partition_point(|i| ts(i) < t0 - lane.max_dur);
    let b = lane.tasks.partition_point(|i| ts(i) <= t1);
    a..b.max(a)
}

fn segment_distance(p: Pos2, a: Pos2, b: Pos2) -> f32 {
    let ab = b - a;
    let len2 = ab.length_sq();
    let t = if len2 > 0.0 {
        ((p - a).dot(ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (a + ab * t - p).length()
}
