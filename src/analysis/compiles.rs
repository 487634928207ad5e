//! Facts computed over a [`CompileTrace`]: which `model__N` folder each Dynamo graph went to,
//! why each model exists, the graphs on either side of a graph break, and the compile-time
//! spans as a timeline (the flame chart the timeline view draws).

use crate::model::compile::{Compile, CompileTrace, GraphBreak, Span};
pub use crate::model::compile::{ModelGraph, ModelLink};
use crate::model::timeline::{Lane, Task, Trace};
use std::collections::BTreeMap;

/// The trace prints annotations with strides and devices (`"f32[16, 16][16, 1]cpu"`), the
/// model folder's file without (`"f32[16, 16]"`): both are reduced to the second form, and
/// blank lines and trailing spaces are dropped.
pub fn normalize_graph(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            continue;
        }
        let mut rest = line;
        while let Some(q) = rest.find('"') {
            out.push_str(&rest[..=q]);
            rest = &rest[q + 1..];
            let Some(end) = rest.find('"') else {
                break;
            };
            out.push_str(strip_layout(&rest[..end]));
            out.push('"');
            rest = &rest[end + 1..];
        }
        out.push_str(rest);
        out.push('\n');
    }
    out
}

/// An AOT graph's inputs (`arg0_1: "f32[32, 16]", …`), annotations reduced, comments and
/// spaces dropped. Inductor's `fx_graph_readable.py` is the AOT graph after Inductor's own
/// graph passes, so bodies differ from the trace's `aot_*_graph`; the inputs do not (order
/// tells identical ones apart).
pub fn aot_signature(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in normalize_graph(text).lines() {
        let code = line.split("  #").next().unwrap_or(line).trim();
        if !inside {
            let Some(rest) = code.strip_prefix("def forward(") else {
                continue;
            };
            inside = true;
            out.push_str(rest);
        } else {
            out.push_str(code);
        }
        if code.ends_with("):") {
            break;
        }
    }
    out.retain(|c| !c.is_whitespace());
    // The multi-line form ends its last input with a comma.
    out.replace(",)", ")")
}

/// `f32[16, 16][16, 1]cpu` → `f32[16, 16]`; anything else unchanged.
fn strip_layout(ann: &str) -> &str {
    let Some(open) = ann.find('[') else {
        return ann;
    };
    if !ann[..open].bytes().all(|b| b.is_ascii_alphanumeric()) {
        return ann;
    }
    let Some(close) = ann[open..].find(']').map(|c| open + c + 1) else {
        return ann;
    };
    if ann[close..].starts_with('[') {
        &ann[..close]
    } else {
        ann
    }
}

/// Joins compile attempts to model folders by structure and order: a model's graph is the
/// first not-yet-joined Dynamo graph (AOT forward/inference graph for stock Inductor's folders)
/// in the trace with the same text (annotations reduced as in [`normalize_graph`]); identical
/// graphs are told apart by order. Each attempt logs its own graph, so a folder left by an
/// attempt that restarted joins that attempt. Models whose graph the trace does not hold stay
/// unjoined.
pub fn join_models(trace: &CompileTrace, models: &[ModelGraph]) -> Vec<ModelLink> {
    use crate::model::compile::GraphKind;
    struct Cand {
        compile: usize,
        attempt: u32,
        aot: bool,
        text: String,
    }
    let graphs: Vec<Cand> = trace
        .compiles
        .iter()
        .enumerate()
        .flat_map(|(i, c)| {
            c.graphs.iter().filter_map(move |g| {
                let (aot, text) = match g.kind {
                    GraphKind::DynamoOutput => (false, normalize_graph(&g.text)),
                    GraphKind::AotForward | GraphKind::AotInference => {
                        (true, aot_signature(&g.text))
                    }
                    _ => return None,
                };
                Some(Cand {
                    compile: i,
                    attempt: g.attempt,
                    aot,
                    text,
                })
            })
        })
        .collect();
    let mut used = vec![false; graphs.len()];
    let mut ordered: Vec<&ModelGraph> = models.iter().collect();
    ordered.sort_by(|a, b| (&a.run, a.number).cmp(&(&b.run, b.number)));
    let mut links = Vec::new();
    for m in ordered {
        let text = if m.aot {
            aot_signature(&m.text)
        } else {
            normalize_graph(&m.text)
        };
        if let Some(k) = (0..graphs.len())
            .find(|&k| !used[k] && graphs[k].aot == m.aot && graphs[k].text == text)
        {
            used[k] = true;
            links.push(ModelLink {
                compile: graphs[k].compile,
                attempt: graphs[k].attempt,
                model: m.name.clone(),
                run: m.run.clone(),
            });
        }
    }
    links
}

