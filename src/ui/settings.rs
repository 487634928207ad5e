//! What survives a restart, read and written through eframe's storage: the recent folders,
//! the Run panel's form and history, and the theme.
//!
//! Settings from an older fxray that no longer parse are dropped, never fatal.

use super::Fxray;
use crate::app::run::RunState;
use std::path::PathBuf;

const RECENT_KEY: &str = "fxray.recent";
const RUN_FORM_KEY: &str = "fxray.run.form";
const RUN_HISTORY_KEY: &str = "fxray.run.history";
const THEME_KEY: &str = "fxray.theme";

impl Fxray {
    /// Writes what survives a restart.
    pub fn save_settings(&self, storage: &mut dyn eframe::Storage) {
        let recent: Vec<String> = self
            .app
            .recent
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let mut put = |key: &str, v: Result<String, serde_json::Error>| {
            if let Ok(s) = v {
                storage.set_string(key, s);
            }
        };
        put(RECENT_KEY, serde_json::to_string(&recent));
        if let Some(run) = self.app.peek::<RunState>() {
            put(RUN_FORM_KEY, serde_json::to_string(&run.form));
            put(RUN_HISTORY_KEY, serde_json::to_string(&run.history));
        }
        if let Some(t) = self.view.theme {
            put(THEME_KEY, serde_json::to_string(&t));
        }
    }

    /// Reads what the last session saved, before anything is opened (opening adds to the
    /// recent folders).
    pub fn restore_settings(&mut self, storage: &dyn eframe::Storage, ctx: &egui::Context) {
        if let Some(s) = storage.get_string(RECENT_KEY) {
            let recent: Vec<String> = serde_json::from_str(&s).unwrap_or_default();
            self.app.recent = recent.into_iter().map(PathBuf::from).collect();
        }
        if let Some(f) = storage.get_string(RUN_FORM_KEY)
            && let Ok(form) = serde_json::from_str(&f)
        {
            self.app.part::<RunState>().0.form = form;
        }
        if let Some(h) = storage.get_string(RUN_HISTORY_KEY)
            && let Ok(history) = serde_json::from_str(&h)
        {
            self.app.part::<RunState>().0.history = history;
        }
        if let Some(t) = storage.get_string(THEME_KEY)
            && let Ok(t) = serde_json::from_str::<egui::Theme>(&t)
        {
            // A preference, which egui keeps over the desktop's theme (setting the visuals of
            // the theme in effect would be replaced by the desktop's).
            ctx.set_theme(t);
            self.view.theme = Some(t);
        }
    }
}
