//! Pipeline work run where the files are: a remote tree's graphs are parsed, its tensors
//! compared and its compiles launched by the agent on the server, and only the results cross.
//!
//! A feature that should run there implements [`Op`] once (its name, its arguments, the items
//! it streams, and the function that does the work here) and adds one line to [`table`]. The
//! caller asks [`there`] (one request) or [`each_there`] (a list, one request per server); both
//! say `None` when the paths are local, and the caller does the work itself. The protocol
//! carries any op in one request (`sources::remote::proto::Request::Op`) and the agent
//! dispatches on [`table::find`]: `sources::remote` knows only what a file door needs.
//!
//! Arguments cross as JSON in the request's header (paths, numbers, flags), items as postcard
//! in payloads (exact: NaN, ±∞ and every bit of a float survive).

mod table;

pub use table::{Serve, find};

use crate::pipeline::failure::Failure;
use crate::sources::remote::fs::{self as link, Host};
use crate::sources::remote::proto::Request;
use crate::sources::remote::{target, wire};
use serde::{Serialize, de::DeserializeOwned};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A piece of pipeline work that can run on the server its files lie on.
pub trait Op: 'static {
    /// What the agent dispatches on. A name keeps its meaning: a changed meaning is a new name
    /// (or a `PROTOCOL` bump).
    const NAME: &'static str;
    type Args: Serialize + DeserializeOwned + Send;
    type Item: Serialize + DeserializeOwned + Send;

    /// The paths of `args` that must lie on the server for it to do the work there; the runner
    /// puts the server's names in before sending.
    fn paths(args: &mut Self::Args) -> Vec<&mut PathBuf>;

    /// Whether the items the server sends after a cancel are still wanted (a run's exit, once
    /// it is stopped); else a cancelled op is left at once.
    const FINISH_WHEN_CANCELLED: bool = false;

    /// The server paths an item names, which the runner turns back into the client's.
    fn item_paths(_item: &mut Self::Item) -> Vec<&mut PathBuf> {
        Vec::new()
    }

    /// The work, on this machine (its paths are this machine's), each item handed to `send`
    /// as it is ready, until done or `stop`.
    fn run(args: Self::Args, stop: &AtomicBool, send: &(dyn Fn(Self::Item) + Sync));
}

/// Work that reads each file of a list on its own (the graph an `output_code.py` names, a
/// graph's interface): [`EachFile`] runs it on a server for a whole list in one request, and
/// [`read_each`] reads a list wherever its files are.
pub trait PerFile: 'static {
    /// The name of its [`EachFile`] op.
    const NAME: &'static str;
    type Out: Serialize + DeserializeOwned + Send;

    /// What the file at `path` (a path of this machine) says.
    fn read(path: &Path) -> Self::Out;
}

/// The op of a [`PerFile`] reading: one item per file, in order.
pub struct EachFile<F>(std::marker::PhantomData<F>);

impl<F: PerFile> Op for EachFile<F> {
    const NAME: &'static str = F::NAME;
    type Args = Vec<PathBuf>;
    type Item = F::Out;

    fn paths(files: &mut Vec<PathBuf>) -> Vec<&mut PathBuf> {
        files.iter_mut().collect()
    }

    fn run(files: Vec<PathBuf>, _stop: &AtomicBool, send: &(dyn Fn(F::Out) + Sync)) {
        use rayon::prelude::*;
        let all: Vec<F::Out> = files.par_iter().map(|p| F::read(p)).collect();
        all.into_iter().for_each(send);
    }
}

/// `F::read` of each of `paths`, in order: the files of a tree on a server read there (one
/// request per server), the others (and those of a server that could not answer) here.
pub fn read_each<F: PerFile>(paths: &[PathBuf]) -> Vec<F::Out> {
    use rayon::prelude::*;
    let far = each_there::<EachFile<F>, _>(paths);
    paths
        .par_iter()
        .zip(far)
        .map(|(p, far)| match far {
            Some(Ok(answer)) => answer,
            _ => F::read(p),
        })
        .collect()
}

/// An op the server could not finish: the link or the agent failed.
#[derive(Debug, thiserror::Error)]
#[error("ssh://{host}: {error}")]
pub struct Failed {
    pub host: String,
    #[source]
    pub error: io::Error,
}

/// The server all of `args`' paths lie on, their names there put in; `None` when one is local,
/// they lie on several servers, or there is none.
fn to_server<O: Op>(args: &mut O::Args) -> Option<Host> {
    let mut host: Option<Host> = None;
    let mut renamed = Vec::new();
    for p in O::paths(args) {
        let (h, on_server) = target::split(p)?;
        if host.as_ref().is_some_and(|k| *k != h) {
            return None;
        }
        host = Some(h);
        renamed.push((p, PathBuf::from(on_server.as_str())));
    }
    for (p, s) in renamed {
        *p = s;
    }
    host
}

