//! The node inspector (right panel): everything the dump says about the selected node, with
//! every node it names one click away; the graph's summary when no node is selected.
//!
//! Drawing never changes the app: widgets report an [`Action`], applied once the frame's
//! borrows of the phase are over.

use super::tensor_panel::{self, TensorPanelState};
use crate::analysis::diff::{self, HistoryEntry, HistoryEvent, NodeStatus};
use crate::analysis::op_family::{self, ALL_FAMILIES, OpFamily};
use crate::app::App;
use crate::app::phase::PhaseState;
use crate::model::fx::{Arg, FxFile, FxGraph, FxNode, OpKind, SourceLoc, ValueMeta};
use crate::model::fx_fmt::short_target;
use crate::sources::output_code::OutputCodeIndex;
use egui::{Color32, RichText};
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Weak};

/// Node links drawn for one argument list at most; the output node of a 20k-node graph
/// names thousands of values, and a few hundred links are all anyone reads.
const MAX_ARG_LINKS: usize = 300;
/// Rows of a producers / users / code-lines list before "… N more".
const MAX_LIST_ROWS: usize = 200;
/// Width of the key column ("target", "shape", …).
const KEY_WIDTH: f32 = 64.0;

/// Before / after values of a changed field longer than this are cut (the output node of a
/// 20k-node graph lists thousands of inputs).
const MAX_DETAIL_CHARS: usize = 400;

/// What a click in the inspector asks for.
enum Action {
    Reveal(String),
    Deselect,
    CodeLine(usize),
    /// Show this pass of the phase, then select the node under this name (renamed there).
    GoToPass(PathBuf, Option<String>),
}

/// The inspector's own state: the selected node's history, kept while nothing it depends on
/// changes.
#[derive(Default)]
pub struct InspectorState {
    history: Option<HistoryCache>,
}

struct HistoryCache {
    phase: PathBuf,
    node: String,
    /// Passes and consecutive diffs loaded when it was made.
    loaded: (usize, usize),
    /// The phase's first pass, to tell a reopened phase from the one it was made for.
    first: Option<Weak<FxFile>>,
    entries: Option<Arc<Vec<HistoryEntry>>>,
}

impl InspectorState {
    /// The history of `node` in the phase, once every pass and diff is loaded.
    fn history(&mut self, ph: &PhaseState, node: &str) -> Option<Arc<Vec<HistoryEntry>>> {
        let loaded = (
            ph.files.iter().filter(|f| f.is_some()).count(),
            ph.diffs.iter().filter(|d| d.is_some()).count(),
        );
        let first = ph.files.first().and_then(Option::as_ref);
        let same_first = |w: &Option<Weak<FxFile>>| match (w, first) {
            (Some(w), Some(f)) => std::ptr::eq(w.as_ptr(), Arc::as_ptr(f)),
            (None, None) => true,
            _ => false,
        };
        let hit = self.history.as_ref().filter(|c| {
            c.phase == ph.key && c.node == node && c.loaded == loaded && same_first(&c.first)
        });
        if let Some(c) = hit {
            return c.entries.clone();
        }
        let entries = ph.history(node).map(Arc::new);
        self.history = Some(HistoryCache {
            phase: ph.key.clone(),
            node: node.to_string(),
            loaded,
            first: first.map(Arc::downgrade),
            entries: entries.clone(),
        });
        entries
    }
}

/// Draws the inspector. Sets `show_code` when the user asks for a line of `output_code.py`.
pub fn show(
    app: &mut App,
    state: &mut InspectorState,
    tensors: &mut TensorPanelState,
    ui: &mut egui::Ui,
    show_code: &mut bool,
) {
    let Some(ph) = &app.phase else {
        nothing_open(app, ui);
        return;
    };
    let mut action = None;
    let mut tensor_action = None;
    egui::ScrollArea::vertical()
        .id_salt("inspector")
        .auto_shrink(false)
        .show(ui, |ui| {
            action = phase_view(ui, ph, state);
            tensor_action = tensor_panel::show(&app.tensors, ph, tensors, ui);
        });
    if let Some(a) = tensor_action {
        tensor_panel::apply(app, a);
    }
    match action {
        Some(Action::GoToPass(path, select)) => {
            app.select_graph(&path);
            if let Some(q) = select {
                app.select_node(Some(q));
            }
        }
        Some(Action::Reveal(q)) => app.reveal_node(q),
        Some(Action::Deselect) => app.select_node(None),
        Some(Action::CodeLine(n)) => {
            if let Some(ph) = &mut app.phase {
                ph.code_line = Some(n);
                *show_code = true;
            }
        }
        None => {}
    }
}

