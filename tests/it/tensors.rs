//! Dumped tensors on the real fixtures: statistics equal numpy's (tests/data/tensor_stats.json,
//! made by tests/data/tensor_stats.py), exact NaN/Inf counts, the NaN tracer, msprobe
//! statistics, and odd files reported without a crash.

use crate::common::{fixture, fxray, run_dir, stdout_json};
use fxray::analysis::nan_trace::{self, Bad, Source};
use fxray::analysis::tensor_stats;
use fxray::model::tensor::{Io, TensorSummary};
use fxray::pipeline::tensors::{summarize_all, summarize_file};
use fxray::sources::npy::NpyArray;
use fxray::sources::{data_dump, load, msprobe};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

fn expected() -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tensor_stats.json");
    serde_json::from_slice(&std::fs::read(p).expect("tensor_stats.json")).expect("json")
}

fn data_npy(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/npy")
        .join(name)
}

fn path_of(rel: &str) -> PathBuf {
    match rel.split_once('/') {
        Some(("fixtures", r)) => fixture(r),
        Some(("npy", r)) => data_npy(r),
        _ => panic!("unexpected key {rel}"),
    }
}

fn close(a: f64, b: f64, scale: f64) -> bool {
    a == b || (a - b).abs() <= 1e-9 * scale.max(f64::MIN_POSITIVE)
}

