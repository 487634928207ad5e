//! The command line: `fxray [PATH]` opens the app; subcommands run the same core headless.

pub mod autotune;
pub mod bench;
mod bench_ui;
pub mod diff;
pub mod export;
pub mod summary;

use crate::error::Result;
use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

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
    #[command(subcommand)]
    pub command: Option<Command>,
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
    /// AscendC autotune: every fused kernel's tiling candidates, their timings and the winner
    /// (from autofused_* folders, cache entries with optimize_tiling, and inductor_asc logs).
    Autotune {
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
        Command::Autotune { path, json } => autotune::run(&path, json),
        Command::Bench { what } => bench::run(what),
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