fn nothing_open(app: &App, ui: &mut egui::Ui) {
    if app.opening.is_some() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.weak("Opening…");
        });
    } else if app.workspace.is_some() {
        ui.weak("Pick a graph in the tree to inspect its nodes.");
    } else {
        ui.weak("Nothing open. File ▸ Open folder…, or drop a torch_compile_debug folder here.");
    }
}

fn phase_view(ui: &mut egui::Ui, ph: &PhaseState, state: &mut InspectorState) -> Option<Action> {
    let Some(file) = ph.current_file() else {
        pass_not_loaded(ui, ph);
        return None;
    };
    if let Some((graph, node)) = ph.selected_node() {
        return node_view(ui, ph, state, file, graph, node);
    }
    let mut action = None;
    if let Some(sel) = &ph.selected {
        // Selections persist across passes; say so when this pass has no such node.
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(format!("{sel} is not in this pass")).italics());
            if ui.small_button("clear").clicked() {
                action = Some(Action::Deselect);
            }
        });
        // Where it went (and came from): the pass that removed it is one click away.
        merge(&mut action, history_section(ui, ph, state));
        ui.separator();
    }
    summary_view(ui, ph, file);
    action
}

fn pass_not_loaded(ui: &mut egui::Ui, ph: &PhaseState) {
    match ph.load_errors.get(ph.current).and_then(Option::as_ref) {
        Some(e) => {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("Could not load this pass: {e}"),
            );
        }
        None => {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.weak("Loading the graph…");
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The selected node

fn node_view(
    ui: &mut egui::Ui,
    ph: &PhaseState,
    state: &mut InspectorState,
    file: &FxFile,
    graph: &FxGraph,
    node: &FxNode,
) -> Option<Action> {
    let mut links = Links::new(graph);
    let mut action = None;
    merge(&mut action, node_header(ui, graph, node));
    ui.separator();
    key_value(ui, "target", |ui| {
        ui.add(egui::Label::new(RichText::new(&node.target).monospace()).selectable(true))
            .on_hover_text("the call target as written in the dump");
    });
    value_meta(ui, node);
    merge(&mut action, args_view(ui, &mut links, node));
    merge(&mut action, history_section(ui, ph, state));
    merge(
        &mut action,
        neighbours(ui, &mut links, graph, &node.inputs, "inputs"),
    );
    merge(
        &mut action,
        neighbours(ui, &mut links, graph, &node.users, "users"),
    );
    merge(&mut action, subgraph_calls(ui, &mut links, file, node));
    source_view(ui, node.source.as_ref());
    file_line(ui, ph, graph, node);
    merge(&mut action, output_code_view(ui, ph, node));
    action
}

/// Keeps the first action of a frame: one click per frame is all a user makes.
fn merge(into: &mut Option<Action>, a: Option<Action>) {
    if into.is_none() {
        *into = a;
    }
}

/// A link whose accessible role stays `Link` (UI tests and screen readers look links up by
/// role and name): egui 0.36 gives link text that is selectable the `Label` role, so links
/// are drawn with text selection off.
fn link(ui: &mut egui::Ui, text: impl Into<egui::WidgetText>) -> egui::Response {
    let selectable = ui.style().interaction.selectable_labels;
    ui.style_mut().interaction.selectable_labels = false;
    let r = ui.link(text);
    ui.style_mut().interaction.selectable_labels = selectable;
    r
}

fn node_header(ui: &mut egui::Ui, graph: &FxGraph, node: &FxNode) -> Option<Action> {
    let fam = op_family::family(node);
    let mut action = None;
    ui.horizontal(|ui| {
        family_chip(ui, fam);
        ui.add(egui::Label::new(RichText::new(&node.name).heading().strong()).selectable(true));
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            if ui
                .small_button("✖")
                .on_hover_text("clear the selection")
                .clicked()
            {
                action = Some(Action::Deselect);
            }
        });
    });
    ui.horizontal_wrapped(|ui| {
        ui.weak(node.op.as_str());
        ui.weak("·");
        ui.weak(fam.label());
        if graph.parent.is_some() {
            ui.weak("·");
            ui.weak(format!("in sub-graph {}", graph.name));
        }
    });
    action
}

