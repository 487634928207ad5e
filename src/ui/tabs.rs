//! The views that can fill the centre of the window, each one type implementing [`Tab`] (in `ui::tab`), all
//! registered in [`registry`]: a new view is one file and one line there (egui_demo_lib's `Demo`
//! list and rerun's view registry are the models). Views talk to each other only through the
//! app's navigation queue ([`crate::app::Nav`]), never through each other's state.

mod accuracy;
pub(super) mod autotune_view;
pub(super) mod compiles_view;
pub(super) mod graph_view;
mod modules;
mod problems;
pub(super) mod ranks_view;
pub(super) mod run_panel;
mod stages;
pub(super) mod timeline_view;

use super::ViewState;
use super::tab::Tab;
use crate::app::{App, Nav, TabId};
use std::any::Any;

/// Every tab, in the order of the tab bar. A new view is one line here.
fn registry() -> Vec<Box<dyn Tab>> {
    vec![
        Box::new(graph_view::GraphTab::default()),
        Box::new(timeline_view::TimelineViewState::default()),
        Box::new(autotune_view::AutotuneViewState::default()),
        Box::new(compiles_view::CompilesViewState::default()),
        Box::new(ranks_view::RanksViewState::default()),
        Box::new(run_panel::RunPanelState::default()),
        Box::new(accuracy::AccuracyTab::default()),
        Box::new(problems::ProblemsTab),
        Box::new(modules::ModulesTab),
    ]
}

/// The registered tabs and which one is on screen.
pub struct Tabs {
    list: Vec<Box<dyn Tab>>,
    current: usize,
}

impl Default for Tabs {
    fn default() -> Self {
        let list = registry();
        // Each id once: a request names one tab (the test below checks every id is there).
        debug_assert!(
            list.iter()
                .enumerate()
                .all(|(i, t)| list[..i].iter().all(|u| u.id() != t.id())),
            "two tabs registered under one id"
        );
        Tabs { list, current: 0 }
    }
}

impl Tabs {
    /// An empty stand-in, left in the window's state while the tabs draw (see `ui::show`).
    pub(super) fn placeholder() -> Self {
        Tabs {
            list: Vec::new(),
            current: 0,
        }
    }

    /// The id of the tab on screen (the graph while the tabs are lent out to draw).
    pub fn current(&self) -> TabId {
        self.list.get(self.current).map_or(TabId::GRAPH, |t| t.id())
    }

    /// Brings the tab `id` to the centre.
    pub fn show(&mut self, id: TabId) {
        match self.list.iter().position(|t| t.id() == id) {
            Some(i) => self.current = i,
            // A request for a view that is not registered: a bug, said where it is made.
            None => debug_assert!(self.list.is_empty(), "no tab is registered as {id:?}"),
        }
    }

    /// The tab of type `T` (for the status bar and tests).
    pub fn get<T: Tab>(&self) -> Option<&T> {
        self.list
            .iter()
            .find_map(|t| (&**t as &dyn Any).downcast_ref::<T>())
    }

    pub fn get_mut<T: Tab>(&mut self) -> Option<&mut T> {
        self.list
            .iter_mut()
            .find_map(|t| (&mut **t as &mut dyn Any).downcast_mut::<T>())
    }

    /// Takes the queued "show this tab" requests (and lets the app follow its own: a tab's
    /// "show this node" first, as it may open another phase).
    pub(super) fn follow_requests(&mut self, app: &mut App) {
        app.follow_go();
        app.follow_flame();
        while let Some(id) = app.nav.take(|r| match r {
            Nav::ShowTab(id) => Some(*id),
            _ => None,
        }) {
            self.show(id);
        }
    }

    /// The tab bar.
    pub(super) fn bar(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            for (i, t) in self.list.iter().enumerate() {
                ui.selectable_value(&mut self.current, i, t.title());
            }
        });
        ui.separator();
    }

    /// Draws the tab on screen.
    pub(super) fn show_current(&mut self, app: &mut App, view: &mut ViewState, ui: &mut egui::Ui) {
        if let Some(t) = self.list.get_mut(self.current) {
            t.ui(app, view, ui);
        }
    }

    /// Every tab's tree section, in tab order.
    pub(super) fn tree_sections(&mut self, app: &mut App, ui: &mut egui::Ui) {
        for t in &mut self.list {
            t.tree_section(app, ui);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tab_id_is_registered_once() {
        let ids: Vec<TabId> = registry().iter().map(|t| t.id()).collect();
        for (i, id) in ids.iter().enumerate() {
            assert!(!ids[..i].contains(id), "{id:?} registered twice");
        }
        for id in TabId::ALL {
            assert!(ids.contains(&id), "{id:?} is not registered");
        }
    }
}
