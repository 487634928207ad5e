//! Ranks of one launch as one run: the grouping of rank folders (`model::launch`), the rank
//! matrix (`analysis::ranks`) and `fxray ranks` / `fxray summary`, on the two-rank `multi_rank`
//! fixture and on `launch_4rank`, a real 4-rank gloo launch whose `truth.json` is torch's own
//! answer (which graph files differ on which rank).

use crate::common::{fixture, fxray, stdout_json};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// `dynamo_out_graph.txt` → (dynamo, 0, dynamo_out_graph);
/// `forward/003_aot_forward_graph_after_eliminate_dead_code.txt` → (forward, 3, eliminate_dead_code).
fn row_key(rel: &str) -> (String, u64, String) {
    if rel == "dynamo_out_graph.txt" {
        return ("dynamo".into(), 0, "dynamo_out_graph".into());
    }
    let (phase, file) = rel.split_once('/').expect("phase/file");
    let stem = file.trim_end_matches(".txt");
    let pass = stem[..3].parse().expect("NNN");
    let name = stem.split_once("_after_").map_or("graph", |(_, n)| n);
    (phase.into(), pass, name.into())
}

/// Checks `fxray ranks --json ROOT` against `ROOT/truth.json` (written by
/// `tests/e2e/launch_ranks.py`): one launch holding every rank, each rank's folder, and for
/// every graph file each rank's node count and exactly the ranks torch saw differ.
pub fn check_against_truth(root: &Path) {
    let truth: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("truth.json")).expect("truth.json"),
    )
    .expect("truth JSON");
    let v = stdout_json(&fxray(&["ranks", "--json", &root.display().to_string()]));
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 1, "one launch: {v}");
    let run = &runs[0];
    assert_eq!(run["ranks"], truth["ranks"]);
    assert_eq!(run["folders"], truth["runs"], "each rank's run folder");
    let rows: BTreeMap<(String, u64, String), &Value> = run["passes"]
        .as_array()
        .expect("passes")
        .iter()
        .map(|p| {
            let key = (
                p["phase"].as_str().unwrap().to_string(),
                p["pass"].as_u64().unwrap(),
                p["name"].as_str().unwrap().to_string(),
            );
            (key, p)
        })
        .collect();
    let graphs = truth["graphs"].as_object().expect("graphs");
    assert_eq!(rows.len(), graphs.len(), "one row per graph file");
    let mut differing = 0;
    for (rel, g) in graphs {
        let row = rows
            .get(&row_key(rel))
            .unwrap_or_else(|| panic!("no row for {rel}"));
        assert_eq!(row["model"], "model__0");
        assert_eq!(row["nodes"], g["nodes"], "{rel}: node counts per rank");
        assert_eq!(row["differs"], g["differs"], "{rel}: differing ranks");
        differing += usize::from(!g["differs"].as_array().unwrap().is_empty());
    }
    assert!(differing > 0, "the diverging rank differs somewhere");
    assert!(
        differing < graphs.len(),
        "and not everywhere: a later pass folds the branch away"
    );
}

#[test]
fn launch_4rank_matches_torchs_truth() {
    check_against_truth(&fixture("npugraph_ex/launch_4rank"));
}

#[test]
fn rank_folders_of_one_launch_are_grouped() {
    let idx = fxray::pipeline::tree::index(&fixture("npugraph_ex/multi_rank/torch_compile_debug"))
        .unwrap();
    assert_eq!(idx.launches.len(), 1);
    let l = &idx.launches[0];
    assert_eq!(l.rank_numbers(), vec![0, 1]);
    // rank 1 started 9 ms before rank 0: its folder names the launch
    assert_eq!(l.name, "run_2026_11_29_11_47_50_912229");
    for lr in &l.ranks {
        assert_eq!(idx.runs[lr.run].rank, Some(lr.rank));
        assert_eq!(idx.runs[lr.run].path, lr.path);
    }
    let idx = fxray::pipeline::tree::index(&fixture("npugraph_ex/launch_4rank")).unwrap();
    assert_eq!(idx.runs.len(), 4, "the per-rank runs stay");
    assert_eq!(idx.launches.len(), 1);
    assert_eq!(idx.launches[0].rank_numbers(), vec![0, 1, 2, 3]);
    // a single run is no launch
    let idx = fxray::pipeline::tree::index(&fixture("showcase")).unwrap();
    assert!(idx.launches.is_empty());
}

#[test]
fn multi_rank_ranks_compiled_the_same_graphs() {
    let v = stdout_json(&fxray(&[
        "ranks",
        "--json",
        &fixture("npugraph_ex/multi_rank").display().to_string(),
    ]));
    let run = &v["runs"][0];
    assert_eq!(run["ranks"], serde_json::json!([0, 1]));
    let passes = run["passes"].as_array().unwrap();
    // the Dynamo graph and 18 forward passes
    assert_eq!(passes.len(), 19);
    assert_eq!(passes[0]["phase"], "dynamo");
    assert_eq!(passes[1]["phase"], "forward");
    assert_eq!(passes[1]["name"], "graph");
    for p in passes {
        assert_eq!(p["nodes"]["0"], p["nodes"]["1"], "{p}");
        assert_eq!(p["differs"], serde_json::json!([]), "{p}");
    }
}

