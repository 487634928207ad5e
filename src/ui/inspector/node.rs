//! The selected node: its header, target and value, neighbours, sub-graph calls, source
//! location, file line and where it appears in `output_code.py` (by provenance where Inductor
//! tracked it, else by name).

use super::*;

pub(super) fn node_view(
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
        ui.add(egui::Label::new(RichText::new(&*node.target).monospace()).selectable(true))
            .on_hover_text("the call target as written in the dump");
    });
    value_meta(ui, node);
    merge(&mut action, module_breadcrumb(ui, ph));
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
    source_view(ui, node.source.as_deref());
    file_line(ui, ph, graph, node);
    merge(&mut action, output_code_view(ui, ph, node));
    action
}

/// `layers ▸ 3 ▸ attn`: the module the node came from (inferred from the dumps); a click on a
/// part folds that module's box in the graph.
fn module_breadcrumb(ui: &mut egui::Ui, ph: &PhaseState) -> Option<Action> {
    let path = ph.selected.as_deref().and_then(|q| ph.module_of(q))?;
    let mut action = None;
    key_value(ui, "module", |ui| {
        if path.is_empty() {
            ui.weak("(root)")
                .on_hover_text("nothing in the dumps places this node in a module");
            return;
        }
        let mut prefix = String::new();
        for (i, part) in path.split('.').enumerate() {
            if i > 0 {
                ui.weak("▸");
                prefix.push('.');
            }
            prefix.push_str(part);
            if ui
                .link(part)
                .on_hover_text(format!("fold {prefix} in the graph"))
                .clicked()
            {
                action = Some(Action::FoldModule(prefix.clone()));
            }
        }
    });
    action
}

pub(super) fn node_header(ui: &mut egui::Ui, graph: &FxGraph, node: &FxNode) -> Option<Action> {
    let fam = op_family::family(node);
    let mut action = None;
    ui.horizontal(|ui| {
        family_chip(ui, fam);
        ui.add(
            egui::Label::new(RichText::new(node.name.as_str()).heading().strong()).selectable(true),
        );
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
pub(super) fn family_chip(ui: &mut egui::Ui, fam: OpFamily) -> egui::Response {
    let size = egui::vec2(12.0, 12.0);
    let (rect, resp) = ui.allocate_exact_size(size, egui::Sense::hover());
    let [r, g, b] = fam.rgb();
    ui.painter()
        .rect_filled(rect, 2.0, Color32::from_rgb(r, g, b));
    resp.on_hover_text(fam.label())
}

/// One "key  value" row: the key in a fixed-width weak column, the value wrapping after it.
pub(super) fn key_value<R>(
    ui: &mut egui::Ui,
    key: &str,
    value: impl FnOnce(&mut egui::Ui) -> R,
) -> R {
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

pub(super) fn value_meta(ui: &mut egui::Ui, node: &FxNode) {
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
pub(super) fn mono_row(ui: &mut egui::Ui, key: &str, value: &str, raw: &str) {
    key_value(ui, key, |ui| {
        let r = ui.add(egui::Label::new(RichText::new(value).monospace()).selectable(true));
        if !raw.is_empty() {
            r.on_hover_text(format!("annotation: {raw}"));
        }
    });
}

pub(super) fn node_tooltip(ui: &mut egui::Ui, node: &FxNode) {
    ui.label(RichText::new(node.name.as_str()).strong());
    ui.label(RichText::new(&*node.target).monospace());
    if let Some(m) = &node.meta {
        ui.label(RichText::new(m.to_string()).monospace());
    }
}

/// The inputs or users of a node: one row each, a link and the node's short target.
pub(super) fn neighbours(
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

pub(super) fn more(ui: &mut egui::Ui, total: usize) {
    if total > MAX_LIST_ROWS {
        ui.weak(format!("… {} more", total - MAX_LIST_ROWS));
    }
}

/// The sub-graphs a higher-order op runs; a click shows the sub-graph's output node.
pub(super) fn subgraph_calls(
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

pub(super) fn source_view(ui: &mut egui::Ui, source: Option<&SourceLoc>) {
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

pub(super) fn file_line(ui: &mut egui::Ui, ph: &PhaseState, graph: &FxGraph, node: &FxNode) {
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

pub(super) fn output_code_view(
    ui: &mut egui::Ui,
    ph: &PhaseState,
    node: &FxNode,
) -> Option<Action> {
    // Phases without generated code (Dynamo graphs, loose files) have no section at all.
    ph.output_code_path.as_ref()?;
    ui.add_space(4.0);
    let Some(code) = ph.output_code.ready() else {
        ui.label(RichText::new("In output_code.py").strong());
        crate::ui::loading::show(ui, &ph.output_code, "");
        return None;
    };
    if let Some(action) = provenance_view(ui, ph, code, node) {
        return action;
    }
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
pub(super) fn code_line_link(
    ui: &mut egui::Ui,
    code: &OutputCodeIndex,
    n: usize,
    is_def: bool,
) -> bool {
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
