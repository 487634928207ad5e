//! Trees on another machine, read through an agent over ssh: `fxray ssh://host/abs/path`.
//!
//! The laptop spawns `ssh -T host fxray agent --stdio` with the system's OpenSSH (so
//! `~/.ssh/config`, ProxyJump, agents and ControlMaster apply) and the agent, the same binary
//! headless, does the file work on the server. A remote tree is mounted at
//! `/ssh:[user@]host[:port]/abs/path` ([`target`]); `sources::vfs`, the one door every reader
//! goes through, sends what lies under such a path here ([`fs`]), so every reader of fxray
//! reads a remote tree as it reads a local one. What would move too many bytes (a tensor's
//! statistics, watching) is asked of the agent as a whole ([`proto::Request`]).
//!
//! Links are made on first use and remade after a drop: a reader that meets a dropped link
//! gets an error that says so, and the next read reconnects.
//!
//! A link belongs to whoever opened it. The window and the command line read through the
//! process's links; a caller that wants links of its own (a test counting the requests its
//! work made, a second tree on the same host) makes an [`Owner`]: its mounts name it, what
//! reads under them goes through its links only, with its settings, and dropping it closes
//! them.

mod error;
pub mod fs;
mod link;
pub mod proto;
pub mod target;
pub mod wire;

pub use error::RemoteError;
pub use link::{Counters, Link, Settings};
pub use target::{BadAddress, Host, display, host_of, is_remote, resolve};

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// After a failed connect, reads within this long fail at once with the same error instead of
/// each waiting for ssh again.
const RETRY_AFTER: Duration = Duration::from_secs(3);

#[derive(Default)]
struct Slot {
    link: Option<Arc<Link>>,
    failed: Option<(Instant, RemoteError)>,
    /// Links made to this host after the first (reconnections).
    reconnects: u32,
}

fn settings() -> &'static Mutex<Settings> {
    static S: OnceLock<Mutex<Settings>> = OnceLock::new();
    S.get_or_init(|| Mutex::new(Settings::from_env()))
}

/// Every link by its host, whose owner is part of it (0: the process).
type Slots = HashMap<Host, Arc<Mutex<Slot>>>;

fn slots() -> &'static Mutex<Slots> {
    static L: OnceLock<Mutex<Slots>> = OnceLock::new();
    L.get_or_init(Mutex::default)
}

/// How each live [`Owner`] makes its links.
fn owners() -> &'static Mutex<HashMap<u64, Settings>> {
    static O: OnceLock<Mutex<HashMap<u64, Settings>>> = OnceLock::new();
    O.get_or_init(Mutex::default)
}

/// Links of one caller, apart from the process's and every other owner's: its own connections,
/// settings and counters. Dropping it closes its links.
#[derive(Debug)]
pub struct Owner {
    id: u64,
}

impl Owner {
    /// An owner whose links are made with `settings`.
    pub fn new(settings: Settings) -> Owner {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        owners().lock().expect("owners").insert(id, settings);
        Owner { id }
    }

    /// `host` reached through this owner's link.
    pub fn host(&self, host: &Host) -> Host {
        Host {
            owner: self.id,
            ..host.clone()
        }
    }

    /// The path `remote` on `host` is read by through this owner's link.
    pub fn mount_path(&self, host: &Host, remote: &str) -> PathBuf {
        target::mount_path(&self.host(host), remote)
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        owners().lock().expect("owners").remove(&self.id);
        let mine: Vec<Arc<Mutex<Slot>>> = {
            let mut slots = slots().lock().expect("links");
            let keys: Vec<Host> = slots
                .keys()
                .filter(|h| h.owner == self.id)
                .cloned()
                .collect();
            keys.iter().filter_map(|k| slots.remove(k)).collect()
        };
        for slot in mine {
            if let Some(l) = slot.lock().ok().and_then(|s| s.link.clone()) {
                l.close();
            }
        }
    }
}

/// Where `fxray` is on servers (`--remote-fxray`); `None` keeps `FXRAY_REMOTE_FXRAY` or the
/// server's PATH.
pub fn set_remote_fxray(path: Option<String>) {
    if let Some(p) = path {
        settings().lock().expect("settings").fxray = p;
    }
}

/// How links are made from now on (tests, and a window's settings); links already up stay.
pub fn configure(new: Settings) {
    *settings().lock().expect("settings") = new;
}

/// Called when a link comes up or drops (the window asks for a frame to show it).
type Waker = Arc<dyn Fn() + Send + Sync>;

fn waker() -> &'static Mutex<Option<Waker>> {
    static W: OnceLock<Mutex<Option<Waker>>> = OnceLock::new();
    W.get_or_init(Mutex::default)
}

