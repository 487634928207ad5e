//! Every tab lays out readably at the window sizes people use, beside a wide run tree (issue
//! 55 item 5: the Run tab's console was once 30 px wide there, "Out / put / of / the / run"
//! one word a line). A text squeezed to a column a few characters wide is unreadable, whatever
//! the tab: each tab is drawn at 1280×800 and 1600×1000 and its texts are measured.

use crate::common::fixture;
use crate::common::ui::{harness_sized, opened, settle, shoot};
use egui::accesskit::Role;
use egui_kittest::kittest::{NodeT, Queryable};
use fxray::app::TabId;

/// Narrower than this, a text of several words wraps a word or two a line.
const READABLE_PX: f32 = 150.0;
/// Taller than this, a text has wrapped onto a third line (body text is 14–18 px a line).
const TWO_LINES_PX: f32 = 40.0;

/// The texts of the window wrapped into a narrow column: `(text, width, height)`. A short
/// label is narrow by nature; one of several words wrapped onto three lines or more in a
/// column narrower than a phrase is what no one can read.
fn squeezed(h: &egui_kittest::Harness<'static, fxray::ui::Fxray>) -> Vec<(String, f32, f32)> {
    h.query_all_by_role(Role::Label)
        .filter_map(|n| {
            let text = n
                .accesskit_node()
                .label()
                .or_else(|| n.accesskit_node().value())?;
            let r = n.rect();
            let words = text.split_whitespace().count();
            (words >= 3 && r.width() < READABLE_PX && r.height() > TWO_LINES_PX)
                .then(|| (text, r.width(), r.height()))
        })
        .collect()
}

/// Draws `tab` at each common size beside a wide run tree (a stage-dump case: three dump
/// folders beside a run) and fails on any text too narrow to read.
fn readable(tab: TabId) {
    let root = fixture("stage_faults/gelu_tanh");
    for size in [egui::vec2(1280., 800.), egui::vec2(1600., 1000.)] {
        let mut h = harness_sized(opened(&root), size);
        settle(&mut h);
        h.state_mut().view.tabs.show(tab);
        settle(&mut h);
        assert_eq!(h.state().view.central(), tab);
        if tab == TabId::RUN && size.x > 1500.0 {
            shoot(&mut h, "run_tab_beside_a_wide_tree");
        }
        let bad = squeezed(&h);
        assert!(
            bad.is_empty(),
            "{} at {}×{}: texts too narrow to read: {bad:?}",
            tab.name(),
            size.x,
            size.y
        );
    }
}

/// One test per tab, and a check that none is left out.
macro_rules! tabs {
    ($($test:ident: $tab:ident),* $(,)?) => {
        $(
            #[test]
            fn $test() {
                readable(TabId::$tab);
            }
        )*

        #[test]
        fn every_tab_has_its_layout_test() {
            let tested = [$(TabId::$tab),*];
            for tab in TabId::ALL {
                assert!(tested.contains(&tab), "no layout test for {}", tab.name());
            }
        }
    };
}

tabs! {
    graph_tab_is_readable: GRAPH,
    timeline_tab_is_readable: TIMELINE,
    autotune_tab_is_readable: AUTOTUNE,
    compiles_tab_is_readable: COMPILES,
    ranks_tab_is_readable: RANKS,
    run_tab_is_readable: RUN,
    accuracy_tab_is_readable: ACCURACY,
    problems_tab_is_readable: PROBLEMS,
}
