//! Debug logs → [`ParsedLog`] (docs/formats.md §1.3 and §6).
//!
//! One pass over the lines. A line either starts a record (it carries a writer's header) or
//! continues the open one. Which header kinds exist is the same for every file; the detected
//! [`LogFormat`] only decides what a header-less line is:
//! - npugraph_ex / Inductor: always a continuation (their messages hold FX dumps, tables).
//! - glog / plain: a continuation only when blank or indented (tlparse payloads, Dynamo's
//!   `TRACE starts_line` source lines, graph dumps); otherwise a bare record of its own, because
//!   header-less, unindented lines in those files come from other writers (`print`, warnings).
//!
//! Headers are parsed by hand, not by regex: each parser looks at a bounded prefix of the line,
//! so a 10 MB line costs one copy. Refs are found in one multi-literal regex pass per record.
//! A 50 MB log parses in about 0.1-0.25 s in release (measured on the fixtures repeated).

use crate::model::log::{Level, LogFormat, LogRecord, LogRef, ParsedLog};
use crate::sources::names;
use regex::Regex;
use std::sync::LazyLock;

/// Non-blank lines looked at to pick the format.
const DETECT_LINES: usize = 64;
/// A garbage line full of `/x` tokens must not make ref de-duplication quadratic.
const MAX_REFS: usize = 256;

/// Splits a log into records. Never fails: unknown text becomes [`LogFormat::Plain`] records.
pub fn parse_log(text: &str) -> ParsedLog {
    let Some(format) = detect_format(text) else {
        return ParsedLog::default();
    };
    let mut builder = Builder::new(format);
    for (i, line) in text.lines().enumerate() {
        builder.push(i + 1, line);
    }
    builder.finish()
}

/// The writer of a log, from the headers of its first non-blank lines (the most frequent kind
/// wins). `None` for an empty or all-blank text.
pub fn detect_format(text: &str) -> Option<LogFormat> {
    let mut counts = [0usize; 3];
    let mut any = false;
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(DETECT_LINES)
    {
        any = true;
        if let Some(h) = parse_header(line) {
            counts[format_rank(h.format)] += 1;
        }
    }
    if !any {
        return None;
    }
    let best = (0..counts.len()).max_by_key(|&i| (counts[i], std::cmp::Reverse(i)))?;
    if counts[best] == 0 {
        return Some(LogFormat::Plain);
    }
    Some(RANKED[best])
}

/// Tie-break order for detection: the npugraph_ex header is the most specific.
const RANKED: [LogFormat; 3] = [LogFormat::NpugraphEx, LogFormat::Glog, LogFormat::Inductor];

fn format_rank(f: LogFormat) -> usize {
    RANKED.iter().position(|&r| r == f).unwrap_or(0)
}

// ---------------------------------------------------------------------------------------------
// Headers

/// What a header line says. `message` is the rest of the line.
#[derive(Debug, Clone, Copy)]
struct Header<'a> {
    format: LogFormat,
    level: Level,
    time: Option<&'a str>,
    pid: Option<u32>,
    location: Option<&'a str>,
    thread: Option<u64>,
    rank: Option<u32>,
    message: &'a str,
    /// glog: the prefix torch repeats on every line of one message, tags included.
    glog_key: Option<&'a str>,
}

impl<'a> Header<'a> {
    fn bare(format: LogFormat, level: Level, message: &'a str) -> Self {
        Header {
            format,
            level,
            time: None,
            pid: None,
            location: None,
            thread: None,
            rank: None,
            message,
            glog_key: None,
        }
    }
}

fn parse_header(line: &str) -> Option<Header<'_>> {
    match line.as_bytes().first()? {
        b'[' => npugraph_ex_header(line)
            .or_else(|| glog_header(line))
            .or_else(|| inductor_header(line)),
        b'V' | b'I' | b'W' | b'E' | b'C' | b'D' => glog_header(line),
        _ => None,
    }
}

