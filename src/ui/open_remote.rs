//! File ▸ Open remote…: a small window that takes `ssh://[user@]host[:port]/path` and opens it
//! through the agent on that host (the connect is a job: the window never waits for ssh).

use crate::app::App;

#[derive(Default)]
pub struct OpenRemote {
    /// Shown while `Some`: the address being typed.
    text: Option<String>,
    error: Option<String>,
}

impl OpenRemote {
    pub fn ask(&mut self) {
        self.text.get_or_insert_with(|| "ssh://".to_string());
        self.error = None;
    }

    pub fn show(&mut self, app: &mut App, ctx: &egui::Context) {
        let Some(text) = &mut self.text else { return };
        let mut open = true;
        let mut go = false;
        egui::Window::new("Open remote")
            .collapsible(false)
            .resizable(false)
            .open(&mut open)
            .show(ctx, |ui| {
                ui.label("A tree on a server, read there by `fxray agent` over ssh:");
                let edit = ui.add(
                    egui::TextEdit::singleline(text)
                        .desired_width(420.0)
                        .hint_text("ssh://user@npu-host/home/user/torch_compile_debug"),
                );
                let entered = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
                ui.weak(
                    "ssh is the system's: ~/.ssh/config, ProxyJump and agents apply. fxray must \
                     be installed on the server (`fxray agent --print-install`).",
                );
                if let Some(e) = &self.error {
                    ui.colored_label(ui.visuals().error_fg_color, e);
                }
                go = ui.button("Open").clicked() || entered;
            });
        if go {
            match app.open_remote(text) {
                Ok(()) => self.text = None,
                Err(e) => self.error = Some(e),
            }
        } else if !open {
            self.text = None;
        }
    }
}
