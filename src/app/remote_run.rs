//! A compile run on a server (the Run form's script is an `ssh://` path), run by its agent
//! (`pipeline::run`): its events are the `RunEvent`s a local run sends. Stop (and dropping the
//! run) cancels it: the agent kills its whole process group.

use crate::pipeline::remote;
use crate::runner::process::RunEvent;
use crate::runner::spec::RunSpec;
use crate::sources::remote::target;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub struct RemoteRun {
    cancel: Arc<AtomicBool>,
}

impl RemoteRun {
    /// Cancels the run; the agent stops its process group (TERM, then KILL).
    pub fn stop(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl Drop for RemoteRun {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The server of `spec`'s script, when it is a remote path.
pub fn host_of(spec: &RunSpec) -> Option<target::Host> {
    target::host_of(&spec.script)
}

/// Starts `spec` on its server; every event goes to `sink` (from a thread of its own). Blocks
/// for the connect: call it from a job.
pub fn start(
    spec: &RunSpec,
    sink: impl Fn(RunEvent) + Send + 'static,
) -> Result<RemoteRun, String> {
    let host = host_of(spec).ok_or("not a remote script")?;
    // Connecting here, so that a server that cannot be reached is the start's error.
    crate::sources::remote::link(&host).map_err(|e| e.to_string())?;
    let cancel = Arc::new(AtomicBool::new(false));
    let (spec, stop) = (spec.clone(), cancel.clone());
    std::thread::spawn(move || {
        let mut ended = false;
        let done = remote::there::<crate::pipeline::run::Run>(spec, &stop, |event| {
            ended |= matches!(event, RunEvent::Exited { .. } | RunEvent::Failed(_));
            sink(event);
            Ok(())
        });
        let why = match done {
            _ if ended => return,
            // The link died under the run: the agent has killed it.
            Some(Err(e)) => format!("{}; the run on the server was stopped", e.error),
            Some(Ok(())) => "stopped; the server did not say how the run ended".into(),
            None => "not a remote script".into(),
        };
        sink(RunEvent::Failed(why));
    });
    Ok(RemoteRun { cancel })
}
