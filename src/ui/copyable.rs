//! Text the user may need elsewhere (an error to paste into a bug report or a chat): a click,
//! or Copy in its context menu, puts it on the clipboard.

/// Makes `resp` copy `text`: on a click, or through its right-click menu.
pub fn copyable(resp: egui::Response, text: &str) -> egui::Response {
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
