//! What every benchmark reports: the best and the median of its rounds, and peak memory.
//! Its own file so that each command's `bench` and the `bench` dispatcher both use it without
//! importing each other.

use std::time::Duration;

pub(super) fn min(times: &[Duration]) -> Duration {
    times.iter().copied().min().unwrap_or_default()
}

pub(super) fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

/// A `kB` field of /proc/self/status (`VmRSS`, `VmHWM`), where there is one.
pub(super) fn proc_kib(field: &str) -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    s.lines()
        .find(|l| l.starts_with(field) && l[field.len()..].starts_with(':'))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// `rounds` runs of `run`, timed, with the resident memory before them and the peak during
/// them alone (Linux: writing "5" to clear_refs resets the high-water mark).
pub(super) struct Rounds<T> {
    /// The last run's answer.
    pub last: T,
    pub times: Vec<Duration>,
    pub before_kib: Option<f64>,
    pub peak_kib: Option<f64>,
}

pub(super) fn rounds<T, E>(
    rounds: usize,
    mut run: impl FnMut() -> Result<T, E>,
) -> Result<Rounds<T>, E> {
    let before_kib = proc_kib("VmRSS");
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let mut times = Vec::with_capacity(rounds);
    let mut last = None;
    for _ in 0..rounds {
        let t = std::time::Instant::now();
        last = Some(run()?);
        times.push(t.elapsed());
    }
    let peak_kib = proc_kib("VmHWM");
    Ok(Rounds {
        last: last.expect("rounds >= 1"),
        times,
        before_kib,
        peak_kib,
    })
}