/// A small square in the family's colour, as the graph view paints the node.
fn family_chip(ui: &mut egui::Ui, fam: OpFamily) -> egui::Response {
    let size = egui::vec2(12.0, 12.0);
    let (rect, resp) = ui.allocate_exact_size(size, egui::Sense::hover());
    let [r, g, b] = fam.rgb();
    ui.painter()
        .rect_filled(rect, 2.0, Color32::from_rgb(r, g, b));
    resp.on_hover_text(fam.label())
}

/// One "key  value" row: the key in a fixed-width weak column, the value wrapping after it.
fn key_value<R>(ui: &mut egui::Ui, key: &str, value: impl FnOnce(&mut egui::Ui) -> R) -> R {
    ui.horizontal_wrapped(|ui| {
        let (rect, _) = ui.allocate_exact_size(
            egui::vec2(KEY_WIDTH, ui.text_style_height(&egui::TextStyle::Body)),
            egui::Sense::hover(),
        );
        ui.painter().text(
            rect.left_center(),
            egui::Align2::LEFT_CENTER,
            key,
            egui::TextStyle::Small.resolve(ui.style()),
            ui.visuals().weak_text_color(),
        );
        value(ui)
    })
    .inner
}

fn value_meta(ui: &mut egui::Ui, node: &FxNode) {
    let raw = node.annotation.as_deref().unwrap_or("");
    match &node.meta {
        Some(ValueMeta::Tensor(t)) => {
            if let Some(w) = &t.wrapper {
                mono_row(ui, "wrapper", w, raw);
            }
            mono_row(ui, "dtype", &t.dtype, raw);
            mono_row(ui, "shape", &format!("[{}]", t.shape.join(", ")), raw);
            if let Some(s) = &t.stride {
                mono_row(ui, "stride", &format!("[{}]", s.join(", ")), raw);
            }
            if let Some(d) = &t.device {
                mono_row(ui, "device", d, raw);
            }
        }
        Some(ValueMeta::Sym(e)) => mono_row(ui, "symbol", &format!("Sym({e})"), raw),
        Some(ValueMeta::Other(s)) => mono_row(ui, "value", s, raw),
        None if !raw.is_empty() => mono_row(ui, "value", raw, raw),
        None => {}
    }
}

/// A key and a selectable monospace value, the raw annotation on hover.
fn mono_row(ui: &mut egui::Ui, key: &str, value: &str, raw: &str) {
    key_value(ui, key, |ui| {
        let r = ui.add(egui::Label::new(RichText::new(value).monospace()).selectable(true));
        if !raw.is_empty() {
            r.on_hover_text(format!("annotation: {raw}"));
        }
    });
}

fn args_view(ui: &mut egui::Ui, links: &mut Links, node: &FxNode) -> Option<Action> {
    let mut action = None;
    if node.args.is_empty() && node.kwargs.is_empty() {
        return None;
    }
    let mut budget = MAX_ARG_LINKS;
    key_value(ui, "args", |ui| {
        ui.spacing_mut().item_spacing.x = 0.0;
        let mut w = ArgWriter::new(links, &mut budget);
        // Call syntax, `f(x)`: no one-tuple comma.
        w.seq(ui, "(", &node.args, ")", false);
        w.flush(ui);
        action = w.action;
    });
    for (k, v) in &node.kwargs {
        key_value(ui, "kwarg", |ui| {
            ui.spacing_mut().item_spacing.x = 0.0;
            let mut w = ArgWriter::new(links, &mut budget);
            w.text.push_str(k);
            w.text.push_str(" = ");
            w.arg(ui, v);
            w.flush(ui);
            merge(&mut action, w.action.take());
        });
    }
    action
}

/// Writes an argument the way `print_readable` does, with each node reference a link.
/// Plain text between links is gathered into one label, so a long list stays a few widgets.
struct ArgWriter<'a, 'g> {
    links: &'a mut Links<'g>,
    budget: &'a mut usize,
    text: String,
    action: Option<Action>,
}

