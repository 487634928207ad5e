//! Data across ranks: the cross-rank NaN tracer finds the first (step, rank, node), and the
//! inspector's rank table marks the rank that stands apart. Until a real multi-rank dump is at
//! hand, a variation of the showcase dump is built in a temp folder: its rank 0 copied as
//! ranks 0–3 of a world of 4, with a NaN written into rank 2's step-0 output of `mul_1`
//! (layer 0's input RMSNorm: early in graph order, clean on every rank in step 0).

use crate::common::ui::{WAIT, harness_sized, opened, selected, settle};
use crate::common::{copy_tree, fixture, fxray, run_dir};
use egui_kittest::kittest::Queryable;
use fxray::analysis::nan_trace::Bad;
use std::path::{Path, PathBuf};

fn last_pass() -> PathBuf {
    run_dir("showcase").join(
        "npugraph_ex/model__0/forward/018_aot_forward_graph_after_resolve_default_stream_markers.txt",
    )
}

/// Writes NaN over the first element of a little-endian f32 `.npy` (format 1.0).
fn poison(npy: &Path) {
    let mut b = std::fs::read(npy).unwrap();
    assert_eq!(&b[..8], b"\x93NUMPY\x01\x00");
    let hlen = u16::from_le_bytes([b[8], b[9]]) as usize;
    assert!(String::from_utf8_lossy(&b[10..10 + hlen]).contains("'<f4'"));
    b[10 + hlen..14 + hlen].copy_from_slice(&f32::NAN.to_le_bytes());
    std::fs::write(npy, b).unwrap();
}

/// Four ranks of the showcase dump; rank `bad` has a NaN in `mul_1`'s step-0 output.
fn four_ranks(bad: u32) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixture("showcase/data_dump/worldsize1_global_rank0");
    for r in 0..4 {
        copy_tree(&src, &tmp.path().join(format!("worldsize4_global_rank{r}")));
    }
    let step0 = tmp
        .path()
        .join(format!("worldsize4_global_rank{bad}/graph_1/0"));
    let out = std::fs::read_dir(&step0)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("mul_1-") && n.contains(".OUTPUT.0.")
        })
        .unwrap();
    poison(&out);
    tmp
}

/// `fxray tensors DUMP --first nan --graph GRAPH [more…]`'s standard output, after checking it
/// succeeded.
fn first_nan(dump: &Path, graph: &Path, more: &[&str]) -> String {
    let mut args = vec![
        "tensors",
        dump.to_str().unwrap(),
        "--first",
        "nan",
        "--graph",
        graph.to_str().unwrap(),
    ];
    args.extend_from_slice(more);
    let out = fxray(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn cli_first_nan_names_the_step_and_rank_across_ranks() {
    let tmp = four_ranks(2);
    let g = last_pass();
    let text = first_nan(tmp.path(), &g, &[]);
    let lines: Vec<&str> = text.lines().collect();
    // Step 0 comes before step 1 (where every rank's add_6 holds the showcase's own NaN), so
    // rank 2's step 0 wins over rank 0's step 1.
    assert_eq!(lines[0], "mul_1", "{text}");
    assert!(text.contains("produced by mul_1"), "{text}");
    assert!(text.contains("where: rank 2, graph_1, step 0"), "{text}");
    assert!(text.contains("the only one of 4 ranks"), "{text}");
    // Without rank 2 the first NaN is step 1's add_6, on all three ranks left.
    let text = first_nan(tmp.path(), &g, &["--rank", "3"]);
    assert!(text.starts_with("add_6\n"), "{text}");
    assert!(text.contains("where: rank 3, graph_1, step 1"), "{text}");
}

#[test]
fn the_app_traces_across_ranks_and_the_rank_table_marks_the_odd_rank() {
    let tmp = four_ranks(2);
    let mut app = opened(&run_dir("showcase"));
    app.attach_dump(tmp.path());
    assert!(app.wait_idle(WAIT));
    app.select_graph(&last_pass());
    assert!(app.wait_idle(WAIT));
    assert_eq!(app.tensors.catalog.ranks.len(), 4);
    assert_eq!(app.tensors.pending, 0);

    let mut h = harness_sized(app, egui::vec2(1500., 1100.));
    settle(&mut h);
    h.get_by_label("First NaN, all ranks").click();
    h.run_steps(3);
    assert_eq!(selected(&h).as_deref(), Some("mul_1"));
    let tv = h.state().app.tensors.trace.as_ref().expect("a trace");
    assert_eq!(tv.found.as_ref().map(|f| (f.0, f.1)), Some((0, 2)));
    assert_eq!(tv.bad, Bad::Nan);
    // The panel now shows step 0 of rank 2, and the rank table marks rank 2.
    assert_eq!(h.state().view.tensors.step, Some(0));
    assert_eq!(h.state().view.tensors.rank, Some(2));
    h.get_by_label_contains("first NaN: rank 2, step 0 (the only one of 4 ranks)");
    h.get_by_label("OUTPUT.0 on 4 ranks, step 0");
    h.get_by_label("rank 2 · farthest");
    assert!(h.query_by_label("rank 0 · farthest").is_none());
}

/// The real 4-rank launch (tests/e2e/launch_ranks.py, torch on gloo): a NaN put into rank 3's
/// input at step 1 reaches the other ranks through the all-reduce. torch's `truth.json` says
/// where it shows first, and on each rank.
fn launch() -> PathBuf {
    fixture("npugraph_ex/launch_4rank")
}

fn truth() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(launch().join("truth.json")).unwrap()).unwrap()
}

