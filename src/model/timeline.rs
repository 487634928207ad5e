//! A Chrome trace-event file as fxray shows it: lanes (one per `tid`), tasks (`ph:"X"`), flow
//! arrows (`ph:"s"`/`"f"`) and instants. Built by `sources::trace_json`; dependencies and
//! statistics are computed in `analysis::timeline_stats`.
//!
//! For aclGraph captures (docs/formats.md §2) `ts`/`dur` are *logical*: they encode order within a
//! stream, not hardware time, and cross-stream values are not comparable.

use serde_json::Value;

/// One `ph:"X"` event.
#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    /// Index into [`Trace::lanes`].
    pub lane: u32,
    pub ts: f64,
    pub dur: f64,
    /// Index into [`Trace::types`] (`args["Task Type"]`, else the event's `cat`, else "").
    pub kind: u16,
    /// `args` as the writer printed them, in its order.
    pub args: Vec<(String, Value)>,
    /// Keys of the event we do not interpret (kept so the details show everything).
    pub extra: Vec<(String, Value)>,
}

impl Task {
    pub fn end(&self) -> f64 {
        self.ts + self.dur
    }

    pub fn arg(&self, key: &str) -> Option<&Value> {
        self.args.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn arg_i64(&self, key: &str) -> Option<i64> {
        self.arg(key).and_then(Value::as_i64)
    }
}

/// One stream: the tasks of one `tid`, ordered by (`ts`, position in the file).
#[derive(Debug, Clone)]
pub struct Lane {
    /// The `tid` as written (`stream316`).
    pub name: String,
    /// The `pid` of its first event (`2417765 aclGraph`).
    pub pid: String,
    pub tasks: Vec<u32>,
    /// Largest `ts + dur` of its tasks.
    pub end: f64,
    /// Longest task: lets the view find every task overlapping a time window by binary search.
    pub max_dur: f64,
}

/// A flow arrow from the file (`ph:"s"` → `ph:"f"` with the same `id`).
#[derive(Debug, Clone)]
pub struct Flow {
    pub name: String,
    pub id: String,
    pub from_lane: u32,
    pub from_ts: f64,
    pub to_lane: u32,
    pub to_ts: f64,
}

/// A `ph:"i"` instant.
#[derive(Debug, Clone)]
pub struct Instant {
    pub name: String,
    pub lane: u32,
    pub ts: f64,
}

/// Everything read from one trace file.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    pub tasks: Vec<Task>,
    /// In order of first appearance in the file (= the model's stream order for aclGraph).
    pub lanes: Vec<Lane>,
    /// Distinct task types, in order of first appearance.
    pub types: Vec<String>,
    pub flows: Vec<Flow>,
    /// Flow starts or ends without their other half.
    pub unmatched_flow_events: usize,
    pub instants: Vec<Instant>,
    /// Every event by `ph`, drawn or not (`X`, `s`, `f`, `i`, `M`, …).
    pub events_by_ph: std::collections::BTreeMap<String, usize>,
    /// Objects that were not trace events (no `ph`, not objects).
    pub skipped: usize,
    /// What was not loaded, in one line (a file cut mid-event, no closing bracket); `None`
    /// when the whole file was read.
    pub incomplete: Option<String>,
    /// Writer quirks that were tolerated (the `,\n]` of an empty last stream).
    pub quirks: Vec<String>,
    /// `ts`/`dur` encode order, not time (aclGraph captures and their aligned files).
    pub logical_time: bool,
}

impl Trace {
    pub fn kind_name(&self, t: &Task) -> &str {
        self.types.get(t.kind as usize).map_or("", String::as_str)
    }

    /// Smallest `ts` and largest end over all tasks (0..1 when empty).
    pub fn span(&self) -> (f64, f64) {
        let lo = self
            .tasks
            .iter()
            .map(|t| t.ts)
            .fold(f64::INFINITY, f64::min);
        let hi = self
            .lanes
            .iter()
            .map(|l| l.end)
            .fold(f64::NEG_INFINITY, f64::max);
        if lo.is_finite() && hi.is_finite() && hi > lo {
            (lo, hi)
        } else {
            (0.0, 1.0)
        }
    }

    pub fn lane_by_name(&self, name: &str) -> Option<u32> {
        self.lanes
            .iter()
            .position(|l| l.name == name)
            .map(|i| i as u32)
    }
}
