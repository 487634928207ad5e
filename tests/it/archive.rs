//! Archives opened in place: the showcase and a multi-rank tree packed at test time as
//! `.tar.gz` and `.zip` summarise exactly like their folders; cut, damaged and hostile archives
//! (path traversal, links out, a 10 GB bomb, a zip entry claiming 4 GB) give one line each, no
//! panic, and nothing is written outside fxray's cache folder.

use crate::common::fixture;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

/// Packs the contents of `dir` (not `dir` itself) as a `.tar.gz`, names starting with `./` as
/// `tar czf x.tar.gz -C dir .` writes them.
pub fn pack_tar_gz(dir: &Path, out: &Path) {
    let gz = flate2::write::GzEncoder::new(
        std::fs::File::create(out).unwrap(),
        flate2::Compression::fast(),
    );
    let mut b = tar::Builder::new(gz);
    b.follow_symlinks(false);
    b.append_dir_all(".", dir).unwrap();
    b.into_inner().unwrap().finish().unwrap();
}

/// Packs the contents of `dir` as a plain `.tar`.
pub fn pack_tar(dir: &Path, out: &Path) {
    let mut b = tar::Builder::new(std::fs::File::create(out).unwrap());
    b.follow_symlinks(false);
    b.append_dir_all(".", dir).unwrap();
    b.finish().unwrap();
}

/// Packs the contents of `dir` as a `.zip` (deflated, folders as their own entries).
pub fn pack_zip(dir: &Path, out: &Path) {
    let mut z = zip::ZipWriter::new(std::fs::File::create(out).unwrap());
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for e in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
        let e = e.unwrap();
        let name = e
            .path()
            .strip_prefix(dir)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if e.file_type().is_dir() {
            z.add_directory(name, opts).unwrap();
        } else {
            z.start_file(name, opts).unwrap();
            z.write_all(&std::fs::read(e.path()).unwrap()).unwrap();
        }
    }
    z.finish().unwrap();
}

/// Runs fxray with its cache folder under `cache`.
fn fxray_cached(cache: &Path, args: &[&str]) -> Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_fxray"))
        .args(args)
        .env("XDG_CACHE_HOME", cache)
        .output()
        .expect("run fxray")
}

fn ok_stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// Every file under `dir` with its length: what "nothing was written" is checked against.
fn snapshot(dir: &Path, skip: &Path) -> BTreeMap<PathBuf, u64> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_entry(|e| !e.path().starts_with(skip))
        .flatten()
        .map(|e| (e.path().to_path_buf(), e.metadata().map_or(0, |m| m.len())))
        .collect()
}

/// `fxray summary --json` and `fxray tensors --json` of the folder and of each packing of it
/// are the same text once the archive's path is put back as the folder's.
fn same_as_folder(case: &str) {
    let dir = fixture(case);
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let folder = ok_stdout(&fxray_cached(
        &cache,
        &["summary", "--json", dir.to_str().unwrap()],
    ));
    let facts: serde_json::Value = serde_json::from_str(&folder).unwrap();
    assert!(
        facts["runs"].as_array().is_some_and(|r| !r.is_empty()),
        "{case}: the folder has runs"
    );
    let tensors = |root: &Path| {
        let out = fxray_cached(&cache, &["tensors", "--json", root.to_str().unwrap()]);
        out.status
            .success()
            .then(|| String::from_utf8(out.stdout).unwrap())
    };
    let folder_tensors = tensors(&dir);
    let before = snapshot(tmp.path(), &cache);
    for (ext, pack) in [
        ("tar.gz", pack_tar_gz as fn(&Path, &Path)),
        ("tar", pack_tar),
        ("zip", pack_zip),
    ] {
        let archive = tmp.path().join(format!("packed.{ext}"));
        pack(&dir, &archive);
        let before = snapshot(tmp.path(), &cache);
        let packed = ok_stdout(&fxray_cached(
            &cache,
            &["summary", "--json", archive.to_str().unwrap()],
        ));
        let packed = packed.replace(archive.to_str().unwrap(), dir.to_str().unwrap());
        assert_eq!(
            packed, folder,
            "{case}.{ext}: summary differs from the folder's"
        );
        let packed_tensors =
            tensors(&archive).map(|t| t.replace(archive.to_str().unwrap(), dir.to_str().unwrap()));
        assert_eq!(
            packed_tensors, folder_tensors,
            "{case}.{ext}: tensors differ"
        );
        assert_eq!(
            snapshot(tmp.path(), &cache),
            before,
            "{case}.{ext}: files written"
        );
        std::fs::remove_file(&archive).unwrap();
    }
    assert_eq!(snapshot(tmp.path(), &cache), before);
    // Small trees are held in memory: not even the cache is written.
    assert!(
        !cache.join("fxray/archives").exists(),
        "spilled a small tree"
    );
}

