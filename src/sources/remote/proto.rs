//! What the client asks the agent and what it answers. Paths are the server's own absolute
//! paths; the client maps them to and from its `/ssh:…` mount (see `super::target`).
//!
//! Bump [`PROTOCOL`] whenever a request or reply changes meaning; a client and an agent of
//! different protocols refuse each other at the greeting, with one line saying what to install.

use crate::model::tensor::{Slice2d, TensorCompare, TensorSummary};
use crate::sources::entry::Kind;
use serde::{Deserialize, Serialize};

pub const PROTOCOL: u32 = 4;

/// A frame from the client: a request and the id its replies carry.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Ask {
    pub id: u64,
    pub req: Request,
}

/// A frame from the agent: one reply to request `id` (a stream sends several, then `End`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Answer {
    pub id: u64,
    pub reply: Reply,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Request {
    /// Who the agent is and where it runs.
    About,
    Ping,
    Stat {
        path: String,
    },
    /// Reads the archive `path` is or lies in (again when it changed); its warnings come back.
    OpenRoot {
        path: String,
    },
    ReadDir {
        path: String,
    },
    /// What `discover::scan` finds under `root` (its files and their sizes, as `Entries`): an
    /// index's four steps (open the root, stat it, list it, walk it) in one round trip.
    Scan {
        root: String,
    },
    /// The whole tree under `root` in one answer: one round trip, however deep.
    Walk {
        root: String,
        max_depth: u32,
        sizes: bool,
    },
    /// A whole file of at most `limit` bytes; the bytes are the answer's payload.
    Read {
        path: String,
        limit: u64,
    },
    /// Statistics of tensor files, computed where they lie: a tensor never crosses whole.
    Summarize {
        paths: Vec<String>,
    },
    /// Facts of graph files, parsed on the server (`pipeline::facts`): what the tree shows of
    /// every pass without its text crossing.
    Facts {
        paths: Vec<String>,
    },
    /// The `fx_graph_name` each `output_code.py` names (what joins a model to its captures),
    /// read on the server: a name crosses, not the file.
    GraphNames {
        paths: Vec<String>,
    },
    /// Facts of whole phases (each a list of passes) and each pass's diff counts against the
    /// one before, parsed and diffed on the server (`pipeline::facts::of_phases`).
    PhaseFacts {
        phases: Vec<Vec<String>>,
    },
    /// Accuracy-compare pairs of files computed on the server (`pipeline::compare::remote`).
    ComparePairs {
        pairs: Vec<(String, String)>,
    },
    /// One accuracy pair's difference as the inspector draws it (`pipeline::compare::delta`):
    /// one JSON value, its heatmap cells the payload (f64 LE: NaN cells survive).
    Delta {
        target: String,
        golden: String,
        lead: Option<Vec<u64>>,
    },
    /// A 2-D slice of a tensor (at most `limit` values); the values are the payload, f64 LE.
    Slice {
        path: String,
        lead: Vec<u64>,
        limit: u64,
    },
    /// Two tensors of the server compared element by element there.
    CompareTensors {
        a: String,
        b: String,
    },
    /// Opens a phase on the server (`spec`: a `pipeline::phase::PhaseSpec` as JSON, whose paths
    /// are the server's): its passes parsed, diffed, laid out and folded by module there, each
    /// result streamed as an `Item`.
    Phase {
        spec: serde_json::Value,
    },
    /// Reads trace logs on the server (`pipeline::compiles`), joined to the models of the tree
    /// at `root`: one `Item` per story.
    Stories {
        traces: Vec<String>,
        root: Option<String>,
    },
    /// Streams the changes under `root` (OS events or polling, on the server) until cancelled.
    Watch {
        root: String,
    },
    /// Runs a compile on the server (`spec`: a `runner::spec::RunSpec` as JSON, whose paths
    /// are the server's) and streams its console until it exits or is cancelled; when the
    /// link dies, the agent stops its whole process group.
    Run {
        spec: serde_json::Value,
    },
    /// Stops request `id` (a watch, a run); its stream ends with `End`.
    Cancel {
        id: u64,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum Reply {
    About(About),
    Pong,
    Stat {
        kind: Kind,
        size: u64,
    },
    Entries {
        entries: Vec<WireEntry>,
        warnings: Vec<String>,
    },
    Warnings(Vec<String>),
    /// The bytes are the frame's payload.
    Bytes,
    Summaries(Vec<Result<TensorSummary, Failure>>),
    /// One per path of `GraphNames`: `None` when the file names none or cannot be read.
    GraphNames(Vec<Option<String>>),
    /// `values` empty: they are the payload.
    Slice(Result<Slice2d, Failure>),
    Compared(Result<TensorCompare, Failure>),
    /// Results of a layer above `sources` in its own serde form (`Facts`: one per path;
    /// `ComparePairs`: one per pair).
    Json(Vec<serde_json::Value>),
    /// One result of a stream of a layer above `sources`, in its serde form: the payload.
    Item,
    Watch(WatchNews),
    Run(RunNews),
    /// The request failed; `kind` lets the client rebuild an `io::Error` of the same kind.
    Failed {
        kind: FailKind,
        message: String,
    },
    /// The last reply of a stream.
    End,
}

/// Why the agent could not do one item of a request (a file of a batch): its one line, as the
/// same work would have said it locally.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Failure(pub String);

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct About {
    pub version: String,
    pub host: String,
    pub os: String,
    pub arch: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WireEntry {
    pub path: String,
    pub kind: Kind,
    pub size: u64,
    pub depth: u32,
}

/// One event of a watch: how watching began, or a batch of changes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub enum WatchNews {
    /// "watching" or "watching by polling every 0.5 s (…)".
    Started(String),
    Changes {
        /// (kind as `ChangeKind::as_str` writes it, path, size now; 0 when removed)
        changes: Vec<(String, String, u64)>,
        writing: Vec<String>,
    },
    Failed(String),
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
pub enum FailKind {
    NotFound,
    PermissionDenied,
    IsADirectory,
    NotADirectory,
    InvalidData,
    Other,
}

impl FailKind {
    pub fn of(e: &std::io::Error) -> Self {
        use std::io::ErrorKind as K;
        match e.kind() {
            K::NotFound => FailKind::NotFound,
            K::PermissionDenied => FailKind::PermissionDenied,
            K::IsADirectory => FailKind::IsADirectory,
            K::NotADirectory => FailKind::NotADirectory,
            K::InvalidData => FailKind::InvalidData,
            _ => FailKind::Other,
        }
    }

    pub fn io_kind(self) -> std::io::ErrorKind {
        use std::io::ErrorKind as K;
        match self {
            FailKind::NotFound => K::NotFound,
            FailKind::PermissionDenied => K::PermissionDenied,
            FailKind::IsADirectory => K::IsADirectory,
            FailKind::NotADirectory => K::NotADirectory,
            FailKind::InvalidData => K::InvalidData,
            FailKind::Other => K::Other,
        }
    }
}

/// What a run on the server reports, as `runner::RunEvent` does locally.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum RunNews {
    Started {
        pid: u32,
    },
    Line {
        stderr: bool,
        text: String,
    },
    /// A new `run_*` folder (a server path).
    RunFolder(String),
    Exited {
        code: Option<i32>,
        signal: Option<i32>,
        elapsed_ms: u64,
    },
    Failed(String),
}
