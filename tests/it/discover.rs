//! Discovery and indexing on the real fixture trees: runs, models, phases, passes in order,
//! captures joined by `graph_K`, logs, dumps — and what happens with odd paths.

use crate::common::{copy_tree, fixture, run_dir};
use fxray::model::index::*;
use fxray::sources::discover;
use std::path::Path;

fn expected_showcase() -> serde_json::Value {
    let text = std::fs::read_to_string(fixture("showcase/expected.json")).expect("expected.json");
    serde_json::from_str(&text).expect("json")
}

#[test]
fn showcase_tree_is_found_whole() {
    let idx = fxray::pipeline::tree::index(&fixture("showcase")).expect("index");
    let exp = expected_showcase();
    assert_eq!(idx.opened, OpenedKind::Workspace);
    assert_eq!(idx.runs.len(), 1);
    let run = &idx.runs[0];
    assert_eq!(run.name, "run_2026_11_29_12_04_56_192145-pid_3064");
    assert_eq!(run.pid, Some(3064));
    assert_eq!(run.rank, None);
    assert_eq!(run.time.as_deref(), Some("2026-11-29 12:04:56.192145"));

    assert_eq!(run.models.len(), 1);
    let model = &run.models[0];
    assert_eq!(
        (model.name.as_str(), model.backend),
        ("model__0", Backend::NpugraphEx)
    );
    assert!(
        model
            .dynamo_graph
            .as_ref()
            .is_some_and(|p| p.ends_with("dynamo_out_graph.txt"))
    );
    assert_eq!(model.phases.len(), 1);
    let phase = &model.phases[0];
    assert_eq!(phase.name, "forward");
    assert!(
        phase
            .output_code
            .as_ref()
            .is_some_and(|p| p.ends_with("forward/output_code.py"))
    );

    // Passes in execution order, names as npugraph_ex wrote them.
    let names: Vec<&str> = phase.passes.iter().map(|p| p.name.as_str()).collect();
    let mut want = vec!["graph"];
    want.extend(
        exp["passes"]["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap()),
    );
    assert_eq!(names, want);
    assert_eq!(
        phase.passes.len(),
        exp["passes"]["graph_files"].as_u64().unwrap() as usize
    );
    for (i, p) in phase.passes.iter().enumerate() {
        assert_eq!(p.index as usize, i);
        assert!(p.size > 0, "{} has a size", p.path.display());
    }

    // Both capture files, joined to model__0 through output_code.py's fx_graph_name.
    assert_eq!(model.graph_name.as_deref(), Some("graph_1"));
    let kinds: Vec<CaptureKind> = model.captures.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, [CaptureKind::Aligned, CaptureKind::Raw]);
    assert!(
        model
            .captures
            .iter()
            .all(|c| c.graph == "graph_1" && c.id == "140715248647824" && c.pid == 3064)
    );

    let log_kinds: Vec<LogKind> = run.logs.iter().map(|l| l.kind).collect();
    assert_eq!(log_kinds, [LogKind::Backend, LogKind::Dynamo]);

    // The npy data dump and msprobe statistics beside the debug folder.
    assert_eq!(idx.data_dumps.len(), 1);
    let d = &idx.data_dumps[0];
    assert_eq!((d.world_size, d.rank), (1, 0));
    assert_eq!(d.graphs.len(), 1);
    assert_eq!(d.graphs[0].name, "graph_1");
    assert_eq!(d.graphs[0].steps, vec![(0, 646), (1, 646)]);
    let steps: Vec<(u32, &str)> = idx
        .msprobe
        .iter()
        .map(|m| (m.step, m.who.as_str()))
        .collect();
    assert_eq!(steps, [(0, "pid3064"), (1, "pid3064")]);
    assert_eq!(idx.traces.len(), 1);
    assert!(idx.warnings.is_empty(), "{:?}", idx.warnings);
}

#[test]
fn multi_rank_runs_carry_their_rank() {
    let idx = fxray::pipeline::tree::index(&fixture("npugraph_ex/multi_rank/torch_compile_debug"))
        .expect("index");
    assert_eq!(idx.opened, OpenedKind::DebugRoot);
    let runs: Vec<(Option<u32>, Option<u32>)> = idx.runs.iter().map(|r| (r.pid, r.rank)).collect();
    // Folder names sort by time: rank 1's run started first.
    assert_eq!(runs, [(Some(1297), Some(1)), (Some(1296), Some(0))]);
    for r in &idx.runs {
        assert_eq!(r.models[0].phases[0].passes.len(), 18);
        assert!(r.siblings.is_empty());
    }
}

