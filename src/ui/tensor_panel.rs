//! The selected node's dumped tensors, shown under the node in the inspector (issue 6).

use crate::app::App;
use crate::app::phase::PhaseState;
use crate::app::tensors::TensorsState;

#[derive(Default)]
pub struct TensorPanelState {}

/// What the user asked for, applied to the app once the inspector has been drawn.
pub enum Action {}

pub fn show(
    _tensors: &TensorsState,
    _phase: &PhaseState,
    _state: &mut TensorPanelState,
    _ui: &mut egui::Ui,
) -> Option<Action> {
    None
}

pub fn apply(_app: &mut App, action: Action) {
    match action {}
}
