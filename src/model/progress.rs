//! How far a long piece of background work has got, shared by the thread doing it and the
//! window showing it, and the window's way to call it off. The work sets a stage ("computing
//! pairs", 0 of 450) and adds to it as it goes; the window reads one line ("computing pairs
//! 120/450") each frame. Nothing blocks: a count is an atomic, the stage a short lock.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What a stage counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Unit {
    /// Things: pairs, files, passes.
    #[default]
    Items,
    /// Bytes, written as MiB/GiB.
    Bytes,
}

#[derive(Debug, Default)]
pub struct Progress {
    stage: Mutex<(String, Unit)>,
    done: AtomicU64,
    total: AtomicU64,
    cancelled: AtomicBool,
}

impl Progress {
    /// Starts a stage of `total` units (0: not known), none done yet.
    pub fn stage(&self, what: impl Into<String>, total: u64, unit: Unit) {
        *self.stage.lock().unwrap_or_else(|e| e.into_inner()) = (what.into(), unit);
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
    }

    /// `n` more units of the stage done (from any thread).
    pub fn add(&self, n: u64) {
        self.done.fetch_add(n, Ordering::Relaxed);
    }

    /// Asks the work to stop; it stops at its next check and its result is dropped.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// The cancel as a flag, for work that takes one (an op on a server).
    pub fn flag(&self) -> &AtomicBool {
        &self.cancelled
    }

    /// `(done, total)` of the stage (`total` 0 when not known).
    pub fn counts(&self) -> (u64, u64) {
        (
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }

    /// The stage as the user reads it: `computing pairs 120/450`, `reading run.tar.gz 45 MiB
    /// of 190 MiB`, or the stage's name alone before it counts anything.
    pub fn line(&self) -> String {
        let (what, unit) = self.stage.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let (done, total) = self.counts();
        // Compressed bytes read may run past a length taken before: never "more than all".
        let done = if total > 0 { done.min(total) } else { done };
        match (unit, total) {
            (_, 0) if done == 0 => what,
            (Unit::Items, 0) => format!("{what} {done}"),
            (Unit::Items, _) => format!("{what} {done}/{total}"),
            (Unit::Bytes, 0) => format!("{what} {}", super::size::human_bytes(done)),
            (Unit::Bytes, _) => format!(
                "{what} {} of {}",
                super::size::human_bytes(done),
                super::size::human_bytes(total)
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_counts_what_the_stage_counts() {
        let p = Progress::default();
        p.stage("finding the dumps", 0, Unit::Items);
        assert_eq!(p.line(), "finding the dumps");
        p.stage("computing pairs", 450, Unit::Items);
        p.add(120);
        assert_eq!(p.line(), "computing pairs 120/450");
        p.stage("reading run.tar.gz", 190 << 20, Unit::Bytes);
        p.add(45 << 20);
        assert_eq!(p.line(), "reading run.tar.gz 45 MiB of 190 MiB");
        p.add(1000 << 20);
        assert_eq!(p.line(), "reading run.tar.gz 190 MiB of 190 MiB");
        assert!(!p.cancelled());
        p.cancel();
        assert!(p.cancelled());
    }
}
