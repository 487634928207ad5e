//! AscendC autotune candidates per fused kernel (issue 9): the report of the opened folder,
//! built in the background the first time the view asks for it, and log text pasted by the
//! user (or handed over by a runner's console) joined on top of it. A feature that owns its
//! state (`app::part`).

use super::jobs::Apply;
use super::part::Cx;
use crate::model::autotune::AutotuneReport;
use crate::model::output_code::OutputCodeIndex;
use crate::sources::read;
use std::path::PathBuf;
use std::sync::Arc;

/// What the app knows and has loaded for this view.
#[derive(Default)]
pub struct AutotuneState {
    /// The report on screen, once built.
    pub report: Option<Arc<AutotuneReport>>,
    /// Which workspace (root, files seen; `None` = no folder open) the report or the running
    /// job is for; `None` until one is asked for.
    built_for: Option<WorkspaceKey>,
    /// Log text given by hand, joined with the folder's evidence.
    pub pasted: Option<Arc<String>>,
    /// A job is building the report.
    pub loading: bool,
    /// Bumped on every request, so a slow older job cannot overwrite a newer report.
    request: u64,
    /// A kernel file opened in the code viewer.
    pub file: Option<KernelFile>,
}

/// The report is remade for each tree; what was pasted stays.
impl super::part::Feature for AutotuneState {
    const OF_THE_TREE: bool = false;
}

impl AutotuneState {
    /// How many times a report was asked for (a report is built once per folder state).
    pub fn builds(&self) -> u64 {
        self.request
    }
}

type WorkspaceKey = Option<(PathBuf, usize)>;

/// A file of a kernel's debug folder, read for the code viewer.
pub struct KernelFile {
    pub path: PathBuf,
    pub code: super::Loading<Arc<OutputCodeIndex>>,
}

/// Results of this view's background jobs.
pub enum AutotuneMsg {
    Report {
        request: u64,
        report: Arc<AutotuneReport>,
    },
    File {
        path: PathBuf,
        result: Result<Arc<OutputCodeIndex>, String>,
    },
}

impl AutotuneState {
    /// Builds the report for the open workspace unless it is already built (or building).
    /// Cheap to call every frame.
    pub fn ensure(&mut self, cx: &Cx) {
        let key = workspace_key(cx);
        if key.is_none() && self.pasted.is_none() {
            return;
        }
        if self.built_for.as_ref() == Some(&key) {
            return;
        }
        self.built_for = Some(key);
        self.rebuild(cx);
    }

    /// Joins `text` (log lines copied from a console) with the open folder's evidence;
    /// empty text drops what was pasted before.
    pub fn paste_log(&mut self, cx: &Cx, text: &str) {
        self.pasted = (!text.trim().is_empty()).then(|| Arc::new(text.to_string()));
        self.built_for = Some(workspace_key(cx));
        self.rebuild(cx);
    }

    /// Reads one of a kernel's files for the code viewer (in the background).
    pub fn open_kernel_file(&mut self, cx: &Cx, path: &std::path::Path) {
        if self.file.as_ref().is_some_and(|f| f.path == path) {
            return;
        }
        self.file = Some(KernelFile {
            path: path.to_path_buf(),
            code: super::Loading::Loading,
        });
        let path = path.to_path_buf();
        cx.spawn::<AutotuneState>(move |out| {
            let result = read::read_text(&path)
                .map(|t| Arc::new(OutputCodeIndex::new(&t.text)))
                .map_err(|e| e.to_string());
            out.send(AutotuneMsg::File { path, result });
        });
    }

    pub fn close_kernel_file(&mut self) {
        self.file = None;
    }

    fn rebuild(&mut self, cx: &Cx) {
        self.request += 1;
        self.loading = true;
        let request = self.request;
        let index = cx.workspace.map(|ws| ws.index.clone());
        let pasted = self.pasted.clone();
        cx.spawn::<AutotuneState>(move |out| {
            let report = crate::pipeline::autotune::build_report(
                index.as_ref(),
                pasted.as_deref().map(String::as_str),
            );
            out.send(AutotuneMsg::Report {
                request,
                report: Arc::new(report),
            });
        });
    }
}

fn workspace_key(cx: &Cx) -> WorkspaceKey {
    cx.workspace
        .map(|ws| (ws.index.root.clone(), ws.index.files_seen))
}

impl Apply<AutotuneState> for AutotuneMsg {
    fn is_current(&self, state: &AutotuneState) -> bool {
        match self {
            AutotuneMsg::Report { request, .. } => *request == state.request,
            AutotuneMsg::File { path, .. } => state.file.as_ref().is_some_and(|f| &f.path == path),
        }
    }

    fn apply(self, state: &mut AutotuneState) {
        match self {
            AutotuneMsg::Report { report, .. } => {
                state.report = Some(report);
                state.loading = false;
            }
            AutotuneMsg::File { result, .. } => {
                if let Some(f) = state.file.as_mut() {
                    f.code = result.into();
                }
            }
        }
    }
}
