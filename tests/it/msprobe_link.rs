//! msprobe entries linked to FX nodes (docs/formats.md §4.1): the showcase's step-0 module
//! entries land on the nodes that leave their modules with the output's dtype and shape, and
//! the node's npy dump of the same step holds the values msprobe measured; API entries link by
//! op and call order.

use crate::common::{fixture, fxray, run_dir, stdout_json};
use fxray::analysis::modules::Confidence;
use fxray::analysis::msprobe_link;
use fxray::cli::msprobe::Candidate;
use fxray::sources::msprobe;
use serde_json::Value;
use std::path::PathBuf;

/// The share of step-0 entries linked to a node with the same output (module calls) that the
/// linker reaches on the showcase (docs/formats.md §4.1 records the figure). A drop means
/// linking broke.
const SAME_OP_FLOOR: f64 = 0.95;

fn last_pass() -> PathBuf {
    run_dir("showcase").join(
        "npugraph_ex/model__0/forward/018_aot_forward_graph_after_resolve_default_stream_markers.txt",
    )
}

fn expected() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture("showcase/expected.json")).unwrap())
        .unwrap()
}

/// The npy of `node`'s `OUTPUT.0` in showcase step `step`.
fn output_npy(node: &str, step: u32) -> Option<PathBuf> {
    let dir = fixture(&format!(
        "showcase/data_dump/worldsize1_global_rank0/graph_1/{step}"
    ));
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with(&format!("{node}-")) && n.contains(".OUTPUT.0.")
        })
}

