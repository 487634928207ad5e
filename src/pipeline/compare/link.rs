//! `--graph`: msprobe calls linked to the FX nodes of a graph (`analysis::msprobe_link`), so a
//! pair of an msprobe dump names its node as an npy dump's pair does.

use super::CompareError;
use super::locate::NpySel;
use super::sides::Side;
use crate::analysis::msprobe_link;
use crate::model::fx::FxFile;
use crate::model::tensor::MsprobeStep;
use rayon::prelude::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub struct Graph {
    file: FxFile,
    modules: Vec<String>,
    backward: bool,
}

impl Graph {
    pub fn read(path: &Path) -> Result<Graph, CompareError> {
        let bad = |why: String| CompareError::NotADump {
            side: "graph".into(),
            path: path.into(),
            why,
        };
        let file = crate::sources::load::graph(path).map_err(|e| bad(e.to_string()))?;
        let Some(g) = file.graphs.first() else {
            return Err(bad("no FX graph in this file".into()));
        };
        let gm = crate::pipeline::modules::for_graph_file(path, &file);
        let modules = (0..g.nodes.len()).map(|i| gm.path(i).to_string()).collect();
        Ok(Graph {
            modules,
            backward: path.components().any(|c| c.as_os_str() == "backward"),
            file,
        })
    }

    /// Sets the node of every tensor of `side` whose call links to one; says how many did.
    pub fn name(&self, side: &mut Side, step: &MsprobeStep, who: &str) -> String {
        let Some(g) = self.file.graphs.first() else {
            return String::new();
        };
        let m: Vec<&str> = self.modules.iter().map(String::as_str).collect();
        let links = msprobe_link::link(g, &m, step, self.backward);
        let node: HashMap<&str, &str> = links
            .links
            .iter()
            .filter_map(|l| Some((&*l.key, l.node.as_deref()?)))
            .collect();
        // An output's node is the one holding its value (an op's reshape, a module's exit).
        let holder: HashMap<(&str, &str), &str> = links
            .links
            .iter()
            .flat_map(|l| {
                l.outputs
                    .iter()
                    .map(move |(slot, n)| ((&*l.key, slot.as_str()), n.as_str()))
            })
            .collect();
        for t in &mut side.tensors {
            let own = holder.get(&(t.call.as_str(), t.slot.as_str()));
            t.node = own
                .or_else(|| node.get(t.call.as_str()))
                .map(|n| n.to_string());
        }
        format!(
            "{who}: {} of {} calls linked to a node of the graph",
            links.linked(),
            links.considered
        )
    }
}

/// Of `graphs`, the one whose node names cover most of the npy step's nodes (the last on a
/// tie: passes come in order, the last is what ran), and a note saying which.
pub fn best_for(graphs: &[PathBuf], sel: &NpySel) -> (Option<PathBuf>, Option<String>) {
    let names = &sel.step.nodes;
    let cover = |p: &PathBuf| -> Option<usize> {
        let file = crate::sources::load::graph(p).ok()?;
        let g = file.graphs.first()?;
        Some(
            g.nodes
                .iter()
                .filter(|n| names.contains_key(n.name.as_str()))
                .count(),
        )
    };
    let scored: Vec<(usize, &PathBuf)> = graphs
        .par_iter()
        .filter_map(|p| Some((cover(p)?, p)))
        .collect();
    // `max_by_key` keeps the last of equal maxima: the latest pass.
    let Some(&(n, best)) = scored.iter().max_by_key(|(n, _)| *n) else {
        return (None, None);
    };
    let name = best.file_name().map(|f| f.to_string_lossy().into_owned());
    let note = format!(
        "graph {}: the pass whose node names cover the npy dump best ({n} of {} nodes)",
        name.unwrap_or_default(),
        names.len()
    );
    (Some(best.clone()), Some(note))
}