/// `[INFO] TORCHAIR(3064,python):2026-11-29 12:04:56.894.491 [npu_fx_compiler.py:110]3064 msg`.
/// The `[LEVEL] NPUGRAPH_EX(` / `[LEVEL] TORCHAIR(` prefix alone makes a record (the spec's
/// rule); the fields after it are read leniently.
fn npugraph_ex_header(line: &str) -> Option<Header<'_>> {
    let rest = line.strip_prefix('[')?;
    let close = find_byte(rest, b']', 10)?;
    let level = Level::from_name(&rest[..close])?;
    let after_level = rest[close + 1..].strip_prefix(' ')?;
    let body = after_level
        .strip_prefix("NPUGRAPH_EX(")
        .or_else(|| after_level.strip_prefix("TORCHAIR("))?;
    let mut h = Header::bare(LogFormat::NpugraphEx, level, after_level);
    if let Some(fields) = npugraph_ex_fields(body) {
        h.pid = fields.pid;
        h.time = Some(fields.time);
        h.location = Some(fields.location);
        h.thread = fields.thread;
        h.message = fields.message;
    }
    Some(h)
}

struct NpuFields<'a> {
    pid: Option<u32>,
    time: &'a str,
    location: &'a str,
    thread: Option<u64>,
    message: &'a str,
}

/// `3064,python):2026-11-29 12:04:56.894.491 [npu_fx_compiler.py:110]3064 msg`.
fn npugraph_ex_fields(body: &str) -> Option<NpuFields<'_>> {
    let comma = find_byte(body, b',', 12)?;
    let pid = body[..comma].parse().ok();
    let rest = &body[comma + 1..];
    let exe_end = find_str(rest, "):", 256)?;
    let rest = &rest[exe_end + 2..];
    let time_end = find_str(rest, " [", 40)?;
    let time = &rest[..time_end];
    let rest = &rest[time_end + 2..];
    let loc_end = find_byte(rest, b']', 256)?;
    let location = &rest[..loc_end];
    let rest = &rest[loc_end + 1..];
    let digits = leading_digits(rest);
    let thread = rest[..digits].parse().ok();
    let rest = &rest[digits..];
    Some(NpuFields {
        pid,
        time,
        location,
        thread,
        message: rest.strip_prefix(' ').unwrap_or(rest),
    })
}

/// `[rank1]:V1129 11:32:37.089000 13360 torch/_dynamo/convert_frame.py:2055] [0/0] msg`.
fn glog_header(line: &str) -> Option<Header<'_>> {
    let (rank, body) = strip_rank(line);
    let b = body.as_bytes();
    let level = Level::from_glog(*b.first()?)?;
    // MMDD then a space.
    if b.len() < 6 || !b[1..5].iter().all(u8::is_ascii_digit) || b[5] != b' ' {
        return None;
    }
    let time_len = b[6..]
        .iter()
        .take(20)
        .take_while(|c| c.is_ascii_digit() || **c == b':' || **c == b'.')
        .count();
    let time_end = 6 + time_len;
    if time_len < 8 || b.get(time_end) != Some(&b' ') {
        return None;
    }
    let pid_start = time_end + 1;
    let pid_len = leading_digits(&body[pid_start..]);
    let loc_start = pid_start + pid_len + 1;
    if pid_len == 0 || b.get(pid_start + pid_len) != Some(&b' ') {
        return None;
    }
    let loc_len = find_byte(&body[loc_start..], b']', 512)?;
    let location = &body[loc_start..loc_start + loc_len];
    if !is_file_line(location) {
        return None;
    }
    let after_loc = loc_start + loc_len + 1;
    let key_end = after_loc + glog_tags_len(&body[after_loc..]);
    let rest = &body[after_loc..];
    let mut h = Header::bare(
        LogFormat::Glog,
        level,
        rest.strip_prefix(' ').unwrap_or(rest),
    );
    h.time = Some(&body[1..time_end]);
    h.pid = body[pid_start..pid_start + pid_len].parse().ok();
    h.location = Some(location);
    h.rank = rank;
    h.glog_key = Some(&line[..line.len() - body.len() + key_end]);
    Some(h)
}

/// `[rank3]:` that torch puts before the glog prefix in distributed runs.
fn strip_rank(line: &str) -> (Option<u32>, &str) {
    let Some(rest) = line.strip_prefix("[rank") else {
        return (None, line);
    };
    let digits = leading_digits(rest);
    match rest[digits..].strip_prefix("]:") {
        Some(body) if digits > 0 => (rest[..digits].parse().ok(), body),
        _ => (None, line),
    }
}

