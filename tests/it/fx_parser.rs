//! The FX text parser (`sources::fx_text`) against the real fixtures in `tests/fixtures`,
//! the docs/formats.md examples, truncation at every line, and hostile input.

use fxray::model::fx::{
    Arg, FxFile, FxGraph, FxNode, GraphInterface, OpKind, Short, SourceLoc, Value, ValueMeta,
};
use fxray::sources::fx_text::{interface, parse_fx};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Every file under `dir`, depth first, sorted for stable output.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Pass dumps `NNN_aot_*graph*.txt`, `dynamo_out_graph.txt`, and Inductor `fx_graph_*.py`.
fn is_graph_file(p: &Path) -> bool {
    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let pass_dump = name.len() > 4
        && name.as_bytes()[..3].iter().all(u8::is_ascii_digit)
        && name[3..].starts_with("_aot_")
        && name.contains("graph")
        && name.ends_with(".txt");
    pass_dump
        || name == "dynamo_out_graph.txt"
        || matches!(
            name,
            "fx_graph_readable.py" | "fx_graph_transformed.py" | "fx_graph_runnable.py"
        )
}

/// The one fixture file under `dir` whose path ends with `suffix` (run dirs carry timestamps).
fn fixture(dir: &str, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = walk(&Path::new(FIXTURES).join(dir))
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(
        found.len(),
        1,
        "expected one `{suffix}` under {dir}, found {found:?}"
    );
    found[0].clone()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("reading {}: {e}", p.display()))
}

fn parse_fixture(dir: &str, suffix: &str) -> FxFile {
    let f = parse_fx(&read(&fixture(dir, suffix)));
    assert!(f.unparsed.is_empty(), "{suffix}: {:?}", f.unparsed);
    assert!(f.problems.is_empty(), "{suffix}: {:?}", f.problems);
    check_invariants(&f);
    f
}

fn node<'a>(g: &'a FxGraph, name: &str) -> &'a FxNode {
    let i = g
        .by_name
        .get(name)
        .unwrap_or_else(|| panic!("no node `{name}` in `{}`", g.name));
    &g.nodes[i]
}

fn idx(g: &FxGraph, name: &str) -> usize {
    g.by_name
        .get(name)
        .unwrap_or_else(|| panic!("no node `{name}`"))
}

fn n(name: &str) -> Arg {
    Arg::Node(name.into())
}

fn ex(text: &str) -> Arg {
    Arg::Expr(text.into())
}

fn shape(node: &FxNode) -> Vec<&str> {
    let t = node
        .tensor()
        .unwrap_or_else(|| panic!("`{}` has no tensor meta", node.name));
    t.shape.iter().map(|d| d.as_str()).collect()
}

fn by_op(g: &FxGraph) -> BTreeMap<&'static str, usize> {
    let mut m = BTreeMap::new();
    for node in &g.nodes {
        *m.entry(node.op.as_str()).or_insert(0) += 1;
    }
    m
}