#[test]
fn ranks_text_marks_the_diverging_rank_and_summary_shows_the_launch() {
    let root = fixture("npugraph_ex/launch_4rank").display().to_string();
    let out = fxray(&["ranks", &root]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("4 ranks (0, 1, 2, 3)"), "{text}");
    let dynamo = text
        .lines()
        .find(|l| l.contains("dynamo_out_graph"))
        .expect("dynamo row");
    assert!(
        dynamo.contains("33*"),
        "rank 2's Dynamo graph is marked: {dynamo}"
    );
    assert_eq!(dynamo.matches('*').count(), 1, "{dynamo}");
    assert!(
        text.contains("first at model__0 dynamo 000 dynamo_out_graph: rank 2"),
        "{text}"
    );
    let out = fxray(&["summary", &root]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("launch: 4 ranks (0, 1, 2, 3)"), "{text}");
    assert!(
        text.contains("differs: model__0 forward 000 graph: rank 2"),
        "{text}"
    );
    let v = stdout_json(&fxray(&["summary", "--json", &root]));
    assert_eq!(v["launches"][0]["ranks"], serde_json::json!([0, 1, 2, 3]));
}

#[test]
fn ranks_of_a_single_run_is_a_one_line_user_error() {
    let out = fxray(&["ranks", &fixture("showcase").display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no launch of several ranks found"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn switching_rank_follows_the_dynamo_graph_and_says_when_a_rank_lacks_the_pass() {
    // A variation: rank 3 lost its last forward pass.
    let tmp = tempfile::tempdir().unwrap();
    crate::common::copy_tree(
        &fixture("npugraph_ex/launch_4rank/torch_compile_debug"),
        tmp.path(),
    );
    let rank3 = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-rank_3"))
        .unwrap();
    let gone = rank3
        .join("npugraph_ex/model__0/forward/003_aot_forward_graph_after_eliminate_dead_code.txt");
    std::fs::remove_file(&gone).unwrap();

    let mut app = crate::common::ui::opened(tmp.path());
    let (dynamo0, last0) = {
        let ws = app.workspace.as_ref().unwrap();
        let run = &ws.index.runs[ws.index.launches[0].run_of(0).unwrap()];
        let m = &run.models[0];
        (
            m.dynamo_graph.clone().unwrap(),
            m.phases[0].passes.last().unwrap().path.clone(),
        )
    };
    app.select_graph(&dynamo0);
    assert!(app.select_rank(2));
    let here = app
        .phase
        .as_ref()
        .unwrap()
        .current_path()
        .unwrap()
        .to_path_buf();
    assert!(here.ends_with("dynamo_out_graph.txt"), "{}", here.display());
    assert!(
        here.to_string_lossy().contains("-rank_2/"),
        "{}",
        here.display()
    );
    assert_eq!(app.rank_place().unwrap().rank, 2);

    app.select_graph(&last0);
    assert!(!app.select_rank(3), "rank 3 has no pass 003");
    assert_eq!(
        app.notice.as_deref(),
        Some("rank 3 has no 003_aot_forward_graph_after_eliminate_dead_code.txt")
    );
    assert_eq!(
        app.phase.as_ref().unwrap().current_path(),
        Some(last0.as_path())
    );

    assert!(app.wait_idle(crate::common::ui::WAIT));
    let m = app.rank_matrices();
    let row = m[0]
        .passes
        .iter()
        .find(|r| r.phase == "forward" && r.pass == 3)
        .unwrap();
    assert_eq!(row.missing, vec![3]);
    assert_eq!(row.differs, vec![3], "a missing pass is a divergence");
    assert_eq!(row.nodes.len(), 3);
}

#[test]
fn launch_4rank_data_dump_holds_each_rank_and_rank_3s_nan() {
    let root = fixture("npugraph_ex/launch_4rank");
    let truth: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("truth.json")).unwrap()).unwrap();
    let idx = fxray::pipeline::tree::index(&root.join("data_dump")).unwrap();
    let mut ranks: Vec<(u32, u32, Vec<u32>)> = idx
        .data_dumps
        .iter()
        .map(|d| {
            assert_eq!(d.graphs.len(), 1);
            assert_eq!(d.graphs[0].name, "graph_1");
            let steps = d.graphs[0].steps.iter().map(|(s, _)| *s).collect();
            (d.rank, d.world_size, steps)
        })
        .collect();
    ranks.sort();
    assert_eq!(
        ranks,
        (0..4).map(|r| (r, 4, vec![0, 1])).collect::<Vec<_>>(),
        "4 ranks of world size 4, steps 0 and 1"
    );
    // torch says NaN starts at rank 3's first node at step 1; the dump fxray reads agrees
    let first = &truth["nan"]["first"];
    assert_eq!(first["rank"], 3);
    assert_eq!(first["step"], 1);
    let node = first["node"].as_str().unwrap();
    let v = stdout_json(&fxray(&[
        "tensors",
        "--json",
        "--step",
        "1",
        "--rank",
        "3",
        "--node",
        node,
        &root.join("data_dump").display().to_string(),
    ]));
    let out = v["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["node"] == node && t["slot"] == "OUTPUT.0")
        .expect("the node's output");
    assert_eq!(out["summary"]["stats"]["nan"], 1, "{out}");
    // at step 0 nothing holds NaN anywhere
    let v = stdout_json(&fxray(&[
        "tensors",
        "--json",
        "--step",
        "0",
        &root.join("data_dump").display().to_string(),
    ]));
    let tensors = v["tensors"].as_array().unwrap();
    assert!(tensors.len() > 100);
    assert!(tensors.iter().all(|t| t["summary"]["stats"]["nan"] == 0));
}
