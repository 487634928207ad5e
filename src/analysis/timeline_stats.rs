//! Facts computed over a [`Trace`]: record/wait pairs (the dependencies a raw capture does not
//! write down), the arrows to draw, the per-stream/per-type summary the CLI prints, and the
//! statistics of a time range the user selects.

use crate::model::timeline::{Task, Trace};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// Producer/consumer task types paired on the same handle suffix, as torch_npu's
/// `align_trace`/`deadlock_check` tools pair them (docs/formats.md §2.4). NOTIFY_* are not paired.
const RECORDS: [(&str, PairKind); 2] = [
    ("EVENT_RECORD_", PairKind::Event),
    ("MEM_WRITE_VALUE_", PairKind::Mem),
];
const WAITS: [&str; 2] = ["EVENT_WAIT_", "MEM_WAIT_VALUE_"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PairKind {
    /// `EVENT_RECORD_h` → `EVENT_WAIT_h`.
    Event,
    /// `MEM_WRITE_VALUE_h` → `MEM_WAIT_VALUE_h`.
    Mem,
}

/// A record task and the wait task that depends on it.
#[derive(Debug, Clone)]
pub struct RecordWait {
    pub handle: String,
    pub kind: PairKind,
    pub record: u32,
    pub wait: u32,
}

#[derive(Debug, Clone, Default)]
pub struct Pairing {
    pub pairs: Vec<RecordWait>,
    /// Handles seen only as a record or only as a wait (e.g. the other half was cut off).
    pub unpaired_handles: usize,
}

fn handle_of(name: &str) -> Option<(&str, bool, PairKind)> {
    for (p, k) in RECORDS {
        if let Some(h) = name.strip_prefix(p) {
            return is_handle(h).then_some((h, true, k));
        }
    }
    for (p, (_, k)) in WAITS.iter().zip(RECORDS) {
        if let Some(h) = name.strip_prefix(p) {
            return is_handle(h).then_some((h, false, k));
        }
    }
    None
}

fn is_handle(h: &str) -> bool {
    !h.is_empty() && h.bytes().all(|b| b.is_ascii_digit())
}

/// Pairs records with waits by handle; when a handle repeats, the last occurrence wins (as in
/// the tools' dicts). Pairs are in order of their wait.
pub fn pair_record_wait(trace: &Trace) -> Pairing {
    let mut records: HashMap<&str, (u32, PairKind)> = HashMap::new();
    let mut waits: HashMap<&str, u32> = HashMap::new();
    for (i, t) in trace.tasks.iter().enumerate() {
        if let Some((h, is_record, kind)) = handle_of(&t.name) {
            if is_record {
                records.insert(h, (i as u32, kind));
            } else {
                waits.insert(h, i as u32);
            }
        }
    }
    let mut pairs: Vec<RecordWait> = waits
        .iter()
        .filter_map(|(h, &wait)| {
            records.get(h).map(|&(record, kind)| RecordWait {
                handle: h.to_string(),
                kind,
                record,
                wait,
            })
        })
        .collect();
    pairs.sort_by_key(|p| p.wait);
    let unpaired_handles = records.keys().filter(|h| !waits.contains_key(*h)).count()
        + waits.keys().filter(|h| !records.contains_key(*h)).count();
    Pairing {
        pairs,
        unpaired_handles,
    }
}

/// What an arrow in the view stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepKind {
    /// A flow event pair written in the file (`*.aligned.json`).
    Flow,
    /// A record/wait pair recomputed from task names (raw files).
    Pair(PairKind),
    /// A STREAM_ACTIVE task handing over to the stream it activates.
    Handover,
}

/// One arrow: from a point on a lane to a point on another.
#[derive(Debug, Clone)]
pub struct Dep {
    pub kind: DepKind,
    pub label: String,
    pub from_lane: u32,
    pub from_ts: f64,
    pub to_lane: u32,
    pub to_ts: f64,
}

