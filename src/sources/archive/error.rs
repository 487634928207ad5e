//! Why an archive, or an entry of it, could not be read. Each kind is its own variant, so a
//! caller tells a cut file from a bomb or a damaged stream without reading the text; the text
//! is the one line the user sees.

use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArchiveError {
    /// The file's name says no archive format fxray reads.
    #[error("not an archive")]
    NotAnArchive,
    /// The archive file itself could not be opened or stat'ed.
    #[error("{0}")]
    Io(String),
    /// The stream stops inside an entry.
    #[error("the archive ends inside {} ({got} of {declared} bytes): it was cut short", entry.display())]
    CutShort {
        entry: PathBuf,
        got: u64,
        declared: u64,
    },
    /// The bytes of an entry are not what the format says.
    #[error("damaged inside {}: {cause}", entry.display())]
    DamagedEntry { entry: PathBuf, cause: String },
    /// An entry yields more than its stated size.
    #[error("{} holds more than the {declared} bytes it claims (a bomb?): reading stopped there", entry.display())]
    MoreThanClaimed { entry: PathBuf, declared: u64 },
    /// An entry expands, or claims to expand, past the bound for one entry.
    #[error("{}", entry_too_large(entry, claimed.as_ref(), limit))]
    EntryTooLarge {
        entry: PathBuf,
        /// The size the header states, when the refusal came before any byte was read.
        claimed: Option<String>,
        limit: String,
    },
    /// The entries so far expand past the bound for one archive.
    #[error("the entries up to {} expand to more than {limit}, the most fxray expands from one archive (a bomb?): reading stopped there", entry.display())]
    TotalTooLarge { entry: PathBuf, limit: String },
    /// Large entries go to the cache folder, and it cannot be written.
    #[error("cannot write large entries to the cache folder {}: {cause}", dir.display())]
    Cache { dir: PathBuf, cause: String },
    /// Another open replaced the one that was reading it.
    #[error("reading was called off: another tree was opened")]
    Cancelled,
    /// The container itself is unreadable (`what`: `.tar`, `.tar.gz`, `.zip`).
    #[error("not a readable {what}: {cause}")]
    Unreadable { what: &'static str, cause: String },
}

fn entry_too_large(entry: &std::path::Path, claimed: Option<&String>, limit: &str) -> String {
    match claimed {
        Some(c) => format!(
            "{} claims {c}, more than the {limit} fxray expands from one entry: reading stopped there",
            entry.display()
        ),
        None => format!(
            "{} expands past {limit}, the most fxray expands from one entry (a bomb?): reading \
             stopped there",
            entry.display()
        ),
    }
}

impl ArchiveError {
    /// The file was cut short (a copy still in progress, a truncated download), as opposed to
    /// damaged or hostile.
    pub fn is_cut_short(&self) -> bool {
        matches!(self, ArchiveError::CutShort { .. })
    }
}
