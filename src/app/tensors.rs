//! Dumped tensors and msprobe statistics of the selected node (issue 6).

use super::App;

/// What the app knows and has loaded for this view.
#[derive(Default)]
pub struct TensorsState {}

/// Results of this view's background jobs.
pub enum TensorsMsg {}

impl App {
    pub(super) fn on_tensors(&mut self, msg: TensorsMsg) {
        match msg {}
    }
}
