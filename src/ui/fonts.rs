//! The fonts every text is drawn with: egui's own, and DejaVu Sans Mono as the last fallback of
//! both families. egui's proportional font (Ubuntu Light) lacks arrows and geometric shapes the
//! UI writes (`→`, `▸`, `●`) and no bundled font has `✓` or U+FFFD (what invalid UTF-8 becomes);
//! without a fallback they show as empty boxes. `tests/it/fonts.rs` checks every non-ASCII
//! character in the source's strings against both families.

use egui::{FontData, FontDefinitions, FontFamily};
use std::sync::Arc;

const FALLBACK: &str = "DejaVuSansMono";

/// egui's default fonts with the fallback appended to every family.
pub fn definitions() -> FontDefinitions {
    let mut fonts = FontDefinitions::default();
    fonts.font_data.insert(
        FALLBACK.to_owned(),
        Arc::new(FontData::from_static(include_bytes!(
            "../../assets/fonts/DejaVuSansMono.ttf"
        ))),
    );
    for family in [FontFamily::Proportional, FontFamily::Monospace] {
        fonts
            .families
            .entry(family)
            .or_default()
            .push(FALLBACK.to_owned());
    }
    fonts
}

/// Installs [`definitions`] once per context (they take effect from the next frame).
pub fn install_once(ctx: &egui::Context) {
    let id = egui::Id::new("fxray.fonts.installed");
    if !ctx.data(|d| d.get_temp::<bool>(id).unwrap_or(false)) {
        ctx.set_fonts(definitions());
        ctx.data_mut(|d| d.insert_temp(id, true));
    }
}
