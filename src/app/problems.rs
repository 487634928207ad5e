//! Everything fxray could not read in the open tree, in one list, worst first: graph files that
//! failed or parsed with gaps, what the index did not understand, dumps and trace logs read
//! only in part, a watcher that stopped. Gathered here because the app is what holds every
//! feature that reads something; the Problems tab only shows the list.

use super::App;
use super::compiles::CompilesState;
use super::part::Feature;
use std::path::PathBuf;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Nothing could be read.
    Error,
    /// Read in part.
    Warning,
}

#[derive(Debug, Clone)]
pub struct Problem {
    pub severity: Severity,
    /// What kind of input: `graph`, `index`, `data dump`, `msprobe`, `trace log`, `watch`.
    pub what: &'static str,
    /// The graph file to show on a click.
    pub graph: Option<PathBuf>,
    pub text: String,
}

/// The list, kept while the Problems tab has been shown since the tree opened.
#[derive(Default)]
pub struct ProblemsState {
    /// `None` until first gathered.
    pub list: Option<Vec<Problem>>,
    built: Option<Built>,
}

impl Feature for ProblemsState {}

/// What the list was last gathered from: gathered again only when one of these changes, never
/// per frame (a 20k-file tree has as many facts).
type Built = (u64, usize, usize, usize, bool);

/// Gathers the list again when what it is made of changed (once a frame, and only once the tab
/// was shown: a tree nobody asks about is not gathered).
pub(super) fn want(app: &mut App) {
    let Some(state) = app.parts.peek::<ProblemsState>() else {
        return;
    };
    let key = app.workspace.as_ref().map(|ws| {
        (
            ws.facts_rev,
            ws.index.warnings.len(),
            app.tensors.errors.len(),
            app.peek::<CompilesState>().map_or(0, |c| c.stories.len()),
            app.live.failed.is_some(),
        )
    });
    if state.list.is_some() && state.built == key {
        return;
    }
    let list = collect(app);
    let state = app.parts.get::<ProblemsState>();
    state.list = Some(list);
    state.built = key;
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
