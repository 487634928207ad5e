//! egui panels over [`App`]. Nothing here reads or parses a file: panels show state and issue
//! commands (`app.open(..)`, selections). View-only state (zoom, the egui_graphs graph, search
//! text) lives in [`ViewState`], apart from the app's data.

mod code_view;
mod compare_bar;
mod copyable;
mod dialogs;
pub mod fonts;
mod inspector;
mod loading;
mod logs_panel;
mod open_remote;
pub mod palette;
pub mod settings;
pub mod shortcuts;
mod status_bar;
pub mod tab;
pub mod tabs;
mod tensor_panel;
mod text_diff_view;
mod tree;

/// The tabs' ids, for the window's users outside `ui` (the UI benchmarks of `cli`).
pub use crate::app::TabId;
pub use tabs::graph_view::{GraphViewState, Viewport};

use crate::app::{self, App};
use crate::error::{Error, Result};
use std::path::PathBuf;

/// View state of the whole window: everything that is about *how* things are shown. The
/// centre's views keep theirs in their [`tab::Tab`]; the rest is the panels around them.
#[derive(Default)]
pub struct ViewState {
    pub text_diff: text_diff_view::TextDiffState,
    pub show_text_diff: bool,
    pub dialogs: dialogs::Dialogs,
    pub show_logs: bool,
    pub show_code: bool,
    pub logs: logs_panel::LogsPanelState,
    pub code: code_view::CodeViewState,
    pub inspector: inspector::InspectorState,
    pub tensors: tensor_panel::TensorPanelState,
    /// The views of the centre of the window.
    pub tabs: tabs::Tabs,
    /// The theme the user chose, if they chose one (saved across restarts).
    pub theme: Option<egui::Theme>,
    /// Help ▸ Keyboard shortcuts is open.
    pub show_shortcuts: bool,
}

impl ViewState {
    /// The id of the tab in the centre.
    pub fn central(&self) -> app::TabId {
        self.tabs.current()
    }

    pub fn graph(&self) -> &GraphViewState {
        &self
            .tabs
            .get::<tabs::graph_view::GraphTab>()
            .expect("registered")
            .graph
    }

    pub fn graph_mut(&mut self) -> &mut GraphViewState {
        &mut self
            .tabs
            .get_mut::<tabs::graph_view::GraphTab>()
            .expect("registered")
            .graph
    }

    pub fn timeline(&self) -> &tabs::timeline_view::TimelineViewState {
        self.tabs
            .get::<tabs::timeline_view::TimelineViewState>()
            .expect("registered")
    }

    pub fn timeline_mut(&mut self) -> &mut tabs::timeline_view::TimelineViewState {
        self.tabs
            .get_mut::<tabs::timeline_view::TimelineViewState>()
            .expect("registered")
    }

    pub fn autotune(&self) -> &tabs::autotune_view::AutotuneViewState {
        self.tabs
            .get::<tabs::autotune_view::AutotuneViewState>()
            .expect("registered")
    }

    pub fn autotune_mut(&mut self) -> &mut tabs::autotune_view::AutotuneViewState {
        self.tabs
            .get_mut::<tabs::autotune_view::AutotuneViewState>()
            .expect("registered")
    }

    pub fn compiles_view_mut(&mut self) -> &mut tabs::compiles_view::CompilesViewState {
        self.tabs
            .get_mut::<tabs::compiles_view::CompilesViewState>()
            .expect("registered")
    }
}

/// The app and its views: what the native window and the UI tests drive.
#[derive(Default)]
pub struct Fxray {
    pub app: App,
    pub view: ViewState,
}

impl Fxray {
    pub fn new(app: App) -> Self {
        Fxray {
            app,
            view: ViewState::default(),
        }
    }

    /// The window's state with `path` being opened, as at launch (`fxray bench open`).
    pub fn opening(path: &std::path::Path) -> Self {
        let mut app = App::new();
        app.open(path);
        Fxray::new(app)
    }

    /// What the command line asks at launch: `path` opened (a capture as a timeline), and
    /// compared with `golden` once it is.
    pub fn launch(&mut self, path: &std::path::Path, golden: Option<&std::path::Path>) {
        if app::timeline::is_trace_file(path) {
            self.app.open_trace_file(path);
        } else {
            self.app.open_with_golden(path, golden);
        }
    }

