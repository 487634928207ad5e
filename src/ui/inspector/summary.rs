//! The graph summary shown when no node is selected: node counts by op and by family (from
//! [`GraphFacts`]), unparsed lines and problems.

use super::*;

/// The facts of a loaded file not (yet) in the workspace's, made once and kept in egui memory
/// by file.
pub(super) fn facts_cached(ui: &egui::Ui, file: &Arc<FxFile>) -> Arc<GraphFacts> {
    let id = egui::Id::new("inspector_facts");
    type Cached = (Weak<FxFile>, Arc<GraphFacts>);
    let hit = ui.data(|d| d.get_temp::<Cached>(id)).and_then(|(w, c)| {
        let same = w.upgrade().is_some_and(|f| Arc::ptr_eq(&f, file));
        same.then_some(c)
    });
    hit.unwrap_or_else(|| {
        let c = Arc::new(GraphFacts::of(file));
        ui.data_mut(|d| d.insert_temp::<Cached>(id, (Arc::downgrade(file), c.clone())));
        c
    })
}

/// The summary of the pass on screen, from its facts: the workspace's (parsed when the folder
/// opened), else made from the loaded file.
pub(super) fn summary_view(
    ui: &mut egui::Ui,
    ph: &PhaseState,
    file: &Arc<FxFile>,
    known: Option<&GraphFacts>,
) {
    let made;
    let counts = match known {
        Some(f) => f,
        None => {
            made = facts_cached(ui, file);
            &*made
        }
    };
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
    ui.label(RichText::new(format!("{} nodes", counts.nodes)).strong());
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

pub(super) fn unparsed_view(ui: &mut egui::Ui, file: &FxFile) {
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

pub(super) fn problems_view(ui: &mut egui::Ui, file: &FxFile) {
    for p in &file.problems {
        ui.colored_label(ui.visuals().warn_fg_color, format!("⚠ {p}"));
    }
}
