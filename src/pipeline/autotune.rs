//! The autotune report of a tree (issue 9): the evidence files gathered, joined per fused
//! kernel, and each kernel linked to its post-grad FX node.

use crate::analysis::autotune as join;
use crate::model::autotune::AutotuneReport;
use crate::model::index::DebugIndex;
use crate::sources::autotune as evidence;
use crate::sources::load;
use std::collections::HashMap;

/// Builds the report of an index (and of pasted log text): gathers the evidence, joins it per
/// kernel, and links each kernel to the post-grad FX nodes it fused. Shared with the CLI.
pub fn build_report(index: Option<&DebugIndex>, pasted: Option<&str>) -> AutotuneReport {
    let mut ev = index.map(evidence::gather).unwrap_or_default();
    if let Some(text) = pasted {
        ev.logs.push(evidence::parse_asc_log(text, "pasted text"));
    }
    let mut report = join::join(&ev);
    let mut graphs = HashMap::new();
    for k in &mut report.kernels {
        let Some(p) = k.post_grad.clone() else {
            continue;
        };
        let graph = graphs
            .entry(p.clone())
            .or_insert_with(|| load::graph(&p).ok());
        if let Some(g) = graph {
            join::link_fx(k, g);
        }
    }
    report
}
