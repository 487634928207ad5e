//! Text the user may need elsewhere (an error to paste into a bug report or a chat): a click,
//! or Copy in its context menu, puts it on the clipboard.

/// A label showing `shown` whose click (or Copy in its right-click menu) copies `text`; its
/// tooltip is `text` and says so.
pub fn copyable_label(ui: &mut egui::Ui, shown: egui::RichText, text: &str) -> egui::Response {
    let resp = ui
        .add(egui::Label::new(shown).sense(egui::Sense::click()))
        .on_hover_text(format!("{text}\n\nClick to copy"));
    if resp.clicked() {
        resp.ctx.copy_text(text.to_string());
    }
    resp.context_menu(|ui| {
        if ui.button("Copy").clicked() {
            ui.ctx().copy_text(text.to_string());
            ui.close();
        }
    });
    resp
}