impl<'a, 'g> ArgWriter<'a, 'g> {
    fn new(links: &'a mut Links<'g>, budget: &'a mut usize) -> Self {
        ArgWriter {
            links,
            budget,
            text: String::new(),
            action: None,
        }
    }

    fn flush(&mut self, ui: &mut egui::Ui) {
        if !self.text.is_empty() {
            ui.add(
                egui::Label::new(RichText::new(std::mem::take(&mut self.text)).monospace())
                    .selectable(true),
            );
        }
    }

    fn arg(&mut self, ui: &mut egui::Ui, a: &Arg) {
        match a {
            Arg::Node(n) if *self.budget > 0 => {
                *self.budget -= 1;
                self.flush(ui);
                if let Some(q) = self.links.link(ui, n, "argument") {
                    merge(&mut self.action, Some(Action::Reveal(q)));
                }
            }
            Arg::List(items) => self.seq(ui, "[", items, "]", false),
            Arg::Tuple(items) => self.seq(ui, "(", items, ")", items.len() == 1),
            other => self.text.push_str(&other.to_string()),
        }
    }

    fn seq(
        &mut self,
        ui: &mut egui::Ui,
        open: &str,
        items: &[Arg],
        close: &str,
        trailing_comma: bool,
    ) {
        self.text.push_str(open);
        for (i, a) in items.iter().enumerate() {
            if i > 0 {
                self.text.push_str(", ");
            }
            self.arg(ui, a);
        }
        if trailing_comma {
            self.text.push(',');
        }
        self.text.push_str(close);
    }
}

/// Node links of one inspector frame.
///
/// A link's text is always the node's (or sub-graph's) name. UI tests and screen readers find
/// a link by that name, so only the first link with a given text carries it as its accessible
/// label; later ones (an input named in the args and again in the inputs list) get a context
/// suffix, e.g. `rsqrt (input)`. Clicking either does the same thing.
struct Links<'g> {
    /// `true_graph_0/` inside a sub-graph, empty at the top level.
    prefix: String,
    graph: &'g FxGraph,
    seen: HashSet<String>,
}

impl<'g> Links<'g> {
    fn new(graph: &'g FxGraph) -> Self {
        let prefix = if graph.parent.is_some() {
            format!("{}/", graph.name)
        } else {
            String::new()
        };
        Links {
            prefix,
            graph,
            seen: HashSet::new(),
        }
    }

    /// Draws a link to node `name` of this graph; its qualified name when clicked.
    fn link(&mut self, ui: &mut egui::Ui, name: &str, context: &str) -> Option<String> {
        let target = self
            .graph
            .by_name
            .get(name)
            .and_then(|&i| self.graph.nodes.get(i));
        let Some(target) = target else {
            // A name the parser could not resolve: show it, but there is nowhere to go.
            ui.add(egui::Label::new(RichText::new(name).monospace()).selectable(true))
                .on_hover_text("not a node of this graph");
            return None;
        };
        let r = self.draw(ui, name, context);
        let r = r.on_hover_ui(|ui| node_tooltip(ui, target));
        r.clicked().then(|| format!("{}{name}", self.prefix))
    }

    /// Draws a link reading `text`; a repeat of a text already linked this frame gets
    /// `text (context)` as its accessible label.
    fn draw(&mut self, ui: &mut egui::Ui, text: &str, context: &str) -> egui::Response {
        let r = link(ui, RichText::new(text).monospace());
        if !self.seen.insert(text.to_string()) {
            let label = format!("{text} ({context})");
            r.widget_info(|| {
                egui::WidgetInfo::labeled(egui::WidgetType::Link, ui.is_enabled(), &label)
            });
        }
        r
    }
}

fn node_tooltip(ui: &mut egui::Ui, node: &FxNode) {
    ui.label(RichText::new(&node.name).strong());
    ui.label(RichText::new(&node.target).monospace());
    if let Some(m) = &node.meta {
        ui.label(RichText::new(m.to_string()).monospace());
    }
}

