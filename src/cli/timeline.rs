//! `fxray timeline FILE [--json]`: what an aclGraph capture (raw `*.json` or `*.aligned.json`)
//! or any Chrome trace holds: streams, tasks per stream, task types, record/wait pairs, flows
//! and the end time per stream.

use super::emit;
use crate::analysis::timeline_stats::{Summary, Timeline};
use crate::error::Result;
use crate::sources::trace_json;
use std::fmt::Write;
use std::path::Path;

pub fn run(path: &Path, json: bool) -> Result<()> {
    let tl = Timeline::new(trace_json::load(path)?);
    let summary = tl.summary();
    let text = if json {
        super::json_text(&summary)?
    } else {
        render(path, &summary)
    };
    emit(&text, None)
}

fn render(path: &Path, s: &Summary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}", path.display());
    let _ = writeln!(
        out,
        "{} tasks on {} streams{}",
        s.tasks,
        s.streams.len(),
        if s.logical_time {
            " · ts/dur are logical (order within a stream), not hardware time"
        } else {
            ""
        }
    );
    if let Some(why) = &s.incomplete {
        let _ = writeln!(out, "incomplete: {why}");
    }
    for q in &s.quirks {
        let _ = writeln!(out, "note: {q}");
    }
    let _ = writeln!(out, "\nstreams:");
    let w = s.streams.iter().map(|x| x.name.len()).max().unwrap_or(0);
    for st in &s.streams {
        let _ = writeln!(
            out,
            "  {:w$}  {:>7} tasks  end {}",
            st.name, st.tasks, st.end
        );
    }
    let _ = writeln!(out, "\ntask types:");
    let w = s.types.keys().map(String::len).max().unwrap_or(0);
    let mut types: Vec<_> = s.types.iter().collect();
    types.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    for (name, n) in types {
        let name = if name.is_empty() { "(none)" } else { name };
        let _ = writeln!(out, "  {name:w$}  {n:>7}");
    }
    let k = &s.pair_kinds;
    let _ = writeln!(
        out,
        "\nrecord/wait pairs: {} ({} event, {} memory; {} cross-stream, {} same-stream; {} unpaired handles)",
        s.pairs,
        k.event_record_wait,
        k.mem_write_wait_value,
        k.cross_stream,
        k.same_stream,
        k.unpaired_handles
    );
    let _ = writeln!(out, "flows: {}", s.flows);
    for h in &s.stream_active {
        let _ = writeln!(
            out,
            "STREAM_ACTIVE: {} task {} activates stream{}",
            h.stream,
            h.task_id.map_or("?".into(), |t| t.to_string()),
            h.active_stream_id
        );
    }
    out
}
