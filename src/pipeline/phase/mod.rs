//! A phase opened headless: its passes parsed (the one on screen first), what each pass changed
//! from the one before, their union laid out, and their nodes folded by module. The window runs
//! it in a job. A phase on a server is opened there by the agent, which streams the results
//! ([`remote`]): neither the graph texts nor the files module inference reads cross the link,
//! and the work is done beside the files.

pub(crate) mod remote;

use crate::analysis::diff::{self, GraphDiff};
use crate::analysis::fold::FoldTree;
use crate::analysis::layout::UnionGraph;
use crate::analysis::phase_layout::{self, PhaseLayout};
use crate::model::fx::FxFile;
use crate::pipeline::failure::Failure;
use crate::pipeline::modules::{self, ModuleContext};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// What to open.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct PhaseSpec {
    /// The passes, in execution order.
    pub passes: Vec<PathBuf>,
    /// The pass on screen: parsed first.
    pub current: usize,
    /// Lay the union out (false: the caller has a layout of these passes).
    pub layout: bool,
    /// The files module inference reads besides the passes; empty: found around the passes,
    /// where they are (on the server for a remote tree).
    pub context: ModuleContext,
}

/// One result, as soon as it is known: the pass on screen laid out and folded on its own, every
/// pass, then the union layout, the diffs, the fold.
pub enum PhaseNews {
    /// The pass on screen alone, laid out and folded by module, before the others are read: what
    /// the window draws first. The union layout and its fold replace it.
    Preview {
        pass: usize,
        layout: Arc<PhaseLayout>,
        tree: Arc<FoldTree>,
    },
    Pass {
        pass: usize,
        result: Result<Arc<FxFile>, Failure>,
    },
    /// What each pass changed from the one before (`diffs[k]`: pass k → k+1); sent only when
    /// every pass was read.
    Diffs(Vec<Arc<GraphDiff>>),
    Layout(Result<Arc<PhaseLayout>, Failure>),
    /// The module tree of the layout's union nodes; sent only when every pass was read.
    Fold {
        layout: Arc<PhaseLayout>,
        tree: Arc<FoldTree>,
    },
}

/// Opens the phase of `spec` (`existing`: a layout of its passes already at hand, used when
/// `spec.layout` is false), handing each result to `each`. Stops early when `cancel` is set.
pub fn open(
    spec: &PhaseSpec,
    existing: Option<Arc<PhaseLayout>>,
    cancel: &AtomicBool,
    each: &(dyn Fn(PhaseNews) + Sync),
) {
    if remote::open(spec, existing.clone(), cancel, each) {
        return;
    }
    steps(spec, existing, cancel, &|step| match step {
        Step::Preview {
            pass,
            layout,
            paths,
        } => {
            let tree = FoldTree::new(&paths, layout.union.edges());
            each(PhaseNews::Preview {
                pass,
                layout,
                tree: Arc::new(tree),
            });
        }
        Step::Pass(pass, result) => each(PhaseNews::Pass { pass, result }),
        Step::Diffs(d) => each(PhaseNews::Diffs(d)),
        Step::Layout(l) => each(PhaseNews::Layout(Ok(l))),
        Step::Modules {
            layout,
            union,
            paths,
        } => {
            if let Some(layout) = layout {
                let tree = FoldTree::new(&paths, union.edges());
                each(PhaseNews::Fold {
                    layout: layout.clone(),
                    tree: Arc::new(tree),
                });
            }
        }
    });
}

/// The work of [`open`] where the files are, in the form the agent sends it on.
enum Step<'a> {
    /// The pass on screen alone: its layout and the module of each of its nodes.
    Preview {
        pass: usize,
        layout: Arc<PhaseLayout>,
        paths: Vec<String>,
    },
    Pass(usize, Result<Arc<FxFile>, Failure>),
    Diffs(Vec<Arc<GraphDiff>>),
    Layout(Arc<PhaseLayout>),
    /// The module of each node of `union` (the layout's, when there is one).
    Modules {
        layout: Option<&'a Arc<PhaseLayout>>,
        union: &'a UnionGraph,
        paths: Vec<String>,
    },
}

