//! The command line: `fxray [PATH]` opens the app; subcommands run the same core headless.

mod agent;
pub mod autotune;
pub mod bench;
mod bench_archive;
mod bench_open;
mod bench_remote;
mod bench_timeline;
mod bench_trace;
mod bench_ui;
mod bench_watch;
pub mod bisect;
pub mod compare;
pub mod compiles;
pub mod diff;
pub mod export;
mod measure;
pub mod modules;
pub mod msprobe;
pub mod ranks;
pub mod run;
mod shell_help;
pub mod stages;
pub mod summary;
pub mod tensors;
pub mod timeline;
mod unknown;
pub mod watch;

use crate::error::Result;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
pub use unknown::unknown_command;

#[derive(Debug, Parser)]
#[command(
    name = "fxray",
    version,
    about = "See inside a torch.compile run: pass graphs, diffs, dumped tensors, timelines.",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// A debug folder (torch_compile_debug/, run_*, model__N, a phase folder), a graph file,
    /// a data dump or an msprobe dump. Without it the bundled sample run opens.
    pub path: Option<PathBuf>,
    /// Open with this golden run attached, as File ▸ Compare with golden… does: a dump folder,
    /// an msprobe dump, a run folder holding one, an archive, or msprobe's compare_result_*.csv.
    #[arg(long, value_name = "GOLDEN")]
    pub golden: Option<PathBuf>,
    /// Where `fxray` is on the servers of `ssh://` paths, when not on their PATH (taken
    /// wherever it stands on the line, before or after a subcommand).
    #[arg(long, global = true, value_name = "PATH")]
    pub remote_fxray: Option<String>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The command line with every `ssh://[user@]host[:port]/path` argument turned into the path