/// The inputs or users of a node: one row each, a link and the node's short target.
fn neighbours(
    ui: &mut egui::Ui,
    links: &mut Links,
    graph: &FxGraph,
    which: &[usize],
    what: &str,
) -> Option<Action> {
    let mut action = None;
    ui.add_space(4.0);
    ui.label(RichText::new(format!("{what} ({})", which.len())).strong());
    if which.is_empty() {
        ui.weak("none");
        return None;
    }
    let context = what.trim_end_matches('s');
    for &i in which.iter().take(MAX_LIST_ROWS) {
        let Some(n) = graph.nodes.get(i) else {
            continue;
        };
        ui.horizontal(|ui| {
            ui.add_space(8.0);
            family_chip(ui, op_family::family(n));
            if let Some(q) = links.link(ui, &n.name, context) {
                action = Some(Action::Reveal(q));
            }
            ui.weak(short_target(n));
        });
    }
    more(ui, which.len());
    action
}

fn more(ui: &mut egui::Ui, total: usize) {
    if total > MAX_LIST_ROWS {
        ui.weak(format!("… {} more", total - MAX_LIST_ROWS));
    }
}

/// The sub-graphs a higher-order op runs; a click shows the sub-graph's output node.
fn subgraph_calls(
    ui: &mut egui::Ui,
    links: &mut Links,
    file: &FxFile,
    node: &FxNode,
) -> Option<Action> {
    if node.subgraphs.is_empty() {
        return None;
    }
    let mut action = None;
    ui.add_space(4.0);
    ui.label(RichText::new(format!("sub-graphs ({})", node.subgraphs.len())).strong());
    for &gi in &node.subgraphs {
        let Some(g) = file.graphs.get(gi) else {
            continue;
        };
        let entry = g
            .nodes
            .iter()
            .find(|n| n.op == OpKind::Output)
            .or_else(|| g.nodes.first());
        ui.horizontal(|ui| {
            ui.add_space(8.0);
            match entry {
                Some(e) => {
                    let r = links
                        .draw(ui, &g.name, "sub-graph")
                        .on_hover_text(format!("show {} of {}", e.name, g.name));
                    if r.clicked() {
                        action = Some(Action::Reveal(format!("{}/{}", g.name, e.name)));
                    }
                }
                None => {
                    ui.monospace(&g.name);
                }
            }
            ui.weak(format!("{} nodes", g.nodes.len()));
        });
    }
    action
}

fn source_view(ui: &mut egui::Ui, source: Option<&SourceLoc>) {
    let Some(s) = source else { return };
    ui.add_space(4.0);
    ui.label(RichText::new("source").strong());
    if s.backward_of {
        ui.label(RichText::new("↩ backward of forward node").italics())
            .on_hover_text("The dump's `# Backward of forward node` comment: the location is the forward code this gradient comes from.");
    }
    let fn_part = if s.function.is_empty() {
        String::new()
    } else {
        format!(" in {}", s.function)
    };
    ui.add(egui::Label::new(format!("{}{fn_part}", s.short())).selectable(true))
        .on_hover_text(format!("{}:{}", s.file, s.line));
    if !s.code.is_empty() {
        ui.add(
            egui::Label::new(RichText::new(s.code.trim()).monospace())
                .selectable(true)
                .wrap(),
        );
    }
}

fn file_line(ui: &mut egui::Ui, ph: &PhaseState, graph: &FxGraph, node: &FxNode) {
    let path = ph.current_path();
    let file_name = path
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    ui.add_space(4.0);
    let mut text = format!("line {} of {file_name}", node.line);
    if graph.parent.is_some() {
        text.push_str(&format!(" (class {} at line {})", graph.name, graph.line));
    }
    let r = ui.add(egui::Label::new(RichText::new(text).small()).selectable(true));
    if let Some(p) = path {
        r.on_hover_text(p.display().to_string());
    }
}

fn output_code_view(ui: &mut egui::Ui, ph: &PhaseState, node: &FxNode) -> Option<Action> {
    // Phases without generated code (Dynamo graphs, loose files) have no section at all.
    ph.output_code_path.as_ref()?;
    ui.add_space(4.0);
    let Some(code) = &ph.output_code else {
        ui.horizontal(|ui| {
            ui.label(RichText::new("In output_code.py").strong());
            ui.spinner();
        });
        return None;
    };
    let lines = code.lines_naming(&node.name);
    ui.label(RichText::new(format!("In output_code.py ({})", lines.len())).strong())
        .on_hover_text(
            "lines of the phase's generated code that name this node; click one to open it",
        );
    if lines.is_empty() {
        ui.weak("not named in the generated code");
        return None;
    }
    let def = code.definition(&node.name);
    let mut action = None;
    for &n in lines.iter().take(MAX_LIST_ROWS) {
        if code_line_link(ui, code, n, def == Some(n)) {
            action = Some(Action::CodeLine(n));
        }
    }
    more(ui, lines.len());
    action
}

