//! The one door to the files a view reads: a path inside an archive (`/x/run.tar.gz/a/b.txt`)
//! is served from the mounted archive, a path under `/ssh:host` by the agent on that server
//! (`sources::remote`), any other from the disk. Every reader in `sources` (and the few
//! existence checks above it) goes through here, so an archive and a remote tree are folders
//! to all of them. Nothing here writes.

use super::archive::{self, Data, Node};
use super::remote::fs as remote;
use crate::error::{Error, Result};
use crate::model::npy::Bytes;
use crate::model::size::human_bytes;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

pub use super::entry::{Entry, Kind};

fn not_found() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "no such entry in the archive")
}

/// The archive node at `path`, `None` for a disk path.
fn node_at(path: &Path) -> Option<io::Result<(std::sync::Arc<archive::Archive>, PathBuf)>> {
    archive::locate(path).map(|r| r.map_err(io::Error::other))
}

/// True when `path` is an archive fxray opens in place, or lies inside one.
pub fn is_archived(path: &Path) -> bool {
    remote::locate(path).is_none() && archive::lies_in_archive(path)
}

/// Reads (or, if its file changed, re-reads) the archive `root` is or lies in, and returns what
/// it could not read, one line each; nothing for a disk path.
pub fn open_root(root: &Path) -> Result<Vec<String>> {
    if let Some((host, p)) = remote::locate(root) {
        return remote::open_root(&host, &p)
            .map_err(|e| Error::user(format!("{}: {e}", super::remote::display(root))));
    }
    match archive::refresh(root) {
        None => Ok(Vec::new()),
        Some(Ok(a)) => Ok(a.warnings.clone()),
        Some(Err(e)) => Err(Error::user(format!("{}: {e}", root.display()))),
    }
}

/// Frees the archives read for trees no longer open (all but the one `open_root` lies in).
pub fn release_others(open_root: &Path) {
    archive::unmount_others(open_root);
}

/// What `path` is, following links on disk, with its size. An archive file is a folder.
pub fn stat(path: &Path) -> io::Result<(Kind, u64)> {
    if let Some((host, p)) = remote::locate(path) {
        return remote::stat(&host, &p);
    }
    // The archive itself is a folder without being read: asking whether it exists (the window
    // does, before it opens) must not wait for its whole stream.
    if archive::is_archive_file(path) {
        return Ok((Kind::Dir, 0));
    }
    match node_at(path) {
        None => {
            let m = std::fs::metadata(path)?;
            Ok(if m.is_dir() {
                (Kind::Dir, 0)
            } else if m.is_file() {
                (Kind::File, m.len())
            } else {
                (Kind::Other, 0)
            })
        }
        Some(found) => {
            let (a, rel) = found?;
            match a.node(&rel).ok_or_else(not_found)? {
                Node::Dir => Ok((Kind::Dir, 0)),
                Node::File { size, .. } => Ok((Kind::File, *size)),
            }
        }
    }
}

pub fn is_file(path: &Path) -> bool {
    stat(path).is_ok_and(|(k, _)| k == Kind::File)
}

pub fn is_dir(path: &Path) -> bool {
    stat(path).is_ok_and(|(k, _)| k == Kind::Dir)
}

pub fn exists(path: &Path) -> bool {
    stat(path).is_ok()
}

/// Reads a whole file of at most `limit` bytes; a bigger one is refused before it is read.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>> {
    let too_big = |len: u64| {
        Error::user(format!(
            "{}: {} is larger than the {} fxray reads as text",
            path.display(),
            human_bytes(len),
            human_bytes(limit)
        ))
    };
    let is_dir = || Error::user(format!("{}: is a folder, expected a file", path.display()));
    if let Some((host, p)) = remote::locate(path) {
        return remote::read(&host, &p, limit)
            .map_err(|e| Error::user(format!("{}: {e}", super::remote::display(path))));
    }
    if let Some(found) = node_at(path) {
        let (a, rel) = found.map_err(|e| Error::io(path, &e))?;
        return match a.node(&rel) {
            None => Err(Error::io(path, &not_found())),
            Some(Node::Dir) => Err(is_dir()),
            Some(Node::File { size, .. }) if *size > limit => Err(too_big(*size)),
            Some(Node::File { data, .. }) => match data {
                Data::Memory(b) => Ok(b.to_vec()),
                Data::Spilled(p) => std::fs::read(p).map_err(|e| Error::io(path, &e)),
            },
        };
    }
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, &e))?;
    if meta.is_dir() {
        return Err(is_dir());
    }
    if meta.len() > limit {
        return Err(too_big(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    // `take` guards against a file that grows while we read it.
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, &e))?;
    Ok(bytes)
}

