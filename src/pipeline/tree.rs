//! A tree's index as every view needs it: its files found, and the capture JSON joined to its
//! models by the `fx_graph_name` each `output_code.py` names.

use super::remote::{self, Op};
use crate::error::Result;
use crate::model::index::DebugIndex;
use crate::sources::{discover, load};
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Walks `root` and builds its index, with capture JSON joined to models by `graph_K`.
pub fn index(root: &Path) -> Result<DebugIndex> {
    let mut index = discover::discover(root)?;
    join_captures(&mut index);
    Ok(index)
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
        .zip(remote::each_there::<GraphNames, _>(&codes))
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

impl Op for GraphNames {
    const NAME: &'static str = "graph_names";
    type Args = Vec<PathBuf>;
    type Item = Option<String>;

    fn paths(files: &mut Vec<PathBuf>) -> Vec<&mut PathBuf> {
        files.iter_mut().collect()
    }

    fn run(files: Vec<PathBuf>, _stop: &AtomicBool, send: &(dyn Fn(Option<String>) + Sync)) {
        let names: Vec<Option<String>> = files.par_iter().map(|p| load::graph_name(p)).collect();
        names.into_iter().for_each(send);
    }
}