/// Structural facts every parse must satisfy, whatever the input.
fn check_invariants(f: &FxFile) {
    for (gi, g) in f.graphs.iter().enumerate() {
        assert_eq!(g.by_name.len(), g.nodes.len(), "graph {gi}: by_name size");
        let users: usize = g.nodes.iter().map(|x| x.users.len()).sum();
        assert_eq!(g.edges().count(), users, "graph {gi}: an edge per user");
        if let Some(p) = g.parent {
            assert!(p < gi, "graph {gi}: parent {p} must come first");
        }
        if let Some(u) = g.used_by {
            let p = g.parent.expect("used_by without parent");
            assert!(f.graphs[p].nodes[u].subgraphs.contains(&gi));
        }
        for (i, node) in g.nodes.iter().enumerate() {
            assert_eq!(
                g.by_name.get(&node.name),
                Some(i),
                "graph {gi}: by_name[{}]",
                node.name
            );
            let mut seen = node.inputs.clone();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(
                seen.len(),
                node.inputs.len(),
                "`{}`: duplicate inputs",
                node.name
            );
            for &j in &node.inputs {
                assert!(j < i, "`{}` uses a later node", node.name);
                assert!(g.nodes[j].users.contains(&i));
            }
            for &u in &node.users {
                assert!(g.nodes[u].inputs.contains(&i));
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Every fixture
// ---------------------------------------------------------------------------------------------

#[test]
fn every_fixture_graph_file_parses_without_unparsed_lines_or_problems() {
    let files: Vec<PathBuf> = walk(Path::new(FIXTURES))
        .into_iter()
        .filter(|p| is_graph_file(p))
        .collect();
    assert!(files.len() >= 250, "only {} graph files found", files.len());
    let mut kinds = BTreeMap::new();
    for p in &files {
        let f = parse_fx(&read(p));
        let name = p.display();
        assert!(f.unparsed.is_empty(), "{name}: unparsed {:?}", f.unparsed);
        assert!(f.problems.is_empty(), "{name}: problems {:?}", f.problems);
        check_invariants(&f);
        let top = f
            .graphs
            .first()
            .unwrap_or_else(|| panic!("{name}: no graph"));
        assert!(top.parent.is_none());
        for g in &f.graphs {
            assert!(g.nodes.len() >= 2, "{name}: `{}` too small", g.name);
            let last = g.nodes.last().expect("nodes");
            assert_eq!(
                (last.op, last.name.as_str()),
                (OpKind::Output, "output"),
                "{name}"
            );
            assert_eq!(g.nodes.iter().filter(|x| x.op == OpKind::Output).count(), 1);
        }
        *kinds
            .entry(p.extension().and_then(|e| e.to_str()).unwrap_or(""))
            .or_insert(0) += 1;
    }
    // 6 Inductor runs × 3 fx_graph_*.py, and the torch-version fixtures' 21 each for torch
    // 2.1.2, 2.4.1, 2.6.0 and 2.15.0 (7 Inductor graphs × 3 files over five cases).
    assert_eq!(kinds.get("py"), Some(&(18 + 4 * 21)), "fx_graph_*.py files");
}

// ---------------------------------------------------------------------------------------------
// showcase/expected.json
// ---------------------------------------------------------------------------------------------

fn expected_json() -> serde_json::Value {
    let text = read(&Path::new(FIXTURES).join("showcase/expected.json"));
    serde_json::from_str(&text).expect("expected.json")
}

/// expected.json counts by torch op; it has no `call_method` key, so Dynamo's tensor-method
/// calls (`x.to(...)`, which FX records as call_method) are inside its `call_function`.
fn assert_by_op(g: &FxGraph, want: &serde_json::Value, what: &str) {
    let got = by_op(g);
    let count = |k: &str| got.get(k).copied().unwrap_or(0);
    let want = |k: &str| want[k].as_u64().unwrap_or(0) as usize;
    assert_eq!(
        count("placeholder"),
        want("placeholder"),
        "{what} placeholders"
    );
    assert_eq!(count("get_attr"), want("get_attr"), "{what} get_attr");
    assert_eq!(count("output"), want("output"), "{what} output");
    assert_eq!(
        count("call_function") + count("call_method"),
        want("call_function"),
        "{what} calls"
    );
}

#[test]
fn showcase_pass_files_match_expected_node_counts() {
    let exp = expected_json();
    let run_dir = exp["tree"]["run_dir"].as_str().expect("run_dir");
    let forward = Path::new(FIXTURES)
        .join("showcase")
        .join(run_dir)
        .join("npugraph_ex/model__0/forward");
    let counts = exp["passes"]["node_count_per_file"]
        .as_object()
        .expect("counts");
    assert_eq!(counts.len(), 19);
    for (file, count) in counts {
        let f = parse_fx(&read(&forward.join(file)));
        assert!(f.unparsed.is_empty() && f.problems.is_empty(), "{file}");
        assert_eq!(f.graphs.len(), 1, "{file}");
        assert_eq!(
            f.node_count() as u64,
            count.as_u64().expect("count"),
            "{file}"
        );
    }
    for entry in exp["passes"]["files"].as_array().expect("files") {
        let file = entry["file"].as_str().expect("file");
        let f = parse_fx(&read(&forward.join(file)));
        assert_eq!(
            f.node_count() as u64,
            entry["nodes"].as_u64().expect("nodes")
        );
        assert_by_op(&f.graphs[0], &entry["by_op"], file);
    }
}

#[test]
fn showcase_dynamo_graph_has_201_nodes() {
    let exp = expected_json();
    let path = Path::new(FIXTURES)
        .join("showcase")
        .join(exp["tree"]["dynamo_out_graph"].as_str().expect("path"));
    let f = parse_fx(&read(&path));
    assert!(f.unparsed.is_empty() && f.problems.is_empty());
    let g = &f.graphs[0];
    assert_eq!(g.nodes.len(), 201);
    assert_eq!(exp["dynamo_graph"]["nodes"], 201);
    assert_by_op(g, &exp["dynamo_graph"]["by_op"], "dynamo graph");
    let ops = by_op(g);
    assert_eq!(ops["placeholder"], 36);
    assert_eq!(ops["call_function"] + ops["call_method"], 164);
    assert_eq!(ops["output"], 1);
}

#[test]
fn showcase_final_graph_targets_and_get_attrs_match_expected() {
    let exp = expected_json();
    let fin = &exp["final_graph"];
    let path = Path::new(FIXTURES)
        .join("showcase")
        .join(fin["file"].as_str().expect("file"));
    let f = parse_fx(&read(&path));
    let g = &f.graphs[0];
    assert_eq!(g.nodes.len() as u64, fin["nodes"].as_u64().expect("nodes"));
    assert_by_op(g, &fin["by_op"], "final graph");
    let mut targets: BTreeMap<String, u64> = BTreeMap::new();
    for x in g.nodes.iter().filter(|x| x.op == OpKind::CallFunction) {
        let short = x.target.strip_prefix("torch.ops.").unwrap_or(&x.target);
        *targets.entry(short.to_string()).or_insert(0) += 1;
    }
    let want: BTreeMap<String, u64> = fin["targets"]
        .as_object()
        .expect("targets")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_u64().expect("count")))
        .collect();
    assert_eq!(targets, want);
    let get_attrs: Vec<(&str, &str)> = g
        .nodes
        .iter()
        .filter(|x| x.op == OpKind::GetAttr)
        .map(|x| (x.name.as_str(), &*x.target))
        .collect();
    assert_eq!(
        get_attrs,
        [("triu", "_frozen_param0"), ("triu_1", "_frozen_param1")]
    );
    let names: Vec<&str> = fin["get_attr"]
        .as_array()
        .expect("get_attr")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(names, ["triu", "triu_1"]);
    let triu = node(g, "triu");
    assert_eq!(shape(triu), ["8", "8"]);
    assert_eq!(triu.users, [idx(g, "masked_fill")]);
}

// ---------------------------------------------------------------------------------------------
// Specific facts in other fixtures
// ---------------------------------------------------------------------------------------------

#[test]
fn dynamo_aliases_method_calls_and_infix_operators() {
    let f = parse_fixture("showcase", "model__0/dynamo_out_graph.txt");
    let g = &f.graphs[0];
    // `l_input_ids_ = L_input_ids_`: one placeholder, renamed.
    let ids = node(g, "l_input_ids_");
    assert_eq!(
        (ids.op, &*ids.target),
        (OpKind::Placeholder, "L_input_ids_")
    );
    assert_eq!(ids.line, 2);
    assert_eq!(shape(ids), ["2", "8"]);
    assert_eq!(ids.tensor().map(|t| t.dtype.as_str()), Some("i64"));
    assert!(!g.by_name.contains_key("L_input_ids_"));
    assert!(g.nodes[..36].iter().all(|x| x.op == OpKind::Placeholder));

    let to = node(g, "hidden_states_21");
    assert_eq!((to.op, &*to.target), (OpKind::CallMethod, "to"));
    assert_eq!(to.args, [n("hidden_states_20"), ex("torch.float32")]);
    assert_eq!(to.inputs, [idx(g, "hidden_states_20")]);

    let mean = node(g, "variance_4");
    assert_eq!((mean.op, &*mean.target), (OpKind::CallMethod, "mean"));
    assert_eq!(mean.args, [n("pow_5"), Arg::Int(-1)]);
    assert_eq!(mean.kwargs, [("keepdim".to_string(), Arg::Bool(true))]);
    assert_eq!(shape(mean), ["2", "8", "1"]);

    let add = node(g, "add_20");
    assert_eq!(
        (add.op, &*add.target),
        (OpKind::CallFunction, "operator.add")
    );
    assert_eq!(add.args, [n("variance_4"), Arg::Float(1e-06)]);

    let mul = node(g, "hidden_states_23");
    assert_eq!(&*mul.target, "operator.mul");
    assert_eq!(
        mul.inputs,
        [
            idx(g, "l_self_modules_norm_parameters_weight_"),
            idx(g, "to_15")
        ]
    );

    let rsqrt = node(g, "rsqrt_4");
    assert_eq!(
        (rsqrt.op, &*rsqrt.target),
        (OpKind::CallFunction, "torch.rsqrt")
    );
    let src = rsqrt.source.as_ref().expect("source");
    assert_eq!(src.short(), "showcase_model.py:69");
    assert_eq!(src.function, "forward");
    assert_eq!(
        src.code,
        "hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)"
    );
    assert!(!src.backward_of);

    let linear = node(g, "linear_14");
    assert_eq!(&*linear.target, "torch._C._nn.linear");
    assert_eq!(
        linear.args,
        [
            n("hidden_states_23"),
            n("l_self_modules_lm_head_parameters_weight_"),
            Arg::None
        ]
    );
    let out = g.nodes.last().expect("output");
    assert_eq!(out.args, [Arg::Tuple(vec![n("linear_14")])]);
    assert_eq!(out.inputs, [idx(g, "linear_14")]);
    assert_eq!(node(g, "linear_14").users, [g.nodes.len() - 1]);
}

#[test]
fn dynamo_getitem_slices_neg_matmul_truediv() {
    let f = parse_fixture(
        "data_dump/attention_bf16_nan_inf",
        "model__0/dynamo_out_graph.txt",
    );
    let g = &f.graphs[0];
    let mm = node(g, "matmul");
    assert_eq!((&*mm.target, mm.line), ("operator.matmul", 42));
    assert_eq!(mm.args, [n("q_1"), n("transpose_3")]);
    let gi = node(g, "getitem_3");
    assert_eq!(&*gi.target, "operator.getitem");
    let slice = ex("slice(None, None, None)");
    assert_eq!(
        gi.args,
        [
            n("l_key_padding_mask_"),
            Arg::Tuple(vec![slice.clone(), Arg::None, Arg::None, slice])
        ]
    );
    let masked = node(g, "scores_1");
    assert_eq!(
        (masked.op, &*masked.target),
        (OpKind::CallMethod, "masked_fill")
    );
    assert_eq!(
        masked.args,
        [n("scores"), n("getitem_3"), Arg::Float(f64::NEG_INFINITY)]
    );
    let softmax = node(g, "attn");
    assert_eq!(&*softmax.target, "torch.nn.functional.softmax");
    assert_eq!(softmax.kwargs, [("dim".to_string(), Arg::Int(-1))]);

    let f = parse_fixture(
        "npugraph_ex/stress_24layer",
        "model__0/dynamo_out_graph.txt",
    );
    let g = &f.graphs[0];
    let neg = node(g, "neg");
    assert_eq!(
        (neg.op, &*neg.target),
        (OpKind::CallFunction, "operator.neg")
    );
    assert_eq!((neg.args.as_slice(), neg.line), ([n("x2")].as_slice(), 338));
    let x2 = node(g, "x2");
    assert_eq!(
        x2.args,
        [
            n("q"),
            Arg::Tuple(vec![ex("Ellipsis"), ex("slice(4, None, None)")])
        ]
    );
    let div = node(g, "scores");
    assert_eq!(&*div.target, "operator.truediv");
    assert_eq!(div.args, [n("matmul"), Arg::Float(2.8284271247461903)]);
    let cos = node(g, "cos");
    assert_eq!(
        cos.args,
        [n("l_self_buffers_cos_cached_"), ex("slice(None, 8, None)")]
    );
    let cat = node(g, "cat");
    assert_eq!(cat.args, [Arg::Tuple(vec![n("neg"), n("x1")])]);
    assert_eq!(cat.inputs, [idx(g, "neg"), idx(g, "x1")]);
}

#[test]
fn npugraph_ex_torch_cond_subgraphs() {
    let f = parse_fixture(
        "npugraph_ex/torch_cond",
        "forward/000_aot_forward_graph.txt",
    );
    let names: Vec<&str> = f.graphs.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["<lambda>", "true_graph_0", "false_graph_0"]);
    let parents: Vec<Option<usize>> = f.graphs.iter().map(|g| g.parent).collect();
    assert_eq!(parents, [None, Some(0), Some(0)]);
    let counts: Vec<usize> = f.graphs.iter().map(|g| g.nodes.len()).collect();
    assert_eq!(counts, [17, 4, 4]);
    let lines: Vec<usize> = f.graphs.iter().map(|g| g.line).collect();
    assert_eq!(lines, [1, 21, 28]);
    let top = &f.graphs[0];
    let cond = idx(top, "cond");
    assert_eq!(f.graphs[1].used_by, Some(cond));
    assert_eq!(f.graphs[2].used_by, Some(cond));
    assert_eq!(top.nodes[cond].subgraphs, [1, 2]);
    assert_eq!(&*top.nodes[cond].target, "torch.ops.higher_order.cond");
    assert_eq!(
        top.nodes[cond].inputs,
        [
            idx(top, "gt"),
            idx(top, "true_graph_0"),
            idx(top, "false_graph_0"),
            idx(top, "addmm")
        ]
    );
    let ga = node(top, "true_graph_0");
    assert_eq!((ga.op, &*ga.target), (OpKind::GetAttr, "true_graph_0"));
    assert_eq!(node(top, "getitem").args, [n("cond"), Arg::Int(0)]);
    let sin = node(&f.graphs[1], "sin");
    assert_eq!(sin.inputs, [0]);
    let src = sin.source.as_ref().expect("source");
    assert_eq!((src.line, src.function.as_str()), (141, "true_fn"));
    assert_eq!(src.code, "return torch.sin(t) * 2");

    // The Dynamo graph of the same model: `cond_true_0` / `cond_false_0`, aliases `h_1 = h`.
    let f = parse_fixture("npugraph_ex/torch_cond", "model__0/dynamo_out_graph.txt");
    let names: Vec<&str> = f.graphs.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["GraphModule", "cond_true_0", "cond_false_0"]);
    let cond = idx(&f.graphs[0], "cond");
    assert_eq!(f.graphs[1].used_by, Some(cond));
    assert_eq!(f.graphs[0].nodes[cond].subgraphs, [1, 2]);
    let h = &f.graphs[1].nodes[0];
    assert_eq!(
        (h.name.as_str(), &*h.target, h.op),
        ("h_1", "h", OpKind::Placeholder)
    );
    assert_eq!(&*node(&f.graphs[1], "mul").target, "operator.mul");
    assert_eq!(node(&f.graphs[0], "sum_1").op, OpKind::CallMethod);
    assert_eq!(node(&f.graphs[0], "gt").args, [n("sum_1"), Arg::Int(0)]);
}

