//! The captured aclGraph model instance shown as a timeline (issue 7).

use super::App;

/// What the app knows and has loaded for this view.
#[derive(Default)]
pub struct TimelineState {}

/// Results of this view's background jobs.
pub enum TimelineMsg {}

impl App {
    pub(super) fn on_timeline(&mut self, msg: TimelineMsg) {
        match msg {}
    }
}