#[test]
fn showcase_packed_summarises_like_its_folder() {
    same_as_folder("showcase");
}

#[test]
fn multi_rank_packed_summarises_like_its_folder() {
    same_as_folder("npugraph_ex/multi_rank");
}

#[test]
fn a_path_inside_an_archive_opens_that_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("runs.tgz");
    pack_tar_gz(&fixture("npugraph_ex/multi_rank"), &archive);
    let inner = archive.join("torch_compile_debug/run_2026_11_29_11_47_50_912229-pid_1297-rank_1");
    let out = fxray_cached(
        &tmp.path().join("cache"),
        &["summary", "--json", inner.to_str().unwrap()],
    );
    let v: serde_json::Value = serde_json::from_str(&ok_stdout(&out)).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "{v}");
    assert_eq!(runs[0]["rank"], 1);
    // A graph file inside it exports like any other.
    let pass = inner.join("npugraph_ex/model__0/forward/000_aot_forward_graph.txt");
    let dot = ok_stdout(&fxray_cached(
        &tmp.path().join("cache"),
        &["export", "--format", "dot", pass.to_str().unwrap()],
    ));
    assert!(dot.starts_with("digraph"), "{dot}");
}

/// Runs `fxray summary --json` on a hostile or damaged archive in `tmp/arena/`: it must not
/// panic, must write nothing outside the cache, and returns (exit code, warnings, stderr).
fn summarise_hostile(tmp: &Path, archive: &Path) -> (Option<i32>, Vec<String>, String) {
    let cache = tmp.join("cache");
    let before = snapshot(tmp, &cache);
    let out = fxray_cached(&cache, &["summary", "--json", archive.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_ne!(out.status.code(), Some(101), "panicked: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(
        snapshot(tmp, &cache),
        before,
        "something was written outside the cache"
    );
    assert!(!Path::new("/tmp/evil.txt").exists() && !tmp.join("evil.txt").exists());
    let warnings = if out.status.success() {
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap().to_string())
            .collect()
    } else {
        Vec::new()
    };
    (out.status.code(), warnings, stderr)
}

fn arena(tmp: &Path) -> PathBuf {
    let d = tmp.join("arena");
    std::fs::create_dir_all(&d).unwrap();
    d
}

const PASS: &str = "run_2026_11_29_12_04_56_192145-pid_3064/npugraph_ex/model__0/forward/000_aot_forward_graph.txt";

fn pass_text() -> Vec<u8> {
    std::fs::read(fixture("showcase/torch_compile_debug").join(PASS)).unwrap()
}

/// A tar entry written as raw header bytes, so names a careful writer refuses (`..`, `/…`)
/// are in the archive as an attacker would put them.
fn raw_entry(
    b: &mut tar::Builder<impl Write>,
    name: &str,
    kind: tar::EntryType,
    link: &str,
    data: &[u8],
) {
    let mut h = tar::Header::new_gnu();
    h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
    h.as_old_mut().linkname[..link.len()].copy_from_slice(link.as_bytes());
    h.set_entry_type(kind);
    h.set_mode(0o644);
    h.set_size(data.len() as u64);
    h.set_cksum();
    b.append(&h, data).unwrap();
}

#[test]
fn hostile_names_and_links_are_refused_and_said_in_one_line_each() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = arena(tmp.path()).join("hostile.tar.gz");
    let gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&archive).unwrap(),
        flate2::Compression::fast(),
    );
    let mut b = tar::Builder::new(gz);
    use tar::EntryType::*;
    raw_entry(&mut b, PASS, Regular, "", &pass_text());
    raw_entry(&mut b, "../../evil.txt", Regular, "", b"escaped");
    raw_entry(
        &mut b,
        "run_2026_11_29_12_04_56_192145-pid_3064/../../../evil.txt",
        Regular,
        "",
        b"x",
    );
    raw_entry(&mut b, "/tmp/evil.txt", Regular, "", b"absolute");
    raw_entry(&mut b, "out", Symlink, "/etc/passwd", b"");
    raw_entry(&mut b, "up", Symlink, "../../..", b"");
    raw_entry(&mut b, "hard", Link, "/etc/shadow", b"");
    raw_entry(&mut b, PASS, Regular, "", &pass_text());
    b.into_inner().unwrap().finish().unwrap();

    let (code, warnings, stderr) = summarise_hostile(tmp.path(), &archive);
    assert_eq!(code, Some(0), "{stderr}");
    let said = |part: &str| warnings.iter().filter(|w| w.contains(part)).count();
    assert_eq!(said("3 links ignored"), 1, "{warnings:#?}");
    assert_eq!(said("2 names with `..` refused"), 1, "{warnings:#?}");
    assert_eq!(
        said("1 absolute names read with the leading `/` dropped"),
        1,
        "{warnings:#?}"
    );
    assert_eq!(said("1 names stored twice"), 1, "{warnings:#?}");
    assert_eq!(warnings.len(), 4, "{warnings:#?}");
}