/// Length of the ` [0/0] [__trace_source]` tags after a glog prefix: the compile id
/// (`[0/0]`, `[0/1_1]`, `[!0/0]`) and the artifact name (`[__guards]`).
fn glog_tags_len(rest: &str) -> usize {
    let mut len = 0;
    for _ in 0..2 {
        let Some(tag) = rest[len..].strip_prefix(" [") else {
            break;
        };
        let Some(close) = find_byte(tag, b']', 64) else {
            break;
        };
        let inner = &tag[..close];
        let compile_id = inner
            .trim_start_matches('!')
            .starts_with(|c: char| c.is_ascii_digit())
            && inner.contains('/');
        let artifact = inner.starts_with("__");
        if !(compile_id || artifact) || inner.contains(' ') {
            break;
        }
        len += 2 + close + 1;
    }
    len
}

/// `[compile_fx.py:812 INFO] msg` (Inductor's aot_*_debug.log).
fn inductor_header(line: &str) -> Option<Header<'_>> {
    let rest = line.strip_prefix('[')?;
    let close = find_byte(rest, b']', 300)?;
    let (location, level) = rest[..close].rsplit_once(' ')?;
    let level = Level::from_name(level)?;
    if !is_file_line(location) {
        return None;
    }
    let msg = &rest[close + 1..];
    let mut h = Header::bare(
        LogFormat::Inductor,
        level,
        msg.strip_prefix(' ').unwrap_or(msg),
    );
    h.location = Some(location);
    Some(h)
}

/// `file.py:123`: a non-empty name without spaces, a colon, digits.
fn is_file_line(s: &str) -> bool {
    match s.rsplit_once(':') {
        Some((file, line)) => {
            !file.is_empty()
                && !file.contains(' ')
                && !line.is_empty()
                && line.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Records

struct Open<'a> {
    record: LogRecord,
    glog_key: Option<&'a str>,
}

struct Builder<'a> {
    format: LogFormat,
    records: Vec<LogRecord>,
    preamble: Vec<String>,
    open: Option<Open<'a>>,
}

impl<'a> Builder<'a> {
    fn new(format: LogFormat) -> Self {
        Builder {
            format,
            records: Vec::new(),
            preamble: Vec::new(),
            open: None,
        }
    }

    fn push(&mut self, line_no: usize, line: &'a str) {
        if let Some(h) = parse_header(line) {
            if !self.glog_continuation(line, &h) {
                self.start(line_no, h);
            }
            return;
        }
        let continues = match self.format {
            LogFormat::NpugraphEx | LogFormat::Inductor => true,
            LogFormat::Glog | LogFormat::Plain => {
                line.trim().is_empty() || line.starts_with(char::is_whitespace)
            }
        };
        if continues {
            self.continue_with(line);
        } else {
            self.start(line_no, Header::bare(LogFormat::Plain, Level::None, line));
        }
    }

    /// torch writes a multi-line glog message as `prefix + " " + line` for every line, so a line
    /// with the open record's exact prefix whose own text is blank or indented belongs to it.
    /// Unindented lines with the same prefix are separate calls (tlparse writes many per µs).
    fn glog_continuation(&mut self, line: &str, h: &Header<'_>) -> bool {
        let (Some(key), Some(open)) = (h.glog_key, self.open.as_mut()) else {
            return false;
        };
        if open.glog_key != Some(key) {
            return false;
        }
        let own = &line[key.len()..];
        let own = own.strip_prefix(' ').unwrap_or(own);
        if !(own.trim().is_empty() || own.starts_with(char::is_whitespace)) {
            return false;
        }
        open.record.message.push('\n');
        open.record.message.push_str(own);
        true
    }

    fn continue_with(&mut self, line: &str) {
        match self.open.as_mut() {
            Some(open) => {
                open.record.message.push('\n');
                open.record.message.push_str(line);
            }
            None => self.preamble.push(line.to_string()),
        }
    }

    fn start(&mut self, line_no: usize, h: Header<'a>) {
        self.close();
        self.open = Some(Open {
            record: LogRecord {
                line: line_no,
                level: h.level,
                time: h.time.map(str::to_string),
                pid: h.pid,
                location: h.location.map(str::to_string),
                thread: h.thread,
                rank: h.rank,
                message: h.message.to_string(),
                refs: Vec::new(),
            },
            glog_key: h.glog_key,
        });
    }

    fn close(&mut self) {
        if let Some(open) = self.open.take() {
            let mut record = open.record;
            trim_trailing_blank_lines(&mut record.message);
            record.refs = extract_refs(&record.message);
            self.records.push(record);
        }
    }

    fn finish(mut self) -> ParsedLog {
        self.close();
        ParsedLog {
            format: Some(self.format),
            records: self.records,
            preamble: self.preamble,
        }
    }
}

/// Blank lines after a message separate it from the next one (Dynamo's graph dumps); they are
/// not part of it. The first line is kept even when blank.
fn trim_trailing_blank_lines(message: &mut String) {
    while let Some(nl) = message.rfind('\n') {
        if !message[nl + 1..].trim().is_empty() {
            break;
        }
        message.truncate(nl);
    }
}

// ---------------------------------------------------------------------------------------------
// Refs

/// Everything in `message` fxray can jump to, de-duplicated, in order of appearance.
///
/// One pass: a multi-literal search finds every place a ref can start, then a small parser
/// reads the ref there. Paths are consumed whole (what their names say is read from their
/// components), so `/…/model__0/…` is not scanned twice.
pub fn extract_refs(message: &str) -> Vec<LogRef> {
    static TRIGGERS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"AclGraph\{id:|fx_graph|model__|compile__|pass \[|pass\(|node: |/")
            .expect("static regex")
    });
    let mut refs = Refs::default();
    let mut from = 0;
    while !refs.full()
        && let Some(m) = TRIGGERS.find_at(message, from)
    {
        from = match m.as_str() {
            "/" => path_ref(message, m.start(), &mut refs),
            "AclGraph{id:" => acl_graph_ref(message, m.end(), &mut refs),
            "fx_graph" => fx_graph_ref(message, m.end(), &mut refs),
            "model__" | "compile__" => model_ref(message, m.start(), m.end(), &mut refs),
            "pass [" => pass_ref(message, m.start(), m.end(), ']', &mut refs),
            "pass(" => pass_ref(message, m.start(), m.end(), ')', &mut refs),
            _ => node_ref(message, m.start(), m.end(), &mut refs),
        };
    }
    refs.0
}