/// `NNN: <code>` as a link; the line that defines the node in bold. True when clicked.
fn code_line_link(ui: &mut egui::Ui, code: &OutputCodeIndex, n: usize, is_def: bool) -> bool {
    let text = code.line(n).unwrap_or("").trim();
    let mut rich = RichText::new(format!("{n}: {text}")).monospace();
    if is_def {
        rich = rich.strong().color(ui.visuals().hyperlink_color);
    }
    // One row per line, however long: the code viewer shows the rest.
    let r = ui
        .scope(|ui| {
            ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Truncate);
            link(ui, rich)
        })
        .inner;
    let r = if is_def {
        r.on_hover_text("defines the node")
    } else {
        r
    };
    r.clicked()
}

// ---------------------------------------------------------------------------------------------
// History: what the pass on screen did to the node, and every pass that did something to it

fn history_section(
    ui: &mut egui::Ui,
    ph: &PhaseState,
    state: &mut InspectorState,
) -> Option<Action> {
    let qualified = ph.selected.as_deref()?;
    changed_by_this_pass(ui, ph, qualified);
    ui.add_space(4.0);
    ui.label(RichText::new("History").strong())
        .on_hover_text("every pass of this phase that added, changed, renamed or removed the node");
    let Some(entries) = state.history(ph, qualified) else {
        if ph.load_errors.iter().any(Option::is_some) {
            ui.weak("needs every pass: a pass could not be loaded");
        } else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.weak("diffing the passes…");
            });
        }
        return None;
    };
    history_rows(ui, ph, &entries)
}

/// Quiet passes (nothing happened to the node), summarised in one line.
#[derive(Clone, Copy, PartialEq)]
enum Quiet {
    Unchanged,
    Absent,
}

fn history_rows(ui: &mut egui::Ui, ph: &PhaseState, entries: &[HistoryEntry]) -> Option<Action> {
    if entries.iter().all(|e| e.event == HistoryEvent::Absent) {
        ui.weak("in no pass of this phase");
        return None;
    }
    let mut action = None;
    let mut quiet: Option<(Quiet, usize)> = None;
    let flush = |ui: &mut egui::Ui, q: &mut Option<(Quiet, usize)>| {
        if let Some((kind, n)) = q.take() {
            let s = if n == 1 { "" } else { "es" };
            let what = match kind {
                Quiet::Unchanged => "unchanged",
                Quiet::Absent => "absent",
            };
            ui.horizontal(|ui| {
                ui.add_space(16.0);
                ui.weak(format!("{what} in {n} pass{s}"));
            });
        }
    };
    for e in entries {
        let kind = match e.event {
            HistoryEvent::Unchanged if e.renamed_from.is_none() => Some(Quiet::Unchanged),
            HistoryEvent::Absent => Some(Quiet::Absent),
            _ => None,
        };
        if let Some(k) = kind {
            match &mut quiet {
                Some((q, n)) if *q == k => *n += 1,
                _ => {
                    flush(ui, &mut quiet);
                    quiet = Some((k, 1));
                }
            }
            continue;
        }
        flush(ui, &mut quiet);
        merge(&mut action, history_row(ui, ph, e));
    }
    flush(ui, &mut quiet);
    action
}

