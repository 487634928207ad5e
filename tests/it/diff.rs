//! The structural diff (`analysis::diff`) and `fxray diff` against the real fixtures, whose truth
//! was established by reading the files (`diff NNN_… MMM_…` of consecutive passes) and from
//! `showcase/expected.json`.

use crate::common::{copy_tree, fixture, fxray, run_dir, stdout_json};
use fxray::analysis::diff::{
    self, DiffReport, EdgeKind, Field, Fields, FirstQuery, HistoryEvent, LineTag, NodeStatus,
};
use fxray::model::fx::FxFile;
use fxray::sources::load;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn phase_dir(case: &str, phase: &str) -> PathBuf {
    run_dir(case).join("npugraph_ex/model__0").join(phase)
}

/// The numbered pass files of a phase folder, in order.
fn pass_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.ends_with(".txt") && n.as_bytes()[..3].iter().all(u8::is_ascii_digit)
        })
        .collect();
    v.sort();
    v
}

fn load(p: &Path) -> FxFile {
    let f = load::graph(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    assert!(f.unparsed.is_empty(), "{}: {:?}", p.display(), f.unparsed);
    f
}

fn load_phase(dir: &Path) -> Vec<FxFile> {
    pass_files(dir).iter().map(|p| load(p)).collect()
}

fn report(a: &FxFile, b: &FxFile) -> DiffReport {
    diff::diff(a, b).report(a, b)
}

fn changed(r: &DiffReport) -> Vec<(&str, Fields)> {
    r.changed
        .iter()
        .map(|c| (c.name.as_str(), c.fields))
        .collect()
}

fn fields(f: &[Field]) -> Fields {
    f.iter().copied().collect()
}

fn rewired(r: &DiffReport) -> Vec<(&str, &str, EdgeKind)> {
    r.rewired
        .iter()
        .map(|e| (e.from.as_str(), e.to.as_str(), e.kind))
        .collect()
}

fn is_empty(r: &DiffReport) -> bool {
    r.added.is_empty()
        && r.removed.is_empty()
        && r.changed.is_empty()
        && r.renamed.is_empty()
        && r.rewired.is_empty()
}

/// For every consecutive pair of a phase: identical text ⇔ empty diff; returns the indices of
/// the passes (k of `k-1 → k`) whose diff is non-empty.
fn changing_passes(dir: &Path) -> Vec<usize> {
    let files = pass_files(dir);
    let graphs: Vec<FxFile> = files.iter().map(|p| load(p)).collect();
    let mut out = Vec::new();
    for k in 1..graphs.len() {
        let r = report(&graphs[k - 1], &graphs[k]);
        let same_text = std::fs::read(&files[k - 1]).unwrap() == std::fs::read(&files[k]).unwrap();
        assert_eq!(
            same_text,
            is_empty(&r),
            "{} → {}: identical text must give an empty diff and only then: {r:?}",
            files[k - 1].display(),
            files[k].display()
        );
        if same_text {
            let all: usize = graphs[k].graphs.iter().map(|g| g.nodes.len()).sum();
            assert_eq!(r.unchanged, all);
        } else {
            out.push(k);
        }
    }
    out
}

/// Renames identifiers in code lines (not comments, not after a `.`, not inside quotes).
fn rename_in_text(text: &str, rename: &dyn Fn(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('#') || line.trim_start().starts_with("class ") {
            out.push_str(line);
            continue;
        }
        let b = line.as_bytes();
        let mut i = 0;
        let mut quoted = false;
        while i < b.len() {
            let c = b[i];
            if c == b'"' {
                quoted = !quoted;
            }
            let starts_ident = (c.is_ascii_alphabetic() || c == b'_')
                && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'));
            if starts_ident {
                let mut j = i;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                let word = &line[i..j];
                let after_dot = i > 0 && b[i - 1] == b'.';
                match (!quoted && !after_dot).then(|| rename(word)).flatten() {
                    Some(new) => out.push_str(&new),
                    None => out.push_str(word),
                }
                i = j;
            } else {
                out.push(c as char);
                i += 1;
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// npugraph_ex/mlp_inference
// ---------------------------------------------------------------------------------------------

#[test]
fn mlp_inference_passes_report_exactly_what_they_changed() {
    let dir = phase_dir("npugraph_ex/mlp_inference", "forward");
    // 001 post_grad_custom_pre_pass (x*2 → x+x), 004 apply_pattern_passes (mm+add → addmm),
    // 010 eliminate_dead_code; the 14 other passes dump the same text and diff empty.
    assert_eq!(changing_passes(&dir), [1, 4, 10]);
    let g = load_phase(&dir);

    // x*2 → x+x: `add_tensor = add(relu, relu)` is new and feeds `mm_1`; `mul` stays, dead.
    let r = report(&g[0], &g[1]);
    assert_eq!(r.added, ["add_tensor"]);
    assert!(r.removed.is_empty() && r.renamed.is_empty());
    assert_eq!(changed(&r), [("mm_1", fields(&[Field::Inputs]))]);
    assert_eq!(rewired(&r), [("mul", "mm_1", EdgeKind::Removed)]);
    let add = &g[1].graphs[0].nodes[g[1].graphs[0].by_name.get("add_tensor").unwrap()];
    assert_eq!(&*add.target, "torch.ops.aten.add.Tensor");
    assert_eq!(add.inputs, [g[1].graphs[0].by_name.get("relu").unwrap()]);

    // mm + add → addmm: two addmm nodes appear, `relu` and the output read them; mm/add stay
    // (dead) until DCE.
    let r = report(&g[3], &g[4]);
    assert_eq!(r.added, ["addmm_default", "addmm_default_1"]);
    assert!(r.removed.is_empty() && r.renamed.is_empty());
    assert_eq!(
        changed(&r),
        [
            ("relu", fields(&[Field::Inputs])),
            ("output", fields(&[Field::Inputs]))
        ]
    );
    assert_eq!(
        rewired(&r),
        [
            ("add", "relu", EdgeKind::Removed),
            ("add_1", "output", EdgeKind::Removed)
        ]
    );
    assert_eq!(r.unchanged, 11);

    // Dead-code elimination: the five dead nodes go, nothing else moves.
    let r = report(&g[9], &g[10]);
    assert_eq!(r.removed, ["mm", "add", "mul", "mm_1", "add_1"]);
    assert!(r.added.is_empty() && r.changed.is_empty() && r.rewired.is_empty());
    assert_eq!(r.unchanged, 10);

    // Over the whole phase: the x*2 node survives until DCE.
    let passes: Vec<&FxFile> = g.iter().collect();
    let h = diff::node_history(&passes, "mul");
    assert_eq!(h[0].event, HistoryEvent::Appeared);
    assert!(h[1..10].iter().all(|e| e.event == HistoryEvent::Unchanged));
    assert_eq!(h[10].event, HistoryEvent::Vanished);
    assert!(h[11..].iter().all(|e| e.event == HistoryEvent::Absent));
    let h = diff::node_history(&passes, "relu");
    assert_eq!(h[4].event, HistoryEvent::Changed(fields(&[Field::Inputs])));
    let first = |q| diff::first_pass_where(&passes, q);
    assert_eq!(first(FirstQuery::NodeAppears("add_tensor".into())), Some(1));
    assert_eq!(first(FirstQuery::NodeDisappears("mul".into())), Some(10));
    assert_eq!(first(FirstQuery::NodeChanges("relu".into())), Some(4));
    assert_eq!(first(FirstQuery::NodeChanges("mm_1".into())), Some(1));
    assert_eq!(first(FirstQuery::NodeChanges("mul".into())), None);
    assert_eq!(
        first(FirstQuery::TargetAppears("aten.addmm".into())),
        Some(4)
    );
    assert_eq!(
        first(FirstQuery::TargetDisappears(
            "torch.ops.aten.mm.default".into()
        )),
        Some(10)
    );
    assert_eq!(
        first(FirstQuery::TargetDisappears("aten.relu".into())),
        None
    );
}

// ---------------------------------------------------------------------------------------------
// npugraph_ex/transformer_train
// ---------------------------------------------------------------------------------------------

#[test]
fn transformer_train_forward_passes() {
    let dir = phase_dir("npugraph_ex/transformer_train", "forward");
    // 001 post_grad_custom_pre_pass (constant folding), 005 view_to_reshape,
    // 006 post_grad_custom_post_pass (gelu decomposed).
    assert_eq!(changing_passes(&dir), [1, 5, 6]);
    let g = load_phase(&dir);

    // `triu(ones(...), 1)` folded into the frozen parameter `self._frozen_param0`: `ones` is
    // gone, `triu` keeps its name and becomes a get_attr without inputs or args.
    let r = report(&g[0], &g[1]);
    assert_eq!(r.removed, ["ones"]);
    assert!(r.added.is_empty() && r.renamed.is_empty() && r.rewired.is_empty());
    assert_eq!(
        changed(&r),
        [("triu", fields(&[Field::Target, Field::Inputs, Field::Args]))]
    );

    // view_to_reshape rewrites the target of every `aten.view` and keeps the node's name, so
    // each comes out `Changed { target }`, matched by name (step 1): not a rename, and no
    // other field moves (same inputs, same `[sizes]` literal, same annotation and source).
    let r = report(&g[4], &g[5]);
    let views: Vec<String> = std::iter::once("view".to_string())
        .chain((1..=10).map(|i| format!("view_{i}")))
        .collect();
    assert_eq!(
        r.changed
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        views
    );
    assert!(
        r.changed
            .iter()
            .all(|c| c.fields == fields(&[Field::Target]))
    );
    assert!(r.added.is_empty() && r.removed.is_empty() && r.renamed.is_empty());
    let d = diff::diff(&g[4], &g[5]);
    let v3 = g[5].graphs[0].by_name.get("view_3").unwrap();
    assert_eq!(
        d.top().matched_by[v3],
        Some(diff::MatchKind::Name),
        "view_3 is matched by its name"
    );
    assert_eq!(
        &*g[4].graphs[0].nodes[g[4].graphs[0].by_name.get("view_3").unwrap()].target,
        "torch.ops.aten.view.default"
    );
    assert_eq!(
        &*g[5].graphs[0].nodes[v3].target,
        "torch.ops.aten.reshape.default"
    );

    // gelu decomposed into 0.5·x·(1 + erf(x/√2)): five new nodes, gelu gone, view_10 rewired.
    let r = report(&g[5], &g[6]);
    assert_eq!(r.removed, ["gelu"]);
    assert_eq!(
        r.added,
        [
            "mul_tensor",
            "mul_tensor_1",
            "erf_default",
            "add_tensor",
            "mul_tensor_2"
        ]
    );
    assert_eq!(changed(&r), [("view_10", fields(&[Field::Inputs]))]);
    assert!(r.renamed.is_empty() && r.rewired.is_empty());

    let passes: Vec<&FxFile> = g.iter().collect();
    let first = |q| diff::first_pass_where(&passes, q);
    assert_eq!(first(FirstQuery::NodeChanges("view_3".into())), Some(5));
    assert_eq!(first(FirstQuery::NodeChanges("triu".into())), Some(1));
    assert_eq!(
        first(FirstQuery::TargetDisappears("aten.view".into())),
        Some(5)
    );
    assert_eq!(first(FirstQuery::TargetAppears("aten.erf".into())), Some(6));
    let h = diff::node_history(&passes, "view_3");
    assert_eq!(h[5].event, HistoryEvent::Changed(fields(&[Field::Target])));
    assert!(
        h.iter()
            .enumerate()
            .all(|(i, e)| i == 0 || i == 5 || e.event == HistoryEvent::Unchanged)
    );
}

#[test]
fn transformer_train_backward_passes() {
    let dir = phase_dir("npugraph_ex/transformer_train", "backward");
    // Only view_to_reshape changes the backward graph.
    assert_eq!(changing_passes(&dir), [5]);
    let g = load_phase(&dir);
    let r = report(&g[4], &g[5]);
    let names: Vec<String> = (11..=29).map(|i| format!("view_{i}")).collect();
    assert_eq!(
        r.changed
            .iter()
            .map(|c| c.name.as_str())
            .collect::<Vec<_>>(),
        names
    );
    assert!(
        r.changed
            .iter()
            .all(|c| c.fields == fields(&[Field::Target]))
    );
    assert!(r.added.is_empty() && r.removed.is_empty() && r.renamed.is_empty());
    assert_eq!(r.unchanged, 109 - 19);
}

// ---------------------------------------------------------------------------------------------
// showcase
// ---------------------------------------------------------------------------------------------

#[test]
fn showcase_changing_passes_match_expected_json() {
    let exp: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("showcase/expected.json")).unwrap())
            .unwrap();
    let dir = phase_dir("showcase", "forward");
    let g = load_phase(&dir);
    let files = exp["passes"]["files"].as_array().unwrap();
    assert_eq!(g.len(), files.len());
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| a.iter().map(|s| s.as_str().unwrap().to_string()).collect())
            .unwrap_or_default()
    };

    let mut changing = Vec::new();
    for f in &files[1..] {
        let k = f["index"].as_u64().unwrap() as usize;
        let pass = f["pass"].as_str().unwrap();
        let r = report(&g[k - 1], &g[k]);
        assert_eq!(!is_empty(&r), f["changed"] == true, "{pass}: {r:?}");
        if !is_empty(&r) {
            changing.push(pass.to_string());
            // Nodes and their order as expected.json lists them; changed nodes are exactly
            // its retargeted ∪ rewired (nodes whose target or inputs changed); no renames.
            assert_eq!(r.added, strings(&f["added"]), "{pass}");
            assert_eq!(r.removed, strings(&f["removed"]), "{pass}");
            assert!(r.renamed.is_empty(), "{pass}");
            let got: BTreeSet<&str> = r.changed.iter().map(|c| c.name.as_str()).collect();
            let retargeted = strings(&f["retargeted"]);
            let want: BTreeSet<String> = retargeted
                .iter()
                .cloned()
                .chain(strings(&f["rewired"]))
                .collect();
            let want: BTreeSet<&str> = want.iter().map(String::as_str).collect();
            assert_eq!(got, want, "{pass}");
            for c in &r.changed {
                assert_eq!(
                    c.fields.contains(Field::Target),
                    retargeted.contains(&c.name),
                    "{pass}: {}",
                    c.name
                );
            }
        }
    }
    assert_eq!(changing, strings(&exp["passes"]["changing"]));

    // optimize_noop_ops: the `alias` no-ops go and their user reads the aliased input directly.
    let r = report(&g[1], &g[2]);
    assert_eq!(r.removed, ["alias", "alias_1"]);
    assert_eq!(
        changed(&r),
        [
            ("add_6", fields(&[Field::Inputs])),
            ("add_16", fields(&[Field::Inputs]))
        ]
    );
    assert_eq!(
        rewired(&r),
        [
            ("arg14_1", "add_6", EdgeKind::Added),
            ("arg14_1", "add_16", EdgeKind::Added)
        ]
    );

    // reinplace_inplaceable_ops_pass: index_put → index_put_ in place, its copy_ back removed.
    let r = report(&g[10], &g[11]);
    assert_eq!(r.removed, ["copy_", "copy__1", "copy__2", "copy__3"]);
    assert!(
        r.changed
            .iter()
            .all(|c| c.fields == fields(&[Field::Target]))
    );
    let d = diff::diff(&g[10], &g[11]);
    let details = {
        let (ga, gb) = (&g[10].graphs[0], &g[11].graphs[0]);
        let (a, b) = (
            &ga.nodes[ga.by_name.get("index_put").unwrap()],
            &gb.nodes[gb.by_name.get("index_put").unwrap()],
        );
        diff::change_details(a, b, fields(&[Field::Target]))
    };
    assert_eq!(
        details,
        [(
            Field::Target,
            "aten.index_put".to_string(),
            "aten.index_put_".to_string()
        )]
    );
    assert_eq!(d.counts().changed, 4);
}

// ---------------------------------------------------------------------------------------------
// Renames
// ---------------------------------------------------------------------------------------------

#[test]
fn renames_are_found_not_reported_as_remove_and_add() {
    let tmp = tempfile::tempdir().unwrap();
    let src = pass_files(&phase_dir("npugraph_ex/transformer_train", "forward"))[6].clone();
    let text = std::fs::read_to_string(&src).unwrap();
    let orig = load(&src);

    // 1. One node renamed (`view_3` → `reshape_1`), every use of the name with it.
    let one = rename_in_text(&text, &|w| (w == "view_3").then(|| "reshape_1".into()));
    let p1 = tmp.path().join("one.txt");
    std::fs::write(&p1, &one).unwrap();
    let one = load(&p1);
    let r = report(&orig, &one);
    assert_eq!(r.renamed.len(), 1);
    assert_eq!(
        (r.renamed[0].from.as_str(), r.renamed[0].to.as_str()),
        ("view_3", "reshape_1")
    );
    assert!(r.added.is_empty() && r.removed.is_empty(), "{r:?}");
    // Its consumer still reads the same node: no input change anywhere.
    assert!(r.changed.is_empty() && r.rewired.is_empty(), "{r:?}");
    assert_eq!(r.unchanged, orig.node_count());

    // 2. Renamed and changed: `mul_tensor` → `half`, its literal 0.5 → 0.25.
    let two = rename_in_text(&text, &|w| (w == "mul_tensor").then(|| "half".into()))
        .replace("(_unsafe_view_5, 0.5)", "(_unsafe_view_5, 0.25)");
    let p2 = tmp.path().join("two.txt");
    std::fs::write(&p2, &two).unwrap();
    let two = load(&p2);
    let r = report(&orig, &two);
    assert_eq!(r.renamed.len(), 1);
    assert_eq!(r.renamed[0].from, "mul_tensor");
    assert_eq!(r.renamed[0].to, "half");
    assert_eq!(changed(&r), [("half", fields(&[Field::Args]))]);
    assert!(r.added.is_empty() && r.removed.is_empty());

    // 3. Every node renamed, placeholders included: whole chains are matched by structure
    //    (inputs matched in one step enable their users), nothing added or removed.
    let g = &orig.graphs[0];
    let all = rename_in_text(&text, &|w| {
        (g.by_name.contains_key(w) && w != "output").then(|| format!("{w}_r"))
    });
    let p3 = tmp.path().join("all.txt");
    std::fs::write(&p3, &all).unwrap();
    let all = load(&p3);
    assert_eq!(all.node_count(), orig.node_count());
    let r = report(&orig, &all);
    assert!(r.added.is_empty() && r.removed.is_empty(), "{r:?}");
    assert!(r.changed.is_empty(), "{:?}", r.changed);
    assert_eq!(r.renamed.len(), orig.node_count() - 1);
    assert!(r.renamed.iter().all(|e| e.to == format!("{}_r", e.from)));

    // History follows the rename: the node of `reshape_1` was `view_3` before.
    let passes = [&orig, &one];
    let h = diff::node_history(&passes, "reshape_1");
    assert_eq!(h[0].event, HistoryEvent::Appeared);
    assert_eq!(h[0].name.as_deref(), Some("view_3"));
    assert_eq!(h[1].event, HistoryEvent::Unchanged);
    assert_eq!(h[1].renamed_from.as_deref(), Some("view_3"));
    assert_eq!(
        diff::first_pass_where(&passes, FirstQuery::NodeChanges("view_3".into())),
        Some(1)
    );
    assert_eq!(
        diff::first_pass_where(&passes, FirstQuery::NodeDisappears("view_3".into())),
        Some(1)
    );
}

#[test]
fn dynamo_graph_against_the_aot_graph() {
    // Any two graphs, here across levels: Dynamo's `l_x_`/parameter placeholders become
    // `argN_1` (paired by annotation, whatever their order), `operator.matmul` → `aten.mm` (a
    // target change under a new name: removed + added), `operator.add` → `aten.add.Tensor`
    // (same name `add`: changed target and inputs).
    let model = run_dir("npugraph_ex/mlp_inference").join("npugraph_ex/model__0");
    let a = load(&model.join("dynamo_out_graph.txt"));
    let b = load(&pass_files(&model.join("forward"))[0]);
    let r = report(&a, &b);
    let renamed: Vec<(&str, &str)> = r
        .renamed
        .iter()
        .map(|e| (e.from.as_str(), e.to.as_str()))
        .collect();
    assert_eq!(
        renamed,
        [
            ("l_self_parameters_w1_", "arg0_1"),
            ("l_x_", "arg1_1"),
            ("l_self_parameters_b1_", "arg2_1"),
            ("l_self_parameters_w2_", "arg3_1"),
            ("l_self_parameters_b2_", "arg4_1")
        ]
    );
    assert_eq!(r.added, ["mm", "relu", "mul", "mm_1"]);
    assert_eq!(r.removed, ["matmul", "h", "h_1", "matmul_1"]);
    assert_eq!(
        changed(&r),
        [
            ("add", fields(&[Field::Target, Field::Inputs])),
            ("add_1", fields(&[Field::Target, Field::Inputs]))
        ]
    );
}

// ---------------------------------------------------------------------------------------------
// Determinism, sub-graphs
// ---------------------------------------------------------------------------------------------

#[test]
fn diffs_are_deterministic() {
    let dir = phase_dir("showcase", "forward");
    let files = pass_files(&dir);
    for k in [2, 4, 6, 11] {
        let first = report(&load(&files[k - 1]), &load(&files[k]));
        for _ in 0..3 {
            let again = report(&load(&files[k - 1]), &load(&files[k]));
            assert_eq!(first, again);
            assert_eq!(
                serde_json::to_string(&first).unwrap(),
                serde_json::to_string(&again).unwrap()
            );
        }
    }
}

#[test]
fn sub_graphs_are_diffed() {
    let dir = phase_dir("npugraph_ex/torch_cond", "forward");
    // Every pass dumps the same graph: empty diffs, sub-graphs included.
    assert_eq!(changing_passes(&dir), Vec::<usize>::new());
    let files = pass_files(&dir);
    let orig = load(&files[0]);
    let d = diff::diff(&orig, &orig);
    let classes: Vec<&str> = d.pairs.iter().map(|p| p.class.as_str()).collect();
    assert_eq!(classes, ["<lambda>", "true_graph_0", "false_graph_0"]);
    assert_eq!(
        d.counts().unchanged,
        orig.graphs.iter().map(|g| g.nodes.len()).sum::<usize>()
    );

    // A variation: true branch's literal 2 → 3; false branch gets a `neg` before its return.
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(&dir, tmp.path());
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let text = text
        .replace(
            "torch.ops.aten.mul.Tensor(sin, 2)",
            "torch.ops.aten.mul.Tensor(sin, 3)",
        )
        .replace(
            "            add: \"f32[4, 16]\" = torch.ops.aten.add.Tensor(cos, 1);  cos = None\n            return (add,)",
            "            add: \"f32[4, 16]\" = torch.ops.aten.add.Tensor(cos, 1);  cos = None\n            neg: \"f32[4, 16]\" = torch.ops.aten.neg.default(add);  add = None\n            return (neg,)",
        );
    let name = files[1].file_name().unwrap();
    let changed_path = tmp.path().join(name);
    std::fs::write(&changed_path, &text).unwrap();
    let b = load(&changed_path);
    let r = report(&orig, &b);
    assert_eq!(r.added, ["false_graph_0/neg"]);
    assert!(r.removed.is_empty() && r.renamed.is_empty());
    assert_eq!(
        changed(&r),
        [
            ("true_graph_0/mul", fields(&[Field::Args])),
            ("false_graph_0/output", fields(&[Field::Inputs]))
        ]
    );
    assert!(rewired(&r).contains(&(
        "false_graph_0/add",
        "false_graph_0/output",
        EdgeKind::Removed
    )));
    // Lookups both ways through the pair of the sub-graph.
    let d = diff::diff(&orig, &b);
    let (g, i) = diff::resolve(&b, "true_graph_0/mul").unwrap();
    assert_eq!(b.graphs[g].name, "true_graph_0");
    assert_eq!(
        d.status_b(g, i),
        Some(NodeStatus::Changed {
            fields: fields(&[Field::Args])
        })
    );
    let (ga, ia) = d.b_to_a(g, i).unwrap();
    assert_eq!(orig.graphs[ga].nodes[ia].name, "mul");
    assert_eq!(d.a_to_b(ga, ia), Some((g, i)));
    assert_eq!(d.status_a(ga, ia), d.status_b(g, i));
    let h = diff::node_history(&[&orig, &b], "true_graph_0/mul");
    assert_eq!(h[1].event, HistoryEvent::Changed(fields(&[Field::Args])));
    assert_eq!(h[1].name.as_deref(), Some("true_graph_0/mul"));

    // The CLI on the copied phase folder: `DIR:k` selectors, qualified names in JSON.
    let sel = |k: usize| format!("{}:{k}", tmp.path().display());
    let v = stdout_json(&fxray(&["diff", &sel(0), &sel(1), "--json"]));
    assert_eq!(v["added"], serde_json::json!(["false_graph_0/neg"]));
}

// ---------------------------------------------------------------------------------------------
// Text diff
// ---------------------------------------------------------------------------------------------

#[test]
fn text_diff_of_real_passes() {
    let files = pass_files(&phase_dir("npugraph_ex/mlp_inference", "forward"));
    let a = std::fs::read_to_string(&files[3]).unwrap();
    let b = std::fs::read_to_string(&files[4]).unwrap();
    let lines = diff::text_diff(&a, &b);
    let count = |t: LineTag| lines.iter().filter(|l| l.tag == t).count();
    // As `diff 003_… 004_…` shows: 3a4, 5,6c6,7, 12a14, 14,15c16,17.
    assert_eq!(count(LineTag::Delete), 4);
    assert_eq!(count(LineTag::Insert), 6);
    assert_eq!(count(LineTag::Equal), a.lines().count() - 4);
    // Every line of both files, numbered.
    let olds: Vec<usize> = lines.iter().filter_map(|l| l.old_line).collect();
    let news: Vec<usize> = lines.iter().filter_map(|l| l.new_line).collect();
    assert_eq!(olds, (1..=a.lines().count()).collect::<Vec<_>>());
    assert_eq!(news, (1..=b.lines().count()).collect::<Vec<_>>());
    for l in &lines {
        let src = match l.tag {
            LineTag::Delete => a.lines().nth(l.old_line.unwrap() - 1),
            _ => b.lines().nth(l.new_line.unwrap() - 1),
        };
        assert_eq!(Some(l.text.as_str()), src);
    }
    // relu now reads addmm_default: the changed word is highlighted, not the whole line.
    let relu = lines
        .iter()
        .find(|l| l.tag == LineTag::Insert && l.text.contains("relu.default(addmm_default)"))
        .expect("relu line");
    let spans: Vec<&str> = relu.spans.iter().map(|r| &relu.text[r.clone()]).collect();
    assert!(spans.contains(&"addmm_default"), "{spans:?}");
    assert!(relu.spans.iter().map(|r| r.len()).sum::<usize>() < relu.text.len() / 2);
    assert_eq!(diff::hunks(&lines, 0).len(), 4);
    assert!(diff::hunks(&diff::text_diff(&a, &a), 3).is_empty());
}

// ---------------------------------------------------------------------------------------------
// CLI
// ---------------------------------------------------------------------------------------------

#[test]
fn cli_diff_json_shape_and_selectors() {
    let dir = phase_dir("npugraph_ex/mlp_inference", "forward");
    let sel = |k: usize| format!("{}:{k}", dir.display());
    let v = stdout_json(&fxray(&["diff", &sel(3), &sel(4), "--json"]));
    let keys: BTreeSet<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        BTreeSet::from([
            "added",
            "removed",
            "changed",
            "renamed",
            "unchanged",
            "rewired"
        ])
    );
    assert_eq!(
        v["added"],
        serde_json::json!(["addmm_default", "addmm_default_1"])
    );
    assert_eq!(v["removed"], serde_json::json!([]));
    assert_eq!(
        v["changed"],
        serde_json::json!([
            {"name": "relu", "fields": ["inputs"]},
            {"name": "output", "fields": ["inputs"]}
        ])
    );
    assert_eq!(v["renamed"], serde_json::json!([]));
    assert_eq!(v["unchanged"], 11);
    assert_eq!(
        v["rewired"][0],
        serde_json::json!({"from": "add", "to": "relu", "kind": "removed"})
    );

    // Files instead of selectors: the same answer.
    let files = pass_files(&dir);
    let w = stdout_json(&fxray(&[
        "diff",
        files[3].to_str().unwrap(),
        files[4].to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(v, w);

    // Text: the summary line first, then nodes by status; exit 0 when they differ.
    let out = fxray(&["diff", &sel(9), &sel(10)]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text.lines().next(),
        Some("+0 \u{2212}5 ~0 renamed 0, 10 unchanged")
    );
    assert!(text.contains("removed (5)"), "{text}");
    assert!(
        text.contains("  - mul  aten.mul.Tensor  f32[4, 32]"),
        "{text}"
    );
    // …and when they do not.
    let out = fxray(&["diff", &sel(5), &sel(6)]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim_end(),
        "+0 \u{2212}0 ~0 renamed 0, 15 unchanged"
    );
    // Changed nodes say what changed.
    let t = phase_dir("npugraph_ex/transformer_train", "forward");
    let out = fxray(&[
        "diff",
        &format!("{}:4", t.display()),
        &format!("{}:5", t.display()),
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("  ~ view_3  [target]\n      target: aten.view \u{2192} aten.reshape\n"),
        "{text}"
    );
}

#[test]
fn cli_diff_bad_paths_and_selectors_exit_1_with_one_line() {
    let dir = phase_dir("npugraph_ex/mlp_inference", "forward");
    let good = format!("{}:0", dir.display());
    for bad in [
        format!("{}:99", dir.display()),
        format!("{}:x", dir.display()),
        "/nonexistent/forward:1".to_string(),
        "/nonexistent/graph.txt".to_string(),
        dir.display().to_string(),
        // A model folder holds phases, not passes.
        format!(
            "{}:1",
            run_dir("npugraph_ex/transformer_train")
                .join("npugraph_ex/model__0")
                .display()
        ),
    ] {
        for args in [["diff", &good, &bad], ["diff", &bad, &good]] {
            let out = fxray(&args);
            assert_eq!(out.status.code(), Some(1), "{bad}");
            assert!(out.stdout.is_empty(), "{bad}");
            let err = String::from_utf8(out.stderr).unwrap();
            assert_eq!(err.lines().count(), 1, "{bad}: {err}");
            assert!(err.starts_with("fxray: "), "{err}");
        }
    }
}

#[test]
fn summary_shows_per_pass_diff_counts() {
    let out = fxray(&[
        "summary",
        fixture("npugraph_ex/mlp_inference").to_str().unwrap(),
        "--json",
    ]);
    let v = stdout_json(&out);
    let passes = v["runs"][0]["models"][0]["phases"][0]["passes"]
        .as_array()
        .unwrap();
    assert!(
        passes[0].get("diff").is_none(),
        "the first pass has no previous one"
    );
    assert_eq!(
        passes[4]["diff"],
        serde_json::json!({"added": 2, "removed": 0, "changed": 2, "renamed": 0})
    );
    assert_eq!(
        passes[10]["diff"],
        serde_json::json!({"added": 0, "removed": 5, "changed": 0, "renamed": 0})
    );
    assert!(passes[1..].iter().all(|p| p["diff"].is_object()));

    // Showcase: passes with a non-zero diff are expected.json's `changing`.
    let exp: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("showcase/expected.json")).unwrap())
            .unwrap();
    let v = stdout_json(&fxray(&[
        "summary",
        fixture("showcase").to_str().unwrap(),
        "--json",
    ]));
    let passes = v["runs"][0]["models"][0]["phases"][0]["passes"]
        .as_array()
        .unwrap();
    let changing: Vec<&str> = passes[1..]
        .iter()
        .filter(|p| {
            let d = &p["diff"];
            ["added", "removed", "changed", "renamed"]
                .iter()
                .any(|k| d[k].as_u64().unwrap() > 0)
        })
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = exp["passes"]["changing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(changing, want);

    // Text: `+added −removed ~changed` after the node count.
    let out = fxray(&[
        "summary",
        fixture("npugraph_ex/mlp_inference").to_str().unwrap(),
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("apply_pattern_passes"))
        .unwrap();
    assert!(line.ends_with("15 nodes  +2 \u{2212}0 ~2"), "{line}");
    let line = text.lines().find(|l| l.contains(" 000 graph")).unwrap();
    assert!(line.ends_with("12 nodes"), "{line}");
}

#[test]
fn cli_bench_diff_prints_its_figures() {
    let dir = phase_dir("npugraph_ex/mlp_inference", "forward");
    let out = fxray(&[
        "bench",
        "diff",
        &format!("{}:3", dir.display()),
        &format!("{}:4", dir.display()),
        "--rounds",
        "2",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let last = text.lines().last().unwrap();
    assert!(last.starts_with("diff_s="), "{text}");
    assert!(last.ends_with("nodes_a=13 nodes_b=15"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// Large graphs (run in release: cargo test --release --test it diff:: -- --ignored --nocapture)
// ---------------------------------------------------------------------------------------------

#[test]
#[ignore = "timing on the ~20k-node fixture; run with --release --ignored --nocapture"]
fn stress_20k_backward_diff_timing() {
    let files = pass_files(&phase_dir("npugraph_ex/stress_20k", "backward"));
    let g: Vec<FxFile> = files.iter().map(|p| load(p)).collect();
    assert_eq!(g[0].node_count(), 20_048);
    for (k, want) in [(1usize, (0usize, 0usize, 333usize)), (2, (0, 416, 499))] {
        let mut best = f64::MAX;
        let mut counts = Default::default();
        for _ in 0..5 {
            let t = std::time::Instant::now();
            let d = diff::diff(&g[k - 1], &g[k]);
            best = best.min(t.elapsed().as_secs_f64());
            counts = d.counts();
        }
        let c: diff::DiffCounts = counts;
        println!(
            "stress_20k backward {:03}→{k:03}: {c}  nodes {}→{}  best {:.1} ms",
            k - 1,
            g[k - 1].node_count(),
            g[k].node_count(),
            best * 1e3
        );
        // 001 folds 333 constant `full` nodes into frozen parameters (retargeted in place);
        // 002 removes 416 `alias` no-ops and rewires their 499 users.
        assert_eq!(
            (c.added, c.removed, c.changed, c.renamed),
            (want.0, want.1, want.2, 0)
        );
    }
}
