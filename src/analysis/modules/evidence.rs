//! What one graph's inference starts from, shared by the rules that read it (anchors, callers,
//! the inference itself) without their importing each other.

use super::classes::Classes;
use super::frames::LineFrames;
use super::paths::ModId;
use rustc_hash::FxHashMap as HashMap;

/// What is known before looking at the graph's body.
#[derive(Default)]
pub struct Evidence<'a> {
    /// Placeholders that are parameters or buffers, by node index.
    pub params: HashMap<usize, ModId>,
    /// Nodes of another graph by name (the forward, for a backward graph's saved activations).
    pub by_name: Option<&'a HashMap<String, Saved>>,
    /// Frames the same source lines ran in, elsewhere (the forward, for a backward graph).
    pub frames: Option<&'a LineFrames>,
    /// The attributes each module owns (`weight`, `bias`).
    pub attrs: Option<&'a HashMap<ModId, Vec<String>>>,
    /// For a backward graph: the module owning forward input `k` when it is a parameter (its
    /// gradient is the backward's output `k`).
    pub grad_of: &'a [Option<ModId>],
    /// The modules torch's guards name, with their classes (rule 12).
    pub classes: Option<&'a Classes>,
}

/// What the forward says of a value a backward reads by name.
#[derive(Debug, Clone, Copy)]
pub struct Saved {
    pub module: ModId,
    /// Computed from the module's weights only (`t(w)`).
    pub weight: bool,
    /// The product of a module's weight matrix (`mm`/`addmm` of a Linear): a backward that
    /// recomputes the view back to the input's leading dims recomputes the Linear's own node.
    pub matmul: bool,
}

pub fn push_unique(v: &mut Vec<ModId>, m: ModId) {
    if !v.contains(&m) {
        v.push(m);
    }
}
