//! (being written) The text diff window.
use crate::app::App;

#[derive(Default)]
pub struct TextDiffState {}

pub fn window(_app: &mut App, _state: &mut TextDiffState, _open: &mut bool, _ctx: &egui::Context) {}