/// Tells the window when a link changes, so the status bar shows a drop while it is at rest.
pub fn set_waker(w: Waker) {
    *waker().lock().expect("waker") = Some(w);
}

pub(crate) fn wake() {
    let w = waker().lock().ok().and_then(|w| w.clone());
    if let Some(w) = w {
        w();
    }
}

/// How links are made now.
pub fn current_settings() -> Settings {
    settings().lock().expect("settings").clone()
}

/// The link to `host`, connecting (again) when there is none or it dropped.
pub fn link(host: &Host) -> Result<Arc<Link>, RemoteError> {
    let own = owners().lock().expect("owners").get(&host.owner).cloned();
    if own.is_none() && host.owner != 0 {
        return Err(RemoteError::Closed {
            host: host.authority(),
        });
    }
    let slot = slots()
        .lock()
        .expect("links")
        .entry(host.clone())
        .or_default()
        .clone();
    // One connect per host at a time: the readers that wait for it share its result.
    let mut s = slot.lock().expect("link slot");
    if let Some(l) = s.link.as_ref().filter(|l| l.is_alive()) {
        return Ok(l.clone());
    }
    if let Some((at, e)) = &s.failed
        && at.elapsed() < RETRY_AFTER
    {
        return Err(e.clone());
    }
    let settings = own.unwrap_or_else(|| settings().lock().expect("settings").clone());
    match Link::connect(host, &settings) {
        Ok(l) => {
            if s.link.is_some() {
                s.reconnects += 1;
            }
            let l = Arc::new(l);
            s.link = Some(l.clone());
            s.failed = None;
            link::keep_measuring(&l);
            wake();
            Ok(l)
        }
        Err(e) => {
            s.failed = Some((Instant::now(), e.clone()));
            wake();
            Err(e)
        }
    }
}

/// What the status bar shows of one link.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkStatus {
    pub host: String,
    pub alive: bool,
    pub rtt_ms: f64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub requests: u64,
    pub reconnects: u32,
    /// Why the last connect failed, while no link is up.
    pub error: Option<String>,
}

/// Every link the process made so far (not an [`Owner`]'s), for the status bar. Never waits
/// on the network.
pub fn status() -> Vec<LinkStatus> {
    let slots: Vec<(String, Arc<Mutex<Slot>>)> = slots()
        .lock()
        .expect("links")
        .iter()
        .filter(|(h, _)| h.owner == 0)
        .map(|(h, v)| (h.authority(), v.clone()))
        .collect();
    let mut out = Vec::new();
    for (host, slot) in slots {
        // A slot locked by a connect in progress is skipped, not waited for.
        let Ok(s) = slot.try_lock() else {
            out.push(connecting(host));
            continue;
        };
        out.push(slot_status(host, &s));
    }
    out.sort_by(|a, b| a.host.cmp(&b.host));
    out
}

fn connecting(host: String) -> LinkStatus {
    LinkStatus {
        host,
        alive: false,
        rtt_ms: 0.0,
        bytes_in: 0,
        bytes_out: 0,
        requests: 0,
        reconnects: 0,
        error: Some("connecting…".into()),
    }
}

fn slot_status(host: String, s: &Slot) -> LinkStatus {
    let c = s.link.as_ref().map(|l| l.counters.clone());
    let load = |f: fn(&Counters) -> u64| c.as_deref().map_or(0, f);
    LinkStatus {
        host,
        alive: c.as_ref().is_some_and(|c| c.alive.load(Ordering::Relaxed)),
        rtt_ms: load(|c| c.rtt_us.load(Ordering::Relaxed)) as f64 / 1000.0,
        bytes_in: load(|c| c.bytes_in.load(Ordering::Relaxed)),
        bytes_out: load(|c| c.bytes_out.load(Ordering::Relaxed)),
        requests: load(|c| c.requests.load(Ordering::Relaxed)),
        reconnects: s.reconnects,
        error: s.failed.as_ref().map(|(_, e)| e.to_string()),
    }
}

/// What the status bar shows of the link to `host` (its owner's), if one was made. Never
/// waits on the network: a link being made says so.
pub fn status_of(host: &Host) -> Option<LinkStatus> {
    let slot = slots().lock().expect("links").get(host).cloned()?;
    Some(match slot.try_lock() {
        Ok(s) => slot_status(host.authority(), &s),
        Err(_) => connecting(host.authority()),
    })
}

/// Drops the link to `host` as if the network had (tests).
pub fn disconnect(host: &Host) {
    let slot = slots().lock().expect("links").get(host).cloned();
    // The link stays in its slot (dead), so the next connect counts as a reconnection.
    if let Some(l) = slot.and_then(|s| s.lock().ok().and_then(|s| s.link.clone())) {
        l.close();
    }
}
