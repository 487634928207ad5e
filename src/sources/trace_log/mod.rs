//! Torch's structured trace log (`tlparse/dedicated_log_torch_trace_*.log`, also what
//! `TORCH_TRACE=DIR` writes): read line by line, never whole, into a
//! [`CompileTrace`](crate::model::compile::CompileTrace).
//!
//! Each event is a header line (glog prefix + JSON metadata) followed, when the metadata has
//! `has_payload`, by its payload as tab-indented lines. The reader is lenient like the capture
//! reader: a damaged line is reported with its number and skipped (with its payload), a cut
//! file is read up to the cut and says so, CRLF line ends are accepted, and kinds fxray does
//! not interpret are counted and kept.

mod envelope;
mod find;
mod guarded;
pub mod models;
mod payloads;
mod resume;
mod spans;

use crate::error::{Error, Result};
use crate::model::compile::{Artifact, Compile, CompileTrace, GraphKind, Guard};
use envelope::Envelope;
use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;

pub use find::{find_around, find_beside};

/// Damaged lines reported one by one; the rest are counted.
const MAX_PROBLEMS: usize = 200;

/// The events module inference reads (`pipeline::module_guards`): the Dynamo graph a model
/// folder is joined by, and the guard tree naming the modules.
const FOR_MODULES: &[&str] = &["dynamo_output_graph", "dynamo_cpp_guards_str"];

/// Reads a trace log file.
pub fn load(path: &Path) -> Result<CompileTrace> {
    load_kinds(path, None)
}

/// Reads of a trace log only what module inference needs (`FOR_MODULES`): every other
/// payload is skipped unread, so a log of hundreds of MB costs a pass over its lines, not its
/// events kept in memory.
pub fn load_for_modules(path: &Path) -> Result<CompileTrace> {
    load_kinds(path, Some(FOR_MODULES))
}

fn load_kinds(path: &Path, keep: Option<&'static [&'static str]>) -> Result<CompileTrace> {
    let file = crate::sources::vfs::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::IsADirectory => Error::user(format!(
            "{}: is a folder, expected a trace log",
            path.display()
        )),
        _ => Error::io(path, &e),
    })?;
    let reader = std::io::BufReader::with_capacity(1 << 18, file);
    let mut trace = parse_kinds(reader, keep).map_err(|e| Error::io(path, &e))?;
    trace.rank_in_name = path
        .file_name()
        .and_then(|n| rank_in_name(&n.to_string_lossy()));
    if trace.rank.is_none() {
        trace.rank = trace.rank_in_name;
    }
    Ok(trace)
}

/// `dedicated_log_torch_trace_rank_1_3i9_7a5x.log` → 1.
pub fn rank_in_name(name: &str) -> Option<u32> {
    let rest = name.split_once("_rank_")?.1;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Reads a trace log from any reader. Only an I/O error fails; bad content is reported in the
/// result.
pub fn parse(reader: impl BufRead) -> std::io::Result<CompileTrace> {
    parse_kinds(reader, None)
}

/// [`parse`], keeping only the events of the kinds `keep` lists when it is given (the others
/// are counted).
fn parse_kinds(
    mut reader: impl BufRead,
    keep: Option<&'static [&'static str]>,
) -> std::io::Result<CompileTrace> {
    let mut st = State {
        keep,
        ..State::default()
    };
    let mut buf = Vec::with_capacity(1 << 12);
    let mut lineno = 0usize;
    let mut last_complete = true;
    // Whether the last non-payload line was a header that parsed.
    let mut last_header_ok = true;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf)?;
        if n == 0 {
            break;
        }
        lineno += 1;
        st.trace.bytes += n as u64;
        last_complete = buf.last() == Some(&b'\n');
        let mut line = &buf[..];
        while let Some((&b'\n' | &b'\r', rest)) = line.split_last() {
            line = rest;
        }
        if let Some(rest) = line.strip_prefix(b"\t") {
            if let Some(p) = st.pending.as_mut() {
                p.payload.push_str(&String::from_utf8_lossy(rest));
                p.payload.push('\n');
            }
            // Payload lines of a damaged header go with it.
            continue;
        }
        if line.is_empty() {
            continue;
        }
        st.finish();
        let text = String::from_utf8_lossy(line);
        match envelope::parse(&text) {
            Ok(env) => {
                last_header_ok = true;
                st.start(env, lineno)
            }
            Err(why) => {
                last_header_ok = false;
                st.problem(lineno, why.to_string())
            }
        }
    }
    st.trace.lines = lineno;
    // A last line without its newline is complete when it reads whole: a header that parsed
    // and expects no payload, or a payload whose md5 is the header's.
    let cut = !last_complete
        && match st.pending.as_ref() {
            Some(p) => !p.md5_matches(),
            None => !last_header_ok,
        };
    if cut {
        st.trace.cut = true;
        let what = st
            .pending
            .as_ref()
            .map_or("a header line".to_string(), |p| {
                format!("the payload of `{}` (line {})", p.env.kind, p.line)
            });
        st.trace.stopped = Some(format!(
            "the file ends mid-line at line {lineno}, inside {what}: read up to there"
        ));
        // The cut payload is not a checksum problem: the stop says it.
        if let Some(p) = st.pending.as_mut() {
            p.env.payload_md5 = None;
        }
    }
    st.finish();
    let mut trace = st.trace;
    trace.spans = st.spans.spans;
    trace.unmatched_ends = st.spans.unmatched_ends;
    resume::infer_breaks(&mut trace);
    Ok(trace)
}

