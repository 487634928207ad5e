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

/// CPU time (user + system) this process has used so far, and its peak resident set in KiB.
pub(super) fn self_usage() -> (Duration, f64) {
    // SAFETY: getrusage writes into the struct we pass and nothing else.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return (Duration::ZERO, 0.0);
    }
    let tv =
        |t: libc::timeval| Duration::new(t.tv_sec.max(0) as u64, (t.tv_usec.max(0) as u32) * 1000);
    (tv(u.ru_utime) + tv(u.ru_stime), u.ru_maxrss as f64)
}
