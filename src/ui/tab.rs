//! The trait a view of the centre of the window implements. Apart from the registry
//! (`ui::tabs`), so that each view depends on the trait and the registry on the views, never
//! both ways.

use super::ViewState;
use crate::app::App;
use std::any::Any;

/// One view of the centre of the window.
pub trait Tab: Any {
    /// Its id, as navigation requests name it (`Nav::ShowTab(TabId::RANKS)`).
    fn id(&self) -> crate::app::TabId;
    /// The tab's label.
    fn title(&self) -> &'static str;
    /// Draws the view. `view` is the rest of the window (panels, dialogs), for the few tabs
    /// that open one.
    fn ui(&mut self, app: &mut App, view: &mut ViewState, ui: &mut egui::Ui);
    /// An optional section of the tree panel, below the runs.
    fn tree_section(&mut self, _app: &mut App, _ui: &mut egui::Ui) {}
}
