//! The status bar on a narrow window with a long path: the path is shortened in the middle and
//! never drawn over the right-hand figures.

use crate::common::ui::{harness_sized, opened, settle};
use crate::common::{copy_tree, fixture};
use egui_kittest::kittest::Queryable;

#[test]
fn a_long_path_is_elided_in_the_middle_not_drawn_over_the_figures() {
    let tmp = tempfile::tempdir().unwrap();
    let mut deep = tmp.path().to_path_buf();
    for i in 0..6 {
        deep.push(format!("a_rather_long_folder_name_from_the_cluster_{i}"));
    }
    deep.push("the_run_that_matters");
    copy_tree(&fixture("showcase/torch_compile_debug"), &deep);
    let mut h = harness_sized(opened(&deep), egui::vec2(1100., 700.));
    settle(&mut h);

    let figures = h.get_by_label_contains("nodes shown of").rect();
    let path = h.get_by_label_contains(" files");
    let text = path.value().unwrap_or_default();
    assert!(text.contains('…'), "not shortened: {text}");
    assert!(
        text.contains("the_run_that_matters  ·  "),
        "the end of the path is kept: {text}"
    );
    assert!(
        text.starts_with(&tmp.path().display().to_string()[..5]),
        "{text}"
    );
    assert!(
        path.rect().max.x <= figures.min.x,
        "path {:?} runs into the figures {:?}",
        path.rect(),
        figures
    );
}

/// The error in the status bar can be copied as text: a click puts it on the clipboard.
#[test]
fn the_status_bar_error_is_copied_by_a_click() {
    let mut app = fxray::app::App::new();
    app.open(std::path::Path::new("/no/such/run_folder"));
    let mut h = crate::common::ui::harness(app);
    settle(&mut h);
    let error = h.state().app.error.clone().expect("an error is shown");
    assert!(error.contains("/no/such/run_folder"), "{error}");
    h.get_by_label(&error).click();
    h.run_steps(1);
    let copied = h
        .output()
        .platform_output
        .commands
        .iter()
        .any(|c| matches!(c, egui::OutputCommand::CopyText(t) if *t == error));
    assert!(copied, "{:?}", h.output().platform_output.commands);
}

/// Opening a large tree shows what is still loading, with counts (`passes read k/n`, then
/// `laying out`, `modules`, `diffs`); opening something else meanwhile abandons it: the new
/// tree is shown, and nothing of the first lands on it.
#[test]
fn a_long_open_shows_its_progress_and_is_cancelled_by_the_next() {
    let big = fixture("npugraph_ex/stress_20k");
    let mut app = fxray::app::App::new();
    app.open(&big);
    let mut h = crate::common::ui::harness(app);
    let mut said = Vec::new();
    for _ in 0..600 {
        h.step();
        if let Some(node) = h.query_by_label_contains("passes read ") {
            // The node's debug form holds its label (`passes read 3/11 · …`).
            let text = format!("{node:?}");
            if !said.contains(&text) {
                said.push(text);
            }
        }
        let loading_phase = h.state().app.phase.as_ref().is_some_and(|p| !p.complete());
        if said.len() >= 2 && loading_phase {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(
        said.iter().any(|s| s.contains(&format!(
            "/{}",
            h.state().app.phase.as_ref().map_or(0, |p| p.passes.len())
        ))),
        "no count of the passes: {said:?}"
    );
    // Something else, while the first is still loading.
    let sample = fxray::app::sample_path();
    h.state_mut().app.open(&sample);
    settle(&mut h);
    let app = &h.state().app;
    let shown = app
        .phase
        .as_ref()
        .and_then(|p| p.current_path())
        .expect("a pass");
    assert!(
        !shown.starts_with(&big),
        "{} is still shown",
        shown.display()
    );
    assert!(app.error.is_none(), "{:?}", app.error);
    assert!(h.query_by_label_contains("passes read ").is_none());
}

/// Bytes that do not compress, made as they are read (an archive's bulk without holding it).
struct Noise {
    left: u64,
    state: u64,
}

impl std::io::Read for Noise {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.left as usize) / 8 * 8;
        for c in buf[..n].chunks_exact_mut(8) {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            c.copy_from_slice(&self.state.to_le_bytes());
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// Opening a large archive says how much of it is read (`reading big.tar 40 MiB of 160 MiB`);
/// opening something else meanwhile calls the read off where it is: nothing of the archive is
/// mounted or shown, and the new tree is.
#[test]
fn a_long_archive_read_shows_its_bytes_and_is_called_off_by_the_next_open() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("big.tar");
    let mut b = tar::Builder::new(std::fs::File::create(&archive).unwrap());
    b.append_dir_all(".", fixture("showcase")).unwrap();
    let bulk: u64 = 160 << 20;
    let mut header = tar::Header::new_gnu();
    header.set_size(bulk);
    header.set_mode(0o644);
    header.set_cksum();
    let noise = Noise {
        left: bulk,
        state: 0x9E37_79B9_7F4A_7C15,
    };
    b.append_data(&mut header, "zz_bulk.bin", noise).unwrap();
    b.finish().unwrap();
    drop(b);

    let mut app = fxray::app::App::new();
    app.open(&archive);
    let mut h = crate::common::ui::harness(app);
    let mut seen = None;
    for _ in 0..2000 {
        h.step();
        if let Some(node) = h.query_by_label_contains("reading big.tar ") {
            seen = Some((
                format!("{node:?}"),
                h.state().app.opening_progress().cloned(),
            ));
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let (said, progress) = seen.expect("no progress line while the archive was read");
    assert!(said.contains(" of 16"), "{said}");
    let progress = progress.expect("the read in progress");

    h.state_mut().app.open(&fxray::app::sample_path());
    settle(&mut h);
    let (done, total) = progress.counts();
    assert!(progress.cancelled());
    assert!(done < total, "read to its end: {done} of {total}");
    let app = &h.state().app;
    assert!(app.error.is_none(), "{:?}", app.error);
    let shown = app
        .workspace
        .as_ref()
        .expect("the sample")
        .index
        .root
        .clone();
    assert!(!shown.starts_with(&archive), "{}", shown.display());
    assert!(h.query_by_label_contains("reading big.tar").is_none());
    assert!(h.state().app.opening_progress().is_none());
}
