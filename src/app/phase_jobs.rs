//! The open phase's background work (its passes parsed, diffed, laid out and folded by module)
//! and the results it sends back, keyed by the phase they were computed for.

use super::App;
use super::jobs::Apply;
use super::phase::PhaseState;
use crate::analysis::diff::GraphDiff;
use crate::analysis::fold::FoldTree;
use crate::analysis::graph_facts::GraphFacts;
use crate::analysis::phase_layout::PhaseLayout;
use crate::analysis::provenance::CodeProvenance;
use crate::model::fx::FxFile;
use crate::model::output_code::OutputCodeIndex;
use crate::pipeline::{
    self,
    phase::{PhaseNews, PhaseSpec},
};
use crate::sources::{load, output_code, read};
use std::path::PathBuf;
use std::sync::Arc;

/// A result for the phase keyed `key` (its folder, or the lone graph file).
pub enum PhaseMsg {
    /// One pass, parsed.
    PassLoaded {
        key: PathBuf,
        pass: usize,
        result: Result<Arc<FxFile>, String>,
    },
    /// What each pass changed from the one before (`diffs[k]` = k−1 → k).
    PassDiffs {
        key: PathBuf,
        diffs: Vec<Arc<GraphDiff>>,
    },
    /// A pass's facts for the tree, from the phase job's parse (the facts job skips it).
    PassFacts {
        key: PathBuf,
        path: PathBuf,
        facts: GraphFacts,
    },
    /// The pass on screen alone, laid out and folded, while the others load.
    Preview {
        key: PathBuf,
        pass: usize,
        layout: Arc<PhaseLayout>,
        tree: Arc<FoldTree>,
    },
    /// The union layout.
    Layout {
        key: PathBuf,
        result: Result<Arc<PhaseLayout>, String>,
    },
    /// The module tree, built on `layout`.
    Fold {
        key: PathBuf,
        layout: Arc<PhaseLayout>,
        tree: Arc<FoldTree>,
    },
    /// The phase's `output_code.py`, indexed, or why it could not be read.
    OutputCode {
        key: PathBuf,
        result: Result<Arc<OutputCodeIndex>, String>,
    },
    /// The phase's provenance joined to its code, or why it could not be read.
    Provenance {
        key: PathBuf,
        result: Result<Arc<CodeProvenance>, String>,
    },
    /// The diff of a pass appended while watching with the pass before it.
    PassDiff {
        key: PathBuf,
        pass: usize,
        diff: Arc<GraphDiff>,
    },
    /// The layout extended to `passes` passes.
    LayoutExtended {
        key: PathBuf,
        passes: usize,
        layout: Arc<PhaseLayout>,
    },
}

impl PhaseMsg {
    fn key(&self) -> &PathBuf {
        match self {
            PhaseMsg::PassLoaded { key, .. }
            | PhaseMsg::PassFacts { key, .. }
            | PhaseMsg::Preview { key, .. }
            | PhaseMsg::PassDiffs { key, .. }
            | PhaseMsg::Layout { key, .. }
            | PhaseMsg::Fold { key, .. }
            | PhaseMsg::OutputCode { key, .. }
            | PhaseMsg::Provenance { key, .. }
            | PhaseMsg::PassDiff { key, .. }
            | PhaseMsg::LayoutExtended { key, .. } => key,
        }
    }
}

impl Apply<App> for PhaseMsg {
    fn is_current(&self, app: &App) -> bool {
        app.phase.as_ref().is_some_and(|p| &p.key == self.key())
    }