#[test]
fn inductor_torch_cond_readable_transformed_and_runnable() {
    let dir = "inductor/f_torch_cond";
    for file in ["fx_graph_readable.py", "fx_graph_transformed.py"] {
        let f = parse_fixture(dir, file);
        let names: Vec<&str> = f.graphs.iter().map(|g| g.name.as_str()).collect();
        assert_eq!(
            names,
            ["<lambda>", "true_graph_0", "false_graph_0"],
            "{file}"
        );
        let cond = idx(&f.graphs[0], "cond");
        assert_eq!(f.graphs[1].used_by, Some(cond), "{file}");
        assert_eq!(f.graphs[2].used_by, Some(cond), "{file}");
        assert_eq!(f.graphs[0].nodes.len(), 17, "{file}");
    }
    // transformed hoists the get_attrs above the first node: they still link to `cond`.
    let f = parse_fixture(dir, "fx_graph_transformed.py");
    assert_eq!(f.graphs[0].nodes[5].name, "true_graph_0");

    // runnable: submodule classes come first in the file, attached in `Repro.__init__`.
    let f = parse_fixture(dir, "fx_graph_runnable.py");
    let names: Vec<&str> = f.graphs.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, ["Repro", "true_graph_0_0", "false_graph_0_1"]);
    let lines: Vec<usize> = f.graphs.iter().map(|g| g.line).collect();
    assert_eq!(lines, [86, 62, 74]);
    let parents: Vec<Option<usize>> = f.graphs.iter().map(|g| g.parent).collect();
    assert_eq!(parents, [None, Some(0), Some(0)]);
    let top = &f.graphs[0];
    assert_eq!(top.nodes.len(), 17);
    assert!(
        top.nodes[..5]
            .iter()
            .all(|x| x.op == OpKind::Placeholder && x.meta.is_none())
    );
    let cond = idx(top, "cond");
    assert_eq!(top.nodes[cond].subgraphs, [1, 2]);
    assert_eq!(f.graphs[1].used_by, Some(cond));
    assert_eq!(node(&f.graphs[2], "add").args, [n("cos"), Arg::Int(1)]);
}

#[test]
fn inductor_dynamic_shapes_sym_placeholders_and_symbolic_dims() {
    let f = parse_fixture("inductor/e_dynamic_shapes", "fx_graph_readable.py");
    let g = &f.graphs[0];
    assert_eq!(node(g, "arg2_1").meta, Some(ValueMeta::Sym("s77".into())));
    assert_eq!(node(g, "arg3_1").meta, Some(ValueMeta::Sym("s27".into())));
    assert_eq!(node(g, "arg2_1").annotation.as_deref(), Some("Sym(s77)"));
    assert_eq!(shape(node(g, "arg4_1")), ["s77", "s27", "32"]);
    let mul = node(g, "mul_12");
    assert_eq!(&*mul.target, "operator.mul");
    assert_eq!(mul.args, [n("arg2_1"), n("arg3_1")]);
    assert_eq!(mul.meta, Some(ValueMeta::Sym("s27*s77".into())));
    let view = node(g, "view");
    assert_eq!(shape(view), ["s27*s77", "32"]);
    assert_eq!(
        view.args,
        [n("add_1"), Arg::List(vec![n("mul_12"), Arg::Int(32)])]
    );
    assert_eq!(view.inputs, [idx(g, "add_1"), idx(g, "mul_12")]);
    // `mul_20 = arg2_1 * 4;  mul_20 = None`: dead, no users.
    assert!(node(g, "mul_20").users.is_empty());
    let sdpa = node(g, "_scaled_dot_product_flash_attention_for_cpu_default");
    assert_eq!(sdpa.annotation, None);
    assert_eq!(
        sdpa.kwargs,
        [("scale".to_string(), Arg::Float(0.35355339059327373))]
    );
    assert_eq!(
        node(g, "clone_default").source,
        None,
        "after `No stacktrace found`"
    );
    let getitem_7 = node(g, "getitem_7").source.as_deref().map(SourceLoc::short);
    assert_eq!(getitem_7.as_deref(), Some("models.py:72"));

    let f = parse_fixture("inductor/e_dynamic_shapes", "fx_graph_runnable.py");
    assert_eq!(f.graphs[0].name, "Repro");
    assert_eq!(f.graphs[0].nodes.len(), g.nodes.len());
}

#[test]
fn npugraph_ex_dynamic_shapes_dynamo_graphs() {
    let dir = "npugraph_ex/dynamic_shapes";
    let f = parse_fixture(dir, "model__1/dynamo_out_graph.txt");
    let g = &f.graphs[0];
    let s77 = node(g, "s77");
    assert_eq!((s77.op, &*s77.target), (OpKind::Placeholder, "s77"));
    assert_eq!(s77.meta, Some(ValueMeta::Sym("s77".into())));
    assert_eq!(shape(node(g, "l_x_")), ["s77", "s27", "32"]);
    let split = node(g, "split");
    assert_eq!((split.op, &*split.target), (OpKind::CallMethod, "split"));
    assert_eq!(split.args, [n("linear"), Arg::Int(32)]);
    assert_eq!(split.kwargs, [("dim".to_string(), Arg::Int(-1))]);
    assert_eq!(node(g, "k").args, [n("split"), Arg::Int(1)]);
    let ln = node(g, "layer_norm");
    assert_eq!(ln.args[1], Arg::Tuple(vec![Arg::Int(32)]));
    assert_eq!(ln.args[4], Arg::Float(1e-05));

    // The orphan model__0: a scalar parameter read with `.item()` gives a constant `Sym`.
    let f = parse_fixture(dir, "model__0/dynamo_out_graph.txt");
    let item = node(&f.graphs[0], "item");
    assert_eq!((item.op, &*item.target), (OpKind::CallMethod, "item"));
    assert_eq!(
        item.meta,
        Some(ValueMeta::Sym("0.0000100000000000000".into()))
    );
    assert_eq!(item.args, [n("l_self_modules_ln1_eps")]);

    let f = parse_fixture(dir, "model__1/forward/000_aot_forward_graph.txt");
    let g = &f.graphs[0];
    assert_eq!(node(g, "arg2_1").meta, Some(ValueMeta::Sym("s77".into())));
    let mul = node(g, "mul_6");
    assert_eq!(
        (&*mul.target, mul.args.as_slice()),
        ("operator.mul", [n("arg2_1"), n("arg3_1")].as_slice())
    );
}

