//! The module tree of a phase, built in the background once its passes and layout are ready.

use super::phase::ModuleContext;
use crate::analysis::fold::{self, FoldTree};
use crate::analysis::modules::{self, PhaseInput};
use crate::analysis::phase_layout::PhaseLayout;
use crate::model::fx::FxFile;
use crate::sources::load;

/// Infers every pass's modules (with the model's Dynamo graph and, for a backward, the
/// forward's first pass) and groups the layout's union nodes by them.
pub fn module_tree(layout: &PhaseLayout, passes: &[&FxFile], ctx: &ModuleContext) -> FoldTree {
    // Context that cannot be read only lowers the inference's evidence; the passes still speak.
    let read = |p: &Option<std::path::PathBuf>| {
        p.as_deref()
            .and_then(|p| load::graph(p).ok())
            .filter(|f| !f.graphs.is_empty())
    };
    let dynamo = read(&ctx.dynamo);
    let forward = read(&ctx.forward_first);
    let fw: Option<Vec<&FxFile>> = forward.as_ref().map(|f| vec![f]);
    let pm = modules::infer_phase(&PhaseInput {
        dynamo: dynamo.as_ref(),
        passes,
        forward: fw.as_deref(),
    });
    let paths = fold::union_modules(&layout.union, passes, &pm);
    FoldTree::new(&paths, layout.union.edges())
}
