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
