//! A phase on a server, opened by its agent: the spec crosses with the server's paths, the
//! results come back as the items of one stream, each in the serde form below.

use super::{PhaseNews, PhaseSpec, Step};
use crate::analysis::diff::GraphDiff;
use crate::analysis::fold::FoldTree;
use crate::analysis::phase_layout::PhaseLayout;
use crate::model::fx::FxFile;
use crate::pipeline::failure::Failure;
use crate::pipeline::modules::ModuleContext;
use crate::pipeline::remote::{self, Op};
use crate::sources::remote::wire;
use md5::Digest;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

/// One item of the stream.
#[derive(Serialize, Deserialize)]
pub enum Wire {
    /// A pass's file in its own item form (`wire::to_item` of an [`FxFile`]): what tells a pass
    /// identical to one sent before, which crosses as [`Wire::Same`].
    Pass {
        pass: usize,
        result: Result<Vec<u8>, Failure>,
    },
    Diffs(Vec<Arc<GraphDiff>>),
    Layout(Arc<PhaseLayout>),
    /// (union node, its module) for each node below the root: keyed by name, so that it fits a
    /// layout the client already had.
    Modules(Vec<(String, String)>),
    /// The pass on screen alone, laid out, with the module of each of its nodes (as above).
    Preview {
        pass: usize,
        layout: Arc<PhaseLayout>,
        modules: Vec<(String, String)>,
    },
    /// Pass `pass` is the same file as pass `of`, sent before it: most passes of a compile
    /// change nothing (6 of the 11 of a 415-layer forward), and each would cross and be decoded
    /// whole, then held once per pass.
    Same {
        pass: usize,
        of: usize,
    },
}

/// (union node, its module) for each node of `union` below the root.
fn named_modules(
    union: &crate::analysis::layout::UnionGraph,
    paths: Vec<String>,
) -> Vec<(String, String)> {
    union
        .names()
        .iter()
        .zip(paths)
        .filter(|(_, p)| !p.is_empty())
        .map(|(n, p)| (n.clone(), p))
        .collect()
}

/// The fold tree of `layout` from the agent's (node, module) pairs.
fn tree_of(layout: &PhaseLayout, pairs: Vec<(String, String)>) -> FoldTree {
    let of: HashMap<String, String> = pairs.into_iter().collect();
    let paths: Vec<String> = layout
        .union
        .names()
        .iter()
        .map(|n| of.get(n).cloned().unwrap_or_default())
        .collect();
    FoldTree::new(&paths, layout.union.edges())
}

/// A phase opened where its passes lie: parsed, diffed, laid out and folded by module there,
/// each result streamed as an item.
pub struct OpenPhase;

impl Op for OpenPhase {
    const NAME: &'static str = "phase";
    type Args = PhaseSpec;
    type Item = Wire;

    fn paths(spec: &mut PhaseSpec) -> Vec<&mut PathBuf> {
        let context = [&mut spec.context.dynamo, &mut spec.context.forward_first];
        spec.passes
            .iter_mut()
            .chain(context.into_iter().filter_map(Option::as_mut))
            .collect()
    }

    fn run(spec: PhaseSpec, stop: &AtomicBool, send: &(dyn Fn(Wire) + Sync)) {
        serve(&spec, stop, send);
    }
}

/// Opens the phase of `spec` (this machine's paths) and sends each result, until done or
/// `stop`.
fn serve(spec: &PhaseSpec, stop: &AtomicBool, send: &(dyn Fn(Wire) + Sync)) {
    // The passes sent, by their item's length and digest. Held while a pass is sent, so that
    // no `Same` overtakes the pass it names.
    let sent: Mutex<HashMap<(usize, [u8; 16]), usize>> = Mutex::default();
    super::steps(spec, None, stop, &|step| {
        let wire = match step {
            Step::Pass(pass, Ok(file)) => {
                // Serialising plain data into a Vec cannot fail.
                let Ok(body) = wire::to_item(&*file) else {
                    return;
                };
                let key = (body.len(), md5::Md5::digest(&body).into());
                let mut sent = sent.lock().expect("sent passes");
                let wire = match sent.get(&key) {
                    Some(&of) => Wire::Same { pass, of },
                    None => {
                        sent.insert(key, pass);
                        Wire::Pass {
                            pass,
                            result: Ok(body),
                        }
                    }
                };
                send(wire);
                return;
            }
            Step::Pass(pass, Err(e)) => Wire::Pass {
                pass,
                result: Err(e),
            },
            Step::Diffs(d) => Wire::Diffs(d),
            Step::Layout(l) => Wire::Layout(l),
            Step::Modules { union, paths, .. } => Wire::Modules(named_modules(union, paths)),
            Step::Preview {
                pass,
                layout,
                paths,
            } => Wire::Preview {
                pass,
                modules: named_modules(&layout.union, paths),
                layout,
            },
        };
        send(wire);
    });
}

