//! The Problems tab: everything fxray could not read in the open tree, in one list, worst
//! first, as a compiler's problems pane: graph files that failed or parsed with gaps, what the
//! index did not understand, dumps and trace logs read only in part, a watcher that stopped.
//! A click on a graph file's row shows that graph.

use crate::app::compiles::CompilesState;
use crate::app::{App, Nav};
use crate::ui::ViewState;
use crate::ui::tab::Tab;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Severity {
    /// Nothing could be read.
    Error,
    /// Read in part.
    Warning,
}

#[derive(Debug, Clone)]
struct Problem {
    severity: Severity,
    /// What kind of input: `graph`, `index`, `data dump`, `msprobe`, `trace log`, `watch`.
    what: &'static str,
    /// The graph file to show on a click.
    graph: Option<PathBuf>,
    text: String,
}

/// What the list was last built from: rebuilt only when one of these changes, never per frame
/// (a 20k-file tree has as many facts).
type Built = (u64, usize, usize, usize, bool);

#[derive(Default)]
pub struct ProblemsTab {
    list: Vec<Problem>,
    built: Option<Built>,
}

impl ProblemsTab {
    fn refresh(&mut self, app: &App) {
        let Some(ws) = &app.workspace else {
            self.list.clear();
            self.built = None;
            return;
        };
        let key = (
            ws.facts_rev,
            ws.index.warnings.len(),
            app.tensors.errors.len(),
            app.peek::<CompilesState>().map_or(0, |c| c.stories.len()),
            app.live.failed.is_some(),
        );
        if self.built == Some(key) {
            return;
        }
        self.built = Some(key);
        self.list = collect(app);
    }
}

fn collect(app: &App) -> Vec<Problem> {
    let Some(ws) = &app.workspace else {
        return Vec::new();
    };
    let mut list = Vec::new();
    let mut graphs: Vec<_> = ws.facts.iter().collect();
    graphs.sort_by(|a, b| a.0.cmp(b.0));
    for (path, f) in graphs {
        let severity = match f.status() {
            "error" => Severity::Error,
            "warning" => Severity::Warning,
            _ => continue,
        };
        let mut text = f.problems.first().cloned().unwrap_or_default();
        if f.unparsed > 0 {
            if !text.is_empty() {
                text.push_str("; ");
            }
            text.push_str(&format!("{} lines not understood", f.unparsed));
        }
        list.push(Problem {
            severity,
            what: "graph",
            graph: Some(path.clone()),
            text,
        });
    }
    let warning = |what, text: &String| Problem {
        severity: Severity::Warning,
        what,
        graph: None,
        text: text.clone(),
    };
    list.extend(ws.index.warnings.iter().map(|w| warning("index", w)));
    list.extend(
        app.tensors
            .catalog
            .warnings
            .iter()
            .map(|w| warning("data dump", w)),
    );
    list.extend(app.tensors.errors.iter().map(|w| warning("msprobe", w)));
    for s in app
        .peek::<CompilesState>()
        .into_iter()
        .flat_map(|c| &c.stories)
    {
        let name = s.path.display();
        if let Some(why) = &s.trace.stopped {
            list.push(warning("trace log", &format!("{name}: {why}")));
        }
        for (line, why) in &s.trace.problems {
            list.push(warning("trace log", &format!("{name}:{line}: {why}")));
        }
    }
    if let Some(why) = &app.live.failed {
        list.push(warning("watch", why));
    }
    list.sort_by_key(|p| p.severity);
    list
}

impl Tab for ProblemsTab {
    fn id(&self) -> crate::app::TabId {
        crate::app::TabId::PROBLEMS
    }

    fn title(&self) -> &'static str {
        "Problems"
    }

    fn ui(&mut self, app: &mut App, _: &mut ViewState, ui: &mut egui::Ui) {
        self.refresh(app);
        if app.workspace.is_none() {
            ui.weak("Nothing open.");
            return;
        }
        let errors = self
            .list
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count();
        ui.label(format!(
            "{errors} errors, {} warnings",
            self.list.len() - errors
        ));
        if self.list.is_empty() {
            ui.weak("Everything in this tree was read whole.");
            return;
        }
        let mut open = None;
        let row_h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
        egui::ScrollArea::vertical().auto_shrink(false).show_rows(
            ui,
            row_h,
            self.list.len(),
            |ui, rows| {
                for p in &self.list[rows] {
                    ui.horizontal(|ui| {
                        let (icon, colour) = match p.severity {
                            Severity::Error => ("✖", ui.visuals().error_fg_color),
                            Severity::Warning => ("⚠", ui.visuals().warn_fg_color),
                        };
                        ui.colored_label(colour, icon);
                        ui.weak(p.what);
                        // The file's name is the link (short, so it stays in the tab); the
                        // whole path on hover.
                        if let Some(g) = &p.graph {
                            let name = g.file_name().unwrap_or_default().to_string_lossy();
                            if ui
                                .link(name)
                                .on_hover_text(g.display().to_string())
                                .clicked()
                            {
                                open = Some(g.clone());
                            }
                        }
                        ui.label(&p.text);
                    });
                }
            },
        );
        if let Some(g) = open {
            app.select_graph(&g);
            app.nav.push(Nav::ShowTab(crate::app::TabId::GRAPH));
        }
    }
}
