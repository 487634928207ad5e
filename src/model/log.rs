//! Records of the debug logs: npugraph_ex/TorchAir `debug.log`, Inductor and Dynamo logs.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Level {
    Debug,
    Info,
    /// npugraph_ex's custom level 35, between WARNING and ERROR in number but shown apart.
    Event,
    Warning,
    Error,
    Critical,
    /// A line with no level (bare Dynamo messages).
    None,
}

impl Level {
    /// Python's `levelname` (npugraph_ex, Inductor); `None` for anything else.
    pub fn from_name(name: &str) -> Option<Level> {
        Some(match name {
            "DEBUG" => Level::Debug,
            "INFO" => Level::Info,
            "WARNING" => Level::Warning,
            "ERROR" => Level::Error,
            "EVENT" => Level::Event,
            "CRITICAL" => Level::Critical,
            _ => return None,
        })
    }

    /// The one-letter level torch's glog-style formatter writes (`V` is its name for DEBUG).
    pub fn from_glog(letter: u8) -> Option<Level> {
        Some(match letter {
            b'V' | b'D' => Level::Debug,
            b'I' => Level::Info,
            b'W' => Level::Warning,
            b'E' => Level::Error,
            b'C' => Level::Critical,
            _ => return None,
        })
    }

    pub const ALL: [Level; 7] = [
        Level::Debug,
        Level::Info,
        Level::Event,
        Level::Warning,
        Level::Error,
        Level::Critical,
        Level::None,
    ];
}

/// Which writer produced a log; decides how lines split into records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LogFormat {
    /// `[INFO] NPUGRAPH_EX(pid,exe):2026-01-01 12:00:00.123.456 [file.py:12]tid msg`
    /// (or `TORCHAIR(` for the legacy backend).
    NpugraphEx,
    /// `[file.py:12 INFO] msg` (Inductor's aot_*_debug.log).
    Inductor,
    /// glog style `V1129 11:32:37.089000 13360 torch/_dynamo/convert_frame.py:2055] msg`
    /// (torch stderr, optionally `[rank1]:`-prefixed; tlparse's `dedicated_log_torch_trace_*.log`).
    Glog,
    /// Bare messages (torchdynamo/debug.log): each unindented line starts one, indented and
    /// blank lines continue it (`TRACE starts_line` source lines, `TRACED GRAPH` dumps).
    Plain,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogRecord {
    /// 1-based line where the record starts.
    pub line: usize,
    pub level: Level,
    /// As written, e.g. `2026-11-29 12:04:56.894.491`.
    pub time: Option<String>,
    pub pid: Option<u32>,
    /// `npu_fx_compiler.py:110`.
    pub location: Option<String>,
    pub thread: Option<u64>,
    /// glog lines of distributed runs start with `[rank3]:`.
    pub rank: Option<u32>,
    /// The message; continuation lines are joined with `\n`, trailing blank lines dropped.
    /// glog: torch repeats its prefix on every line of one message; the first line keeps the
    /// compile id and artifact tags (`[0/0] [__trace_source] …`), later lines are bare.
    pub message: String,
    /// Things the message names that fxray can jump to.
    pub refs: Vec<LogRef>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum LogRef {
    /// `AclGraph{id: 2814...}`: joins to a capture JSON's `id_…`.
    AclGraph(String),
    /// `fx_graph graph_1` / `fx_graph_name`: joins to capture JSON `graph_K`.
    FxGraph(String),
    /// `model__0`, `compile__1`.
    Model(String),
    /// `After fx graph pass(view_to_reshape)`, or a pass name in a pass-dump path.
    Pass(String),
    /// An absolute path the message names (debug-folder files, data-dump folders, user
    /// source files), without a trailing `:line`.
    Path(String),
    /// `[forward] node: add_1, op: call_function, …` (npugraph_ex's per-node trace).
    Node(String),
}

impl LogRecord {
    /// Physical lines the record spans in the file (trailing blank lines excluded).
    pub fn line_count(&self) -> usize {
        self.message.split('\n').count()
    }

    pub fn first_line(&self) -> &str {
        self.message.split('\n').next().unwrap_or("")
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ParsedLog {
    pub format: Option<LogFormat>,
    pub records: Vec<LogRecord>,
    /// Lines before the first record that belong to none.
    pub preamble: Vec<String>,
}

impl ParsedLog {
    pub fn count(&self, level: Level) -> usize {
        self.records.iter().filter(|r| r.level == level).count()
    }

    /// `(level, count)` for every level that occurs, in `Level` order.
    pub fn level_counts(&self) -> Vec<(Level, usize)> {
        Level::ALL
            .iter()
            .map(|&l| (l, self.count(l)))
            .filter(|&(_, n)| n > 0)
            .collect()
    }

    /// Records that name `r` (e.g. every line about `AclGraph{id: …}` or `model__0`).
    pub fn referring<'a>(&'a self, r: &'a LogRef) -> impl Iterator<Item = &'a LogRecord> + 'a {
        self.records.iter().filter(move |rec| rec.refs.contains(r))
    }

    /// Every distinct ref of the log, in order of first appearance.
    pub fn all_refs(&self) -> Vec<&LogRef> {
        let mut seen = std::collections::HashSet::new();
        self.records
            .iter()
            .flat_map(|r| &r.refs)
            .filter(|r| seen.insert(*r))
            .collect()
    }
}
