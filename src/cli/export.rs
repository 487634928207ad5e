//! `fxray export GRAPH --format json|dot|svg|png [-o FILE]`.

use super::{ExportFormat, emit};
use crate::analysis::export;
use crate::analysis::export_svg::{self, SvgOptions};
use crate::analysis::phase_layout::{self, PhaseLayout};
use crate::error::{Error, Result};
use crate::model::fx::FxFile;
use crate::sources::{load, names};
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// How the drawn formats (svg, png) are drawn; the defaults are what `fxray export` does.
#[derive(Debug, Clone)]
pub struct DrawOptions {
    /// Lay the pass out with the union of its phase's passes, so nodes sit where the app puts
    /// them; otherwise the file is laid out on its own.
    pub union: bool,
    pub dark: bool,
    /// PNG pixels per SVG unit (reduced to fit the size caps of `export_svg`).
    pub scale: f32,
}

impl Default for DrawOptions {
    fn default() -> Self {
        DrawOptions {
            union: false,
            dark: false,
            scale: 1.0,
        }
    }
}

pub fn run_with(
    graph: &Path,
    format: ExportFormat,
    output: Option<&Path>,
    draw: &DrawOptions,
) -> Result<()> {
    if format == ExportFormat::Png {
        // Checked before the (possibly long) layout so the mistake costs nothing.
        let Some(path) = output else {
            return Err(Error::user(
                "png is binary: give the output file with -o FILE.png",
            ));
        };
        let file = load_graph(graph)?;
        return write_png(&draw_svg(graph, &file, draw)?, draw.scale, path);
    }
    let file = load_graph(graph)?;
    let text = match format {
        ExportFormat::Json => {
            let modules = crate::pipeline::modules::for_graph_file(graph, &file);
            return write_json(graph, &file, &modules, output);
        }
        ExportFormat::Dot => export::to_dot(&file),
        ExportFormat::Svg | ExportFormat::Png => draw_svg(graph, &file, draw)?,
    };
    emit(&text, output)
}

/// The JSON export streamed to `output` (or standard output) as it is made: a 100k-node graph's
/// JSON is never held whole.
fn write_json(
    graph: &Path,
    file: &FxFile,
    modules: &crate::analysis::modules::GraphModules,
    output: Option<&Path>,
) -> Result<()> {
    use std::io::Write;
    let label = crate::sources::remote::display(graph);
    match output {
        Some(p) => {
            let f = std::fs::File::create(p).map_err(|e| Error::io(p, &e))?;
            let mut w = std::io::BufWriter::new(f);
            export::write_json_with_modules(&mut w, &label, file, modules)
                .map_err(std::io::Error::from)
                .and_then(|()| w.write_all(b"\n"))
                .and_then(|()| w.flush())
                .map_err(|e| Error::io(p, &e))
        }
        None => {
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            // A closed pipe (`fxray export … | head`) is not an error worth a message.
            let _ = export::write_json_with_modules(&mut w, &label, file, modules)
                .map_err(std::io::Error::from)
                .and_then(|()| w.write_all(b"\n"))
                .and_then(|()| w.flush());
            Ok(())
        }
    }
}

/// Parses `graph`; a folder or a file without any graph is the user's mistake.
fn load_graph(graph: &Path) -> Result<FxFile> {
    if crate::sources::vfs::is_dir(graph) {
        return Err(Error::user(format!(
            "{}: is a folder; export takes one graph file (try `fxray summary {}` to list them)",
            graph.display(),
            graph.display()
        )));
    }
    let file = load::graph(graph)?;
    if file.graphs.is_empty() {
        let why = file
            .problems
            .first()
            .map_or("no `class … forward` found", |s| s.as_str());
        return Err(Error::user(format!(
            "{}: no FX graph found ({why})",
            graph.display()
        )));
    }
    Ok(file)
}

/// The pass laid out (alone or with its phase) and drawn.
fn draw_svg(graph: &Path, file: &FxFile, draw: &DrawOptions) -> Result<String> {
    let layout = lay_out(graph, file, draw.union)?;
    let title = graph.file_name().map_or_else(
        || graph.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let options = SvgOptions {
        dark: draw.dark,
        title,
    };
    Ok(export_svg::to_svg(file, &layout, &options))
}

fn write_png(svg: &str, scale: f32, path: &Path) -> Result<()> {
    let image = export_svg::render_png(svg, scale).map_err(|e| Error::Internal(e.to_string()))?;
    if image.scale < scale * 0.99 {
        eprintln!(
            "fxray: note: the picture is too big at scale {scale}; drawn at {:.3} ({}x{} px, at most {} px a side and {} Mpx)",
            image.scale,
            image.width,
            image.height,
            export_svg::MAX_PNG_SIDE,
            export_svg::MAX_PNG_PIXELS >> 20
        );
    }
    std::fs::write(path, &image.bytes).map_err(|e| Error::io(path, &e))
}

fn lay_out(graph: &Path, file: &FxFile, union: bool) -> Result<PhaseLayout> {
    let others = if union {
        phase_siblings(graph)?
    } else {
        Vec::new()
    };
    let mut passes: Vec<&FxFile> = others.iter().map(|o| o.as_ref().unwrap_or(file)).collect();
    if passes.is_empty() {
        passes.push(file);
    }
    // Nothing cancels a CLI export but Ctrl+C.
    let never = AtomicBool::new(false);
    phase_layout::build(&passes, &never).map_err(|e| Error::Internal(e.to_string()))
}

/// The passes of the phase folder holding `graph`, parsed, in execution order; `None` stands
/// for `graph` itself (already parsed). Unreadable passes are left out, as the app does.
fn phase_siblings(graph: &Path) -> Result<Vec<Option<FxFile>>> {
    let dir = graph.parent().filter(|d| {
        d.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(names::phase_dir)
    });
    let not_in_phase = || {
        Error::user(format!(
            "{}: --union needs a pass file inside a phase folder (forward/, backward/, …)",
            graph.display()
        ))
    };
    let dir = dir.ok_or_else(not_in_phase)?;
    let index = crate::pipeline::tree::index(dir)?;
    let me = canonical(graph);
    let phase = index
        .runs
        .iter()
        .flat_map(|r| &r.models)
        .flat_map(|m| &m.phases)
        .find(|p| p.passes.iter().any(|f| canonical(&f.path) == me))
        .ok_or_else(not_in_phase)?;
    let paths: Vec<PathBuf> = phase.passes.iter().map(|p| p.path.clone()).collect();
    Ok(paths
        .par_iter()
        .filter_map(|p| {
            if canonical(p) == me {
                return Some(None);
            }
            load::graph(p)
                .ok()
                .filter(|f| !f.graphs.is_empty())
                .map(Some)
        })
        .collect())
}

fn canonical(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}