#[test]
fn backward_graph_tangents_and_backward_of_sources() {
    let f = parse_fixture(
        "inductor/c_transformer_train",
        "model__0_backward_3.1/fx_graph_readable.py",
    );
    let g = &f.graphs[0];
    let placeholders: Vec<&FxNode> = g
        .nodes
        .iter()
        .filter(|x| x.op == OpKind::Placeholder)
        .collect();
    assert_eq!(placeholders.len(), 22);
    let tangents = placeholders[21];
    assert_eq!(
        (tangents.name.as_str(), &*tangents.target),
        ("tangents_1", "tangents_1")
    );
    assert_eq!(shape(tangents), ["2", "8", "32"]);
    let view = node(g, "view_18");
    assert_eq!(view.inputs, [idx(g, "tangents_1")]);
    let src = view.source.as_ref().expect("source");
    assert!(src.backward_of);
    assert_eq!(src.short(), "models.py:89");
    assert_eq!(&*src.file, "/home/dev/models/gen/models.py");
    assert_eq!(src.code, "x = x + self.fc2(F.gelu(self.fc1(self.ln2(x))))");
    assert_eq!(tangents.users.first(), Some(&idx(g, "view_18")));

    let f = parse_fixture(
        "npugraph_ex/transformer_train",
        "backward/000_aot_backward_graph.txt",
    );
    let g = &f.graphs[0];
    assert_eq!(g.name, "GraphModule");
    let t = node(g, "tangents_1");
    assert_eq!(t.users, [idx(g, "view_11"), idx(g, "add_2")]);
    assert!(
        node(g, "view_11")
            .source
            .as_ref()
            .is_some_and(|s| s.backward_of && s.line == 89)
    );
    let out = g.nodes.last().expect("output");
    assert_eq!(out.inputs.len(), 13);
    assert_eq!(out.inputs[0], idx(g, "getitem_13"));
}

#[test]
fn inductor_kwargs_devices_dtypes_and_special_floats() {
    let f = parse_fixture("inductor/b_transformer_infer", "fx_graph_readable.py");
    let full = node(&f.graphs[0], "full_default_1");
    assert_eq!(full.line, 59);
    assert_eq!(
        full.args,
        [Arg::List(vec![]), Arg::Float(f64::NEG_INFINITY)]
    );
    let kw: Vec<(&str, &Arg)> = full.kwargs.iter().map(|(k, v)| (k.as_str(), v)).collect();
    assert_eq!(
        kw,
        [
            ("dtype", &ex("torch.float32")),
            ("layout", &ex("torch.strided")),
            ("device", &ex("device(type='cpu')")),
            ("pin_memory", &Arg::Bool(false)),
        ]
    );
    assert_eq!(
        full.meta.as_ref().and_then(|m| match m {
            ValueMeta::Tensor(t) => Some(t.shape.len()),
            _ => None,
        }),
        Some(0),
        "f32[] is a scalar"
    );

    let f = parse_fixture(
        "npugraph_ex/multi_rank",
        "rank_0/npugraph_ex/model__0/forward/000_aot_forward_graph.txt",
    );
    let ar = node(&f.graphs[0], "all_reduce");
    assert_eq!(&*ar.target, "torch.ops._c10d_functional.all_reduce.default");
    assert_eq!(
        ar.args,
        [n("mm"), Arg::Str("sum".into()), Arg::Str("0".into())]
    );
    let src = ar.source.as_ref().expect("source");
    assert_eq!((src.function.as_str(), src.line), ("all_reduce", 195));
    let wait = node(&f.graphs[0], "wait_tensor")
        .source
        .as_ref()
        .expect("source");
    assert_eq!(
        wait.code,
        "return torch.ops._c10d_functional.wait_tensor(tensor)  # type: ignore[attr-defined]"
    );
}

// ---------------------------------------------------------------------------------------------
// Grammar cases from docs/formats.md §5 and torch's codegen, not present in the fixtures
// ---------------------------------------------------------------------------------------------

const EX1_STRIDES: &str = r#"class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[4, 4][4, 1]cpu", primals_2: "f32[4][1]cpu", primals_3: "f32[2, 4][4, 1]cpu"):
        # File: demo.py:21 in forward, code: return (self.lin(x).relu() * 2).sum()
        t: "f32[4, 4][1, 4]cpu" = torch.ops.aten.t.default(primals_1);  primals_1 = None
        addmm: "f32[2, 4][4, 1]cuda:0" = torch.ops.aten.addmm.default(primals_2, primals_3, t);  primals_2 = None
        relu: "f32[2, 4][4, 1]npu:1" = torch.ops.aten.relu.default(addmm);  addmm = None
        mul: "f32[2, 4][4, 1]cpu" = torch.ops.aten.mul.Tensor(relu, 2);  relu = None
        sum_1: "f32[][]cpu" = torch.ops.aten.sum.default(mul);  mul = None
        return (sum_1, primals_3, t)
"#;

#[test]
fn strides_and_devices() {
    let f = parse_fx(EX1_STRIDES);
    assert!(
        f.unparsed.is_empty() && f.problems.is_empty(),
        "{:?}",
        f.unparsed
    );
    let g = &f.graphs[0];
    let t = node(g, "t").tensor().expect("tensor").clone();
    assert_eq!(t.shape, ["4", "4"]);
    assert_eq!(t.stride.as_deref(), Some(&["1".into(), "4".into()][..]));
    assert_eq!(t.device.as_deref(), Some("cpu"));
    assert_eq!(
        node(g, "addmm")
            .tensor()
            .and_then(|t| t.device.clone())
            .as_deref(),
        Some("cuda:0")
    );
    assert_eq!(
        node(g, "relu")
            .tensor()
            .and_then(|t| t.device.clone())
            .as_deref(),
        Some("npu:1")
    );
    let s = node(g, "sum_1").tensor().expect("tensor");
    assert!(s.shape.is_empty() && s.stride == Some(vec![]));
    let p = node(g, "primals_2").tensor().expect("tensor");
    assert_eq!(
        (p.shape.as_slice(), p.stride.as_deref()),
        (&["4".into()][..], Some(&["1".into()][..]))
    );
    let out = g.nodes.last().expect("output");
    assert_eq!(
        out.inputs,
        [idx(g, "sum_1"), idx(g, "primals_3"), idx(g, "t")]
    );
}

#[test]
fn annotations_understood() {
    let meta = |ann: &str| {
        let text = format!(
            "class M(torch.nn.Module):\n    def forward(self, x: \"{ann}\"):\n        return (x,)\n"
        );
        let f = parse_fx(&text);
        assert!(f.unparsed.is_empty(), "{ann}: {:?}", f.unparsed);
        f.graphs[0].nodes[0].meta.clone().expect("meta")
    };
    let ValueMeta::Tensor(t) = meta("f16[((s27 + 3)//2), Max(1, s0), 2*s77]") else {
        panic!()
    };
    assert_eq!(
        (t.dtype.as_str(), t.shape.clone()),
        (
            "f16",
            vec![
                Short::from("((s27 + 3)//2)"),
                "Max(1, s0)".into(),
                "2*s77".into()
            ]
        )
    );
    let ValueMeta::Tensor(t) = meta("DTensor(f32[8, 4][4, 1]cuda:0, (Shard(dim=0),))") else {
        panic!()
    };
    assert_eq!(
        (t.wrapper.as_deref(), t.shape.clone(), t.device.as_deref()),
        (
            Some("DTensor"),
            vec![Short::from("8"), "4".into()],
            Some("cuda:0")
        )
    );
    let ValueMeta::Tensor(t) = meta("FunctionalTensor(bf16[2])") else {
        panic!()
    };
    assert_eq!(
        (t.wrapper.as_deref(), t.dtype.as_str()),
        (Some("FunctionalTensor"), "bf16")
    );
    let ValueMeta::Tensor(t) = meta("f8e4m3fn[16, 16]") else {
        panic!()
    };
    assert_eq!(t.dtype, "f8e4m3fn");
    assert_eq!(meta("Sym(2*s77 + 1)"), ValueMeta::Sym("2*s77 + 1".into()));
    assert_eq!(
        meta("torch.Tensor"),
        ValueMeta::Other("torch.Tensor".into())
    );
    assert_eq!(
        meta("f32[2]weird!"),
        ValueMeta::Other("f32[2]weird!".into())
    );
}

