//! One ssh link to an agent: the child `ssh … fxray agent --stdio`, a reader thread that hands
//! each answer to whoever asked, and counters for the status bar.
//!
//! Calls block the thread that makes them (a job, never the UI thread) and many may be in
//! flight at once: rayon's readers share one link, so a tree's files arrive pipelined, one
//! round trip for all of them rather than one each.

use super::error::RemoteError;
use super::proto::{About, Answer, Ask, PROTOCOL, Reply, Request};
use super::target::Host;
use super::wire::{self, Greeting};
use std::collections::HashMap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How to reach a server: the ssh command and the agent's path there.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The ssh program and its own options (`FXRAY_SSH`, split as a shell would).
    pub ssh: Vec<String>,
    /// `fxray` on the server (`--remote-fxray`, `FXRAY_REMOTE_FXRAY`; else found on its PATH).
    pub fxray: String,
}

impl Settings {
    pub fn from_env() -> Settings {
        let ssh = std::env::var("FXRAY_SSH")
            .ok()
            .and_then(|s| shlex::split(&s))
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| vec!["ssh".to_string()]);
        let fxray = std::env::var("FXRAY_REMOTE_FXRAY").unwrap_or_else(|_| "fxray".to_string());
        Settings { ssh, fxray }
    }

    /// The command that starts the agent on `host`.
    pub fn command(&self, host: &Host) -> Vec<String> {
        let mut argv = self.ssh.clone();
        // No prompt can be answered from a window: fail at once instead of hanging on one.
        // A link that goes silent (a cable pulled, a VPN dropped) ends after 15 s instead of
        // hanging every read on it: ssh exits, the agent's output ends, the link is down.
        argv.extend(
            [
                "-T",
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=15",
                "-o",
                "ServerAliveInterval=5",
                "-o",
                "ServerAliveCountMax=3",
            ]
            .map(String::from),
        );
        if let Some(p) = host.port {
            argv.extend(["-p".to_string(), p.to_string()]);
        }
        let dest = match &host.user {
            Some(u) => format!("{u}@{}", host.host),
            None => host.host.clone(),
        };
        // `--` ends ssh's options; the remote command is one word list ssh hands to the
        // server's shell, so the agent's path is quoted for it.
        argv.extend(["--".to_string(), dest]);
        argv.push(format!(
            "{} agent --stdio",
            shlex::try_quote(&self.fxray).map_or_else(|_| self.fxray.clone(), |q| q.into_owned())
        ));
        argv
    }
}

/// Counters read by the status bar.
#[derive(Debug, Default)]
pub struct Counters {
    pub bytes_in: AtomicU64,
    pub bytes_out: AtomicU64,
    /// Requests sent for work (reads, ops), not the link's own pings: what tells work done on
    /// the server from reads. A caller counting its own requests over a few seconds must not
    /// meet a ping, which fell inside such a count now and then (a test failed at random).
    pub requests: AtomicU64,
    /// The last measured round trip, in microseconds.
    pub rtt_us: AtomicU64,
    pub alive: AtomicBool,
}

/// A reply and its payload.
pub type Delivery = (Reply, Vec<u8>);
/// Where a request's replies go, and whether it is a stream.
type Waiter = (Sender<Delivery>, bool);

pub struct Link {
    pub host: Host,
    pub about: About,
    pub counters: Arc<Counters>,
    writer: Mutex<BufWriter<ChildStdin>>,
    pending: Arc<Mutex<HashMap<u64, Waiter>>>,
    next: AtomicU64,
    child: Mutex<Child>,
}