    /// The window's state driven without a window (benchmarks): `open` asks for something,
    /// then background work runs until idle; `None` when it did not finish in `timeout`.
    pub fn headless(open: impl FnOnce(&mut App), timeout: std::time::Duration) -> Option<Self> {
        let mut app = App::new();
        open(&mut app);
        app.wait_idle(timeout).then(|| Fxray::new(app))
    }

    /// Draws the whole window for one frame.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        show(&mut self.app, &mut self.view, ui);
    }
}

/// Draws the whole window. Used by the native app and by UI tests.
pub fn show(app: &mut App, view: &mut ViewState, ui: &mut egui::Ui) {
    fonts::install_once(ui.ctx());
    app.poll();
    view.dialogs.poll(app);
    view.dialogs.remote.show(app, ui.ctx());
    handle_dropped_files(app, ui.ctx());
    // The tabs draw with the rest of the window's state at hand; they are put back after.
    let mut tabs = std::mem::replace(&mut view.tabs, tabs::Tabs::placeholder());
    tabs.follow_requests(app);
    egui::Panel::top("menu").show(ui, |ui| menu_bar(app, view, ui));
    for action in shortcuts::pressed(shortcuts::WINDOW, ui.ctx()) {
        match action {
            shortcuts::Window::OpenFolder => {
                view.dialogs
                    .ask(dialogs::Purpose::Open, ui.ctx(), String::new());
            }
            shortcuts::Window::ShowShortcuts => view.show_shortcuts = true,
        }
    }
    if view.show_shortcuts {
        shortcuts::window(&mut view.show_shortcuts, ui.ctx());
    }
    egui::Panel::bottom("status").show(ui, |ui| status_bar::show(app, &tabs, ui));
    egui::Panel::left("tree")
        .resizable(true)
        .default_size(330.0)
        .show(ui, |ui| tree::show(app, view, &mut tabs, ui));
    egui::Panel::right("inspector")
        .resizable(true)
        .default_size(380.0)
        .show(ui, |ui| {
            inspector::show(
                app,
                &mut view.inspector,
                &mut view.tensors,
                ui,
                &mut view.show_code,
            );
        });
    if view.show_logs {
        egui::Panel::bottom("logs")
            .resizable(true)
            .default_size(260.0)
            .show(ui, |ui| logs_panel::show(app, &mut view.logs, ui));
    }
    if view.show_text_diff {
        text_diff_view::window(app, &mut view.text_diff, &mut view.show_text_diff, ui.ctx());
    }
    if view.show_code {
        code_view::window(app, &mut view.show_code, &mut view.code, ui.ctx());
    }
    egui::CentralPanel::default().show(ui, |ui| {
        tabs.bar(ui);
        tabs.show_current(app, view, ui);
    });
    // A request made while drawing (a click that shows another tab) is followed at once.
    tabs.follow_requests(app);
    view.tabs = tabs;
    view.dialogs.follow_requests(app, ui.ctx());
    if app.live_settling() {
        // Files in their grace period are judged again without any event to wake us.
        ui.ctx()
            .request_repaint_after(std::time::Duration::from_millis(500));
    }
    if app.busy() {
        // Background messages wake us, but a spinner needs frames too.
        ui.ctx()
            .request_repaint_after(std::time::Duration::from_millis(100));
    }
}

