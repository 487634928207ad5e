//! A log file opened in the logs panel, parsed in the background. A feature that owns its
//! state (`app::part`): it is about the open tree, so opening another drops it.

use super::Loading;
use super::jobs::Apply;
use super::part::{Cx, Feature};
use crate::model::log::ParsedLog;
use crate::sources::{debug_log, read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A log file shown in the logs panel.
pub struct LogView {
    pub path: PathBuf,
    pub log: Loading<Arc<ParsedLog>>,
}

/// The log on screen, if any.
#[derive(Default)]
pub struct LogState {
    pub view: Option<LogView>,
}

impl Feature for LogState {}

impl LogState {
    /// Opens a log file in the logs panel (parsed in the background).
    pub fn open(&mut self, cx: &Cx, path: &Path) {
        if self.view.as_ref().is_some_and(|l| l.path == path) {
            return;
        }
        self.view = Some(LogView {
            path: path.to_path_buf(),
            log: Loading::Loading,
        });
        let path = path.to_path_buf();
        cx.spawn::<LogState>(move |out| {
            let result = read::read_text(&path)
                .map(|t| Arc::new(debug_log::parse_log(&t.text)))
                .map_err(|e| e.to_string());
            out.send(LogMsg { path, result });
        });
    }
}

/// A log file, parsed, for the logs panel showing `path`.
struct LogMsg {
    path: PathBuf,
    result: Result<Arc<ParsedLog>, String>,
}

impl Apply<LogState> for LogMsg {
    fn is_current(&self, state: &LogState) -> bool {
        state.view.as_ref().is_some_and(|l| l.path == self.path)
    }

    fn apply(self, state: &mut LogState) {
        if let Some(lv) = state.view.as_mut() {
            lv.log = self
                .result
                .map_err(|e| format!("Could not read {}: {e}", lv.path.display()))
                .into();
        }
    }
}