/// The arrows to draw: the file's flows when it has any, else the recomputed pairs (record end
/// → wait start, where the tools put their flow events); plus STREAM_ACTIVE hand-overs.
pub fn dependencies(trace: &Trace, pairing: &Pairing) -> Vec<Dep> {
    let mut deps: Vec<Dep> = if trace.flows.is_empty() {
        pairing
            .pairs
            .iter()
            .map(|p| {
                let r = &trace.tasks[p.record as usize];
                let w = &trace.tasks[p.wait as usize];
                Dep {
                    kind: DepKind::Pair(p.kind),
                    label: format!("{} → {}", r.name, w.name),
                    from_lane: r.lane,
                    from_ts: r.end(),
                    to_lane: w.lane,
                    to_ts: w.ts,
                }
            })
            .collect()
    } else {
        trace
            .flows
            .iter()
            .map(|f| Dep {
                kind: DepKind::Flow,
                label: f.name.clone(),
                from_lane: f.from_lane,
                from_ts: f.from_ts,
                to_lane: f.to_lane,
                to_ts: f.to_ts,
            })
            .collect()
    };
    for h in stream_active(trace) {
        let from = &trace.tasks[h.task as usize];
        if let Some(to_lane) = trace.lane_by_name(&format!("stream{}", h.active_stream_id))
            && to_lane != from.lane
        {
            let to = &trace.lanes[to_lane as usize];
            let to_ts = to
                .tasks
                .first()
                .map_or(0.0, |&i| trace.tasks[i as usize].ts);
            deps.push(Dep {
                kind: DepKind::Handover,
                label: format!("{} activates {}", from.name, to.name),
                from_lane: from.lane,
                from_ts: from.end(),
                to_lane,
                to_ts,
            });
        }
    }
    deps
}

/// A STREAM_ACTIVE task and the stream it activates.
#[derive(Debug, Clone, Serialize)]
pub struct Handover {
    #[serde(skip)]
    pub task: u32,
    /// The tid holding the STREAM_ACTIVE task.
    pub stream: String,
    pub task_id: Option<i64>,
    pub active_stream_id: i64,
}

pub fn stream_active(trace: &Trace) -> Vec<Handover> {
    trace
        .tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| trace.kind_name(t).starts_with("STREAM_ACTIVE"))
        .filter_map(|(i, t)| {
            Some(Handover {
                task: i as u32,
                stream: trace.lanes[t.lane as usize].name.clone(),
                task_id: t.arg_i64("Task Id"),
                active_stream_id: t.arg_i64("Active Stream Id")?,
            })
        })
        .collect()
}

/// The file at a glance: what `fxray timeline --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// `ph:"X"` events.
    pub tasks: usize,
    /// The file's tids as written, in order of first appearance.
    pub streams: Vec<StreamSummary>,
    /// Task-type histogram.
    pub types: BTreeMap<String, usize>,
    /// Record/wait pairs recomputed from task names.
    pub pairs: usize,
    pub pair_kinds: PairCounts,
    /// Flow arrows written in the file (`s`/`f` pairs matched by id).
    pub flows: usize,
    pub unmatched_flow_events: usize,
    pub instants: usize,
    pub events_by_ph: BTreeMap<String, usize>,
    pub stream_active: Vec<Handover>,
    /// `ts`/`dur` are logical (order within a stream), not hardware time.
    pub logical_time: bool,
    /// What was not loaded, or `null` when the whole file was read.
    pub incomplete: Option<String>,
    pub quirks: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StreamSummary {
    pub name: String,
    pub tasks: usize,
    /// Largest `ts + dur`.
    pub end: f64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct PairCounts {
    pub event_record_wait: usize,
    pub mem_write_wait_value: usize,
    pub cross_stream: usize,
    pub same_stream: usize,
    pub unpaired_handles: usize,
}

pub fn summary(trace: &Trace, pairing: &Pairing) -> Summary {
    let mut types = BTreeMap::new();
    for t in &trace.tasks {
        *types.entry(trace.kind_name(t).to_string()).or_insert(0) += 1;
    }
    let mut kinds = PairCounts {
        unpaired_handles: pairing.unpaired_handles,
        ..Default::default()
    };
    for p in &pairing.pairs {
        match p.kind {
            PairKind::Event => kinds.event_record_wait += 1,
            PairKind::Mem => kinds.mem_write_wait_value += 1,
        }
        if trace.tasks[p.record as usize].lane == trace.tasks[p.wait as usize].lane {
            kinds.same_stream += 1;
        } else {
            kinds.cross_stream += 1;
        }
    }
    Summary {
        tasks: trace.tasks.len(),
        streams: trace
            .lanes
            .iter()
            .filter(|l| !l.tasks.is_empty())
            .map(|l| StreamSummary {
                name: l.name.clone(),
                tasks: l.tasks.len(),
                end: l.end,
            })
            .collect(),
        types,
        pairs: pairing.pairs.len(),
        pair_kinds: kinds,
        flows: trace.flows.len(),
        unmatched_flow_events: trace.unmatched_flow_events,
        instants: trace.instants.len(),
        events_by_ph: trace.events_by_ph.clone(),
        stream_active: stream_active(trace),
        logical_time: trace.logical_time,
        incomplete: trace.incomplete.clone(),
        quirks: trace.quirks.clone(),
    }
}

/// Count and duration statistics of a group of tasks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatRow {
    pub name: String,
    pub count: usize,
    pub total: f64,
    pub min: f64,
    pub max: f64,
}

