//! AscendC autotune candidates per fused kernel (issue 9): the report of the opened folder,
//! built in the background the first time the view asks for it, and log text pasted by the
//! user (or handed over by a runner's console) joined on top of it.

use super::App;
use super::jobs::Apply;
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

impl App {
    /// Builds the report for the open workspace unless it is already built (or building).
    /// Cheap to call every frame.
    pub fn ensure_autotune(&mut self) {
        let key = self.workspace_key();
        if key.is_none() && self.autotune.pasted.is_none() {
            return;
        }
        if self.autotune.built_for.as_ref() == Some(&key) {
            return;
        }
        self.autotune.built_for = Some(key);
        self.rebuild_autotune();
    }

    /// Joins `text` (log lines copied from a console) with the open folder's evidence;
    /// empty text drops what was pasted before.
    pub fn paste_autotune_log(&mut self, text: &str) {
        self.autotune.pasted = (!text.trim().is_empty()).then(|| Arc::new(text.to_string()));
        self.autotune.built_for = Some(self.workspace_key());
        self.rebuild_autotune();
    }

    fn workspace_key(&self) -> WorkspaceKey {
        self.workspace
            .as_ref()
            .map(|ws| (ws.index.root.clone(), ws.index.files_seen))
    }

    /// Reads one of a kernel's files for the code viewer (in the background).
    pub fn open_kernel_file(&mut self, path: &std::path::Path) {
        if self.autotune.file.as_ref().is_some_and(|f| f.path == path) {
            return;
        }
        self.autotune.file = Some(KernelFile {
            path: path.to_path_buf(),
            code: super::Loading::Loading,
        });
        let path = path.to_path_buf();
        self.jobs.spawn(move |out| {
            let result = read::read_text(&path)
                .map(|t| Arc::new(OutputCodeIndex::new(&t.text)))
                .map_err(|e| e.to_string());
            out.send(AutotuneMsg::File { path, result });
        });
    }

    pub fn close_kernel_file(&mut self) {
        self.autotune.file = None;
    }

    /// Shows a fused FX node in the post-grad graph it belongs to.
    pub fn reveal_fused_node(&mut self, post_grad: &std::path::Path, node: &str) {
        self.select_graph(post_grad);
        self.reveal_node(node.to_string());
    }

    fn rebuild_autotune(&mut self) {
        self.autotune.request += 1;
        self.autotune.loading = true;
        let request = self.autotune.request;
        let index = self.workspace.as_ref().map(|ws| ws.index.clone());
        let pasted = self.autotune.pasted.clone();
        self.jobs.spawn(move |out| {
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

impl Apply<App> for AutotuneMsg {
    fn is_current(&self, app: &App) -> bool {
        match self {
            AutotuneMsg::Report { request, .. } => *request == app.autotune.request,
            AutotuneMsg::File { path, .. } => {
                app.autotune.file.as_ref().is_some_and(|f| &f.path == path)
            }
        }
    }

    fn apply(self, app: &mut App) {
        match self {
            AutotuneMsg::Report { report, .. } => {
                app.autotune.report = Some(report);
                app.autotune.loading = false;
            }
            AutotuneMsg::File { result, .. } => {
                if let Some(f) = app.autotune.file.as_mut() {
                    f.code = result.into();
                }
            }
        }
    }
}
