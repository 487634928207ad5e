//! `chromium_event` payloads (one Chrome trace event each) paired into [`Span`]s: a `B` opens a
//! span on its thread, the next `E` of the same name closes it; `X` events are complete.

use crate::model::compile::Span;
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Deserialize)]
struct Event {
    name: String,
    ts: f64,
    ph: String,
    #[serde(default)]
    dur: Option<f64>,
    #[serde(default)]
    cat: Option<String>,
    #[serde(default)]
    pid: Option<serde_json::Value>,
    #[serde(default)]
    tid: Option<serde_json::Value>,
    #[serde(default)]
    args: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Pairs begin/end events per thread as they come.
#[derive(Default)]
pub struct SpanBuilder {
    pub spans: Vec<Span>,
    /// Open spans per thread (indices into `spans`).
    open: HashMap<String, Vec<usize>>,
    pub unmatched_ends: usize,
}

/// A `chromium_event` payload that is not a trace event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("chromium_event: {0}")]
pub struct NotAnEvent(pub String);

impl SpanBuilder {
    /// Adds one event's JSON payload; `Err` says why it was not an event.
    pub fn add(&mut self, payload: &str) -> Result<(), NotAnEvent> {
        let ev: Event = serde_json::from_str(payload).map_err(|e| NotAnEvent(e.to_string()))?;
        let id = |v: &Option<serde_json::Value>| match v {
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(v) => v.to_string(),
            None => "0".into(),
        };
        let thread = format!("{}/{}", id(&ev.pid), id(&ev.tid));
        let compile_id = ev
            .args
            .as_ref()
            .and_then(|a| a.get("compile_id"))
            .and_then(|v| v.as_str())
            .map(str::to_string);
        let stack = self.open.entry(thread.clone()).or_default();
        match ev.ph.as_str() {
            "B" => {
                stack.push(self.spans.len());
                self.spans.push(Span {
                    name: ev.name,
                    compile_id,
                    thread,
                    start: ev.ts,
                    end: None,
                    depth: (stack.len() - 1) as u16,
                    cat: ev.cat,
                });
            }
            "E" => {
                // Close the innermost open span of that name. Spans opened inside it stay open:
                // torch's spans are not always nested (`async_compile.wait` may end after its
                // parent), and a lost end must not close the others.
                match stack.iter().rposition(|&i| self.spans[i].name == ev.name) {
                    Some(pos) => {
                        let i = stack.remove(pos);
                        self.spans[i].end = Some(ev.ts);
                        if self.spans[i].compile_id.is_none() {
                            self.spans[i].compile_id = compile_id;
                        }
                    }
                    None => self.unmatched_ends += 1,
                }
            }
            "X" => {
                self.spans.push(Span {
                    name: ev.name,
                    compile_id,
                    thread,
                    start: ev.ts,
                    end: Some(ev.ts + ev.dur.unwrap_or(0.0)),
                    depth: stack.len() as u16,
                    cat: ev.cat,
                });
            }
            _ => {}
        }
        Ok(())
    }
}