/// Rank 0's last forward pass.
fn launch_last_forward() -> PathBuf {
    let t = truth();
    let run = launch()
        .join("torch_compile_debug")
        .join(t["runs"]["0"].as_str().unwrap())
        .join("npugraph_ex/model__0/forward");
    let mut v: Vec<PathBuf> = std::fs::read_dir(run)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    v.sort();
    v.pop().unwrap()
}

#[test]
fn cli_finds_torchs_first_nan_in_the_4_rank_launch() {
    let t = truth();
    let first = &t["nan"]["first"];
    let g = launch_last_forward();
    let text = first_nan(&launch().join("data_dump"), &g, &[]);
    assert_eq!(text.lines().next(), first["node"].as_str(), "{text}");
    let want = format!(
        "where: rank {}, graph_1, step {}",
        first["rank"], first["step"]
    );
    assert!(text.contains(&want), "{text}");
    // Every other rank's own first NaN node, as torch saw it.
    for (rank, node) in t["nan"]["first_per_rank"].as_object().unwrap() {
        if rank.parse::<u64>().ok() == first["rank"].as_u64() {
            continue;
        }
        let s = format!("rank {rank} at {}", node.as_str().unwrap());
        assert!(text.contains(&s), "{s}: {text}");
    }
}

#[test]
fn the_app_finds_torchs_first_nan_and_marks_its_rank() {
    let t = truth();
    let first = &t["nan"]["first"];
    let mut h = harness_sized(opened(&launch()), egui::vec2(1500., 1100.));
    settle(&mut h);
    h.state_mut().app.select_graph(&launch_last_forward());
    settle(&mut h);
    assert_eq!(h.state().app.tensors.catalog.ranks.len(), 4);
    h.get_by_label("First NaN, all ranks").click();
    h.run_steps(3);
    assert_eq!(selected(&h).as_deref(), first["node"].as_str());
    let found = h
        .state()
        .app
        .tensors
        .trace
        .as_ref()
        .and_then(|t| t.found.clone());
    let want = (
        first["step"].as_u64().unwrap() as u32,
        first["rank"].as_u64().unwrap() as u32,
    );
    assert_eq!(found.map(|f| (f.0, f.1)), Some(want));
    h.get_by_label(&format!("rank {} · farthest", want.1));
}
