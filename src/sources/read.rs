//! Reading files defensively: the compile may still be writing them, they may be huge, binary
//! or not UTF-8. Nothing here panics, and nothing here ever writes.

use crate::error::Result;
use std::borrow::Cow;
use std::path::Path;

/// Largest text file read whole (graphs of 20k nodes are ~10 MB; logs can be larger).
pub const MAX_TEXT_BYTES: u64 = 512 * 1024 * 1024;

/// A text file as read: always valid UTF-8 (invalid bytes replaced), with what was odd about it.
#[derive(Debug, Clone)]
pub struct TextFile {
    pub text: String,
    /// Bytes on disk when read.
    pub size: u64,
    /// Invalid UTF-8 was replaced with U+FFFD.
    pub lossy: bool,
    /// NUL bytes found: probably not a text file.
    pub binary: bool,
}

pub fn read_text(path: &Path) -> Result<TextFile> {
    read_text_limited(path, MAX_TEXT_BYTES)
}

pub fn read_text_limited(path: &Path, limit: u64) -> Result<TextFile> {
    Ok(decode(read_bytes_limited(path, limit)?))
}

/// Reads a whole file of at most `limit` bytes; a bigger one is refused before it is read.
/// A path inside an archive is read from it.
pub fn read_bytes_limited(path: &Path, limit: u64) -> Result<Vec<u8>> {
    super::vfs::read_limited(path, limit)
}

/// Bytes → text without failing: invalid UTF-8 is replaced and flagged.
pub fn decode(bytes: Vec<u8>) -> TextFile {
    let size = bytes.len() as u64;
    let binary = bytes.iter().take(8192).any(|&b| b == 0);
    match String::from_utf8(bytes) {
        Ok(text) => TextFile {
            text,
            size,
            lossy: false,
            binary,
        },
        Err(e) => TextFile {
            text: String::from_utf8_lossy(e.as_bytes()).into_owned(),
            size,
            lossy: true,
            binary,
        },
    }
}

/// `s` without ANSI escape sequences (the colours of `print_readable(colored=True)`, of a
/// script's console output); borrowed when it has none.
pub fn strip_ansi(s: &str) -> Cow<'_, str> {
    if !s.contains('\x1b') {
        return Cow::Borrowed(s);
    }
    Cow::Owned(String::from_utf8_lossy(&strip_ansi_escapes::strip(s)).into_owned())
}
