//! The app opens a packed tree in place: the showcase as a `.tar.gz` shows its first pass
//! graph (280 nodes, as from the folder), a pass picked in the run tree loads from the archive,
//! and the status bar says the tree is an archive, read-only and not watched.

use crate::archive::pack_tar_gz;
use crate::common::fixture;
use crate::common::ui::{current_pass, harness, opened, settle};
use egui_kittest::kittest::Queryable;

#[test]
fn an_archive_opens_in_place_and_shows_its_pass_graphs() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("showcase.tar.gz");
    pack_tar_gz(&fixture("showcase"), &archive);
    let mut h = harness(opened(&archive));
    settle(&mut h);
    let ws = h.state().app.workspace.as_ref().expect("opened");
    assert!(ws.index.warnings.is_empty(), "{:?}", ws.index.warnings);
    assert!(
        ws.index.runs[0].path.starts_with(&archive),
        "{}",
        ws.index.runs[0].path.display()
    );
    assert_eq!(current_pass(&h), 0);
    assert_eq!(h.state().view.graph().counts().1, 280);

    h.get_by_label("004 apply_pattern_passes").click();
    settle(&mut h);
    assert_eq!(current_pass(&h), 4);
    assert_eq!(h.state().view.graph().counts().1, 288);

    h.get_by_label("archive (read-only)");
    assert!(
        h.state().app.live.backend.is_none(),
        "an archive is not watched"
    );
    // Nothing was unpacked beside the archive.
    let beside: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().flatten().collect();
    assert_eq!(beside.len(), 1);
}
