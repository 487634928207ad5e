//! The status bar: what is open, what is loading, the last error, the view's cost.

use super::copyable::copyable_label;
use crate::app::App;

pub fn show(app: &mut App, tabs: &super::tabs::Tabs, ui: &mut egui::Ui) {
    // The right-hand figures are laid out first and the left side gets what is left, so a long
    // path is shortened (in the middle, keeping its root and its last folders) instead of being
    // drawn over them.
    let run = app.peek::<crate::app::run::RunState>();
    let npu = run.and_then(|r| r.env.npu.as_ref()).map(|npu| {
        let text = if npu.devices.is_empty() {
            "no NPU".to_string()
        } else {
            npu.summary()
        };
        (text, format!("{} (found by {})", npu.summary(), npu.source))
    });
    // The link of the tree on screen (a window has one open tree; tests run many links).
    let link = app
        .workspace
        .as_ref()
        .and_then(|ws| crate::app::remote_link(&ws.index.root));
    let mut reconnect = false;
    egui::containers::Sides::new()
        .shrink_left()
        .truncate()
        .show(
            ui,
            |ui| left(app, ui),
            |ui| reconnect = right(link, npu, tabs, ui),
        );
    if reconnect {
        app.reconnect();
    }
}

/// What the open phase is still loading, in the order it comes (`passes read 7/22 · laying
/// out`); `None` once it is complete. Opening something else cancels it.
fn phase_progress(ph: &crate::app::PhaseState) -> Option<String> {
    if ph.complete() || ph.layout_error.is_some() {
        return None;
    }
    let n = ph.passes.len();
    let read = ph
        .files
        .iter()
        .zip(&ph.load_errors)
        .filter(|(f, e)| f.is_some() || e.is_some())
        .count();
    let mut parts = vec![format!("passes read {read}/{n}")];
    if read == n {
        if ph.layout_passes.is_none() {
            parts.push("laying out".into());
        } else if ph.layout_next.is_some()
            || ph.layout.as_ref().is_some_and(|l| ph.fold_for(l).is_none())
        {
            parts.push("modules".into());
        }
        let diffs = ph.diffs.iter().skip(1).filter(|d| d.is_some()).count();
        if diffs + 1 < n {
            parts.push("diffs".into());
        }
    }
    Some(parts.join(" · "))
}

fn left(app: &mut App, ui: &mut egui::Ui) {
    if app.workspace.is_some() {
        live(app, ui);
    }
    if let Some(p) = &app.opening {
        let doing = app
            .opening_progress()
            .map(|p| p.line())
            .unwrap_or_else(|| format!("indexing {}", p.display()));
        crate::ui::loading::busy(ui, doing);
    } else if let Some(ws) = &app.workspace {
        let files = format!("  ·  {} files", ws.index.files_seen);
        let font = egui::TextStyle::Body.resolve(ui.style());
        let width = |t: &str| text_width(ui, t, &font);
        // Room for the file count and a warning badge after the path.
        let room = ui.available_width() - width(&files) - width("⚠ 99 warning(s)") - 24.0;
        let full = crate::app::display_path(&ws.index.root);
        let path = elide_middle(&full, room, width);
        ui.label(format!("{path}{files}")).on_hover_text(full);
        if let Some(doing) = app.phase.as_ref().and_then(phase_progress) {
            crate::ui::loading::busy(ui, doing);
        } else if !ws.facts_done {
            crate::ui::loading::busy(ui, format!("parsing graphs {}", ws.facts.len()));
        }
        if !ws.index.warnings.is_empty() {
            let all = ws.index.warnings.join("\n");
            let label = egui::RichText::new(format!("⚠ {} warning(s)", ws.index.warnings.len()))
                .color(ui.visuals().warn_fg_color);
            copyable_label(ui, label, &all);
        }
    }
    if let Some(e) = app.live.failed.as_ref().or(app.error.as_ref()) {
        let label = egui::RichText::new(e).color(ui.visuals().error_fg_color);
        copyable_label(ui, label, e);
    } else if let Some(n) = &app.notice {
        ui.label(n);
    }
}

/// `link`: the open tree's link to its server; `npu`: what the status bar says of the NPUs, and
/// its tooltip. True when the user asked to reconnect the link.
fn right(
    link: Option<crate::app::LinkStatus>,
    npu: Option<(String, String)>,
    tabs: &super::tabs::Tabs,
    ui: &mut egui::Ui,
) -> bool {
    let mut reconnect = false;
    if let Some(link) = link {
        reconnect = remote_link(&link, ui);
        ui.separator();
    }
    if let Some((text, hover)) = npu {
        ui.weak(text).on_hover_text(hover);
        ui.separator();
    }
    let Some(graph) = tabs
        .get::<super::tabs::graph_view::GraphTab>()
        .map(|t| &t.graph)
    else {
        return reconnect;
    };
    let (total, shown) = graph.counts();
    if total > 0 {
        let boxes = graph.box_count();
        let folded = if boxes > 0 {
            format!("  ·  {boxes} module boxes")
        } else {
            String::new()
        };
        ui.weak(format!(
            "{shown} nodes shown of {total} in all passes{folded}  ·  {:.1} ms/frame",
            graph.last_frame_ms
        ))
        .on_hover_text(
            "nodes of the pass on screen (inside boxes when folded), and the CPU time of the \
             graph view in the last frame",
        );
    }
    reconnect
}

