//! The Run panel's state: the form, the run in progress (console, exit, run folders), past
//! runs, and what the machine offers (interpreters, their packages, NPUs).

use super::App;
use super::jobs::Apply;
use super::part::{Cx, Feature};
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

impl Apply<RunState> for RunMsg {
    /// What the machine has is never stale.
    fn is_current(&self, _: &RunState) -> bool {
        true
    }

    fn apply(self, run: &mut RunState) {
        match self {
            RunMsg::Found { interpreters, npu } => {
                run.env.interpreters = interpreters;
                run.env.npu = Some(npu);
                run.env.probing = false;
            }
            RunMsg::Probed { python, result } => {
                run.env.packages = Some((python, result));
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

impl Apply<RunState> for RunEventMsg {
    fn is_current(&self, state: &RunState) -> bool {
        state.is_current_run(self.serial)
    }

    fn apply(self, state: &mut RunState) {
        let Some(run) = &mut state.current else {
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
                if first && state.open_folders {
                    state.to_open = Some(p);
                }
            }
            RunEvent::Exited { exit, elapsed } => {
                run.exit = Some((exit, elapsed));
                state.finish_run();
            }
            RunEvent::Failed(e) => {
                run.failed = Some(e);
                state.finish_run();
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
    /// The run folder to open, as soon as the app next looks ([`want`]).
    to_open: Option<PathBuf>,
    /// The AscendC autotune evidence the last run printed, for the Autotune view ([`want`]).
    autotune_evidence: Option<String>,
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
            to_open: None,
            autotune_evidence: None,
        }
    }
}

/// The form, the history and the run outlive the tree: a run opens the tree it writes.
impl Feature for RunState {
    const OF_THE_TREE: bool = false;
}

/// What a run hands to the rest of the app once its messages are in: the first run folder it
/// wrote is opened, and the autotune evidence it printed goes to the Autotune view.
pub(super) fn want(app: &mut App) {
    let (Some(run), _) = app.part_if_used::<RunState>() else {
        return;
    };
    let (open, evidence) = (run.to_open.take(), run.autotune_evidence.take());
    if let Some(text) = evidence {
        let (state, cx) = app.part::<super::autotune::AutotuneState>();
        state.paste_log(&cx, &text);
    }
    if let Some(folder) = open {
        app.open(&folder);
    }
}

impl RunState {
    /// Looks for interpreters and NPUs, then probes the packages of the interpreter the form
    /// would use (in the background: `npu-smi` and a Python start can be slow).
    pub fn detect_environment(&mut self, cx: &Cx) {
        if self.env.probing {
            return;
        }
        self.env.probing = true;
        let python = self.form.python.clone();
        cx.spawn::<RunState>(move |out| {
            let interpreters = python::candidates();
            let npu = npu::detect();
            out.send(RunMsg::Found { interpreters, npu });
            if let Ok(py) = python::resolve(python.as_deref()) {
                let result = python::probe(&py);
                out.send(RunMsg::Probed { python: py, result });
            }
        });
    }

    /// Starts the form's run. A run still going is stopped first.
    pub fn start_run(&mut self, cx: &Cx) {
        self.error = None;
        let spec = self.form.clone();
        if let Err(e) = self.start_spec(cx, spec) {
            self.error = Some(e);
        }
    }

    fn start_spec(&mut self, cx: &Cx, mut spec: RunSpec) -> Result<(), String> {
        // `ssh://host/…` typed in the form: the run is on that server.
        spec.script = crate::sources::remote::resolve(&spec.script).map_err(|e| e.to_string())?;
        if super::remote_run::host_of(&spec).is_some() {
            self.start_remote(cx, spec);
            return Ok(());
        }
        let (_, launch) = spec.prepare()?;
        let serial = self.next_run();
        let out = cx.outbox::<RunState>();
        let handle = RunHandle::start(&launch, move |event| {
            out.send(RunEventMsg { serial, event })
        });
        self.current = Some(ActiveRun::new(spec, Control::Local(handle), serial));
        Ok(())
    }

    /// Starts `spec` on its server: connecting is a job, the run's events come back through
    /// the jobs channel as a local run's do.
    fn start_remote(&mut self, cx: &Cx, spec: RunSpec) {
        let serial = self.next_run();
        let job_spec = spec.clone();
        cx.spawn::<RunState>(move |out| {
            let events = out.clone();
            let started = super::remote_run::start(&job_spec, move |event| {
                events.send(RunEventMsg { serial, event })
            });
            match started {
                Ok(run) => out.send(RemoteStarted { serial, run }),
                Err(e) => out.send(RunEventMsg {
                    serial,
                    event: RunEvent::Failed(e),
                }),
            }
        });
        self.current = Some(ActiveRun::new(spec, Control::Connecting, serial));
    }

    /// Ends the run before (stopped, recorded in the history) and numbers the next one.
    fn next_run(&mut self) -> u64 {
        self.stop_run();
        self.finish_run();
        self.serial += 1;
        self.serial
    }

    /// A run's message is current while its run is the current one.
    fn is_current_run(&self, serial: u64) -> bool {
        self.current.as_ref().is_some_and(|r| r.serial == serial)
    }

    /// Stops the run in progress (its whole process group).
    pub fn stop_run(&mut self) {
        match self.current.as_ref().and_then(|r| r.handle.as_ref()) {
            Some(Control::Local(h)) => h.stop(Duration::from_millis(500)),
            Some(Control::Remote(r)) => r.stop(),
            Some(Control::Connecting) | None => {}
        }
    }

    /// Runs past run `i` again with its settings (they become the form's).
    pub fn rerun(&mut self, cx: &Cx, i: usize) {
        if let Some(p) = self.history.get(i) {
            self.form = p.spec.clone();
            self.start_run(cx);
        }
    }

    pub fn busy(&self) -> bool {
        self.current.as_ref().is_some_and(ActiveRun::running)
    }

    /// Records the current run in the history once it has ended.
    fn finish_run(&mut self) {
        let Some(run) = &mut self.current else {
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
        if !autotune.is_empty() {
            self.autotune_evidence = Some(autotune.join("\n"));
        }
        let outcome = match (&run.exit, &run.failed) {
            (_, Some(e)) => e.clone(),
            (Some((exit, _)), _) => exit.to_string(),
            _ => "stopped".into(),
        };
        let started_at = SystemTime::now()
            .checked_sub(run.elapsed())
            .unwrap_or_else(SystemTime::now);
        self.history.insert(
            0,
            PastRun {
                spec: run.spec.clone(),
                started_at: humantime::format_rfc3339_seconds(started_at).to_string(),
                outcome,
                elapsed_s: run.elapsed().as_secs_f64(),
                folders: run.folders.clone(),
            },
        );
        self.history.truncate(PAST_RUNS);
    }
}

/// The link of a remote run is up: its control joins the run (if it is still the current one;
/// else dropping it cancels the run on the server).
struct RemoteStarted {
    serial: u64,
    run: super::remote_run::RemoteRun,
}

impl Apply<RunState> for RemoteStarted {
    fn is_current(&self, state: &RunState) -> bool {
        state.is_current_run(self.serial)
    }

    fn apply(self, state: &mut RunState) {
        let run = self.run;
        if let Some(cur) = state.current.as_mut() {
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