#[test]
fn dynamic_example_from_formats_md() {
    let text = r#"class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "Sym(s77)", arg1_1: "Sym(s27)", arg2_1: "f32[s77, s27]", arg3_1: "f32[s77, 1]"):
        # File: demo.py:10 in f, code: z = torch.zeros(x.shape[0], 2, device=x.device)
        zeros: "f32[s77, 2]" = torch.ops.aten.zeros.default([arg0_1, 2], device = device(type='cpu'), pin_memory = False)

        # File: demo.py:11 in f, code: c = torch.cat([x, y, z], dim=1)
        cat: "f32[s77, s27 + 3]" = torch.ops.aten.cat.default([arg2_1, arg3_1, zeros], 1);  arg2_1 = arg3_1 = zeros = None

        # File: demo.py:12 in f, code: v = c.view(x.shape[0] * 2, -1)
        mul_4: "Sym(2*s77)" = arg0_1 * 2;  arg0_1 = None
        view: "f32[2*s77, ((s27 + 3)//2)]" = torch.ops.aten.view.default(cat, [mul_4, -1]);  mul_4 = None

        # File: demo.py:13 in f, code: return v.to(torch.float16), c.max(dim=1)
        _to_copy: "f16[2*s77, ((s27 + 3)//2)]" = torch.ops.aten._to_copy.default(view, dtype = torch.float16);  view = None
        max_1 = torch.ops.aten.max.dim(cat, 1);  cat = None
        getitem: "f32[s77]" = max_1[0]
        getitem_1: "i64[s77]" = max_1[1];  max_1 = None
        return (_to_copy, getitem, getitem_1)
"#;
    let f = parse_fx(text);
    assert!(
        f.unparsed.is_empty() && f.problems.is_empty(),
        "{:?}",
        f.unparsed
    );
    let g = &f.graphs[0];
    assert_eq!(g.nodes.len(), 4 + 8 + 1);
    assert_eq!(shape(node(g, "view")), ["2*s77", "((s27 + 3)//2)"]);
    assert_eq!(shape(node(g, "cat")), ["s77", "s27 + 3"]);
    assert_eq!(node(g, "zeros").inputs, [idx(g, "arg0_1")]);
    assert_eq!(node(g, "max_1").meta, None);
    assert_eq!(
        node(g, "max_1").users,
        [idx(g, "getitem"), idx(g, "getitem_1")]
    );
    assert_eq!(
        node(g, "view").args[1],
        Arg::List(vec![n("mul_4"), Arg::Int(-1)])
    );
    let src = node(g, "zeros").source.as_ref().expect("source");
    assert_eq!(
        (&*src.file, src.line, src.function.as_str()),
        ("demo.py", 10, "f")
    );
    assert_eq!(src.code, "z = torch.zeros(x.shape[0], 2, device=x.device)");
}

#[test]
fn unlifted_export_signature_and_pytree_output() {
    let text = r#"class GraphModule(torch.nn.Module):
    def forward(self, x, y):
        arg0: "f32[2]"; arg1: "f32[2]"; 
    
        arg0, arg1, = fx_pytree.tree_flatten_spec(([x, y], {}), self._in_spec)
        l_x_ = arg0
        # File: /t.py:5, code: z = x + y
        add: "f32[2]" = torch.ops.aten.add.Tensor(l_x_, arg1);  l_x_ = None
        mul: "f32[2]" = torch.ops.aten.mul.Tensor(add, 2)
        return pytree.tree_unflatten((add, mul), self._out_spec)
"#;
    let f = parse_fx(text);
    assert!(
        f.unparsed.is_empty() && f.problems.is_empty(),
        "{:?} {:?}",
        f.unparsed,
        f.problems
    );
    let g = &f.graphs[0];
    let names: Vec<&str> = g.nodes.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["l_x_", "arg1", "add", "mul", "output"]);
    assert_eq!(&*g.nodes[0].target, "arg0");
    assert_eq!(shape(&g.nodes[1]), ["2"]);
    assert_eq!(node(g, "add").inputs, [0, 1]);
    let src = node(g, "add").source.as_ref().expect("source");
    assert_eq!(
        (
            &*src.file,
            src.line,
            src.function.as_str(),
            src.code.as_str()
        ),
        ("/t.py", 5, "", "z = x + y")
    );
    let out = g.nodes.last().expect("output");
    assert_eq!(out.args, [Arg::Tuple(vec![n("add"), n("mul")])]);
    assert_eq!(out.inputs, [2, 3]);
}

#[test]
fn old_unquoted_annotations_call_module_inplace_and_bare_return() {
    let text = r#"class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: f32[20, 20], s0 : Sym(s0), L_y_ : torch.Tensor):
        sub = self.sub(arg0_1, scale = 2);  arg0_1 = None
        add: f32[20, 20] = sub + s0
        add += L_y_;  add_1: f32[20, 20] = add
        lt: b8[] = add_1 < 0.5
        inv = ~lt
        size = add_1.shape
        _tensor_constant0: "f32[2]" = self._tensor_constant0
        w = self.layers.weight
        return lt
"#;
    let f = parse_fx(text);
    assert!(
        f.unparsed.is_empty() && f.problems.is_empty(),
        "{:?} {:?}",
        f.unparsed,
        f.problems
    );
    let g = &f.graphs[0];
    assert_eq!(shape(node(g, "arg0_1")), ["20", "20"]);
    assert_eq!(node(g, "s0").meta, Some(ValueMeta::Sym("s0".into())));
    assert_eq!(
        node(g, "L_y_").meta,
        Some(ValueMeta::Other("torch.Tensor".into()))
    );
    let sub = node(g, "sub");
    assert_eq!((sub.op, &*sub.target), (OpKind::CallModule, "sub"));
    assert_eq!(sub.kwargs, [("scale".to_string(), Arg::Int(2))]);
    assert_eq!(node(g, "add").inputs, [idx(g, "sub"), idx(g, "s0")]);
    let iadd = node(g, "add_1");
    assert_eq!(
        (&*iadd.target, iadd.args.as_slice()),
        ("operator.iadd", [n("add"), n("L_y_")].as_slice())
    );
    assert_eq!(&*node(g, "lt").target, "operator.lt");
    assert_eq!(&*node(g, "inv").target, "operator.invert");
    let size = node(g, "size");
    assert_eq!(
        (&*size.target, size.args.as_slice()),
        ("getattr", [n("add_1"), Arg::Str("shape".into())].as_slice())
    );
    let c = node(g, "_tensor_constant0");
    assert_eq!((c.op, &*c.target), (OpKind::GetAttr, "_tensor_constant0"));
    assert_eq!(shape(c), ["2"]);
    assert_eq!(&*node(g, "w").target, "layers.weight");
    let out = g.nodes.last().expect("output");
    assert_eq!(
        (out.args.as_slice(), out.inputs.as_slice()),
        ([n("lt")].as_slice(), [idx(g, "lt")].as_slice())
    );
}

