//! `fxray run [options] -- script.py args…`: the compile run headless. Output streams through,
//! the run folders it wrote are printed at the end, and the exit code is the script's.

use crate::error::{Error, Result};
use crate::runner::process::{Exit, RunEvent, RunHandle, Stream};
use crate::runner::spec::RunSpec;
use std::io::Write;
use std::sync::mpsc::channel;

/// Runs `spec` and returns the script's exit code.
pub fn run(spec: &RunSpec) -> Result<i32> {
    let (python, launch) = spec.prepare().map_err(Error::User)?;
    let (tx, rx) = channel();
    let handle = RunHandle::start(&launch, move |ev| {
        let _ = tx.send(ev);
    });
    // Ctrl-C reaches the whole foreground process group, the script's included; the handle's
    // drop kills whatever is left if we are stopped another way.
    let mut folders = Vec::new();
    let mut code = 1;
    for ev in rx {
        match ev {
            RunEvent::Started { pid } => {
                eprintln!("fxray: started {} (pid {pid})", python.display());
            }
            RunEvent::Line { stream, text } => {
                let _ = match stream {
                    Stream::Stdout => writeln!(std::io::stdout().lock(), "{text}"),
                    Stream::Stderr => writeln!(std::io::stderr().lock(), "{text}"),
                };
            }
            RunEvent::RunFolder(p) => folders.push(p),
            RunEvent::Exited { exit, elapsed } => {
                eprintln!("fxray: {exit} after {:.1} s", elapsed.as_secs_f64());
                code = match exit {
                    Exit::Code(c) => c,
                    Exit::Signal(s) => 128 + s,
                };
                break;
            }
            RunEvent::Failed(e) => return Err(Error::User(e)),
        }
    }
    drop(handle);
    if folders.is_empty() {
        eprintln!(
            "fxray: no new run folder under {}",
            launch.debug_root.display()
        );
    }
    for f in &folders {
        println!("run folder: {}", f.display());
    }
    Ok(code)
}