/// `▶ 005 view_to_reshape  changed: target`, the pass a link to it.
fn history_row(ui: &mut egui::Ui, ph: &PhaseState, e: &HistoryEntry) -> Option<Action> {
    let pass = ph.passes.get(e.pass)?;
    let mut action = None;
    ui.horizontal_wrapped(|ui| {
        let here = e.pass == ph.current;
        let (rect, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
        if here {
            ui.painter().text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                "▶",
                egui::TextStyle::Small.resolve(ui.style()),
                ui.visuals().hyperlink_color,
            );
        }
        let text = format!("{:03} {}", pass.index, pass.name);
        let mut rich = RichText::new(&text).monospace();
        if here {
            rich = rich.strong();
        }
        // The tree lists the same pass names: the history's links say where they are.
        let r = link(ui, rich);
        let label = format!("{text} (history)");
        r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Link, true, &label));
        let r = r.on_hover_text(if here {
            "the pass on screen"
        } else {
            "show this pass"
        });
        if r.clicked() && !here {
            let select = e.name.clone().filter(|n| ph.selected.as_deref() != Some(n));
            action = Some(Action::GoToPass(pass.path.clone(), select));
        }
        let (green, red, amber) = (
            super::palette::ADDED,
            super::palette::REMOVED,
            super::palette::CHANGED,
        );
        match e.event {
            HistoryEvent::Appeared if e.pass == 0 => {
                ui.weak("in the first pass");
            }
            HistoryEvent::Appeared => {
                ui.colored_label(green, "appeared");
            }
            HistoryEvent::Changed(fields) => {
                ui.colored_label(amber, format!("changed: {fields}"));
            }
            HistoryEvent::Vanished => {
                ui.colored_label(red, "vanished");
            }
            HistoryEvent::Unchanged | HistoryEvent::Absent => {}
        }
        if let Some(from) = &e.renamed_from {
            ui.colored_label(amber, format!("renamed from {from}"));
        }
    });
    action
}

/// What the pass on screen (or the chosen A → the pass on screen) did to the node.
fn changed_by_this_pass(ui: &mut egui::Ui, ph: &PhaseState, qualified: &str) {
    let Some(file) = ph.current_file() else {
        return;
    };
    let Some((a_file, d, label)) = ph.diff_view() else {
        return;
    };
    let explicit = ph.compare.as_ref().is_some_and(|c| c.b_pass == ph.current);
    let Some((g, i)) = diff::resolve(file, qualified) else {
        // Not in this pass: say so when this pass (or A → it) removed it.
        let removed = diff::resolve(&a_file, qualified)
            .and_then(|(g, i)| d.status_a(g, i))
            .is_some_and(|s| s == NodeStatus::Removed);
        if removed {
            ui.add_space(4.0);
            let text = if explicit {
                format!("Removed since {label}")
            } else {
                "Removed by this pass".into()
            };
            ui.colored_label(super::palette::REMOVED, text);
        }
        return;
    };
    let Some(status) = d.status_b(g, i) else {
        return;
    };
    let a_node = d
        .b_to_a(g, i)
        .and_then(|(ga, ia)| Some((ga, ia, a_file.graphs.get(ga)?.nodes.get(ia)?)));
    let renamed_from = d
        .pair_of_b(g)
        .filter(|p| p.is_renamed_b(i))
        .and(a_node)
        .and_then(|(ga, ia, _)| diff::qualified_name(&a_file, ga, ia));
    ui.add_space(4.0);
    if !status.is_change() && renamed_from.is_none() {
        let text = if explicit {
            format!("Unchanged since {label}")
        } else {
            "Not changed by this pass".into()
        };
        ui.weak(text);
        return;
    }
    let title = if explicit {
        format!("Changed since {label}")
    } else {
        "Changed by this pass".into()
    };
    ui.label(RichText::new(title).strong())
        .on_hover_text(format!("compared with {label}"));
    let (green, red) = (super::palette::ADDED, super::palette::REMOVED);
    if status == NodeStatus::Added {
        ui.colored_label(green, "added: not in A");
        return;
    }
    if let Some(from) = renamed_from {
        key_value(ui, "name", |ui| {
            ui.add(egui::Label::new(RichText::new(from).monospace().color(red)).selectable(true));
            ui.label(RichText::new("→").monospace());
            ui.add(
                egui::Label::new(RichText::new(qualified).monospace().color(green))
                    .selectable(true),
            );
        });
    }
    let (Some((_, _, a)), Some(b)) = (a_node, file.graphs.get(g).and_then(|x| x.nodes.get(i)))
    else {
        return;
    };
    for (field, before, after) in diff::change_details(a, b, status.fields()) {
        key_value(ui, field.as_str(), |ui| {
            ui.add(
                egui::Label::new(RichText::new(cut(&before)).monospace().color(red))
                    .selectable(true),
            );
            ui.label(RichText::new("→").monospace());
            ui.add(
                egui::Label::new(RichText::new(cut(&after)).monospace().color(green))
                    .selectable(true),
            );
        });
    }
}