/// fxray reads it by (`/ssh:host/path`, served by the agent on that host), so every command
/// takes a remote tree where it takes a local one; and `--remote-fxray PATH` taken out, wherever
/// it stands (before or after a subcommand), and returned.
pub fn resolve_remote_args(
    args: impl IntoIterator<Item = std::ffi::OsString>,
) -> Result<(Vec<std::ffi::OsString>, Option<String>)> {
    use crate::sources::remote::target;
    let mut out = Vec::new();
    let mut remote_fxray = None;
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        let text = a.to_str();
        if text == Some("--remote-fxray") {
            let value = args
                .next()
                .and_then(|v| v.into_string().ok())
                .ok_or_else(|| {
                    crate::error::Error::user(
                        "--remote-fxray needs the path of fxray on the server",
                    )
                })?;
            remote_fxray = Some(value);
            continue;
        }
        if let Some(v) = text.and_then(|t| t.strip_prefix("--remote-fxray=")) {
            remote_fxray = Some(v.to_string());
            continue;
        }
        out.push(match text.and_then(target::parse) {
            None => a,
            Some(Ok((host, path))) => target::mount_path(&host, &path).into_os_string(),
            Some(Err(e)) => return Err(crate::error::Error::user(e.to_string())),
        });
    }
    Ok((out, remote_fxray))
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print what a folder holds: runs, models, phases, passes with node counts, captures, logs.
    Summary {
        path: PathBuf,
        /// Machine-readable JSON instead of the tree.
        #[arg(long)]
        json: bool,
    },
    /// Structural diff of two graphs: added, removed, changed, renamed nodes and rewired edges.
    /// A and B are graph files or `PHASE_DIR:k` (the pass numbered k in that phase folder).
    Diff {
        a: PathBuf,
        b: PathBuf,
        /// Machine-readable JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Export one graph file as JSON, Graphviz DOT, SVG or PNG.
    Export {
        graph: PathBuf,
        #[arg(long, short, value_enum, default_value_t = ExportFormat::Json)]
        format: ExportFormat,
        /// Output file; standard output when omitted (text formats only).
        #[arg(long, short)]
        output: Option<PathBuf>,
        /// svg/png: lay the pass out with all the passes of its phase folder, so nodes sit
        /// where the app draws them.
        #[arg(long)]
        union: bool,
        /// svg/png: dark background.
        #[arg(long)]
        dark: bool,
        /// png: pixels per layout unit (reduced to fit 16,384 px a side).
        #[arg(long, default_value_t = 1.0)]
        scale: f32,
    },
    /// Print one line per change (time, kind, role, path) while a compile writes into PATH,
    /// until interrupted.
    Watch {
        path: PathBuf,
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
        /// Poll instead of using the OS file events.
        #[arg(long)]
        poll: bool,
        /// Stop after this many changes.
        #[arg(long)]
        count: Option<usize>,
    },
    /// Run a compile with TORCH_COMPILE_DEBUG=1 through fxray's launcher: the output streams
    /// through, the run folders written are printed at the end, the exit code is the script's.
    Run {
        /// The torch.compile backend to force (default: the script's own).
        #[arg(long, value_enum, default_value_t = crate::runner::spec::Backend::Script)]
        backend: crate::runner::spec::Backend,
        /// TorchAir CompilerConfig.mode (with --backend torchair).
        #[arg(long, value_enum)]
        mode: Option<crate::runner::spec::Mode>,
        /// The interpreter (default: the active venv/conda, else python3 on PATH).
        #[arg(long)]
        python: Option<PathBuf>,
        /// Ranks, launched with `python -m torch.distributed.run --nproc_per_node N`.
        #[arg(long, default_value_t = 1)]
        nproc: u32,
        /// Working folder (default: the script's folder).
        #[arg(long)]
        cwd: Option<PathBuf>,
        /// TORCH_COMPILE_DEBUG_DIR (default: the working folder).
        #[arg(long)]
        debug_dir: Option<PathBuf>,
        /// ASCEND_RT_VISIBLE_DEVICES, e.g. 0,1.
        #[arg(long)]
        devices: Option<String>,
        /// Dump every node's tensors as .npy under this folder.
        #[arg(long)]
        data_dump: Option<PathBuf>,
        #[arg(long)]
        deadlock_check: bool,
        /// TORCHINDUCTOR_ASCENDC_AUTOTUNE_TOPN.
        #[arg(long)]
        autotune_topn: Option<u32>,
        /// Let Inductor serve the compile from its caches (by default they are disabled: a
        /// cache hit writes no graphs).
        #[arg(long)]
        keep_caches: bool,
        /// Extra environment, KEY=VALUE (repeatable).
        #[arg(long = "env", value_parser = crate::runner::spec::parse_env)]
        env: Vec<(String, String)>,
        /// `script.py args…` after `--` (a leading `python3` is taken as --python).
        #[arg(last = true, required = true)]
        command: Vec<String>,
    },
    /// What an aclGraph capture (`*.json`, `*.aligned.json`) or any Chrome trace holds:
    /// streams, tasks per stream, task types, record/wait pairs, flows, end time per stream.
    Timeline {
        file: PathBuf,
        /// Machine-readable JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Statistics of dumped tensors (npy data dump, npugraph_ex tensor dump of .pt files,
    /// msprobe dump.json); with `--first`, the first node whose outputs hold NaN or Inf and
    /// where the value came from.
    Tensors {
        dump_root: PathBuf,
        /// Only this FX node (msprobe: keys containing it).
        #[arg(long)]
        node: Option<String>,
        #[arg(long)]
        step: Option<u32>,
        #[arg(long)]
        rank: Option<u32>,
        /// Machine-readable JSON instead of text.
        #[arg(long)]
        json: bool,
        /// nan, inf (either sign), +inf or -inf: print the first node (in graph order) whose
        /// outputs hold it on the first line, then where it came from.
        #[arg(long)]
        first: Option<String>,
        /// The FX graph file whose order and arguments the tracer follows (the last pass).
        #[arg(long)]
        graph: Option<PathBuf>,
    },
    /// msprobe dump.json entries linked to FX nodes of the graph that ran (each phase's last
    /// pass, or --graph), each with a confidence and a reason; the share linked to a node doing
    /// the same op (API calls) or with the same output (module calls).
    Msprobe {
        path: PathBuf,
        /// The FX graph file to link to.
        #[arg(long)]
        graph: Option<PathBuf>,
        #[arg(long)]
        step: Option<u32>,
        /// Machine-readable JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// AscendC autotune: every fused kernel's tiling candidates, their timings and the winner
    /// (from autofused_* folders, cache entries with optimize_tiling, and inductor_asc logs).
    Autotune {
        path: PathBuf,
        /// Machine-readable JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// The compile story from torch's trace log: one row per compile id (status, user frame,
    /// time, the model__N its graph went to), graph breaks with their line and reason,
    /// recompiles with the failing guard. PATH: a debug tree, a run, or the trace log itself.
    Compiles {
        path: PathBuf,
        /// Machine-readable JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// A run against its golden run, tensor by tensor: msprobe's metrics and pass/warning/error,
    /// the norm ratio and the error each call adds, and the first divergence. TARGET and GOLDEN:
    /// a TorchAir npy dump, an msprobe dump (step or proc/rank folder, dump.json), a run folder
    /// holding one, or an archive. TARGET alone may be msprobe's compare_result_*.csv.
    Compare {
        target: PathBuf,
        golden: Option<PathBuf>,
        #[arg(long)]
        step: Option<u32>,
        #[arg(long)]
        rank: Option<u32>,
        /// The FX graph file msprobe calls are linked to (pairs then name their node).
        #[arg(long)]
        graph: Option<PathBuf>,
        /// Machine-readable JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Also write the pairs as msprobe's compare CSV (its column names).
        #[arg(long)]
        csv: Option<PathBuf>,
        /// npugraph_ex's stage dumps: TARGET is the optimized dump, GOLDEN the original, and
        /// this the phase (or run) whose pass files joined them. TARGET alone, a run folder
        /// holding both stage dumps, finds them itself.
        #[arg(long, value_name = "PHASE")]
        passes: Option<PathBuf>,
        /// The original graph run in float64 and dumped alike: the tolerance's reference.
        #[arg(long, value_name = "DUMP")]
        reference: Option<PathBuf>,
    },
    /// Which pass broke the numbers, exactly: replays every pass file of a phase on the graph's
    /// inputs in a child Python with torch, pass 000 in float64 as the reference, and names the
    /// first pass with a node that departs from the pass before while its inputs agree.
    Bisect {
        /// A run folder (or a tree holding one).
        run: PathBuf,
        /// The graph's inputs: npugraph_ex's tensor dump of either stage, an npy dump, or a
        /// torch.save'd tuple, list or dict. Default: the run's own stage dump.
        #[arg(long, value_name = "DUMP")]
        inputs: Option<PathBuf>,
        /// The phase to replay (`forward`, `backward`, or its folder). Default: the phase the
        /// stage dumps name, else the first with two pass files or more.
        #[arg(long)]
        phase: Option<String>,
        /// Which replay of a dump that holds several.
        #[arg(long)]
        step: Option<u32>,
        /// The Python with torch that replays the passes (default: as the Run tab picks one).
        #[arg(long)]
        python: Option<PathBuf>,
        /// A Python file defining `REFERENCES = {"ns::op": fn}`: implementations of ops this
        /// torch lacks (your own kernels), so the nodes that use them are checked too. It is
        /// run. May be given more than once.
        #[arg(long, value_name = "PY")]
        references: Vec<PathBuf>,
        /// Machine-readable JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// The module tree of a graph file, with node counts, and its numbered sub-modules grouped
    /// by structure (`layers.0–414 ×415`; the odd ones in groups of their own, saying how they
    /// differ). Modules are inferred as the window does.
    Modules {
        graph: PathBuf,
        /// Machine-readable JSON instead of the tree.
        #[arg(long)]
        json: bool,
    },
    /// The ranks of each distributed launch: every graph file × rank with node counts, `*` on
    /// the ranks whose graph differs from the majority's (structure, not names).
    Ranks {
        path: PathBuf,
        /// Machine-readable JSON instead of the table.
        #[arg(long)]
        json: bool,
    },
    /// Measure fxray's speed on real files and print the figures.
    Bench {
        #[command(subcommand)]
        what: bench::BenchCommand,
    },
    /// The server half of `fxray ssh://host/path`: answers a client on standard input and
    /// output (started by the client through ssh; not for typing).
    Agent {
        /// Serve the protocol on stdin/stdout until stdin closes.
        #[arg(long, required_unless_present = "print_install")]
        stdio: bool,
        /// Print how to install the agent on a server.
        #[arg(long, conflicts_with = "stdio")]
        print_install: bool,
    },
    /// Print a completion script for a shell, e.g. `fxray completions bash >
    /// ~/.local/share/bash-completion/completions/fxray`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print fxray's man page (roff), e.g. `fxray man > ~/.local/share/man/man1/fxray.1`.
    Man,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    Json,
    Dot,
    /// The laid-out graph as the app draws it.
    Svg,
    /// The SVG rasterised (needs `-o`).
    Png,
}

/// Runs a subcommand. `Ok(false)` means "nothing to do here: open the app".
pub fn run(command: Command) -> Result<()> {
    match command {
        Command::Summary { path, json } => summary::run(&path, json),
        Command::Diff { a, b, json } => diff::run(&a, &b, json),
        Command::Export {
            graph,
            format,
            output,
            union,
            dark,
            scale,
        } => {
            let draw = export::DrawOptions { union, dark, scale };
            export::run_with(&graph, format, output.as_deref(), &draw)
        }
        Command::Watch {
            path,
            json,
            poll,
            count,
        } => watch::run(&path, &watch::WatchArgs { json, poll, count }),
        Command::Run {
            backend,
            mode,
            python,
            nproc,
            cwd,
            debug_dir,
            devices,
            data_dump,
            deadlock_check,
            autotune_topn,
            keep_caches,
            env,
            command,
        } => {
            let (python, command) = split_interpreter(python, command);
            let mut words = command.into_iter();
            let spec = crate::runner::spec::RunSpec {
                python,
                script: words.next().map(PathBuf::from).unwrap_or_default(),
                args: words.collect(),
                cwd,
                backend,
                mode,
                devices: devices.unwrap_or_default(),
                nproc,
                data_dump,
                deadlock_check,
                autotune_topn,
                debug_dir,
                keep_caches,
                env,
            };
            let code = run::run(&spec)?;
            std::process::exit(code);
        }
        Command::Timeline { file, json } => timeline::run(&file, json),
        Command::Tensors {
            dump_root,
            node,
            step,
            rank,
            json,
            first,
            graph,
        } => tensors::run(
            &dump_root,
            &tensors::Options {
                node: node.as_deref(),
                step,
                rank,
                json,
                first: first.as_deref(),
                graph: graph.as_deref(),
            },
        ),
        Command::Msprobe {
            path,
            graph,
            step,
            json,
        } => msprobe::run(
            &path,
            &msprobe::Options {
                graph: graph.as_deref(),
                step,
                json,
            },
        ),
        Command::Autotune { path, json } => autotune::run(&path, json),
        Command::Compiles { path, json } => compiles::run(&path, json),
        Command::Ranks { path, json } => ranks::run(&path, json),
        Command::Modules { graph, json } => modules::run(&graph, json),
        Command::Bisect {
            run,
            inputs,
            phase,
            step,
            python,
            references,
            json,
        } => bisect::run(
            &run,
            &bisect::Options {
                inputs: inputs.as_deref(),
                phase: phase.as_deref(),
                step,
                python: python.as_deref(),
                references: &references,
                json,
            },
        ),
        Command::Compare {
            target,
            golden,
            step,
            rank,
            graph,
            json,
            csv,
            passes,
            reference,
        } => {
            let stage =
                passes.is_some() || (golden.is_none() && crate::sources::vfs::is_dir(&target));
            // A flag of the other kind of compare is an error, not silently dropped.
            let wrong = match stage {
                true => graph
                    .as_ref()
                    .map(|_| "--graph")
                    .or(csv.as_ref().map(|_| "--csv")),
                false => reference.as_ref().map(|_| "--reference"),
            };
            if let Some(flag) = wrong {
                let what = match stage {
                    true => "a stage compare (original against optimized)",
                    false => "a compare against a golden run",
                };
                return Err(crate::error::Error::user(format!(
                    "{flag} does not apply to {what}"
                )));
            }
            let stage_options = stages::Options {
                passes: passes.as_deref(),
                reference: reference.as_deref(),
                step,
                rank,
                json,
            };
            // Two stage dumps of one run given as TARGET GOLDEN are compared as stages: only
            // the pass history pairs what the passes renamed. msprobe's CSV is a golden
            // compare's table and --graph a golden compare's reading, so either keeps it.
            let as_stages = match (&golden, &csv, &graph, stage) {
                (Some(g), None, None, false) => crate::pipeline::stages::of_two(&target, g),
                _ => None,
            };
            if stage {
                stages::run(&target, golden.as_deref(), &stage_options)
            } else if let Some(spec) = as_stages {
                stages::run_given_as_golden(spec, &stage_options)
            } else {
                compare::run(
                    &target,
                    golden.as_deref(),
                    &compare::Options {
                        step,
                        rank,
                        graph: graph.as_deref(),
                        json,
                        csv: csv.as_deref(),
                    },
                )
            }
        }
        Command::Bench { what } => bench::run(what),
        Command::Agent {
            stdio,
            print_install,
        } => agent::run(stdio, print_install),
        Command::Completions { shell } => shell_help::completions(shell),
        Command::Man => shell_help::man(),
    }
}

/// `-- python3 script.py …`: the interpreter named before the script becomes `--python`.
fn split_interpreter(
    python: Option<PathBuf>,
    mut command: Vec<String>,
) -> (Option<PathBuf>, Vec<String>) {
    let names_python = command.first().is_some_and(|w| {
        std::path::Path::new(w)
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("python"))
    });
    if python.is_none() && names_python && command.len() > 1 {
        let p = command.remove(0);
        return (Some(PathBuf::from(p)), command);
    }
    (python, command)
}

/// `v` as every `--json` prints it: pretty, one trailing newline, and each path of a remote
/// tree written as the user typed it (`ssh://user@host:port/abs/path`), not as the mount fxray
/// reads it by (`/ssh:user@host:port/abs/path`): a script takes the address back to fxray or
/// to ssh.
pub(crate) fn json_text<T: serde::Serialize>(v: &T) -> Result<String> {
    let internal =
        |e: serde_json::Error| crate::error::Error::Internal(format!("writing JSON: {e}"));
    let mut v = serde_json::to_value(v).map_err(internal)?;
    typed_addresses(&mut v);
    let mut s = serde_json::to_string_pretty(&v).map_err(internal)?;
    s.push('\n');
    Ok(s)
}

fn typed_addresses(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            let p = std::path::Path::new(s.as_str());
            if crate::sources::remote::is_remote(p) {
                *s = crate::sources::remote::display(p);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(typed_addresses),
        Value::Object(o) => o.values_mut().for_each(typed_addresses),
        _ => {}
    }
}

/// Writes `text` to `path`, or to standard output when `path` is `None`.
pub(crate) fn emit(text: &str, path: Option<&std::path::Path>) -> Result<()> {
    use std::io::Write;
    match path {
        Some(p) => std::fs::write(p, text).map_err(|e| crate::error::Error::io(p, &e)),
        None => {
            let mut out = std::io::stdout().lock();
            // A closed pipe (`fxray summary | head`) is not an error worth a message.
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
            Ok(())
        }
    }
}