#[test]
fn keys_keep_call_order_and_parse() {
    let facts = expected();
    let s = msprobe::read(
        &fixture("showcase/msprobe_dump/step0/pid3064/dump.json"),
        0,
        "pid3064",
    )
    .unwrap();
    let keys: Vec<&str> = s.entries.iter().map(|e| &*e.key).collect();
    let want: Vec<&str> = facts["msprobe"]["step0"]["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(keys, want, "entries in file (call) order");
    assert!(s.entries.iter().all(|e| e.call.is_some()));
    use fxray::model::tensor::MsprobeCall;
    assert_eq!(
        msprobe::parse_key("Module.rotary_emb.RotaryEmbedding.forward.1"),
        Some(MsprobeCall::Module {
            path: "rotary_emb".into(),
            class: "RotaryEmbedding".into(),
            backward: false,
            n: 1
        })
    );
    assert_eq!(
        msprobe::parse_key("Aten.add.Tensor.3.forward"),
        Some(MsprobeCall::Api {
            prefix: "Aten".into(),
            op: "add.Tensor".into(),
            backward: false,
            n: 3
        })
    );
    assert_eq!(
        msprobe::parse_key("Functional.linear.0.backward"),
        Some(MsprobeCall::Api {
            prefix: "Functional".into(),
            op: "linear".into(),
            backward: true,
            n: 0
        })
    );
    // The file's shape is checked as before the ordered read: one line each.
    let err = |t: &str| {
        msprobe::parse(t.as_bytes(), 0, "pid1")
            .unwrap_err()
            .to_string()
    };
    assert!(err(r#"[{"data": {}}]"#).contains("top level is not an object"));
    assert!(err(r#"{"data": [1, 2]}"#).contains("no `data` object"));
    assert!(err(r#"{"task": "statistics"}"#).contains("no `data` object"));
    assert!(err(r#"{"data": {"Module.a.A.forward.0": "#).contains("not valid msprobe JSON"));
    let odd = msprobe::parse(
        br#"{"data": {"x": 3, "Module.a.A.forward.0": {}}}"#,
        0,
        "pid1",
    )
    .unwrap();
    assert_eq!(odd.entries.len(), 2);
    assert_eq!(odd.skipped, ["x: not an object"]);
    for bad in [
        "Module.forward.0",
        "Aten.add.x.forward",
        "plain",
        "Module.a.B.sideways.0",
    ] {
        assert_eq!(msprobe::parse_key(bad), None, "{bad}");
    }
}

#[test]
fn showcase_step0_entries_link_to_nodes_with_the_same_output_and_values() {
    let out = fxray(&["msprobe", fixture("showcase").to_str().unwrap(), "--json"]);
    let v = stdout_json(&out);
    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    let s0 = steps.iter().find(|s| s["step"] == 0).unwrap();
    assert!(
        s0["graphs"][0]
            .as_str()
            .unwrap()
            .ends_with("018_aot_forward_graph_after_resolve_default_stream_markers.txt"),
        "the last pass is what ran: {}",
        s0["graphs"]
    );
    let links = s0["links"].as_array().unwrap();
    let considered = s0["considered"].as_u64().unwrap();
    assert_eq!(
        considered,
        expected()["msprobe"]["step0"]["entries"].as_u64().unwrap()
    );
    let same = links.iter().filter(|l| l["same_op"] == true).count();
    let share = same as f64 / considered as f64;
    println!(
        "showcase step 0: {same}/{considered} entries linked to a node with the same output ({:.1}%)",
        100.0 * share
    );
    assert!(share >= SAME_OP_FLOOR, "{same}/{considered}: {links:#?}");

    // Independent of the linker's rules: the linked node's own dump of step 0 holds the values
    // msprobe measured on the module's output. msprobe measured the eager run, the dump the
    // compiled graph (addmm for mm + add, other kernels): bf16 results differ by a few units in
    // the last place (2^-7 relative), so max and min must agree within four of them.
    let probe = msprobe::read(
        &fixture("showcase/msprobe_dump/step0/pid3064/dump.json"),
        0,
        "pid3064",
    )
    .unwrap();
    let mut agree = Vec::new();
    let mut differ = Vec::new();
    for l in links {
        let Some(node) = l["node"].as_str() else {
            continue;
        };
        let e = &probe.entries[l["entry"].as_u64().unwrap() as usize];
        let Some(t) = e.tensors.iter().find(|t| t.slot == "output.0") else {
            continue;
        };
        let Some(npy) = output_npy(node, 0) else {
            differ.push(format!("{} → {node}: no dump", e.key));
            continue;
        };
        let st = fxray::pipeline::tensors::summarize_file(&npy)
            .unwrap()
            .stats;
        let same = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => (a - b).abs() <= 4.0 * a.abs().max(b.abs()).max(0.25) / 128.0,
            _ => false,
        };
        if same(t.max, st.max) && same(t.min, st.min) {
            agree.push(e.key.clone());
        } else {
            differ.push(format!(
                "{} → {node}: msprobe {:?}/{:?}, npy {:?}/{:?}",
                e.key, t.min, t.max, st.min, st.max
            ));
        }
    }
    println!(
        "values agree with the npy dump on {} of {considered} entries",
        agree.len()
    );
    assert!(
        agree.len() as f64 >= SAME_OP_FLOOR * considered as f64,
        "agree {}: differ {differ:#?}",
        agree.len()
    );
    // The check tells nodes apart: layer 0's output is the residual add after its MLP, not the
    // MLP's own output just before it.
    let layer0 = probe
        .entries
        .iter()
        .find(|e| &*e.key == "Module.layers.0.DecoderLayer.forward.0")
        .unwrap();
    let mlp_out =
        fxray::pipeline::tensors::summarize_file(&output_npy("_unsafe_view_10", 0).unwrap())
            .unwrap()
            .stats;
    assert!((layer0.tensors.last().unwrap().max.unwrap() - mlp_out.max.unwrap()).abs() > 0.1);
    assert!(agree.iter().any(|k| k == &layer0.key));
    // Facts of the fixture: q_proj's output leaves it through the view after its addmm, and
    // the SiLU of layer 1 is the node silu_1.
    let node_of = |key: &str| {
        links
            .iter()
            .find(|l| l["key"] == key)
            .and_then(|l| l["node"].as_str())
            .map(str::to_string)
    };
    assert_eq!(
        node_of("Module.layers.0.self_attn.q_proj.BiasedLinear.forward.0").as_deref(),
        Some("_unsafe_view_default")
    );
    assert_eq!(
        node_of("Module.layers.1.mlp.act_fn.SiLU.forward.0").as_deref(),
        Some("silu_1")
    );
}

#[test]
fn cli_says_in_one_line_what_is_missing() {
    let empty = tempfile::tempdir().unwrap();
    let out = fxray(&["msprobe", empty.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no msprobe dump"));
    // A dump without a debug tree beside it: nothing to link to unless --graph names one.
    let probe = fixture("showcase/msprobe_dump");
    let out = fxray(&["msprobe", probe.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give one with --graph"));
    let g = last_pass();
    let out = fxray(&[
        "msprobe",
        probe.to_str().unwrap(),
        "--graph",
        g.to_str().unwrap(),
        "--step",
        "1",
    ]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("msprobe step 1 pid3064"), "{text}");
    assert!(text.contains("32/32 entries linked"), "{text}");
}

#[test]
fn api_entries_link_by_op_and_call_order() {
    let c = Candidate::read(&last_pass()).unwrap();
    let g = &c.file.graphs[0];
    // A dump of every aten call of the graph as msprobe's aten level names them, in order,
    // after the module entry of layer 0's gate_proj and a functional linear inside it.
    let mut count = std::collections::HashMap::<String, u32>::new();
    // Written by hand: the keys' order is the calls' order (serde_json's map would sort them).
    let rec = r#"{"output": [{"type": "torch.Tensor", "dtype": "torch.bfloat16",
        "shape": [2, 8, 32], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0}]}"#;
    let mut keys = vec![
        "Module.layers.0.mlp.gate_proj.Linear.forward.0".to_string(),
        "Functional.linear.0.forward".to_string(),
    ];
    let mut want = Vec::new();
    for n in g
        .nodes
        .iter()
        .filter(|n| n.target.starts_with("torch.ops.aten."))
    {
        let op = n.target.trim_start_matches("torch.ops.aten.").to_string();
        let k = count.entry(op.clone()).or_default();
        let key = format!("Aten.{op}.{k}.forward");
        *k += 1;
        keys.push(key.clone());
        want.push((key, n.name.clone()));
    }
    keys.push("Aten.add.Tensor.99.forward".into());
    let body: Vec<String> = keys.iter().map(|k| format!("\"{k}\": {rec}")).collect();
    let text = format!(
        r#"{{"task": "statistics", "level": "L1", "data": {{{}}}}}"#,
        body.join(",\n")
    );
    let step = msprobe::parse(text.as_bytes(), 0, "rank0").unwrap();
    let m: Vec<&str> = c.modules.iter().map(String::as_str).collect();
    let links = msprobe_link::link(g, &m, &step, false);
    for (key, node) in &want {
        let l = links.links.iter().find(|l| *l.key == **key).unwrap();
        assert_eq!(
            l.node.as_deref(),
            Some(node.as_str()),
            "{key}: {}",
            l.reason
        );
        assert!(l.same_op && l.confidence >= Confidence::Medium, "{l:?}");
    }
    // The functional linear inside gate_proj is that module's matmul.
    let lin = links
        .links
        .iter()
        .find(|l| &*l.key == "Functional.linear.0.forward")
        .unwrap();
    let mm = lin.node.as_deref().expect("linked");
    assert!(
        g.nodes[g.by_name.get(mm).unwrap()].target.contains(".mm."),
        "{lin:?}"
    );
    assert_eq!(
        m[g.by_name.get(mm).unwrap()],
        "layers.0.mlp.gate_proj",
        "{lin:?}"
    );
    assert_eq!(lin.confidence, Confidence::Medium);
    let out = links
        .links
        .iter()
        .find(|l| *l.key == *"Aten.add.Tensor.99.forward")
        .unwrap();
    assert_eq!(out.node, None);
    // 15 aten.add.Tensor nodes in the last pass (expected.json final_graph.targets).
    assert!(out.reason.contains("the graph has 15"), "{}", out.reason);
    // A backward entry is not linked to a forward graph.
    let text = r#"{"data": {"Aten.add.Tensor.0.backward": {}}}"#;
    let step = msprobe::parse(text.as_bytes(), 0, "rank0").unwrap();
    let l = msprobe_link::link(g, &m, &step, false);
    assert_eq!((l.considered, l.linked()), (0, 0));
}
