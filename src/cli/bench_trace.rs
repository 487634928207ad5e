//! `fxray bench trace FILE`: fxray's compile story of a trace log against tlparse's on the same
//! file. Both run as child processes, round after round in turn (a busy machine slows both
//! alike), each timed from spawn to exit with its peak resident memory from `wait4`. The
//! in-process parse time is printed too, as throughput.

use super::measure::{median, min};
use crate::error::{Error, Result};
use crate::sources::trace_log;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// With `grow_mb`, FILE is first repeated (frame ids renumbered, so every copy is new
/// compiles) into a trace of that size in a temp folder, removed afterwards.
pub fn run(file: &Path, rounds: usize, grow_mb: Option<u64>, tlparse: Option<&Path>) -> Result<()> {
    let tmp = std::env::temp_dir().join(format!("fxray-bench-trace-{}", std::process::id()));
    let result = (|| {
        let file = match grow_mb {
            Some(mb) => grow(file, mb, &tmp)?,
            None => file.to_path_buf(),
        };
        bench_file(&file, rounds, tlparse, &tmp)
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

/// Times and peak memories of one tool's rounds.
#[derive(Default)]
struct Runs {
    times: Vec<Duration>,
    peak_bytes: u64,
    failed: Option<String>,
}

impl Runs {
    fn add(&mut self, cmd: &mut Command) -> Result<()> {
        let (t, bytes, ok) = timed_child(cmd)?;
        self.times.push(t);
        self.peak_bytes = self.peak_bytes.max(bytes);
        if !ok {
            self.failed = Some(format!("{cmd:?}"));
        }
        Ok(())
    }

    fn line(&mut self, who: &str, mb: f64) -> f64 {
        let best = min(&self.times).as_secs_f64();
        let med = median(&mut self.times).as_secs_f64();
        println!(
            "{who}_best_s={best:.4} {who}_median_s={med:.4} {who}_mb_per_s={:.1} {who}_peak_rss_mib={:.1}",
            mb / best.max(1e-9),
            self.peak_bytes as f64 / (1024.0 * 1024.0)
        );
        if let Some(f) = &self.failed {
            println!("{who}_failed={f}");
        }
        best
    }
}

fn bench_file(file: &Path, rounds: usize, tlparse: Option<&Path>, tmp: &Path) -> Result<()> {
    let size = std::fs::metadata(file)
        .map_err(|e| Error::io(file, &e))?
        .len();
    let mb = size as f64 / 1e6;
    let mut parse = Vec::new();
    let mut counts = (0, 0);
    for _ in 0..rounds {
        let t = Instant::now();
        let trace = trace_log::load(file)?;
        parse.push(t.elapsed());
        counts = (trace.compiles.len(), trace.spans.len());
    }
    println!("file={}", file.display());
    println!("bytes={size}");
    println!("compiles={} spans={}", counts.0, counts.1);
    let best = min(&parse).as_secs_f64();
    println!(
        "fxray_parse_s={best:.4} mb_per_s={:.1}",
        mb / best.max(1e-9)
    );
    // `fxray compiles FILE --json`: everything the command does, output thrown away.
    let exe = std::env::current_exe().map_err(|e| Error::Internal(e.to_string()))?;
    let out = tmp.join("tl_out");
    let (mut fx, mut tl) = (Runs::default(), Runs::default());
    for _ in 0..rounds {
        fx.add(Command::new(&exe).arg("compiles").arg(file).arg("--json"))?;
        if let Some(bin) = tlparse {
            tl.add(
                Command::new(bin)
                    .arg(file)
                    .arg("-o")
                    .arg(&out)
                    .args(["--overwrite", "--no-browser"]),
            )?;
        }
    }
    let fx_best = fx.line("fxray_compiles", mb);
    if tlparse.is_some() {
        let tl_best = tl.line("tlparse", mb);
        println!(
            "tlparse_over_fxray_time={:.1}x tlparse_over_fxray_memory={:.1}x",
            tl_best / fx_best.max(1e-9),
            tl.peak_bytes as f64 / (fx.peak_bytes.max(1)) as f64
        );
    }
    Ok(())
}

/// Runs `cmd` with its output thrown away: wall time from spawn to exit, the child's peak
/// resident set in bytes (0 where the OS does not say), and whether it exited 0.
fn timed_child(cmd: &mut Command) -> Result<(Duration, u64, bool)> {
    let t = Instant::now();
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| Error::user(format!("{:?}: {e}", cmd.get_program())))?;
    let (status, peak) = crate::platform::wait_measured(&mut child)
        .map_err(|e| Error::Internal(format!("waiting for {:?}: {e}", cmd.get_program())))?;
    Ok((t.elapsed(), peak.unwrap_or(0), status.success()))
}

/// Repeats `file` until it holds `mb` MB, adding a multiple of 100,000 to every `frame_id`
/// key of each copy; the `"0/0"` strings of `compile_id` fields and chromium events are left as
/// they are, so the copies' spans share ids.
fn grow(file: &Path, mb: u64, tmp: &Path) -> Result<PathBuf> {
    let text = crate::sources::read::read_text(file)?.text;
    if text.is_empty() {
        return Err(Error::user(format!("{}: empty trace", file.display())));
    }
    std::fs::create_dir_all(tmp).map_err(|e| Error::io(tmp, &e))?;
    let out = tmp.join("dedicated_log_torch_trace_grown.log");
    let mut buf = String::with_capacity((mb * 1_000_000) as usize + text.len());
    let mut copy = 0u64;
    while (buf.len() as u64) < mb * 1_000_000 {
        let off = copy * 100_000;
        for line in text.split_inclusive('\n') {
            buf.push_str(&renumber(line, off));
        }
        copy += 1;
    }
    std::fs::write(&out, buf).map_err(|e| Error::io(&out, &e))?;
    Ok(out)
}

fn renumber(line: &str, off: u64) -> std::borrow::Cow<'_, str> {
    if off == 0 || !line.contains("\"frame_id\": ") {
        return line.into();
    }
    let mut out = String::with_capacity(line.len() + 8);
    let mut rest = line;
    while let Some(i) = rest.find("\"frame_id\": ") {
        let start = i + "\"frame_id\": ".len();
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[..digits].parse::<u64>() {
            Ok(n) => out.push_str(&(n + off).to_string()),
            Err(_) => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out.into()
}
