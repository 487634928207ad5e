//! A log file opened in the logs panel, parsed in the background.

use super::jobs::Msg;
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
        self.jobs.spawn(move |send| {
            let result = read::read_text(&path)
                .map(|t| Arc::new(debug_log::parse_log(&t.text)))
                .map_err(|e| e.to_string());
            send(Msg::Log { path, result });
        });
    }

    pub(super) fn on_log(&mut self, path: PathBuf, result: Result<Arc<ParsedLog>, String>) {
        if let Some(lv) = self.log.as_mut().filter(|l| l.path == path) {
            lv.log = result
                .map_err(|e| format!("Could not read {}: {e}", lv.path.display()))
                .into();
        }
    }
}
