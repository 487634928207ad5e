//! The text diff of two graph files (A, then the pass on screen), for the text diff view. A
//! feature that owns its state (`app::part`).

use super::Loading;
use super::jobs::Apply;
use super::part::{Cx, Feature};
use crate::sources::read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A text diff of two graph files, for the text diff view.
pub struct TextDiffView {
    pub a: PathBuf,
    pub b: PathBuf,
    pub lines: Loading<Arc<Vec<crate::analysis::diff::TextDiffLine>>>,
}

/// The diff on screen, if any.
#[derive(Default)]
pub struct TextDiff {
    pub shown: Option<TextDiffView>,
}

impl Feature for TextDiff {}

impl TextDiff {
    /// Diffs graph file `a` against `b` (in the background).
    pub fn open(&mut self, cx: &Cx, a: PathBuf, b: PathBuf) {
        self.shown = Some(TextDiffView {
            a: a.clone(),
            b: b.clone(),
            lines: Loading::Loading,
        });
        cx.spawn::<TextDiff>(move |out| {
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
struct TextDiffMsg {
    a: PathBuf,
    b: PathBuf,
    result: Result<Arc<Vec<crate::analysis::diff::TextDiffLine>>, String>,
}

impl Apply<TextDiff> for TextDiffMsg {
    fn is_current(&self, state: &TextDiff) -> bool {
        state
            .shown
            .as_ref()
            .is_some_and(|t| t.a == self.a && t.b == self.b)
    }

    fn apply(self, state: &mut TextDiff) {
        if let Some(t) = state.shown.as_mut() {
            t.lines = self.result.into();
        }
    }
}