/// A reader over a file, for formats read as a stream (trace logs). A folder is an error.
pub fn open(path: &Path) -> io::Result<Box<dyn Read + Send>> {
    let is_dir = || io::Error::new(io::ErrorKind::IsADirectory, "is a folder");
    if let Some((host, p)) = remote::locate(path) {
        let bytes = remote::read(&host, &p, remote::BYTES_CAP)?;
        return Ok(Box::new(io::Cursor::new(bytes)));
    }
    match node_at(path) {
        None => {
            let file = std::fs::File::open(path)?;
            if file.metadata().is_ok_and(|m| m.is_dir()) {
                return Err(is_dir());
            }
            Ok(Box::new(file))
        }
        Some(found) => {
            let (a, rel) = found?;
            match a.node(&rel).ok_or_else(not_found)? {
                Node::Dir => Err(is_dir()),
                Node::File { data, .. } => match data {
                    Data::Memory(b) => Ok(Box::new(io::Cursor::new(b.clone()))),
                    Data::Spilled(p) => Ok(Box::new(std::fs::File::open(p)?)),
                },
            }
        }
    }
}

/// A file's bytes for decoding in place: memory-mapped when at least `map_from` bytes (on disk,
/// or spilled from an archive to the cache), else read; an in-memory entry is shared, not copied.
pub fn bytes(path: &Path, map_from: u64) -> io::Result<Bytes> {
    if let Some((host, p)) = remote::locate(path) {
        return Ok(Box::new(remote::read(&host, &p, remote::BYTES_CAP)?));
    }
    let disk = match node_at(path) {
        None => path.to_path_buf(),
        Some(found) => {
            let (a, rel) = found?;
            match a.node(&rel).ok_or_else(not_found)? {
                Node::Dir => {
                    return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a folder"));
                }
                Node::File { data, .. } => match data {
                    Data::Memory(b) => return Ok(Box::new(b.clone())),
                    Data::Spilled(p) => p.clone(),
                },
            }
        }
    };
    let file = std::fs::File::open(&disk)?;
    let len = file.metadata()?.len();
    if len < map_from {
        return Ok(Box::new(std::fs::read(&disk)?));
    }
    // SAFETY: the mapping is read-only. A file shrunk by another process while mapped can
    // fault; dumps are written once and not changed (and spilled entries are fxray's own), the
    // usual trade-off of mmap. Populated: the pages are wired in one call, not one fault a page.
    Ok(Box::new(unsafe {
        memmap2::MmapOptions::new().populate().map(&file)
    }?))
}

/// The children of folder `dir`, sorted by name, with sizes. Links on disk are followed.
pub fn read_dir(dir: &Path) -> io::Result<Vec<Entry>> {
    if let Some((host, p)) = remote::locate(dir) {
        return remote::read_dir(&host, &p);
    }
    match node_at(dir) {
        None => {
            let mut out: Vec<Entry> = std::fs::read_dir(dir)?
                .flatten()
                .map(|e| {
                    let path = e.path();
                    let meta = std::fs::metadata(&path).ok();
                    let kind = kind_of(meta.as_ref().map(|m| m.file_type()));
                    let size = meta.filter(|m| m.is_file()).map_or(0, |m| m.len());
                    Entry {
                        path,
                        kind,
                        size,
                        depth: 1,
                    }
                })
                .collect();
            out.sort_by(|a, b| a.path.cmp(&b.path));
            Ok(out)
        }
        Some(found) => {
            let (a, rel) = found?;
            match a.node(&rel).ok_or_else(not_found)? {
                Node::File { .. } => Err(io::Error::new(
                    io::ErrorKind::NotADirectory,
                    "is a file, expected a folder",
                )),
                Node::Dir => Ok(archive_walk(&a, &rel, 1, &mut |_| true)),
            }
        }
    }
}