impl StatRow {
    fn new(name: &str) -> Self {
        StatRow {
            name: name.to_string(),
            count: 0,
            total: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }

    fn add(&mut self, dur: f64) {
        self.count += 1;
        self.total += dur;
        self.min = self.min.min(dur);
        self.max = self.max.max(dur);
    }

    pub fn avg(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.total / self.count as f64
        }
    }
}

/// Statistics of the tasks overlapping `[t0, t1]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RangeStats {
    pub t0: f64,
    pub t1: f64,
    pub tasks: usize,
    /// By task type, most frequent first.
    pub by_type: Vec<StatRow>,
    /// By stream, in lane order.
    pub by_stream: Vec<StatRow>,
}

/// A task overlaps `[t0, t1]` when any part of it lies inside (a zero-length task counts when
/// its `ts` does).
pub fn overlaps(t: &Task, t0: f64, t1: f64) -> bool {
    t.ts <= t1 && t.end() >= t0
}

pub fn range_stats(trace: &Trace, t0: f64, t1: f64) -> RangeStats {
    let (t0, t1) = if t0 <= t1 { (t0, t1) } else { (t1, t0) };
    let mut by_type: Vec<StatRow> = trace.types.iter().map(|n| StatRow::new(n)).collect();
    let mut by_stream: Vec<StatRow> = trace.lanes.iter().map(|l| StatRow::new(&l.name)).collect();
    let mut n = 0;
    for t in trace.tasks.iter().filter(|t| overlaps(t, t0, t1)) {
        n += 1;
        by_type[t.kind as usize].add(t.dur);
        by_stream[t.lane as usize].add(t.dur);
    }
    by_type.retain(|r| r.count > 0);
    by_type.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    by_stream.retain(|r| r.count > 0);
    RangeStats {
        t0,
        t1,
        tasks: n,
        by_type,
        by_stream,
    }
}

/// Tasks whose name contains `query` (case-insensitive), in (lane, time) order.
pub fn search(trace: &Trace, query: &str) -> Vec<u32> {
    let q = query.trim().to_lowercase();
    if q.is_empty() {
        return Vec::new();
    }
    trace
        .lanes
        .iter()
        .flat_map(|l| l.tasks.iter().copied())
        .filter(|&i| trace.tasks[i as usize].name.to_lowercase().contains(&q))
        .collect()
}

/// A trace with what the view needs computed once: pairs and arrows.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    pub trace: Trace,
    pub pairing: Pairing,
    pub deps: Vec<Dep>,
}

impl Timeline {
    pub fn new(trace: Trace) -> Self {
        let pairing = pair_record_wait(&trace);
        let deps = dependencies(&trace, &pairing);
        Timeline {
            trace,
            pairing,
            deps,
        }
    }

    pub fn summary(&self) -> Summary {
        summary(&self.trace, &self.pairing)
    }
}