/// `host · 12 ms · ↓1.2 MiB ↑40 KiB`, red with the reason while the link is down; true when the
/// user asks to reconnect.
fn remote_link(link: &crate::app::LinkStatus, ui: &mut egui::Ui) -> bool {
    let mb = crate::model::size::human_bytes;
    let text = format!(
        "{} · {:.0} ms · ↓{} ↑{}",
        link.host,
        link.rtt_ms,
        mb(link.bytes_in),
        mb(link.bytes_out)
    );
    if link.alive {
        let again = if link.reconnects > 0 {
            format!("; reconnected {} time(s)", link.reconnects)
        } else {
            String::new()
        };
        ui.weak(text).on_hover_text(format!(
            "connected through ssh to the fxray agent on {}: last round trip {:.1} ms, bytes \
             received and sent{again}",
            link.host, link.rtt_ms,
        ));
        return false;
    }
    let why = link
        .error
        .clone()
        .unwrap_or_else(|| "the link dropped; fxray reconnects on the next read".into());
    let label = egui::RichText::new(format!("{} · link down · reconnect", link.host))
        .color(ui.visuals().error_fg_color);
    ui.add(egui::Button::new(label).frame(false))
        .on_hover_text(format!(
            "{why}\nClick to connect again; the view stays as it is."
        ))
        .clicked()
}

fn text_width(ui: &egui::Ui, text: &str, font: &egui::FontId) -> f32 {
    ui.fonts_mut(|f| {
        f.layout_no_wrap(text.to_owned(), font.clone(), egui::Color32::WHITE)
            .size()
            .x
    })
}

/// `text` shortened to fit `max_width` by replacing its middle with `…`: the start and the end
/// of a path say the most (which tree, which run). Returns the text whole when it fits.
pub(crate) fn elide_middle(text: &str, max_width: f32, width: impl Fn(&str) -> f32) -> String {
    if width(text) <= max_width {
        return text.to_owned();
    }
    let chars: Vec<char> = text.chars().collect();
    let cut = |keep: usize| -> String {
        let tail = keep / 2;
        let head = keep - tail;
        let mut s: String = chars[..head].iter().collect();
        s.push('…');
        s.extend(&chars[chars.len() - tail..]);
        s
    };
    // The longest kept length that fits: width grows with `keep`, so bisect.
    let (mut lo, mut hi) = (0, chars.len() - 1);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if width(&cut(mid)) <= max_width {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    cut(lo)
}

/// Whether the folder is watched (and how), follow mode, and what landed unseen.
fn live(app: &mut App, ui: &mut egui::Ui) {
    use crate::app::live::WatchBackend;
    match &app.live.backend {
        Some(b @ WatchBackend::Native) => {
            let green = crate::ui::palette::OK;
            dot(ui, green);
            ui.colored_label(green, "live")
                .on_hover_text(format!("{b}: new files appear as they are written"));
        }
        Some(b @ WatchBackend::Remote { host, .. }) => {
            let green = crate::ui::palette::OK;
            dot(ui, green);
            ui.colored_label(green, "live").on_hover_text(format!(
                "{b}: new files appear as the server writes them ({host})"
            ));
        }
        Some(b @ WatchBackend::Polling { .. }) => {
            let warn = ui.visuals().warn_fg_color;
            dot(ui, warn);
            ui.colored_label(warn, "polling")
                .on_hover_text(b.to_string());
        }
        None if app.live.archive => {
            ui.weak("archive (read-only)").on_hover_text(
                "opened in place: its entries were read once into memory (large ones into \
                 fxray's cache folder); nothing is unpacked next to it, and it is not watched",
            );
        }
        None => {}
    }
    if app.live.backend.is_some() {
        let mut follow = app.live.follow;
        if ui
            .checkbox(&mut follow, "Follow")
            .on_hover_text("Jump to each new pass as it is written")
            .changed()
        {
            app.set_follow(follow);
        }
        if app.live.unseen > 0
            && ui
                .button(format!("{} new", app.live.unseen))
                .on_hover_text("Passes written since; click to show the newest")
                .clicked()
        {
            app.show_newest();
        }
        if !app.live.writing.is_empty() {
            ui.weak(format!("writing {}", app.live.writing.len()));
        }
    }
    ui.separator();
}

/// A small filled circle (the UI font has no reliable "●").
fn dot(ui: &mut egui::Ui, color: egui::Color32) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(8.0, 8.0), egui::Sense::hover());
    ui.painter().circle_filled(rect.center(), 3.5, color);
}

#[cfg(test)]
mod tests {
    use super::elide_middle;

    #[test]
    fn keeps_both_ends_and_fits() {
        let w = |s: &str| s.chars().count() as f32;
        let p = "/home/dev/runs/torch_compile_debug/run_2026_11_29_12_04_56-pid_3064";
        assert_eq!(elide_middle(p, 100.0, w), p);
        let e = elide_middle(p, 21.0, w);
        assert_eq!(e, "/home/dev/…6-pid_3064");
        assert_eq!(w(&e), 21.0);
        assert_eq!(elide_middle(p, 0.0, w), "…");
    }
}