/// `n` bytes of zeros as concatenated gzip members: one 64 MB member compressed once and
/// repeated, so a 10 GB stream costs milliseconds to build and ~10 MB on disk.
fn gzip_zeros(out: &mut impl Write, n: u64) {
    const CHUNK: u64 = 64 << 20;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    enc.write_all(&vec![0u8; CHUNK as usize]).unwrap();
    let member = enc.finish().unwrap();
    for _ in 0..n / CHUNK {
        out.write_all(&member).unwrap();
    }
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[test]
fn a_ten_gigabyte_bomb_is_refused_and_what_came_before_is_shown() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = arena(tmp.path()).join("bomb.tar.gz");
    // A real pass, then an entry claiming 10 GB whose zeros follow.
    let mut head = Vec::new();
    {
        let mut b = tar::Builder::new(&mut head);
        raw_entry(&mut b, PASS, tar::EntryType::Regular, "", &pass_text());
        b.finish().unwrap();
    }
    head.truncate(head.len() - 1024); // no end-of-archive blocks yet
    let mut h = tar::Header::new_gnu();
    h.set_path("zeros.bin").unwrap();
    h.set_size(10 << 30);
    h.set_mode(0o644);
    h.set_cksum();
    head.extend_from_slice(h.as_bytes());
    let mut f = std::fs::File::create(&archive).unwrap();
    f.write_all(&gzip(&head)).unwrap();
    gzip_zeros(&mut f, 10 << 30);
    drop(f);
    assert!(std::fs::metadata(&archive).unwrap().len() < 64 << 20);

    let (code, warnings, stderr) = summarise_hostile(tmp.path(), &archive);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].contains("zeros.bin claims 10 GiB") && warnings[0].contains("1 files read"),
        "{}",
        warnings[0]
    );
    assert!(
        !tmp.path().join("cache/fxray/archives").exists(),
        "the bomb reached the cache"
    );
}

#[test]
fn a_gzip_of_zeros_is_an_empty_archive_not_a_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = arena(tmp.path()).join("zeros.tar.gz");
    gzip_zeros(&mut std::fs::File::create(&archive).unwrap(), 10 << 30);
    let (code, _, stderr) = summarise_hostile(tmp.path(), &archive);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("no torch.compile debug artifacts"),
        "{stderr}"
    );
}

#[test]
fn a_zip_entry_claiming_four_gigabytes_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = arena(tmp.path()).join("claims.zip");
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    z.start_file(PASS, opts).unwrap();
    z.write_all(&pass_text()).unwrap();
    z.start_file("huge.bin", opts).unwrap();
    z.write_all(&[0u8; 4096]).unwrap();
    let mut bytes = z.finish().unwrap().into_inner();
    // Patch huge.bin's uncompressed size, in its local header and in the central directory.
    let name = b"huge.bin";
    // The second of each header: huge.bin's.
    let second = |bytes: &[u8], sig: &[u8]| {
        let mut hits = (0..bytes.len() - 4).filter(|&i| &bytes[i..i + 4] == sig);
        hits.nth(1).unwrap()
    };
    let local = second(&bytes, b"PK\x03\x04");
    let central = second(&bytes, b"PK\x01\x02");
    assert_eq!(&bytes[local + 30..local + 38], name);
    assert_eq!(&bytes[central + 46..central + 54], name);
    bytes[local + 22..local + 26].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    bytes[central + 24..central + 28].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    std::fs::write(&archive, &bytes).unwrap();

    let (code, warnings, stderr) = summarise_hostile(tmp.path(), &archive);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].contains("huge.bin claims 4.0 GiB"),
        "{}",
        warnings[0]
    );
}

