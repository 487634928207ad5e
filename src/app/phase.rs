//! The phase being looked at: its passes (loaded in the background), the union layout that
//! keeps nodes in place across passes, the current pass and the selected node.

use super::compare::{Compare, FindFirst};
use crate::analysis::diff::{self, GraphDiff, HistoryEntry};
use crate::analysis::fold::FoldTree;
use crate::analysis::phase_layout::PhaseLayout;
use crate::analysis::provenance::{CodeProvenance, Side};
use crate::model::fx::{FxFile, FxGraph, FxNode};
use crate::model::index::{DebugIndex, PassFile};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// One graph file of the phase, in execution order.
#[derive(Debug, Clone)]
pub struct PassRef {
    pub index: u32,
    pub name: String,
    pub path: PathBuf,
}

pub struct PhaseState {
    /// The phase folder, or the graph file itself for a graph outside any phase.
    pub key: PathBuf,
    /// `run · model__0 · forward`.
    pub title: String,
    pub passes: Vec<PassRef>,
    /// Parsed passes, filled as they load.
    pub files: Vec<Option<Arc<FxFile>>>,
    /// Why a pass could not be loaded.
    pub load_errors: Vec<Option<String>>,
    pub current: usize,
    pub layout: Option<Arc<PhaseLayout>>,
    pub layout_error: Option<String>,
    /// Set to abandon the layout job when the user moves on.
    pub cancel: Arc<AtomicBool>,
    /// Qualified name (`true_graph_0/sin` inside a sub-graph) of the selected node.
    pub selected: Option<String>,
    /// `diffs[k]`: what pass k changed from pass k−1 (`None` for pass 0 and until computed).
    pub diffs: Vec<Option<Arc<GraphDiff>>>,
    /// A chosen "A" graph to compare the pass on screen against, instead of the previous pass.
    pub compare: Option<Compare>,
    /// The last "find first pass" search in this phase.
    pub find: Option<FindFirst>,
    /// `output_code.py` of the phase, once read.
    pub output_code: super::Loading<Arc<crate::model::output_code::OutputCodeIndex>>,
    pub output_code_path: Option<PathBuf>,
    /// Inductor's provenance JSON of the phase, when it has one.
    pub provenance_path: Option<PathBuf>,
    /// That provenance joined to `output_code.py`'s lines, once both are read.
    pub code_provenance: super::Loading<Arc<CodeProvenance>>,
    /// Which names the phase's graphs hold: post-grad for Inductor's passes and the AOT
    /// graphs, pre-grad for a Dynamo graph.
    pub provenance_side: Side,
    /// Passes from this one on were appended while watching (their diffs and layout come
    /// from [`App::extend_phase`](super::App)).
    pub appended_from: usize,
    /// Appended passes whose diff is being computed.
    pub diff_pending: std::collections::HashSet<usize>,
    /// How many passes the layout covers (`None` until it is known).
    pub layout_passes: Option<usize>,
    /// The layout is being extended to newly appended passes.
    pub extending: bool,
    /// The phase's module tree, with the layout it was built on.
    pub fold: Option<(Arc<PhaseLayout>, Arc<FoldTree>)>,
    /// `Some(k)` while `layout` is pass k's alone (the first view, before every pass is read
    /// and the union laid out): no other pass can be drawn yet.
    pub preview_of: Option<usize>,
    /// The union layout, held back while the preview shows until its module tree is in.
    pub layout_next: Option<Arc<PhaseLayout>>,
}

impl Drop for PhaseState {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
}

impl PhaseState {
    pub fn new(
        key: PathBuf,
        title: String,
        passes: Vec<PassRef>,
        output_code_path: Option<PathBuf>,
    ) -> Self {
        let n = passes.len();
        PhaseState {
            key,
            title,
            passes,
            files: vec![None; n],
            load_errors: vec![None; n],
            diffs: vec![None; n],
            compare: None,
            find: None,
            current: 0,
            layout: None,
            layout_error: None,
            cancel: Arc::new(AtomicBool::new(false)),
            selected: None,
            output_code: if output_code_path.is_some() {
                super::Loading::Loading
            } else {
                super::Loading::Idle
            },
            output_code_path,
            provenance_path: None,
            code_provenance: super::Loading::Idle,
            provenance_side: Side::PostGrad,
            appended_from: n,
            diff_pending: Default::default(),
            layout_passes: None,
            extending: false,
            fold: None,
            preview_of: None,
            layout_next: None,
        }
    }

