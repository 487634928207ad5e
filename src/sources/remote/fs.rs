//! The file door's remote half: what `sources::vfs` does for a path under an `/ssh:…` mount,
//! each a request to the agent. Errors come back as `io::Error`s of the kind the server met, so
//! the callers' messages read the same as for a local tree.

use super::proto::{Failure, Reply, Request};
pub use super::target::Host;
use super::target::{self, ServerPath};
use crate::sources::entry::{Entry, Kind};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

/// A remote file larger than this is not copied over the link as bytes: tensors are summarised
/// on the server ([`summarize`]); a graph or a log is far smaller.
pub const BYTES_CAP: u64 = 256 << 20;

/// The host and server path of `path`, `None` for a local path.
pub fn locate(path: &Path) -> Option<(Host, ServerPath)> {
    target::split(path)
}

/// The server path of `path` when it lies on `host` (`None`: local, or on another server).
pub fn path_on(host: &Host, path: &Path) -> Option<ServerPath> {
    locate(path).filter(|(h, _)| h == host).map(|(_, s)| s)
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

/// Statistics of tensor files, computed on the server; one result per path, in order.
pub fn summarize(
    host: &Host,
    paths: &[String],
) -> io::Result<Vec<Result<crate::model::tensor::TensorSummary, Failure>>> {
    match call(
        host,
        Request::Summarize {
            paths: paths.to_vec(),
        },
    )? {
        (Reply::Summaries(v), _) if v.len() == paths.len() => Ok(v),
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

/// A 2-D slice of a tensor on the server; its values cross as raw f64s (deflated), at most
/// [`SLICE_CAP`] of them.
pub fn slice(
    host: &Host,
    path: &str,
    lead: &[u64],
    limit: usize,
) -> io::Result<Result<crate::model::tensor::Slice2d, Failure>> {
    let req = Request::Slice {
        path: path.into(),
        lead: lead.to_vec(),
        limit: limit.min(SLICE_CAP) as u64,
    };
    match call(host, req)? {
        (Reply::Slice(Ok(mut s)), payload) => {
            s.values = payload
                .chunks_exact(8)
                .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
                .collect();
            Ok(Ok(s))
        }
        (Reply::Slice(Err(e)), _) => Ok(Err(e)),
        (other, _) => Err(unexpected(host, &other)),
    }
}

/// Values of a slice sent over a link: 1 MB of f64s, a 362 × 362 heatmap.
pub const SLICE_CAP: usize = 1 << 17;

/// Two tensors on the server compared there.
pub fn compare(
    host: &Host,
    a: &str,
    b: &str,
) -> io::Result<Result<crate::model::tensor::TensorCompare, Failure>> {
    match call(
        host,
        Request::CompareTensors {
            a: a.into(),
            b: b.into(),
        },
    )? {
        (Reply::Compared(r), _) => Ok(r),
        (other, _) => Err(unexpected(host, &other)),
    }
}

/// Sends the streaming request `req` and hands each `Item`'s payload to `each` until the stream
/// ends. When `cancel` is set the request is stopped on the server and this returns `Ok`.
pub fn items(
    host: &Host,
    req: Request,
    cancel: &AtomicBool,
    mut each: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    let link = super::link(host).map_err(|e| e.into_io())?;
    let (id, rx) = link.stream(req).map_err(|e| e.into_io())?;
    loop {
        let stop = match rx.recv_timeout(Duration::from_millis(100)) {
            Ok((Reply::Item, payload)) => each(&payload).err(),
            Ok((Reply::End, _)) => return Ok(()),
            Ok((Reply::Failed { kind, message }, _)) => {
                return Err(io::Error::new(kind.io_kind(), message));
            }
            Ok((other, _)) => Some(unexpected(host, &other)),
            Err(RecvTimeoutError::Timeout) if cancel.load(Ordering::Relaxed) => {
                link.cancel(id);
                return Ok(());
            }
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => return Err(link.dropped().into_io()),
        };
        if let Some(e) = stop {
            link.cancel(id);
            return Err(e);
        }
    }
}

/// A request answered by one JSON value per item (in the form of the layer above that asked)
/// and a payload.
fn json(host: &Host, req: Request, items: usize) -> io::Result<(Vec<serde_json::Value>, Vec<u8>)> {
    match call(host, req)? {
        (Reply::Json(v), payload) if v.len() == items => Ok((v, payload)),
        (other, _) => Err(unexpected(host, &other)),
    }
}

/// Facts of graph files parsed on the server, one JSON value per path in order (their form is
/// `pipeline::facts`'s).
pub fn facts(host: &Host, paths: &[String]) -> io::Result<Vec<serde_json::Value>> {
    let req = Request::Facts {
        paths: paths.to_vec(),
    };
    Ok(json(host, req, paths.len())?.0)
}

/// The `fx_graph_name` of each `output_code.py` in `paths`, read on the server, in order.
pub fn graph_names(host: &Host, paths: &[String]) -> io::Result<Vec<Option<String>>> {
    let req = Request::GraphNames {
        paths: paths.to_vec(),
    };
    match call(host, req)? {
        (Reply::GraphNames(v), _) if v.len() == paths.len() => Ok(v),
        (other, _) => Err(unexpected(host, &other)),
    }
}

/// Facts and pass-to-pass diff counts of whole phases (each a list of passes), parsed and
/// diffed on the server, one JSON value per phase in order (`pipeline::facts`'s form).
pub fn phase_facts(host: &Host, phases: &[Vec<String>]) -> io::Result<Vec<serde_json::Value>> {
    let req = Request::PhaseFacts {
        phases: phases.to_vec(),
    };
    Ok(json(host, req, phases.len())?.0)
}

/// Accuracy-compare pairs computed on the server, one JSON value per pair in order (their form
/// is `pipeline::compare::remote`'s).
pub fn compare_pairs(
    host: &Host,
    pairs: &[(String, String)],
) -> io::Result<Vec<serde_json::Value>> {
    let req = Request::ComparePairs {
        pairs: pairs.to_vec(),
    };
    Ok(json(host, req, pairs.len())?.0)
}

/// One accuracy pair's difference computed on the server: its JSON value and the payload.
pub fn delta(
    host: &Host,
    target: &str,
    golden: &str,
    lead: Option<&[u64]>,
) -> io::Result<(serde_json::Value, Vec<u8>)> {
    let req = Request::Delta {
        target: target.into(),
        golden: golden.into(),
        lead: lead.map(<[u64]>::to_vec),
    };
    let (mut v, payload) = json(host, req, 1)?;
    Ok((v.remove(0), payload))
}

/// A batch request that failed: every path it asked for gets this (shared) error.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct AskFailed(pub std::sync::Arc<io::Error>);

/// Asks each server for its share of `paths` in one request (`ask`: a batch call above) and
/// returns the answers in `paths`' order: `None` for a local path, the request's error for each
/// path of a request that failed.
pub fn ask_by_host<P: AsRef<Path>, T>(
    paths: &[P],
    ask: impl Fn(&Host, &[String]) -> io::Result<Vec<T>>,
) -> Vec<Option<Result<T, AskFailed>>> {
    let mut out: Vec<Option<Result<T, AskFailed>>> = paths.iter().map(|_| None).collect();
    let mut by_host: std::collections::BTreeMap<String, (Host, Vec<(usize, String)>)> =
        Default::default();
    for (i, p) in paths.iter().enumerate() {
        if let Some((host, rp)) = locate(p.as_ref()) {
            by_host
                .entry(host.authority())
                .or_insert_with(|| (host, Vec::new()))
                .1
                .push((i, rp.into_string()));
        }
    }
    for (host, items) in by_host.into_values() {
        let asked: Vec<String> = items.iter().map(|(_, p)| p.clone()).collect();
        match ask(&host, &asked) {
            Ok(answers) => {
                for ((i, _), a) in items.iter().zip(answers) {
                    out[*i] = Some(Ok(a));
                }
            }
            Err(e) => {
                let e = AskFailed(std::sync::Arc::new(e));
                for (i, _) in &items {
                    out[*i] = Some(Err(e.clone()));
                }
            }
        }
    }
    out
}