/// Opens `spec` on the server its passes lie on; false when they are not all on one server
/// (the caller opens it here, reading through the file door).
pub(super) fn open(
    spec: &PhaseSpec,
    existing: Option<Arc<PhaseLayout>>,
    cancel: &AtomicBool,
    each: &(dyn Fn(PhaseNews) + Sync),
) -> bool {
    let Some(host) = spec
        .passes
        .first()
        .and_then(|p| crate::sources::remote::host_of(p))
    else {
        return false;
    };
    // Context files elsewhere than the passes are left for the server to find around them.
    let here = |p: &Option<PathBuf>| {
        p.clone()
            .filter(|p| crate::sources::remote::host_of(p).as_ref() == Some(&host))
    };
    let asked = PhaseSpec {
        passes: spec.passes.clone(),
        current: spec.current,
        layout: spec.layout,
        context: ModuleContext {
            dynamo: here(&spec.context.dynamo),
            forward_first: here(&spec.context.forward_first),
        },
    };
    let mut got = vec![false; spec.passes.len()];
    let mut files: Vec<Option<Arc<FxFile>>> = vec![None; spec.passes.len()];
    let mut layout = existing;
    let mut laid_out = false;
    let Some(result) = remote::there::<OpenPhase>(asked, cancel, |wire| {
        match wire {
            Wire::Pass { pass, result } => {
                let result = match result {
                    Ok(body) => Ok(Arc::new(wire::from_item::<FxFile>(&body)?)),
                    Err(e) => Err(e),
                };
                if let Some(g) = got.get_mut(pass) {
                    *g = true;
                    files[pass] = result.as_ref().ok().cloned();
                    each(PhaseNews::Pass { pass, result });
                }
            }
            Wire::Same { pass, of } => {
                let file = files.get(of).cloned().flatten();
                let (Some(file), Some(g)) = (file, got.get_mut(pass)) else {
                    return Err(malformed("pass"));
                };
                *g = true;
                files[pass] = Some(file.clone());
                each(PhaseNews::Pass {
                    pass,
                    result: Ok(file),
                });
            }
            Wire::Diffs(diffs) => {
                if diffs.len() + 1 != got.len() || !diffs.iter().all(|d| d.is_well_formed()) {
                    return Err(malformed("diffs"));
                }
                each(PhaseNews::Diffs(diffs));
            }
            Wire::Layout(l) => {
                if !l.is_well_formed() {
                    return Err(malformed("layout"));
                }
                laid_out = true;
                layout = Some(l.clone());
                each(PhaseNews::Layout(Ok(l)));
            }
            Wire::Modules(pairs) => {
                if let Some(l) = &layout {
                    each(PhaseNews::Fold {
                        layout: l.clone(),
                        tree: Arc::new(tree_of(l, pairs)),
                    });
                }
            }
            Wire::Preview {
                pass,
                layout: l,
                modules,
            } => {
                if !l.is_well_formed() || pass >= got.len() {
                    return Err(malformed("preview"));
                }
                let tree = Arc::new(tree_of(&l, modules));
                each(PhaseNews::Preview {
                    pass,
                    layout: l,
                    tree,
                });
            }
        }
        Ok(())
    }) else {
        // Passes on several servers: read here through the file door.
        return false;
    };
    if let Err(e) = result {
        let why = Failure::from(e);
        for (pass, _) in got.iter().enumerate().filter(|(_, g)| !**g) {
            each(PhaseNews::Pass {
                pass,
                result: Err(why.clone()),
            });
        }
        if spec.layout && !laid_out {
            each(PhaseNews::Layout(Err(why)));
        }
    }
    true
}

fn malformed(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the agent sent a malformed phase ({what})"),
    )
}
