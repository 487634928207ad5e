//! The `output_code.py` viewer: the phase's generated code with Python highlighting and line
//! numbers, opened at the line the inspector asks for (`Nav::CodeLine`), with a find box.
//!
//! Files reach a megabyte, so only the visible rows are laid out (`ScrollArea::show_rows`) and
//! each row is highlighted on its own (egui_extras memoises per line). Find results are cached
//! and recomputed only when the query or the file changes.

use crate::app::App;
use crate::model::output_code::OutputCodeIndex;
use egui::{RichText, TextStyle};
use egui_extras::syntax_highlighting::{CodeTheme, highlight};
use std::sync::Arc;

/// View state of the code window.
#[derive(Default)]
pub struct CodeViewState {
    /// The find box text.
    pub query: String,
    /// The file and query `matches` were computed for.
    searched: Option<(Arc<OutputCodeIndex>, String)>,
    /// 1-based lines containing `query` (ignoring ASCII case), ascending.
    matches: Vec<usize>,
    /// Index into `matches` of the match on screen.
    current: Option<usize>,
    /// The line shown highlighted (last jump or find result).
    highlighted: Option<usize>,
    /// Scroll to this line on the next frame.
    scroll_to: Option<usize>,
}

impl CodeViewState {
    /// The line shown highlighted, 1-based.
    pub fn highlighted_line(&self) -> Option<usize> {
        self.highlighted
    }

    /// Lines matching the find box, 1-based.
    pub fn matches(&self) -> &[usize] {
        &self.matches
    }

    /// Highlights line `n` and scrolls it into view.
    pub fn go_to(&mut self, n: usize) {
        self.highlighted = Some(n);
        self.scroll_to = Some(n);
        self.current = self.matches.binary_search(&n).ok();
    }

    /// Recomputes the matches when the file or the query changed. A new query jumps to its
    /// first match at or after the highlighted line; a new file alone does not move the view.
    fn refresh(&mut self, code: &Arc<OutputCodeIndex>) {
        let (same_file, same_query) = match &self.searched {
            Some((c, q)) => (Arc::ptr_eq(c, code), *q == self.query),
            None => (false, false),
        };
        if same_file && same_query {
            return;
        }
        if !same_file {
            self.highlighted = None;
        }
        self.matches = find_lines(code, &self.query);
        self.searched = Some((code.clone(), self.query.clone()));
        self.current = self
            .highlighted
            .and_then(|h| self.matches.binary_search(&h).ok());
        if !same_query && !self.query.is_empty() {
            let from = self.highlighted.unwrap_or(1);
            let i = self.matches.partition_point(|&l| l < from);
            self.jump_to_match(if i < self.matches.len() { i } else { 0 });
        }
    }

    fn jump_to_match(&mut self, i: usize) {
        if let Some(&line) = self.matches.get(i) {
            self.current = Some(i);
            self.highlighted = Some(line);
            self.scroll_to = Some(line);
        }
    }

    /// Moves to the next (`forward`) or previous match, wrapping around.
    fn step_match(&mut self, forward: bool) {
        let n = self.matches.len();
        if n == 0 {
            return;
        }
        let i = match (self.current, forward) {
            (Some(i), true) => (i + 1) % n,
            (Some(i), false) => (i + n - 1) % n,
            // No current match: the first one after (or before) the highlighted line.
            (None, true) => {
                let from = self.highlighted.unwrap_or(0);
                self.matches.partition_point(|&l| l <= from) % n
            }
            (None, false) => {
                let from = self.highlighted.unwrap_or(usize::MAX);
                self.matches
                    .partition_point(|&l| l < from)
                    .checked_sub(1)
                    .unwrap_or(n - 1)
            }
        };
        self.jump_to_match(i);
    }
}

/// Draws the code window while `open`; the window's close button clears it.
pub fn window(app: &mut App, open: &mut bool, state: &mut CodeViewState, ctx: &egui::Context) {
    egui::Window::new("output_code.py")
        .open(open)
        .default_size([780.0, 560.0])
        .vscroll(false)
        .show(ctx, |ui| body(app, state, ui));
}

fn body(app: &mut App, state: &mut CodeViewState, ui: &mut egui::Ui) {
    let Some(ph) = &mut app.phase else {
        ui.weak("No graph open.");
        return;
    };
    if ph.output_code_path.is_none() {
        ui.weak("This phase has no output_code.py.");
        return;
    }
    let Some(code) = super::loading::show(ui, &ph.output_code, "Reading output_code.py…").cloned()
    else {
        return;
    };
    state.refresh(&code);
    // Taken only once the code is here, so a jump asked for while it loads is not lost.
    if let Some(n) = app.nav.take(|r| match r {
        crate::app::Nav::CodeLine(n) => Some(*n),
        _ => None,
    }) {
        state.go_to(n);
    }
    let path = ph
        .output_code_path
        .as_deref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    toolbar(ui, state, &code, &path);
    ui.separator();
    code_rows(ui, state, &code);
}

/// Any text file in the same viewer (find box, line numbers): used for a kernel's files.
pub(super) fn text_body(
    ui: &mut egui::Ui,
    state: &mut CodeViewState,
    code: &Arc<OutputCodeIndex>,
    path: &str,
) {
    state.refresh(code);
    toolbar(ui, state, code, path);
    ui.separator();
    code_rows(ui, state, code);
}

