//! Lenient reader of Chrome trace-event JSON: the raw aclGraph capture written by CANN's
//! `aclmdlRIDebugJsonPrint`, torch_npu's `*.aligned.json`, and any other trace (an array or
//! `{"traceEvents": [...]}`).
//!
//! The writer has quirks a strict parser rejects (docs/formats.md §2.2): a trailing `,\n]` when the
//! last stream is empty, and a file cut mid-line while it is still being written. We read the
//! array one event at a time, keep every complete event and say what was not loaded.

use crate::error::{Error, Result};
use crate::model::timeline::{Flow, Instant, Lane, Task, Trace};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

/// Reads and parses a trace file.
pub fn load(path: &Path) -> Result<Trace> {
    // The same cap as text files: a trace bigger than this is not a capture of one graph.
    let bytes =
        crate::sources::read::read_bytes_limited(path, crate::sources::read::MAX_TEXT_BYTES)?;
    parse(&bytes).map_err(|e| Error::user(format!("{}: {e}", path.display())))
}

/// Why a file is not a trace at all (anything less is read up to where it stops).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NotATrace {
    #[error("empty file: no trace events")]
    Empty,
    #[error("a JSON object without a \"traceEvents\" array")]
    NoEvents,
    #[error("not a trace: expected a JSON array or object")]
    NotJson,
}

