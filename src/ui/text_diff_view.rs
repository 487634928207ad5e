//! The text diff window: the line diff of the two graph files being compared (`app::text_diff`),
//! unified or side by side, unchanged stretches folded to 3 lines of context, old and new line
//! numbers, deleted lines red and inserted lines green with the changed words in a stronger tint.
//!
//! Files can be 10 MB: rows are virtualised (`ScrollArea::show_rows`) and the row model is
//! built once per diff (and per folding choice), not per frame.

use super::palette::{ADDED, REMOVED};
use crate::analysis::diff::{LineTag, TextDiffLine, hunks};
use crate::app::App;
use crate::app::phase::PhaseState;
use crate::app::text_diff::TextDiff;
use egui::text::{LayoutJob, TextFormat};
use egui::{Color32, RichText, UiBuilder};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Equal lines shown around each change.
const CONTEXT: usize = 3;

#[derive(Default)]
pub struct TextDiffState {
    /// Side by side instead of unified.
    pub side_by_side: bool,
    /// Every line, no folding.
    pub whole_file: bool,
    rows: Option<Rows>,
    /// The change the navigation buttons last went to.
    hunk: usize,
    /// Row to bring to the top on the next frame.
    scroll_to: Option<usize>,
}

/// The row model of one diff, for one folding choice.
struct Rows {
    lines: Arc<Vec<TextDiffLine>>,
    whole_file: bool,
    unified: Vec<Row>,
    split: Vec<SplitRow>,
    /// First row of each hunk in `unified` / `split`.
    hunk_unified: Vec<usize>,
    hunk_split: Vec<usize>,
    deleted: usize,
    inserted: usize,
    /// Longest line, in chars (width of the unified view).
    longest: usize,
    /// Highest line number of either file (width of the number columns).
    last_line: usize,
}

#[derive(Clone, Copy)]
enum Row {
    Line(usize),
    /// `n` equal lines not shown.
    Fold(usize),
}

#[derive(Clone, Copy)]
enum SplitRow {
    /// Old side, new side (indices into the diff lines).
    Pair(Option<usize>, Option<usize>),
    Fold(usize),
}

impl Rows {
    fn build(lines: Arc<Vec<TextDiffLine>>, whole_file: bool) -> Rows {
        let shown: Vec<Range<usize>> = hunks(&lines, CONTEXT);
        let ranges = if whole_file && !lines.is_empty() {
            std::iter::once(0..lines.len()).collect()
        } else {
            shown.clone()
        };
        let mut unified = Vec::new();
        let mut split = Vec::new();
        let mut starts_u = Vec::new();
        let mut starts_s = Vec::new();
        let mut pos = 0;
        let mut next_hunk = shown.iter().peekable();
        for r in &ranges {
            if r.start > pos {
                unified.push(Row::Fold(r.start - pos));
                split.push(SplitRow::Fold(r.start - pos));
            }
            let mut i = r.start;
            while i < r.end {
                if next_hunk.peek().is_some_and(|h| h.start <= i) {
                    next_hunk.next();
                    starts_u.push(unified.len());
                    starts_s.push(split.len());
                }
                if lines[i].tag == LineTag::Equal {
                    unified.push(Row::Line(i));
                    split.push(SplitRow::Pair(Some(i), Some(i)));
                    i += 1;
                    continue;
                }
                // A block of changed lines: deletions and insertions paired row by row.
                let mut j = i;
                let (mut dels, mut ins) = (Vec::new(), Vec::new());
                while j < r.end && lines[j].tag != LineTag::Equal {
                    unified.push(Row::Line(j));
                    match lines[j].tag {
                        LineTag::Delete => dels.push(j),
                        _ => ins.push(j),
                    }
                    j += 1;
                }
                for k in 0..dels.len().max(ins.len()) {
                    split.push(SplitRow::Pair(dels.get(k).copied(), ins.get(k).copied()));
                }
                i = j;
            }
            pos = r.end;
        }
        if pos < lines.len() && !ranges.is_empty() {
            unified.push(Row::Fold(lines.len() - pos));
            split.push(SplitRow::Fold(lines.len() - pos));
        }
        let deleted = lines.iter().filter(|l| l.tag == LineTag::Delete).count();
        let inserted = lines.iter().filter(|l| l.tag == LineTag::Insert).count();
        let longest = lines
            .iter()
            .map(|l| l.text.chars().count())
            .max()
            .unwrap_or(0);
        let last_line = lines
            .iter()
            .filter_map(|l| l.old_line.max(l.new_line))
            .max()
            .unwrap_or(1);
        Rows {
            lines,
            whole_file,
            unified,
            split,
            hunk_unified: starts_u,
            hunk_split: starts_s,
            deleted,
            inserted,
            longest,
            last_line,
        }
    }

