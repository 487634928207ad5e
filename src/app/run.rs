//! The Run panel's state: the form, the run in progress (console, exit, run folders), past
//! runs, and what the machine offers (interpreters, their packages, NPUs).

use super::App;
use crate::runner::npu::{self, NpuStatus};
/// The runner's vocabulary the Run panel names: `ui` reaches the runner only through `app`.
pub use crate::runner::process::{Exit, Stream};
use crate::runner::process::{RunEvent, RunHandle};
use crate::runner::python::{self, Interpreter, Packages};
pub use crate::runner::spec::{Backend, Mode, RunSpec, parse_env};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

/// The console keeps this many lines (a long training log must not eat the memory).
pub const CONSOLE_LINES: usize = 100_000;
const PAST_RUNS: usize = 30;

#[derive(Debug, Clone, PartialEq)]
pub struct ConsoleLine {
    pub stream: Stream,
    /// As printed, ANSI colour codes removed.
    pub text: String,
}

/// The run in progress, or the last one.
pub struct ActiveRun {
    pub spec: RunSpec,
    pub started: Instant,
    pub pid: Option<u32>,
    pub console: std::collections::VecDeque<ConsoleLine>,
    /// Lines dropped from the front of the console.
    pub dropped: usize,
    pub exit: Option<(Exit, Duration)>,
    pub failed: Option<String>,
    pub folders: Vec<PathBuf>,
    handle: Option<Control>,
    /// Tells this run's events from an earlier run's.
    serial: u64,
}

/// What stops a run: the local process group, or the agent running it on a server.
enum Control {
    Local(RunHandle),
    Remote(super::remote_run::RemoteRun),
    /// A remote run whose link is still being made (by a job).
    Connecting,
}

impl ActiveRun {
    fn new(spec: RunSpec, control: Control, serial: u64) -> Self {
        ActiveRun {
            spec,
            started: Instant::now(),
            pid: None,
            console: Default::default(),
            dropped: 0,
            exit: None,
            failed: None,
            folders: Vec::new(),
            handle: Some(control),
            serial,
        }
    }

    pub fn running(&self) -> bool {
        self.exit.is_none() && self.failed.is_none()
    }

    pub fn elapsed(&self) -> Duration {
        self.exit
            .as_ref()
            .map_or(self.started.elapsed(), |(_, d)| *d)
    }
}

/// A finished run, kept (and saved) to be looked at or run again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PastRun {
    pub spec: RunSpec,
    /// RFC 3339.
    pub started_at: String,
    pub outcome: String,
    pub elapsed_s: f64,
    pub folders: Vec<PathBuf>,
}

/// What the machine offers, found in the background.
#[derive(Default)]
pub struct Environment {
    pub interpreters: Vec<Interpreter>,
    /// Packages of the interpreter the form uses, once probed: (interpreter, result).
    pub packages: Option<(PathBuf, Result<Packages, String>)>,
    pub npu: Option<NpuStatus>,
    pub probing: bool,
}

pub enum RunMsg {
    Found {
        interpreters: Vec<Interpreter>,
        npu: NpuStatus,
    },
    Probed {
        python: PathBuf,
        result: Result<Packages, String>,
    },
}

impl super::jobs::Apply<App> for RunMsg {
    /// What the machine has is never stale.
    fn is_current(&self, _: &App) -> bool {
        true
    }

    fn apply(self, app: &mut App) {
        match self {
            RunMsg::Found { interpreters, npu } => {
                app.run.env.interpreters = interpreters;
                app.run.env.npu = Some(npu);
                app.run.env.probing = false;
                app.probe_python();
            }
            RunMsg::Probed { python, result } => {
                app.run.env.packages = Some((python, result));
            }
        }
    }
}

/// One event of the run numbered `serial` (its process started, printed a line, made a run
/// folder, ended).
pub struct RunEventMsg {
    serial: u64,
    event: RunEvent,
}

/// A run's message is current while its run is the current one.
fn is_current_run(app: &App, serial: u64) -> bool {
    app.run.current.as_ref().is_some_and(|r| r.serial == serial)
}

impl super::jobs::Apply<App> for RunEventMsg {
    fn is_current(&self, app: &App) -> bool {
        is_current_run(app, self.serial)
    }

    fn apply(self, app: &mut App) {
        let Some(run) = &mut app.run.current else {
            return;
        };
        match self.event {
            RunEvent::Started { pid } => run.pid = Some(pid),
            RunEvent::Line { stream, text } => {
                let text = crate::sources::read::strip_ansi(&text).into_owned();
                run.console.push_back(ConsoleLine { stream, text });
                if run.console.len() > CONSOLE_LINES {
                    run.console.pop_front();
                    run.dropped += 1;
                }
            }
            RunEvent::RunFolder(p) => {
                let first = run.folders.is_empty();
                run.folders.push(p.clone());
                if first && app.run.open_folders {
                    app.open(&p);
                }
            }
            RunEvent::Exited { exit, elapsed } => {
                run.exit = Some((exit, elapsed));
                app.finish_run();
            }
            RunEvent::Failed(e) => {
                run.failed = Some(e);
                app.finish_run();
            }
        }
    }
}

pub struct RunState {
    pub form: RunSpec,
    pub current: Option<ActiveRun>,
    pub history: Vec<PastRun>,
    pub env: Environment,
    /// Open the first run folder the run writes.
    pub open_folders: bool,
    /// Numbers the runs started, so a finished run's late events are not taken for the next's.
    serial: u64,
    /// Why the last Run could not start.
    pub error: Option<String>,
}

impl Default for RunState {
    fn default() -> Self {
        RunState {
            form: RunSpec {
                nproc: 1,
                ..RunSpec::default()
            },
            current: None,
            history: Vec::new(),
            env: Environment::default(),
            open_folders: true,
            error: None,
            serial: 0,
        }
    }
}

