//! Native file dialogs without freezing the window: each dialog runs on its own thread
//! (rfd blocks until the user answers) and its answer is picked up on a later frame.

use crate::app::App;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, channel};

/// What to do with the path the user picks.
#[derive(Debug, Clone, Copy)]
pub enum Purpose {
    Open,
    /// A packed debug tree (.tar.gz, .tgz, .tar, .zip), opened in place.
    OpenArchive,
    ExportSvg {
        dark: bool,
    },
    ExportPng {
        dark: bool,
    },
    /// The golden run to compare the open one with: a dump, run or archive folder…
    Golden,
    /// …or msprobe's compare CSV, or an archive.
    GoldenFile,
}

#[derive(Default)]
pub struct Dialogs {
    pending: Option<(Purpose, Receiver<Option<PathBuf>>)>,
    /// File ▸ Open remote… (a window of fxray's own: there is no native picker for it).
    pub remote: super::open_remote::OpenRemote,
}

impl Dialogs {
    pub fn ask(&mut self, purpose: Purpose, ctx: &egui::Context, suggested_name: String) {
        if self.pending.is_some() {
            return;
        }
        let (tx, rx) = channel();
        let ctx = ctx.clone();
        std::thread::spawn(move || {
            let picked = match purpose {
                Purpose::Open => rfd::FileDialog::new()
                    .set_title("Open a torch_compile_debug folder")
                    .pick_folder(),
                Purpose::OpenArchive => rfd::FileDialog::new()
                    .set_title("Open a packed debug tree (opened in place, not unpacked)")
                    .add_filter("Archives", &["gz", "tgz", "tar", "zip"])
                    .pick_file(),
                Purpose::ExportSvg { .. } => rfd::FileDialog::new()
                    .set_title("Export the graph as SVG")
                    .set_file_name(format!("{suggested_name}.svg"))
                    .add_filter("SVG", &["svg"])
                    .save_file(),
                Purpose::Golden => rfd::FileDialog::new()
                    .set_title("Compare with golden: a dump, an msprobe dump or a run folder")
                    .pick_folder(),
                Purpose::GoldenFile => rfd::FileDialog::new()
                    .set_title("Compare with golden: msprobe's compare_result_*.csv, or an archive")
                    .add_filter("CSV or archive", &["csv", "gz", "tgz", "tar", "zip"])
                    .pick_file(),
                Purpose::ExportPng { .. } => rfd::FileDialog::new()
                    .set_title("Export the graph as PNG")
                    .set_file_name(format!("{suggested_name}.png"))
                    .add_filter("PNG", &["png"])
                    .save_file(),
            };
            let _ = tx.send(picked);
            ctx.request_repaint();
        });
        self.pending = Some((purpose, rx));
    }

    /// Opens the dialog a view asked for through the navigation queue (`Nav::PickGolden`: a
    /// view without the window's state at hand).
    pub fn follow_requests(&mut self, app: &mut App, ctx: &egui::Context) {
        let asked = app.nav.take(|r| match r {
            crate::app::Nav::PickGolden { file } => Some(*file),
            _ => None,
        });
        match asked {
            Some(true) => self.ask(Purpose::GoldenFile, ctx, String::new()),
            Some(false) => self.ask(Purpose::Golden, ctx, String::new()),
            None => {}
        }
    }

    /// Acts on an answered dialog. Call once per frame.
    pub fn poll(&mut self, app: &mut App) {
        let Some((purpose, rx)) = &self.pending else {
            return;
        };
        let Ok(answer) = rx.try_recv() else { return };
        let purpose = *purpose;
        self.pending = None;
        let Some(path) = answer else { return };
        match purpose {
            Purpose::Open | Purpose::OpenArchive => app.open(&path),
            Purpose::Golden | Purpose::GoldenFile => compare_with_golden(app, &path),
            Purpose::ExportSvg { dark } => app.export_current(path, false, dark),
            Purpose::ExportPng { dark } => app.export_current(path, true, dark),
        }
    }
}

/// Compares the open run with the golden the user gave (picked, or shift-dropped), and shows
/// the Accuracy tab.
pub fn compare_with_golden(app: &mut App, golden: &std::path::Path) {
    let (acc, mut cx) = app.part::<crate::app::accuracy::AccuracyState>();
    acc.compare_with_golden(&mut cx, golden);
    cx.nav
        .push(crate::app::Nav::ShowTab(crate::app::TabId::ACCURACY));
}