    fn apply(self, app: &mut App) {
        let Some(ph) = app.phase.as_mut() else { return };
        match self {
            PhaseMsg::PassLoaded { pass, result, .. } => {
                if pass < ph.files.len() {
                    match result {
                        Ok(f) => ph.files[pass] = Some(f),
                        Err(e) => ph.load_errors[pass] = Some(e),
                    }
                }
                app.extend_phase();
            }
            PhaseMsg::PassFacts { path, facts, .. } => {
                if let Some(ws) = &mut app.workspace {
                    ws.add_facts(path, facts);
                }
            }
            PhaseMsg::Preview {
                pass, layout, tree, ..
            } => {
                // Only until the union layout is in (it may have come first on a fast disk).
                if ph.layout.is_none() {
                    ph.fold = Some((layout.clone(), tree));
                    ph.layout = Some(layout);
                    ph.preview_of = Some(pass);
                }
            }
            PhaseMsg::Layout { key, result } => {
                // The first layout covers the passes the phase had when it opened.
                ph.layout_passes = Some(ph.appended_from);
                match result {
                    Ok(l) => {
                        app.layouts.insert(key, (l.clone(), ph.appended_from));
                        // The preview stays on screen until the union's module tree is in
                        // (none comes when a pass could not be read): no flat frame between.
                        if ph.preview_of.is_some() && ph.load_errors.iter().all(Option::is_none) {
                            ph.layout_next = Some(l);
                        } else {
                            ph.preview_of = None;
                            ph.layout = Some(l);
                        }
                    }
                    Err(e) => {
                        ph.preview_of = None;
                        ph.layout = None;
                        ph.layout_error = Some(e);
                    }
                }
                app.extend_phase();
            }
            PhaseMsg::Fold { layout, tree, .. } => {
                if ph
                    .layout_next
                    .as_ref()
                    .is_some_and(|l| Arc::ptr_eq(l, &layout))
                {
                    ph.layout = ph.layout_next.take();
                    ph.preview_of = None;
                }
                ph.fold = Some((layout, tree))
            }
            PhaseMsg::LayoutExtended {
                key,
                passes,
                layout,
            } => {
                app.layouts.insert(key, (layout.clone(), passes));
                ph.layout = Some(layout);
                ph.layout_passes = Some(passes);
                ph.extending = false;
                app.extend_phase();
            }
            PhaseMsg::PassDiff { pass, diff, .. } => {
                if let Some(slot) = ph.diffs.get_mut(pass) {
                    *slot = Some(diff);
                    ph.diff_pending.remove(&pass);
                }
            }
            PhaseMsg::OutputCode { result, .. } => ph.output_code = result.into(),
            PhaseMsg::Provenance { result, .. } => ph.code_provenance = result.into(),
            PhaseMsg::PassDiffs { diffs, .. } => {
                for (k, d) in diffs.into_iter().enumerate() {
                    if let Some(slot) = ph.diffs.get_mut(k + 1) {
                        *slot = Some(d);
                    }
                }
            }
        }
    }
}

impl App {
    pub(super) fn start_phase_jobs(&self, st: &PhaseState) {
        let key = st.key.clone();
        let spec = PhaseSpec {
            passes: st.passes.iter().map(|p| p.path.clone()).collect(),
            current: st.current,
            layout: st.layout.is_none(),
            // Found around the passes by the job, as `fxray modules` finds it: the same boxes
            // whichever folder was opened.
            context: Default::default(),
        };
        let existing = st.layout.clone();
        let cancel = st.cancel.clone();
        let paths = spec.passes.clone();
        let code_path = st.output_code_path.clone();
        let provenance_path = st.provenance_path.clone();
        self.jobs.spawn(move |out| {
            let news = |n: PhaseNews| {
                let key = key.clone();
                out.send(match n {
                    PhaseNews::Pass { pass, result } => {
                        // The tree's counts for this pass come from this parse: the facts job
                        // skips the open phase's files.
                        if let Ok(f) = &result {
                            out.send(PhaseMsg::PassFacts {
                                key: key.clone(),
                                path: paths[pass].clone(),
                                facts: GraphFacts::of(f),
                            });
                        }
                        let result = result.map_err(|e| e.to_string());
                        PhaseMsg::PassLoaded { key, pass, result }
                    }
                    PhaseNews::Preview { pass, layout, tree } => PhaseMsg::Preview {
                        key,
                        pass,
                        layout,
                        tree,
                    },
                    PhaseNews::Diffs(diffs) => PhaseMsg::PassDiffs { key, diffs },
                    PhaseNews::Layout(result) => PhaseMsg::Layout {
                        key,
                        result: result.map_err(|e| e.to_string()),
                    },
                    PhaseNews::Fold { layout, tree } => PhaseMsg::Fold { key, layout, tree },
                })
            };
            // The code view's text, read while the passes are (on a server, they are not read
            // here at all).
            rayon::join(
                || pipeline::phase::open(&spec, existing, &cancel, &news),
                || {
                    let Some(p) = code_path else { return };
                    let result = read::read_text(&p)
                        .map(|t| Arc::new(output_code::OutputCodeIndex::new(&t.text)))
                        .map_err(|e| e.to_string());
                    let code = result.as_ref().ok().cloned();
                    out.send(PhaseMsg::OutputCode {
                        key: key.clone(),
                        result,
                    });
                    if let (Some(code), Some(p)) = (code, provenance_path) {
                        out.send(PhaseMsg::Provenance {
                            key: key.clone(),
                            result: load::provenance(&p)
                                .map(|pr| Arc::new(CodeProvenance::build(vec![pr], &code)))
                                .map_err(|e| e.to_string()),
                        });
                    }
                },
            );
        });
    }
}
