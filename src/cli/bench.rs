//! `fxray bench …`: speed figures on real files, printed as `key=value` lines so scripts and the
//! README can quote them. Benchmarks, not tests: nothing here asserts a time.

use super::measure::{median, min};
use crate::error::{Error, Result};
use crate::sources::{discover, fx_text, read};
use clap::Subcommand;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// FX text parse throughput over every graph file under PATH (read once, parsed N times).
    Parse {
        path: PathBuf,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
    /// Layered layout of one graph file; with `--dot`, Graphviz `dot -Tplain` on the same
    /// graph side by side. The last line is `layout_s=<s> nodes=<n> edges=<m>`.
    Layout {
        graph: PathBuf,
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// Also time Graphviz `dot -Tplain` (must be on PATH) and print the ratio.
        #[arg(long)]
        dot: bool,
        /// Stop Graphviz after this many seconds (it can take hours on 5k nodes); the ratio
        /// is then a lower bound.
        #[arg(long, default_value_t = 120)]
        dot_timeout: u64,
    },
    /// CPU time per frame of the real UI (egui pass + tessellation, no GPU) while panning a
    /// graph zoomed out to fit, then zoomed in.
    Frame {
        graph: PathBuf,
        #[arg(long, default_value_t = 120)]
        frames: usize,
        /// Group nodes by module: `auto` (by size, as the app opens it), `on` or `off`.
        #[arg(long, value_enum, default_value_t = FoldArg::Auto)]
        fold: FoldArg,
    },
    /// Structural diff of two graphs (files or `PHASE_DIR:k`), best of --rounds. The last line
    /// is `diff_s=<s> nodes_a=<n> nodes_b=<m>`.
    Diff {
        a: PathBuf,
        b: PathBuf,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
    /// The rank matrix of every launch under PATH: fingerprinting every graph file and building
    /// the matrices, best of --rounds. The line is `fingerprint_s=… matrix_s=… files=… nodes=…`.
    Ranks {
        path: PathBuf,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
    /// Timeline of a capture JSON: load time (read + parse + pairing, best of --rounds) and
    /// CPU time per frame of the timeline view zoomed out to fit, then zoomed in.
    Timeline {
        file: PathBuf,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        #[arg(long, default_value_t = 120)]
        frames: usize,
    },
    /// Autotune report time: find the inductor_asc lines of a log and join them per kernel.
    /// PATH is a log file; without it, a synthetic console of --kernels Top-8 autotunes
    /// between lines of other output.
    Autotune {
        path: Option<PathBuf>,
        #[arg(long, default_value_t = 2_000)]
        kernels: usize,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
    /// Statistics of a float32 `.npy` of --mib MiB made in a temp folder: throughput and peak
    /// memory (the file is memory-mapped, never copied).
    Tensors {
        #[arg(long, default_value_t = 256)]
        mib: usize,
        #[arg(long, default_value_t = 3)]
        rounds: usize,
    },
    /// Index time: walk PATH, or a synthetic tree of --files files made in a temp folder.
    Index {
        path: Option<PathBuf>,
        #[arg(long, default_value_t = 10_000)]
        files: usize,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
    /// Open time of a `.tar.gz` of --mb MB (a synthetic multi-rank run made in a temp folder):
    /// the stream read once, entries held in memory or spilled to the cache, the index built.
    Archive {
        #[arg(long, default_value_t = 200)]
        mb: u64,
    },
    /// Trace log (torch's `dedicated_log_torch_trace_*.log`): parse time, and `fxray compiles
    /// --json` as a child process, best and median of --rounds with peak memory; with --mb, on
    /// a trace of that many MB built from FILE; with --tlparse, tlparse on the same file in
    /// turn with fxray, and the ratios.
    Trace {
        file: PathBuf,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// Repeat FILE (frame ids renumbered) into a trace of this many MB in a temp folder.
        #[arg(long)]
        mb: Option<u64>,
        /// The tlparse binary to time on the same file.
        #[arg(long)]
        tlparse: Option<PathBuf>,
    },
    /// msprobe linking: a synthetic mix-level dump of GRAPH (a module entry per module, an
    /// aten entry per call) linked to its nodes; prints the share linked and the time.
    Msprobe {
        graph: PathBuf,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
    /// Module inference (the module of every node) over every pass of every phase under PATH;
    /// files parsed beforehand. The last line is `modules_best_s=<s> modules_median_s=<s>`.
    Modules {
        path: PathBuf,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
    /// Accuracy compare of two dumps (`fxray compare` start to finish), best of --rounds, with
    /// peak memory; with --msprobe PYTHON, `msprobe compare` on the same msprobe dumps beside it.
    Compare {
        target: PathBuf,
        golden: PathBuf,
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// The Python whose `msprobe` (mindstudio-probe) to time on the same dumps.
        #[arg(long)]
        msprobe: Option<PathBuf>,
    },
    /// Original against optimized (`fxray compare RUN` on npugraph_ex's stage dumps), best of
    /// --rounds, with peak memory: finding the dumps and the phase, then the compare itself
    /// (pass files parsed and diffed, every pair read and judged).
    Stages {
        run: PathBuf,
        #[arg(long, default_value_t = 3)]
        rounds: usize,
    },
    /// Which pass, exactly (`fxray bisect RUN`), best of --rounds: the plan (pass files read,
    /// parsed and diffed) and the whole bisect (the replay's child included), fxray's peak
    /// memory and the child's, beside the stage compare of the same run.
    Bisect {
        run: PathBuf,
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// The Python with torch that replays the passes.
        #[arg(long)]
        python: Option<PathBuf>,
    },
    /// Watch latency: pass files written at --rate per second into a temp folder; prints the
    /// time from each file's last write to its appearance in the index, and to "settled".
    Watch {
        #[arg(long, default_value_t = 100)]
        files: usize,
        #[arg(long, default_value_t = 20.0)]
        rate: f64,
        /// Use the polling fallback instead of OS events.
        #[arg(long)]
        poll: bool,
    },
    /// The real app, headless: from start to the first frame that draws a graph, and to the
    /// open phase complete (every pass read, laid out, folded, diffed) with the tree's facts,
    /// with the CPU spent and the peak memory; each round a child process. Several trees are
    /// measured side by side, each with its ratios to the first.
    Open {
        #[arg(required = true)]
        trees: Vec<PathBuf>,
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// Give up on an open after this many seconds.
        #[arg(long, default_value_t = 300)]
        timeout: u64,
        /// Measure one open in this process (what each round's child runs).
        #[arg(long, hide = true)]
        once: bool,
    },
    /// A remote tree (`ssh://host/path`) opened in the real app, headless, through a delay
    /// proxy on loopback: the first frame that draws a graph and every pass ready, with the
    /// bytes in by each; beside the same tree opened locally when it is here too.
    Remote {
        path: PathBuf,
        /// Delay added in each direction (the round trip grows by twice this).
        #[arg(long, default_value_t = 25)]
        delay_ms: u64,
        #[arg(long, default_value_t = 3)]
        rounds: usize,
        /// Also mount the tree with sshfs through the same proxy and open it from there.
        #[arg(long)]
        sshfs: bool,
        /// Also write a float32 `.npy` of this many MiB on the server (this machine: loopback
        /// only) and count the bytes its statistics and its heatmap slice bring back.
        #[arg(long, default_value_t = 0)]
        npy_mib: usize,
    },
}

pub fn run(what: BenchCommand) -> Result<()> {
    match what {
        BenchCommand::Parse { path, rounds } => parse(&path, rounds.max(1)),
        BenchCommand::Layout {
            graph,
            rounds,
            dot,
            dot_timeout,
        } => {
            let dot = dot.then_some(Duration::from_secs(dot_timeout.max(1)));
            super::bench_ui::layout(&graph, rounds.max(1), dot)
        }
        BenchCommand::Frame {
            graph,
            frames,
            fold,
        } => super::bench_ui::frame(&graph, frames.max(10), fold.mode()),
        BenchCommand::Timeline {
            file,
            rounds,
            frames,
        } => super::bench_timeline::run(&file, rounds.max(1), frames.max(10)),
        BenchCommand::Diff { a, b, rounds } => super::diff::bench(&a, &b, rounds.max(1)),
        BenchCommand::Ranks { path, rounds } => super::ranks::bench(&path, rounds.max(1)),
        BenchCommand::Autotune {
            path,
            kernels,
            rounds,
        } => super::autotune::bench(path.as_deref(), kernels, rounds.max(1)),
        BenchCommand::Tensors { mib, rounds } => super::tensors::bench(mib.max(1), rounds.max(1)),
        BenchCommand::Index {
            path,
            files,
            rounds,
        } => match path {
            Some(p) => index(&p, rounds.max(1)),
            None => synthetic_index(files, rounds.max(1)),
        },
        BenchCommand::Trace {
            file,
            rounds,
            mb,
            tlparse,
        } => super::bench_trace::run(&file, rounds.max(1), mb, tlparse.as_deref()),
        BenchCommand::Archive { mb } => super::bench_archive::run(mb.max(1)),
        BenchCommand::Modules { path, rounds } => super::modules::bench(&path, rounds.max(1)),
        BenchCommand::Msprobe { graph, rounds } => super::msprobe::bench(&graph, rounds.max(1)),
        BenchCommand::Watch { files, rate, poll } => super::bench_watch::run(files, rate, poll),
        BenchCommand::Remote {
            path,
            delay_ms,
            rounds,
            sshfs,
            npy_mib,
        } => super::bench_remote::run(&path, delay_ms, rounds.max(1), sshfs, npy_mib),
        BenchCommand::Open {
            trees,
            rounds,
            timeout,
            once,
        } => super::bench_open::run(
            &trees,
            rounds.max(1),
            once,
            Duration::from_secs(timeout.max(1)),
        ),
        BenchCommand::Compare {
            target,
            golden,
            rounds,
            msprobe,
        } => super::compare::bench(&target, &golden, rounds.max(1), msprobe.as_deref()),
        BenchCommand::Stages { run, rounds } => super::stages::bench(&run, rounds.max(1)),
        BenchCommand::Bisect {
            run,
            rounds,
            python,
        } => super::bisect::bench(&run, rounds.max(1), python.as_deref()),
    }
}

fn parse(path: &Path, rounds: usize) -> Result<()> {
    let idx = crate::pipeline::tree::index(path)?;
    let texts: Vec<String> = idx
        .graph_files()
        .filter_map(|p| read::read_text(p).ok().map(|t| t.text))
        .collect();
    if texts.is_empty() {
        return Err(Error::user(format!(
            "{}: no graph files found",
            path.display()
        )));
    }
    let bytes: usize = texts.iter().map(String::len).sum();
    let mut nodes = 0;
    let mut times = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        nodes = texts
            .iter()
            .map(|s| fx_text::parse_fx(s).node_count())
            .sum::<usize>();
        times.push(t.elapsed());
    }
    let best = min(&times);
    let mb = bytes as f64 / 1e6;
    println!(
        "files={} bytes={bytes} nodes={nodes} rounds={rounds}",
        texts.len()
    );
    println!(
        "parse_best_s={:.4} parse_median_s={:.4}",
        best.as_secs_f64(),
        median(&mut times).as_secs_f64()
    );
    println!("parse_mb_s={:.1}", mb / best.as_secs_f64());
    Ok(())
}

fn index(path: &Path, rounds: usize) -> Result<()> {
    let mut times = Vec::with_capacity(rounds);
    let mut files = 0;
    for _ in 0..rounds {
        let t = Instant::now();
        let idx = discover::discover(path)?;
        times.push(t.elapsed());
        files = idx.files_seen;
    }
    println!("files={files} rounds={rounds}");
    println!(
        "index_best_s={:.4} index_median_s={:.4}",
        min(&times).as_secs_f64(),
        median(&mut times).as_secs_f64()
    );
    // What the watcher pays per batch of changes: the index rebuilt from the files in memory.
    let set = discover::scan(path)?;
    let mut rebuild = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        std::hint::black_box(set.index());
        rebuild.push(t.elapsed());
    }
    println!(
        "rebuild_from_memory_best_s={:.4}",
        min(&rebuild).as_secs_f64()
    );
    Ok(())
}

/// A tree shaped like a long multi-rank npugraph_ex debug run: runs × models × phases × passes.
fn synthetic_index(files: usize, rounds: usize) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("fxray-bench-index-{}", std::process::id()));
    let made = make_tree(&dir, files);
    let result = made.and_then(|_| index(&dir, rounds));
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn make_tree(dir: &Path, files: usize) -> Result<()> {
    const PASSES: &[&str] = &[
        "optimize_noop_ops",
        "view_to_reshape",
        "eliminate_dead_code",
        "reinplace_inplaceable_ops_pass",
    ];
    let io = |p: &Path, e: std::io::Error| Error::io(p, &e);
    let mut made = 0;
    let mut run = 0;
    while made < files {
        let run_dir = dir.join(format!(
            "torch_compile_debug/run_2026_01_01_12_00_00_{run:06}-pid_{}-rank_{}",
            1000 + run,
            run % 8
        ));
        for model in 0..10 {
            for phase in ["forward", "backward"] {
                let d = run_dir.join(format!("npugraph_ex/model__{model}/{phase}"));
                std::fs::create_dir_all(&d).map_err(|e| io(&d, e))?;
                for k in 0..50 {
                    if made >= files {
                        return Ok(());
                    }
                    let name = match k {
                        0 => format!("000_aot_{phase}_graph.txt"),
                        _ => format!(
                            "{k:03}_aot_{phase}_graph_after_{}.txt",
                            PASSES[k % PASSES.len()]
                        ),
                    };
                    let p = d.join(name);
                    std::fs::write(&p, b"").map_err(|e| io(&p, e))?;
                    made += 1;
                }
            }
        }
        run += 1;
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum FoldArg {
    Auto,
    On,
    Off,
}

impl FoldArg {
    fn mode(self) -> Option<bool> {
        match self {
            FoldArg::Auto => None,
            FoldArg::On => Some(true),
            FoldArg::Off => Some(false),
        }
    }
}
