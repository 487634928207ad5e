//! A compile run on the server for a client: started as the Run panel starts one locally, its
//! events streamed back, stopped (its whole process group) when the client cancels it or the
//! link dies.

use super::out::Out;
use crate::runner::process::{Exit, RunEvent, RunHandle, Stream};
use crate::runner::spec::RunSpec;
use crate::sources::remote::proto::{Reply, RunNews};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

fn news(e: RunEvent) -> RunNews {
    match e {
        RunEvent::Started { pid } => RunNews::Started { pid },
        RunEvent::Line { stream, text } => RunNews::Line {
            stderr: stream == Stream::Stderr,
            text,
        },
        RunEvent::RunFolder(p) => RunNews::RunFolder(p.to_string_lossy().into_owned()),
        RunEvent::Exited { exit, elapsed } => RunNews::Exited {
            code: match exit {
                Exit::Code(c) => Some(c),
                Exit::Signal(_) => None,
            },
            signal: match exit {
                Exit::Signal(s) => Some(s),
                Exit::Code(_) => None,
            },
            elapsed_ms: elapsed.as_millis() as u64,
        },
        RunEvent::Failed(m) => RunNews::Failed(m),
    }
}

/// Runs `spec` until it ends or `stop` is set; every event goes to the client as request `id`.
pub(super) fn run(id: u64, spec: serde_json::Value, stop: &AtomicBool, out: &Out) {
    let fail = |m: String| out.send(id, Reply::Run(RunNews::Failed(m)), &[]);
    let spec: RunSpec = match serde_json::from_value(spec) {
        Ok(s) => s,
        Err(e) => return fail(format!("not a run of this fxray version: {e}")),
    };
    let python = match crate::runner::python::resolve(spec.python.as_deref()) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    if !spec.script.is_file() {
        return fail(format!(
            "no such script on the server: {}",
            spec.script.display()
        ));
    }
    // The launcher goes into fxray's cache folder on the server, never the served tree.
    let launcher = match crate::runner::launcher_path() {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let ended = Arc::new(AtomicBool::new(false));
    let (sink_out, sink_ended) = (out.clone(), ended.clone());
    let handle = RunHandle::start(&spec.launch(&python, &launcher), move |e| {
        let last = matches!(e, RunEvent::Exited { .. } | RunEvent::Failed(_));
        sink_out.send(id, Reply::Run(news(e)), &[]);
        if last {
            sink_ended.store(true, Ordering::SeqCst);
        }
    });
    while !ended.load(Ordering::SeqCst) {
        if stop.load(Ordering::Relaxed) {
            handle.stop(Duration::from_millis(500));
            // Wait for the group's end (SIGKILL after the grace), reported as Exited.
            for _ in 0..60 {
                if ended.load(Ordering::SeqCst) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // Dropping the handle kills whatever of the group is left.
    drop(handle);
}
