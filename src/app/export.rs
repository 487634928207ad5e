//! Exporting the pass on screen, drawn with its phase's layout, as SVG or PNG.

use super::App;
use std::path::PathBuf;

impl App {
    /// Writes the pass on screen, drawn with the phase's layout, as SVG or PNG to `path`
    /// (in the background; PNG rasterising takes a second on large graphs).
    pub fn export_current(&mut self, path: PathBuf, png: bool, dark: bool) {
        let Some(ph) = &self.phase else { return };
        let (Some(file), Some(layout)) = (ph.current_file().cloned(), ph.layout.clone()) else {
            self.error = Some("nothing to export yet: the graph is still loading".into());
            return;
        };
        let title = ph
            .passes
            .get(ph.current)
            .map(|p| {
                p.path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            })
            .unwrap_or_default();
        self.jobs.spawn(move |out| {
            let options = crate::analysis::export_svg::SvgOptions { dark, title };
            let svg = crate::analysis::export_svg::to_svg(&file, &layout, &options);
            let bytes = if png {
                crate::analysis::export_svg::to_png(&svg, 1.0).map_err(|e| e.to_string())
            } else {
                Ok(svg.into_bytes())
            };
            let result = bytes
                .and_then(|b| {
                    std::fs::write(&path, b)
                        .map_err(|e| crate::error::Error::io(&path, &e).to_string())
                })
                .map(|()| path);
            out.send(ExportMsg { result });
        });
    }
}

/// An export finished: what was written, or why not.
pub struct ExportMsg {
    result: Result<PathBuf, String>,
}

impl super::jobs::Apply<App> for ExportMsg {
    /// A notice is never stale.
    fn is_current(&self, _: &App) -> bool {
        true
    }

    fn apply(self, app: &mut App) {
        match self.result {
            Ok(p) => app.notice = Some(format!("exported {}", p.display())),
            Err(e) => app.error = Some(format!("export failed: {e}")),
        }
    }
}
