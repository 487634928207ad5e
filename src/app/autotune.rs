//! AscendC autotune candidates per fused kernel (issue 9).

use super::App;

/// What the app knows and has loaded for this view.
#[derive(Default)]
pub struct AutotuneState {}

/// Results of this view's background jobs.
pub enum AutotuneMsg {}

impl App {
    pub(super) fn on_autotune(&mut self, msg: AutotuneMsg) {
        match msg {}
    }
}
