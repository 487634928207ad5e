//! The traits a view of the centre of the window implements. Apart from the registry
//! (`ui::tabs`), so that each view depends on the traits and the registry on the views, never
//! both ways.

use super::ViewState;
use crate::app::part::{Cx, Feature};
use crate::app::{App, TabId};
use std::any::Any;

/// One view of the centre of the window. A view of one feature implements [`FeatureTab`]
/// instead, and gets only that feature's state and a narrow context; this one, with the whole
/// app, is for the view of the app's own state: the graph (the phase on screen).
pub trait Tab: Any {
    /// Its id, as navigation requests name it (`Nav::ShowTab(TabId::RANKS)`).
    fn id(&self) -> TabId;
    /// The tab's label.
    fn title(&self) -> &'static str;
    /// Draws the view. `view` is the rest of the window (panels, dialogs), for the few tabs
    /// that open one.
    fn ui(&mut self, app: &mut App, view: &mut ViewState, ui: &mut egui::Ui);
    /// An optional section of the tree panel, below the runs.
    fn tree_section(&mut self, _app: &mut App, _ui: &mut egui::Ui) {}
}

/// A view of one feature: it draws that feature's state with a narrow context (the open tree,
/// the selection, navigation, a way to start work: [`Cx`]), never the app. What it wants of
/// other views it asks through `cx.nav` (`Nav::Go` shows a graph and a node).
pub trait FeatureTab: Any {
    /// The feature it shows (`app::part::Feature`).
    type Feature: Feature;
    fn id(&self) -> TabId;
    fn title(&self) -> &'static str;
    fn show(&mut self, state: &mut Self::Feature, cx: &mut Cx, ui: &mut egui::Ui);
    /// An optional section of the tree panel, below the runs; `state` is `None` until the
    /// feature is first used (the panel draws every frame and does not make it).
    fn tree_section(
        &mut self,
        _state: Option<&mut Self::Feature>,
        _cx: &mut Cx,
        _ui: &mut egui::Ui,
    ) {
    }
}

impl<T: FeatureTab> Tab for T {
    fn id(&self) -> TabId {
        FeatureTab::id(self)
    }

    fn title(&self) -> &'static str {
        FeatureTab::title(self)
    }

    fn ui(&mut self, app: &mut App, _: &mut ViewState, ui: &mut egui::Ui) {
        let (state, mut cx) = app.part::<T::Feature>();
        self.show(state, &mut cx, ui);
    }

    fn tree_section(&mut self, app: &mut App, ui: &mut egui::Ui) {
        let (state, mut cx) = app.part_if_used::<T::Feature>();
        FeatureTab::tree_section(self, state, &mut cx, ui);
    }
}
