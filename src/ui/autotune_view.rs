//! AscendC autotune: fused kernels, their candidates and the winner (issue 9).

use crate::app::App;

#[derive(Default)]
pub struct AutotuneViewState {}

pub fn show(_app: &mut App, _state: &mut AutotuneViewState, ui: &mut egui::Ui) {
    ui.weak("No autotune evidence found in this folder.");
}
