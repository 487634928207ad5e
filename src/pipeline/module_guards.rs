//! The modules torch's guards name for a model folder, for module inference's rule 12 (see
//! `analysis::modules`): the folder's trace log, found as `fxray compiles` finds it
//! (`trace_log::find_around`), the compile whose Dynamo graph is the folder's
//! (`analysis::compiles::join_models`, as the Compiles tab joins them), and the modules its guard
//! tree names. A tree without a trace log, or whose log holds no such compile, gives none, and
//! inference goes on without them.

use crate::analysis::compiles::join_models;
use crate::model::compile::{GuardedModule, ModelGraph};
use crate::sources::{read, trace_log};
use std::path::{Path, PathBuf};

/// The guarded modules of the compile that wrote the Dynamo graph `dynamo`
/// (`model__N/dynamo_out_graph.txt`); `None` when no trace log beside it says.
pub fn of_model(dynamo: &Path) -> Option<Vec<GuardedModule>> {
    let folder = dynamo.parent()?;
    let logs = trace_log::find_around(folder);
    if logs.is_empty() {
        return None;
    }
    logs.iter().find_map(|log| {
        let key = Key::of(dynamo, log)?;
        if let Some(hit) = memo().lock().ok()?.as_ref().filter(|(k, _)| *k == key) {
            return hit.1.clone();
        }
        let found = in_log(log, dynamo);
        *memo().lock().ok()? = Some((key, found.clone()));
        found
    })
}

/// The modules of the compile in `log` whose Dynamo graph is the file `dynamo`.
fn in_log(log: &Path, dynamo: &Path) -> Option<Vec<GuardedModule>> {
    let graph = ModelGraph {
        name: String::new(),
        number: 0,
        run: String::new(),
        text: read::read_text(dynamo).ok()?.text,
        aot: false,
    };
    let trace = trace_log::load_for_modules(log).ok()?;
    let link = join_models(&trace, std::slice::from_ref(&graph))
        .into_iter()
        .next()?;
    let modules = &trace.compiles.get(link.compile)?.modules;
    (!modules.is_empty()).then(|| modules.clone())
}

/// A Dynamo graph and a trace log as they are now: the forward's and the backward's phase, and
/// every pass file opened alone, ask of the same log (84 MB at 415 layers, a tenth of a second
/// to read); a log still being written (longer now) is read again.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    dynamo: PathBuf,
    log: PathBuf,
    len: u64,
}

impl Key {
    fn of(dynamo: &Path, log: &Path) -> Option<Key> {
        let (_, len) = crate::sources::vfs::stat(log).ok()?;
        Some(Key {
            dynamo: dynamo.to_path_buf(),
            log: log.to_path_buf(),
            len,
        })
    }
}

type Memo = std::sync::Mutex<Option<(Key, Option<Vec<GuardedModule>>)>>;

/// The last answer, one: a window has one tree open.
fn memo() -> &'static Memo {
    static MEMO: std::sync::OnceLock<Memo> = std::sync::OnceLock::new();
    MEMO.get_or_init(Default::default)
}
