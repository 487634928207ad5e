//! `.zip`: entries from the central directory; when it is missing (a cut file), from the local
//! headers in order, which recovers every entry before the cut.

use super::build::{Builder, Flow, Skip};
use super::error::ArchiveError;
use std::io::{Read, Seek};
use std::path::PathBuf;

/// `open` gives a fresh reader from the start: once for the central directory, once more for
/// the local headers when that fails.
pub fn read<R: Read + Seek>(
    open: impl Fn() -> Result<R, ArchiveError>,
    b: &mut Builder,
) -> Result<(), ArchiveError> {
    let central = match zip::ZipArchive::new(open()?) {
        Ok(mut z) => {
            for i in 0..z.len() {
                // Named first: the entry borrows the archive while it is read.
                let name = z
                    .name_for_index(i)
                    .and_then(Result::ok)
                    .map(|n| PathBuf::from(n.as_ref()))
                    .unwrap_or_else(|| PathBuf::from(format!("entry {i}")));
                match z.by_index(i) {
                    Ok(mut e) => {
                        if one(&mut e, true, b) == Flow::Stop {
                            return Ok(());
                        }
                    }
                    Err(zip::result::ZipError::UnsupportedArchive(_)) => {
                        if b.skip(&name, Skip::Unsupported) == Flow::Stop {
                            return Ok(());
                        }
                    }
                    Err(err) => {
                        b.stop(format!("entry {i} is unreadable: {err}"));
                        return Ok(());
                    }
                }
            }
            return Ok(());
        }
        Err(e) => e,
    };
    let mut r = open()?;
    b.read_as(format!(
        "no central directory ({central}): entries read from their local headers"
    ));
    loop {
        match zip::read::read_zipfile_from_stream(&mut r) {
            Ok(Some(mut e)) => {
                // A local header may leave the size to a descriptor after the data (0 here).
                let exact = e.size() > 0;
                if one(&mut e, exact, b) == Flow::Stop {
                    return Ok(());
                }
            }
            Ok(None) => break,
            Err(_) if b.is_empty() => return Err(unreadable(&central)),
            Err(err) => {
                b.stop(format!("damaged after this point: {err}"));
                return Ok(());
            }
        }
    }
    if b.is_empty() {
        return Err(unreadable(&central));
    }
    Ok(())
}

fn unreadable(central: &zip::result::ZipError) -> ArchiveError {
    ArchiveError::Unreadable {
        what: ".zip",
        cause: central.to_string(),
    }
}

/// `exact`: the size read from the archive is the entry's (more bytes are a lie).
fn one<R: Read>(e: &mut zip::read::ZipFile<'_, R>, exact: bool, b: &mut Builder) -> Flow {
    let Ok(name) = e.name().map(|n| PathBuf::from(n.as_ref())) else {
        b.stop("an entry name is unreadable: the rest is not read".into());
        return Flow::Stop;
    };
    if e.is_symlink() {
        b.skip(&name, Skip::Link)
    } else if e.is_dir() {
        b.dir(&name)
    } else {
        let size = e.size();
        b.file(&name, size, exact, e)
    }
}
