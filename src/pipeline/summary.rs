//! `fxray summary`'s content, start to finish: every graph file of an index parsed for its
//! facts, every pass diffed against the one before it in its phase (on a server, by its agent),
//! and both put into one [`Summary`].

use crate::analysis::diff::DiffCounts;
use crate::analysis::graph_facts::GraphFacts;
use crate::analysis::summary::Summary;
use crate::model::index::DebugIndex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The summary of `index`.
pub fn summarize(index: &DebugIndex) -> Summary {
    let (facts, diffs) = facts_and_diffs(index);
    Summary::build(index, &facts, &diffs)
}

/// Facts of every graph file of the index, and for every pass but the first of its phase, its
/// diff counts against the previous pass (absent when either file could not be read).
pub fn facts_and_diffs(
    index: &DebugIndex,
) -> (HashMap<PathBuf, GraphFacts>, HashMap<PathBuf, DiffCounts>) {
    let phases: Vec<Vec<PathBuf>> = index
        .runs
        .iter()
        .flat_map(|r| &r.models)
        .flat_map(|m| &m.phases)
        .map(|ph| ph.passes.iter().map(|p| p.path.clone()).collect())
        .collect();
    let (mut facts, diffs) = super::facts::of_phases(&phases);
    let rest: Vec<PathBuf> = index
        .graph_files()
        .filter(|p| !facts.contains_key(*p))
        .map(Path::to_path_buf)
        .collect();
    facts.extend(super::facts::of_all(&rest));
    (facts, diffs)
}