#[test]
fn orphan_model_and_two_models() {
    let idx = fxray::pipeline::tree::index(&fixture("npugraph_ex/dynamic_shapes")).expect("index");
    let models = &idx.runs[0].models;
    assert_eq!(
        models.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
        ["model__0", "model__1"]
    );
    assert!(models[0].is_orphan() && models[0].dynamo_graph.is_some());
    assert!(!models[1].is_orphan());
    assert_eq!(models[1].phases[0].passes.len(), 18);

    let idx = fxray::pipeline::tree::index(&fixture("npugraph_ex/two_models")).expect("index");
    let models = &idx.runs[0].models;
    let shape: Vec<(String, Vec<String>)> = models
        .iter()
        .map(|m| {
            (
                m.name.clone(),
                m.phases.iter().map(|p| p.name.clone()).collect(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        [
            (
                "model__0".to_string(),
                vec!["forward".to_string(), "backward".to_string()]
            ),
            ("model__1".to_string(), vec!["forward".to_string()]),
        ]
    );
}

#[test]
fn stock_inductor_layout() {
    let idx =
        fxray::pipeline::tree::index(&fixture("inductor/c_transformer_train")).expect("index");
    let run = &idx.runs[0];
    assert_eq!(run.pid, Some(29754));
    assert_eq!(run.models.len(), 1);
    let m = &run.models[0];
    assert_eq!(
        (m.name.as_str(), m.backend),
        ("model__0", Backend::Inductor)
    );
    let phases: Vec<(&str, Option<&str>)> = m
        .phases
        .iter()
        .map(|p| (p.name.as_str(), p.inductor_id.as_deref()))
        .collect();
    assert_eq!(
        phases,
        [("forward", Some("1.0")), ("backward", Some("3.1"))]
    );
    for p in &m.phases {
        let names: Vec<&str> = p.passes.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(names, ["fx_graph_readable", "fx_graph_transformed"]);
        assert!(p.output_code.is_some());
        let arts: Vec<String> = p
            .artifacts
            .iter()
            .map(|a| a.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(
            arts.contains(&"fx_graph_runnable.py".to_string()),
            "{arts:?}"
        );
        assert!(arts.contains(&"ir_pre_fusion.txt".to_string()), "{arts:?}");
    }
    let logs: Vec<LogKind> = run.logs.iter().map(|l| l.kind).collect();
    assert_eq!(logs, [LogKind::Dynamo, LogKind::Inductor]);

    // Dynamic shapes skip model__0 (FX graph cache / restart): the number is kept as written.
    let idx = fxray::pipeline::tree::index(&fixture("inductor/e_dynamic_shapes")).expect("index");
    assert_eq!(idx.runs[0].models[0].name, "model__1");
    assert_eq!(idx.runs[0].models[0].phases[0].name, "inference");
}

#[test]
fn opening_inner_folders_keeps_their_context() {
    let run = run_dir("showcase");
    let forward = run.join("npugraph_ex/model__0/forward");
    let idx = fxray::pipeline::tree::index(&forward).expect("index");
    assert_eq!(idx.opened, OpenedKind::Phase);
    assert_eq!(idx.runs.len(), 1);
    assert_eq!(
        idx.runs[0].pid,
        Some(3064),
        "run found from the ancestors' names"
    );
    assert_eq!(idx.runs[0].models[0].phases[0].passes.len(), 19);

    let model = run.join("npugraph_ex/model__0");
    let idx = fxray::pipeline::tree::index(&model).expect("index");
    assert_eq!(idx.opened, OpenedKind::Model);
    assert_eq!(idx.runs[0].models[0].captures.len(), 2);

    let idx = fxray::pipeline::tree::index(&run).expect("index");
    assert_eq!(idx.opened, OpenedKind::Run);

    let one = forward.join("005_aot_forward_graph_after_view_to_reshape.txt");
    let idx = fxray::pipeline::tree::index(&one).expect("index");
    assert_eq!(idx.opened, OpenedKind::GraphFile);
    let passes = &idx.runs[0].models[0].phases[0].passes;
    assert_eq!(passes.len(), 1);
    assert_eq!(
        (passes[0].index, passes[0].name.as_str()),
        (5, "view_to_reshape")
    );
}

#[test]
fn single_foreign_graph_file_is_loose() {
    let tmp = tempfile::tempdir().unwrap();
    let f = tmp.path().join("my_graph.txt");
    std::fs::copy(
        run_dir("npugraph_ex/mlp_inference").join("npugraph_ex/model__0/dynamo_out_graph.txt"),
        &f,
    )
    .unwrap();
    let idx = fxray::pipeline::tree::index(&f).expect("index");
    assert_eq!(idx.opened, OpenedKind::GraphFile);
    assert!(idx.runs.is_empty());
    assert_eq!(idx.loose_graphs.len(), 1);
    assert_eq!(idx.loose_graphs[0].name, "my_graph.txt");
}

#[test]
fn capture_folders_and_data_dump_roots() {
    let idx = fxray::pipeline::tree::index(&fixture("aclgraph/multistream_moe")).expect("index");
    let mut kinds: Vec<CaptureKind> = idx.loose_captures.iter().map(|c| c.kind).collect();
    kinds.sort_by_key(|k| *k as u8);
    assert_eq!(
        kinds,
        [
            CaptureKind::Raw,
            CaptureKind::Aligned,
            CaptureKind::Filtered,
            CaptureKind::DeadlockCheck
        ]
    );
    assert!(
        idx.loose_captures
            .iter()
            .all(|c| c.device == 2 && c.graph == "graph_1")
    );

    let dump = fixture("data_dump/attention_bf16_nan_inf/worldsize1_global_rank0");
    let idx = fxray::pipeline::tree::index(&dump).expect("index");
    assert_eq!(idx.opened, OpenedKind::DataDump);
    assert_eq!(
        idx.data_dumps[0].graphs[0]
            .steps
            .iter()
            .map(|s| s.0)
            .collect::<Vec<_>>(),
        [0, 1]
    );
    let total: usize = idx.data_dumps[0].graphs[0].steps.iter().map(|s| s.1).sum();
    assert_eq!(total, 374);
    assert_eq!(idx.data_dumps[0].graphs[0].steps, vec![(0, 187), (1, 187)]);

    let idx = fxray::pipeline::tree::index(&fixture("showcase/msprobe_dump")).expect("index");
    assert_eq!(idx.opened, OpenedKind::Msprobe);
    assert_eq!(idx.msprobe.len(), 2);
}

#[test]
fn captures_join_by_graph_name_not_folder() {
    // Captures land in the *latest* model folder (docs/formats.md §1.6). Build a tree where
    // graph_1's capture sits in model__1 while model__0's output_code names graph_1.
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run_2026_01_01_00_00_00_000001-pid_7");
    let src = run_dir("showcase").join("npugraph_ex/model__0");
    let m0 = run.join("npugraph_ex/model__0");
    let m1 = run.join("npugraph_ex/model__1/forward");
    copy_tree(&src.join("forward"), &m0.join("forward"));
    std::fs::create_dir_all(&m1).unwrap();
    std::fs::copy(
        src.join("forward/000_aot_forward_graph.txt"),
        m1.join("000_aot_forward_graph.txt"),
    )
    .unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "json") {
            std::fs::copy(
                &p,
                run.join("npugraph_ex/model__1")
                    .join(p.file_name().unwrap()),
            )
            .unwrap();
        }
    }
    let idx = fxray::pipeline::tree::index(tmp.path()).expect("index");
    let models = &idx.runs[0].models;
    assert_eq!(models[0].graph_name.as_deref(), Some("graph_1"));
    assert_eq!(
        models[0].captures.len(),
        2,
        "moved to the model that names graph_1"
    );
    assert!(models[1].captures.is_empty());
    assert!(
        models[0]
            .captures
            .iter()
            .all(|c| c.path.starts_with(run.join("npugraph_ex/model__1")))
    );
}

#[test]
fn sibling_run_folders_of_one_process() {
    let tmp = tempfile::tempdir().unwrap();
    for name in [
        "run_2026_01_01_00_00_00_000001-pid_42",
        "run_2026_01_01_00_00_00_000002-pid_42-rank_3",
        "run_2026_01_01_00_00_01_000000-pid_43",
    ] {
        let d = tmp.path().join(name).join("torchdynamo");
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("debug.log"), "x\n").unwrap();
    }
    let idx = discover::discover(tmp.path()).expect("index");
    assert_eq!(idx.runs.len(), 3);
    assert_eq!(
        idx.runs[0].siblings,
        ["run_2026_01_01_00_00_00_000002-pid_42-rank_3"]
    );
    assert_eq!(
        idx.runs[1].siblings,
        ["run_2026_01_01_00_00_00_000001-pid_42"]
    );
    assert!(idx.runs[2].siblings.is_empty());
}

#[test]
fn missing_and_empty_paths() {
    let err = fxray::pipeline::tree::index(Path::new("/nonexistent/fxray/path")).unwrap_err();
    assert_eq!(err.exit_code(), 1);
    let msg = err.to_string();
    assert!(
        msg.contains("/nonexistent/fxray/path") && msg.contains("no such file"),
        "{msg}"
    );
    assert!(!msg.contains('\n'));

    let tmp = tempfile::tempdir().unwrap();
    let idx = fxray::pipeline::tree::index(tmp.path()).expect("an empty folder is not an error");
    assert!(idx.is_empty());
}

#[test]
fn index_follows_the_file_set() {
    let mut set = discover::scan(&fixture("npugraph_ex/two_models")).expect("scan");
    let before = set.index();
    assert_eq!(before.runs[0].models.len(), 2);
    let m1 = before.runs[0].models[1].path.clone();
    assert!(set.remove(&m1));
    let after = set.index();
    assert_eq!(after.runs[0].models.len(), 1);
    let p = before.runs[0].models[1].phases[0].passes[3].path.clone();
    set.insert(p, 10);
    let again = set.index();
    assert_eq!(again.runs[0].models.len(), 2);
    assert_eq!(again.runs[0].models[1].phases[0].passes.len(), 1);
}

#[test]
fn symlink_loop_does_not_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("torch_compile_debug");
    std::fs::create_dir_all(&d).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(tmp.path(), d.join("loop")).unwrap();
    let idx = discover::discover(tmp.path()).expect("index");
    assert!(idx.is_empty());
}

