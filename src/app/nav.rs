//! Requests between views, in one queue. A command or a view asks (show a tab, bring the
//! selected node on screen, fold a module, open a line of `output_code.py`); the view the
//! request is for takes it when it is next drawn, so a request made while another tab is on
//! screen is not lost.

use std::collections::VecDeque;

/// A view of the centre of the window, as requests name it: its name, written once as a
/// constant (the app's own views below; a feature's view beside the feature). `ui::tabs`
/// registers one tab per id, and a request for an id no tab has is a bug it reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TabId(&'static str);

impl TabId {
    pub const fn new(name: &'static str) -> Self {
        TabId(name)
    }

    pub fn name(self) -> &'static str {
        self.0
    }

    pub const GRAPH: TabId = TabId("graph");
    pub const TIMELINE: TabId = TabId("timeline");
    pub const AUTOTUNE: TabId = TabId("autotune");
    pub const COMPILES: TabId = TabId("compiles");
    pub const RANKS: TabId = TabId("ranks");
    pub const RUN: TabId = TabId("run");
    pub const ACCURACY: TabId = TabId("accuracy");
    pub const PROBLEMS: TabId = TabId("problems");

    /// The views the app itself navigates to (a test checks each is registered).
    pub const ALL: [TabId; 8] = [
        TabId::GRAPH,
        TabId::TIMELINE,
        TabId::AUTOTUNE,
        TabId::COMPILES,
        TabId::RANKS,
        TabId::RUN,
        TabId::ACCURACY,
        TabId::PROBLEMS,
    ];
}

/// One request to a view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Nav {
    /// Bring a tab to the centre.
    ShowTab(TabId),
    /// Bring the selected node on screen, opening the folded boxes around it (graph view).
    RevealSelected,
    /// Fold the module at this path (the inspector's breadcrumb; graph view).
    Fold(String),
    /// The graph on screen was replaced by the same pass of another rank: keep the viewport and
    /// the open boxes instead of fitting the new graph (graph view).
    KeepView,
    /// Show this line of the phase's `output_code.py` (code viewer).
    CodeLine(usize),
    /// Show the pass on screen beside the graph it is compared with (graph view).
    SideBySide,
    /// Show graph file `graph` in the graph view (its phase opened when another one is) and,
    /// with `node`, select that node and bring it on screen: what a tab asks that knows a graph and a node
    /// but not the app (followed by the app, [`App::follow_go`](super::App::follow_go)).
    Go {
        graph: std::path::PathBuf,
        node: Option<String>,
    },
    /// Select `node` of graph file `graph` (its phase opened when another one is), leaving the
    /// view in front as it is: what a view linked to the graph asks as its own selection moves
    /// (a timeline task → its FX node). Followed by the app, as `Go` is.
    Select {
        graph: std::path::PathBuf,
        node: String,
    },
    /// Show graph file `graph` and select the node named `node` in some pass of its phase, as
    /// `graph` names it: traced through the passes' diffs once they are at hand (a later pass
    /// may have renamed it), else `node` itself. What a finding that names a node across
    /// passes asks (the stage compare's). Followed by the app, as `Go` is.
    GoTraced {
        graph: std::path::PathBuf,
        node: String,
    },
    /// Show graph file `graph` side by side with graph file `with`, compared once `graph` is
    /// loaded: what a view asks that pairs two graphs (a rank matrix cell with rank 0's).
    /// Followed by the app, as `Go` is.
    Compare {
        graph: std::path::PathBuf,
        with: std::path::PathBuf,
    },
    /// Open the tree at this path (a folder a run wrote), in place of the one open. Followed by
    /// the app, as `Go` is.
    Open(std::path::PathBuf),
    /// Ask the user for a golden run to compare the open one with (`file`: msprobe's compare
    /// CSV or an archive, else a folder): the window's file dialog.
    PickGolden { file: bool },
    /// Show the compile time of the trace log `story` (all its compiles, or only `compile`)
    /// as a flame chart in the timeline view (followed by the app, which holds both).
    Flame {
        story: std::path::PathBuf,
        compile: Option<String>,
    },
}

impl Nav {
    /// Requests about the open phase's graph: they lose their meaning when another phase opens.
    fn is_about_phase(&self) -> bool {
        matches!(
            self,
            Nav::RevealSelected | Nav::Fold(_) | Nav::KeepView | Nav::CodeLine(_)
        )
    }
}

#[derive(Debug, Default)]
pub struct NavQueue(VecDeque<Nav>);

impl NavQueue {
    pub fn push(&mut self, request: Nav) {
        if !self.0.contains(&request) {
            self.0.push_back(request);
        }
    }

    /// Takes the oldest request `pick` accepts, turned into what the taker needs.
    pub fn take<T>(&mut self, pick: impl Fn(&Nav) -> Option<T>) -> Option<T> {
        let i = self.0.iter().position(|r| pick(r).is_some())?;
        self.0.remove(i).and_then(|r| pick(&r))
    }

    /// Forgets the requests about the phase that was open.
    pub(super) fn phase_changed(&mut self) {
        self.0.retain(|r| !r.is_about_phase());
    }

    /// Whether a request `pick` accepts is waiting.
    pub fn has(&self, pick: impl Fn(&Nav) -> bool) -> bool {
        self.0.iter().any(pick)
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_waits_for_its_view_and_others_stay_queued() {
        let mut q = NavQueue::default();
        q.push(Nav::CodeLine(7));
        q.push(Nav::ShowTab(TabId::TIMELINE));
        q.push(Nav::ShowTab(TabId::TIMELINE));
        let tab = q.take(|r| match r {
            Nav::ShowTab(t) => Some(*t),
            _ => None,
        });
        assert_eq!(tab, Some(TabId::TIMELINE));
        assert_eq!(q.0.len(), 1, "a repeated request is queued once");
        q.phase_changed();
        assert!(q.is_empty(), "a code line of the old phase is dropped");
    }
}
