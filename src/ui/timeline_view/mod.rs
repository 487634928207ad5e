//! The timeline of a captured aclGraph model instance (issue 7).

use crate::app::App;

/// How the timeline is shown: zoom, pan, hover, search (apart from the app's data).
#[derive(Default)]
pub struct TimelineViewState {}

pub fn show(_app: &mut App, _state: &mut TimelineViewState, ui: &mut egui::Ui) {
    ui.weak("No capture open. Pick a capture JSON in the tree.");
}
