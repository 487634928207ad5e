//! The modules torch's guards name for a model folder, for module inference's rule 12 (see
//! `analysis::modules`): the folder's trace log, found as `fxray compiles` finds it
//! (`trace_log::find_around`), the compile whose Dynamo graph is the folder's
//! (`analysis::compiles::join_models`, as the Compiles tab joins them), and the modules its guard
//! tree names. A tree without a trace log, or whose log holds no such compile, gives none, and
//! inference goes on without them.

use crate::analysis::compiles::join_models;
use crate::model::compile::{GuardedModule, ModelGraph};
use crate::sources::{read, trace_log};
use std::path::Path;

/// The guarded modules of the compile that wrote the Dynamo graph `dynamo`
/// (`model__N/dynamo_out_graph.txt`); `None` when no trace log beside it says.
pub fn of_model(dynamo: &Path) -> Option<Vec<GuardedModule>> {
    let folder = dynamo.parent()?;
    let logs = trace_log::find_around(folder);
    if logs.is_empty() {
        return None;
    }
    let graph = ModelGraph {
        name: String::new(),
        number: 0,
        run: String::new(),
        text: read::read_text(dynamo).ok()?.text,
        aot: false,
    };
    logs.iter().find_map(|log| {
        let trace = trace_log::load_for_modules(log).ok()?;
        let link = join_models(&trace, std::slice::from_ref(&graph))
            .into_iter()
            .next()?;
        let modules = &trace.compiles.get(link.compile)?.modules;
        (!modules.is_empty()).then(|| modules.clone())
    })
}
