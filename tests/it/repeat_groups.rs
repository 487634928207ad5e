//! `fxray modules`: the module tree with numbered siblings grouped by structure, on real graphs.
//! Which siblings repeat comes from how the model was built (24 equal decoder layers; 4 experts
//! per mixture-of-experts layer: `num_experts=4` in `tests/e2e/module_truth_hf.py`), and the
//! member names from torch's own `nn_module_stack` beside each graph.

use crate::common::{fixture, fxray, pass_files, stdout_json};
use crate::repeat_truth::{CASES, truth_groups};
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
    assert!(groups[0]["differs"].is_null(), "{:?}", groups[0]);
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

/// DeepSeek-V3 with `first_k_dense_replace=1` (layer 0 dense, 1–3 mixture-of-experts),
/// Qwen2-MoE with `decoder_sparse_step=2` (dense and sparse layers alternate) and with
/// `mlp_only_layers=[0, 3]`: the groups of `model.layers` are the config's (`groups.json`, written
/// from the config by `tests/e2e/repeat_truth_hf.py`) on the first and last pass of the forward
/// and of the backward, where a layer's edge depends on its neighbours (the last sums no
/// gradient from a next layer, the first recomputes its residual sum from the embedding, a layer
/// after a dense one reads its input another way): layers are grouped by what lies inside.
#[test]
fn layer_groups_of_heterogeneous_models_are_the_configs() {
    for case in CASES {
        let dir = fixture("repeat_truth_hf").join(case);
        for phase in ["forward", "backward"] {
            let passes = pass_files(&format!("repeat_truth_hf/{case}"), phase);
            for pass in [&passes[0], &passes[passes.len() - 1]] {
                check_layer_groups(case, &dir, pass);
            }
        }
    }
}

/// `fxray modules` on the pass `pass` of the case folder `dir` groups `model.layers` as its
/// `groups.json` says (also run on freshly made cases by `e2e_torch_repeat_groups`); every group
/// but the largest says how it differs (the experts, for mixture-of-experts against dense), and a
/// group whose members differ at their boundary names the member and how.
pub fn check_layer_groups(case: &str, dir: &std::path::Path, pass: &std::path::Path) {
    let what = format!("{case} {}", pass.display());
    let want = truth_groups(dir);
    let report = stdout_json(&fxray(&["modules", &pass.display().to_string(), "--json"]));
    let groups = module(&report, "model.layers")["groups"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    // A backward runs the layers last to first: groups in any order, members by number.
    let number = |m: &String| -> u32 {
        m.rsplit('.')
            .next()
            .and_then(|k| k.parse().ok())
            .unwrap_or(u32::MAX)
    };
    let mut got: Vec<Vec<String>> = groups
        .iter()
        .map(|g| {
            let mut m = members(g);
            m.sort_by_key(number);
            m
        })
        .collect();
    got.sort_by_key(|g| number(&g[0]));
    assert_eq!(got, want, "{what}");
    let differs: Vec<&str> = groups
        .iter()
        .filter_map(|g| g["differs"].as_str())
        .collect();
    assert_eq!(differs.len(), want.len() - 1, "{what}: {differs:?}");
    assert!(
        differs.iter().all(|d| d.contains("mlp.experts")),
        "{what}: {differs:?}"
    );
    for g in &groups {
        if let Some(b) = g["border"].as_str() {
            let named = b.split(' ').next().unwrap_or_default().to_string();
            assert!(members(g).contains(&named), "{what}: {b}");
            assert!(
                b.contains("at its boundary: ") && b.len() > named.len() + 40,
                "{what}: {b}"
            );
        }
    }
}