    /// Where the phase's provenance is read from; read with its code, and only with it (the
    /// lines it names are in that code).
    pub fn set_provenance(&mut self, path: Option<&Path>) {
        self.provenance_path = path
            .filter(|_| self.output_code_path.is_some())
            .map(Path::to_path_buf);
        if self.provenance_path.is_some() {
            self.code_provenance = super::Loading::Loading;
        }
    }

    /// The module tree, when it was built on `layout`.
    pub fn fold_for(&self, layout: &Arc<PhaseLayout>) -> Option<Arc<FoldTree>> {
        self.fold
            .as_ref()
            .filter(|(l, _)| Arc::ptr_eq(l, layout))
            .map(|(_, t)| t.clone())
    }

    /// Dotted module of union node `qualified`, when the tree is known.
    pub fn module_of(&self, qualified: &str) -> Option<&str> {
        let (layout, tree) = self.fold.as_ref()?;
        union_module(layout, tree, qualified)
    }

    /// The layout can draw the pass on screen: the union's, or the preview of that very pass.
    pub fn drawable(&self) -> bool {
        self.layout.is_some() && self.preview_of.is_none_or(|k| k == self.current)
    }

    pub fn current_file(&self) -> Option<&Arc<FxFile>> {
        self.files.get(self.current).and_then(Option::as_ref)
    }

    pub fn current_path(&self) -> Option<&Path> {
        self.passes.get(self.current).map(|p| p.path.as_path())
    }

    /// The graph files a text diff of the pass on screen compares: its A (the graph it is
    /// compared with, else the pass before), then the pass itself.
    pub fn text_diff_pair(&self) -> Option<(PathBuf, PathBuf)> {
        let b = self.current_path()?.to_path_buf();
        let a = match &self.compare {
            Some(c) if c.b_pass == self.current => c.a_path.clone(),
            _ => self.passes.get(self.current.checked_sub(1)?)?.path.clone(),
        };
        Some((a, b))
    }

    pub fn all_loaded(&self) -> bool {
        self.files
            .iter()
            .zip(&self.load_errors)
            .all(|(f, e)| f.is_some() || e.is_some())
    }

    /// Every pass is read, the layout covers them all, the module tree is built on it and every
    /// pass-to-pass diff is known: scrubbing and diffing need nothing more.
    pub fn complete(&self) -> bool {
        let n = self.passes.len();
        self.all_loaded()
            && self.layout_passes == Some(n)
            && self.preview_of.is_none()
            && self
                .layout
                .as_ref()
                .is_some_and(|l| self.fold_for(l).is_some())
            && (self.load_errors.iter().any(Option::is_some)
                || self.diffs.iter().skip(1).all(Option::is_some))
    }

    pub fn pass_of(&self, path: &Path) -> Option<usize> {
        self.passes.iter().position(|p| p.path == path)
    }

    /// The graph the pass on screen is compared with (A) and the diff A → current pass (B):
    /// the chosen graph when one was picked for this pass, else the previous pass.
    pub fn diff_view(&self) -> Option<(Arc<FxFile>, Arc<GraphDiff>, String)> {
        if let Some(c) = &self.compare
            && c.b_pass == self.current
        {
            let (a, d) = c.result.ready()?.clone();
            return Some((a, d, c.label.clone()));
        }
        let prev = self.current.checked_sub(1)?;
        let a = self.files.get(prev)?.clone()?;
        let d = self.diffs.get(self.current)?.clone()?;
        let p = &self.passes[prev];
        Some((a, d, format!("{:03} {}", p.index, p.name)))
    }