/// Parses trace JSON. Fails only when nothing at all looks like a trace; a partial file
/// loads what is complete and says the rest in [`Trace::incomplete`].
pub fn parse(bytes: &[u8]) -> std::result::Result<Trace, NotATrace> {
    let text = String::from_utf8_lossy(bytes);
    let s = text.as_bytes();
    let mut b = Builder::default();
    let start = skip_ws(s, 0);
    let array_at = match s.get(start) {
        None => return Err(NotATrace::Empty),
        Some(b'[') => start,
        Some(b'{') => match find_trace_events(s) {
            Some(i) => i,
            None => return Err(NotATrace::NoEvents),
        },
        Some(_) => return Err(NotATrace::NotJson),
    };
    read_array(s, array_at + 1, &mut b);
    if matches!(text, std::borrow::Cow::Owned(_)) {
        b.trace
            .quirks
            .push("invalid UTF-8 replaced with U+FFFD".into());
    }
    Ok(b.finish())
}

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while i < s.len() && s[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Position of the `[` that opens `"traceEvents"`.
fn find_trace_events(s: &[u8]) -> Option<usize> {
    let key = b"\"traceEvents\"";
    let k = s.windows(key.len()).position(|w| w == key)?;
    let mut i = skip_ws(s, k + key.len());
    if s.get(i) != Some(&b':') {
        return None;
    }
    i = skip_ws(s, i + 1);
    (s.get(i) == Some(&b'[')).then_some(i)
}

/// Reads events from `s[i..]` (just after `[`) until `]`, the end or a broken event.
fn read_array(s: &[u8], mut i: usize, b: &mut Builder) {
    let mut after_comma = false;
    loop {
        i = skip_ws(s, i);
        match s.get(i) {
            None => {
                b.trace.incomplete = Some(format!(
                    "the file ends without its closing `]` after {} complete events (still being written?)",
                    b.events
                ));
                return;
            }
            Some(b']') => {
                if after_comma {
                    b.trace.quirks.push(
                        "trailing comma before the closing `]` (the writer's empty last stream)"
                            .into(),
                    );
                }
                return;
            }
            Some(_) => {}
        }
        let mut stream = serde_json::Deserializer::from_slice(&s[i..]).into_iter::<RawEvent>();
        match stream.next() {
            Some(Ok(ev)) => {
                i += stream.byte_offset();
                b.push(ev);
            }
            Some(Err(e)) if e.is_eof() => {
                let line = s[..i].iter().filter(|&&c| c == b'\n').count() + 1;
                b.trace.incomplete = Some(format!(
                    "the file is cut in the middle of an event at line {line} (byte {i} of {}): loaded the {} complete events before it",
                    s.len(),
                    b.events
                ));
                return;
            }
            Some(Err(e)) => {
                // A damaged event: skip to the next line that starts an object, if any.
                b.bad(s, i, &e.to_string());
                match next_object_line(s, i) {
                    Some(j) => {
                        i = j;
                        after_comma = false;
                        continue;
                    }
                    None => return,
                }
            }
            None => return,
        }
        i = skip_ws(s, i);
        match s.get(i) {
            Some(b',') => {
                i += 1;
                after_comma = true;
            }
            Some(b']') => return,
            None => {
                b.trace.incomplete = Some(format!(
                    "the file ends without its closing `]` after {} complete events (still being written?)",
                    b.events
                ));
                return;
            }
            Some(_) => {
                b.bad(s, i, "expected `,` or `]` after an event");
                match next_object_line(s, i) {
                    Some(j) => {
                        i = j;
                        after_comma = false;
                    }
                    None => return,
                }
            }
        }
    }
}

/// Start of the next line whose first non-blank character is `{`: an event, in the raw
/// writer's one-event-per-line layout and in the aligned file's `indent=2` layout alike.
fn next_object_line(s: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while let Some(n) = s[i..].iter().position(|&c| c == b'\n') {
        i += n + 1;
        let mut j = i;
        while j < s.len() && (s[j] == b' ' || s[j] == b'\t' || s[j] == b'\r') {
            j += 1;
        }
        if s.get(j) == Some(&b'{') {
            return Some(j);
        }
    }
    None
}

/// One trace event as written. Known keys are typed; `pid`/`tid`/`id` may be strings or
/// numbers; everything else is kept.
#[derive(Default)]
struct RawEvent {
    name: String,
    ph: String,
    cat: Option<String>,
    pid: String,
    tid: String,
    ts: Option<f64>,
    dur: Option<f64>,
    id: Option<String>,
    args: Vec<(String, Value)>,
    extra: Vec<(String, Value)>,
    not_an_object: bool,
}

fn value_to_string(v: Value) -> String {
    match v {
        Value::String(s) => s,
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

impl<'de> serde::Deserialize<'de> for RawEvent {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(EventVisitor)
    }
}

struct EventVisitor;

impl<'de> Visitor<'de> for EventVisitor {
    type Value = RawEvent;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a trace event object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<RawEvent, A::Error> {
        let mut ev = RawEvent::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "name" => ev.name = value_to_string(map.next_value()?),
                "ph" => ev.ph = value_to_string(map.next_value()?),
                "cat" => ev.cat = Some(value_to_string(map.next_value()?)),
                "pid" => ev.pid = value_to_string(map.next_value()?),
                "tid" => ev.tid = value_to_string(map.next_value()?),
                "ts" => ev.ts = map.next_value::<Value>()?.as_f64(),
                "dur" => ev.dur = map.next_value::<Value>()?.as_f64(),
                "id" => ev.id = Some(value_to_string(map.next_value()?)),
                "args" => ev.args = map.next_value::<OrderedMap>()?.0,
                _ => {
                    let v = map.next_value()?;
                    ev.extra.push((key, v));
                }
            }
        }
        Ok(ev)
    }

    // Anything that is not an object is skipped, but must still be consumed.
    fn visit_seq<A: de::SeqAccess<'de>>(
        self,
        mut seq: A,
    ) -> std::result::Result<RawEvent, A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        Ok(RawEvent {
            not_an_object: true,
            ..Default::default()
        })
    }
    fn visit_str<E: de::Error>(self, _: &str) -> std::result::Result<RawEvent, E> {
        Ok(not_object())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> std::result::Result<RawEvent, E> {
        Ok(not_object())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> std::result::Result<RawEvent, E> {
        Ok(not_object())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> std::result::Result<RawEvent, E> {
        Ok(not_object())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> std::result::Result<RawEvent, E> {
        Ok(not_object())
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<RawEvent, E> {
        Ok(not_object())
    }
}

fn not_object() -> RawEvent {
    RawEvent {
        not_an_object: true,
        ..Default::default()
    }
}

/// A JSON object's entries in the order written (serde_json's `Map` sorts them).
struct OrderedMap(Vec<(String, Value)>);

impl<'de> serde::Deserialize<'de> for OrderedMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedMap;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<OrderedMap, A::Error> {
                let mut v = Vec::new();
                while let Some(e) = map.next_entry::<String, Value>()? {
                    v.push(e);
                }
                Ok(OrderedMap(v))
            }
            fn visit_unit<E: de::Error>(self) -> std::result::Result<OrderedMap, E> {
                Ok(OrderedMap(Vec::new()))
            }
        }
        d.deserialize_any(V)
    }
}

/// Turns events into lanes, tasks and flows as they are read.
#[derive(Default)]
struct Builder {
    trace: Trace,
    events: usize,
    lane_of: HashMap<String, u32>,
    type_of: HashMap<String, u16>,
    /// Flow starts waiting for their end, by id.
    open_flows: HashMap<String, Vec<(String, u32, f64)>>,
    /// Flow ends seen before their start, by id.
    early_ends: HashMap<String, Vec<(u32, f64)>>,
    /// Damaged events skipped, and where the first one was.
    bad: usize,
    first_bad: Option<String>,
}

impl Builder {
    fn bad(&mut self, s: &[u8], at: usize, why: &str) {
        self.bad += 1;
        self.trace.skipped += 1;
        if self.first_bad.is_none() {
            let line = s[..at].iter().filter(|&&c| c == b'\n').count() + 1;
            self.first_bad = Some(format!("line {line}: {why}"));
        }
    }

    fn lane(&mut self, tid: &str, pid: &str) -> u32 {
        if let Some(&l) = self.lane_of.get(tid) {
            return l;
        }
        let l = self.trace.lanes.len() as u32;
        self.trace.lanes.push(Lane {
            name: tid.to_string(),
            pid: pid.to_string(),
            tasks: Vec::new(),
            end: f64::NEG_INFINITY,
            max_dur: 0.0,
        });
        self.lane_of.insert(tid.to_string(), l);
        l
    }

    fn kind(&mut self, name: &str) -> u16 {
        if let Some(&k) = self.type_of.get(name) {
            return k;
        }
        let k = self.trace.types.len().min(u16::MAX as usize) as u16;
        if (k as usize) == self.trace.types.len() {
            self.trace.types.push(name.to_string());
        }
        self.type_of.insert(name.to_string(), k);
        k
    }

    fn push(&mut self, ev: RawEvent) {
        if ev.not_an_object || ev.ph.is_empty() {
            self.trace.skipped += 1;
            return;
        }
        self.events += 1;
        *self.trace.events_by_ph.entry(ev.ph.clone()).or_default() += 1;
        if ev.pid.ends_with("aclGraph") || ev.args.iter().any(|(k, _)| k == "Task Type") {
            self.trace.logical_time = true;
        }
        let ts = ev.ts.unwrap_or(0.0);
        match ev.ph.as_str() {
            "X" | "B" => {
                let lane = self.lane(&ev.tid, &ev.pid);
                let type_name = ev
                    .args
                    .iter()
                    .find(|(k, _)| k == "Task Type")
                    .and_then(|(_, v)| v.as_str().map(str::to_string))
                    .or(ev.cat.clone())
                    .unwrap_or_default();
                let kind = self.kind(&type_name);
                let mut extra = ev.extra;
                if let Some(c) = ev.cat {
                    extra.push(("cat".into(), Value::String(c)));
                }
                self.trace.tasks.push(Task {
                    name: ev.name,
                    lane,
                    ts,
                    dur: ev.dur.unwrap_or(0.0).max(0.0),
                    kind,
                    args: ev.args,
                    extra,
                });
            }
            "s" => {
                let lane = self.lane(&ev.tid, &ev.pid);
                let id = ev.id.unwrap_or_default();
                if let Some((to_lane, to_ts)) = self.early_ends.get_mut(&id).and_then(Vec::pop) {
                    self.trace.flows.push(Flow {
                        name: ev.name,
                        id,
                        from_lane: lane,
                        from_ts: ts,
                        to_lane,
                        to_ts,
                    });
                } else {
                    self.open_flows
                        .entry(id)
                        .or_default()
                        .push((ev.name, lane, ts));
                }
            }
            "f" | "t" => {
                let lane = self.lane(&ev.tid, &ev.pid);
                let id = ev.id.unwrap_or_default();
                match self
                    .open_flows
                    .get_mut(&id)
                    .and_then(|v| (!v.is_empty()).then(|| v.remove(0)))
                {
                    Some((name, from_lane, from_ts)) => self.trace.flows.push(Flow {
                        name,
                        id,
                        from_lane,
                        from_ts,
                        to_lane: lane,
                        to_ts: ts,
                    }),
                    None => self.early_ends.entry(id).or_default().push((lane, ts)),
                }
            }
            "i" | "I" => {
                let lane = self.lane(&ev.tid, &ev.pid);
                self.trace.instants.push(Instant {
                    name: ev.name,
                    lane,
                    ts,
                });
            }
            _ => {}
        }
    }

    fn finish(mut self) -> Trace {
        if let Some(first) = &self.first_bad {
            let skipped = format!(
                "skipped {} damaged event{} (first at {first})",
                self.bad,
                if self.bad == 1 { "" } else { "s" }
            );
            self.trace.incomplete = Some(match self.trace.incomplete.take() {
                Some(rest) => format!("{skipped}; {rest}"),
                None => skipped,
            });
        }
        let t = &mut self.trace;
        t.unmatched_flow_events = self.open_flows.values().map(Vec::len).sum::<usize>()
            + self.early_ends.values().map(Vec::len).sum::<usize>();
        for (i, task) in t.tasks.iter().enumerate() {
            let lane = &mut t.lanes[task.lane as usize];
            lane.tasks.push(i as u32);
            lane.end = lane.end.max(task.end());
            lane.max_dur = lane.max_dur.max(task.dur);
        }
        let tasks = &t.tasks;
        for lane in &mut t.lanes {
            // Stable: equal `ts` keep file order.
            lane.tasks
                .sort_by(|&a, &b| tasks[a as usize].ts.total_cmp(&tasks[b as usize].ts));
            if !lane.end.is_finite() {
                lane.end = 0.0;
            }
        }
        self.trace
    }
}