#[test]
fn nested_hops_while_loop_and_invoke_subgraph() {
    let text = r#"class <lambda>(torch.nn.Module):
    def forward(self, arg0_1: "i64[]", arg1_1: "f32[3]"):
        while_loop_cond_graph_0 = self.while_loop_cond_graph_0
        while_loop_body_graph_0 = self.while_loop_body_graph_0
        while_loop = torch.ops.higher_order.while_loop(while_loop_cond_graph_0, while_loop_body_graph_0, (arg0_1, arg1_1), ());  while_loop_cond_graph_0 = while_loop_body_graph_0 = None
        getitem: "i64[]" = while_loop[0]
        repeated_subgraph0 = self.repeated_subgraph0
        invoke_subgraph = torch.ops.higher_order.invoke_subgraph(repeated_subgraph0, 'subgraph_0', arg1_1);  repeated_subgraph0 = None
        getitem_1: "f32[3]" = invoke_subgraph[0]
        repeated_subgraph0_1 = self.repeated_subgraph0
        invoke_subgraph_1 = torch.ops.higher_order.invoke_subgraph(repeated_subgraph0_1, 'subgraph_0', getitem_1);  repeated_subgraph0_1 = None
        getitem_2: "f32[3]" = invoke_subgraph_1[0]
        return (getitem, getitem_2)

    class while_loop_cond_graph_0(torch.nn.Module):
        def forward(self, arg0_1: "i64[]", arg1_1: "f32[3]"):
            lt: "b8[]" = torch.ops.aten.lt.Scalar(arg0_1, 10);  arg0_1 = None
            return lt

    class while_loop_body_graph_0(torch.nn.Module):
        def forward(self, arg0_1: "i64[]", arg1_1: "f32[3]"):
            add: "i64[]" = torch.ops.aten.add.Tensor(arg0_1, 1);  arg0_1 = None
            return (add, arg1_1)

    class repeated_subgraph0(torch.nn.Module):
        def forward(self, arg0_1: "f32[3]"):
            cond_true_0 = self.cond_true_0
            cond = torch.ops.higher_order.cond(True, cond_true_0, cond_true_0, (arg0_1,))
            return (cond,)

        class cond_true_0(torch.nn.Module):
            def forward(self, x: "f32[3]"):
                return ()
"#;
    let f = parse_fx(text);
    assert!(
        f.unparsed.is_empty() && f.problems.is_empty(),
        "{:?} {:?}",
        f.unparsed,
        f.problems
    );
    check_invariants(&f);
    let names: Vec<&str> = f.graphs.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "<lambda>",
            "while_loop_cond_graph_0",
            "while_loop_body_graph_0",
            "repeated_subgraph0",
            "cond_true_0"
        ]
    );
    let parents: Vec<Option<usize>> = f.graphs.iter().map(|g| g.parent).collect();
    assert_eq!(parents, [None, Some(0), Some(0), Some(0), Some(3)]);
    let top = &f.graphs[0];
    assert_eq!(node(top, "while_loop").subgraphs, [1, 2]);
    // One body, called twice: both calls list it; `used_by` is the first.
    assert_eq!(node(top, "invoke_subgraph").subgraphs, [3]);
    assert_eq!(node(top, "invoke_subgraph_1").subgraphs, [3]);
    assert_eq!(f.graphs[3].used_by, Some(idx(top, "invoke_subgraph")));
    assert_eq!(
        node(top, "invoke_subgraph").args[1],
        Arg::Str("subgraph_0".into())
    );
    assert_eq!(f.graphs[4].used_by, Some(idx(&f.graphs[3], "cond")));
    assert_eq!(
        f.graphs[1].nodes.last().map(|x| x.args.to_vec()),
        Some(vec![n("lt")])
    );
    assert_eq!(
        f.graphs[4].nodes.last().map(|x| x.args.to_vec()),
        Some(vec![Arg::Tuple(vec![])])
    );
}

#[test]
fn comments_strings_ansi_and_expanded_signature() {
    let text = "class GraphModule(torch.nn.Module):\n    def forward(\n        self,\n        arg0_1: \"f32[2]\",  # PlainAOTInput(idx=0)\n        arg1_1: \"f32[2]\",  # PlainAOTInput(idx=1)\n    ):\n         # Annotation: {'stage': 'File: fake.py:1'} ac_graph_id: 0 - PREFER_RECOMPUTE File: /m.py:7 in fwd, code: y = f(x, 'a')\n        f = torch.ops.my.op.default(arg0_1, 'it\\'s, (odd)', \"q\\\"x\", {'k': arg1_1}, [True, None], 1e+20, nan, 0x10, -.5)\n\n        # No stacktrace found for following nodes\n        \x1b[2mg\x1b[0m: \"\x1b[31mf32\x1b[0m[2]\" = torch.ops.aten.neg.default(f)\n        # some other comment\n        h = torch.ops.aten.abs.default(g)\n        # Backward of forward node: File: C:\\x\\m.py:9 in bwd, code: \n        k = torch.ops.aten.abs.default(h)\n        return (\n            k,  # an output\n            g,\n        )\n";
    let f = parse_fx(text);
    assert!(
        f.unparsed.is_empty() && f.problems.is_empty(),
        "{:?} {:?}",
        f.unparsed,
        f.problems
    );
    let g = &f.graphs[0];
    let names: Vec<&str> = g.nodes.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["arg0_1", "arg1_1", "f", "g", "h", "k", "output"]);
    let op = node(g, "f");
    assert_eq!(
        op.args[..6],
        [
            n("arg0_1"),
            Arg::Str("it's, (odd)".into()),
            Arg::Str("q\"x".into()),
            ex("{'k': arg1_1}"),
            Arg::List(vec![Arg::Bool(true), Arg::None]),
            Arg::Float(1e20),
        ]
    );
    assert!(matches!(op.args[6], Arg::Float(x) if x.is_nan()));
    assert_eq!(op.args[7..], [Arg::Int(16), Arg::Float(-0.5)]);
    assert_eq!(
        op.inputs,
        [0, 1],
        "node names inside a dict still count as inputs"
    );
    let src = op.source.as_ref().expect("source");
    assert_eq!(
        (
            &*src.file,
            src.line,
            src.function.as_str(),
            src.code.as_str()
        ),
        ("/m.py", 7, "fwd", "y = f(x, 'a')")
    );
    assert_eq!(shape(node(g, "g")), ["2"]);
    assert_eq!(node(g, "g").source, None);
    assert_eq!(
        node(g, "h").source,
        None,
        "other comments keep the current source"
    );
    let k = node(g, "k").source.as_ref().expect("source");
    assert_eq!(
        (&*k.file, k.line, k.code.as_str(), k.backward_of),
        ("C:\\x\\m.py", 9, "", true)
    );
    assert_eq!(
        g.nodes.last().map(|x| x.inputs.to_vec()),
        Some(vec![idx(g, "k"), idx(g, "g")])
    );
    assert_eq!(g.nodes.last().map(|x| x.line), Some(16));
}

#[test]
fn bare_forward_without_class_as_gm_code_prints_it() {
    let text = "\n\n\ndef forward(self, x):\n    sin = torch.ops.aten.sin.default(x);  x = None\n    return (sin,)\n    \n";
    let f = parse_fx(text);
    assert!(
        f.unparsed.is_empty() && f.problems.is_empty(),
        "{:?} {:?}",
        f.unparsed,
        f.problems
    );
    assert_eq!(f.graphs.len(), 1);
    assert_eq!(
        (f.graphs[0].name.as_str(), f.graphs[0].line),
        ("forward", 4)
    );
    let names: Vec<&str> = f.graphs[0].nodes.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["x", "sin", "output"]);
}