/// An event whose payload is still being read.
struct Pending {
    env: Envelope,
    line: usize,
    payload: String,
}

impl Pending {
    /// The payload as torch hashed it: its lines joined by `\n`, with no newline at the end.
    fn hashed(&self) -> &str {
        self.payload.strip_suffix('\n').unwrap_or(&self.payload)
    }

    /// `None` when the header gave no md5 to check.
    fn md5(&self) -> Option<(String, &str)> {
        let want = self.env.payload_md5.as_deref()?;
        use md5::Digest;
        let got = md5::Md5::digest(self.hashed().as_bytes());
        let hex: String = got.iter().map(|b| format!("{b:02x}")).collect();
        Some((hex, want))
    }

    fn md5_matches(&self) -> bool {
        self.md5()
            .is_none_or(|(got, want)| got.eq_ignore_ascii_case(want))
    }
}

/// (compiled autograd id, frame id, frame compile id).
type CompileKey = (Option<u32>, Option<u32>, Option<u32>);

#[derive(Default)]
struct State {
    trace: CompileTrace,
    pending: Option<Pending>,
    by_id: HashMap<CompileKey, usize>,
    spans: spans::SpanBuilder,
    /// The kinds kept, when not all are: the others' payload lines are dropped unread.
    keep: Option<&'static [&'static str]>,
}

impl State {
    fn problem(&mut self, line: usize, why: impl Into<String>) {
        if self.trace.problems.len() < MAX_PROBLEMS {
            self.trace.problems.push((line, why.into()));
        } else {
            self.trace.more_problems += 1;
        }
    }

    fn start(&mut self, env: Envelope, line: usize) {
        *self.trace.kinds.entry(env.kind.clone()).or_default() += 1;
        if self.keep.is_some_and(|k| !k.contains(&env.kind.as_str())) {
            return;
        }
        if self.trace.pid.is_none() {
            self.trace.pid = env.pid;
        }
        if let Some(r) = env.rank {
            if self.trace.rank.is_none() {
                self.trace.rank = Some(r);
            }
            if !self.trace.ranks_in_records.contains(&r) {
                self.trace.ranks_in_records.push(r);
            }
        }
        if env.has_payload {
            self.pending = Some(Pending {
                env,
                line,
                payload: String::new(),
            });
        } else {
            self.apply(env, line, String::new());
        }
    }

    fn finish(&mut self) {
        if let Some(p) = self.pending.take() {
            // A partial read (for module inference) is not the log's health check, and hashing
            // the guard tree of a 415-layer model was a tenth of it.
            if self.keep.is_none()
                && let Some((got, want)) = p.md5()
                && !got.eq_ignore_ascii_case(want)
            {
                self.trace.md5_mismatches += 1;
                self.problem(
                    p.line,
                    format!(
                        "the payload of `{}` does not match its md5 (header {want}, payload {got}): \
                         lines were lost or changed",
                        p.env.kind
                    ),
                );
            }
            self.apply(p.env, p.line, p.payload);
        }
    }

    /// The compile an event belongs to, created on first sight; `None` for events outside any
    /// compile.
    fn compile_of(&mut self, env: &Envelope, line: usize) -> Option<&mut Compile> {
        if env.frame.is_none() && env.compile.is_none() && env.autograd.is_none() {
            return None;
        }
        let key = (env.autograd, env.frame, env.compile);
        let i = *self.by_id.entry(key).or_insert_with(|| {
            self.trace.compiles.push(Compile {
                frame: env.frame,
                compile: env.compile,
                autograd: env.autograd,
                first_line: line,
                ..Compile::default()
            });
            self.trace.compiles.len() - 1
        });
        let c = &mut self.trace.compiles[i];
        c.attempt = c.attempt.max(env.attempt);
        if !c.attempt_lines.iter().any(|(a, _)| *a == env.attempt) {
            c.attempt_lines.push((env.attempt, line));
        }
        Some(c)
    }

