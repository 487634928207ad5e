//! Building an archive's tree from its entries as they stream by, with every bound in one
//! place: names are cleaned (a leading `/` dropped, `..` refused), links are not followed (they
//! are skipped), a name stored twice keeps its last copy (what `tar x` leaves), and the bytes
//! expanded are bounded per entry and in total, so a bomb stops the read with one line and
//! keeps what came before it.

use super::error::ArchiveError;
use super::{Archive, Data, Node, Stamp};
use crate::model::size::human_bytes;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// How much an archive may expand into.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Largest single entry (a dumped tensor can be a GB).
    pub entry_bytes: u64,
    /// All entries together: past this the archive is treated as a bomb.
    pub total_bytes: u64,
    /// Bytes held in memory; the rest goes to the cache folder.
    pub memory_bytes: u64,
    /// Entries larger than this go to the cache folder (and are memory-mapped from there).
    pub memory_entry: u64,
    /// Entries of any kind (a tar of millions of empty files is a bomb too).
    pub entries: usize,
}

const GB: u64 = 1 << 30;
const MB: u64 = 1 << 20;

pub const LIMITS: Limits = Limits {
    entry_bytes: 2 * GB,
    total_bytes: 4 * GB,
    memory_bytes: 512 * MB,
    memory_entry: 64 * MB,
    entries: 500_000,
};

/// Whether the reader of the archive goes on to the next entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Go,
    Stop,
}

/// Why an entry is not read.
#[derive(Debug, Clone, Copy)]
pub enum Skip {
    /// A symbolic or hard link, wherever it points.
    Link,
    /// A device, a FIFO.
    Special,
    /// Encrypted, or compressed with a method fxray does not read.
    Unsupported,
}

/// A count of one kind of refused or odd entry, with the first name met for the message.
#[derive(Default)]
struct Tally {
    n: usize,
    first: String,
}

impl Tally {
    fn add(&mut self, name: &Path) {
        if self.n == 0 {
            self.first = name.display().to_string();
        }
        self.n += 1;
    }
}

pub struct Builder<'a> {
    name: String,
    spill_dir: PathBuf,
    spill_ready: bool,
    limits: &'a Limits,
    nodes: BTreeMap<PathBuf, Node>,
    entries: usize,
    total: u64,
    in_memory: u64,
    spilled: u64,
    spill_count: u64,
    links: Tally,
    absolute: Tally,
    parent: Tally,
    duplicates: Tally,
    conflicts: Tally,
    special: Tally,
    unsupported: Tally,
    how: Option<String>,
    /// The read buffer, reused: a fresh 64 KB for each of 30,000 small entries is most of the
    /// time of an archive's read.
    chunk: Vec<u8>,
    stopped: Option<String>,
}

