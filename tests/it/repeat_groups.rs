//! `fxray modules`: the module tree with numbered siblings grouped by structure, on real graphs.
//! Which siblings repeat comes from how the model was built (24 equal decoder layers; 4 experts
//! per mixture-of-experts layer: `num_experts=4` in `tests/e2e/module_truth_hf.py`), and the
//! member names from torch's own `nn_module_stack` beside each graph.

use crate::common::{fxray, pass_files, stdout_json};
use serde_json::Value;

fn first_pass(case: &str, phase: &str) -> String {
    pass_files(case, phase)[0].display().to_string()
}

/// Every module of the report, depth first.
fn all(m: &Value) -> Vec<&Value> {
    let mut out = vec![m];
    for c in m["modules"].as_array().into_iter().flatten() {
        out.extend(all(c));
    }
    out
}

fn module<'a>(report: &'a Value, path: &str) -> &'a Value {
    all(report)
        .into_iter()
        .find(|m| m["module"] == path)
        .unwrap_or_else(|| panic!("no module {path}"))
}

fn members(g: &Value) -> Vec<String> {
    g["members"]
        .as_array()
        .expect("members")
        .iter()
        .map(|m| m.as_str().expect("a path").to_string())
        .collect()
}

#[test]
fn twenty_four_equal_layers_are_one_group() {
    let out = fxray(&[
        "modules",
        &first_pass("npugraph_ex/stress_24layer", "forward"),
        "--json",
    ]);
    let report = stdout_json(&out);
    let layers = module(&report, "layers");
    assert_eq!(layers["children"], 24);
    let groups = layers["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 1, "{groups:?}");
    let want: Vec<String> = (0..24).map(|k| format!("layers.{k}")).collect();
    assert_eq!(members(&groups[0]), want);
    assert_eq!(groups[0]["label"], "layers.0–23 ×24");
    assert_eq!(groups[0]["nodes"], 136);
    assert!(groups[0].get("differs").is_none());
    // The text form names the group once and lists one member's sub-modules.
    let text = fxray(&[
        "modules",
        &first_pass("npugraph_ex/stress_24layer", "forward"),
    ]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("layers.0–23 ×24  136 nodes each"), "{text}");
    assert!(
        text.contains("layers.0.q_proj") && !text.contains("layers.1.q_proj"),
        "{text}"
    );
}

#[test]
fn the_experts_of_each_moe_layer_are_one_group_in_both_phases() {
    for phase in ["forward", "backward"] {
        let pass = first_pass("module_truth_hf/qwen2_moe", phase);
        let report = stdout_json(&fxray(&["modules", &pass, "--json"]));
        // torch's own module names of the experts, from nn_module_stack beside the graph.
        let truth = std::fs::read_to_string(pass.replace(".txt", ".modules.json")).expect("truth");
        for layer in 0..2 {
            let experts = format!("model.layers.{layer}.mlp.experts");
            let want: Vec<String> = (0..4)
                .map(|k| format!("{experts}.{k}"))
                .filter(|m| truth.contains(&format!("\"{m}")))
                .collect();
            assert_eq!(
                want.len(),
                4,
                "{phase}: torch names 4 experts of layer {layer}"
            );
            let groups = module(&report, &experts)["groups"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            assert_eq!(groups.len(), 1, "{phase} {experts}: {groups:?}");
            assert_eq!(members(&groups[0]), want, "{phase}");
        }
    }
}
