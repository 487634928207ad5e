//! The file door's remote half: what `sources::vfs` does for a path under an `/ssh:…` mount,
//! each a request to the agent. Errors come back as `io::Error`s of the kind the server met, so
//! the callers' messages read the same as for a local tree.

use super::proto::{Reply, Request};
pub use super::target::Host;
use super::target::{self, ServerPath};
use crate::sources::entry::{Entry, Kind};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

/// A remote file larger than this is not copied over the link as bytes: tensors are summarised
/// on the server (`pipeline::tensors`); a graph or a log is far smaller.
pub const BYTES_CAP: u64 = 256 << 20;

/// The host and server path of `path`, `None` for a local path.
pub fn locate(path: &Path) -> Option<(Host, ServerPath)> {
    target::split(path)
}

fn call(host: &Host, req: Request) -> io::Result<(Reply, Vec<u8>)> {
    let link = super::link(host).map_err(|e| e.into_io())?;
    match link.call(req).map_err(|e| e.into_io())? {
        (Reply::Failed { kind, message }, _) => Err(io::Error::new(kind.io_kind(), message)),
        ok => Ok(ok),
    }
}

fn unexpected(host: &Host, reply: &Reply) -> io::Error {
    super::RemoteError::unexpected(host, reply).into_io()
}

pub fn stat(host: &Host, path: &str) -> io::Result<(Kind, u64)> {
    match call(host, Request::Stat { path: path.into() })? {
        (Reply::Stat { kind, size }, _) => Ok((kind, size)),
        (other, _) => Err(unexpected(host, &other)),
    }
}

fn entries(host: &Host, reply: Reply) -> io::Result<(Vec<Entry>, Vec<String>)> {
    match reply {
        Reply::Entries { entries, warnings } => Ok((
            entries
                .into_iter()
                .map(|e| Entry {
                    path: target::mount_path(host, &e.path),
                    kind: e.kind,
                    size: e.size,
                    depth: e.depth as usize,
                })
                .collect(),
            warnings,
        )),
        other => Err(unexpected(host, &other)),
    }
}

/// The files `discover::scan` finds under `root` on the server, and its warnings.
pub fn scan(host: &Host, root: &str) -> io::Result<(Vec<Entry>, Vec<String>)> {
    let (reply, _) = call(host, Request::Scan { root: root.into() })?;
    entries(host, reply)
}

pub fn read_dir(host: &Host, path: &str) -> io::Result<Vec<Entry>> {
    let (reply, _) = call(host, Request::ReadDir { path: path.into() })?;
    Ok(entries(host, reply)?.0)
}

/// The whole tree in one round trip; `enter` is applied here, after the fact.
pub fn walk(
    host: &Host,
    root: &str,
    max_depth: usize,
    sizes: bool,
    enter: &mut dyn FnMut(&Entry) -> bool,
    warnings: &mut Vec<String>,
) -> Vec<Entry> {
    let req = Request::Walk {
        root: root.into(),
        max_depth: max_depth.min(u32::MAX as usize) as u32,
        sizes,
    };
    let (all, notes) = match call(host, req).and_then(|(r, _)| entries(host, r)) {
        Ok(x) => x,
        Err(e) => {
            warnings.push(format!("ssh://{}{root}: {e}", host.authority()));
            return Vec::new();
        }
    };
    warnings.extend(notes);
    let mut out = Vec::with_capacity(all.len());
    let mut skipped: Option<PathBuf> = None;
    for e in all {
        if skipped.as_ref().is_some_and(|s| e.path.starts_with(s)) {
            continue;
        }
        if e.kind == Kind::Dir && !enter(&e) {
            skipped = Some(e.path);
            continue;
        }
        out.push(e);
    }
    out
}

/// A whole file of at most `limit` bytes, decompressed.
pub fn read(host: &Host, path: &str, limit: u64) -> io::Result<Vec<u8>> {
    let limit = limit.min(BYTES_CAP);
    match call(
        host,
        Request::Read {
            path: path.into(),
            limit,
        },
    )? {
        (Reply::Bytes, bytes) => Ok(bytes),
        (other, _) => Err(unexpected(host, &other)),
    }
}

/// The warnings of opening `path` as a root (an archive on the server is read there).
pub fn open_root(host: &Host, path: &str) -> io::Result<Vec<String>> {
    match call(host, Request::OpenRoot { path: path.into() })? {
        (Reply::Warnings(w), _) => Ok(w),
        (other, _) => Err(unexpected(host, &other)),
    }
}

/// How long a stream stopped with `finish` may take to send its last items and end.
const FINISHING: Duration = Duration::from_secs(10);

/// Sends the streaming request `req` and hands each `Item`'s payload to `each` until the stream
/// ends. When `cancel` is set the request is stopped on the server and this returns `Ok`: at
/// once, or with `finish` after the items the server sends while it stops (a run's exit).
pub fn items(
    host: &Host,
    req: Request,
    cancel: &AtomicBool,
    finish: bool,
    mut each: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let link = super::link(host).map_err(|e| e.into_io())?;
    let (id, rx) = link.stream(req).map_err(|e| e.into_io())?;
    let mut stopped: Option<std::time::Instant> = None;
    loop {
        if stopped.is_none() && cancel.load(Ordering::Relaxed) {
            link.cancel(id);
            if !finish {
                return Ok(());
            }
            stopped = Some(std::time::Instant::now());
        }
        if stopped.is_some_and(|t| t.elapsed() > FINISHING) {
            return Ok(());
        }
        let stop = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok((Reply::Item, payload)) => each(&payload).err(),
            Ok((Reply::End, _)) => return Ok(()),
            Ok((Reply::Failed { kind, message }, _)) => {
                return Err(io::Error::new(kind.io_kind(), message));
            }
            Ok((other, _)) => Some(unexpected(host, &other)),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => return Err(link.dropped().into_io()),
        };
        if let Some(e) = stop {
            link.cancel(id);
            return Err(e);
        }
    }
}