/// The showcase's debug tree packed (its run's passes first, the trace log last), then damaged
/// by `harm`: what is readable loads and one line says the rest is not. Returns the warnings
/// and the passes loaded.
fn damaged(ext: &str, harm: impl Fn(&mut Vec<u8>)) -> (Vec<String>, usize) {
    let tmp = tempfile::tempdir().unwrap();
    let archive = arena(tmp.path()).join(format!("damaged.{ext}"));
    let dir = fixture("showcase/torch_compile_debug");
    match ext {
        "zip" => pack_zip(&dir, &archive),
        _ => pack_tar_gz(&dir, &archive),
    }
    let mut bytes = std::fs::read(&archive).unwrap();
    harm(&mut bytes);
    std::fs::write(&archive, &bytes).unwrap();
    let (code, warnings, stderr) = summarise_hostile(tmp.path(), &archive);
    assert_eq!(code, Some(0), "{stderr}");
    let out = fxray_cached(
        &tmp.path().join("cache"),
        &["summary", "--json", archive.to_str().unwrap()],
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let passes = v["runs"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["models"].as_array().into_iter().flatten())
        .flat_map(|m| m["phases"].as_array().into_iter().flatten())
        .map(|p| p["passes"].as_array().map_or(0, Vec::len))
        .sum();
    (warnings, passes)
}

#[test]
fn a_cut_tar_gz_loads_what_was_read_and_says_where_it_ends() {
    let (warnings, passes) = damaged("tar.gz", |b| b.truncate(b.len() * 6 / 10));
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].contains("it was cut short")
            && warnings[0].contains("files read before it are shown"),
        "{}",
        warnings[0]
    );
    assert!(passes > 0, "nothing loaded");
}

#[test]
fn a_corrupt_tar_gz_loads_what_was_read_and_says_it_is_damaged() {
    let (warnings, passes) = damaged("tar.gz", |b| {
        let mid = b.len() / 2;
        for x in &mut b[mid..mid + 4096] {
            *x = !*x;
        }
    });
    // Flipped bits can inflate into garbage before the stream fails (gzip's CRC is at its end):
    // such a pass says so itself, as a damaged file on disk would. The archive says one line.
    let archive: Vec<&String> = warnings
        .iter()
        .filter(|w| w.starts_with("damaged.tar.gz: "))
        .collect();
    assert_eq!(archive.len(), 1, "{warnings:#?}");
    assert!(archive[0].contains("damaged"), "{}", archive[0]);
    assert!(
        archive[0].len() < 200,
        "a line, not a dump of garbage: {}",
        archive[0]
    );
    assert!(passes > 0, "nothing loaded");
}

#[test]
fn a_cut_zip_is_read_from_its_local_headers() {
    let (warnings, passes) = damaged("zip", |b| b.truncate(b.len() * 7 / 10));
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].contains("no central directory") && warnings[0].contains("cut short"),
        "{}",
        warnings[0]
    );
    assert!(passes > 0, "nothing loaded");
}

#[test]
fn not_an_archive_is_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = arena(tmp.path()).join("notes.tar.gz");
    std::fs::write(&archive, b"these are my notes, not an archive\n").unwrap();
    let (code, _, stderr) = summarise_hostile(tmp.path(), &archive);
    assert_eq!(code, Some(1));
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("not a readable .tar.gz"), "{stderr}");
}

#[test]
fn a_large_tensor_is_spilled_to_the_cache_and_read_from_there() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("tree");
    let step = src.join("worldsize1_global_rank0/graph_1/0");
    std::fs::create_dir_all(&step).unwrap();
    // 80 MB of f32 ones: past the 64 MB an entry may hold in memory.
    let n: u64 = 20 << 20;
    let mut npy = fxray::sources::npy::f32_header(n as usize);
    for _ in 0..n {
        npy.extend_from_slice(&1.0f32.to_le_bytes());
    }
    std::fs::write(
        step.join("add-aten.add.Tensor.OUTPUT.0.20261129120500061057.npy"),
        &npy,
    )
    .unwrap();
    let archive = arena(tmp.path()).join("dump.tar.gz");
    pack_tar_gz(&src, &archive);
    std::fs::remove_dir_all(&src).unwrap();

    let cache = tmp.path().join("cache");
    let before = snapshot(tmp.path(), &cache);
    let out = ok_stdout(&fxray_cached(
        &cache,
        &["tensors", "--json", archive.to_str().unwrap()],
    ));
    assert_eq!(snapshot(tmp.path(), &cache), before);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rec = &v["tensors"][0];
    assert_eq!(rec["node"], "add");
    let stats = &rec["summary"]["stats"];
    assert_eq!(
        (stats["count"].as_u64(), stats["mean"].as_f64()),
        (Some(n), Some(1.0)),
        "{rec}"
    );
    let spilled: Vec<PathBuf> = walkdir::WalkDir::new(cache.join("fxray/archives"))
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    assert_eq!(spilled.len(), 1, "{spilled:?}");
    assert_eq!(
        std::fs::metadata(&spilled[0]).unwrap().len(),
        npy.len() as u64
    );
}