#[test]
fn include_meta_blocks_are_skipped() {
    let text = r#"class GraphModule(torch.nn.Module):
    def forward(self, x: "f32[2]"):
        """
        stack_trace: ('  File "/m.py", line 3, in f\n'
         '    return x.sin()\n')
        val: 'FakeTensor(..., size=(2,))'
        """
        sin: "f32[2]" = torch.ops.aten.sin.default(x)
        """
        val: 'oops, never closed'
    return (sin,)
"#;
    let f = parse_fx(text);
    let g = &f.graphs[0];
    let names: Vec<&str> = g.nodes.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        ["x", "sin", "output"],
        "the dedented `return` ends the stray block"
    );
    assert_eq!(
        f.problems,
        ["the `\"\"\"` block opened at line 9 is never closed"]
    );
    assert!(f.unparsed.is_empty(), "{:?}", f.unparsed);
}

// ---------------------------------------------------------------------------------------------
// Truncation
// ---------------------------------------------------------------------------------------------

/// Node identity across cuts: placeholders by target (an alias line renames them later),
/// others by name; with the graph name, in file order.
fn keys(f: &FxFile) -> Vec<(usize, String, String)> {
    let mut k: Vec<(usize, String, String)> = f
        .graphs
        .iter()
        .flat_map(|g| {
            g.nodes.iter().map(move |x| {
                let id = if x.op == OpKind::Placeholder {
                    &*x.target
                } else {
                    x.name.as_str()
                };
                (x.line, g.name.clone(), id.to_string())
            })
        })
        .collect();
    k.sort_by_key(|e| e.0);
    k
}

fn check_cut(
    full: &FxFile,
    full_keys: &[(usize, String, String)],
    text: &str,
    complete_lines: usize,
    what: &str,
) {
    let cut = parse_fx(text);
    check_invariants(&cut);
    let got = keys(&cut);
    let upto = |l: usize| full_keys.iter().take_while(|e| e.0 <= l).count();
    let (a, b) = (upto(complete_lines), upto(complete_lines + 1));
    assert!(
        got == full_keys[..a] || got == full_keys[..b],
        "{what}: cut after line {complete_lines}: got {:?}\nwant {:?}",
        got.iter().map(|e| &e.2).collect::<Vec<_>>(),
        full_keys[..a].iter().map(|e| &e.2).collect::<Vec<_>>()
    );
    // A graph whose class started before the cut but whose `return` was cut off.
    let lost_return = full.graphs.iter().any(|g| {
        let ret = g.nodes.last().map_or(usize::MAX, |x| x.line);
        g.line <= complete_lines && ret > complete_lines
    });
    if lost_return {
        assert!(
            !cut.problems.is_empty(),
            "{what}: cut after line {complete_lines}: no problem reported"
        );
        let text = cut.problems.join(" ");
        assert!(text.contains("file ends inside"), "{what}: {text}");
    }
}

fn cut_everywhere(dir: &str, suffix: &str, mid_line_every: usize) {
    let text = read(&fixture(dir, suffix));
    let full = parse_fx(&text);
    let full_keys = keys(&full);
    let starts: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    for (k, &start) in starts.iter().enumerate() {
        check_cut(&full, &full_keys, &text[..start], k, suffix);
        if mid_line_every > 0 && k % mid_line_every == 0 {
            let end = starts.get(k + 1).map_or(text.len(), |e| e - 1);
            for frac in [1, 2, 3] {
                let mut at = start + (end - start) * frac / 4;
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                if at > start && at < end {
                    check_cut(&full, &full_keys, &text[..at], k, suffix);
                }
            }
        }
    }
}

#[test]
fn cut_at_every_line_torch_cond_graphs() {
    cut_everywhere(
        "npugraph_ex/torch_cond",
        "forward/000_aot_forward_graph.txt",
        1,
    );
    cut_everywhere("npugraph_ex/torch_cond", "model__0/dynamo_out_graph.txt", 1);
    cut_everywhere("inductor/f_torch_cond", "fx_graph_runnable.py", 1);
}

#[test]
fn cut_at_every_line_dynamo_backward_and_dynamic() {
    cut_everywhere("showcase", "model__0/dynamo_out_graph.txt", 7);
    cut_everywhere(
        "inductor/c_transformer_train",
        "model__0_backward_3.1/fx_graph_readable.py",
        5,
    );
    cut_everywhere("inductor/e_dynamic_shapes", "fx_graph_readable.py", 3);
}

#[test]
fn truncated_subgraph_names_the_graph_in_plain_words() {
    let text = read(&fixture(
        "npugraph_ex/torch_cond",
        "forward/000_aot_forward_graph.txt",
    ));
    let cut: String = text.lines().take(25).map(|l| format!("{l}\n")).collect();
    let f = parse_fx(&cut);
    assert_eq!(f.graphs.len(), 2);
    assert_eq!(f.graphs[1].nodes.len(), 3, "arg0_1, sin, mul");
    assert_eq!(
        f.problems,
        [
            "file ends inside `forward` of `true_graph_0` without a `return`: truncated or still being written?"
        ]
    );
    let mid = &text[..text.find("return (relu,)").expect("return") + 9];
    let f = parse_fx(mid);
    assert_eq!(f.graphs[0].nodes.len(), 16, "all but the output");
    assert_eq!(f.unparsed.len(), 1);
    assert_eq!(f.unparsed[0].line, 19);
    assert!(
        f.problems.iter().any(|p| p.contains("`<lambda>`")),
        "{:?}",
        f.problems
    );
}

// ---------------------------------------------------------------------------------------------
// Hostile input
// ---------------------------------------------------------------------------------------------

#[test]
fn empty_and_whitespace() {
    for text in ["", "\n\n", "   \n\t\n"] {
        let f = parse_fx(text);
        assert!(f.graphs.is_empty());
        assert_eq!(f.problems, ["the file is empty"]);
        assert_eq!(f.node_count(), 0);
    }
    let f = parse_fx("import torch\nx = 1\n");
    assert!(f.graphs.is_empty() && f.unparsed.is_empty());
    assert!(f.problems[0].contains("no `class"), "{:?}", f.problems);
}

/// Deterministic pseudo-random bytes (no `rand` dependency).
fn lcg_bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as u8
        })
        .collect()
}

#[test]
fn binary_garbage_never_panics() {
    for seed in 0..8 {
        let bytes = lcg_bytes(seed, 200_000);
        let f = parse_fx(&String::from_utf8_lossy(&bytes));
        check_invariants(&f);
    }
    // Garbage that keeps the graph skeleton: corrupt a real file at many places.
    let text = read(&fixture(
        "npugraph_ex/torch_cond",
        "forward/000_aot_forward_graph.txt",
    ));
    for seed in 0..64 {
        let mut bytes = text.clone().into_bytes();
        let noise = lcg_bytes(seed, 24);
        for pair in noise.chunks(2) {
            let at = (pair[0] as usize * 31 + pair[1] as usize * 7919) % bytes.len();
            bytes[at] = pair[1];
        }
        let f = parse_fx(&String::from_utf8_lossy(&bytes));
        check_invariants(&f);
    }
}

#[test]
fn ten_thousand_deep_brackets_never_overflow() {
    let deep_open = "[".repeat(10_000);
    let deep = format!("{deep_open}{}", "]".repeat(10_000));
    let parens = format!("{}{}", "(".repeat(10_000), ")".repeat(10_000));
    let braces = "{".repeat(10_000);
    let head = "class M(torch.nn.Module):\n    def forward(self, x: \"f32[2]\"):\n";
    let texts = [
        deep_open.clone(),
        deep.clone(),
        format!("{head}        y = torch.ops.aten.f.default(x, {deep})\n        return (y,)\n"),
        format!("{head}        y = torch.ops.aten.f.default(x, {parens})\n        return (y,)\n"),
        format!(
            "{head}        y: \"f32[{deep}]\" = torch.ops.aten.f.default(x)\n        return (y,)\n"
        ),
        format!(
            "{head}        # Annotation: {braces} File: a.py:1 in f, code: x\n        return (x,)\n"
        ),
        format!("{head}        y = x{deep_open}\n        return (x,)\n"),
        format!(
            "class M(torch.nn.Module):\n    def forward(self, x: \"{deep}\", {parens}):\n        return (x,)\n"
        ),
        format!("{head}        return {deep}\n"),
        format!(
            "{head}        y = torch.ops.aten.f.default(\n{}        return (x,)\n",
            "            [\n".repeat(10_000)
        ),
    ];
    for (i, text) in texts.iter().enumerate() {
        let f = parse_fx(text);
        check_invariants(&f);
        if i == 2 {
            assert_eq!(f.unparsed.len(), 1);
            assert_eq!(f.unparsed[0].line, 3);
            assert!(
                f.unparsed[0].reason.contains("nested deeper"),
                "{}",
                f.unparsed[0].reason
            );
            assert_eq!(f.node_count(), 2, "x and output still parse");
        }
    }
    // 2,000 nested classes (an 8 MB file: the indentation alone grows quadratically):
    // nesting depth is data on an explicit stack, not recursion.
    let mut text = String::new();
    for d in 0..2_000 {
        text.push_str(&" ".repeat(4 * d));
        text.push_str(&format!("class c{d}(torch.nn.Module):\n"));
    }
    let f = parse_fx(&text);
    assert_eq!(f.graphs.len(), 2_000);
    assert_eq!(f.graphs[1_999].parent, Some(1_998));
    assert_eq!(f.problems.len(), 2_000, "each class lacks a `forward`");
    check_invariants(&f);
}

#[test]
fn hundred_thousand_node_graph_parses_in_sane_time() {
    let mut text = String::from(
        "class GraphModule(torch.nn.Module):\n    def forward(self, a0: \"f32[4, 4]\", a1: \"f32[4, 4]\"):\n",
    );
    text.push_str("        # File: /m.py:1 in forward, code: x = x + y\n");
    text.push_str("        n0: \"f32[4, 4]\" = torch.ops.aten.add.Tensor(a0, a1)\n");
    text.push_str("        n1: \"f32[4, 4]\" = torch.ops.aten.mul.Tensor(n0, a1)\n");
    for i in 2..100_000 {
        text.push_str(&format!(
            "        n{i}: \"f32[4, 4][4, 1]cpu\" = torch.ops.aten.add.Tensor(n{}, n{}, alpha = 2);  n{} = None\n",
            i - 1,
            i - 2,
            i - 2
        ));
    }
    text.push_str("        return (n99999,)\n");
    let start = Instant::now();
    let f = parse_fx(&text);
    let took = start.elapsed();
    assert!(took < Duration::from_secs(20), "took {took:?}");
    assert!(f.unparsed.is_empty() && f.problems.is_empty());
    let g = &f.graphs[0];
    assert_eq!(g.nodes.len(), 100_003);
    assert_eq!(g.edges().count(), 2 + 2 + 2 * 99_998 + 1);
    assert_eq!(node(g, "n500").inputs, [idx(g, "n499"), idx(g, "n498")]);
    assert_eq!(node(g, "n99999").source.as_ref().map(|s| s.line), Some(1));
}

#[test]
fn garbage_lines_between_good_ones_are_reported_with_line_numbers() {
    let text = read(&fixture(
        "npugraph_ex/torch_cond",
        "forward/000_aot_forward_graph.txt",
    ));
    let clean = parse_fx(&text);
    let garbage = [
        (3, "        @@@ this is not python !!!"),
        (5, "        x = foo(bar"),
        (9, "        ]]] ((("),
        (12, "%% dedented garbage inside forward"),
        (
            15,
            "        oops = torch.ops.aten.add.Tensor(t, 1) trailing junk",
        ),
        (25, "            sin2 = "),
        (31, "            y = f("),
    ];
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    for &(at, g) in garbage.iter() {
        lines.insert(at - 1, g.to_string()); // becomes line `at` of the new text
    }
    let dirty_text = lines.join("\n") + "\n";
    let dirty = parse_fx(&dirty_text);
    let reported: Vec<usize> = dirty.unparsed.iter().map(|u| u.line).collect();
    let want: Vec<usize> = garbage.iter().map(|g| g.0).collect();
    assert_eq!(reported, want, "{:#?}", dirty.unparsed);
    for u in &dirty.unparsed {
        assert_eq!(u.text, lines[u.line - 1].trim_end());
        assert!(!u.reason.is_empty());
    }
    assert!(dirty.problems.is_empty(), "{:?}", dirty.problems);
    let names = |f: &FxFile| -> Vec<Vec<String>> {
        f.graphs
            .iter()
            .map(|g| g.nodes.iter().map(|x| x.name.to_string()).collect())
            .collect()
    };
    assert_eq!(names(&dirty), names(&clean));
    assert_eq!(node(&dirty.graphs[0], "cond").subgraphs, [1, 2]);
    assert_eq!(
        node(&dirty.graphs[0], "relu").line,
        node(&clean.graphs[0], "relu").line + 5
    );
}

/// FX renders `operator.setitem(x, i, v)` as `x[i] = v;  setitem = x` (seen in a real
/// `transformers` Mixtral's Dynamo graph, `inv_perm[perm] = arange_1`): one node, named by the
/// alias, with the object, index and value as its arguments.
#[test]
fn subscript_assignment_is_a_setitem_node() {
    let text = r#"class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "i64[4]"):
        l_x_ = L_x_
        inv_perm: "i64[4]" = torch.empty_like(l_x_)
        arange_1: "i64[4]" = torch.arange(4)
        inv_perm[l_x_] = arange_1;  setitem = inv_perm;  l_x_ = arange_1 = setitem = None
        add: "i64[4]" = inv_perm + 1;  inv_perm = None
        return (add,)
"#;
    let f = parse_fx(text);
    assert!(f.unparsed.is_empty(), "{:?}", f.unparsed);
    check_invariants(&f);
    let g = &f.graphs[0];
    let s = node(g, "setitem");
    assert_eq!(s.op, OpKind::CallFunction);
    assert_eq!(&*s.target, "operator.setitem");
    assert_eq!(s.args, vec![n("inv_perm"), n("l_x_"), n("arange_1")]);
    // Still one node per statement: nothing named `inv_perm` twice.
    assert_eq!(g.nodes.iter().filter(|x| x.name == "inv_perm").count(), 1);
}

/// Every in-place form torch's FX code generator writes (`a += b;  name = a;  a = None`, the
/// twelve others and `a[i] = v;  setitem = a`), printed by torch itself
/// (`tests/e2e/fx_inplace.py`), read as the call it is: its target and its inputs, in order,
/// as torch's own GraphModule has them. One assertion per node names the form that broke.
pub fn check_inplace_forms(dir: &Path) {
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("truth.json")).expect("truth"))
            .expect("truth JSON");
    let mut checked = 0;
    for file in ["graph.txt", "dynamo.txt"] {
        let f = parse_fx(&std::fs::read_to_string(dir.join(file)).expect("graph"));
        assert!(
            f.unparsed.is_empty() && f.problems.is_empty(),
            "{file}: {:?} {:?}",
            f.unparsed,
            f.problems
        );
        let g = &f.graphs[0];
        for (name, want) in truth[file].as_object().expect("nodes") {
            let have = g
                .by_name
                .get(name)
                .map(|i| &g.nodes[i])
                .unwrap_or_else(|| panic!("{file}: no node {name}"));
            let inputs: Vec<&str> = have
                .inputs
                .iter()
                .map(|&i| g.nodes[i].name.as_str())
                .collect();
            let want_inputs: Vec<&str> = want["inputs"]
                .as_array()
                .expect("inputs")
                .iter()
                .map(|v| v.as_str().unwrap())
                .collect();
            assert_eq!(
                (&*have.target, inputs),
                (want["target"].as_str().unwrap(), want_inputs),
                "{file}: node {name}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 20, "only {checked} nodes checked");
}

#[test]
fn every_inplace_form_torch_prints_is_the_call_it_is() {
    check_inplace_forms(&crate::common::fixture("fx_inplace"));
}

// ---------------------------------------------------------------------------------------------
// The interface alone (`fx_text::interface`), read without building nodes
// ---------------------------------------------------------------------------------------------

/// What the full parse says of a file's outer `forward`: its parameters and its returned
/// values, each with its annotation (`None` for a returned item that is no node).
fn interface_by_parse(f: &FxFile) -> GraphInterface {
    let g = &f.graphs[0];
    let value = |n: &FxNode| Value {
        name: n.name.to_string(),
        ann: n.annotation.as_deref().map(str::to_string),
    };
    let inputs = g
        .nodes
        .iter()
        .filter(|n| n.op == OpKind::Placeholder)
        .map(value)
        .collect();
    let out = g
        .nodes
        .iter()
        .find(|n| n.op == OpKind::Output)
        .expect("output");
    let items = match out.args.first() {
        Some(Arg::Tuple(v) | Arg::List(v)) => v.iter().collect(),
        Some(a) => vec![a],
        None => vec![],
    };
    let outputs = items
        .into_iter()
        .map(|a| match a {
            Arg::Node(n) => Some(value(&g.nodes[g.by_name.get(n).expect("a node")])),
            _ => None,
        })
        .collect();
    GraphInterface { inputs, outputs }
}

/// On every pass dump of the fixtures the interface says what the parse says; on every cut of
/// a backward it returns (no outputs once the `return` is cut off); hostile text does not
/// overflow or panic.
#[test]
fn the_interface_of_every_fixture_pass_is_what_the_parse_says() {
    let files: Vec<PathBuf> = walk(Path::new(FIXTURES))
        .into_iter()
        .filter(|p| is_graph_file(p))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains("_aot_"))
        })
        .collect();
    assert!(files.len() >= 200, "only {} pass dumps", files.len());
    for p in &files {
        let text = read(p);
        let want = interface_by_parse(&parse_fx(&text));
        assert!(!want.inputs.is_empty(), "{}", p.display());
        assert_eq!(interface(&text), want, "{}", p.display());
    }
    let text = read(&fixture(
        "npugraph_ex/transformer_train",
        "backward/000_aot_backward_graph.txt",
    ));
    let whole = interface(&text);
    assert!(whole.inputs.iter().any(|v| v.name.starts_with("tangents_")));
    let ret = text.rfind("return ").expect("a return");
    let def = text.find("def forward").expect("a forward");
    let signed = def + text[def..].find("):\n").expect("the signature's end");
    for (cut, _) in text.match_indices('\n') {
        let part = interface(&text[..cut]);
        if cut < ret {
            assert!(part.outputs.is_empty(), "cut at {cut}");
        }
        if cut > signed {
            assert_eq!(part.inputs, whole.inputs, "cut at {cut}");
        }
    }
    let deep = format!(
        "class G(torch.nn.Module):\n    def forward(self, x):\n        return ({}x",
        "(".repeat(1 << 20)
    );
    assert_eq!(interface(&deep).outputs, vec![None]);
    let wide = format!(
        "class G(torch.nn.Module):\n    def forward(self, x):\n        return ({})\n",
        "x, ".repeat(1 << 18)
    );
    assert_eq!(interface(&wide).outputs.len(), 1 << 18);
    assert_eq!(
        interface("\u{0}\u{1b}[1mdef forward(\n"),
        GraphInterface::default()
    );
}