#[derive(Default)]
struct Refs(Vec<LogRef>);

impl Refs {
    fn add(&mut self, r: LogRef) {
        if !self.full() && !self.0.contains(&r) {
            self.0.push(r);
        }
    }

    fn full(&self) -> bool {
        self.0.len() >= MAX_REFS
    }

    fn has_path(&self, path: &str) -> bool {
        self.0
            .iter()
            .any(|r| matches!(r, LogRef::Path(p) if p == path))
    }
}

/// Each parser below gets the trigger's position and returns where the search goes on.
/// `AclGraph{id: 140715248647824}`: the `id_…` of the capture JSON's file name.
fn acl_graph_ref(msg: &str, end: usize, refs: &mut Refs) -> usize {
    let rest = msg[end..].trim_start_matches(' ');
    let n = leading_digits(rest);
    if n > 0 {
        refs.add(LogRef::AclGraph(rest[..n].to_string()));
    }
    end
}

/// `fx_graph graph_1` (acl_graph.py capture/replay lines) and `fx_graph_name="graph_1"`.
fn fx_graph_ref(msg: &str, end: usize, refs: &mut Refs) -> usize {
    let rest = &msg[end..];
    let value = rest
        .strip_prefix(' ')
        .or_else(|| rest.strip_prefix("_name=\""))
        .or_else(|| rest.strip_prefix("_name='"))
        .or_else(|| rest.strip_prefix("_name="));
    if let Some(g) = value.and_then(graph_token) {
        refs.add(LogRef::FxGraph(g.to_string()));
    }
    end
}

/// `graph_12` at the start of `s`, as a whole word.
fn graph_token(s: &str) -> Option<&str> {
    let digits = leading_digits(s.strip_prefix("graph_")?);
    let end = "graph_".len() + digits;
    (digits > 0 && !s.as_bytes().get(end).is_some_and(|&b| is_word_byte(b))).then(|| &s[..end])
}

/// `model__0`, `model__-1`, `compile__2`. Inductor's `model__0_forward_1` names model__0 too.
fn model_ref(msg: &str, start: usize, end: usize, refs: &mut Refs) -> usize {
    if follows_word(msg, start) {
        return end;
    }
    let rest = &msg[end..];
    let sign = usize::from(rest.starts_with('-'));
    let digits = leading_digits(&rest[sign..]);
    if digits > 0 {
        refs.add(LogRef::Model(msg[start..end + sign + digits].to_string()));
    }
    end
}

