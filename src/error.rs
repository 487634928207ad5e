//! Errors that reach the user. Every message says what went wrong and, where it can, what to do.

use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The user asked for something that cannot be done as asked (exit code 1).
    #[error("{0}")]
    User(String),
    /// A bug or an unexpected state of the machine (exit code 2).
    #[error("internal error: {0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn user(msg: impl Into<String>) -> Self {
        Error::User(msg.into())
    }

    /// Turns an I/O error on `path` into a one-line message that names the path and the cause.
    pub fn io(path: &Path, err: &std::io::Error) -> Self {
        use std::io::ErrorKind::*;
        let p = path.display();
        let msg = match err.kind() {
            NotFound => format!("{p}: no such file or folder"),
            PermissionDenied => format!("{p}: permission denied (check the file's owner and mode)"),
            IsADirectory => format!("{p}: is a folder, expected a file"),
            NotADirectory => format!("{p}: is a file, expected a folder"),
            _ => format!("{p}: {err}"),
        };
        Error::User(msg)
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            Error::User(_) => 1,
            Error::Internal(_) => 2,
        }
    }
}
