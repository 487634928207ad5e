//! The agent's loop: read a request, answer it on a worker, until the input closes.

use super::out::Out;
use crate::error::{Error, Result};
use crate::sources::discover;
use crate::sources::remote::proto::{
    About, Ask, FailKind, PROTOCOL, Reply, Request, WatchNews, WireEntry,
};
use crate::sources::remote::wire;
use crate::sources::vfs;
use crate::sources::watch::{WatchConfig, WatchEvent, Watcher};
use std::collections::HashMap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Serves requests from `input`, answering to `output`, until `input` ends.
pub fn serve(input: impl Read + Send + 'static, output: impl Write + Send + 'static) -> Result<()> {
    let mut writer: Box<dyn Write + Send> = Box::new(BufWriter::new(output));
    wire::write_greeting(&mut writer, PROTOCOL).map_err(|e| Error::Internal(e.to_string()))?;
    let out = Out(Arc::new(Mutex::new(writer)));
    let streams: Streams = Arc::default();
    let mut input = BufReader::new(input);
    loop {
        let ask = match wire::read_frame::<Ask>(&mut input) {
            Ok(Some((frame, _))) => frame.header,
            Ok(None) => break,
            Err(e) => {
                eprintln!("fxray agent: {e}");
                break;
            }
        };
        match ask.req {
            Request::Cancel { id } => {
                if let Some(flag) = streams.lock().expect("streams").get(&id) {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            Request::Watch { root } => stream(ask.id, &streams, &out, move |id, stop, out| {
                watch(id, Path::new(&root), stop, out)
            }),
            Request::Op { name, args } => stream(ask.id, &streams, &out, move |id, stop, out| {
                let send = |item: Vec<u8>| out.send(id, Reply::Item, &item);
                let done = match crate::pipeline::remote::find(&name) {
                    Some(serve) => serve(args, stop, &send),
                    None => Err(crate::pipeline::failure::Failure::Agent(format!(
                        "this agent does not know `{name}`: install the fxray of this \
                             client on the server"
                    ))),
                };
                if let Err(failure) = done {
                    let (kind, message) = (FailKind::InvalidData, failure.to_string());
                    out.send(id, Reply::Failed { kind, message }, &[]);
                }
            }),
            req => {
                let out = out.clone();
                rayon::spawn(move || {
                    let (reply, payload) = answer(req);
                    out.send(ask.id, reply, &payload);
                });
            }
        }
    }
    // The client is gone: every stream stops, and a run's process group is killed before the
    // agent exits (its threads would not outlive the process to do it).
    for flag in streams.lock().expect("streams").values() {
        flag.store(true, Ordering::Relaxed);
    }
    let t = std::time::Instant::now();
    while !streams.lock().expect("streams").is_empty() && t.elapsed().as_secs() < 5 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(())
}

type Streams = Arc<Mutex<HashMap<u64, Arc<AtomicBool>>>>;

/// Runs a streaming request on a thread of its own, cancellable by its id; `End` follows its
/// last reply.
fn stream(
    id: u64,
    streams: &Streams,
    out: &Out,
    work: impl FnOnce(u64, &AtomicBool, &Out) + Send + 'static,
) {
    let stop = Arc::new(AtomicBool::new(false));
    streams.lock().expect("streams").insert(id, stop.clone());
    let (out, streams) = (out.clone(), streams.clone());
    std::thread::spawn(move || {
        work(id, &stop, &out);
        out.send(id, Reply::End, &[]);
        streams.lock().expect("streams").remove(&id);
    });
}

fn failed(e: &std::io::Error) -> Reply {
    Reply::Failed {
        kind: FailKind::of(e),
        message: e.to_string(),
    }
}

/// fxray's own error as a reply; its message without the leading path (the client puts its
/// own `ssh://…` address there).
fn failed_with(path: &str, e: &Error) -> Reply {
    let text = e.to_string();
    let message = text
        .strip_prefix(path)
        .and_then(|t| t.strip_prefix(": "))
        .unwrap_or(&text)
        .to_string();
    Reply::Failed {
        kind: FailKind::Other,
        message,
    }
}

fn wire_entries(entries: Vec<vfs::Entry>) -> Vec<WireEntry> {
    entries
        .into_iter()
        .map(|e| WireEntry {
            path: e.path.to_string_lossy().into_owned(),
            kind: e.kind,
            size: e.size,
            depth: e.depth as u32,
        })
        .collect()
}

/// One request's answer and its payload.
fn answer(req: Request) -> (Reply, Vec<u8>) {
    let reply = match req {
        Request::About => Reply::About(about()),
        Request::Ping => Reply::Pong,
        Request::Stat { path } => match vfs::stat(Path::new(&path)) {
            Ok((kind, size)) => Reply::Stat { kind, size },
            Err(e) => failed(&e),
        },
        Request::OpenRoot { path } => match vfs::open_root(Path::new(&path)) {
            Ok(w) => Reply::Warnings(w),
            Err(e) => failed_with(&path, &e),
        },
        Request::ReadDir { path } => match vfs::read_dir(Path::new(&path)) {
            Ok(entries) => Reply::Entries {
                entries: wire_entries(entries),
                warnings: Vec::new(),
            },
            Err(e) => failed(&e),
        },
        Request::Scan { root } => match discover::scan(Path::new(&root)) {
            Ok(set) => Reply::Entries {
                entries: set
                    .files
                    .into_iter()
                    .map(|(path, f)| WireEntry {
                        path: path.to_string_lossy().into_owned(),
                        kind: crate::sources::entry::Kind::File,
                        size: f.size,
                        depth: 0,
                    })
                    .collect(),
                warnings: set.warnings,
            },
            Err(e) => failed_with(&root, &e),
        },
        Request::Walk {
            root,
            max_depth,
            sizes,
        } => {
            let mut warnings = Vec::new();
            let how = vfs::Walk {
                max_depth: max_depth as usize,
                sizes,
            };
            let entries = vfs::walk(Path::new(&root), how, |_| true, &mut warnings);
            Reply::Entries {
                entries: wire_entries(entries),
                warnings,
            }
        }
        Request::Read { path, limit } => {
            return match vfs::read_limited(Path::new(&path), limit) {
                Ok(bytes) => (Reply::Bytes, bytes),
                Err(e) => (failed_with(&path, &e), Vec::new()),
            };
        }
        // Streams and cancels are taken by the loop.
        Request::Watch { .. } | Request::Op { .. } | Request::Cancel { .. } => Reply::Failed {
            kind: FailKind::Other,
            message: "not a one-answer request".into(),
        },
    };
    (reply, Vec::new())
}

fn about() -> About {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_default();
    About {
        version: env!("CARGO_PKG_VERSION").to_string(),
        host,
        os: std::env::consts::OS.to_string(),
        arch: std::env::consts::ARCH.to_string(),
    }
}

/// Watches `root` on this machine until `stop`, sending each batch of changes.
fn watch(id: u64, root: &Path, stop: &AtomicBool, out: &Out) {
    let set = match discover::scan(root) {
        Ok(set) => set,
        Err(e) => {
            out.send(id, Reply::Watch(WatchNews::Failed(e.to_string())), &[]);
            return;
        }
    };
    let sink_out = out.clone();
    let _watcher = Watcher::start(set, WatchConfig::default(), move |ev| {
        let news = match ev {
            WatchEvent::Started(b) => WatchNews::Started(b.to_string()),
            WatchEvent::Failed(m) => WatchNews::Failed(m),
            WatchEvent::Update(u) => {
                // The size the client's file set keeps: as the file is now.
                let size = |p: &Path| vfs::stat(p).map_or(0, |(_, n)| n);
                let changes = u
                    .changes
                    .iter()
                    .map(|c| {
                        (
                            c.kind.as_str().to_string(),
                            c.path.to_string_lossy().into_owned(),
                            size(&c.path),
                        )
                    })
                    .collect();
                let writing = u
                    .writing
                    .iter()
                    .map(|p| p.to_string_lossy().into_owned())
                    .collect();
                WatchNews::Changes { changes, writing }
            }
        };
        sink_out.send(id, Reply::Watch(news), &[]);
    });
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}
