//! Archives opened in place (docs/formats.md §9): a `.tar.gz`, `.tgz`, `.tar` or `.zip` of a
//! debug tree is read once into an in-memory tree of its entries and then looks like a folder:
//! the entry `a/b.txt` of `/x/run.tar.gz` is the path `/x/run.tar.gz/a/b.txt`.
//!
//! Nothing is unpacked into the user's folders. Small entries are held in memory; once the
//! memory budget is spent, entries go to fxray's cache folder under numbered names (an entry's
//! own name never reaches the disk). Hostile entries are bounded or refused in [`build`].
//! Mounted archives live in a process-wide registry, so every reader in `sources` finds them
//! through [`crate::sources::vfs`].

mod build;
mod error;
mod tar;
mod zip;

use crate::model::progress::{Progress, Unit};
use build::{Builder, LIMITS, Limits};
pub use error::ArchiveError;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

/// One node of an archive's tree.
#[derive(Debug)]
pub enum Node {
    Dir,
    File { size: u64, data: Data },
}

/// Where a file's bytes are.
#[derive(Debug, Clone)]
pub enum Data {
    Memory(Arc<[u8]>),
    /// A file in fxray's cache folder (numbered, not named after the entry).
    Spilled(PathBuf),
}

/// A mounted archive.
#[derive(Debug)]
pub struct Archive {
    /// The archive file, absolute: the prefix of every path inside it.
    pub root: PathBuf,
    /// Entries by path relative to `root`; every folder of a file is there as a `Dir`.
    pub nodes: BTreeMap<PathBuf, Node>,
    /// One line per thing not read (links, refused names, a cut or a bomb).
    pub warnings: Vec<String>,
    /// Bytes held in memory and written to the cache.
    pub in_memory: u64,
    pub spilled: u64,
    /// The cache folder of its spilled entries, when any were spilled.
    spill_dir: Option<PathBuf>,
    /// (length, modification time) of the archive file when read.
    stamp: Stamp,
}

type Stamp = (u64, Option<std::time::SystemTime>);

impl Archive {
    pub fn node(&self, rel: &Path) -> Option<&Node> {
        if rel.as_os_str().is_empty() {
            return Some(&Node::Dir);
        }
        self.nodes.get(rel)
    }

    /// Nodes under `rel` (not `rel` itself), in depth-first order with siblings by name.
    pub fn under<'a>(&'a self, rel: &'a Path) -> impl Iterator<Item = (&'a PathBuf, &'a Node)> {
        let start = std::ops::Bound::Excluded(rel.to_path_buf());
        self.nodes
            .range((start, std::ops::Bound::Unbounded))
            .take_while(move |(p, _)| p.starts_with(rel))
    }
}

/// The archive formats fxray opens, by file name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    TarGz,
    Tar,
    Zip,
}

