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
use std::sync::mpsc::{Receiver, channel};
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
    handle: Option<RunHandle>,
    rx: Receiver<RunEvent>,
}

impl ActiveRun {
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

pub struct RunState {
    pub form: RunSpec,
    pub current: Option<ActiveRun>,
    pub history: Vec<PastRun>,
    pub env: Environment,
    /// Open the first run folder the run writes.
    pub open_folders: bool,
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
        self.jobs.spawn(|send| {
            let interpreters = python::candidates();
            let npu = npu::detect();
            send(super::jobs::Msg::Run(RunMsg::Found { interpreters, npu }));
        });
    }

    /// Probes the packages of the interpreter the form would use.
    pub fn probe_python(&mut self) {
        let Ok(py) = python::resolve(self.run.form.python.as_deref()) else {
            return;
        };
        self.jobs.spawn(move |send| {
            let result = python::probe(&py);
            send(super::jobs::Msg::Run(RunMsg::Probed { python: py, result }));
        });
    }

    pub(super) fn on_run(&mut self, msg: RunMsg) {
        match msg {
            RunMsg::Found { interpreters, npu } => {
                self.run.env.interpreters = interpreters;
                self.run.env.npu = Some(npu);
                self.run.env.probing = false;
                self.probe_python();
            }
            RunMsg::Probed { python, result } => {
                self.run.env.packages = Some((python, result));
            }
        }
    }

    /// Starts the form's run. A run still going is stopped first.
    pub fn start_run(&mut self) {
        self.run.error = None;
        let spec = self.run.form.clone();
        if let Err(e) = self.start_spec(spec) {
            self.run.error = Some(e);
        }
    }

    fn start_spec(&mut self, spec: RunSpec) -> Result<(), String> {
        let python = python::resolve(spec.python.as_deref())?;
        if !spec.script.is_file() {
            return Err(format!("no such script: {}", spec.script.display()));
        }
        let launcher = crate::runner::launcher_path()?;
        let launch = spec.launch(&python, &launcher);
        self.stop_run();
        self.finish_run();
        let (tx, rx) = channel();
        let waker = self.jobs.waker();
        let handle = RunHandle::start(&launch, move |ev| {
            let _ = tx.send(ev);
            waker();
        });
        self.run.current = Some(ActiveRun {
            spec,
            started: Instant::now(),
            pid: None,
            console: Default::default(),
            dropped: 0,
            exit: None,
            failed: None,
            folders: Vec::new(),
            handle: Some(handle),
            rx,
        });
        Ok(())
    }

    /// Stops the run in progress (its whole process group).
    pub fn stop_run(&mut self) {
        if let Some(h) = self.run.current.as_ref().and_then(|r| r.handle.as_ref()) {
            h.stop(Duration::from_millis(500));
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

    /// Applies the run's output since the last frame.
    pub(super) fn poll_run(&mut self) {
        let Some(run) = &mut self.run.current else {
            return;
        };
        let events: Vec<RunEvent> = run.rx.try_iter().collect();
        let mut open = None;
        let mut ended = false;
        for ev in events {
            match ev {
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
                    if run.folders.is_empty() {
                        open = Some(p.clone());
                    }
                    run.folders.push(p);
                }
                RunEvent::Exited { exit, elapsed } => {
                    run.exit = Some((exit, elapsed));
                    ended = true;
                }
                RunEvent::Failed(e) => {
                    run.failed = Some(e);
                    ended = true;
                }
            }
        }
        if let (Some(p), true) = (open, self.run.open_folders) {
            self.open(&p);
        }
        if ended {
            self.finish_run();
        }
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
            self.paste_autotune_log(&text);
        }
    }
}
