//! A running compile: the child process in a process group of its own, its output streamed
//! line by line, the run folders it creates, and Stop (SIGTERM to the group, then SIGKILL).
//! Dropping the handle stops the run, so nothing is left running when fxray exits.

use super::spec::Launch;
use crate::platform::{self, Stop};
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Exit {
    Code(i32),
    /// Killed by a signal (Stop, or a crash).
    Signal(i32),
}

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exit::Code(c) => write!(f, "exit code {c}"),
            Exit::Signal(s) => write!(f, "killed by signal {s}"),
        }
    }
}

/// What a run reports; a run on a server reports the same, streamed by its agent
/// (`pipeline::run`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum RunEvent {
    Started {
        pid: u32,
    },
    Line {
        stream: Stream,
        text: String,
    },
    /// A `run_*` folder appeared under the debug root after the start.
    RunFolder(PathBuf),
    Exited {
        exit: Exit,
        elapsed: Duration,
    },
    /// The process could not be started.
    Failed(String),
}

pub struct RunHandle {
    pgid: Option<i32>,
    done: Arc<AtomicBool>,
}

impl RunHandle {
    /// Starts `launch`; every event goes to `sink` (from other threads).
    pub fn start(launch: &Launch, sink: impl Fn(RunEvent) + Send + Sync + 'static) -> RunHandle {
        let sink: Arc<dyn Fn(RunEvent) + Send + Sync> = Arc::new(sink);
        let done = Arc::new(AtomicBool::new(false));
        let before = run_folders(&launch.debug_root);
        let mut cmd = Command::new(&launch.program);
        cmd.args(&launch.args)
            .current_dir(&launch.cwd)
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // Its own process group, so Stop reaches torchrun's workers and their children.
        platform::own_process_group(&mut cmd);
        if launch.dies_with_caller {
            platform::die_with_starting_thread(&mut cmd);
        }
        let start = Instant::now();
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                sink(RunEvent::Failed(format!(
                    "cannot start {}: {e}",
                    launch.program.display()
                )));
                done.store(true, Ordering::SeqCst);
                return RunHandle { pgid: None, done };
            }
        };
        let pid = child.id();
        sink(RunEvent::Started { pid });
        let readers: Vec<_> = [
            child
                .stdout
                .take()
                .map(|s| (Box::new(s) as Box<dyn Read + Send>, Stream::Stdout)),
            child
                .stderr
                .take()
                .map(|s| (Box::new(s) as Box<dyn Read + Send>, Stream::Stderr)),
        ]
        .into_iter()
        .flatten()
        .map(|(r, stream)| {
            let sink = sink.clone();
            std::thread::spawn(move || forward_lines(r, stream, &*sink))
        })
        .collect();
        // Run folders: look for new ones while the run lasts, and once more at its end.
        let watch_done = done.clone();
        let root = launch.debug_root.clone();
        let folder_sink = sink.clone();
        let folders = std::thread::spawn(move || {
            let mut known = before;
            loop {
                let finished = watch_done.load(Ordering::SeqCst);
                for f in run_folders(&root) {
                    if !known.contains(&f) {
                        known.push(f.clone());
                        folder_sink(RunEvent::RunFolder(f));
                    }
                }
                if finished {
                    break;
                }
                std::thread::sleep(Duration::from_millis(200));
            }
        });
        let wait_done = done.clone();
        std::thread::spawn(move || {
            let status = child.wait();
            for r in readers {
                let _ = r.join();
            }
            wait_done.store(true, Ordering::SeqCst);
            let _ = folders.join();
            let exit = match status {
                Ok(s) => exit_of(s),
                Err(_) => Exit::Code(-1),
            };
            sink(RunEvent::Exited {
                exit,
                elapsed: start.elapsed(),
            });
        });
        RunHandle {
            pgid: i32::try_from(pid).ok(),
            done,
        }
    }

    pub fn finished(&self) -> bool {
        self.done.load(Ordering::SeqCst)
    }

    /// Ends the run: SIGTERM to its whole process group, SIGKILL to what is left after
    /// `grace`. Returns at once; the end is reported as `Exited`.
    pub fn stop(&self, grace: Duration) {
        let Some(pgid) = self.pgid else { return };
        if self.finished() {
            return;
        }
        platform::stop_group(pgid, Stop::Term);
        let done = self.done.clone();
        std::thread::spawn(move || {
            let until = Instant::now() + grace;
            while Instant::now() < until {
                if done.load(Ordering::SeqCst)
                    && (!platform::group_outlives_leader() || !platform::group_alive(pgid))
                {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            platform::stop_group(pgid, Stop::Kill);
        });
    }
}

impl Drop for RunHandle {
    fn drop(&mut self) {
        // Leaving the app (or dropping a run) must not leave a compile behind.
        if let Some(pgid) = self.pgid
            && (!self.finished() || platform::group_outlives_leader())
            && platform::group_alive(pgid)
        {
            platform::stop_group(pgid, Stop::Kill);
        }
    }
}

fn forward_lines(r: Box<dyn Read + Send>, stream: Stream, sink: &(dyn Fn(RunEvent) + Send + Sync)) {
    let mut reader = BufReader::new(r);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                while buf.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                    buf.pop();
                }
                sink(RunEvent::Line {
                    stream,
                    text: String::from_utf8_lossy(&buf).into_owned(),
                });
            }
        }
    }
}

/// The `run_*` folders under `root`, sorted.
pub fn run_folders(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("run_"))
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

fn exit_of(s: std::process::ExitStatus) -> Exit {
    match (s.code(), platform::exit_signal(s)) {
        (Some(c), _) => Exit::Code(c),
        (None, Some(sig)) => Exit::Signal(sig),
        _ => Exit::Code(-1),
    }
}