fn steps(
    spec: &PhaseSpec,
    existing: Option<Arc<PhaseLayout>>,
    cancel: &AtomicBool,
    each: &(dyn Fn(Step) + Sync),
) {
    let n = spec.passes.len();
    let shared = crate::pipeline::same_text::SharedParses::default();
    let parse = |i: usize| shared.graph(&spec.passes[i]).map_err(Failure::unreadable);
    let read = |i: usize| {
        let result = parse(i);
        let file = result.as_ref().ok().cloned();
        each(Step::Pass(i, result));
        (i, file)
    };
    // The pass on screen first, on its own and with every core: parsed (beside the files module
    // inference reads), then laid out and folded while it is handed on, and only then the other
    // passes. A phase of 100k-node passes is on screen in the time of one pass; over a link,
    // nothing crosses or is decoded ahead of the first view.
    let current = spec.current.min(n.saturating_sub(1));
    let (first, context) = rayon::join(
        || (n > 0).then(|| parse(current)),
        || modules::context_or_around(&spec.context, &spec.passes).parse(),
    );
    let mut files: Vec<(usize, Option<Arc<FxFile>>)> = Vec::with_capacity(n);
    if let Some(result) = first {
        let file = result.as_ref().ok().cloned();
        let preview = |file: &FxFile| {
            if !spec.layout || n < 2 || cancel.load(Ordering::Relaxed) {
                return;
            }
            let union = phase_layout::union_of(&[file]);
            let (layout, paths) = rayon::join(
                || phase_layout::build(&[file], cancel),
                || modules::module_paths_in(&union, &[file], &context),
            );
            if let Ok(l) = layout {
                each(Step::Preview {
                    pass: current,
                    layout: Arc::new(l),
                    paths,
                });
            }
        };
        rayon::join(
            || each(Step::Pass(current, result)),
            || {
                if let Some(f) = &file {
                    preview(f);
                }
            },
        );
        files.push((current, file));
    }
    let rest: Vec<usize> = (0..n).filter(|&i| i != current).collect();
    let others: Vec<(usize, Option<Arc<FxFile>>)> = rest.par_iter().map(|&i| read(i)).collect();
    files.extend(others);
    files.sort_by_key(|(i, _)| *i);
    let loaded: Vec<&FxFile> = files.iter().filter_map(|(_, f)| f.as_deref()).collect();
    let complete = loaded.len() == files.len();
    // The layout (what puts the graph on screen) then the diffs on one side, the module tree on
    // the other: on a 415-layer phase each takes about a third of the time to ready, and one
    // after the other they were most of it. Each side has its union (the preview's way): the
    // same passes in the same order make the same ids. The module tree needs every pass (a
    // node keeps its module from pass to pass).
    let want_modules = complete && !cancel.load(Ordering::Relaxed);
    let (layout, modules) = rayon::join(
        || {
            let layout = if spec.layout {
                let l = Arc::new(phase_layout::build(&loaded, cancel).ok()?);
                each(Step::Layout(l.clone()));
                Some(l)
            } else {
                existing
            };
            if complete && files.len() > 1 {
                let diffs = diff::consecutive_diffs(&loaded)
                    .into_iter()
                    .map(Arc::new)
                    .collect();
                each(Step::Diffs(diffs));
            }
            Some(layout)
        },
        || {
            want_modules.then(|| {
                let union = phase_layout::union_of(&loaded);
                let paths = modules::module_paths_in(&union, &loaded, &context);
                (union, paths)
            })
        },
    );
    // A layout cancelled says nothing more.
    let (Some(layout), Some((union, paths))) = (layout, modules) else {
        return;
    };
    if cancel.load(Ordering::Relaxed) {
        return;
    }
    each(Step::Modules {
        layout: layout.as_ref(),
        union: &union,
        paths,
    });
}