/// Runs `args` on `host` (its paths already the server's), each item to `each` as it arrives.
fn run_on<O: Op>(
    host: &Host,
    args: &O::Args,
    cancel: &AtomicBool,
    mut each: impl FnMut(O::Item) -> io::Result<()>,
) -> io::Result<()> {
    let req = Request::Op {
        name: O::NAME.to_string(),
        args: serde_json::to_value(args).map_err(io::Error::other)?,
    };
    link::items(host, req, cancel, O::FINISH_WHEN_CANCELLED, |bytes| {
        let mut item: O::Item = wire::from_item(bytes)?;
        for p in O::item_paths(&mut item) {
            *p = target::mount_path(host, &p.to_string_lossy());
        }
        each(item)
    })
}

/// Runs `args` on the server their paths lie on, handing each item to `each` as it arrives;
/// `None` when they do not all lie on one server (the caller does the work here). When
/// `cancel` is set the op is stopped on the server and this returns `Ok`.
pub fn there<O: Op>(
    mut args: O::Args,
    cancel: &AtomicBool,
    each: impl FnMut(O::Item) -> io::Result<()>,
) -> Option<Result<(), Failed>> {
    let host = to_server::<O>(&mut args)?;
    Some(
        run_on::<O>(&host, &args, cancel, each).map_err(|error| Failed {
            host: host.authority(),
            error,
        }),
    )
}

/// The one item of an op that answers once, run on the server its paths lie on; `None` when
/// they do not all lie on one server.
pub fn one<O: Op>(mut args: O::Args) -> Option<Result<O::Item, Failed>> {
    let host = to_server::<O>(&mut args)?;
    let mut answer = None;
    let done = run_on::<O>(&host, &args, &AtomicBool::new(false), |item| {
        answer = Some(item);
        Ok(())
    });
    let failed = |error| Failed {
        host: host.authority(),
        error,
    };
    Some(match (done, answer) {
        (Ok(()), Some(item)) => Ok(item),
        (Err(e), _) => Err(failed(e)),
        (Ok(()), None) => Err(failed(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("the agent sent no answer to `{}`", O::NAME),
        ))),
    })
}

/// The answer of an op whose one item is a result, run on the server its paths lie on, as one
/// result (a failed link says so in it); `None` when they do not all lie on one server.
pub fn one_result<O, T>(args: O::Args) -> Option<Result<T, Failure>>
where
    O: Op<Item = Result<T, Failure>>,
{
    one::<O>(args).map(|r| r.map_err(Failure::from).and_then(|r| r))
}

/// A request for a list that failed: every element it carried gets this (shared) error.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct AskFailed(pub Arc<Failed>);

/// For an op over a list that answers one item per element in order: asks each server once
/// for the elements whose paths lie on it. One answer per element, in order: `None` for an
/// element to do here, the request's error for each element of a request that failed.
pub fn each_there<O, E>(elements: &[E]) -> Vec<Option<Result<O::Item, AskFailed>>>
where
    O: Op<Args = Vec<E>>,
    E: Clone,
{
    let mut out: Vec<Option<Result<O::Item, AskFailed>>> = elements.iter().map(|_| None).collect();
    let mut by_host: std::collections::BTreeMap<String, (Host, Vec<usize>, Vec<E>)> =
        Default::default();
    for (i, e) in elements.iter().enumerate() {
        let mut one = vec![e.clone()];
        if let Some(host) = to_server::<O>(&mut one) {
            let group = by_host
                .entry(host.mount_name())
                .or_insert_with(|| (host, Vec::new(), Vec::new()));
            group.1.push(i);
            group.2.extend(one);
        }
    }
    for (host, at, asked) in by_host.into_values() {
        let mut got = Vec::with_capacity(asked.len());
        let r = run_on::<O>(&host, &asked, &AtomicBool::new(false), |item| {
            got.push(item);
            Ok(())
        })
        .and_then(|()| {
            if got.len() == at.len() {
                Ok(())
            } else {
                Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "the agent answered {} of {} for `{}`",
                        got.len(),
                        at.len(),
                        O::NAME
                    ),
                ))
            }
        });
        match r {
            Ok(()) => {
                for (i, item) in at.into_iter().zip(got) {
                    out[i] = Some(Ok(item));
                }
            }
            Err(error) => {
                let e = AskFailed(Arc::new(Failed {
                    host: host.authority(),
                    error,
                }));
                for i in at {
                    out[i] = Some(Err(e.clone()));
                }
            }
        }
    }
    out
}

/// The server both paths lie on, if they lie on the same one.
pub fn same_server(a: &Path, b: &Path) -> Option<Host> {
    target::host_of(a).filter(|h| target::host_of(b).as_ref() == Some(h))
}

impl From<AskFailed> for Failure {
    fn from(e: AskFailed) -> Failure {
        Failure::from(Failed {
            host: e.0.host.clone(),
            error: std::io::Error::new(e.0.error.kind(), e.0.error.to_string()),
        })
    }
}

impl From<Failed> for Failure {
    /// An answer the agent could not give (`InvalidData`: an op it does not know or read, an
    /// answer cut short) is the agent's; anything else on the way is the link's.
    fn from(e: Failed) -> Failure {
        match e.error.kind() {
            std::io::ErrorKind::InvalidData => Failure::Agent(e.to_string()),
            _ => Failure::Link(e.to_string()),
        }
    }
}
