//! Background work: each job runs on its own thread (or rayon's pool) and reports through one
//! channel, as its feature's message ([`Apply`]). The UI drains the channel once per frame.
//!
//! The service is generic over the state `S` its results are applied to (the app's `App`):
//! it imports nothing of the features that use it, so they can all depend on it.

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};

/// A feature's finished background work, applied on the UI thread. Every result comes back
/// this one way: a job sends it through [`Outbox::send`], the app's `poll` dispatches it.
///
/// The stale-result rule lives in the dispatch, written once: a result carries the key of what
/// it was computed for, [`Apply::is_current`] compares that key with what the app shows now,
/// and a result that is no longer current is dropped unapplied.
pub trait Apply<S>: Send + 'static {
    /// Whether the app still shows what this result was computed for.
    fn is_current(&self, state: &S) -> bool;
    /// Moves the result into the app's state (small bookkeeping only: no I/O, no parsing).
    fn apply(self, state: &mut S);
}

/// One result on its way to the UI thread: its feature's message, type-erased.
pub struct Msg<S>(Box<dyn FnOnce(&mut S) + Send>);

impl<S> Msg<S> {
    pub fn new<A: Apply<S>>(result: A) -> Self {
        Msg(Box::new(move |state: &mut S| {
            if result.is_current(state) {
                result.apply(state);
            }
        }))
    }

    /// Applies the result when it is current (see [`Apply`]).
    pub(super) fn dispatch(self, state: &mut S) {
        (self.0)(state)
    }
}

/// Where a job sends its results; every send wakes the UI.
pub struct Outbox<S> {
    tx: Sender<Msg<S>>,
    waker: Waker,
}

impl<S> Clone for Outbox<S> {
    fn clone(&self) -> Self {
        Outbox {
            tx: self.tx.clone(),
            waker: self.waker.clone(),
        }
    }
}

impl<S> Outbox<S> {
    pub fn send<A: Apply<S>>(&self, result: A) {
        let _ = self.tx.send(Msg::new(result));
        (self.waker)();
    }
}

/// Wakes the UI when a message arrives (egui's `request_repaint`); a no-op headless.
pub type Waker = Arc<dyn Fn() + Send + Sync>;

pub struct Jobs<S> {
    tx: Sender<Msg<S>>,
    rx: Receiver<Msg<S>>,
    waker: Waker,
    running: Arc<std::sync::atomic::AtomicUsize>,
}

impl<S> Default for Jobs<S> {
    fn default() -> Self {
        let (tx, rx) = channel();
        Jobs {
            tx,
            rx,
            waker: Arc::new(|| {}),
            running: Arc::default(),
        }
    }
}

impl<S: 'static> Jobs<S> {
    pub fn set_waker(&mut self, waker: Waker) {
        self.waker = waker;
    }

    /// Runs `work` on a new thread; every result it sends wakes the UI.
    pub fn spawn(&self, work: impl FnOnce(&Outbox<S>) + Send + 'static) {
        use std::sync::atomic::Ordering;
        let out = self.outbox();
        let running = self.running.clone();
        running.fetch_add(1, Ordering::SeqCst);
        std::thread::spawn(move || {
            work(&out);
            running.fetch_sub(1, Ordering::SeqCst);
            (out.waker)();
        });
    }

    /// A sender for a service (the watcher, the runner) that reports from threads of its own:
    /// its events come back through the same channel as jobs' results, without counting as
    /// running jobs.
    pub fn outbox(&self) -> Outbox<S> {
        Outbox {
            tx: self.tx.clone(),
            waker: self.waker.clone(),
        }
    }

    pub fn try_recv(&self) -> Option<Msg<S>> {
        self.rx.try_recv().ok()
    }

    /// Jobs still running (for a busy indicator, and for tests waiting on the app).
    pub fn running(&self) -> usize {
        self.running.load(std::sync::atomic::Ordering::SeqCst)
    }
}
