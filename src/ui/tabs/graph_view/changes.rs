//! The changes navigator: what the pass on screen changed, grouped by module, and `n` / `N` to
//! jump to the next / previous change (opening the boxes that hide it).

use super::GraphViewState;
use super::scene::Scene;
use crate::app::App;

/// The change after (or before) the selection, wrapping around.
pub fn step(scene: &Scene, selected: Option<u32>, forward: bool) -> Option<u32> {
    let list = &scene.counted.changed;
    if list.is_empty() {
        return None;
    }
    let here = selected.and_then(|s| list.iter().position(|&x| x == s));
    let i = match (here, forward) {
        (Some(i), true) => (i + 1) % list.len(),
        (Some(i), false) => (i + list.len() - 1) % list.len(),
        (None, true) => 0,
        (None, false) => list.len() - 1,
    };
    Some(list[i])
}

/// Changed nodes per module (`layers.7.mlp: 3`), in the order their first change comes.
pub fn by_module(scene: &Scene) -> Vec<(String, Vec<u32>)> {
    let mut out: Vec<(String, Vec<u32>)> = Vec::new();
    for &id in &scene.counted.changed {
        let path = scene.fold.as_ref().map_or(String::new(), |f| {
            let m = f.tree.module_of[id as usize];
            f.tree.modules[m as usize].path.clone()
        });
        match out.iter_mut().find(|(p, _)| *p == path) {
            Some((_, v)) => v.push(id),
            None => out.push((path, vec![id])),
        }
    }
    out
}

/// Jumps to the next / previous change: selects it and brings it on screen.
pub fn jump(app: &mut App, st: &GraphViewState, forward: bool) {
    let Some(scene) = st.scene.as_ref() else {
        return;
    };
    let sel = app
        .phase
        .as_ref()
        .and_then(|p| p.selected.as_deref())
        .and_then(|s| scene.layout.union.id(s));
    if let Some(next) = step(scene, sel, forward)
        && let Some(name) = scene.layout.union.names().get(next as usize)
    {
        app.reveal_node(name.clone());
    }
}

/// Toolbar menu: `Changes: 6 ▾`, listing modules and their changed nodes.
pub fn menu(app: &mut App, st: &GraphViewState, ui: &mut egui::Ui) {
    let Some(scene) = st.scene.as_ref() else {
        return;
    };
    let total = scene.counted.changed.len();
    let mut target = None;
    let hint = "What this pass added or changed, by module (n / N to walk them)";
    // Placed straight in the toolbar's wrapping row (a child scope would not wrap whole).
    if total == 0 {
        ui.add_enabled(false, egui::Button::new("Changes: 0"))
            .on_disabled_hover_text(hint);
    } else {
        ui.menu_button(format!("Changes: {total}"), |ui| {
            ui.weak("n / N: next / previous change");
            // Grouped only while the menu is open: nothing is walked per frame otherwise.
            let groups = by_module(scene);
            egui::ScrollArea::vertical()
                .max_height(360.0)
                .show(ui, |ui| {
                    for (path, ids) in &groups {
                        let label = if path.is_empty() { "(root)" } else { path };
                        if ui
                            .button(format!("{label}: {} changed", ids.len()))
                            .clicked()
                        {
                            target = ids.first().copied();
                            ui.close();
                        }
                    }
                });
        })
        .response
        .on_hover_text(hint);
    }
    if let Some(id) = target
        && let Some(name) = scene.layout.union.names().get(id as usize)
    {
        app.reveal_node(name.clone());
    }
}