/// Where a compile's graph went, if joined: the folder of its last attempt that has one.
pub fn model_of(links: &[ModelLink], compile: usize) -> Option<&ModelLink> {
    links
        .iter()
        .filter(|l| l.compile == compile)
        .max_by_key(|l| l.attempt)
}

/// The folder attempt `attempt` of compile `compile` wrote, if joined.
pub fn model_of_attempt(links: &[ModelLink], compile: usize, attempt: u32) -> Option<&ModelLink> {
    links
        .iter()
        .rfind(|l| l.compile == compile && l.attempt == attempt)
}

/// The note above a model folder in the tree: `restarted attempt 0 of 2/1: <reason>` for a
/// folder a restarted attempt left, else why the compile happened ([`why`]).
pub fn model_note(trace: &CompileTrace, link: &ModelLink) -> String {
    let Some(c) = trace.compiles.get(link.compile) else {
        return String::new();
    };
    if link.attempt < c.attempt {
        let reason = c
            .restart_reason(link.attempt)
            .map(|r| crate::model::compile::first_line(&r).to_string())
            .unwrap_or_else(|| "no reason logged".into());
        return format!("restarted attempt {} of {}: {reason}", link.attempt, c.id());
    }
    why(trace, link.compile)
}

/// The graph break whose resume function compile `c` is (`torch_dynamo_resume_in_f_at_86`
/// resumes after the break at line 86 of an earlier compile).
pub fn break_before(trace: &CompileTrace, c: usize) -> Option<(usize, &GraphBreak)> {
    let compile = trace.compiles.get(c)?;
    let line = compile.resumes_at_line()?;
    let file = compile.location().map(|l| l.file);
    trace.compiles[..c]
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, p)| {
            p.breaks
                .iter()
                .find(|b| {
                    b.location.as_ref().is_some_and(|l| {
                        l.line == line && file.as_ref().is_none_or(|f| *f == l.file)
                    })
                })
                .map(|b| (i, b))
        })
}

/// The compile that resumes after the break `b` of compile `c`: the first later compile whose
/// resume function names the break's line.
pub fn compile_after_break(trace: &CompileTrace, c: usize, b: &GraphBreak) -> Option<usize> {
    let line = b.location.as_ref()?.line;
    (c + 1..trace.compiles.len()).find(|&i| {
        trace.compiles[i].resumes_at_line() == Some(line)
            && break_before(trace, i).is_some_and(|(p, _)| p == c)
    })
}

/// Why a compile happened, in one line: `graph break at models.py:121`, `recompile: …`,
/// `failed: …`, else `first compile of forward (models.py:41)`.
pub fn why(trace: &CompileTrace, c: usize) -> String {
    let Some(compile) = trace.compiles.get(c) else {
        return String::new();
    };
    if let Some(r) = &compile.recompile_reason {
        let first = r.lines().next().unwrap_or(r);
        return format!("recompile: {first}");
    }
    if let Some((_, b)) = break_before(trace, c) {
        let at = b.location.as_ref().map_or("?".into(), |l| l.short());
        return format!("graph break at {at}: {}", b.title());
    }
    let at = compile.location().map(|l| l.short()).unwrap_or_default();
    format!(
        "first compile of {} ({at})",
        compile.co_name().unwrap_or("?")
    )
}

/// The compile-time spans as a timeline: one lane per thread and nesting depth, a task per
/// span (type = span name, so phases share a colour), times in µs from the first span's start
/// (the writer's clock is epoch µs, unreadable on a ruler). Spans whose end never came reach
/// the last time seen and say so in their args.
pub fn flame(trace: &CompileTrace) -> Trace {
    flame_of(trace, None)
}

