//! A log file opened in the logs panel, parsed in the background.

use super::jobs::Apply;
use super::{App, Loading};
use crate::model::log::ParsedLog;
use crate::sources::{debug_log, read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A log file shown in the logs panel.
pub struct LogView {
    pub path: PathBuf,
    pub log: Loading<Arc<ParsedLog>>,
}

impl App {
    /// Opens a log file in the logs panel (parsed in the background).
    pub fn open_log(&mut self, path: &Path) {
        if self.log.as_ref().is_some_and(|l| l.path == path) {
            return;
        }
        self.log = Some(LogView {
            path: path.to_path_buf(),
            log: Loading::Loading,
        });
        let path = path.to_path_buf();
        self.jobs.spawn(move |out| {
            let result = read::read_text(&path)
                .map(|t| Arc::new(debug_log::parse_log(&t.text)))
                .map_err(|e| e.to_string());
            out.send(LogMsg { path, result });
        });
    }
}

/// A log file, parsed, for the logs panel showing `path`.
pub struct LogMsg {
    path: PathBuf,
    result: Result<Arc<ParsedLog>, String>,
}

impl Apply<App> for LogMsg {
    fn is_current(&self, app: &App) -> bool {
        app.log.as_ref().is_some_and(|l| l.path == self.path)
    }

    fn apply(self, app: &mut App) {
        if let Some(lv) = app.log.as_mut() {
            lv.log = self
                .result
                .map_err(|e| format!("Could not read {}: {e}", lv.path.display()))
                .into();
        }
    }
}
