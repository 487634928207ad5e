//! The first view of a real model, as a new user opens it (issue 33): a `transformers`
//! Qwen3-MoE training step of 6 layers (`module_truth_hf/qwen3_moe_6_layers`, real torch). At
//! open, whichever folder was opened (the run, the model, the phase, one pass file), each phase
//! shows the same module boxes, more than one, with titles that read.

use crate::common::fixture;
use crate::common::ui::{harness_sized, opened, settle, smallest_title_px};
use std::path::{Path, PathBuf};

/// The case of `module_truth_hf.py` this test opens.
pub const CASE: &str = "qwen3_moe_6_layers";

/// The window as it first opens (`ui::run_native`'s inner size).
const SCREEN: egui::Vec2 = egui::vec2(1400.0, 880.0);

/// What the window shows at open: the boxes drawn (module, nodes of the pass on screen, folded),
/// the height of the smallest box title in px, and the nodes of the pass on screen.
#[derive(Debug)]
struct FirstView {
    boxes: Vec<(String, u32, bool)>,
    title_px: f32,
    nodes: usize,
}

/// `open` opened, then `pass` clicked in the tree (already on screen when `open` is that pass).
fn first_view(open: &Path, pass: &Path) -> FirstView {
    let mut app = opened(open);
    app.select_graph(pass);
    assert!(app.wait_idle(crate::common::ui::WAIT));
    let mut h = harness_sized(app, SCREEN);
    settle(&mut h);
    // The README's picture: the case of the issue, a backward phase folder opened alone.
    if open.ends_with("backward") {
        crate::common::ui::shoot(&mut h, "first_view_backward");
    }
    FirstView {
        boxes: h.state().view.graph().module_boxes(),
        title_px: smallest_title_px(&h),
        nodes: h.state().view.graph().counts().0,
    }
}

/// The last pass file of `phase` in model folder `model`.
fn last_pass(model: &Path, phase: &str) -> PathBuf {
    let mut passes: Vec<PathBuf> = std::fs::read_dir(model.join(phase))
        .expect("phase folder")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    passes.sort();
    passes.pop().expect("a pass")
}

/// Both phases of the case folder `case_dir` open the same readable boxes from every folder.
pub fn check_first_view(case_dir: &Path) {
    let model = super::modules::model_dir(case_dir);
    let run = model
        .ancestors()
        .nth(2)
        .expect("run_*/npugraph_ex/model__0")
        .to_path_buf();
    for phase in ["forward", "backward"] {
        let pass = last_pass(&model, phase);
        let openings = [run.clone(), model.clone(), model.join(phase), pass.clone()];
        let views: Vec<FirstView> = openings.iter().map(|o| first_view(o, &pass)).collect();
        for (open, v) in openings.iter().zip(&views) {
            eprintln!("{phase} from {}: {v:?}", open.display());
        }
        for (open, v) in openings.iter().zip(&views) {
            let at = open.strip_prefix(case_dir).unwrap_or(open).display();
            assert!(v.title_px >= 11.0, "{phase} from {at}: titles {v:?}");
            assert!(v.boxes.len() > 1, "{phase} from {at}: {v:?}");
            // Not one big box: a module holding nearly all the graph (the `model` wrapper)
            // opens, so the first view shows what is inside it.
            let big = v
                .boxes
                .iter()
                .find(|(_, n, folded)| *folded && *n as usize * 10 > v.nodes * 9);
            assert!(
                big.is_none(),
                "{phase} from {at}: {big:?} is most of {}",
                v.nodes
            );
            assert_eq!(v.boxes, views[0].boxes, "{phase} from {at}");
        }
    }
}

#[test]
fn a_real_model_opens_the_same_readable_boxes_from_every_folder() {
    check_first_view(&fixture("module_truth_hf").join(CASE));
}
