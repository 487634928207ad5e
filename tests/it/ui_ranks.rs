//! The ranks of a launch in the real app, on `launch_4rank` (4 ranks of one gloo launch; rank 2
//! took another branch in forward, so its Dynamo graph and forward pass 000 differ): the rank
//! picker switches rank keeping the pass, the selection, the folding and the viewport; the Ranks
//! tab marks exactly rank 2's differing cells, and a cell opens side by side with rank 0; the
//! timeline's rank picker shows the same capture of another rank.

use crate::common::ui::{harness, opened, selected, settle, shoot, timeline};
use crate::common::{copy_tree, fixture};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use fxray::app::App;
use fxray::ui::palette::CHANGED;
use fxray::ui::{Fxray, Viewport};
use std::path::{Path, PathBuf};

/// Pass `pass` of `phase` in `rank`'s run folder, as the index has it.
fn pass_of(app: &App, rank: u32, phase: &str, pass: u32) -> PathBuf {
    let ws = app.workspace.as_ref().expect("workspace");
    let l = &ws.index.launches[0];
    let run = &ws.index.runs[l.run_of(rank).expect("rank")];
    let ph = run.models[0]
        .phases
        .iter()
        .find(|p| p.name == phase)
        .expect("phase");
    ph.passes
        .iter()
        .find(|p| p.index == pass)
        .expect("pass")
        .path
        .clone()
}

fn on_screen(h: &Harness<'static, Fxray>) -> PathBuf {
    let ph = h.state().app.phase.as_ref().expect("phase");
    ph.current_path().expect("pass").to_path_buf()
}

/// The rank picker's value (`rank 2 ≠`).
fn rank_shown(h: &Harness<'static, Fxray>) -> String {
    let node = h.get_by_role_and_label(Role::ComboBox, "Rank");
    node.value().unwrap_or_default()
}

/// Opens the rank picker and clicks `item` in it (the tensor panel has rank buttons too: the
/// item is the one just below the picker).
fn pick_rank(h: &mut Harness<'static, Fxray>, item: &str) {
    h.get_by_role_and_label(Role::ComboBox, "Rank").click();
    h.run_steps(2);
    let combo = h.get_by_role_and_label(Role::ComboBox, "Rank").rect();
    let below = |r: egui::Rect| (r.left() - combo.left()).abs() + (r.top() - combo.bottom()).abs();
    let node = h
        .query_all_by_label(item)
        .min_by(|a, b| below(a.rect()).total_cmp(&below(b.rect())))
        .unwrap_or_else(|| panic!("no {item} in the picker"));
    node.click();
}

fn in_rank(path: &Path, rank: u32) -> bool {
    path.ancestors().any(|a| {
        a.file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with(&format!("-rank_{rank}")))
    })
}

#[test]
fn rank_picker_switches_rank_keeping_pass_selection_folding_and_viewport() {
    let mut app = opened(&fixture("npugraph_ex/launch_4rank"));
    let start = pass_of(&app, 0, "forward", 2);
    app.select_graph(&start);
    app.select_node(Some("addmm_1".into()));
    assert!(app.wait_idle(crate::common::ui::WAIT));
    let mut h = harness(app);
    // A box per layer (repeat groups would draw the layers as one).
    h.state_mut().view.graph_mut().group_repeats = false;
    h.state_mut().view.graph_mut().fold_mode = Some(true);
    settle(&mut h);
    assert!(h.state().view.graph().is_folded(), "grouped by module");
    // The tree shows the launch as one entry, its ranks in rank order.
    h.get_by_label("run_2026_12_01_21_22_35_515166 · launch of 4 ranks");
    let tops: Vec<f32> = (0..4)
        .map(|r| {
            h.get_by_label_contains(&format!("rank {r} · run_"))
                .rect()
                .top()
        })
        .collect();
    assert!(tops.windows(2).all(|w| w[0] < w[1]), "rank order: {tops:?}");
    // It opens with `layers` folded, where titles read at fit: open it, then fold one layer,
    // and move the view away from the fit.
    if h.query_by_label("layers.1").is_none() {
        let canvas = h.state().view.graph().canvas.expect("canvas");
        h.get_all_by_label("layers")
            .find(|n| canvas.contains(n.rect().center()))
            .expect("the layers box")
            .click();
        settle(&mut h);
    }
    let open = |h: &Harness<'static, Fxray>, m: &str| {
        h.state()
            .view
            .graph()
            .module_boxes()
            .iter()
            .any(|(p, _, folded)| p == m && !folded)
    };
    if open(&h, "layers.1") {
        h.get_by_label("layers.1").click();
        settle(&mut h);
    }
    let boxes = h.state().view.graph().module_boxes();
    assert!(
        boxes
            .iter()
            .any(|(p, _, folded)| p == "layers.1" && *folded),
        "{boxes:?}"
    );
    let vp = Viewport {
        zoom: 0.37,
        pan: egui::vec2(41.0, -17.0),
    };
    vp.save_ctx(&h.ctx);
    h.run_steps(2);

    // The picker says rank 0; pick rank 1.
    assert_eq!(rank_shown(&h), "rank 0");
    pick_rank(&mut h, "rank 1");
    settle(&mut h);

    let now = on_screen(&h);
    assert!(in_rank(&now, 1), "rank 1's folder: {}", now.display());
    assert_eq!(
        now,
        pass_of(&h.state().app, 1, "forward", 2),
        "the same pass"
    );
    assert_eq!(selected(&h).as_deref(), Some("addmm_1"), "the same node");
    assert_eq!(
        h.state().view.graph().module_boxes(),
        boxes,
        "the same folding"
    );
    let after = Viewport::load_ctx(&h.ctx);
    assert_eq!(
        (after.zoom, after.pan),
        (vp.zoom, vp.pan),
        "the same viewport"
    );
    assert_eq!(
        h.state().app.rank_place().map(|p| p.rank),
        Some(1),
        "the picker's rank"
    );
    assert_eq!(rank_shown(&h), "rank 1");
}

