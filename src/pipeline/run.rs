//! A compile run on a server (the Run form's script is an `ssh://` path): its agent starts it
//! as the Run panel starts one locally and streams its events, which are the same `RunEvent`s,
//! so the Run panel, the console and the opening of run folders do not know the difference.
//! Cancelling stops its whole process group (TERM, then KILL), and so does a dropped link.

use super::remote::Op;
use crate::runner::process::{RunEvent, RunHandle};
use crate::runner::spec::RunSpec;
use crate::sources::remote::target;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub struct Run;

impl Op for Run {
    const NAME: &'static str = "run";
    type Args = RunSpec;
    type Item = RunEvent;
    /// Stopped, a run still reports how it ended (killed by a signal).
    const FINISH_WHEN_CANCELLED: bool = true;

    /// The script, and each other path that is a server's (`python` may be a bare name).
    fn paths(spec: &mut RunSpec) -> Vec<&mut PathBuf> {
        let others = [
            &mut spec.python,
            &mut spec.cwd,
            &mut spec.data_dump,
            &mut spec.debug_dir,
        ];
        std::iter::once(&mut spec.script)
            .chain(
                others
                    .into_iter()
                    .filter_map(Option::as_mut)
                    .filter(|p| target::is_remote(p)),
            )
            .collect()
    }

    fn item_paths(event: &mut RunEvent) -> Vec<&mut PathBuf> {
        match event {
            RunEvent::RunFolder(p) => vec![p],
            _ => Vec::new(),
        }
    }

    fn run(spec: RunSpec, stop: &AtomicBool, send: &(dyn Fn(RunEvent) + Sync)) {
        let launch = match spec.prepare() {
            Ok((_, launch)) => launch,
            Err(e) => return send(RunEvent::Failed(format!("on the server: {e}"))),
        };
        // The handle's sink outlives this call's borrow of `send`: events go through a channel.
        let (tx, rx) = std::sync::mpsc::channel();
        let ended = Arc::new(AtomicBool::new(false));
        let sink_ended = ended.clone();
        let handle = RunHandle::start(&launch, move |e| {
            let last = matches!(e, RunEvent::Exited { .. } | RunEvent::Failed(_));
            let _ = tx.send(e);
            if last {
                sink_ended.store(true, Ordering::SeqCst);
            }
        });
        let mut stopping: Option<u32> = None;
        loop {
            while let Ok(e) = rx.try_recv() {
                send(e);
            }
            if ended.load(Ordering::SeqCst) {
                break;
            }
            match &mut stopping {
                None if stop.load(Ordering::Relaxed) => {
                    handle.stop(Duration::from_millis(500));
                    stopping = Some(0);
                }
                // Waits for the group's end (KILL after the grace), reported as `Exited`.
                Some(waited) if *waited >= 60 => break,
                Some(waited) => *waited += 1,
                None => {}
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        while let Ok(e) = rx.try_recv() {
            send(e);
        }
        // Dropping the handle kills whatever of the group is left.
        drop(handle);
    }
}