/// [`flame`] of the spans of one compile id only (all when `None`).
pub fn flame_of(trace: &CompileTrace, compile_id: Option<&str>) -> Trace {
    let spans: Vec<&Span> = trace
        .spans
        .iter()
        .filter(|s| compile_id.is_none_or(|id| s.compile_id.as_deref() == Some(id)))
        .collect();
    let last = spans
        .iter()
        .map(|s| s.end.unwrap_or(s.start))
        .fold(f64::NEG_INFINITY, f64::max);
    let first = spans.iter().map(|s| s.start).fold(f64::INFINITY, f64::min);
    let first = if first.is_finite() { first } else { 0.0 };
    let mut out = Trace::default();
    let mut lane_of: BTreeMap<(String, u16), u32> = BTreeMap::new();
    let mut keys: Vec<(&str, u16)> = spans.iter().map(|s| (s.thread.as_str(), s.depth)).collect();
    keys.sort();
    keys.dedup();
    let one_thread = keys.iter().all(|(t, _)| *t == keys[0].0);
    for (thread, depth) in keys {
        lane_of.insert((thread.to_string(), depth), out.lanes.len() as u32);
        out.lanes.push(Lane {
            name: if one_thread {
                format!("depth {depth}")
            } else {
                format!("{thread} · {depth}")
            },
            pid: thread.to_string(),
            tasks: Vec::new(),
            end: 0.0,
            max_dur: 0.0,
        });
    }
    let mut types: BTreeMap<String, u16> = BTreeMap::new();
    for s in &spans {
        let lane = lane_of[&(s.thread.clone(), s.depth)];
        let kind = match types.get(&s.name) {
            Some(&k) => k,
            None => {
                let k = out.types.len() as u16;
                out.types.push(s.name.clone());
                types.insert(s.name.clone(), k);
                k
            }
        };
        let mut task = task_of(s, lane, kind, last);
        task.ts -= first;
        out.tasks.push(task);
    }
    let tasks = &out.tasks;
    for (i, t) in tasks.iter().enumerate() {
        let lane = &mut out.lanes[t.lane as usize];
        lane.tasks.push(i as u32);
        lane.end = lane.end.max(t.end());
        lane.max_dur = lane.max_dur.max(t.dur);
    }
    for lane in &mut out.lanes {
        lane.tasks
            .sort_by(|&a, &b| tasks[a as usize].ts.total_cmp(&tasks[b as usize].ts));
    }
    out.events_by_ph.insert("B/E".into(), spans.len());
    if trace.unmatched_ends > 0 {
        out.incomplete = Some(format!("{} end events had no begin", trace.unmatched_ends));
    }
    out
}

fn task_of(s: &Span, lane: u32, kind: u16, last: f64) -> Task {
    let end = s.end.unwrap_or(last.max(s.start));
    let mut args = Vec::new();
    if let Some(id) = &s.compile_id {
        args.push(("compile_id".to_string(), id.clone().into()));
    }
    if let Some(cat) = &s.cat {
        args.push(("cat".to_string(), cat.clone().into()));
    }
    if s.end.is_none() {
        args.push(("unfinished".to_string(), true.into()));
    }
    Task {
        name: s.name.clone(),
        lane,
        ts: s.start,
        dur: end - s.start,
        kind,
        args,
        extra: Vec::new(),
    }
}

/// The `entire_frame_compile` span of compile `id`, in seconds: what the flame chart shows
/// for the compile's total (compare `compilation_metrics.entire_frame_compile_time_s`).
pub fn flame_total_s(trace: &CompileTrace, id: &str) -> Option<f64> {
    trace
        .spans
        .iter()
        .filter(|s| s.name == "entire_frame_compile" && s.compile_id.as_deref() == Some(id))
        .filter_map(|s| Some((s.end? - s.start) / 1e6))
        .reduce(f64::max)
}

/// Guards of `c` whose kind or text contain `query` (case-insensitive); all when empty.
pub fn search_guards<'a>(c: &'a Compile, query: &str) -> Vec<&'a crate::model::compile::Guard> {
    let q = query.to_lowercase();
    c.guards
        .iter()
        .filter(|g| {
            q.is_empty() || g.kind.to_lowercase().contains(&q) || g.text.to_lowercase().contains(&q)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_stripped_from_annotations_only() {
        assert_eq!(
            normalize_graph("  x: \"f32[10, 16][16, 1]cpu\" = a  \n\n y: \"Sym(s0)\" = \"a[b]\"\n"),
            "  x: \"f32[10, 16]\" = a\n y: \"Sym(s0)\" = \"a[b]\"\n"
        );
        assert_eq!(strip_layout("f32[s77, 4][4, 1]npu:0"), "f32[s77, 4]");
        let trace = "class <lambda>(torch.nn.Module):\n    def forward(\n        self,\n        arg0_1: \"f32[32, 16][16, 1]cpu\",  # PlainAOTInput(idx=0)\n    ):\n        x = 1";
        let file = "class <lambda>(torch.nn.Module):\n    def forward(self, arg0_1: \"f32[32, 16]\"):\n        y = 2";
        assert_eq!(aot_signature(trace), aot_signature(file));
        assert_eq!(aot_signature(file), "self,arg0_1:\"f32[32,16]\"):");
    }
}
