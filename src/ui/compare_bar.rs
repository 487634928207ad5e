//! (being written) Choosing what the pass on screen is compared with, and "find the first pass
//! where …".
use crate::app::App;

#[derive(Default)]
pub struct CompareBarState {}

pub fn show(_app: &mut App, _state: &mut CompareBarState, _show_text_diff: &mut bool, _ui: &mut egui::Ui) {}
