//! A tree's index as every view needs it: its files found, the capture JSON joined to its
//! models by the `fx_graph_name` each `output_code.py` names, and every backward paired with
//! its own forward (`pipeline::backward_owner`).

use super::remote::{self, EachFile, PerFile};
use crate::error::Result;
use crate::model::index::DebugIndex;
use crate::sources::{discover, load};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Walks `root` and builds its index, with capture JSON joined to models by `graph_K` and
/// every backward paired with its forward.
pub fn index(root: &Path) -> Result<DebugIndex> {
    let mut index = discover::discover(root)?;
    read_contents(&mut index);
    Ok(index)
}

/// What the index says once a few files are read: captures joined, backwards paired.
pub fn read_contents(index: &mut DebugIndex) {
    join_captures(index);
    super::backward_owner::pair_index(index);
}

/// Joins captures to models by the `fx_graph_name` each `output_code.py` names. The files of a
/// tree on a server are read there, all in one request: only their names cross (a 415-layer
/// model's two files are 16 MB, read one after the other before its first graph).
pub fn join_captures(index: &mut DebugIndex) {
    let codes: Vec<PathBuf> = index
        .runs
        .iter()
        .flat_map(|r| &r.models)
        .flat_map(|m| &m.phases)
        .filter_map(|p| p.output_code.clone())
        .collect();
    // A server that cannot answer leaves its files to be read one by one.
    let far: HashMap<PathBuf, Option<String>> = codes
        .iter()
        .zip(remote::each_there::<EachFile<GraphNames>, _>(&codes))
        .filter_map(|(p, a)| Some((p.clone(), a?.ok()?)))
        .collect();
    discover::join_captures(index, |p| match far.get(p) {
        Some(name) => name.clone(),
        None => load::graph_name(p),
    });
}

/// The `fx_graph_name` of each `output_code.py`, in order: `None` when it names none or cannot
/// be read.
pub struct GraphNames;

impl PerFile for GraphNames {
    const NAME: &'static str = "graph_names";
    type Out = Option<String>;

    fn read(path: &Path) -> Option<String> {
        load::graph_name(path)
    }
}