fn toolbar(ui: &mut egui::Ui, state: &mut CodeViewState, code: &Arc<OutputCodeIndex>, path: &str) {
    ui.horizontal(|ui| {
        let edit = egui::TextEdit::singleline(&mut state.query)
            .hint_text("find")
            .desired_width(220.0);
        let resp = ui.add(edit);
        let enter = resp.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        state.refresh(code);
        if enter {
            let back = ui.input(|i| i.modifiers.shift);
            state.step_match(!back);
            resp.request_focus();
        }
        let has = !state.matches.is_empty();
        if ui
            .add_enabled(has, egui::Button::new("⏶"))
            .on_hover_text("previous match (Shift+Enter)")
            .clicked()
        {
            state.step_match(false);
        }
        if ui
            .add_enabled(has, egui::Button::new("⏷"))
            .on_hover_text("next match (Enter)")
            .clicked()
        {
            state.step_match(true);
        }
        if !state.query.is_empty() {
            let pos = state
                .current
                .map_or("-".to_string(), |i| (i + 1).to_string());
            ui.label(format!("{pos}/{} lines", state.matches.len()));
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            ui.weak(format!("{} lines", code.line_count()))
                .on_hover_text(path);
        });
    });
}

/// How a row is marked.
#[derive(Clone, Copy, PartialEq)]
enum Mark {
    None,
    /// Contains the find text.
    Match,
    /// The line jumped to.
    Current,
}

fn code_rows(ui: &mut egui::Ui, state: &mut CodeViewState, code: &OutputCodeIndex) {
    let theme = CodeTheme::from_style(ui.style());
    let row_h = ui.text_style_height(&TextStyle::Monospace);
    let total = code.line_count();
    let digits = total.to_string().len();
    let mut area = egui::ScrollArea::both()
        .id_salt("output_code_rows")
        .auto_shrink(false);
    if let Some(line) = state.scroll_to.take() {
        // A third of the way down, so the lines before it give context.
        let y = line.saturating_sub(1) as f32 * (row_h + ui.spacing().item_spacing.y);
        area = area.vertical_scroll_offset((y - ui.available_height() / 3.0).max(0.0));
    }
    area.show_rows(ui, row_h, total, |ui, rows| {
        for i in rows {
            let n = i + 1;
            let mark = if state.highlighted == Some(n) {
                Mark::Current
            } else if state.matches.binary_search(&n).is_ok() {
                Mark::Match
            } else {
                Mark::None
            };
            code_row(
                ui,
                &theme,
                code.line(n).unwrap_or(""),
                n,
                digits,
                mark,
                row_h,
            );
        }
    });
}

/// One line: its number, then the highlighted code; exactly `row_h` tall so `show_rows` can
/// place rows by arithmetic.
fn code_row(
    ui: &mut egui::Ui,
    theme: &CodeTheme,
    text: &str,
    n: usize,
    digits: usize,
    mark: Mark,
    row_h: f32,
) {
    // Reserve the background's place in the paint order, fill it once the row's rect is known.
    let bg = ui.painter().add(egui::Shape::Noop);
    let size = egui::vec2(ui.available_width(), row_h);
    let row = ui.allocate_ui_with_layout(
        size,
        egui::Layout::left_to_right(egui::Align::Center),
        |ui| {
            let number = RichText::new(format!("{n:>digits$} ")).monospace().weak();
            ui.add(egui::Label::new(number).selectable(false));
            let job = highlight(ui.ctx(), ui.style(), theme, text, "py");
            ui.add(egui::Label::new(job).selectable(true).extend());
        },
    );
    let fill = match mark {
        Mark::None => return,
        Mark::Match => ui.visuals().selection.bg_fill.gamma_multiply(0.2),
        Mark::Current => ui.visuals().selection.bg_fill.gamma_multiply(0.5),
    };
    let rect = row.response.rect;
    // Across the whole visible width, however short the line.
    let rect = rect.union(egui::Rect::from_x_y_ranges(
        ui.clip_rect().x_range(),
        rect.y_range(),
    ));
    ui.painter()
        .set(bg, egui::Shape::rect_filled(rect, 0.0, fill));
}

/// 1-based lines of `code` containing `query`, ignoring ASCII case.
fn find_lines(code: &OutputCodeIndex, query: &str) -> Vec<usize> {
    if query.is_empty() {
        return Vec::new();
    }
    (1..=code.line_count())
        .filter(|&n| code.line(n).is_some_and(|l| contains_ignore_case(l, query)))
        .collect()
}

/// `needle` occurs in `hay`, ASCII letters compared without case; no allocation, so filters
/// can run over every record of a large log.
pub(super) fn contains_ignore_case(hay: &str, needle: &str) -> bool {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    if n.is_empty() {
        return true;
    }
    h.len() >= n.len() && h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index() -> Arc<OutputCodeIndex> {
        Arc::new(OutputCodeIndex::new("a = 1\nB = a\nc = 2\nd = A\n"))
    }

    #[test]
    fn finds_lines_ignoring_case() {
        assert_eq!(find_lines(&index(), "a"), vec![1, 2, 4]);
        assert!(find_lines(&index(), "").is_empty());
        assert!(contains_ignore_case("Hello", "hELL"));
        assert!(!contains_ignore_case("He", "hello"));
    }

    #[test]
    fn next_and_previous_wrap() {
        let code = index();
        let mut s = CodeViewState {
            query: "a".into(),
            ..Default::default()
        };
        s.refresh(&code);
        assert_eq!(s.highlighted_line(), Some(1));
        s.step_match(true);
        assert_eq!(s.highlighted_line(), Some(2));
        s.step_match(true);
        s.step_match(true);
        assert_eq!(s.highlighted_line(), Some(1), "wraps to the first match");
        s.step_match(false);
        assert_eq!(s.highlighted_line(), Some(4), "wraps to the last match");
    }

    #[test]
    fn new_query_starts_at_highlighted_line() {
        let code = index();
        let mut s = CodeViewState::default();
        s.refresh(&code);
        s.go_to(3);
        s.query = "a".into();
        s.refresh(&code);
        assert_eq!(s.highlighted_line(), Some(4));
    }
}
