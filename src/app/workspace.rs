//! What is open: a folder's index and what is known so far of its graph files, and the
//! messages of the jobs that fill them (the open, the facts).

use super::App;
use super::jobs::Apply;
use crate::analysis::graph_facts::GraphFacts;
use crate::model::index::DebugIndex;
use std::collections::HashMap;
use std::path::PathBuf;

/// An opened folder: its index and what is known so far of its graph files.
pub struct Workspace {
    pub index: DebugIndex,
    pub facts: HashMap<PathBuf, GraphFacts>,
    /// All graph files have been parsed once.
    pub facts_done: bool,
    /// The facts job has been started: once the phase on screen is complete, so that on a
    /// large tree it does not compete with what the user is waiting for.
    pub facts_started: bool,
    /// Bumped whenever `facts` gains, loses or replaces an entry: caches built from the facts
    /// key on it (a re-parsed file leaves the count as it was).
    pub facts_rev: u64,
}

impl Workspace {
    /// A graph file's facts, from whichever job parsed it.
    pub fn add_facts(&mut self, path: PathBuf, facts: GraphFacts) {
        self.facts.insert(path, facts);
        self.facts_rev += 1;
    }
}

/// Results of opening a path, keyed by the `generation` of the open they answer.
pub enum WorkspaceMsg {
    /// The index of an opened path.
    Indexed {
        generation: u64,
        result: crate::error::Result<DebugIndex>,
        /// The files the index was built from, for the watcher to start from.
        set: Option<Box<crate::sources::discover::FileSet>>,
    },
    /// One graph file parsed for its facts (node counts, problems).
    Facts {
        generation: u64,
        path: PathBuf,
        facts: GraphFacts,
    },
    /// Every graph file of an index has been parsed.
    FactsDone { generation: u64 },
}

impl Apply<App> for WorkspaceMsg {
    fn is_current(&self, app: &App) -> bool {
        let (WorkspaceMsg::Indexed { generation, .. }
        | WorkspaceMsg::Facts { generation, .. }
        | WorkspaceMsg::FactsDone { generation }) = self;
        *generation == app.generation
    }

    fn apply(self, app: &mut App) {
        match self {
            WorkspaceMsg::Indexed { result, set, .. } => {
                let ok = result.is_ok();
                app.indexed(result);
                if let (true, Some(set)) = (ok, set) {
                    app.start_watch(*set);
                }
            }
            WorkspaceMsg::Facts { path, facts, .. } => {
                if let Some(ws) = &mut app.workspace {
                    ws.add_facts(path, facts);
                }
            }
            WorkspaceMsg::FactsDone { .. } => {
                if let Some(ws) = &mut app.workspace {
                    ws.facts_done = true;
                }
            }
        }
    }
}
