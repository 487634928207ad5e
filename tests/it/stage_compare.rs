//! Original against optimized (docs/formats.md §4.5) on `tests/e2e/stage_faults.py`'s cases,
//! made with real torch: a block compiled through the npugraph_ex layout, one faulty rewrite
//! injected into one pass, both stage dumps and a float64 reference. fxray must pair every
//! optimized node with the original node torch's own `replace_all_uses_with` calls say it
//! stands for, judge each pair as torch's minifier rule does, and name the injected pass and
//! node; on the case where every pass is right, name none.

use crate::common::{fixture, fxray, stdout_json};
use fxray::pipeline::stages::{self, Origin};
use serde_json::Value;
use std::path::Path;

const CASES: [&str; 4] = ["right", "gelu_tanh", "drop_cast", "fuse_close"];

fn truth(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).expect("truth"))
        .expect("json")
}

/// Checks fxray against the `truth.json` of the case in `dir`.
pub fn check(dir: &Path) {
    let t = truth(dir);
    let spec = stages::find(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    assert!(spec.original.ends_with("dump_original"), "{spec:?}");
    assert!(spec.optimized.ends_with("dump_optimized"), "{spec:?}");
    assert!(
        spec.reference
            .as_deref()
            .is_some_and(|r| r.ends_with("dump_reference")),
        "{spec:?}"
    );
    let c = stages::compare(&spec, &Default::default()).expect("compare");
    let case = t["case"].as_str().unwrap();

    // The pairs are torch's: every optimized node and the original node it stands for.
    let want = t["pairs"].as_object().expect("pairs");
    assert_eq!(c.pairs.len(), want.len(), "{case}: {:?}", c.pairs);
    for (p, k) in c.pairs.iter().zip(&c.checks) {
        let w = &want[&p.node];
        assert_eq!(w["original"], p.original.as_str(), "{case} {}", p.node);
        // Judged as torch's rule judges it.
        assert_eq!(k.agrees(), w["same"].as_bool(), "{case} {}: {k:?}", p.node);
    }

    if case == "right" {
        assert!(c.findings.is_empty(), "{case}: {:?}", c.findings);
        assert_eq!(
            c.answer,
            "no pass changed the numbers beyond floating-point noise"
        );
        return;
    }
    // The injected pass and node, and only there.
    assert_eq!(c.findings.len(), 1, "{case}: {:?}", c.findings);
    let f = &c.findings[0];
    let p = &c.pairs[f.pair];
    assert_eq!(p.node, t["node"].as_str().unwrap(), "{case}");
    assert_eq!(p.original, t["replaced"].as_str().unwrap(), "{case}");
    let pass = t["pass_index"].as_u64().unwrap() as usize;
    assert_eq!(f.pass, Some(pass), "{case}: {:?}", p.origin);
    let name = t["pass_name"].as_str().unwrap();
    assert!(
        c.answer.starts_with(&format!("pass {pass:03} {name} ")),
        "{case}: {}",
        c.answer
    );
    assert!(c.answer.contains("its inputs agree, its output departs"));
    // torch agrees: the node departs, its inputs do not.
    assert_eq!(t["node_same"], false, "{case}");
    for (input, same) in t["inputs_same"].as_object().unwrap() {
        assert_eq!(same, true, "{case} {input}");
    }
    // A fused or replacing op is a replacement; an op rewired in place a change.
    let replaced = t["node"] != t["replaced"];
    let built = matches!(p.origin, Origin::Replaced { .. });
    let renamed = matches!(&p.origin, Origin::Changed { what, .. } if what.iter().any(|w| w.contains("renamed")));
    assert!(built || renamed || !replaced, "{case}: {:?}", p.origin);
}

#[test]
fn each_faulty_pass_is_named_with_its_node_and_the_right_passes_are_not() {
    for case in CASES {
        check(&fixture(&format!("stage_faults/{case}")));
    }
}

#[test]
fn the_command_line_gives_the_answer_found_or_named() {
    let dir = fixture("stage_faults/fuse_close");
    let out = fxray(&["compare", dir.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let want = "pass 006 post_grad_custom_post_pass replaced `rsqrt` (aten.rsqrt) by \
                `add_rsqrt_default` (fxray_npu.add_rsqrt): its inputs agree, its output departs";
    assert!(text.contains(want), "{text}");
    assert!(
        text.contains("torch's accuracy check against the float64 reference"),
        "{text}"
    );

    // The same dumps given by role.
    let phase = stages::find(&dir).unwrap().passes[0]
        .parent()
        .unwrap()
        .to_path_buf();
    let args = |reference: bool| {
        let mut a = vec![
            "compare".to_string(),
            dir.join("dump_optimized").display().to_string(),
            dir.join("dump_original").display().to_string(),
            "--passes".into(),
            phase.display().to_string(),
            "--json".into(),
        ];
        if reference {
            a.push("--reference".into());
            a.push(dir.join("dump_reference").display().to_string());
        }
        a
    };
    let run = |a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        stdout_json(&fxray(&a))
    };
    let v = run(args(true));
    assert!(v["answer"].as_str().unwrap().starts_with(want), "{v}");
    assert_eq!(v["findings"].as_array().unwrap().len(), 1);
    // Without the reference only allclose judges, and the answer says which tolerance it used.
    let v = run(args(false));
    assert!(
        v["tolerance"].as_str().unwrap().starts_with("allclose"),
        "{v}"
    );
    assert!(v["reference"].is_null());
}

#[test]
fn a_folder_without_two_stage_dumps_says_what_a_stage_compare_needs() {
    let dir = fixture("npugraph_tensor_dump");
    let out = fxray(&["compare", dir.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("data_dump_stage"), "{err}");
    assert!(err.contains("fxray compare TARGET GOLDEN"), "{err}");
}

/// The archive reader took a sound `torch.save` file for a prefixed one: the zip crate's
/// prefix detection refused it ("Invalid Central Directory header"), whatever torch wrote.
#[test]
fn every_tensor_torch_saved_for_the_stage_cases_reads() {
    let mut read = 0;
    for case in CASES {
        let root = fixture(&format!("stage_faults/{case}"));
        for f in crate::common::walk_files(&root) {
            if f.extension().is_some_and(|e| e == "pt") {
                fxray::sources::tensor_file::open(&f)
                    .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
                read += 1;
            }
        }
    }
    // 4 cases × 3 dumps × about 25 nodes
    assert!(read > 250, "{read} files read");
}

#[test]
#[ignore = "needs torch (tests/run.sh sets FXRAY_TEST_PYTHON)"]
fn e2e_torch_stage_faults() {
    let out = tempfile::tempdir().unwrap();
    crate::common::run_e2e_script("stage_faults.py", out.path());
    for case in CASES {
        check(&out.path().join(case));
    }
}

/// The stage compare the window holds.
fn stage_compare(
    h: &egui_kittest::Harness<'static, fxray::ui::Fxray>,
) -> std::sync::Arc<stages::StageCompare> {
    let r = &crate::common::ui::accuracy(&h.state().app).stages.result;
    r.ready().cloned().expect("compared")
}

/// The window opens a run holding both stage dumps: the Accuracy tab says which pass changed
/// the numbers, and its button shows that pass with the node selected and on screen.
#[test]
fn the_window_names_the_pass_and_shows_it_with_the_node() {
    use crate::common::ui::{current_pass, harness_sized, opened, selected, settle, shoot};
    use egui_kittest::kittest::Queryable;
    let dir = fixture("stage_faults/gelu_tanh");
    let mut h = harness_sized(opened(&dir), egui::vec2(1400., 900.));
    settle(&mut h);
    // One rank, though three dumps hold it: no rank picker.
    assert!(h.query_by_label("rank 0").is_none(), "a picker of one rank");
    // The tree tells the three dumps apart by their folders.
    for d in ["dump_original", "dump_optimized", "dump_reference"] {
        h.get_by_label(&format!("🗄 {d} rank 0 · 1 graph(s), 1 step(s)"));
    }
    // Said where the user looks first, whichever tab is open.
    let notice = h.state().app.notice.clone().unwrap_or_default();
    assert!(
        notice.starts_with("original against optimized: pass 004"),
        "{notice}"
    );
    h.state_mut().view.tabs.show(fxray::app::TabId::ACCURACY);
    h.run_steps(2);
    let want = "pass 004 apply_pattern_passes changed `gelu` (aten.gelu; kwargs, renamed), now \
                `gelu_default`: its inputs agree, its output departs";
    let answer = stage_compare(&h);
    assert!(answer.answer.starts_with(want), "{}", answer.answer);
    h.get_by_label(&answer.answer);
    h.get_by_label("Show in 004 apply_pattern_passes").click();
    h.run_steps(4);
    settle(&mut h);
    assert_eq!(h.state().view.central(), fxray::app::TabId::GRAPH);
    assert_eq!(current_pass(&h), 4);
    assert_eq!(selected(&h).as_deref(), Some("gelu_default"));
    let canvas = h.state().view.graph().canvas.expect("canvas");
    let pos = h.state().view.graph().screen_pos_of(&h.ctx, "gelu_default");
    assert!(
        pos.is_some_and(|p| canvas.contains(p)),
        "gelu_default on screen"
    );
    // The inspector says it beside the node: what it stands for, and that the numbers part here.
    h.get_by_label("the numbers part here: its inputs agree with the original's");
    h.get_by_label(
        "stands for `gelu` (aten.gelu) of the original graph; changed by 004 \
         apply_pattern_passes (kwargs, renamed)",
    );
    // Both stages side by side: the tanh GELU's largest value is not the erf one's.
    let c = stage_compare(&h);
    let i = c
        .pairs
        .iter()
        .position(|p| p.node == "gelu_default")
        .unwrap();
    let (a, b) = (
        c.checks[i].original.as_ref().unwrap(),
        c.checks[i].optimized.as_ref().unwrap(),
    );
    assert_ne!(a.summary.max, b.summary.max);
    let shown = |x: Option<f64>| fxray::model::tensor::fmt_value(x.unwrap());
    // (the tensor panel below may show one of them too)
    for v in [a.summary.max, b.summary.max] {
        assert!(
            h.query_all_by_label(&shown(v)).next().is_some(),
            "{v:?} shown"
        );
    }
    // The picture for the README: the answer on the graph.
    shoot(&mut h, "stage_compare");
}

/// TorchAir's graph dump (`graph_dump.type="py"`: `dynamo_original_graph_<K>_rank_<r>_…py` and
/// `dynamo_optimized_graph_…`) is graph K of rank r before and after the passes: a phase of two
/// passes, whatever folder it landed in; with the stage dumps beside it, the compare names the
/// optimized graph as the change (one diff cannot tell which pass).
#[test]
fn torchairs_graph_dump_is_a_phase_of_two_passes_that_the_stage_compare_uses() {
    let case = fixture("stage_faults/gelu_tanh");
    let spec = stages::find(&case).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let (first, last) = (&spec.passes[0], spec.passes.last().unwrap());
    let name =
        |stage: &str, ts: &str| format!("dynamo_{stage}_graph_1_rank_0_pid_421214_ts_{ts}.py");
    std::fs::copy(first, dir.join(name("original", "20251010083825327878"))).unwrap();
    std::fs::copy(last, dir.join(name("optimized", "20251010083827311204"))).unwrap();
    // GE's GraphDef text: not an FX graph, left alone.
    std::fs::write(
        dir.join("dynamo_optimized_graph_2_rank_0_pid_421214_ts_20251010083827311204.txt"),
        "graph { op { name: \"x\" type: \"Data\" } }\n",
    )
    .unwrap();
    for d in ["dump_original", "dump_optimized", "dump_reference"] {
        crate::common::copy_tree(&case.join(d), &dir.join(d));
    }
    let index = fxray::sources::discover::discover(dir).unwrap();
    let phases: Vec<_> = index
        .runs
        .iter()
        .flat_map(|r| &r.models)
        .flat_map(|m| m.phases.iter().map(move |p| (m.name.clone(), p)))
        .collect();
    assert_eq!(phases.len(), 1, "{phases:?}");
    let (model, phase) = &phases[0];
    assert_eq!(model, "graph_1");
    assert_eq!(phase.name, "rank_0_pid_421214");
    let passes: Vec<&str> = phase.passes.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(passes, ["original", "optimized"]);

    let c = stages::compare(&stages::find(dir).unwrap(), &Default::default()).unwrap();
    assert_eq!(c.findings.len(), 1, "{:?}", c.findings);
    let p = &c.pairs[c.findings[0].pair];
    assert_eq!(
        (p.node.as_str(), p.original.as_str()),
        ("gelu_default", "gelu")
    );
    assert!(
        c.answer.starts_with("pass 001 optimized changed `gelu`"),
        "{}",
        c.answer
    );
}

/// The float64 reference names nodes as the original does; whatever its folder is called (here
/// one that sorts first), it is the reference and never taken for the original stage.
#[test]
fn the_float64_dump_is_the_reference_whatever_its_name() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("case");
    crate::common::copy_tree(&fixture("stage_faults/fuse_close"), &dir);
    std::fs::rename(dir.join("dump_reference"), dir.join("dump_a_fp64")).unwrap();
    let spec = stages::find(&dir).unwrap();
    assert!(spec.original.ends_with("dump_original"), "{spec:?}");
    assert!(spec.optimized.ends_with("dump_optimized"), "{spec:?}");
    assert!(
        spec.reference
            .as_deref()
            .is_some_and(|r| r.ends_with("dump_a_fp64")),
        "{spec:?}"
    );
}

/// A flag of the other kind of compare says so instead of being dropped.
#[test]
fn a_flag_of_the_other_compare_is_refused() {
    let dir = fixture("stage_faults/right");
    let out = fxray(&["compare", dir.to_str().unwrap(), "--csv", "/tmp/x.csv"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--csv does not apply to a stage compare"),
        "{err}"
    );
    let a = fixture("accuracy/perturb/target_tensor");
    let b = fixture("accuracy/perturb/golden_tensor");
    let out = fxray(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--reference",
        b.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--reference does not apply to a compare against a golden run"),
        "{err}"
    );
}

/// Passes that only remove nodes (dead code, CSE) make no new name: the optimized dump names
/// nothing the original lacks, and the original is still told apart by the names it has alone.
#[test]
fn passes_that_only_remove_nodes_still_tell_the_stages_apart() {
    let case = fixture("stage_faults/right");
    let first = stages::find(&case).unwrap().passes[0].clone();
    let text = std::fs::read_to_string(&first).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // The original holds a dead node the optimized graph dropped.
    let at = text.find("        mul: ").expect("a mul line");
    let dead = "        dead: \"f32[2, 8, 16]\" = torch.ops.aten.neg.default(sub)\n";
    let original = format!("{}{dead}{}", &text[..at], &text[at..]);
    let name = |stage: &str| format!("dynamo_{stage}_graph_1_rank_0_pid_7_ts_1.py");
    std::fs::write(dir.join(name("original")), original).unwrap();
    std::fs::write(dir.join(name("optimized")), &text).unwrap();
    for (d, to) in [
        ("dump_original", "dump_original"),
        ("dump_original", "dump_optimized"),
        ("dump_reference", "dump_reference"),
    ] {
        crate::common::copy_tree(&case.join(d), &dir.join(to));
    }
    let rank = dir.join("dump_original/worldsize1_global_rank0");
    std::fs::copy(
        rank.join("sub_device_0_0.pt"),
        rank.join("dead_device_0_0.pt"),
    )
    .unwrap();
    let spec = stages::find(dir).unwrap();
    assert!(spec.original.ends_with("dump_original"), "{spec:?}");
    assert!(spec.optimized.ends_with("dump_optimized"), "{spec:?}");
    let c = stages::compare(&spec, &Default::default()).unwrap();
    assert_eq!(
        c.answer,
        "no pass changed the numbers beyond floating-point noise"
    );
}
