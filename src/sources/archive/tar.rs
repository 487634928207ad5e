//! `.tar`, `.tar.gz` and `.tgz`: one pass over the stream, entries handed to the builder as
//! they come. Concatenated gzip members (what `cat a.gz b.gz` or pigz may write) are one stream.

use super::build::{Builder, Flow, Skip};
use super::error::ArchiveError;
use std::io::{BufReader, Read};

/// Reads every entry of the archive in `f` into `b`. The error is the cause, without the path.
pub fn read(f: impl Read, gz: bool, b: &mut Builder) -> Result<(), ArchiveError> {
    if gz {
        // Inflated in large blocks: tar asks for 512 bytes at a time, and each call into the
        // decoder has a cost of its own.
        let gz = flate2::read::MultiGzDecoder::new(f);
        entries(BufReader::with_capacity(1 << 18, gz), ".tar.gz", b)
    } else {
        entries(f, ".tar", b)
    }
}

/// `what`: the format, as the error names it.
fn entries<R: Read>(r: R, what: &'static str, b: &mut Builder) -> Result<(), ArchiveError> {
    let unreadable = |e: &std::io::Error| ArchiveError::Unreadable {
        what,
        cause: cause(e),
    };
    let mut ar = tar::Archive::new(r);
    let iter = ar.entries().map_err(|e| unreadable(&e))?;
    for entry in iter {
        let mut e = match entry {
            Ok(e) => e,
            Err(err) if b.is_empty() => return Err(unreadable(&err)),
            Err(err) => {
                b.stop(format!("damaged after this point: {}", cause(&err)));
                return Ok(());
            }
        };
        let Ok(path) = e.path().map(|p| p.into_owned()) else {
            b.stop("an entry name is unreadable: the rest is not read".into());
            return Ok(());
        };
        use tar::EntryType::*;
        let flow = match e.header().entry_type() {
            Regular | Continuous => {
                let size = e.size();
                b.file(&path, size, true, &mut e)
            }
            Directory => b.dir(&path),
            Symlink | Link => b.skip(&path, Skip::Link),
            // Metadata of the next entry, already applied by the reader.
            XGlobalHeader | XHeader | GNULongName | GNULongLink => Flow::Go,
            _ => b.skip(&path, Skip::Special),
        };
        if flow == Flow::Stop {
            return Ok(());
        }
    }
    Ok(())
}

/// The innermost cause of a reader error, which says what is wrong with the bytes, without
/// the damaged bytes themselves (tar quotes a bad header field, which may be garbage).
fn cause(e: &std::io::Error) -> String {
    let mut msg = e.to_string();
    let mut src = std::error::Error::source(e);
    while let Some(s) = src {
        msg = s.to_string();
        src = s.source();
    }
    match msg.split_once(": ") {
        Some((head, _)) if msg.len() > 60 || msg.chars().any(char::is_control) => head.into(),
        _ => msg,
    }
}