fn menu_bar(app: &mut App, view: &mut ViewState, ui: &mut egui::Ui) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| {
            if ui.button("Open folder…").clicked() {
                view.dialogs
                    .ask(dialogs::Purpose::Open, ui.ctx(), String::new());
                ui.close();
            }
            if ui.button("Open archive…").clicked() {
                view.dialogs
                    .ask(dialogs::Purpose::OpenArchive, ui.ctx(), String::new());
                ui.close();
            }
            if ui.button("Open remote…").clicked() {
                view.dialogs.remote.ask();
                ui.close();
            }
            if ui.button("Compare with golden…").clicked() {
                view.dialogs
                    .ask(dialogs::Purpose::Golden, ui.ctx(), String::new());
                ui.close();
            }
            if ui
                .button("Compare with msprobe's CSV or an archive…")
                .clicked()
            {
                view.dialogs
                    .ask(dialogs::Purpose::GoldenFile, ui.ctx(), String::new());
                ui.close();
            }
            if ui.button("Open sample run").clicked() {
                app.open(&app::sample_path());
                ui.close();
            }
            ui.separator();
            ui.label("Recent");
            let recent = app.recent.clone();
            for p in recent {
                if ui.button(app::display_path(&p)).clicked() {
                    app.open(&p);
                    ui.close();
                }
            }
        });
        ui.menu_button("Export", |ui| {
            let name = app
                .phase
                .as_ref()
                .and_then(|p| p.current_path())
                .and_then(|p| p.file_stem())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "graph".into());
            let ready = app
                .phase
                .as_ref()
                .is_some_and(|p| p.drawable() && p.current_file().is_some());
            let dark = ui.visuals().dark_mode;
            if ui
                .add_enabled(ready, egui::Button::new("Current pass as SVG…"))
                .clicked()
            {
                view.dialogs
                    .ask(dialogs::Purpose::ExportSvg { dark }, ui.ctx(), name.clone());
                ui.close();
            }
            if ui
                .add_enabled(ready, egui::Button::new("Current pass as PNG…"))
                .clicked()
            {
                view.dialogs
                    .ask(dialogs::Purpose::ExportPng { dark }, ui.ctx(), name);
                ui.close();
            }
        });
        ui.menu_button("View", |ui| {
            let dark = ui.visuals().dark_mode;
            if ui
                .button(if dark { "Light theme" } else { "Dark theme" })
                .clicked()
            {
                let theme = if dark {
                    egui::Theme::Light
                } else {
                    egui::Theme::Dark
                };
                ui.ctx().set_theme(theme);
                view.theme = Some(theme);
                ui.close();
            }
            ui.checkbox(&mut view.show_logs, "Logs panel");
            ui.checkbox(&mut view.show_code, "output_code.py");
        });
        ui.menu_button("Help", |ui| {
            if ui.button("Keyboard shortcuts").clicked() {
                view.show_shortcuts = true;
                ui.close();
            }
        });
    });
}

fn handle_dropped_files(app: &mut App, ctx: &egui::Context) {
    let (dropped, shift): (Vec<PathBuf>, bool) = ctx.input(|i| {
        let paths = i
            .raw
            .dropped_files
            .iter()
            .map(|f| f.path().to_path_buf())
            .collect();
        (paths, i.modifiers.shift)
    });
    if let Some(p) = dropped.into_iter().next() {
        // Shift held: the dropped folder is the golden run to compare the open one with.
        if shift && app.workspace.is_some() {
            dialogs::compare_with_golden(app, &p);
        } else if app::timeline::is_trace_file(&p) {
            app.open_trace_file(&p);
        } else {
            app.open(&p);
        }
    }
}

impl eframe::App for Fxray {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        Fxray::ui(self, ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        self.save_settings(storage);
    }
}

/// Opens the window on `path`, or on the bundled sample when none is given; with `golden`,
/// compared with that golden run once open.
pub fn run_native(path: Option<PathBuf>, golden: Option<PathBuf>) -> Result<()> {
    let path = path.unwrap_or_else(app::sample_path);
    if golden.is_some() && app::timeline::is_trace_file(&path) {
        return Err(Error::user(format!(
            "{}: a capture has no tensors to compare; --golden goes with a run or a dump",
            path.display()
        )));
    }
    for (p, what) in [(Some(&path), ""), (golden.as_ref(), "the golden ")] {
        if let Some(p) = p
            && !app::exists(p)
        {
            return Err(Error::user(format!(
                "{what}{}: no such file or folder",
                p.display()
            )));
        }
    }
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_inner_size([1400.0, 880.0])
            .with_title("fxray")
            .with_drag_and_drop(true),
        ..Default::default()
    };
    eframe::run_native(
        "fxray",
        options,
        Box::new(move |cc| {
            fonts::install_once(&cc.egui_ctx);
            let mut app = App::new();
            let ctx = cc.egui_ctx.clone();
            app.set_waker(std::sync::Arc::new(move || ctx.request_repaint()));
            let mut fx = Fxray::new(app);
            if let Some(storage) = cc.storage {
                fx.restore_settings(storage, &cc.egui_ctx);
            }
            fx.launch(&path, golden.as_deref());
            // NPUs and interpreters for the status bar and the Run panel.
            let (run, cx) = fx.app.part::<crate::app::run::RunState>();
            run.detect_environment(&cx);
            Ok(Box::new(fx))
        }),
    )
    .map_err(|e| Error::Internal(format!("could not open a window: {e}")))
}
