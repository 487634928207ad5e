//! The AscendC backend's autotune evidence (docs/formats.md §7), read from its three places:
//! - `inductor_asc` log lines (a log file, pasted text, a runner's console):
//!   `[2026-01-01 12:00:00] [RANK0] [INFO] Static compile <kernel>, choice top N from M`,
//!   `… Autotune completed <cache entry>, best kernel index: K, detail:` and one
//!   `… Kernel <cache entry>/static_kernel/<key>/kernel.so: Timing = X us` per candidate;
//! - `autofused_*` folders of the debug tree (`asc_kernel_<key>.py` per Top-N candidate);
//! - cache entries `<cache>/ascendc/host_<h>/<kernel>/<md5>/` with `optimize_tiling`
//!   (`tiling|workspace|block_dim`; the winner's kernel_key is the md5 of that line).
//!
//! Nothing here joins them (see `analysis::autotune`); each reader keeps what it could not
//! understand as a problem instead of failing.

use crate::model::autotune::{
    AscLine, AscLog, AscRecord, CacheEntry, DebugKernelDir, Evidence, OptimizeTiling, is_md5,
};
use crate::model::index::{DebugIndex, KernelDir};
use crate::sources::{names, read, vfs};
use md5::{Digest, Md5};
use regex::Regex;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// Log files larger than this are not searched for autotune lines.
const MAX_LOG_BYTES: u64 = 256 * 1024 * 1024;
/// `optimize_tiling` is one line; anything bigger is not one.
const MAX_TILING_BYTES: u64 = 1024 * 1024;
/// How deep the log search walks under the opened folder.
const LOG_DEPTH: usize = 10;

/// The logger's header `[%(asctime)s] [RANK<r>] [%(levelname)s] ` (found anywhere in the line,
/// so a console that prefixes its own text still matches).
static HEADER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?)\] \[RANK([^\]]*)\] \[([A-Z]+)\] ")
        .expect("static regex")
});
static STATIC_COMPILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^Static compile (\S+), choice top (\d+) from (\d+)\s*$").expect("static regex")
});
static COMPLETED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^Autotune completed (.+), best kernel index: (-?\d+)").expect("static regex")
});
static TIMING: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^Kernel (.+): Timing = (\S+) us\s*$").expect("static regex"));

/// Finds the `inductor_asc` lines of `text`. Never fails; other lines are ignored.
pub fn parse_asc_log(text: &str, source: &str) -> AscLog {
    let mut log = AscLog {
        source: source.to_string(),
        ..AscLog::default()
    };
    for (i, raw) in text.lines().enumerate() {
        // Cheap filter first: most lines of a console are something else.
        if !(raw.contains("Static compile")
            || raw.contains("Autotune completed")
            || raw.contains("Timing =")
            || raw.contains("static_kernel"))
        {
            continue;
        }
        let (rank, time, msg) = match HEADER.captures(raw) {
            Some(c) => {
                let end = c.get(0).map_or(0, |m| m.end());
                (Some(c[2].to_string()), Some(c[1].to_string()), &raw[end..])
            }
            None => (None, None, raw.trim_start()),
        };
        match parse_message(msg) {
            Some(kind) => log.records.push(AscRecord {
                line: i + 1,
                rank,
                time,
                kind,
            }),
            None if looks_like_autotune(msg) => {
                log.unreadable.push((i + 1, shorten(raw, 160)));
            }
            None => {}
        }
    }
    log
}

fn parse_message(msg: &str) -> Option<AscLine> {
    if let Some(c) = STATIC_COMPILE.captures(msg) {
        return Some(AscLine::StaticCompile {
            kernel: c[1].to_string(),
            top_n: c[2].parse().ok()?,
            choices: c[3].parse().ok()?,
        });
    }
    if let Some(c) = COMPLETED.captures(msg) {
        let cache_path = c[1].trim().to_string();
        return Some(AscLine::Completed {
            kernel: kernel_in_path(&cache_path),
            cache_hash: cache_hash_in_path(&cache_path),
            best: c[2].parse().ok(),
            cache_path,
        });
    }
    if let Some(c) = TIMING.captures(msg) {
        let kernel_so = c[1].trim().to_string();
        return Some(AscLine::Timing {
            kernel: kernel_in_path(&kernel_so),
            key: key_in_path(&kernel_so),
            us: c[2].parse().ok()?,
            kernel_so,
        });
    }
    None
}

