//! What the client asks the agent and what it answers. Paths are the server's own absolute
//! paths; the client maps them to and from its `/ssh:…` mount (see `super::target`).
//!
//! Bump [`PROTOCOL`] whenever a request or reply changes meaning; a client and an agent of
//! different protocols refuse each other at the greeting, with one line saying what to install.

use crate::sources::entry::Kind;
use serde::{Deserialize, Serialize};

/// 6: op items carry their errors as `pipeline::failure::Failure`, no longer as text.
pub const PROTOCOL: u32 = 6;

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
    /// Pipeline work run here on this server's files (`pipeline::remote::Op`): `name` picks
    /// it from the agent's table, `args` are its arguments (paths the server's); its results
    /// stream as `Item`s, then `End`.
    Op {
        name: String,
        args: serde_json::Value,
    },
    /// Streams the changes under `root` (OS events or polling, on the server) until cancelled.
    Watch {
        root: String,
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
    /// One result of an `Op`, in its postcard form: the payload.
    Item,
    Watch(WatchNews),
    /// The request failed; `kind` lets the client rebuild an `io::Error` of the same kind.
    Failed {
        kind: FailKind,
        message: String,
    },
    /// The last reply of a stream.
    End,
}

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