/// `[forward] pass [view_to_reshape] finished in …` (what the fixtures' observer writes) and
/// `After fx graph pass(view_to_reshape) optimization:` (npugraph_ex 2.14's format string).
fn pass_ref(msg: &str, start: usize, end: usize, close: char, refs: &mut Refs) -> usize {
    if follows_word(msg, start) {
        return end;
    }
    let rest = &msg[end..];
    let n = ident_len(rest);
    if n > 0 && rest[n..].starts_with(close) {
        refs.add(LogRef::Pass(rest[..n].to_string()));
    }
    end
}

/// `[forward] node: add_1, op: call_function, target: …`.
fn node_ref(msg: &str, start: usize, end: usize, refs: &mut Refs) -> usize {
    if follows_word(msg, start) {
        return end;
    }
    let rest = &msg[end..];
    let n = ident_len(rest);
    if n > 0 && rest[n..].starts_with(", op:") {
        refs.add(LogRef::Node(rest[..n].to_string()));
    }
    end
}

/// An absolute path at `at`, plus what its components say: `model__N` folders, capture JSON
/// names (`graph_K` and the AclGraph id), pass dumps (the pass), data dumps
/// (`…/worldsizeW_global_rankR/graph_K/…`).
fn path_ref(msg: &str, at: usize, refs: &mut Refs) -> usize {
    let b = msg.as_bytes();
    if !starts_path(b, at) {
        return at + 1;
    }
    let end = b[at..]
        .iter()
        .position(|&c| ends_path(c))
        .map_or(b.len(), |n| at + n);
    let path = trim_path(&msg[at..end]);
    // Logs repeat the same few paths; don't re-read (or allocate) one already taken.
    if path.len() > 1 && !refs.has_path(path) {
        name_refs(path, refs);
        refs.add(LogRef::Path(path.to_string()));
    }
    end
}

fn follows_word(msg: &str, start: usize) -> bool {
    start > 0 && is_word_byte(msg.as_bytes()[start - 1])
}

fn starts_path(b: &[u8], at: usize) -> bool {
    let before_ok = at == 0 || b" \t\"'([{<=,".contains(&b[at - 1]);
    let next_ok = b
        .get(at + 1)
        .is_some_and(|&c| c.is_ascii_alphanumeric() || b"_.~-".contains(&c) || c >= 0x80);
    before_ok && next_ok
}

fn ends_path(c: u8) -> bool {
    c.is_ascii_whitespace() || b"\"'`,;)]}>|<".contains(&c)
}

/// Drops sentence punctuation and a `:123` line suffix (`showcase_model.py:195`).
fn trim_path(path: &str) -> &str {
    let path = path.trim_end_matches(['.', ':']);
    let digits = path.bytes().rev().take_while(u8::is_ascii_digit).count();
    let path = match path[..path.len() - digits].strip_suffix(':') {
        Some(p) if digits > 0 => p,
        _ => path,
    };
    path.trim_end_matches(['.', ':'])
}