fn check(rel: &str, want: &Value, got: &Result<TensorSummary, fxray::pipeline::failure::Failure>) {
    if want.get("error").is_some() {
        let e = got.as_ref().expect_err(rel);
        assert!(e.message().contains("object array"), "{rel}: {e}");
        return;
    }
    let s = got.as_ref().unwrap_or_else(|e| panic!("{rel}: {e}"));
    let u = |k: &str| want[k].as_u64().unwrap_or_else(|| panic!("{rel} {k}"));
    assert_eq!(s.info.dtype, want["dtype"].as_str().unwrap(), "{rel}");
    let shape: Vec<u64> = want["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect();
    assert_eq!(s.info.shape, shape, "{rel}");
    assert_eq!(s.info.fortran_order, want["fortran_order"] == true, "{rel}");
    let st = &s.stats;
    assert_eq!(
        (st.count, st.nan, st.pos_inf, st.neg_inf, st.zero),
        (u("count"), u("nan"), u("pos_inf"), u("neg_inf"), u("zero")),
        "{rel}: counts"
    );
    let Some(min) = want["min"].as_f64() else {
        assert!(
            st.min.is_none() && st.mean.is_none(),
            "{rel}: no finite values"
        );
        return;
    };
    let max = want["max"].as_f64().unwrap();
    // Exact up to serde_json's float parsing (not always correctly rounded; numpy wrote repr).
    let ulps = |a: f64, b: f64| (a - b).abs() <= 2.0 * f64::EPSILON * b.abs();
    assert!(
        ulps(st.min.unwrap(), min) && ulps(st.max.unwrap(), max),
        "{rel}: min/max {:?} {:?} vs numpy {min} {max}",
        st.min,
        st.max
    );
    let scale = min.abs().max(max.abs());
    for (k, v) in [("mean", st.mean), ("std", st.std)] {
        let w = want[k].as_f64().unwrap();
        assert!(close(v.unwrap(), w, scale), "{rel}: {k} {v:?} vs numpy {w}");
    }
    match want.get("histogram") {
        Some(h) => {
            let h: Vec<u64> = h
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            assert_eq!(
                st.histogram.as_ref().map(|x| &x.counts),
                Some(&h),
                "{rel}: histogram"
            );
        }
        None => assert!(st.histogram.is_none(), "{rel}: numpy has no histogram"),
    }
}

#[test]
fn statistics_equal_numpys_on_every_dumped_file_and_dtype() {
    let exp = expected();
    let files = exp["files"].as_object().unwrap();
    assert!(files.len() > 1600, "{} files", files.len());
    let paths: Vec<PathBuf> = files.keys().map(|k| path_of(k)).collect();
    let got: HashMap<PathBuf, _> = summarize_all(&paths).into_iter().collect();
    for (rel, want) in files {
        check(rel, want, &got[&path_of(rel)]);
    }
    // Every dtype and layout of the small set was really covered.
    for name in [
        "f16.npy",
        "f16_be.npy",
        "f32_be.npy",
        "f64_fortran.npy",
        "i8.npy",
        "u16.npy",
        "i32_be.npy",
        "bool.npy",
        "scalar_0d.npy",
        "int_0d.npy",
        "empty.npy",
    ] {
        assert!(files.contains_key(&format!("npy/{name}")), "{name}");
    }
}

#[test]
fn big_endian_and_fortran_read_the_same_values() {
    let le = NpyArray::open(&data_npy("f32_le.npy")).unwrap();
    let be = NpyArray::open(&data_npy("f32_be.npy")).unwrap();
    let fo = NpyArray::open(&data_npy("f64_fortran.npy")).unwrap();
    assert!(be.big_endian && fo.info.fortran_order);
    for i in 0..35 {
        let (a, b, c) = (
            le.get_c(i).unwrap(),
            be.get_c(i).unwrap(),
            fo.get_c(i).unwrap(),
        );
        assert!(
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            "{i}"
        );
        // f64 holds the f32 values exactly only after rounding to f32.
        assert!((c as f32).to_bits() == (a as f32).to_bits() || (a.is_nan() && c.is_nan()));
    }
    // The 2-D slice of a Fortran array comes out in C order.
    let sl = tensor_stats::slice2d(&fo, &[], 1000).unwrap();
    assert_eq!((sl.rows, sl.cols, sl.cut), (5, 7, false));
    assert_eq!(sl.values[1].to_bits(), fo.get_c(1).unwrap().to_bits());
    let i64s = NpyArray::open(&data_npy("i64.npy")).unwrap();
    let sl = tensor_stats::slice2d(&i64s, &[], 10).unwrap();
    assert_eq!(sl.values, (-6..4).map(f64::from).collect::<Vec<_>>());
    assert!(sl.cut);
    let cmp = tensor_stats::compare(&le, &fo).unwrap();
    assert_eq!(cmp.non_finite, 3);
    assert!(cmp.max_abs_diff < 1e-6, "{cmp:?}");
    assert!((cmp.cosine.unwrap() - 1.0).abs() < 1e-12);
}

fn showcase_graph() -> PathBuf {
    run_dir("showcase").join(
        "npugraph_ex/model__0/forward/018_aot_forward_graph_after_resolve_default_stream_markers.txt",
    )
}

fn showcase_facts() -> Value {
    let p = fixture("showcase/expected.json");
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn strings(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn showcase_dump_layout_and_nan_inf_nodes_match_the_facts() {
    let facts = showcase_facts();
    let cat = data_dump::scan(&fixture("showcase/data_dump")).unwrap();
    assert_eq!(cat.ranks.len(), 1);
    let g = &cat.ranks[0].graphs[0];
    assert_eq!(g.name, "graph_1");
    let fx = load::graph(&showcase_graph()).unwrap();
    for s in &g.steps {
        let f = &facts["data_dump"]["steps"][s.step.to_string()];
        let files: Vec<_> = s.nodes.values().flat_map(|n| &n.files).collect();
        assert_eq!(files.len() as u64, f["npy_files"].as_u64().unwrap());
        let inputs = files.iter().filter(|f| f.name.io == Io::Input).count();
        assert_eq!(inputs as u64, f["input_files"].as_u64().unwrap());
        let lists = files.iter().filter(|f| f.name.sub.is_some()).count();
        assert_eq!(lists as u64, f["list_input_files"].as_u64().unwrap());
        assert_eq!(s.nodes.len() as u64, f["nodes_dumped"].as_u64().unwrap());
        assert!(s.odd_names.is_empty());
        assert!(
            s.nodes
                .values()
                .all(|n| n.files.iter().all(|f| f.name.ts == n.ts))
        );
        // The dump joins the final pass fully.
        let q = nan_trace::match_quality(&fx.graphs[0], s);
        assert_eq!((q.dumped, q.found, q.same_target), (213, 213, 213), "{q:?}");

        let paths: Vec<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
        let sums: HashMap<PathBuf, TensorSummary> = summarize_all(&paths)
            .into_iter()
            .map(|(p, r)| (p, r.unwrap()))
            .collect();
        let with = |pred: &dyn Fn(&TensorSummary) -> bool| -> BTreeSet<String> {
            s.nodes
                .values()
                .filter(|n| n.outputs().any(|f| pred(&sums[&f.path])))
                .map(|n| n.node.clone())
                .collect()
        };
        assert_eq!(
            with(&|t| t.stats.nan > 0),
            strings(&f["nodes_with_nan_output"])
        );
        assert_eq!(
            with(&|t| t.stats.inf() > 0),
            strings(&f["nodes_with_inf_output"])
        );
    }
}

/// Statistics of every file of one step, by path.
fn step_stats(step: &fxray::model::tensor::StepDump) -> HashMap<PathBuf, TensorSummary> {
    let paths: Vec<PathBuf> = step
        .nodes
        .values()
        .flat_map(|n| &n.files)
        .map(|f| f.path.clone())
        .collect();
    summarize_all(&paths)
        .into_iter()
        .filter_map(|(p, r)| r.ok().map(|s| (p, s)))
        .collect()
}

#[test]
fn nan_tracer_finds_the_origin_in_the_showcase() {
    let facts = showcase_facts();
    let cat = data_dump::scan(&fixture("showcase/data_dump")).unwrap();
    let fx = load::graph(&showcase_graph()).unwrap();
    let g = &cat.ranks[0].graphs[0];
    let (s0, s1) = (&g.steps[0], &g.steps[1]);
    let (st0, st1) = (step_stats(s0), step_stats(s1));
    let look0 = |p: &Path| st0.get(p).map(|s| &s.stats);
    let look1 = |p: &Path| st1.get(p).map(|s| &s.stats);

    assert!(nan_trace::first_bad(s0, Some(&fx.graphs[0]), Bad::Nan, &look0).is_none());
    let t = nan_trace::first_bad(s1, Some(&fx.graphs[0]), Bad::Nan, &look1).unwrap();
    let f1 = &facts["data_dump"]["steps"]["1"];
    assert_eq!(t.node, f1["first_nan_output_node"].as_str().unwrap());
    assert_eq!(t.target, f1["first_nan_output_target"].as_str().unwrap());
    let slots: Vec<&str> = t.carried_by.iter().map(|c| c.slot.as_str()).collect();
    assert_eq!(slots, ["INPUT.1"]);
    // add_6 = add(mul_6, arg14_1): the NaN came in with the attention mask, a graph input.
    assert_eq!(t.carried_by[0].source, Source::GraphInput("arg14_1".into()));

    // Inf is traced apart: the mask's −Inf appears at masked_fill in both steps, from a constant.
    let t = nan_trace::first_bad(s0, Some(&fx.graphs[0]), Bad::Inf, &look0).unwrap();
    assert_eq!(t.node, "masked_fill");
    assert_eq!(t.carried_by[0].source, Source::Constant("-inf".into()));
    assert!(nan_trace::first_bad(s0, Some(&fx.graphs[0]), Bad::PosInf, &look0).is_none());
}

#[test]
fn nan_tracer_on_the_attention_dump_finds_softmax_producing_it() {
    let root = fixture("data_dump/attention_bf16_nan_inf");
    let cat = data_dump::scan(&root).unwrap();
    let steps = &cat.ranks[0].graphs[0].steps;
    let graph = crate::common::pass_files("data_dump/attention_bf16_nan_inf", "forward")
        .pop()
        .unwrap();
    let fx = load::graph(&graph).unwrap();
    let st1 = step_stats(&steps[1]);
    let look = |p: &Path| st1.get(p).map(|s| &s.stats);
    let t = nan_trace::first_bad(&steps[1], Some(&fx.graphs[0]), Bad::Nan, &look).unwrap();
    assert_eq!(t.node, "_softmax");
    assert!(t.carried_by.is_empty(), "produced there: {t:?}");
    // Without a graph, execution order (the per-call timestamps) finds the same node.
    let t2 = nan_trace::first_bad(&steps[1], None, Bad::Nan, &look).unwrap();
    assert_eq!(t2.node, "_softmax");
    let st0 = step_stats(&steps[0]);
    let look0 = |p: &Path| st0.get(p).map(|s| &s.stats);
    assert!(nan_trace::first_bad(&steps[0], Some(&fx.graphs[0]), Bad::Nan, &look0).is_none());
    assert!(nan_trace::first_bad(&steps[0], Some(&fx.graphs[0]), Bad::NegInf, &look0).is_some());
}

#[test]
fn cli_first_nan_prints_the_node_then_its_origin() {
    let g = showcase_graph();
    let out = fxray(&[
        "tensors",
        fixture("showcase/data_dump").to_str().unwrap(),
        "--first",
        "nan",
        "--graph",
        g.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "add_6");
    assert!(
        text.contains("carried in by INPUT.1 (8 NaN) from arg14_1, a graph input"),
        "{text}"
    );
    assert!(text.contains("step 1"), "{text}");
}

#[test]
fn cli_json_statistics_of_one_node() {
    let out = fxray(&[
        "tensors",
        fixture("showcase/data_dump").to_str().unwrap(),
        "--node",
        "add_6",
        "--step",
        "1",
        "--json",
    ]);
    let v = stdout_json(&out);
    let t = v["tensors"].as_array().unwrap();
    let slots: Vec<&str> = t.iter().map(|r| r["slot"].as_str().unwrap()).collect();
    assert_eq!(slots, ["INPUT.0", "INPUT.1", "OUTPUT.0"]);
    assert_eq!(t[2]["summary"]["stats"]["nan"], 16);
    assert_eq!(t[1]["summary"]["stats"]["nan"], 8);
    assert_eq!(
        t[2]["summary"]["info"]["shape"],
        serde_json::json!([2, 2, 8, 8])
    );
}

#[test]
fn msprobe_statistics_with_nulls() {
    let facts = showcase_facts();
    let (steps, errors) = msprobe::scan(&fixture("showcase/msprobe_dump"));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(steps.len(), 2);
    for s in &steps {
        let f = &facts["msprobe"][format!("step{}", s.step)];
        assert_eq!(s.who, "pid3064");
        assert_eq!(s.task.as_deref(), f["task"].as_str());
        assert_eq!(s.entries.len() as u64, f["entries"].as_u64().unwrap());
        let records: usize = s.entries.iter().map(|e| e.tensors.len()).sum();
        assert_eq!(records as u64, f["tensor_records"].as_u64().unwrap());
        let nulls: BTreeSet<String> = s
            .entries
            .iter()
            .filter(|e| e.tensors.iter().any(|t| t.null_stats()))
            .map(|e| e.key.to_string())
            .collect();
        assert_eq!(
            nulls,
            strings(&f["entries_with_null_stats"]),
            "step {}",
            s.step
        );
        let keys: BTreeSet<String> = s.entries.iter().map(|e| e.key.to_string()).collect();
        assert_eq!(keys, strings(&f["keys"]));
    }
    assert_eq!(
        msprobe::module_path("Module.layers.0.mlp.MLP.forward.0").as_deref(),
        Some("layers.0.mlp")
    );
    // The CLI reads an msprobe root too.
    let out = fxray(&[
        "tensors",
        fixture("showcase/msprobe_dump").to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Module.layers.0.mlp.MLP.forward.0  input_args.0  torch.bfloat16"));
    assert!(text.contains("max=null"));
}

#[test]
fn odd_files_are_reported_not_fatal() {
    let tmp = tempfile::tempdir().unwrap();
    let step = tmp.path().join("worldsize1_global_rank0/graph_1/0");
    std::fs::create_dir_all(&step).unwrap();
    let src = fixture("showcase/data_dump/worldsize1_global_rank0/graph_1/1");
    let add6 = std::fs::read_dir(&src)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("add_6-aten.add.Tensor.OUTPUT.0.")
        })
        .unwrap();
    let bytes = std::fs::read(&add6).unwrap();
    // Truncated mid-data: 100 of 256 floats and a half.
    let header = bytes.len() - 256 * 4;
    std::fs::write(
        step.join("trunc-aten.add.Tensor.OUTPUT.0.20261129120500000000.npy"),
        &bytes[..header + 402],
    )
    .unwrap();
    // Truncated inside the header, wrong magic, empty, a pickled None argument.
    std::fs::write(
        step.join("head-aten.add.Tensor.OUTPUT.0.20261129120500000001.npy"),
        &bytes[..20],
    )
    .unwrap();
    std::fs::write(
        step.join("magic-aten.add.Tensor.OUTPUT.0.20261129120500000002.npy"),
        b"PK\x03\x04 this is a zip, not an array",
    )
    .unwrap();
    std::fs::write(
        step.join("empty-aten.add.Tensor.OUTPUT.0.20261129120500000003.npy"),
        b"",
    )
    .unwrap();
    std::fs::copy(
        data_npy("object_none.npy"),
        step.join("none_arg-aten.add.Tensor.INPUT.1.20261129120500000004.npy"),
    )
    .unwrap();
    std::fs::write(step.join("notes.txt"), b"hello").unwrap();

    let cat = data_dump::scan(tmp.path()).unwrap();
    let s = &cat.ranks[0].graphs[0].steps[0];
    assert_eq!(s.nodes.len(), 5);
    assert_eq!(s.odd_names.len(), 1);
    let sum = |node: &str| summarize_file(&s.nodes[node].files[0].path);

    let t = sum("trunc").unwrap();
    assert_eq!(t.stats.count, 100);
    assert_eq!(t.info.elements(), 256);
    assert!(
        t.warning.as_deref().unwrap().contains("100 of 256"),
        "{t:?}"
    );
    let full = summarize_file(&add6).unwrap();
    assert!(t.stats.nan <= full.stats.nan);

    // Each is the file's problem (not the link's, not the work's), said in its words.
    let unreadable = |name: &str, says: &str| {
        let e = sum(name).unwrap_err();
        assert!(
            matches!(e, fxray::pipeline::failure::Failure::Unreadable(_))
                && e.message().contains(says),
            "{name}: {e:?}"
        );
    };
    unreadable("head", "header");
    unreadable("magic", "wrong magic");
    unreadable("empty", "empty");
    unreadable("none_arg", "object array");

    // The CLI lists them all and still succeeds.
    let out = fxray(&["tensors", tmp.path().to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("unreadable: object array"), "{text}");
    assert!(text.contains("100 of 256"), "{text}");
    assert!(text.contains("not a dump file name"), "{text}");
    // And a folder with no dump is one clear line.
    let empty = tempfile::tempdir().unwrap();
    let out = fxray(&["tensors", empty.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no data dump"));
}

#[test]
fn no_cut_or_flipped_byte_of_an_npy_panics() {
    // Every prefix of a real file, and every single-byte change of its header, reads or fails
    // with a message: never a panic.
    let src = fixture("showcase/data_dump/worldsize1_global_rank0/graph_1/0");
    let file = std::fs::read_dir(&src)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.to_string_lossy()
                .contains("cat-aten.cat.default.INPUT.0.0.")
        })
        .unwrap();
    let bytes = std::fs::read(&file).unwrap();
    let mut ok = 0;
    for n in 0..bytes.len() {
        if let Ok(a) = NpyArray::from_vec(bytes[..n].to_vec()) {
            let s = tensor_stats::summarize(&a);
            assert!(s.stats.count <= a.info.elements());
            ok += 1;
        }
    }
    assert!(ok > 0);
    // Headers promising 2^48 elements (16 present), and more than u64 holds.
    let npy = |shape: &str| {
        let mut v = b"\x93NUMPY\x01\x00".to_vec();
        let mut h = format!("{{'descr': '<f4', 'fortran_order': True, 'shape': {shape}, }}");
        while (10 + h.len() + 1) % 64 != 0 {
            h.push(' ');
        }
        h.push('\n');
        v.extend_from_slice(&(h.len() as u16).to_le_bytes());
        v.extend_from_slice(h.as_bytes());
        v.extend_from_slice(&[0u8; 64]);
        v
    };
    let a = NpyArray::from_vec(npy("(65536, 65536, 65536)")).unwrap();
    let s = tensor_stats::summarize(&a);
    assert_eq!((s.stats.count, s.stats.zero), (16, 16));
    assert!(s.warning.unwrap().contains("16 of 281474976710656"));
    let sl = tensor_stats::slice2d(&a, &[5], 100).unwrap();
    assert!(sl.cut);
    let e = NpyArray::from_vec(npy("(4294967296, 4294967296, 16)"))
        .err()
        .unwrap();
    assert_eq!(e, fxray::sources::npy::NpyError::ShapeOverflow);
    assert!(e.to_string().contains("more elements than fit"), "{e}");
    for i in 0..128.min(bytes.len()) {
        for b in [0u8, b'9', b'(', b'\'', 0xff] {
            let mut m = bytes.clone();
            m[i] = b;
            if let Ok(a) = NpyArray::from_vec(m) {
                let _ = tensor_stats::summarize(&a);
                let _ = tensor_stats::slice2d(&a, &[7, 7, 7], 100);
            }
        }
    }
}

#[test]
fn a_dump_kept_elsewhere_is_attached_to_the_open_run() {
    let case = "data_dump/attention_bf16_nan_inf";
    // Opening only the run: no dump beside it.
    let mut app = crate::common::ui::opened(&run_dir(case));
    assert!(app.tensors.is_empty());
    app.attach_dump(&fixture(case));
    assert!(app.wait_idle(crate::common::ui::WAIT));
    let t = &app.tensors;
    assert_eq!(t.catalog.ranks.len(), 1);
    assert_eq!(t.pending, 0);
    assert_eq!(t.summaries.len(), 374);
    assert!(t.summaries.values().all(|r| r.is_ok()));
    // The dump joins the run's last pass, and the tracer runs from the app.
    let last = crate::common::pass_files(case, "forward").pop().unwrap();
    app.select_graph(&last);
    assert!(app.wait_idle(crate::common::ui::WAIT));
    let graph = app.phase.as_ref().unwrap().current_file().unwrap().graphs[0].clone();
    let (_, g, q) = app.tensors.best_match(&graph).unwrap();
    assert_eq!(g.name, "graph_1");
    assert_eq!(q.found, q.dumped, "{q:?}");
    app.trace_first(Bad::Nan, None, 1);
    assert_eq!(
        app.phase.as_ref().unwrap().selected.as_deref(),
        Some("_softmax")
    );
    // A folder with nothing to attach says so.
    let empty = tempfile::tempdir().unwrap();
    app.attach_dump(empty.path());
    assert!(app.wait_idle(crate::common::ui::WAIT));
    assert!(
        app.tensors
            .errors
            .iter()
            .any(|e| e.contains("no data dump or msprobe dump"))
    );
}

/// Fuzzing found a header whose nested `[` made npyz's parser take seconds: it is refused at
/// once now (`tests/data/fuzz/npy_deep_header.npy` is the fuzzer's input).
#[test]
fn a_header_nested_too_deeply_is_refused_at_once() {
    let bytes = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/fuzz/npy_deep_header.npy"),
    )
    .expect("fuzz input");
    let t = std::time::Instant::now();
    let result = fxray::sources::npy::NpyArray::from_vec(bytes);
    let e = result.err().expect("refused");
    assert_eq!(e, fxray::sources::npy::NpyError::HeaderTooDeep);
    assert_eq!(
        e.to_string(),
        "unreadable .npy header: brackets nested too deeply"
    );
    assert!(t.elapsed() < std::time::Duration::from_secs(1));
}
