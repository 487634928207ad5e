//! What the watcher knows between events: the files seen (a [`FileSet`], so the index is
//! rebuilt from memory, never by walking the tree again) and the files still being written.
//!
//! A file is *settled* once its size and modification time have not changed for `quiet`, or
//! as soon as its writer closes it. Until then it is reported as being written, so a half-written
//! pass is not mistaken for a broken one.

use crate::sources::discover::FileSet;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// What happened to one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// A file appeared (it may still be being written).
    Added,
    /// A known file changed size or time.
    Modified,
    Removed,
    /// The file stopped changing: its content is complete, as far as anyone can tell.
    Settled,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Modified => "modified",
            ChangeKind::Removed => "removed",
            ChangeKind::Settled => "settled",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub kind: ChangeKind,
    pub path: PathBuf,
    /// When the watcher saw it (wall clock, for people and logs).
    pub time: SystemTime,
}

/// Size and modification time: a file whose signature holds still has stopped changing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    pub size: u64,
    pub modified: Option<SystemTime>,
}

impl Signature {
    pub fn of(meta: &std::fs::Metadata) -> Self {
        Signature {
            size: meta.len(),
            modified: meta.modified().ok(),
        }
    }
}

/// What a path is on disk right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    File(Signature),
    Dir,
    Missing,
}

struct Unsettled {
    sig: Signature,
    since: Instant,
}

pub struct Tracker {
    pub set: FileSet,
    unsettled: HashMap<PathBuf, Unsettled>,
    quiet: Duration,
}

impl Tracker {
    pub fn new(set: FileSet, quiet: Duration) -> Self {
        Tracker {
            set,
            unsettled: HashMap::new(),
            quiet,
        }
    }

    /// Files still being written, as far as the tracker knows.
    pub fn writing(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self.unsettled.keys().cloned().collect();
        v.sort();
        v
    }

    /// Takes in what `path` is now. `files_under` lists a new folder's files (a folder that
    /// appears may already hold files written before the watch on it began).
    pub fn observe(
        &mut self,
        path: &Path,
        seen: Seen,
        now: Instant,
        files_under: impl FnOnce(&Path) -> Vec<(PathBuf, Signature)>,
    ) -> Vec<Change> {
        match seen {
            Seen::File(sig) => self
                .file(path.to_path_buf(), sig, now)
                .into_iter()
                .collect(),
            Seen::Dir => {
                let new: Vec<(PathBuf, Signature)> = files_under(path)
                    .into_iter()
                    .filter(|(p, _)| !self.set.files.contains_key(p))
                    .collect();
                new.into_iter()
                    .filter_map(|(p, sig)| self.file(p, sig, now))
                    .collect()
            }
            Seen::Missing => {
                let gone: Vec<PathBuf> = self
                    .set
                    .files
                    .range(path.to_path_buf()..)
                    .take_while(|(p, _)| p.starts_with(path))
                    .map(|(p, _)| p.clone())
                    .collect();
                self.set.remove(path);
                gone.into_iter()
                    .map(|p| {
                        self.unsettled.remove(&p);
                        change(ChangeKind::Removed, p)
                    })
                    .collect()
            }
        }
    }

    fn file(&mut self, path: PathBuf, sig: Signature, now: Instant) -> Option<Change> {
        let known = self.set.files.get(&path).map(|f| f.size);
        if let Some(u) = self.unsettled.get_mut(&path) {
            // Still the change already reported: copying a file in is one `added` however
            // the OS splits it into create and write events, and however a busy disk spaces
            // them. Its end is `settled`.
            if u.sig != sig {
                u.sig = sig;
                u.since = now;
                self.set.insert(path.clone(), sig.size);
            }
            return None;
        }
        self.unsettled
            .insert(path.clone(), Unsettled { sig, since: now });
        self.set.insert(path.clone(), sig.size);
        Some(change(
            if known.is_some() {
                ChangeKind::Modified
            } else {
                ChangeKind::Added
            },
            path,
        ))
    }

    /// The writer closed `path`: it is complete now, without waiting for the quiet time.
    pub fn closed(&mut self, path: &Path, seen: Seen) -> Vec<Change> {
        let mut out = Vec::new();
        if let Seen::File(sig) = seen {
            if !self.set.files.contains_key(path) {
                out.extend(self.file(path.to_path_buf(), sig, Instant::now()));
            }
            if let Some(u) = self.unsettled.remove(path) {
                if u.sig.size != sig.size {
                    self.set.insert(path.to_path_buf(), sig.size);
                }
                out.push(change(ChangeKind::Settled, path.to_path_buf()));
            }
        }
        out
    }

    /// Settles the files that held still for the quiet time; `stat` re-reads one file.
    pub fn tick(&mut self, now: Instant, stat: impl Fn(&Path) -> Seen) -> Vec<Change> {
        let due: Vec<PathBuf> = self
            .unsettled
            .iter()
            .filter(|(_, u)| now.duration_since(u.since) >= self.quiet)
            .map(|(p, _)| p.clone())
            .collect();
        let mut out = Vec::new();
        for path in due {
            match stat(&path) {
                Seen::File(sig) if sig == self.unsettled[&path].sig => {
                    self.unsettled.remove(&path);
                    out.push(change(ChangeKind::Settled, path));
                }
                Seen::File(sig) => {
                    // Still growing though no event said so (polling, or a missed event): the
                    // change reported when it began goes on; it settles later.
                    self.unsettled
                        .insert(path.clone(), Unsettled { sig, since: now });
                    self.set.insert(path.clone(), sig.size);
                }
                other => out.extend(self.observe(&path, other, now, |_| Vec::new())),
            }
        }
        out
    }

