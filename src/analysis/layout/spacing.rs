//! How far apart nodes stand: the gaps both coordinate passes (`coords`, `bk`) keep.

use super::dummies::Layered;

pub(crate) struct Spacing {
    pub node_gap: f32,
    pub edge_gap: f32,
    pub layer_gap: f32,
}

/// Minimum distance between the centres of two neighbours in a layer.
pub(crate) fn separation(graph: &Layered, spacing: &Spacing, a: u32, b: u32) -> f64 {
    let gap = if graph.is_dummy(a) || graph.is_dummy(b) {
        spacing.edge_gap
    } else {
        spacing.node_gap
    };
    f64::from((graph.size[a as usize].0 + graph.size[b as usize].0) / 2.0 + gap)
}
