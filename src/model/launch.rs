//! The ranks of one distributed launch, grouped from their run folders (docs/formats.md §1.7).
//!
//! Every rank of a `torchrun` launch writes its own `run_<time>-pid_<pid>-rank_<R>` folder, each
//! with its own pid and a start time a few milliseconds from the others'. Nothing in the tree
//! names the launch, so it is inferred: run folders with a rank suffix, in the same parent
//! folder, whose start times lie within [`WINDOW_MICROS`] of the group's first, each rank once.

use super::index::Run;
pub use super::index::{Launch, LaunchRank};
use std::path::PathBuf;

/// How far apart (µs) the ranks of one launch may start: ranks reach their first compile
/// together (they meet at the process group's rendezvous), but on a loaded host imports can
/// spread them by seconds.
pub const WINDOW_MICROS: i64 = 10_000_000;

/// Groups the ranked runs into launches of two ranks or more.
pub fn group(runs: &[Run]) -> Vec<Launch> {
    let mut ranked: Vec<(PathBuf, i64, u32, usize)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let t = micros(r.time.as_deref()?)?;
            let parent = r.path.parent()?.to_path_buf();
            Some((parent, t, r.rank?, i))
        })
        .collect();
    ranked.sort();
    let mut launches: Vec<Launch> = Vec::new();
    let mut open: Option<(PathBuf, i64, Launch)> = None;
    for (parent, t, rank, i) in ranked {
        let fits = open.as_ref().is_some_and(|(p, start, l)| {
            *p == parent && t - start <= WINDOW_MICROS && l.run_of(rank).is_none()
        });
        if !fits {
            launches.extend(open.take().map(|(_, _, l)| l));
            let name = runs[i]
                .name
                .split_once("-pid_")
                .map_or(runs[i].name.as_str(), |(head, _)| head)
                .to_string();
            open = Some((
                parent.clone(),
                t,
                Launch {
                    name,
                    root: parent,
                    ranks: Vec::new(),
                },
            ));
        }
        if let Some((_, _, l)) = open.as_mut() {
            l.ranks.push(LaunchRank {
                rank,
                run: i,
                path: runs[i].path.clone(),
            });
        }
    }
    launches.extend(open.map(|(_, _, l)| l));
    launches.retain(|l| l.ranks.len() > 1);
    for l in &mut launches {
        l.ranks.sort_by_key(|r| r.rank);
    }
    launches
}

/// `2026-11-29 11:47:50.921376` → microseconds since 1970-01-01 (UTC or not: only differences
/// matter).
pub fn micros(time: &str) -> Option<i64> {
    let (date, clock) = time.split_once(' ')?;
    let mut d = date.splitn(3, '-').map(|x| x.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = clock.split_once('.').unwrap_or((clock, "0"));
    let mut c = hms.splitn(3, ':').map(|x| x.parse::<i64>().ok());
    let (h, mi, s) = (c.next()??, c.next()??, c.next()??);
    // The folder's fraction is `%f` (6 digits); pad or cut to microseconds.
    let us: i64 = format!("{frac:0<6}").get(..6)?.parse().ok()?;
    let secs = days_from_civil(y, m, day) * 86_400 + h * 3600 + mi * 60 + s;
    Some(secs * 1_000_000 + us)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn run(dir: &str, name: &str) -> Run {
        let (time, pid, rank) = parse(name);
        Run {
            name: name.to_string(),
            path: Path::new(dir).join(name),
            time: Some(time),
            pid: Some(pid),
            rank,
            siblings: Vec::new(),
            models: Vec::new(),
            logs: Vec::new(),
        }
    }

    /// The fields the folder name gives (the real parser lives in `sources::names`).
    fn parse(name: &str) -> (String, u32, Option<u32>) {
        let parts: Vec<&str> = name.trim_start_matches("run_").split('-').collect();
        let t: Vec<&str> = parts[0].split('_').collect();
        let time = format!(
            "{}-{}-{} {}:{}:{}.{}",
            t[0], t[1], t[2], t[3], t[4], t[5], t[6]
        );
        let pid = parts[1].trim_start_matches("pid_").parse().unwrap();
        let rank = parts
            .get(2)
            .map(|r| r.trim_start_matches("rank_").parse().unwrap());
        (time, pid, rank)
    }

    #[test]
    fn micros_counts_across_month_ends() {
        let a = micros("2026-02-28 23:59:59.500000").unwrap();
        let b = micros("2026-03-01 00:00:01.000000").unwrap();
        assert_eq!(b - a, 1_500_000);
        assert_eq!(micros("1970-01-01 00:00:00.000001"), Some(1));
        assert_eq!(
            micros("2026-11-29 11:47:50.9"),
            micros("2026-11-29 11:47:50.900000")
        );
        assert_eq!(micros("garbage"), None);
    }

    #[test]
    fn ranks_close_in_time_are_one_launch_and_a_repeated_rank_starts_another() {
        let runs = vec![
            run("/d", "run_2026_11_29_11_47_50_921376-pid_1296-rank_0"),
            run("/d", "run_2026_11_29_11_47_50_912229-pid_1297-rank_1"),
            // the same process without the rank suffix: not part of a launch
            run("/d", "run_2026_11_29_11_47_50_900000-pid_1296"),
            // a second launch 5 minutes later
            run("/d", "run_2026_11_29_11_52_50_000000-pid_2000-rank_0"),
            run("/d", "run_2026_11_29_11_52_51_000000-pid_2001-rank_1"),
            // rank 0 again within the window: a third launch (with rank 1 of pid 2003)
            run("/d", "run_2026_11_29_11_52_52_000000-pid_2002-rank_0"),
            run("/d", "run_2026_11_29_11_52_52_100000-pid_2003-rank_1"),
            // another folder: never grouped with /d
            run("/e", "run_2026_11_29_11_47_50_930000-pid_3000-rank_2"),
        ];
        let l = group(&runs);
        let shape: Vec<(String, Vec<(u32, usize)>)> = l
            .iter()
            .map(|l| {
                (
                    l.name.clone(),
                    l.ranks.iter().map(|r| (r.rank, r.run)).collect(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            vec![
                (
                    "run_2026_11_29_11_47_50_912229".into(),
                    vec![(0, 0), (1, 1)]
                ),
                (
                    "run_2026_11_29_11_52_50_000000".into(),
                    vec![(0, 3), (1, 4)]
                ),
                (
                    "run_2026_11_29_11_52_52_000000".into(),
                    vec![(0, 5), (1, 6)]
                ),
            ]
        );
        assert_eq!(l[0].root, Path::new("/d"));
        assert_eq!(l[0].rank_of_run(1), Some(1));
    }

    #[test]
    fn ranks_further_apart_than_the_window_are_not_grouped() {
        let runs = vec![
            run("/d", "run_2026_11_29_11_47_50_000000-pid_1-rank_0"),
            run("/d", "run_2026_11_29_11_48_01_000000-pid_2-rank_1"),
        ];
        assert!(group(&runs).is_empty());
    }
}