fn looks_like_autotune(msg: &str) -> bool {
    msg.starts_with("Static compile ")
        || msg.starts_with("Autotune completed ")
        || (msg.starts_with("Kernel ") && (msg.contains("static_kernel") || msg.contains("Timing")))
}

fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

/// Path components, `/` or `\` separated (logs may come from another OS than the viewer's).
fn components(path: &str) -> impl Iterator<Item = &str> {
    path.split(['/', '\\']).filter(|c| !c.is_empty())
}

/// The `autofused_*` component of a logged path.
pub fn kernel_in_path(path: &str) -> Option<String> {
    components(path)
        .find(|c| names::kernel_dir(c))
        .map(str::to_string)
}

/// The `<key>` of `…/static_kernel/<key>/kernel.so`.
pub fn key_in_path(path: &str) -> Option<String> {
    let mut it = components(path);
    it.by_ref().find(|&c| c == "static_kernel")?;
    it.next().map(str::to_string)
}

/// The `<md5>` after the kernel's component: which cache entry a logged path is in.
pub fn cache_hash_in_path(path: &str) -> Option<String> {
    let mut it = components(path);
    it.by_ref().find(|c| names::kernel_dir(c))?;
    it.next().filter(|c| is_md5(c)).map(str::to_string)
}

/// A kernel_key: the md5 of an `optimize_tiling` line, as lower-case hex.
pub fn kernel_key(line: &str) -> String {
    let digest = Md5::digest(line.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Splits an `optimize_tiling` line. The tiling repr may itself hold `|`, so split from the
/// right. Fields are `None` when the line is not `tiling|workspace|block_dim`.
pub fn parse_optimize_tiling(path: &Path, text: &str) -> OptimizeTiling {
    let line = text.trim_end_matches(['\n', '\r']).to_string();
    let mut parts = line.rsplitn(3, '|');
    let (block_dim, workspace, tiling) = (parts.next(), parts.next(), parts.next());
    let ok = tiling.is_some();
    let field = |s: Option<&str>| s.filter(|_| ok).map(|s| s.trim().to_string());
    OptimizeTiling {
        path: path.to_path_buf(),
        kernel_key: kernel_key(&line),
        tiling: field(tiling),
        workspace: field(workspace),
        block_dim: field(block_dim),
        line,
    }
}

/// Gathers the evidence under an opened folder: its indexed kernel folders, and every log-like
/// file holding `inductor_asc` lines. Reads only small files and logs; never writes.
pub fn gather(index: &DebugIndex) -> Evidence {
    let mut ev = Evidence::default();
    for kd in &index.autotune {
        split_kernel_dir(index, kd, &mut ev);
    }
    for path in log_candidates(&index.root) {
        match read::read_text_limited(&path, MAX_LOG_BYTES) {
            Ok(t) if !t.binary => {
                let log = parse_asc_log(&t.text, &path.display().to_string());
                if !log.records.is_empty() || !log.unreadable.is_empty() {
                    ev.logs.push(log);
                }
            }
            Ok(_) => {}
            Err(e) => ev.problems.push(e.to_string()),
        }
    }
    ev
}

/// An indexed `autofused_*` folder is either a debug folder (files directly inside) or a
/// cache kernel folder (files under `<md5>/` entries), told apart by its layout.
fn split_kernel_dir(index: &DebugIndex, kd: &KernelDir, ev: &mut Evidence) {
    let mut direct = Vec::new();
    let mut entries: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for f in &kd.files {
        let mut parts = f.splitn(2, ['/', '\\']);
        let (first, rest) = (parts.next().unwrap_or(""), parts.next());
        match rest {
            None => direct.push(first.to_string()),
            Some(rest) if is_md5(first) => entries
                .entry(first.to_string())
                .or_default()
                .push(rest.to_string()),
            // Deeper files of a debug folder (none are documented): not ours to show.
            Some(_) => {}
        }
    }
    if !direct.is_empty() {
        direct.sort();
        ev.debug_dirs.push(DebugKernelDir {
            name: kd.name.clone(),
            path: kd.path.clone(),
            files: direct,
            post_grad: post_grad_of(index, &kd.path),
        });
    }
    for (hash, files) in entries {
        let path = kd.path.join(&hash);
        let optimize_tiling = files.iter().any(|f| f == "optimize_tiling").then(|| {
            let p = path.join("optimize_tiling");
            match read::read_text_limited(&p, MAX_TILING_BYTES) {
                Ok(t) if t.binary => Err(format!("{}: binary, not a tiling line", p.display())),
                Ok(t) => Ok(parse_optimize_tiling(&p, &t.text)),
                Err(e) => Err(e.to_string()),
            }
        });
        let mut static_keys: Vec<String> = files
            .iter()
            .filter_map(|f| key_in_path(f))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        static_keys.sort();
        ev.cache.push(CacheEntry {
            name: kd.name.clone(),
            hash,
            path,
            optimize_tiling,
            static_keys,
        });
    }
}

/// The post-grad graph of the Inductor model folder that holds a kernel's debug folder.
fn post_grad_of(index: &DebugIndex, kernel_dir: &Path) -> Option<PathBuf> {
    let parent = kernel_dir.parent()?;
    let phase = index
        .runs
        .iter()
        .flat_map(|r| &r.models)
        .flat_map(|m| &m.phases)
        .find(|p| p.path == parent)?;
    phase
        .passes
        .iter()
        .find(|p| p.name == "fx_graph_transformed")
        .or(phase.passes.last())
        .map(|p| p.path.clone())
}

/// Files that may hold the backend's stdout: the opened file itself, else `*.log`, `*.out`
/// and `console*`/`stdout*` files under the opened folder (outside kernel and cache folders).
fn log_candidates(root: &Path) -> Vec<PathBuf> {
    if vfs::is_file(root) {
        return vec![root.to_path_buf()];
    }
    let how = vfs::Walk {
        max_depth: LOG_DEPTH,
        sizes: false,
    };
    let enter = |e: &vfs::Entry| {
        let n = e.name();
        !(names::kernel_dir(&n) || n == "ascendc")
    };
    vfs::walk(root, how, enter, &mut Vec::new())
        .into_iter()
        .filter(|e| e.kind == vfs::Kind::File)
        .filter(|e| {
            let n = e.name();
            n.ends_with(".log")
                || n.ends_with(".out")
                || n.starts_with("console")
                || n.starts_with("stdout")
        })
        .map(|e| e.path)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_three_line_kinds() {
        let text = "\
[2026-01-01 12:00:00] [RANK0] [INFO] Static compile autofused_add_mul_0123, choice top 3 from 8
noise
[2026-01-01 12:00:05] [RANK0] [INFO] Autotune completed /c/ascendc/host_h/autofused_add_mul_0123/ffffffffffffffffffffffffffffffff, best kernel index: 1, detail:
[2026-01-01 12:00:05] [RANK1] [INFO] Kernel /c/ascendc/host_h/autofused_add_mul_0123/ffffffffffffffffffffffffffffffff/static_kernel/abc/kernel.so: Timing = 12.34 us
[2026-01-01 12:00:05] [RANK0] [INFO] Kernel /c/static_kernel/abc/ker";
        let log = parse_asc_log(text, "t");
        assert_eq!(log.records.len(), 3);
        assert_eq!(
            log.records[0].kind,
            AscLine::StaticCompile {
                kernel: "autofused_add_mul_0123".into(),
                top_n: 3,
                choices: 8
            }
        );
        match &log.records[1].kind {
            AscLine::Completed { kernel, best, .. } => {
                assert_eq!(kernel.as_deref(), Some("autofused_add_mul_0123"));
                assert_eq!(*best, Some(1));
            }
            k => panic!("{k:?}"),
        }
        match &log.records[2].kind {
            AscLine::Timing { key, us, .. } => {
                assert_eq!(key.as_deref(), Some("abc"));
                assert_eq!(*us, 12.34);
            }
            k => panic!("{k:?}"),
        }
        assert_eq!(log.records[2].rank.as_deref(), Some("1"));
        assert_eq!(log.unreadable.len(), 1, "the cut line is reported");
        assert_eq!(log.unreadable[0].0, 5);
    }

    #[test]
    fn kernel_key_is_md5_of_the_line() {
        // md5("") and md5("abc") from RFC 1321's test suite.
        assert_eq!(kernel_key(""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(kernel_key("abc"), "900150983cd24fb0d6963f7d28e17f72");
        let t = parse_optimize_tiling(Path::new("x"), "a|b|c|4096|8\n");
        assert_eq!(t.tiling.as_deref(), Some("a|b|c"));
        assert_eq!(t.workspace.as_deref(), Some("4096"));
        assert_eq!(t.block_dim.as_deref(), Some("8"));
        assert_eq!(
            t.kernel_key,
            kernel_key("a|b|c|4096|8"),
            "newline not hashed"
        );
        let bad = parse_optimize_tiling(Path::new("x"), "corrupt");
        assert_eq!(bad.tiling, None);
    }
}
