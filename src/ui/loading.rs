//! The one way a panel draws something loaded in the background: a spinner (and what is being
//! done) while it loads, the reason in the error colour when it failed, the value when ready.

use crate::app::Loading;

/// Draws `state` unless it is ready, and returns the value when it is. `doing` ("Reading
/// output_code.py…") is written beside the spinner; empty, the spinner stands alone. Idle draws
/// nothing.
pub fn show<'a, T>(ui: &mut egui::Ui, state: &'a Loading<T>, doing: &str) -> Option<&'a T> {
    match state {
        Loading::Ready(v) => Some(v),
        Loading::Idle => None,
        Loading::Loading => {
            busy(ui, doing);
            None
        }
        Loading::Failed(e) => {
            ui.colored_label(ui.visuals().error_fg_color, e);
            None
        }
    }
}

/// The one look of "working on it": a spinner and, unless empty, what is being done. For work
/// whose state is not a [`Loading`] (a count in progress, old values kept while reloading).
pub fn busy(ui: &mut egui::Ui, doing: impl Into<egui::RichText>) {
    let doing = doing.into();
    if doing.is_empty() {
        ui.spinner();
        return;
    }
    ui.horizontal(|ui| {
        ui.spinner();
        ui.weak(doing);
    });
}
