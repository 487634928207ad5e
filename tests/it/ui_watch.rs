//! The app window while a compile writes into the opened folder: a half-written pass shows as
//! "writing…" in the tree, and follow mode moves the view to each pass as it lands.


use crate::common::ui::{WAIT, harness};
use egui_kittest::kittest::Queryable;
use fxray::app::App;
use std::time::{Duration, Instant};

#[test]
fn the_window_follows_a_new_pass_as_it_is_written() {
    let dir = tempfile::tempdir().expect("temp dir");
    let src = crate::common::run_dir("showcase");
    let run = dir.path().join(src.file_name().unwrap());
    crate::common::copy_tree(&src, &run);
    let forward = run.join("npugraph_ex/model__0/forward");
    // Pass 016 onwards is "not written yet".
    let later: Vec<_> = crate::common::pass_files("showcase", "forward")
        .into_iter()
        .filter(|p| p.file_name().unwrap().to_string_lossy().as_ref() >= "016")
        .collect();
    assert!(!later.is_empty());
    for p in &later {
        std::fs::remove_file(forward.join(p.file_name().unwrap())).expect("remove");
    }
    let kept = crate::common::pass_files("showcase", "forward").len() - later.len();

    let mut app = App::new();
    app.open(dir.path());
    assert!(app.wait_idle(WAIT));
    let mut h = harness(app);
    let frames_until =
        |h: &mut egui_kittest::Harness<'static, fxray::ui::Fxray>,
         what: &str,
         cond: &dyn Fn(&egui_kittest::Harness<'static, fxray::ui::Fxray>) -> bool| {
            let start = Instant::now();
            while !cond(h) {
                assert!(
                    start.elapsed() < Duration::from_secs(20),
                    "timed out: {what}"
                );
                std::thread::sleep(Duration::from_millis(20));
                h.run_steps(1);
            }
        };
    frames_until(&mut h, "the live badge", &|h| {
        h.query_by_label("live").is_some()
    });
    assert_eq!(crate::common::ui::current_pass(&h), 0);

    // Half of the next pass: the tree says it is being written.
    let next = &later[0];
    let bytes = std::fs::read(next).expect("read");
    let dest = forward.join(next.file_name().unwrap());
    std::fs::write(&dest, &bytes[..bytes.len() / 2]).expect("write");
    frames_until(&mut h, "writing… in the tree", &|h| {
        h.query_by_label("writing…").is_some()
    });
    assert_eq!(h.state().app.phase.as_ref().unwrap().passes.len(), kept);

    // The rest: the view moves to the new pass on its own.
    std::fs::write(&dest, &bytes).expect("write");
    frames_until(&mut h, "the view to follow the new pass", &|h| {
        crate::common::ui::current_pass(h) == kept
    });
    frames_until(&mut h, "the tree to show the pass as read", &|h| {
        h.query_by_label("writing…").is_none()
    });
    let name = next.file_name().unwrap().to_string_lossy();
    let label = format!("{} {}", &name[..3], {
        let stem = name.trim_end_matches(".txt");
        stem.split_once("_after_")
            .map_or("aot_forward_graph", |(_, p)| p)
            .to_string()
    });
    assert!(
        h.query_all_by_label_contains(&label).next().is_some(),
        "the tree lists {label}"
    );
}
