//! `fxray bench archive [--mb 200]`: the time to open a `.tar.gz` of a multi-rank run in place
//! (the gzip stream read once, the entries held or spilled, the index built), on a synthetic
//! archive made in a temp folder from the bundled sample run: one copy per rank, each with an
//! extra 8 MB tensor of random floats so the archive compresses like real dumps (text ~10×,
//! floats barely).

use crate::error::{Error, Result};
use crate::sources::{archive, discover};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

const TENSOR_BYTES: usize = 8 << 20;

pub fn run(mb: u64) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("fxray-bench-archive-{}", std::process::id()));
    let result = (|| {
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, &e))?;
        let file = dir.join("cluster_run.tar.gz");
        let t = Instant::now();
        let ranks = build(&file, mb)?;
        let build_s = t.elapsed().as_secs_f64();
        let size = std::fs::metadata(&file)
            .map_err(|e| Error::io(&file, &e))?
            .len();
        println!(
            "archive_mb={:.1} ranks={ranks} build_s={build_s:.2}",
            size as f64 / 1e6
        );
        // The floor: inflating the stream and nothing else.
        let t = Instant::now();
        let raw = std::fs::File::open(&file).map_err(|e| Error::io(&file, &e))?;
        let mut gz =
            flate2::read::MultiGzDecoder::new(std::io::BufReader::with_capacity(1 << 20, raw));
        std::io::copy(&mut gz, &mut std::io::sink()).map_err(|e| Error::io(&file, &e))?;
        let inflate_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let set = discover::scan(&file)?;
        let scan_s = t.elapsed().as_secs_f64();
        let mut index = set.index();
        crate::pipeline::tree::read_contents(&mut index);
        let index_s = t.elapsed().as_secs_f64();
        let Some(Ok((a, _))) = archive::locate(&file) else {
            return Err(Error::Internal("the archive is not mounted".into()));
        };
        let expanded = (a.in_memory + a.spilled) as f64 / 1e6;
        println!(
            "files={} runs={} expanded_mb={expanded:.1} in_memory_mb={:.1} spilled_mb={:.1}",
            set.files.len(),
            index.runs.len(),
            a.in_memory as f64 / 1e6,
            a.spilled as f64 / 1e6
        );
        println!(
            "open_s={index_s:.3} read_once_s={scan_s:.3} inflate_only_s={inflate_s:.3} \
             archive_mb_s={:.1} expanded_mb_s={:.1}",
            size as f64 / 1e6 / scan_s,
            expanded / scan_s
        );
        // Opening it again while mounted: the index from the entries in memory.
        let t = Instant::now();
        std::hint::black_box(discover::scan(&file)?.index());
        println!("reopen_s={:.4}", t.elapsed().as_secs_f64());
        // Nothing under `dir` stays open: its spilled entries go with it.
        archive::unmount_others(&dir);
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&dir);
    result
}

/// Writes ranks of the sample run until the archive reaches `mb` MB; returns the ranks made.
fn build(file: &Path, mb: u64) -> Result<u32> {
    let sample = crate::pipeline::sample::sample_path();
    let io = |p: &Path, e: std::io::Error| Error::io(p, &e);
    let out = std::fs::File::create(file).map_err(|e| io(file, e))?;
    let counter = Counting {
        inner: out,
        written: 0,
    };
    let gz = flate2::write::GzEncoder::new(counter, flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    let files: Vec<_> = walkdir::WalkDir::new(&sample)
        .sort_by_file_name()
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rank = 0u32;
    while tar.get_ref().get_ref().written < mb << 20 {
        for f in &files {
            let rel = f.strip_prefix(&sample).unwrap_or(f).to_string_lossy();
            // One run folder and one dump folder per rank, as a cluster writes them.
            let rel = rel
                .replace("-pid_3064", &format!("-pid_{}-rank_{rank}", 3064 + rank))
                .replace(
                    "worldsize1_global_rank0",
                    &format!("worldsize8_global_rank{rank}"),
                );
            let bytes = std::fs::read(f).map_err(|e| io(f, e))?;
            append(&mut tar, &format!("torch_run/{rel}"), &bytes, file)?;
        }
        let tensor = random_npy(&mut seed);
        let name = format!(
            "torch_run/data_dump/worldsize8_global_rank{rank}/graph_1/0/\
             hidden-aten.mm.default.OUTPUT.0.20261129120500061057.npy"
        );
        append(&mut tar, &name, &tensor, file)?;
        rank += 1;
    }
    let gz = tar.into_inner().map_err(|e| io(file, e))?;
    gz.finish().map_err(|e| io(file, e))?;
    Ok(rank)
}

fn append<W: Write>(
    tar: &mut tar::Builder<W>,
    name: &str,
    bytes: &[u8],
    file: &Path,
) -> Result<()> {
    let mut h = tar::Header::new_gnu();
    h.set_size(bytes.len() as u64);
    h.set_mode(0o644);
    tar.append_data(&mut h, name, bytes)
        .map_err(|e| Error::io(file, &e))
}

/// A float32 `.npy` of random values in [-1, 1): its mantissas do not compress.
fn random_npy(seed: &mut u64) -> Vec<u8> {
    let n = TENSOR_BYTES / 4;
    let mut v = crate::sources::npy::f32_header(n);
    v.reserve(TENSOR_BYTES);
    for _ in 0..n {
        // xorshift64: fast, and random enough to defeat deflate.
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        let x = (*seed >> 40) as f32 / (1u64 << 23) as f32 * 2.0 - 1.0;
        v.extend_from_slice(&x.to_le_bytes());
    }
    v
}

/// Counts the compressed bytes written, to stop at the size asked for.
struct Counting<W> {
    inner: W,
    written: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
