//! The text diff of two graph files (A, then the pass on screen), for the text diff view.

use super::{App, Loading};
use crate::sources::read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A text diff of two graph files, for the text diff view.
pub struct TextDiffView {
    pub a: PathBuf,
    pub b: PathBuf,
    pub lines: Loading<Arc<Vec<crate::analysis::diff::TextDiffLine>>>,
}

impl App {
    /// Opens the text diff of the compared graphs (A → the pass on screen).
    pub fn open_text_diff(&mut self) {
        let Some(ph) = &self.phase else { return };
        let Some(b) = ph.current_path().map(Path::to_path_buf) else {
            return;
        };
        let a = match &ph.compare {
            Some(c) if c.b_pass == ph.current => c.a_path.clone(),
            _ => match ph.current.checked_sub(1) {
                Some(prev) => ph.passes[prev].path.clone(),
                None => return,
            },
        };
        self.text_diff = Some(TextDiffView {
            a: a.clone(),
            b: b.clone(),
            lines: Loading::Loading,
        });
        self.jobs.spawn(move |out| {
            let read = |p: &Path| {
                read::read_text(p)
                    .map(|t| t.text)
                    .map_err(|e| e.to_string())
            };
            let result = read(&a).and_then(|ta| {
                read(&b).map(|tb| Arc::new(crate::analysis::diff::text_diff(&ta, &tb)))
            });
            out.send(TextDiffMsg { a, b, result });
        });
    }
}

/// The text diff of graph files `a` and `b`.
pub struct TextDiffMsg {
    a: PathBuf,
    b: PathBuf,
    result: Result<Arc<Vec<crate::analysis::diff::TextDiffLine>>, String>,
}

impl super::jobs::Apply<App> for TextDiffMsg {
    fn is_current(&self, app: &App) -> bool {
        app.text_diff
            .as_ref()
            .is_some_and(|t| t.a == self.a && t.b == self.b)
    }

    fn apply(self, app: &mut App) {
        if let Some(t) = app.text_diff.as_mut() {
            t.lines = self.result.into();
        }
    }
}
