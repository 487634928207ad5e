//! Repeat-group truth: `transformers` models whose decoder layers differ by construction
//! (`tests/fixtures/repeat_truth_hf/<case>/`, made by `tests/e2e/repeat_truth_hf.py`). Each case
//! holds an npugraph_ex debug tree of one training step and `groups.json`: the layers of each
//! kind, computed from the model's config alone.

use crate::common::fixture;
use std::path::Path;

/// Every case `repeat_truth_hf.py` writes.
pub const CASES: [&str; 3] = [
    "deepseek_v3",
    "qwen2_moe_sparse_step",
    "qwen2_moe_dense_0_3",
];

/// `<dir>/groups.json`, parsed.
pub fn groups_json(dir: &Path) -> serde_json::Value {
    let path = dir.join("groups.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The layer groups of the case folder `dir` (`<dir>/groups.json`): each group the module paths
/// of the layers of one kind, as torch's `nn_module_stack` spells them (`model.layers.1`), in
/// layer order; groups ordered by their first member.
pub fn truth_groups(dir: &Path) -> Vec<Vec<String>> {
    let json = groups_json(dir);
    let groups = json["groups"]
        .as_array()
        .unwrap_or_else(|| panic!("{}: no groups", dir.display()));
    groups
        .iter()
        .map(|g| {
            g.as_array()
                .expect("a group is a list")
                .iter()
                .map(|m| m.as_str().expect("a member is a path").to_string())
                .collect()
        })
        .collect()
}

/// The groups are a partition of `container.0 … container.N-1` into at least two kinds, and
/// every layer is a module torch recorded in the forward (so the paths are spelled as its
/// `nn_module_stack` spells them, which the fold's repeat groups will be held against).
#[test]
fn committed_groups_partition_the_layers_as_torch_names_them() {
    for case in CASES {
        let dir = fixture("repeat_truth_hf").join(case);
        let json = groups_json(&dir);
        assert_eq!(json["case"], case);
        let container = json["container"].as_str().expect("container");
        let groups = truth_groups(&dir);
        assert!(groups.len() >= 2, "{case}: {groups:?}");
        let mut members: Vec<&String> = groups.iter().flatten().collect();
        let firsts: Vec<&String> = groups.iter().map(|g| &g[0]).collect();
        let index = |m: &str| -> usize {
            m.strip_prefix(container)
                .and_then(|r| r.strip_prefix('.'))
                .and_then(|r| r.parse().ok())
                .unwrap_or_else(|| panic!("{case}: {m} is not a layer of {container}"))
        };
        assert!(firsts.is_sorted_by_key(|m| index(m)), "{case}: {groups:?}");
        for g in &groups {
            assert!(g.is_sorted_by_key(|m| index(m)), "{case}: {g:?}");
        }
        members.sort_by_key(|m| index(m));
        let layers: Vec<usize> = members.iter().map(|m| index(m)).collect();
        assert_eq!(layers, (0..layers.len()).collect::<Vec<_>>(), "{case}");

        let forward =
            super::modules::model_dir(&dir).join("forward/000_aot_forward_graph.modules.json");
        let text = std::fs::read_to_string(&forward).expect("truth");
        let truth: std::collections::BTreeMap<String, String> =
            serde_json::from_str(&text).expect("truth json");
        for m in members {
            let prefix = format!("{m}.");
            assert!(
                truth.values().any(|p| p.starts_with(&prefix)),
                "{case}: torch puts no node in {m}"
            );
        }
    }
}