    fn hunk_starts(&self, side_by_side: bool) -> &[usize] {
        if side_by_side {
            &self.hunk_split
        } else {
            &self.hunk_unified
        }
    }

    /// The row to scroll to for hunk `h`: the row above its first (the fold separator).
    fn scroll_row(&self, side_by_side: bool, h: usize) -> Option<usize> {
        let start = *self.hunk_starts(side_by_side).get(h)?;
        Some(start.saturating_sub(1))
    }
}

pub fn window(app: &mut App, state: &mut TextDiffState, open: &mut bool, ctx: &egui::Context) {
    egui::Window::new("Text diff")
        .id(egui::Id::new("fxray_text_diff"))
        .open(open)
        .default_size([1000.0, 640.0])
        // Below the compare bar and the graph toolbar, right of the tree.
        .default_pos(ctx.content_rect().left_top() + egui::vec2(340.0, 110.0))
        .resizable(true)
        .scroll(false)
        .show(ctx, |ui| contents(app, state, ui));
}

fn contents(app: &mut App, state: &mut TextDiffState, ui: &mut egui::Ui) {
    let Some(td) = app.peek::<TextDiff>().and_then(|t| t.shown.as_ref()) else {
        ui.weak("Nothing to diff yet: use \"Text diff\" above the graph.");
        return;
    };
    let (a, b) = (td.a.clone(), td.b.clone());
    header(ui, &a, &b);
    // The pass on screen moved on: offer to diff what is shown now.
    let wanted = app.phase.as_ref().and_then(PhaseState::text_diff_pair);
    if let Some((wa, wb)) = wanted
        && (wa != a || wb != b)
    {
        let mut update = false;
        ui.horizontal(|ui| {
            ui.colored_label(
                ui.visuals().warn_fg_color,
                "The graph on screen (or its A) changed since this diff was made.",
            );
            update = ui.button("Diff what is on screen").clicked();
        });
        if update {
            open(app);
            return;
        }
    }
    let Some(td) = app.peek::<TextDiff>().and_then(|t| t.shown.as_ref()) else {
        return;
    };
    let Some(lines) = super::loading::show(ui, &td.lines, "diffing the files…").cloned() else {
        return;
    };
    let stale = state
        .rows
        .as_ref()
        .is_none_or(|r| !Arc::ptr_eq(&r.lines, &lines) || r.whole_file != state.whole_file);
    if stale {
        let keep_place = state
            .rows
            .as_ref()
            .is_some_and(|r| Arc::ptr_eq(&r.lines, &lines));
        state.rows = Some(Rows::build(lines, state.whole_file));
        if !keep_place {
            state.hunk = 0;
        }
        state.scroll_to = state
            .rows
            .as_ref()
            .and_then(|r| r.scroll_row(state.side_by_side, state.hunk))
            .or(Some(0));
    }
    let Some(rows) = &state.rows else { return };
    toolbar(
        ui,
        state,
        rows.hunk_unified.len(),
        rows.deleted,
        rows.inserted,
    );
    ui.separator();
    let Some(rows) = &state.rows else { return };
    if rows.hunk_unified.is_empty() {
        ui.label("The two files are identical.");
        return;
    }
    let scroll_to = state.scroll_to.take();
    if state.side_by_side {
        split_view(ui, rows, scroll_to);
    } else {
        unified_view(ui, rows, scroll_to);
    }
}