/// The archive format a file name says, if any.
pub fn format_of(name: &str) -> Option<Format> {
    // Asked of every component of every path read: no allocation.
    let ends = |suffix: &str| {
        name.len() > suffix.len()
            && name.as_bytes()[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    };
    if ends(".tar.gz") || ends(".tgz") {
        Some(Format::TarGz)
    } else if ends(".tar") {
        Some(Format::Tar)
    } else if ends(".zip") {
        Some(Format::Zip)
    } else {
        None
    }
}

/// True when `path` names an archive file on disk (not a folder that happens to be called so).
pub fn is_archive_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(format_of)
        .is_some()
        && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// The archives this process has read, newest last.
static MOUNTS: LazyLock<Mutex<Vec<Arc<Archive>>>> = LazyLock::new(|| Mutex::new(Vec::new()));

/// Where trees held only in memory are served ([`mount_memory`]): a path no file is ever
/// written under.
static MEMORY_ROOT: LazyLock<PathBuf> =
    LazyLock::new(|| crate::paths::cache_dir().join("in-memory"));

/// Serves `files` (paths relative to the tree, and their bytes) as a read-only tree at
/// `<cache>/in-memory/<name>`, which it returns: graphs found only in a trace log open as the
/// passes of their compile without a byte written anywhere. Mounting the same name again
/// replaces the tree. Memory trees stay until the process ends (they hold graph texts).
pub fn mount_memory(name: &str, files: Vec<(PathBuf, Vec<u8>)>) -> PathBuf {
    let root = MEMORY_ROOT.join(name);
    let mut b = Builder::new(name.to_string(), PathBuf::from("/nonexistent"), &IN_MEMORY);
    for (path, bytes) in files {
        b.file(&path, bytes.len() as u64, true, &mut bytes.as_slice());
    }
    let tree = Arc::new(b.finish(root.clone(), (0, None)));
    let mut mounts = MOUNTS.lock().unwrap_or_else(|e| e.into_inner());
    mounts.retain(|a| a.root != root);
    mounts.push(tree);
    root
}

fn in_memory(path: &Path) -> bool {
    path.starts_with(&*MEMORY_ROOT)
}

/// The archive a path lies in (or is), with the path inside it; `None` for a path that has no
/// archive among itself and its ancestors (then it is a plain disk path). Mounts the archive
/// on first use; the error is one line naming the archive and what is wrong with it.
pub fn locate(path: &Path) -> Option<Result<(Arc<Archive>, PathBuf), ArchiveError>> {
    // The common case, a plain tree, costs a look at the names and no system call.
    if !in_memory(path)
        && !path
            .iter()
            .any(|c| c.to_str().and_then(format_of).is_some())
    {
        return None;
    }
    let abs = std::path::absolute(path).ok()?;
    {
        let mounts = MOUNTS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = mounts.iter().find(|a| abs.starts_with(&a.root)) {
            let rel = abs
                .strip_prefix(&a.root)
                .unwrap_or(Path::new(""))
                .to_path_buf();
            return Some(Ok((a.clone(), rel)));
        }
    }
    let file = archive_ancestor(&abs)?;
    let rel = abs
        .strip_prefix(&file)
        .unwrap_or(Path::new(""))
        .to_path_buf();
    Some(mount(&file, false).map(|a| (a, rel)))
}

/// True when `path` is an archive file or lies inside one, found from the names and the
/// files on disk alone: it neither mounts nor waits for an archive being read (the window
/// asks this on its own thread).
pub fn lies_in_archive(path: &Path) -> bool {
    path.iter()
        .any(|c| c.to_str().and_then(format_of).is_some())
        && std::path::absolute(path)
            .ok()
            .is_some_and(|abs| archive_ancestor(&abs).is_some())
}

/// Re-reads the archive `path` lies in when its file changed since it was mounted (an archive
/// opened again after being re-packed). `None` for a plain disk path.
pub fn refresh(path: &Path) -> Option<Result<Arc<Archive>, ArchiveError>> {
    path.iter()
        .any(|c| c.to_str().and_then(format_of).is_some())
        .then_some(())?;
    let abs = std::path::absolute(path).ok()?;
    let file = archive_ancestor(&abs)?;
    Some(mount(&file, true))
}

/// The outermost ancestor of `abs` (or `abs` itself) that is an archive file on disk.
fn archive_ancestor(abs: &Path) -> Option<PathBuf> {
    let mut candidates: Vec<&Path> = abs
        .ancestors()
        .filter(|a| {
            a.file_name()
                .and_then(|n| n.to_str())
                .and_then(format_of)
                .is_some()
        })
        .collect();
    candidates.reverse();
    candidates
        .into_iter()
        .find(|a| is_archive_file(a))
        .map(Path::to_path_buf)
}

/// Mounts the archive file `file` (absolute), or returns the mount already there when the file
/// has not changed (always, unless `check` asks to compare its length and time).
fn mount(file: &Path, check: bool) -> Result<Arc<Archive>, ArchiveError> {
    // One mount at a time: two readers of a new archive must not both read it.
    let mut mounts = MOUNTS.lock().unwrap_or_else(|e| e.into_inner());
    let stamp = stamp_of(file).map_err(|e| ArchiveError::Io(format!("{}: {e}", file.display())))?;
    if let Some(i) = mounts.iter().position(|a| a.root == file) {
        if !check || mounts[i].stamp == stamp {
            return Ok(mounts[i].clone());
        }
        // The file changed: its old cache files go with the old mount (their folder is named
        // by the old length and time, so the new read never uses it).
        if let Some(d) = &mounts.remove(i).spill_dir {
            let _ = std::fs::remove_dir_all(d);
        }
    }
    let archive = Arc::new(read(file, stamp, &LIMITS)?);
    mounts.push(archive.clone());
    Ok(archive)
}

thread_local! {
    /// The progress of the work on this thread that may mount an archive ([`reading_with`]).
    static PROGRESS: std::cell::RefCell<Option<Arc<Progress>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with `progress` for any archive it mounts on this thread: the archive's bytes are
/// counted there (`reading run.tar.gz 45 MiB of 190 MiB`), and cancelling `progress` calls the
/// read off at its next block, mounting nothing of it. Opening a tree reads its archive this
/// way, so the window shows how far it is and a newer open stops it.
pub fn reading_with<T>(progress: Arc<Progress>, f: impl FnOnce() -> T) -> T {
    let before = PROGRESS.with(|p| p.replace(Some(progress)));
    let out = f();
    PROGRESS.with(|p| *p.borrow_mut() = before);
    out
}

/// The archive file, counted and cancellable: each read adds to `progress`, and a read after a
/// cancel fails, which ends the format's reader wherever it is.
struct Counted<R> {
    inner: R,
    progress: Arc<Progress>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.progress.cancelled() {
            // Not `Interrupted`: `read_exact` and `read_to_end` retry those forever.
            return Err(std::io::Error::other("cancelled"));
        }
        let n = self.inner.read(buf)?;
        self.progress.add(n as u64);
        Ok(n)
    }
}

impl<R: std::io::Seek> std::io::Seek for Counted<R> {
    fn seek(&mut self, pos: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(pos)
    }
}

/// Forgets every mounted archive but the one `keep` lies in (the tree now open), freeing its
/// memory and its cache files. A later read of a forgotten path mounts it again.
pub fn unmount_others(keep: &Path) {
    let keep = std::path::absolute(keep).unwrap_or_else(|_| keep.to_path_buf());
    let mut mounts = MOUNTS.lock().unwrap_or_else(|e| e.into_inner());
    mounts.retain(|a| {
        let kept = keep.starts_with(&a.root) || in_memory(&a.root);
        if !kept && let Some(d) = &a.spill_dir {
            // Open maps of its files stay valid: the files go when the last map does.
            let _ = std::fs::remove_dir_all(d);
        }
        kept
    });
}

fn stamp_of(file: &Path) -> std::io::Result<Stamp> {
    let m = std::fs::metadata(file)?;
    Ok((m.len(), m.modified().ok()))
}

/// Reads an archive file into a tree. Only an archive that yields nothing at all is an error
/// (the cause, without the path).
fn read(file: &Path, stamp: Stamp, limits: &Limits) -> Result<Archive, ArchiveError> {
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let format = format_of(&name).ok_or(ArchiveError::NotAnArchive)?;
    let spill = spill_dir(file, stamp);
    build::sweep_stale(&spill);
    let progress = PROGRESS.with(|p| p.borrow().clone()).unwrap_or_default();
    progress.stage(format!("reading {name}"), stamp.0, Unit::Bytes);
    let mut b = Builder::new(name, spill, limits);
    let open = || {
        let f = std::fs::File::open(file).map_err(|e| ArchiveError::Io(e.to_string()))?;
        Ok(std::io::BufReader::with_capacity(
            1 << 20,
            Counted {
                inner: f,
                progress: progress.clone(),
            },
        ))
    };
    let outcome = match format {
        Format::TarGz => open().and_then(|f| tar::read(f, true, &mut b)),
        Format::Tar => open().and_then(|f| tar::read(f, false, &mut b)),
        Format::Zip => zip::read(open, &mut b),
    };
    if progress.cancelled() {
        // A part of an archive is never mounted: the next open of it reads it whole.
        b.discard();
        return Err(ArchiveError::Cancelled);
    }
    finish(b, outcome, file.to_path_buf(), stamp)
}

fn finish(
    mut b: Builder,
    outcome: Result<(), ArchiveError>,
    root: PathBuf,
    stamp: Stamp,
) -> Result<Archive, ArchiveError> {
    if let Err(e) = outcome {
        if b.is_empty() {
            return Err(e);
        }
        b.stop(e.to_string());
    }
    Ok(b.finish(root, stamp))
}

/// Bounds for an archive read from memory: small enough that it all stays there.
const IN_MEMORY: Limits = Limits {
    entry_bytes: 16 << 20,
    total_bytes: 64 << 20,
    memory_bytes: 64 << 20,
    memory_entry: 16 << 20,
    entries: 100_000,
};

/// Reads an archive image held in memory (fuzzing): nothing is mounted and nothing is written.
pub fn from_bytes(format: Format, bytes: &[u8]) -> Result<Archive, ArchiveError> {
    let mut b = Builder::new("archive".into(), PathBuf::from("/nonexistent"), &IN_MEMORY);
    let outcome = match format {
        Format::TarGz => tar::read(bytes, true, &mut b),
        Format::Tar => tar::read(bytes, false, &mut b),
        Format::Zip => zip::read(|| Ok(std::io::Cursor::new(bytes)), &mut b),
    };
    finish(b, outcome, PathBuf::from("/archive"), (0, None))
}

/// `<cache>/archives/<hash of path, length, time>-<pid>`: one per archive and process, so two
/// fxray windows on the same archive never share (or delete) each other's files.
fn spill_dir(file: &Path, stamp: Stamp) -> PathBuf {
    use md5::{Digest, Md5};
    let key = format!("{}\0{}\0{:?}", file.display(), stamp.0, stamp.1);
    let hash: String = Md5::digest(key.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect();
    crate::paths::cache_dir()
        .join("archives")
        .join(format!("{hash}-{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small fuzz run that needs no nightly: a real tree packed three ways, then cut at many
    /// lengths and with bytes flipped at many places. Every read ends, in a result or an error.
    #[test]
    fn damaged_images_never_panic() {
        let mut tar = ::tar::Builder::new(Vec::new());
        for (i, text) in ["a = 1\n", "class GraphModule(torch.nn.Module):\n", ""]
            .iter()
            .enumerate()
        {
            let mut h = ::tar::Header::new_gnu();
            h.set_size(text.len() as u64);
            h.set_mode(0o644);
            tar.append_data(
                &mut h,
                format!("run/m/{i:03}_aot_forward_graph.txt"),
                text.as_bytes(),
            )
            .unwrap();
        }
        let plain = tar.into_inner().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut gz, &plain).unwrap();
        let gz = gz.finish().unwrap();
        let mut zw = ::zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        zw.start_file(
            "run/m/000_aot_forward_graph.txt",
            ::zip::write::SimpleFileOptions::default(),
        )
        .unwrap();
        std::io::Write::write_all(&mut zw, b"a = 1\n").unwrap();
        let zip = zw.finish().unwrap().into_inner();
        for (format, image) in [
            (Format::Tar, plain),
            (Format::TarGz, gz),
            (Format::Zip, zip),
        ] {
            let whole = from_bytes(format, &image).expect("the whole image reads");
            assert!(
                whole.warnings.is_empty(),
                "{format:?}: {:?}",
                whole.warnings
            );
            let mut seed = 0x2545_f491_4f6c_dd1du64;
            for round in 0..600 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let mut bad = image.clone();
                let at = seed as usize % bad.len();
                if round % 3 == 0 {
                    bad.truncate(at);
                } else {
                    bad[at] ^= (seed >> 32) as u8 | 1;
                }
                let _ = from_bytes(format, &bad);
            }
        }
    }

    #[test]
    fn formats_by_name() {
        assert_eq!(format_of("run.tar.gz"), Some(Format::TarGz));
        assert_eq!(format_of("RUN.TGZ"), Some(Format::TarGz));
        assert_eq!(format_of("a.tar"), Some(Format::Tar));
        assert_eq!(format_of("a.zip"), Some(Format::Zip));
        assert_eq!(format_of("a.gz"), None);
        assert_eq!(format_of("model__0"), None);
    }
}
