//! A compile run on a server (the Run form's script is an `ssh://` path): the agent starts it
//! there and streams its events; here they become the same `RunEvent`s a local run sends, so
//! the Run panel, the console and the opening of run folders do not know the difference.
//! Stop (and dropping the run) cancels it: the agent kills its whole process group.

use crate::runner::process::{Exit, RunEvent, Stream};
use crate::runner::spec::RunSpec;
use crate::sources::remote::proto::{Reply, Request, RunNews};
use crate::sources::remote::{self, Link, target};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

pub struct RemoteRun {
    link: Arc<Link>,
    id: u64,
}

impl RemoteRun {
    /// Cancels the run; the agent stops its process group (TERM, then KILL).
    pub fn stop(&self) {
        self.link.cancel(self.id);
    }
}

impl Drop for RemoteRun {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The server of `spec`'s script, when it is a remote path.
pub fn host_of(spec: &RunSpec) -> Option<target::Host> {
    target::split(&spec.script).map(|(h, _)| h)
}

/// `spec` with its paths as the server names them.
fn on_server(spec: &RunSpec) -> RunSpec {
    let server = |p: &Path| {
        target::split(p).map_or_else(|| p.to_path_buf(), |(_, s)| PathBuf::from(s.as_str()))
    };
    let opt = |p: &Option<PathBuf>| p.as_deref().map(server);
    RunSpec {
        script: server(&spec.script),
        python: opt(&spec.python),
        cwd: opt(&spec.cwd),
        data_dump: opt(&spec.data_dump),
        debug_dir: opt(&spec.debug_dir),
        ..spec.clone()
    }
}

fn event(host: &target::Host, news: RunNews) -> RunEvent {
    match news {
        RunNews::Started { pid } => RunEvent::Started { pid },
        RunNews::Line { stderr, text } => RunEvent::Line {
            stream: if stderr {
                Stream::Stderr
            } else {
                Stream::Stdout
            },
            text,
        },
        RunNews::RunFolder(p) => RunEvent::RunFolder(target::mount_path(host, &p)),
        RunNews::Exited {
            code,
            signal,
            elapsed_ms,
        } => RunEvent::Exited {
            exit: match (code, signal) {
                (Some(c), _) => Exit::Code(c),
                (None, Some(s)) => Exit::Signal(s),
                (None, None) => Exit::Code(-1),
            },
            elapsed: Duration::from_millis(elapsed_ms),
        },
        RunNews::Failed(m) => RunEvent::Failed(m),
    }
}

/// Starts `spec` on its server; every event goes to `sink` (from a thread of its own). Blocks
/// for the connect: call it from a job.
pub fn start(
    spec: &RunSpec,
    sink: impl Fn(RunEvent) + Send + 'static,
) -> Result<RemoteRun, String> {
    let host = host_of(spec).ok_or("not a remote script")?;
    let link = remote::link(&host).map_err(|e| e.to_string())?;
    let spec = serde_json::to_value(on_server(spec)).map_err(|e| e.to_string())?;
    let (id, rx) = link
        .stream(Request::Run { spec })
        .map_err(|e| e.to_string())?;
    let dropped = link.dropped().to_string();
    std::thread::spawn(move || {
        let mut ended = false;
        for (reply, _) in rx {
            match reply {
                Reply::Run(news) => {
                    ended |= matches!(news, RunNews::Exited { .. } | RunNews::Failed(_));
                    sink(event(&host, news));
                }
                Reply::Failed { message, .. } => {
                    ended = true;
                    sink(RunEvent::Failed(message));
                }
                _ => {}
            }
        }
        if !ended {
            // The link died under the run: the agent has killed it.
            sink(RunEvent::Failed(format!(
                "{dropped}; the run on the server was stopped"
            )));
        }
    });
    Ok(RemoteRun { link, id })
}