/// Diffs what is on screen: the pass and its A.
pub(super) fn open(app: &mut App) {
    if let Some((a, b)) = app.phase.as_ref().and_then(PhaseState::text_diff_pair) {
        let (diff, cx) = app.part::<TextDiff>();
        diff.open(&cx, a, b);
    }
}

/// `A <path>` over `B <path>`, paths shown from where they differ.
fn header(ui: &mut egui::Ui, a: &Path, b: &Path) {
    let common: PathBuf = a
        .components()
        .zip(b.components())
        .take_while(|(x, y)| x == y)
        .map(|(x, _)| x)
        .collect();
    let short = |p: &Path| {
        let rel = p.strip_prefix(&common).unwrap_or(p);
        if rel.as_os_str().is_empty() {
            p.display().to_string()
        } else {
            rel.display().to_string()
        }
    };
    for (side, path, color) in [("A", a, REMOVED), ("B", b, ADDED)] {
        ui.horizontal(|ui| {
            ui.label(RichText::new(side).strong().color(color));
            ui.add(
                egui::Label::new(RichText::new(short(path)).monospace())
                    .selectable(true)
                    .truncate(),
            )
            .on_hover_text(path.display().to_string());
        });
    }
}

fn toolbar(ui: &mut egui::Ui, state: &mut TextDiffState, n_hunks: usize, del: usize, ins: usize) {
    let was_side_by_side = state.side_by_side;
    ui.horizontal(|ui| {
        ui.selectable_value(&mut state.side_by_side, false, "Unified");
        // The graph toolbar has a "Side by side" toggle too: this one says it is the text's.
        let r = ui.selectable_value(&mut state.side_by_side, true, "Side by side");
        r.widget_info(|| {
            egui::WidgetInfo::selected(
                egui::WidgetType::SelectableLabel,
                true,
                state.side_by_side,
                "Side by side (text diff)",
            )
        });
        ui.separator();
        if state.side_by_side != was_side_by_side {
            // The other view opens at the change this one was at.
            state.scroll_to = state
                .rows
                .as_ref()
                .and_then(|r| r.scroll_row(state.side_by_side, state.hunk));
        }
        ui.checkbox(&mut state.whole_file, "Whole file")
            .on_hover_text("Show every line instead of the changes with 3 lines of context");
        ui.separator();
        ui.label(RichText::new(format!("\u{2212}{del}")).color(REMOVED))
            .on_hover_text("lines deleted");
        ui.label(RichText::new(format!("+{ins}")).color(ADDED))
            .on_hover_text("lines inserted");
        ui.separator();
        if n_hunks > 0 {
            let prev = ui
                .add_enabled(state.hunk > 0, egui::Button::new("⏶ Previous change"))
                .clicked();
            let next = ui
                .add_enabled(state.hunk + 1 < n_hunks, egui::Button::new("⏷ Next change"))
                .clicked();
            if prev {
                state.hunk -= 1;
            }
            if next {
                state.hunk += 1;
            }
            ui.weak(format!("change {}/{n_hunks}", state.hunk + 1));
            if prev || next {
                state.scroll_to = state
                    .rows
                    .as_ref()
                    .and_then(|r| r.scroll_row(state.side_by_side, state.hunk));
            }
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Drawing

struct Style {
    font: egui::FontId,
    row_h: f32,
    char_w: f32,
    num_w: f32,
    weak: Color32,
    text: Color32,
    del_bg: Color32,
    del_span: Color32,
    ins_bg: Color32,
    ins_span: Color32,
}

impl Style {
    fn new(ui: &egui::Ui, rows: &Rows) -> Style {
        let font = egui::TextStyle::Monospace.resolve(ui.style());
        let (row_h, char_w) = ui
            .ctx()
            .fonts_mut(|f| (f.row_height(&font), f.glyph_width(&font, '0')));
        let digits = rows.last_line.max(1).to_string().len();
        let dark = ui.visuals().dark_mode;
        let tint = |c: Color32, a: u8| Color32::from_rgba_unmultiplied(c.r(), c.g(), c.b(), a);
        let (bg, span) = if dark { (40, 110) } else { (38, 95) };
        Style {
            row_h: row_h + 2.0,
            char_w,
            num_w: char_w * digits as f32 + 8.0,
            weak: ui.visuals().weak_text_color(),
            text: ui.visuals().text_color(),
            del_bg: tint(REMOVED, bg),
            del_span: tint(REMOVED, span),
            ins_bg: tint(ADDED, bg),
            ins_span: tint(ADDED, span),
            font,
        }
    }

    fn bg(&self, tag: LineTag) -> Option<Color32> {
        match tag {
            LineTag::Equal => None,
            LineTag::Delete => Some(self.del_bg),
            LineTag::Insert => Some(self.ins_bg),
        }
    }

    /// The line's text, its changed spans highlighted.
    fn job(&self, l: &TextDiffLine) -> LayoutJob {
        let plain = TextFormat::simple(self.font.clone(), self.text);
        let mut job = LayoutJob::default();
        let span_bg = match l.tag {
            LineTag::Delete => self.del_span,
            _ => self.ins_span,
        };
        let ok = l.spans.iter().all(|r| {
            r.end <= l.text.len()
                && l.text.is_char_boundary(r.start)
                && l.text.is_char_boundary(r.end)
        });
        let mut pos = 0;
        if ok {
            for r in &l.spans {
                // Re-indented whitespace is noise next to the words that changed.
                if r.start < pos || l.text[r.clone()].trim().is_empty() {
                    continue;
                }
                job.append(&l.text[pos..r.start], 0.0, plain.clone());
                let mut hi = plain.clone();
                hi.background = span_bg;
                job.append(&l.text[r.clone()], 0.0, hi);
                pos = r.end;
            }
        }
        job.append(&l.text[pos..], 0.0, plain);
        job
    }
}

fn number_cell(ui: &mut egui::Ui, st: &Style, n: Option<usize>) {
    let (rect, _) = ui.allocate_exact_size(egui::vec2(st.num_w, st.row_h), egui::Sense::hover());
    if let Some(n) = n {
        ui.painter().text(
            rect.right_center() - egui::vec2(4.0, 0.0),
            egui::Align2::RIGHT_CENTER,
            n.to_string(),
            st.font.clone(),
            st.weak,
        );
    }
}

fn sign_cell(ui: &mut egui::Ui, st: &Style, tag: Option<LineTag>) {
    let (rect, _) =
        ui.allocate_exact_size(egui::vec2(st.char_w * 2.0, st.row_h), egui::Sense::hover());
    let (s, c) = match tag {
        Some(LineTag::Delete) => ("\u{2212}", REMOVED),
        Some(LineTag::Insert) => ("+", ADDED),
        _ => return,
    };
    ui.painter().text(
        rect.center(),
        egui::Align2::CENTER_CENTER,
        s,
        st.font.clone(),
        c,
    );
}

fn fold_row(ui: &mut egui::Ui, st: &Style, rect: egui::Rect, n: usize) {
    ui.painter()
        .rect_filled(rect, 0.0, ui.visuals().faint_bg_color);
    ui.scope_builder(
        UiBuilder::new()
            .max_rect(rect)
            .layout(egui::Layout::left_to_right(egui::Align::Center)),
        |ui| {
            ui.set_min_size(rect.size());
            ui.add_space(st.num_w);
            ui.label(
                RichText::new(format!("… {n} unchanged lines …"))
                    .italics()
                    .color(st.weak),
            );
        },
    );
}

fn unified_view(ui: &mut egui::Ui, rows: &Rows, scroll_to: Option<usize>) {
    let st = Style::new(ui, rows);
    let width = (2.0 * st.num_w + 2.0 * st.char_w + rows.longest as f32 * st.char_w + 16.0)
        .max(ui.available_width());
    ui.spacing_mut().item_spacing = egui::vec2(0.0, 0.0);
    let mut area = egui::ScrollArea::both()
        .id_salt("text_diff_unified")
        .auto_shrink(false);
    if let Some(r) = scroll_to {
        area = area.vertical_scroll_offset(r as f32 * st.row_h);
    }
    area.show_rows(ui, st.row_h, rows.unified.len(), |ui, range| {
        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
        let clip = ui.clip_rect();
        for row in &rows.unified[range] {
            let top = ui.cursor().min;
            let rect = egui::Rect::from_min_size(top, egui::vec2(width, st.row_h));
            let i = match *row {
                Row::Fold(n) => {
                    fold_row(ui, &st, rect, n);
                    continue;
                }
                Row::Line(i) => i,
            };
            let l = &rows.lines[i];
            if let Some(bg) = st.bg(l.tag) {
                let full = egui::Rect::from_x_y_ranges(
                    rect.left().min(clip.left())..=rect.right().max(clip.right()),
                    rect.y_range(),
                );
                ui.painter().rect_filled(full, 0.0, bg);
            }
            ui.scope_builder(
                UiBuilder::new()
                    .max_rect(rect)
                    .layout(egui::Layout::left_to_right(egui::Align::Center)),
                |ui| {
                    ui.set_min_size(rect.size());
                    number_cell(ui, &st, l.old_line);
                    number_cell(ui, &st, l.new_line);
                    sign_cell(ui, &st, Some(l.tag));
                    ui.add(egui::Label::new(st.job(l)).selectable(true).extend());
                },
            );
        }
    });
}

fn split_view(ui: &mut egui::Ui, rows: &Rows, scroll_to: Option<usize>) {
    let st = Style::new(ui, rows);
    ui.spacing_mut().item_spacing = egui::vec2(0.0, 0.0);
    let mut area = egui::ScrollArea::vertical()
        .id_salt("text_diff_split")
        .auto_shrink(false);
    if let Some(r) = scroll_to {
        area = area.vertical_scroll_offset(r as f32 * st.row_h);
    }
    area.show_rows(ui, st.row_h, rows.split.len(), |ui, range| {
        let width = ui.available_width();
        let half = (width - 6.0) / 2.0;
        for row in &rows.split[range] {
            let top = ui.cursor().min;
            let rect = egui::Rect::from_min_size(top, egui::vec2(width, st.row_h));
            let (old, new) = match *row {
                SplitRow::Fold(n) => {
                    fold_row(ui, &st, rect, n);
                    continue;
                }
                SplitRow::Pair(a, b) => (a, b),
            };
            ui.scope_builder(
                UiBuilder::new()
                    .max_rect(rect)
                    .layout(egui::Layout::left_to_right(egui::Align::Center)),
                |ui| {
                    ui.set_min_size(rect.size());
                    split_side(ui, &st, rows, old, true, half);
                    let (gap, _) =
                        ui.allocate_exact_size(egui::vec2(6.0, st.row_h), egui::Sense::hover());
                    ui.painter().vline(
                        gap.center().x,
                        gap.y_range(),
                        ui.visuals().widgets.noninteractive.bg_stroke,
                    );
                    split_side(ui, &st, rows, new, false, half);
                },
            );
        }
    });
}

/// One half of a side-by-side row: the old (`left`) or new line, or an empty cell.
fn split_side(
    ui: &mut egui::Ui,
    st: &Style,
    rows: &Rows,
    line: Option<usize>,
    left: bool,
    width: f32,
) {
    let top = ui.cursor().min;
    let rect = egui::Rect::from_min_size(top, egui::vec2(width, st.row_h));
    let l = line.map(|i| &rows.lines[i]);
    let bg = match l {
        Some(l) => st.bg(l.tag),
        None => Some(ui.visuals().faint_bg_color),
    };
    if let Some(bg) = bg {
        ui.painter().rect_filled(rect, 0.0, bg);
    }
    ui.scope_builder(
        UiBuilder::new()
            .max_rect(rect)
            .layout(egui::Layout::left_to_right(egui::Align::Center)),
        |ui| {
            ui.set_min_size(rect.size());
            ui.set_clip_rect(rect.intersect(ui.clip_rect()));
            let Some(l) = l else { return };
            number_cell(ui, st, if left { l.old_line } else { l.new_line });
            sign_cell(ui, st, Some(l.tag));
            ui.add(egui::Label::new(st.job(l)).selectable(true).truncate());
        },
    );
}