fn cut(s: &str) -> String {
    match s.char_indices().nth(MAX_DETAIL_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

// ---------------------------------------------------------------------------------------------
// The graph summary

/// Node counts of one graph file, cached in egui memory by file: counting families of a 20k-node
/// graph every frame would cost milliseconds.
#[derive(Clone, Default)]
struct Counts {
    by_op: BTreeMap<OpKind, usize>,
    by_family: BTreeMap<OpFamily, usize>,
    subgraph_nodes: usize,
}

impl Counts {
    fn of(file: &FxFile) -> Self {
        let mut c = Counts::default();
        if let Some(top) = file.graphs.first() {
            for n in &top.nodes {
                *c.by_op.entry(n.op).or_default() += 1;
                *c.by_family.entry(op_family::family(n)).or_default() += 1;
            }
        }
        c.subgraph_nodes = file.graphs.iter().skip(1).map(|g| g.nodes.len()).sum();
        c
    }
}

fn counts_cached(ui: &egui::Ui, file: &Arc<FxFile>) -> Arc<Counts> {
    let id = egui::Id::new("inspector_counts");
    type Cached = (Weak<FxFile>, Arc<Counts>);
    let hit = ui.data(|d| d.get_temp::<Cached>(id)).and_then(|(w, c)| {
        let same = w.upgrade().is_some_and(|f| Arc::ptr_eq(&f, file));
        same.then_some(c)
    });
    hit.unwrap_or_else(|| {
        let c = Arc::new(Counts::of(file));
        ui.data_mut(|d| d.insert_temp::<Cached>(id, (Arc::downgrade(file), c.clone())));
        c
    })
}

fn summary_view(ui: &mut egui::Ui, ph: &PhaseState, file: &Arc<FxFile>) {
    let counts = counts_cached(ui, file);
    if let Some(p) = ph.passes.get(ph.current) {
        ui.label(RichText::new(format!("{:03} {}", p.index, p.name)).heading());
        let name = p
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        ui.add(egui::Label::new(RichText::new(name).small()).selectable(true))
            .on_hover_text(p.path.display().to_string());
    }
    ui.weak(&ph.title);
    ui.separator();
    ui.label(RichText::new(format!("{} nodes", file.node_count())).strong());
    if file.graphs.len() > 1 {
        ui.weak(format!(
            "+ {} in {} sub-graph(s)",
            counts.subgraph_nodes,
            file.graphs.len() - 1
        ));
    }
    egui::Grid::new("summary_by_op")
        .num_columns(2)
        .show(ui, |ui| {
            for (op, n) in &counts.by_op {
                ui.label(op.as_str());
                ui.label(n.to_string());
                ui.end_row();
            }
        });
    ui.add_space(6.0);
    ui.label(RichText::new("by op family").strong());
    egui::Grid::new("summary_by_family")
        .num_columns(2)
        .show(ui, |ui| {
            for fam in ALL_FAMILIES {
                let Some(n) = counts.by_family.get(&fam) else {
                    continue;
                };
                ui.horizontal(|ui| {
                    family_chip(ui, fam);
                    ui.label(fam.label());
                });
                ui.label(n.to_string());
                ui.end_row();
            }
        });
    unparsed_view(ui, file);
    problems_view(ui, file);
    ui.add_space(6.0);
    ui.weak("Click a node in the graph to inspect it.");
}

fn unparsed_view(ui: &mut egui::Ui, file: &FxFile) {
    ui.add_space(6.0);
    if file.unparsed.is_empty() {
        ui.weak("every line understood");
        return;
    }
    let title = format!("{} unparsed line(s)", file.unparsed.len());
    egui::CollapsingHeader::new(RichText::new(title).color(ui.visuals().warn_fg_color))
        .id_salt("unparsed")
        .show(ui, |ui| {
            for u in file.unparsed.iter().take(MAX_LIST_ROWS) {
                ui.add(
                    egui::Label::new(
                        RichText::new(format!("{}: {}", u.line, u.text.trim())).monospace(),
                    )
                    .selectable(true),
                )
                .on_hover_text(&u.reason);
            }
            more(ui, file.unparsed.len());
        });
}

fn problems_view(ui: &mut egui::Ui, file: &FxFile) {
    for p in &file.problems {
        ui.colored_label(ui.visuals().warn_fg_color, format!("⚠ {p}"));
    }
}