fn name_refs(path: &str, refs: &mut Refs) {
    let mut parts = path.split('/').filter(|p| !p.is_empty()).peekable();
    while let Some(part) = parts.next() {
        if names::model_dir(part).is_some() {
            refs.add(LogRef::Model(part.to_string()));
        } else if part.starts_with("model__")
            && let Some((model, _, _)) = names::inductor_model_dir(part)
        {
            refs.add(LogRef::Model(model));
        }
        if names::data_dump_dir(part).is_some()
            && let Some(g) = parts.peek().and_then(|next| graph_token(next))
        {
            refs.add(LogRef::FxGraph(g.to_string()));
        }
        if part.starts_with("graph_")
            && part.ends_with(".json")
            && let Some(c) = names::capture_file(part)
        {
            refs.add(LogRef::FxGraph(c.graph));
            refs.add(LogRef::AclGraph(c.id));
        }
        if part.contains("_aot_")
            && let Some((_, pass)) = names::pass_file(part)
            && !pass.ends_with("graph")
        {
            refs.add(LogRef::Pass(pass));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Byte helpers. Every index they return is at an ASCII byte, so slicing there is safe.

fn find_byte(s: &str, byte: u8, limit: usize) -> Option<usize> {
    s.as_bytes().iter().take(limit).position(|&b| b == byte)
}

fn find_str(s: &str, pat: &str, limit: usize) -> Option<usize> {
    let b = s.as_bytes();
    let window = &b[..b.len().min(limit + pat.len())];
    window.windows(pat.len()).position(|w| w == pat.as_bytes())
}

fn leading_digits(s: &str) -> usize {
    s.bytes().take_while(u8::is_ascii_digit).count()
}

fn ident_len(s: &str) -> usize {
    s.bytes()
        .take_while(|&b| is_word_byte(b) && b < 0x80)
        .count()
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn npugraph_ex_line() {
        let log = parse_log(
            "[INFO] NPUGRAPH_EX(42,python3):2026-01-01 12:00:00.123.456 [a.py:12]43 hello\n  more\n",
        );
        assert_eq!(log.format, Some(LogFormat::NpugraphEx));
        let r = &log.records[0];
        assert_eq!((r.pid, r.thread), (Some(42), Some(43)));
        assert_eq!(r.time.as_deref(), Some("2026-01-01 12:00:00.123.456"));
        assert_eq!(r.location.as_deref(), Some("a.py:12"));
        assert_eq!(r.message, "hello\n  more");
    }

    #[test]
    fn broken_npugraph_ex_fields_still_make_a_record() {
        let log = parse_log("[ERROR] TORCHAIR(zz\nnext");
        assert_eq!(log.records.len(), 1);
        assert_eq!(log.records[0].level, Level::Error);
        assert_eq!(log.records[0].message, "TORCHAIR(zz\nnext");
    }

    #[test]
    fn glog_merges_indented_lines_with_the_same_prefix() {
        let text = "[rank1]:V1129 11:47:00.011000 7 t/c.py:2] [0/0] stack:\n\
                    [rank1]:V1129 11:47:00.011000 7 t/c.py:2] [0/0]   File \"/a/b.py\"\n\
                    [rank1]:V1129 11:47:00.011000 7 t/c.py:2] [0/0] other\n";
        let log = parse_log(text);
        assert_eq!(log.format, Some(LogFormat::Glog));
        assert_eq!(log.records.len(), 2);
        let r = &log.records[0];
        assert_eq!(r.message, "[0/0] stack:\n  File \"/a/b.py\"");
        assert_eq!((r.rank, r.pid), (Some(1), Some(7)));
        assert_eq!(r.time.as_deref(), Some("1129 11:47:00.011000"));
        assert_eq!(r.refs, vec![LogRef::Path("/a/b.py".into())]);
    }

    #[test]
    fn inductor_line() {
        let log = parse_log("[compile_fx.py:812 WARNING] x\ny\n[utils.py:3 DEBUG] z");
        assert_eq!(log.format, Some(LogFormat::Inductor));
        assert_eq!(log.records.len(), 2);
        assert_eq!(log.records[0].level, Level::Warning);
        assert_eq!(
            log.records[0].location.as_deref(),
            Some("compile_fx.py:812")
        );
        assert_eq!(log.records[0].message, "x\ny");
    }

    #[test]
    fn refs() {
        let refs = extract_refs(
            "No find captured AclGraph{id: 77} of fx_graph graph_3 for model__1 and compile__-1; \
             After fx graph pass(view_to_reshape) bypass(x) \
             dump /d/w/006_aot_forward_graph_after_remove_cat_ops.txt \
             to /d/worldsize2_global_rank1/graph_4/0 and /d/model__2/graph_5_id_9_rank_0_pid_1_ts_2.json",
        );
        assert!(refs.contains(&LogRef::AclGraph("77".into())));
        assert!(refs.contains(&LogRef::AclGraph("9".into())));
        for g in ["graph_3", "graph_4", "graph_5"] {
            assert!(refs.contains(&LogRef::FxGraph(g.into())), "{g}");
        }
        for m in ["model__1", "compile__-1", "model__2"] {
            assert!(refs.contains(&LogRef::Model(m.into())), "{m}");
        }
        assert!(refs.contains(&LogRef::Pass("view_to_reshape".into())));
        assert!(refs.contains(&LogRef::Pass("remove_cat_ops".into())));
        assert!(!refs.contains(&LogRef::Pass("x".into())));
    }

    #[test]
    fn path_edges() {
        assert_eq!(trim_path("/a/b.py:195"), "/a/b.py");
        assert_eq!(trim_path("/a/b."), "/a/b");
        let refs = extract_refs("x // 2 and a / b and 3/4 and [0/0]");
        assert!(refs.is_empty(), "{refs:?}");
    }
}