impl App {
    /// Looks for interpreters and NPUs (in the background: `npu-smi` can be slow).
    pub fn detect_environment(&mut self) {
        if self.run.env.probing {
            return;
        }
        self.run.env.probing = true;
        self.jobs.spawn(|out| {
            let interpreters = python::candidates();
            let npu = npu::detect();
            out.send(RunMsg::Found { interpreters, npu });
        });
    }

    /// Probes the packages of the interpreter the form would use.
    pub fn probe_python(&mut self) {
        let Ok(py) = python::resolve(self.run.form.python.as_deref()) else {
            return;
        };
        self.jobs.spawn(move |out| {
            let result = python::probe(&py);
            out.send(RunMsg::Probed { python: py, result });
        });
    }

    /// Starts the form's run. A run still going is stopped first.
    pub fn start_run(&mut self) {
        self.run.error = None;
        let spec = self.run.form.clone();
        if let Err(e) = self.start_spec(spec) {
            self.run.error = Some(e);
        }
    }

    fn start_spec(&mut self, mut spec: RunSpec) -> Result<(), String> {
        // `ssh://host/…` typed in the form: the run is on that server.
        spec.script = crate::sources::remote::resolve(&spec.script).map_err(|e| e.to_string())?;
        if super::remote_run::host_of(&spec).is_some() {
            return self.start_remote(spec);
        }
        let (_, launch) = spec.prepare()?;
        let serial = self.next_run();
        let out = self.jobs.outbox();
        let handle = RunHandle::start(&launch, move |event| {
            out.send(RunEventMsg { serial, event })
        });
        self.run.current = Some(ActiveRun::new(spec, Control::Local(handle), serial));
        Ok(())
    }

    /// Starts `spec` on its server: connecting is a job, the run's events come back through
    /// the jobs channel as a local run's do.
    fn start_remote(&mut self, spec: RunSpec) -> Result<(), String> {
        let serial = self.next_run();
        let out = self.jobs.outbox();
        let job_spec = spec.clone();
        self.jobs.spawn(move |done| {
            let events = out.clone();
            let started = super::remote_run::start(&job_spec, move |event| {
                events.send(RunEventMsg { serial, event })
            });
            match started {
                Ok(run) => done.send(RemoteStarted { serial, run }),
                Err(e) => out.send(RunEventMsg {
                    serial,
                    event: RunEvent::Failed(e),
                }),
            }
        });
        self.run.current = Some(ActiveRun::new(spec, Control::Connecting, serial));
        Ok(())
    }

    /// Ends the run before (stopped, recorded in the history) and numbers the next one.
    fn next_run(&mut self) -> u64 {
        self.stop_run();
        self.finish_run();
        self.run.serial += 1;
        self.run.serial
    }

    /// Stops the run in progress (its whole process group).
    pub fn stop_run(&mut self) {
        match self.run.current.as_ref().and_then(|r| r.handle.as_ref()) {
            Some(Control::Local(h)) => h.stop(Duration::from_millis(500)),
            Some(Control::Remote(r)) => r.stop(),
            Some(Control::Connecting) | None => {}
        }
    }

    /// Runs past run `i` again with its settings (they become the form's).
    pub fn rerun(&mut self, i: usize) {
        if let Some(p) = self.run.history.get(i) {
            self.run.form = p.spec.clone();
            self.start_run();
        }
    }

    pub fn run_busy(&self) -> bool {
        self.run.current.as_ref().is_some_and(ActiveRun::running)
    }

    /// Records the current run in the history once it has ended.
    fn finish_run(&mut self) {
        let Some(run) = &mut self.run.current else {
            return;
        };
        if run.running() || run.handle.is_none() {
            return;
        }
        run.handle = None;
        // The AscendC autotune evidence a compile printed goes to the Autotune tab.
        let autotune: Vec<&str> = run
            .console
            .iter()
            .map(|l| l.text.as_str())
            .filter(|t| t.contains("inductor_asc") || t.contains("Timing ="))
            .collect();
        let autotune = (!autotune.is_empty()).then(|| autotune.join("\n"));
        let outcome = match (&run.exit, &run.failed) {
            (_, Some(e)) => e.clone(),
            (Some((exit, _)), _) => exit.to_string(),
            _ => "stopped".into(),
        };
        let started_at = SystemTime::now()
            .checked_sub(run.elapsed())
            .unwrap_or_else(SystemTime::now);
        self.run.history.insert(
            0,
            PastRun {
                spec: run.spec.clone(),
                started_at: humantime::format_rfc3339_seconds(started_at).to_string(),
                outcome,
                elapsed_s: run.elapsed().as_secs_f64(),
                folders: run.folders.clone(),
            },
        );
        self.run.history.truncate(PAST_RUNS);
        if let Some(text) = autotune {
            let (state, cx) = self.part::<super::autotune::AutotuneState>();
            state.paste_log(&cx, &text);
        }
    }
}

/// The link of a remote run is up: its control joins the run (if it is still the current one;
/// else dropping it cancels the run on the server).
struct RemoteStarted {
    serial: u64,
    run: super::remote_run::RemoteRun,
}

impl super::jobs::Apply<App> for RemoteStarted {
    fn is_current(&self, app: &App) -> bool {
        is_current_run(app, self.serial)
    }

    fn apply(self, app: &mut App) {
        let run = self.run;
        if let Some(cur) = app.run.current.as_mut() {
            let stopped = !cur.running();
            cur.handle = Some(Control::Remote(run));
            if stopped {
                // Stop was pressed while connecting.
                if let Some(Control::Remote(r)) = &cur.handle {
                    r.stop();
                }
            }
        }
    }
}
