//! Nodes outside every module, grouped so the first view names them: a training step's loss
//! and a backward's tangents are otherwise rows of small unlabelled nodes around the model's
//! box, and they make the top level too tall for any title to read.
//!
//! The graph's inputs (placeholders, attributes) become one box `(inputs)`; the code the top
//! level calls outside its modules (a loss function) becomes one box named after the function
//! most of its nodes' source lines are in (`ForCausalLMLoss()`). What stays loose: the top
//! module's own `forward` (the model's main line, which a box would hide), nodes whose line is
//! in torch's own files or unknown (nothing says what they were for), and the output.
//! A group's name holds parentheses, which no Python attribute name does, so it never collides
//! with a module; [`is_group`] tells them apart.

use crate::analysis::layout::UnionGraph;
use crate::analysis::phase_layout::pass_entries;
use crate::model::fx::{FxFile, OpKind};
use std::collections::HashMap;

/// The box of the top level's inputs.
pub const INPUTS: &str = "(inputs)";

/// A box of loose nodes rather than a module.
pub fn is_group(name: &str) -> bool {
    name.contains('(')
}

/// Rewrites the empty module path (the top level) of `paths`, one per union node, into the
/// groups above. Nothing changes when no node has a module (a graph with no module reads as
/// it is) or when a group would hold a single node.
pub fn group_loose(union: &UnionGraph, files: &[&FxFile], paths: &mut [String]) {
    if paths.iter().all(String::is_empty) {
        return;
    }
    // Op and source function of each top-level union node, from the first pass that has it.
    let mut seen: Vec<Option<(OpKind, Option<&str>)>> = vec![None; paths.len()];
    for file in files {
        let top = file.graphs.first().map_or(0, |g| g.nodes.len());
        for ((name, _), node) in pass_entries(file)
            .iter()
            .zip(file.graphs.iter().flat_map(|g| &g.nodes))
            .take(top)
        {
            let Some(id) = union.id(name).map(|i| i as usize) else {
                continue;
            };
            if paths.get(id).is_some_and(String::is_empty) && seen[id].is_none() {
                let function = node
                    .source
                    .as_ref()
                    .filter(|s| !is_torch_file(&s.file))
                    .map(|s| s.function.as_str());
                seen[id] = Some((node.op, function));
            }
        }
    }
    let groups: Vec<Option<Group>> = seen.iter().map(|s| group_of(*s)).collect();
    let count = |want: fn(&Group) -> bool| groups.iter().flatten().filter(|g| want(g)).count();
    let inputs = (count(|g| *g == Group::Inputs) > 1).then_some(INPUTS.to_string());
    let called = (count(|g| matches!(g, Group::Called(_))) > 1).then(|| called_name(&groups));
    for (path, g) in paths.iter_mut().zip(&groups) {
        let name = match g {
            Some(Group::Inputs) => &inputs,
            Some(Group::Called(_)) => &called,
            None => &None,
        };
        if let Some(name) = name {
            path.clone_from(name);
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Group<'a> {
    Inputs,
    /// Code of this function, called by the top level.
    Called(&'a str),
}

/// The group of a top-level node of op `op` whose source line is in `function`.
fn group_of(seen: Option<(OpKind, Option<&str>)>) -> Option<Group<'_>> {
    match seen? {
        (OpKind::Placeholder | OpKind::GetAttr, _) => Some(Group::Inputs),
        (OpKind::Output, _) => None,
        (_, Some(f)) if f != "forward" && !f.is_empty() && !f.contains(['.', '(']) => {
            Some(Group::Called(f))
        }
        _ => None,
    }
}

/// `f()` for the function most called nodes are in (the first to run on a tie).
fn called_name(groups: &[Option<Group>]) -> String {
    let mut tally: HashMap<&str, (usize, usize)> = HashMap::new();
    for (i, g) in groups.iter().enumerate() {
        if let Some(Group::Called(f)) = *g {
            tally.entry(f).or_insert((0, i)).0 += 1;
        }
    }
    let best = tally
        .into_iter()
        .max_by_key(|&(_, (n, first))| (n, std::cmp::Reverse(first)));
    best.map_or_else(String::new, |(f, _)| format!("{f}()"))
}

/// A file of torch's own library (`…/torch/nn/functional.py`): its functions are how the code
/// ran, not what it was for.
fn is_torch_file(file: &str) -> bool {
    file.contains("/torch/") || file.contains("\\torch\\")
}