    /// When the next file could settle (for the watcher's sleep).
    pub fn next_due(&self) -> Option<Instant> {
        self.unsettled.values().map(|u| u.since + self.quiet).min()
    }
}

fn change(kind: ChangeKind, path: PathBuf) -> Change {
    Change {
        kind,
        path,
        time: SystemTime::now(),
    }
}

/// What `path` is now, without following a symlink (a link to a folder is not walked).
pub fn stat(path: &Path) -> Seen {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => Seen::Dir,
        Ok(m) if m.is_file() => Seen::File(Signature::of(&m)),
        // Symlinks to files count as the file they point at; dangling ones as missing.
        Ok(m) if m.file_type().is_symlink() => match std::fs::metadata(path) {
            Ok(t) if t.is_file() => Seen::File(Signature::of(&t)),
            _ => Seen::Missing,
        },
        _ => Seen::Missing,
    }
}

/// The files under a folder that just appeared (bounded like the first walk).
pub fn files_under(dir: &Path) -> Vec<(PathBuf, Signature)> {
    walkdir::WalkDir::new(dir)
        .max_depth(24)
        .follow_links(false)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let sig = Signature::of(&e.metadata().ok()?);
            Some((e.into_path(), sig))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(size: u64) -> Seen {
        Seen::File(Signature {
            size,
            modified: None,
        })
    }

    #[test]
    fn a_growing_file_settles_only_after_holding_still() {
        let mut t = Tracker::new(FileSet::default(), Duration::from_millis(300));
        let p = Path::new("/r/a.txt");
        let t0 = Instant::now();
        let c = t.observe(p, sig(10), t0, |_| vec![]);
        assert_eq!(c[0].kind, ChangeKind::Added);
        assert_eq!(t.writing(), vec![p.to_path_buf()]);
        // Grew before the quiet time passed: still writing, and still the one change `added`.
        assert!(
            t.tick(t0 + Duration::from_millis(350), |_| sig(20))
                .is_empty()
        );
        assert!(
            t.observe(p, sig(30), t0 + Duration::from_millis(360), |_| vec![])
                .is_empty()
        );
        assert!(
            t.tick(t0 + Duration::from_millis(600), |_| sig(30))
                .is_empty()
        );
        let c = t.tick(t0 + Duration::from_millis(700), |_| sig(30));
        assert_eq!(c[0].kind, ChangeKind::Settled);
        assert!(t.writing().is_empty());
        assert_eq!(t.set.files[p].size, 30);
    }

    /// However the OS splits and orders the events of one copy (a create seen at size 0 or
    /// whole, writes seen or merged, the close seen or lost), it is one `added`, then `settled`.
    #[test]
    fn a_copied_file_is_added_once_however_the_events_come() {
        let p = Path::new("/r/a.txt");
        type Step = fn(&mut Tracker, &Path, Instant) -> Vec<Change>;
        let create0: Step = |t, p, now| t.observe(p, sig(0), now, |_| vec![]);
        let write: Step = |t, p, now| t.observe(p, sig(7), now, |_| vec![]);
        let whole: Step = |t, p, now| t.observe(p, sig(9), now, |_| vec![]);
        let close: Step = |t, p, _| t.closed(p, sig(9));
        let quiet: Step = |t, _, now| t.tick(now + Duration::from_secs(1), |_| sig(9));
        let orders: [&[Step]; 6] = [
            &[create0, write, whole, close],
            &[create0, whole, close],
            &[whole, close],
            &[close],
            &[create0, write, whole, quiet],
            &[write, create0, whole, whole, close],
        ];
        for (i, steps) in orders.iter().enumerate() {
            let mut t = Tracker::new(FileSet::default(), Duration::from_millis(300));
            let now = Instant::now();
            let kinds: Vec<ChangeKind> = steps
                .iter()
                .flat_map(|step| step(&mut t, p, now))
                .map(|c| c.kind)
                .collect();
            assert_eq!(kinds, [ChangeKind::Added, ChangeKind::Settled], "order {i}");
            assert_eq!(t.set.files[p].size, 9, "order {i}");
        }
    }

    #[test]
    fn a_removed_folder_removes_its_files() {
        let mut t = Tracker::new(FileSet::default(), Duration::ZERO);
        let now = Instant::now();
        t.observe(Path::new("/r/x/1"), sig(1), now, |_| vec![]);
        t.observe(Path::new("/r/x/2"), sig(1), now, |_| vec![]);
        t.observe(Path::new("/r/y"), sig(1), now, |_| vec![]);
        let c = t.observe(Path::new("/r/x"), Seen::Missing, now, |_| vec![]);
        assert_eq!(c.len(), 2);
        assert!(c.iter().all(|c| c.kind == ChangeKind::Removed));
        assert_eq!(t.set.files.len(), 1);
        assert!(t.writing().iter().all(|p| p.ends_with("y")));
    }
}