    fn apply(&mut self, env: Envelope, line: usize, payload: String) {
        let kind = env.kind.as_str();
        match kind {
            "str" => {
                if let Some([s, id]) = env.meta.as_array().map(Vec::as_slice)
                    && let (Some(s), Some(id)) = (s.as_str(), id.as_u64())
                {
                    self.trace.strings.insert(id as u32, s.to_string());
                }
                return;
            }
            "chromium_event" => {
                if let Err(e) = self.spans.add(&payload) {
                    self.problem(line, e.to_string());
                }
                return;
            }
            // Fake tensors and symbols: counted, not kept.
            "describe_tensor"
            | "describe_storage"
            | "describe_source"
            | "create_symbol"
            | "create_unbacked_symbol"
            | "symbolic_shape_specialization"
            | "propagate_real_tensors" => {
                return;
            }
            _ => {}
        }
        let strings = std::mem::take(&mut self.trace.strings);
        let attempt = env.attempt;
        let partial = self.keep.is_some();
        if let Some(c) = self.compile_of(&env, line) {
            apply_to_compile(c, env, line, payload, &strings, partial);
        } else {
            if kind == "artifact" && artifact_name(&env) == "torch_version" {
                self.trace.torch_version = serde_json::from_str::<serde_json::Value>(&payload)
                    .ok()
                    .and_then(|v| v.get("pytorch_version")?.as_str().map(str::to_string));
            }
            if payload.is_empty() {
                self.trace.strings = strings;
                return;
            }
            self.trace.global_artifacts.push(Artifact {
                name: event_name(&env),
                text: payload,
                attempt,
                line,
            });
        }
        self.trace.strings = strings;
    }
}

fn artifact_name(env: &Envelope) -> &str {
    env.meta.get("name").and_then(|v| v.as_str()).unwrap_or("")
}

/// `artifact` events by their name, the rest by their kind.
fn event_name(env: &Envelope) -> String {
    if env.kind == "artifact" {
        artifact_name(env).to_string()
    } else {
        env.kind.clone()
    }
}

fn apply_to_compile(
    c: &mut Compile,
    mut env: Envelope,
    line: usize,
    payload: String,
    strings: &std::collections::BTreeMap<u32, String>,
    partial: bool,
) {
    let attempt = env.attempt;
    if env.has_payload || env.kind.ends_with("compilation_metrics") {
        c.outputs.push((attempt, event_name(&env)));
    }
    if let Some(kind) = GraphKind::from_event(&env.kind) {
        c.graphs.push(crate::model::compile::TraceGraph {
            kind,
            text: payload,
            attempt,
            line,
        });
        return;
    }
    match env.kind.as_str() {
        "dynamo_start" => c.user_stack = payloads::dynamo_stack(&env.meta, strings),
        "dynamo_cpp_guards_str" => {
            // Module inference needs the modules only, not every leaf.
            if !partial {
                c.guards = payloads::cpp_guards(&payload);
            }
            c.modules = guarded::guarded_modules(&payload);
        }
        "guard_added_fast" => {
            if let Some(expr) = env.meta.get("expr").and_then(|v| v.as_str()) {
                c.guards.push(Guard {
                    kind: "SHAPE".into(),
                    text: expr.to_string(),
                    depth: 0,
                });
            }
        }
        "compilation_metrics" => c.metrics = into_map(std::mem::take(&mut env.meta)),
        "bwd_compilation_metrics" => c.bwd_metrics = into_map(std::mem::take(&mut env.meta)),
        "artifact" if artifact_name(&env) == "dynamo_graph_break_reason" => {
            let (location, reason, user_stack) = payloads::graph_break(&payload);
            c.breaks.push(crate::model::compile::GraphBreak {
                location,
                reason,
                user_stack,
                attempt,
                line,
                inferred: false,
            });
        }
        "artifact" if artifact_name(&env) == "recompile_reasons" => {
            c.recompile_reason = Some(payloads::recompile_reasons(&payload));
        }
        _ => c.artifacts.push(Artifact {
            name: event_name(&env),
            text: payload,
            attempt,
            line,
        }),
    }
    // A recompile reason only in the metrics (no artifact written) still counts.
    if c.recompile_reason.is_none()
        && let Some(r) = c.metric_str("recompile_reason")
    {
        c.recompile_reason = Some(r.to_string());
    }
}

fn into_map(v: serde_json::Value) -> Option<std::collections::BTreeMap<String, serde_json::Value>> {
    match v {
        serde_json::Value::Object(o) => Some(o.into_iter().collect()),
        _ => None,
    }
}