#[test]
fn rank_matrix_marks_the_diverging_rank_and_a_cell_opens_side_by_side() {
    let mut h = harness(opened(&fixture("npugraph_ex/launch_4rank")));
    settle(&mut h);
    h.get_by_label("Ranks").click();
    settle(&mut h);
    // Rank 2's Dynamo graph and forward pass 000 differ (torch's truth.json says so); no other
    // cell is marked.
    h.get_by_label("rank 2 · model__0 dynamo 000 dynamo_out_graph: 33 ≠");
    h.get_by_label("rank 2 · model__0 forward 000 graph: 54 ≠");
    for r in [0, 1, 3] {
        h.get_by_label(&format!("rank {r} · model__0 forward 000 graph: 53"));
    }
    h.get_by_label("rank 2 · model__0 forward 001 apply_pattern_passes: 55");
    let marked = h.query_all_by_label_contains(" ≠").count();
    assert_eq!(marked, 2, "exactly rank 2's two differing graphs");
    h.get_by_label_contains("first divergence: model__0 dynamo 000 dynamo_out_graph: rank 2");
    // The picture marks the cell in the diff colour, and not its neighbour of rank 3.
    let cell = h
        .get_by_label("rank 2 · model__0 forward 000 graph: 54 ≠")
        .rect();
    let plain = h
        .get_by_label("rank 3 · model__0 forward 000 graph: 53")
        .rect();
    let shot = shoot(&mut h, "rank_matrix");
    assert!(
        shot.count_near(cell.center(), 12.0, CHANGED, 40) > 5,
        "amber ≠ in rank 2's cell"
    );
    assert_eq!(
        shot.count_near(plain.center(), 12.0, CHANGED, 40),
        0,
        "rank 3's cell is plain"
    );

    h.get_by_label("rank 2 · model__0 forward 000 graph: 54 ≠")
        .click();
    settle(&mut h);
    let s = h.state();
    assert_eq!(s.view.central(), fxray::app::TabId::GRAPH);
    assert!(s.view.graph().side_by_side, "side by side");
    let now = on_screen(&h);
    assert_eq!(now, pass_of(&h.state().app, 2, "forward", 0));
    let ph = h.state().app.phase.as_ref().unwrap();
    let c = ph.compare.as_ref().expect("compared");
    assert_eq!(
        c.a_path,
        pass_of(&h.state().app, 0, "forward", 0),
        "A is rank 0's"
    );
    assert!(c.label.starts_with("rank 0"), "{}", c.label);
    let (a, d) = c.result.ready().expect("diff computed");
    assert_eq!(a.node_count(), 53);
    assert!(
        d.counts().added > 0 || d.counts().removed > 0,
        "rank 2's extra view"
    );
    h.get_by_label_contains("Compared with: rank 0 · model__0 · forward · 000 graph");
    // The rank picker marks the rank on screen as differing in this pass.
    assert_eq!(rank_shown(&h), "rank 2 ≠");
}

#[test]
fn timeline_shows_each_ranks_capture_one_at_a_time() {
    // The launch has no captures: give every rank a copy of the showcase's.
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(
        &fixture("npugraph_ex/launch_4rank/torch_compile_debug"),
        tmp.path(),
    );
    let showcase = crate::common::run_dir("showcase").join("npugraph_ex/model__0");
    let capture = std::fs::read_dir(&showcase)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("graph_1_") && n.ends_with(".json") && !n.ends_with(".aligned.json")
        })
        .expect("showcase capture");
    for run in std::fs::read_dir(tmp.path()).unwrap() {
        let model = run.unwrap().path().join("npugraph_ex/model__0");
        if model.is_dir() {
            std::fs::copy(&capture, model.join(capture.file_name().unwrap())).unwrap();
        }
    }
    let mut app = opened(tmp.path());
    let rank0 = {
        let ws = app.workspace.as_ref().unwrap();
        let run = &ws.index.runs[ws.index.launches[0].run_of(0).unwrap()];
        run.models[0].captures[0].path.clone()
    };
    app.open_timeline(&rank0);
    assert!(app.wait_idle(crate::common::ui::WAIT));
    let ranks = app.timeline_ranks();
    assert_eq!(
        ranks.iter().map(|(r, _)| *r).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    assert!(ranks.iter().all(|(r, p)| in_rank(p, *r)));
    let mut h = harness(app);
    h.get_by_label("Timeline").click();
    settle(&mut h);
    h.get_by_label("4 ranks captured this graph");
    assert_eq!(rank_shown(&h), "rank 0");
    pick_rank(&mut h, "rank 3");
    settle(&mut h);
    let open = timeline(&h).open.as_ref().unwrap().path.clone();
    assert!(in_rank(&open, 3), "rank 3's capture: {}", open.display());
    assert!(timeline(&h).loaded().is_some(), "loaded");
}
