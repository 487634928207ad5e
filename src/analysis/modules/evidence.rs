//! What one graph's inference starts from, shared by the rules that read it (anchors, callers,
//! the inference itself) without their importing each other.

use super::frames::LineFrames;
use super::paths::ModId;
use std::collections::HashMap;

/// What is known before looking at the graph's body.
#[derive(Default)]
pub struct Evidence<'a> {
    /// Placeholders that are parameters or buffers, by node index.
    pub params: HashMap<usize, ModId>,
    /// Nodes of another graph by name (the forward, for a backward graph's saved activations):
    /// module and whether it is computed from weights only.
    pub by_name: Option<&'a HashMap<String, (ModId, bool)>>,
    /// Frames the same source lines ran in, elsewhere (the forward, for a backward graph).
    pub frames: Option<&'a LineFrames>,
    /// The attributes each module owns (`weight`, `bias`).
    pub attrs: Option<&'a HashMap<ModId, Vec<String>>>,
    /// For a backward graph: the module owning forward input `k` when it is a parameter (its
    /// gradient is the backward's output `k`).
    pub grad_of: &'a [Option<ModId>],
}

pub fn push_unique(v: &mut Vec<ModId>, m: ModId) {
    if !v.contains(&m) {
        v.push(m);
    }
}