impl<'a> Builder<'a> {
    /// `name` names the archive in messages; spilled entries go to `spill_dir` (made on first
    /// use, so an archive that fits in memory writes nothing).
    pub fn new(name: String, spill_dir: PathBuf, limits: &'a Limits) -> Self {
        Builder {
            name,
            spill_dir,
            spill_ready: false,
            limits,
            nodes: BTreeMap::new(),
            entries: 0,
            total: 0,
            in_memory: 0,
            spilled: 0,
            spill_count: 0,
            links: Tally::default(),
            absolute: Tally::default(),
            parent: Tally::default(),
            duplicates: Tally::default(),
            conflicts: Tally::default(),
            special: Tally::default(),
            unsupported: Tally::default(),
            how: None,
            chunk: vec![0u8; 1 << 16],
            stopped: None,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Stops the read: `why` is said once, with how much was read before.
    pub fn stop(&mut self, why: String) {
        if self.stopped.is_none() {
            self.stopped = Some(why);
        }
    }

    /// How a damaged archive was read, said with the reason it stopped (one line for both).
    pub fn read_as(&mut self, how: String) {
        self.how = Some(how);
    }

    /// Counts an entry; false (and stopped) past the entry bound.
    fn count(&mut self) -> bool {
        self.entries += 1;
        if self.entries > self.limits.entries {
            self.stop(format!(
                "more than {} entries: the rest is not read",
                self.limits.entries
            ));
            return false;
        }
        true
    }

    /// An entry not read: counted, and said in the end.
    pub fn skip(&mut self, raw: &Path, why: Skip) -> Flow {
        if !self.count() {
            return Flow::Stop;
        }
        match why {
            Skip::Link => &mut self.links,
            Skip::Special => &mut self.special,
            Skip::Unsupported => &mut self.unsupported,
        }
        .add(raw);
        Flow::Go
    }

    pub fn dir(&mut self, raw: &Path) -> Flow {
        if !self.count() {
            return Flow::Stop;
        }
        if let Some(rel) = self.clean(raw) {
            self.insert(rel, Node::Dir);
        }
        Flow::Go
    }

    /// A regular file of `declared` bytes whose data `r` yields. `exact`: the archive states
    /// the size (tar, a zip's directory), so more bytes than that are a lie, not data.
    pub fn file(&mut self, raw: &Path, declared: u64, exact: bool, r: &mut dyn Read) -> Flow {
        if self.stopped.is_some() || !self.count() {
            return Flow::Stop;
        }
        let Some(rel) = self.clean(raw) else {
            return Flow::Go;
        };
        let room = self.limits.total_bytes.saturating_sub(self.total);
        if declared > self.limits.entry_bytes {
            self.stop(
                ArchiveError::EntryTooLarge {
                    entry: rel,
                    claimed: Some(human_bytes(declared)),
                    limit: human_bytes(self.limits.entry_bytes),
                }
                .to_string(),
            );
            return Flow::Stop;
        }
        if declared > room {
            self.stop(self.over_total(&rel).to_string());
            return Flow::Stop;
        }
        match self.take(&rel, declared, exact, r) {
            Ok((size, data)) => {
                self.total += size;
                self.insert(rel, Node::File { size, data });
                Flow::Go
            }
            Err(why) => {
                self.stop(why.to_string());
                Flow::Stop
            }
        }
    }

    fn over_total(&self, rel: &Path) -> ArchiveError {
        ArchiveError::TotalTooLarge {
            entry: rel.to_path_buf(),
            limit: human_bytes(self.limits.total_bytes),
        }
    }

    /// Reads one entry's bytes, in memory while it and the budget allow, else into the cache.
    fn take(
        &mut self,
        rel: &Path,
        declared: u64,
        exact: bool,
        r: &mut dyn Read,
    ) -> Result<(u64, Data), ArchiveError> {
        let mut chunk = std::mem::take(&mut self.chunk);
        let got = self.take_with(&mut chunk, rel, declared, exact, r);
        self.chunk = chunk;
        got
    }

    fn take_with(
        &mut self,
        chunk: &mut [u8],
        rel: &Path,
        declared: u64,
        exact: bool,
        r: &mut dyn Read,
    ) -> Result<(u64, Data), ArchiveError> {
        let allowed = self
            .limits
            .entry_bytes
            .min(self.limits.total_bytes.saturating_sub(self.total));
        let fits = |b: &Self, n: u64| {
            n <= b.limits.memory_entry && b.in_memory + n <= b.limits.memory_bytes
        };
        let mut buf: Vec<u8> = Vec::with_capacity(if fits(self, declared) {
            declared as usize
        } else {
            0
        });
        let mut spill: Option<(std::fs::File, PathBuf)> = None;
        let mut n: u64 = 0;
        loop {
            let k = match r.read(chunk) {
                Ok(0) => break,
                Ok(k) => k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                // A stream that stops mid-entry is a cut file, not a damaged one.
                Err(e)
                    if e.kind() == std::io::ErrorKind::UnexpectedEof
                        || e.to_string().contains("incomplete") =>
                {
                    return Err(ArchiveError::CutShort {
                        entry: rel.to_path_buf(),
                        got: n,
                        declared,
                    });
                }
                Err(e) => {
                    return Err(ArchiveError::DamagedEntry {
                        entry: rel.to_path_buf(),
                        cause: e.to_string(),
                    });
                }
            };
            n += k as u64;
            if exact && n > declared {
                // Stopped at once: a zip entry claiming 1 KB that inflates to 10 GB costs
                // nothing, instead of filling the cache up to the bound.
                return Err(ArchiveError::MoreThanClaimed {
                    entry: rel.to_path_buf(),
                    declared,
                });
            }
            if n > allowed {
                return Err(if n > self.limits.entry_bytes {
                    ArchiveError::EntryTooLarge {
                        entry: rel.to_path_buf(),
                        claimed: None,
                        limit: human_bytes(self.limits.entry_bytes),
                    }
                } else {
                    self.over_total(rel)
                });
            }
            if spill.is_none() && !fits(self, n) {
                let (mut f, p) = self.spill_file()?;
                f.write_all(&buf).map_err(|e| self.cache_error(&e))?;
                buf = Vec::new();
                spill = Some((f, p));
            }
            match &mut spill {
                Some((f, _)) => f.write_all(&chunk[..k]).map_err(|e| self.cache_error(&e))?,
                None => buf.extend_from_slice(&chunk[..k]),
            }
        }
        if n < declared {
            return Err(ArchiveError::CutShort {
                entry: rel.to_path_buf(),
                got: n,
                declared,
            });
        }
        Ok(match spill {
            Some((_, p)) => {
                self.spilled += n;
                (n, Data::Spilled(p))
            }
            None => {
                self.in_memory += n;
                (n, Data::Memory(Arc::from(buf)))
            }
        })
    }

    fn spill_file(&mut self) -> Result<(std::fs::File, PathBuf), ArchiveError> {
        if !self.spill_ready {
            let _ = std::fs::remove_dir_all(&self.spill_dir);
            std::fs::create_dir_all(&self.spill_dir).map_err(|e| self.cache_error(&e))?;
            self.spill_ready = true;
        }
        self.spill_count += 1;
        let p = self.spill_dir.join(format!("{}.bin", self.spill_count));
        let f = std::fs::File::create(&p).map_err(|e| self.cache_error(&e))?;
        Ok((f, p))
    }

    fn cache_error(&self, e: &std::io::Error) -> ArchiveError {
        ArchiveError::Cache {
            dir: self.spill_dir.clone(),
            cause: e.to_string(),
        }
    }

    /// The entry's path inside the archive, or `None` when it is refused.
    fn clean(&mut self, raw: &Path) -> Option<PathBuf> {
        let mut out = PathBuf::new();
        let mut absolute = false;
        for c in raw.components() {
            match c {
                Component::Normal(s) => out.push(s),
                Component::CurDir => {}
                Component::RootDir | Component::Prefix(_) => absolute = true,
                Component::ParentDir => {
                    self.parent.add(raw);
                    return None;
                }
            }
        }
        if absolute {
            self.absolute.add(raw);
        }
        (!out.as_os_str().is_empty()).then_some(out)
    }

    fn insert(&mut self, rel: PathBuf, node: Node) {
        // Up from the parent to the first folder already there: every folder above it is there
        // too, so an entry of a known folder costs one look-up, not one per level.
        let mut missing: Vec<&Path> = Vec::new();
        for a in rel.ancestors().skip(1) {
            if a.as_os_str().is_empty() {
                break;
            }
            match self.nodes.get(a) {
                Some(Node::Dir) => break,
                Some(Node::File { .. }) => {
                    self.conflicts.add(&rel);
                    return;
                }
                None => missing.push(a),
            }
        }
        for a in missing {
            self.nodes.insert(a.to_path_buf(), Node::Dir);
        }
        match (self.nodes.get(&rel), &node) {
            (Some(Node::Dir), Node::Dir) => {}
            (Some(Node::Dir), Node::File { .. }) | (Some(Node::File { .. }), Node::Dir) => {
                self.conflicts.add(&rel)
            }
            (Some(Node::File { size, .. }), Node::File { .. }) => {
                let size = *size;
                self.duplicates.add(&rel);
                self.forget(size, &rel);
                self.nodes.insert(rel, node);
            }
            (None, _) => {
                self.nodes.insert(rel, node);
            }
        }
    }

    /// A replaced copy no longer counts against the memory budget.
    fn forget(&mut self, size: u64, rel: &Path) {
        if let Some(Node::File {
            data: Data::Memory(_),
            ..
        }) = self.nodes.get(rel)
        {
            self.in_memory = self.in_memory.saturating_sub(size);
        }
    }

    /// Drops what was read (a read called off): its cache files go too.
    pub fn discard(self) {
        if self.spill_ready {
            let _ = std::fs::remove_dir_all(&self.spill_dir);
        }
    }

    pub fn finish(self, root: PathBuf, stamp: Stamp) -> Archive {
        let name = &self.name;
        let mut warnings = Vec::new();
        let tallies = [
            (
                &self.links,
                "links ignored: fxray reads only regular files in an archive",
            ),
            (
                &self.absolute,
                "absolute names read with the leading `/` dropped",
            ),
            (
                &self.parent,
                "names with `..` refused: they point outside the archive",
            ),
            (
                &self.duplicates,
                "names stored twice, kept as their last copy",
            ),
            (
                &self.conflicts,
                "names both a file and a folder, refused after the first",
            ),
            (&self.special, "special entries ignored (devices, FIFOs, …)"),
            (
                &self.unsupported,
                "entries encrypted or compressed with a method fxray does not read, skipped",
            ),
        ];
        for (t, what) in tallies {
            if t.n > 0 {
                warnings.push(format!("{name}: {} {what} (e.g. {})", t.n, t.first));
            }
        }
        let how = self
            .how
            .as_ref()
            .map(|h| format!("{h}; "))
            .unwrap_or_default();
        if let Some(why) = &self.stopped {
            let files = self
                .nodes
                .values()
                .filter(|n| matches!(n, Node::File { .. }))
                .count();
            warnings.push(format!(
                "{name}: {how}{why} ({files} files read before it are shown)"
            ));
        } else if let Some(h) = &self.how {
            warnings.push(format!("{name}: {h}"));
        }
        Archive {
            root,
            nodes: self.nodes,
            warnings,
            in_memory: self.in_memory,
            spilled: self.spilled,
            spill_dir: self.spill_ready.then_some(self.spill_dir),
            stamp,
        }
    }
}

/// Removes spill folders left by fxray processes that are gone (a crash, a kill).
pub fn sweep_stale(spill_dir: &Path) {
    let Some(parent) = spill_dir.parent() else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .rsplit_once('-')
            .and_then(|(_, p)| p.parse::<i32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() as i32 && !crate::platform::process_alive(pid) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Limits {
        Limits {
            entry_bytes: 1000,
            total_bytes: 1500,
            memory_bytes: 300,
            memory_entry: 200,
            entries: 10,
        }
    }

    fn zeros(n: usize) -> std::io::Cursor<Vec<u8>> {
        std::io::Cursor::new(vec![0u8; n])
    }

    #[test]
    fn names_cleaned_links_and_dotdot_refused_last_copy_wins() {
        let tmp = tempfile::tempdir().unwrap();
        let limits = small();
        let mut b = Builder::new("a.tar".into(), tmp.path().join("s-1"), &limits);
        assert_eq!(
            b.file(Path::new("/abs/x.txt"), 3, true, &mut zeros(3)),
            Flow::Go
        );
        assert_eq!(
            b.file(Path::new("./r/../../etc/passwd"), 3, true, &mut zeros(3)),
            Flow::Go
        );
        assert_eq!(b.skip(Path::new("r/link"), Skip::Link), Flow::Go);
        assert_eq!(
            b.file(Path::new("r/d.txt"), 1, true, &mut zeros(1)),
            Flow::Go
        );
        assert_eq!(
            b.file(Path::new("r/d.txt"), 2, true, &mut zeros(2)),
            Flow::Go
        );
        assert_eq!(
            b.file(Path::new("r/d.txt/under"), 1, true, &mut zeros(1)),
            Flow::Go
        );
        let a = b.finish(PathBuf::from("/x/a.tar"), (0, None));
        let files: Vec<String> = a
            .nodes
            .iter()
            .filter(|(_, n)| matches!(n, Node::File { .. }))
            .map(|(p, _)| p.display().to_string())
            .collect();
        assert_eq!(files, ["abs/x.txt", "r/d.txt"]);
        assert!(matches!(
            a.nodes[Path::new("r/d.txt")],
            Node::File { size: 2, .. }
        ));
        let w = a.warnings.join("\n");
        for part in [
            "1 links ignored",
            "1 absolute names",
            "1 names with `..` refused",
            "1 names stored twice",
            "1 names both a file and a folder",
        ] {
            assert!(w.contains(part), "{part} not in {w}");
        }
        assert!(
            !tmp.path().join("s-1").exists(),
            "nothing spilled, nothing written"
        );
    }

    #[test]
    fn big_entries_spill_to_the_cache_and_a_bomb_stops_the_read() {
        let tmp = tempfile::tempdir().unwrap();
        let limits = small();
        let dir = tmp.path().join("s-1");
        let mut b = Builder::new("a.tar".into(), dir.clone(), &limits);
        assert_eq!(
            b.file(Path::new("small"), 150, true, &mut zeros(150)),
            Flow::Go
        );
        assert_eq!(
            b.file(Path::new("big"), 900, true, &mut zeros(900)),
            Flow::Go
        );
        // A size not stated (a zip streamed with data descriptors): bounded by the entry limit.
        assert_eq!(
            b.file(Path::new("liar"), 10, false, &mut zeros(5000)),
            Flow::Stop
        );
        assert_eq!(
            b.file(Path::new("after"), 1, true, &mut zeros(1)),
            Flow::Stop
        );
        let a = b.finish(PathBuf::from("/x/a.tar"), (0, None));
        assert_eq!((a.in_memory, a.spilled), (150, 900));
        let Node::File {
            data: Data::Spilled(p),
            ..
        } = &a.nodes[Path::new("big")]
        else {
            panic!("big is not spilled");
        };
        assert!(p.starts_with(&dir) && std::fs::metadata(p).unwrap().len() == 900);
        assert!(!a.nodes.contains_key(Path::new("liar")));
        assert_eq!(a.warnings.len(), 1, "{:?}", a.warnings);
        assert!(
            a.warnings[0].contains("liar expands past"),
            "{}",
            a.warnings[0]
        );
        assert!(
            a.warnings[0].contains("2 files read before it"),
            "{}",
            a.warnings[0]
        );
    }

    #[test]
    fn an_entry_holding_more_than_it_claims_stops_at_its_claim() {
        let tmp = tempfile::tempdir().unwrap();
        let limits = small();
        let mut b = Builder::new("a.zip".into(), tmp.path().join("s-1"), &limits);
        assert_eq!(
            b.file(Path::new("liar"), 10, true, &mut zeros(900)),
            Flow::Stop
        );
        let a = b.finish(PathBuf::from("/x/a.zip"), (0, None));
        assert!(a.nodes.is_empty());
        assert!(
            a.warnings[0].contains("liar holds more than the 10 bytes it claims"),
            "{:?}",
            a.warnings
        );
        assert!(
            !tmp.path().join("s-1").exists(),
            "nothing reached the cache"
        );
    }

    #[test]
    fn a_cut_entry_is_dropped_and_said() {
        let tmp = tempfile::tempdir().unwrap();
        let limits = small();
        let mut b = Builder::new("a.tar".into(), tmp.path().join("s-1"), &limits);
        assert_eq!(
            b.file(Path::new("cut"), 100, true, &mut zeros(40)),
            Flow::Stop
        );
        let a = b.finish(PathBuf::from("/x/a.tar"), (0, None));
        assert!(a.nodes.is_empty());
        assert!(
            a.warnings[0].contains("ends inside cut (40 of 100 bytes)"),
            "{:?}",
            a.warnings
        );
    }
}
