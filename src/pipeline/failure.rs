//! Why a piece of pipeline work failed. One type for every job of the window, every command of
//! the CLI and every op answered by an agent: it crosses threads and an ssh link (postcard)
//! unchanged, so a caller can tell the file's problem from the link's or the agent's without
//! reading text. The text is the reader's own one-line message, which names the file.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum Failure {
    /// A file could not be opened, read or understood (cut, not the format it claims, no
    /// permission): the file is the problem; another run's may read.
    #[error("{0}")]
    Unreadable(String),
    /// The files read, but the work does not apply to them (tensors of different shapes, a
    /// 0-d tensor asked for a slice).
    #[error("{0}")]
    Unsuitable(String),
    /// The server holding the files did not answer (`ssh://host: …`): reconnect and retry.
    #[error("{0}")]
    Link(String),
    /// The agent on the server could not run the work as asked: it is another build of fxray
    /// (install this one there, or pass `--remote-fxray`).
    #[error("{0}")]
    Agent(String),
    /// The user stopped the work (its result is dropped).
    #[error("cancelled")]
    Cancelled,
}

impl Failure {
    pub fn unreadable(e: impl std::fmt::Display) -> Failure {
        Failure::Unreadable(e.to_string())
    }

    pub fn unsuitable(e: impl std::fmt::Display) -> Failure {
        Failure::Unsuitable(e.to_string())
    }

    /// The one-line message, as shown.
    pub fn message(&self) -> &str {
        match self {
            Failure::Unreadable(m)
            | Failure::Unsuitable(m)
            | Failure::Link(m)
            | Failure::Agent(m) => m,
            Failure::Cancelled => "cancelled",
        }
    }
}

impl From<Failure> for crate::error::Error {
    fn from(f: Failure) -> crate::error::Error {
        crate::error::Error::User(f.to_string())
    }
}