/// Inductor names a training step's phases `model__0_forward_1.0` and `model__0_backward_3.1`
/// (not `forward/`, `backward/` folders): the kind comes from the middle word, for a phase of
/// the index and for any path under its folder (the msprobe link once read it as forward).
#[test]
fn inductor_training_phases_know_their_kind() {
    let root = fixture("inductor/c_transformer_train");
    let idx = fxray::pipeline::tree::index(&root).expect("index");
    let phases: Vec<&Phase> = idx
        .runs
        .iter()
        .flat_map(|r| &r.models)
        .flat_map(|m| &m.phases)
        .collect();
    let kinds: Vec<PhaseKind> = phases.iter().map(|p| p.kind()).collect();
    assert_eq!(kinds, [PhaseKind::Forward, PhaseKind::Backward]);
    for ph in &phases {
        assert_eq!(
            PhaseKind::of_path(&ph.path),
            Some(ph.kind()),
            "{}",
            ph.path.display()
        );
        let pass = &ph.passes[0].path;
        assert_eq!(PhaseKind::of_path(pass), Some(ph.kind()));
        let at = idx.locate(pass).expect("located");
        assert_eq!(idx.phase_at(pass).map(|p| &p.path), Some(&ph.path));
        assert_eq!(at.pass, Some(0));
    }
    let model = &idx.runs[0].models[0];
    let backward = phases[1];
    assert_eq!(
        model.forward_of(backward).map(|p| &p.path),
        Some(&phases[0].path)
    );
    assert!(model.forward_of(phases[0]).is_none());
}

/// A launch opens on its lowest rank: launch_4rank's rank 1 folder sorts first (it started
/// first), yet the first graph shown is rank 0's.
#[test]
fn a_launch_opens_on_rank_0() {
    let idx = fxray::pipeline::tree::index(&fixture("npugraph_ex/launch_4rank")).expect("index");
    assert_ne!(idx.runs[0].rank, Some(0), "the case this test is about");
    let first = idx.default_graph().expect("a graph");
    let at = idx.locate(first).expect("located");
    assert_eq!(idx.runs[at.run].rank, Some(0), "{}", first.display());
}