    /// The node's history over the loaded passes (needs every consecutive diff).
    pub fn history(&self, qualified: &str) -> Option<Vec<HistoryEntry>> {
        let files: Vec<&FxFile> = self
            .files
            .iter()
            .map(|f| f.as_deref())
            .collect::<Option<_>>()?;
        let diffs: Vec<&GraphDiff> = self
            .diffs
            .iter()
            .skip(1)
            .map(|d| d.as_deref())
            .collect::<Option<_>>()?;
        Some(diff::node_history_in(&files, &diffs, qualified))
    }

    /// The selected node in the current pass, with its graph.
    pub fn selected_node(&self) -> Option<(&FxGraph, &FxNode)> {
        let file = self.current_file()?;
        find_node(file, self.selected.as_deref()?)
    }
}

/// Dotted module of union node `qualified` in `tree` (built on `layout`).
pub fn union_module<'a>(
    layout: &PhaseLayout,
    tree: &'a FoldTree,
    qualified: &str,
) -> Option<&'a str> {
    let id = layout.union.id(qualified)?;
    let m = *tree.module_of.get(id as usize)?;
    Some(tree.modules.get(m as usize)?.path.as_str())
}

/// Finds a node by qualified name (`name` or `<subgraph class>/name`).
pub fn find_node<'a>(file: &'a FxFile, qualified: &str) -> Option<(&'a FxGraph, &'a FxNode)> {
    let (graph, name) = match qualified.split_once('/') {
        Some((g, n)) => (file.graphs.iter().skip(1).find(|x| x.name == g)?, n),
        None => (file.graphs.first()?, qualified),
    };
    let i = graph.by_name.get(name)?;
    Some((graph, graph.nodes.get(i)?))
}

/// The phase that holds `path` (a pass file or a Dynamo graph) as the index knows it.
pub fn phase_for(index: &DebugIndex, path: &Path) -> Option<PhaseState> {
    for run in &index.runs {
        for model in &run.models {
            if model.dynamo_graph.as_deref() == Some(path) {
                let title = format!("{} · {} · dynamo graph", run.name, model.name);
                let mut st = single(path, title);
                // The Dynamo graph holds pre-grad names: provenance takes them to the kernels
                // of the first phase Inductor compiled.
                if let Some(ph) = model
                    .phases
                    .iter()
                    .find(|p| p.provenance().is_some() && p.output_code.is_some())
                {
                    st.output_code_path = ph.output_code.clone();
                    st.output_code = super::Loading::Loading;
                    st.set_provenance(ph.provenance());
                    st.provenance_side = Side::PreGrad;
                }
                return Some(st);
            }
            for phase in &model.phases {
                if phase.passes.iter().any(|p| p.path == path) {
                    let title = format!("{} · {} · {}", run.name, model.name, phase.name);
                    let passes = phase.passes.iter().map(pass_ref).collect();
                    let mut st = PhaseState::new(
                        phase.path.clone(),
                        title,
                        passes,
                        phase.output_code.clone(),
                    );
                    st.current = st.pass_of(path).unwrap_or(0);
                    st.set_provenance(phase.provenance());
                    return Some(st);
                }
            }
        }
    }
    index
        .loose_graphs
        .iter()
        .find(|p| p.path == path)
        .map(|p| single(&p.path, p.name.clone()))
}

/// The passes the index now holds for the phase keyed `key` (a phase folder, or a lone graph
/// file); `None` when it is gone.
pub fn phase_for_key(index: &DebugIndex, key: &Path) -> Option<Vec<PassRef>> {
    for run in &index.runs {
        for model in &run.models {
            if let Some(ph) = model.phases.iter().find(|p| p.path == key) {
                return Some(ph.passes.iter().map(pass_ref).collect());
            }
        }
    }
    let st = phase_for(index, key)?;
    (st.key == key).then_some(st.passes.clone())
}

fn single(path: &Path, title: String) -> PhaseState {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    PhaseState::new(
        path.to_path_buf(),
        title,
        vec![PassRef {
            index: 0,
            name,
            path: path.to_path_buf(),
        }],
        None,
    )
}

fn pass_ref(p: &PassFile) -> PassRef {
    PassRef {
        index: p.index,
        name: p.name.clone(),
        path: p.path.clone(),
    }
}
