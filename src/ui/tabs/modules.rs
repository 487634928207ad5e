//! The Module tree tab: the module tree of the pass on screen, each module with its node count,
//! and numbered siblings of one structure as one line (`layers.0–23 ×24  136 nodes each`);
//! a click on a module folds the graph to it.

use crate::app::modules::{ModuleReport, ModulesState, TAB};
use crate::app::part::Cx;
use crate::app::{Nav, TabId};
use crate::ui::tab::FeatureTab;

#[derive(Default)]
pub struct ModulesTab;

impl FeatureTab for ModulesTab {
    type Feature = ModulesState;

    fn id(&self) -> TabId {
        TAB
    }

    fn title(&self) -> &'static str {
        "Module tree"
    }

    fn show(&mut self, state: &mut ModulesState, cx: &mut Cx, ui: &mut egui::Ui) {
        let Some(pass) = cx.selection.pass else {
            ui.weak("Open a pass to see its modules.");
            return;
        };
        state.want(cx, pass);
        let Some(report) = crate::ui::loading::show(ui, &state.report, "inferring modules…")
        else {
            return;
        };
        egui::ScrollArea::vertical().show(ui, |ui| module(ui, report, cx.nav));
    }
}

/// One module and, below it, its groups and the sub-modules not hidden in a group.
fn module(ui: &mut egui::Ui, m: &ModuleReport, nav: &mut crate::app::nav::NavQueue) {
    let text = m.line();
    let body = |ui: &mut egui::Ui| {
        for g in &m.groups {
            ui.label(egui::RichText::new(g.line()).strong());
        }
        for c in m.listed() {
            module(ui, c, nav);
        }
    };
    if m.modules.is_empty() && m.groups.is_empty() {
        if ui.link(text).clicked() {
            nav.push(Nav::Fold(m.module.clone()));
            nav.push(Nav::ShowTab(TabId::GRAPH));
        }
    } else {
        let open = m.module.matches('.').count() < 1;
        egui::CollapsingHeader::new(text)
            .id_salt(&m.module)
            .default_open(open)
            .show(ui, body);
    }
}

#[cfg(test)]
mod tests {
    use crate::app::App;
    use crate::ui::Fxray;
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;
    use std::time::Duration;

    /// The real window on the 24-layer fixture: the tab shows the pass on screen's layers as
    /// one group, and a module's line folds the graph to it.
    #[test]
    fn the_modules_tab_shows_twenty_four_equal_layers_as_one_line() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/npugraph_ex/stress_24layer");
        let mut app = App::new();
        app.open(&root);
        assert!(app.wait_idle(Duration::from_secs(60)));
        let mut h = Harness::builder()
            .with_size(egui::vec2(1400., 900.))
            .build_ui_state(|ui, s: &mut Fxray| s.ui(ui), Fxray::new(app));
        h.run_steps(2);
        h.get_by_label("Module tree").click();
        for _ in 0..3 {
            h.run_steps(2);
            assert!(h.state_mut().app.wait_idle(Duration::from_secs(60)));
        }
        h.run_steps(2);
        h.get_by_label_contains("layers.0–23 ×24  136 nodes each");
        assert!(h.query_by_label_contains("layers.1.q_proj").is_none());
        h.get_by_label_contains("norm  ").click();
        h.run_steps(3);
        assert_eq!(h.state().view.tabs.current(), crate::app::TabId::GRAPH);
    }
}