impl Drop for Link {
    fn drop(&mut self) {
        if let Ok(mut c) = self.child.lock() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Link {
    /// Starts ssh and the agent, checks the greeting and asks who the agent is.
    pub fn connect(host: &Host, settings: &Settings) -> Result<Link, RemoteError> {
        let argv = settings.command(host);
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| RemoteError::Spawn {
                program: argv[0].clone(),
                reason: e.to_string(),
            })?;
        let stderr = collect_stderr(child.stderr.take().expect("piped"));
        let mut out = BufReader::new(child.stdout.take().expect("piped"));
        let authority = host.authority();
        match wire::read_greeting(&mut out) {
            Ok(Greeting::Agent { protocol, .. }) if protocol == PROTOCOL => {}
            Ok(Greeting::Agent { protocol, version }) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RemoteError::Version {
                    host: authority,
                    theirs: protocol,
                    their_version: version,
                });
            }
            Ok(Greeting::Other(line)) => {
                let _ = child.wait();
                let said = said(&line, &stderr);
                return Err(RemoteError::NoAgent {
                    host: authority,
                    said,
                });
            }
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RemoteError::NoAgent {
                    host: authority,
                    said: said(&e.to_string(), &stderr),
                });
            }
        }
        let counters = Arc::new(Counters::default());
        counters.alive.store(true, Ordering::Relaxed);
        let pending: Arc<Mutex<HashMap<u64, Waiter>>> = Arc::default();
        spawn_reader(out, pending.clone(), counters.clone());
        let writer = Mutex::new(BufWriter::new(child.stdin.take().expect("piped")));
        let mut link = Link {
            host: host.clone(),
            about: About {
                version: String::new(),
                host: String::new(),
                os: String::new(),
                arch: String::new(),
            },
            counters,
            writer,
            pending,
            next: AtomicU64::new(1),
            child: Mutex::new(child),
        };
        let started = Instant::now();
        match link.call(Request::About)? {
            (Reply::About(a), _) => link.about = a,
            (other, _) => return Err(RemoteError::unexpected(host, &other)),
        }
        link.note_rtt(started.elapsed());
        Ok(link)
    }

    /// Ends the link: ssh is killed, the agent sees its input close and exits.
    pub fn close(&self) {
        self.counters.alive.store(false, Ordering::Relaxed);
        if let Ok(mut c) = self.child.lock() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    pub fn is_alive(&self) -> bool {
        self.counters.alive.load(Ordering::Relaxed)
    }

    /// Sends `req` and waits for its one reply (and the reply's payload).
    pub fn call(&self, req: Request) -> Result<Delivery, RemoteError> {
        let (_, rx) = self.send(req, false)?;
        rx.recv().map_err(|_| self.dropped())
    }

    /// Sends `req` and returns its id and the stream of its replies, ending with `End` (or
    /// closing when the link drops).
    pub fn stream(&self, req: Request) -> Result<(u64, Receiver<Delivery>), RemoteError> {
        self.send(req, true)
    }

    /// Stops a stream; its last reply will be `End`.
    pub fn cancel(&self, id: u64) {
        let _ = self.send(Request::Cancel { id }, false);
    }

    /// Measures a round trip.
    pub fn ping(&self) -> Result<Duration, RemoteError> {
        let t = Instant::now();
        self.call(Request::Ping)?;
        let d = t.elapsed();
        self.note_rtt(d);
        Ok(d)
    }

    fn note_rtt(&self, d: Duration) {
        self.counters
            .rtt_us
            .store(d.as_micros() as u64, Ordering::Relaxed);
    }

    fn send(&self, req: Request, stream: bool) -> Result<(u64, Receiver<Delivery>), RemoteError> {
        if !self.is_alive() {
            return Err(self.dropped());
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let work = !matches!(req, Request::Ping);
        let (tx, rx) = channel();
        self.pending
            .lock()
            .expect("pending")
            .insert(id, (tx, stream));
        let mut w = self.writer.lock().expect("writer");
        let sent = wire::write_frame(&mut *w, &Ask { id, req }, &[]).and_then(|n| {
            w.flush()?;
            Ok(n)
        });
        match sent {
            Ok(n) => {
                self.counters.bytes_out.fetch_add(n, Ordering::Relaxed);
                if work {
                    self.counters.requests.fetch_add(1, Ordering::Relaxed);
                }
                Ok((id, rx))
            }
            Err(_) => {
                self.counters.alive.store(false, Ordering::Relaxed);
                self.pending.lock().expect("pending").remove(&id);
                Err(self.dropped())
            }
        }
    }

    pub fn dropped(&self) -> RemoteError {
        RemoteError::Dropped {
            host: self.host.authority(),
        }
    }
}

/// The reader thread: each answer to its waiter; at the end of the stream the link is dead and
/// every waiter's channel closes (their `recv` fails: "the link dropped").
fn spawn_reader(
    mut out: BufReader<std::process::ChildStdout>,
    pending: Arc<Mutex<HashMap<u64, Waiter>>>,
    counters: Arc<Counters>,
) {
    let run = move || {
        while let Ok(Some((frame, n))) = wire::read_frame::<Answer>(&mut out) {
            counters.bytes_in.fetch_add(n, Ordering::Relaxed);
            let Answer { id, reply } = frame.header;
            let mut p = pending.lock().expect("pending");
            let last = match p.get(&id) {
                Some((_, true)) => matches!(reply, Reply::End),
                Some((_, false)) => true,
                None => continue,
            };
            let waiter = if last {
                p.remove(&id)
            } else {
                p.get(&id).cloned()
            };
            drop(p);
            if let Some((tx, _)) = waiter {
                let _ = tx.send((reply, frame.payload));
            }
        }
        counters.alive.store(false, Ordering::Relaxed);
        pending.lock().expect("pending").clear();
        super::wake();
    };
    std::thread::Builder::new()
        .name("fxray-link".into())
        .spawn(run)
        .expect("spawning a thread");
}

/// The last lines ssh wrote on stderr, kept for the message when no agent answers.
fn collect_stderr(mut err: std::process::ChildStderr) -> Arc<Mutex<String>> {
    let text = Arc::new(Mutex::new(String::new()));
    let t = text.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = err.read(&mut buf) {
            if n == 0 {
                break;
            }
            let mut s = t.lock().expect("stderr");
            s.push_str(&String::from_utf8_lossy(&buf[..n]));
            // Only the end matters; keep it bounded.
            if s.len() > 8192 {
                let cut = s.len() - 4096;
                let cut = (cut..s.len()).find(|i| s.is_char_boundary(*i)).unwrap_or(0);
                s.drain(..cut);
            }
        }
    });
    text
}

/// What the server said instead of greeting: ssh's last error line or the line read.
fn said(line: &str, stderr: &Arc<Mutex<String>>) -> String {
    // ssh writes its error after the connection ends; give the stderr thread a moment.
    std::thread::sleep(Duration::from_millis(50));
    let err = stderr.lock().map(|s| s.clone()).unwrap_or_default();
    let last = err
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    match (line.trim(), last) {
        ("", "") => "the connection closed without a word".to_string(),
        ("", e) => e.to_string(),
        (l, "") => l.to_string(),
        (l, e) => format!("{l}; {e}"),
    }
}

/// How often a live link measures its round trip (and so notices a silent drop).
const PING_EVERY: Duration = Duration::from_secs(5);

/// Measures `link`'s round trip every few seconds while it lives, for the status bar. Holds
/// only a weak reference: a link nobody uses any more is not kept up by it.
pub(super) fn keep_measuring(link: &Arc<Link>) {
    let weak = Arc::downgrade(link);
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(PING_EVERY);
            let Some(l) = weak.upgrade() else { return };
            if !l.is_alive() || l.ping().is_err() {
                return;
            }
        }
    });
}