fn kind_of(t: Option<std::fs::FileType>) -> Kind {
    match t {
        Some(t) if t.is_dir() => Kind::Dir,
        Some(t) if t.is_file() => Kind::File,
        _ => Kind::Other,
    }
}

/// How [`walk`] goes.
#[derive(Debug, Clone, Copy)]
pub struct Walk {
    pub max_depth: usize,
    /// Sizes of files on disk (one more system call each); archives always have them.
    pub sizes: bool,
}

/// Everything under folder `root` (not `root` itself), depth-first with siblings by name, links
/// not followed. `enter` is asked about each folder: false leaves it (and what it holds) out.
/// Folders that cannot be listed are skipped with a line in `warnings`.
pub fn walk(
    root: &Path,
    how: Walk,
    mut enter: impl FnMut(&Entry) -> bool,
    warnings: &mut Vec<String>,
) -> Vec<Entry> {
    if let Some((host, p)) = remote::locate(root) {
        return remote::walk(&host, &p, how.max_depth, how.sizes, &mut enter, warnings);
    }
    if let Some(found) = node_at(root) {
        return match found {
            Ok((a, rel)) => archive_walk(&a, &rel, how.max_depth, &mut enter),
            Err(e) => {
                warnings.push(format!("{}: {e}", root.display()));
                Vec::new()
            }
        };
    }
    let mut out = Vec::new();
    let mut it = walkdir::WalkDir::new(root)
        .min_depth(1)
        .max_depth(how.max_depth)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter();
    while let Some(next) = it.next() {
        let e = match next {
            Ok(e) => e,
            Err(err) => {
                warnings.push(walk_warning(&err));
                continue;
            }
        };
        let kind = kind_of(Some(e.file_type()));
        let size = if how.sizes && kind == Kind::File {
            e.metadata().map(|m| m.len()).unwrap_or(0)
        } else {
            0
        };
        let entry = Entry {
            depth: e.depth(),
            path: e.into_path(),
            kind,
            size,
        };
        if entry.kind == Kind::Dir && !enter(&entry) {
            it.skip_current_dir();
            continue;
        }
        out.push(entry);
    }
    out
}

fn archive_walk(
    a: &archive::Archive,
    rel: &Path,
    max_depth: usize,
    enter: &mut dyn FnMut(&Entry) -> bool,
) -> Vec<Entry> {
    let base = rel.components().count();
    let mut out = Vec::new();
    let mut skipped: Option<&Path> = None;
    for (p, node) in a.under(rel) {
        if skipped.is_some_and(|s| p.starts_with(s)) {
            continue;
        }
        let depth = p.components().count() - base;
        if depth > max_depth {
            continue;
        }
        let (kind, size) = match node {
            Node::Dir => (Kind::Dir, 0),
            Node::File { size, .. } => (Kind::File, *size),
        };
        let entry = Entry {
            path: a.root.join(p),
            kind,
            size,
            depth,
        };
        if kind == Kind::Dir && !enter(&entry) {
            skipped = Some(p);
            continue;
        }
        out.push(entry);
    }
    out
}

fn walk_warning(err: &walkdir::Error) -> String {
    let path = err
        .path()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    match err.io_error() {
        Some(io) if io.kind() == io::ErrorKind::PermissionDenied => {
            format!("{path}: permission denied; skipped")
        }
        Some(io) => format!("{path}: {io}; skipped"),
        None if err.loop_ancestor().is_some() => format!("{path}: symlink loop; skipped"),
        None => format!("{path}: {err}; skipped"),
    }
}
