//! Module inference on `transformers` architectures no one here wrote, checked against torch's
//! own `nn_module_stack` (`tests/fixtures/module_truth_hf/`, made by
//! `tests/e2e/module_truth_hf.py`): tiny configs, random weights, one training step.

use super::modules::{
    Share, check_thresholds, first_and_last, infer_model, model_dir, shares, truth_of,
};
use crate::common::fixture;
use std::path::Path;

/// Every case `module_truth_hf.py` writes.
pub const CASES: [&str; 9] = [
    "llama",
    "qwen2",
    "mixtral_fused",
    "mixtral",
    "qwen2_moe",
    "gpt2",
    "gpt2_decomposed",
    "bert",
    "t5",
];

/// Issue 24's goal on every architecture, forward and backward, first and last pass.
pub const LEAF_GOAL: f64 = 0.85;

/// One line per architecture: block and leaf share of the first and last pass of each phase.
pub fn print_table(arch: &str, shares: &[Share]) {
    let cells: Vec<String> = first_and_last(shares)
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let phase = if s.label.contains(" forward ") {
                "fw"
            } else {
                "bw"
            };
            let pass = if k % 2 == 0 { "first" } else { "last" };
            format!(
                "{phase} {pass:<5} {:>5.1}/{:>5.1}",
                100.0 * s.block(),
                100.0 * s.leaf()
            )
        })
        .collect();
    println!("{arch:<14} block/leaf %  {}", cells.join("  "));
}

/// Shares of every case under `root` (`root/<case>/torch_compile_debug/…`), the table printed.
pub fn check_all(root: &Path) {
    let mut all = Vec::new();
    let mut lines = Vec::new();
    for arch in CASES {
        let s = shares(arch, &model_dir(&root.join(arch)));
        lines.push((arch, s.len()));
        all.extend(s);
    }
    let mut at = 0;
    for (arch, n) in lines {
        print_table(arch, &all[at..at + n]);
        at += n;
    }
    check_thresholds(&all, LEAF_GOAL);
}

#[test]
fn transformers_architectures_meet_the_goals() {
    check_all(&fixture("module_truth_hf"));
}

/// Nodes torch puts in module `want` that fxray puts in `have`, over the first and last pass of
/// both phases of `case`, where `class(want)` picks the nodes to count: (counted, right).
fn class_share(
    root: &Path,
    case: &str,
    class: impl Fn(&str) -> bool,
    right: impl Fn(&str, &str) -> bool,
) -> (usize, usize) {
    let (mut counted, mut ok) = (0, 0);
    for (paths, files, got) in infer_model(&model_dir(&root.join(case))) {
        for k in [0, paths.len() - 1] {
            let g = &files[k].graphs[0];
            for (name, want) in truth_of(&paths[k]) {
                let Some(have) = got.passes[k].path_of(g, &name) else {
                    continue;
                };
                if class(&want) {
                    counted += 1;
                    ok += usize::from(right(&want, have));
                }
            }
        }
    }
    (counted, ok)
}

/// `experts.3` of `model.layers.0.mlp.experts.3.w1`.
fn expert(path: &str) -> Option<&str> {
    let at = path.find("experts.")?;
    let rest = &path[at..];
    let end = rest[8..].find('.').map_or(rest.len(), |e| e + 8);
    Some(&rest[..end])
}

/// Seen when tried: in an MoE block whose experts run in a Python loop, every expert's nodes
/// landed in the last expert. Every node torch puts in an expert is in that expert here.
#[test]
fn looped_experts_keep_their_own_nodes() {
    let root = fixture("module_truth_hf");
    for case in ["mixtral", "qwen2_moe"] {
        let (counted, ok) = class_share(
            &root,
            case,
            |want| expert(want).is_some(),
            |want, have| expert(want) == expert(have),
        );
        println!("{case}: {ok} of {counted} expert nodes in their own expert");
        assert!(counted > 100, "{case}: {counted} expert nodes");
        assert_eq!(ok, counted, "{case}");
    }
}

/// Seen when tried: a LayerNorm's own nodes (`var_mean`, `rsqrt`, `sub`, `mul`, as a
/// decomposition table writes it) landed in the block instead of `ln_1` / `ln_2`.
#[test]
fn a_decomposed_layer_norm_keeps_its_nodes() {
    let root = fixture("module_truth_hf");
    let is_norm = |want: &str| {
        let last = want.rsplit('.').next().unwrap_or(want);
        last.starts_with("ln_") || last.to_ascii_lowercase().contains("norm")
    };
    let (counted, ok) = class_share(&root, "gpt2_decomposed", is_norm, |want, have| want == have);
    println!("gpt2_decomposed: {ok} of {counted} LayerNorm nodes in their LayerNorm");
    assert!(counted > 50, "{counted} LayerNorm nodes");
    assert!(ok * 100 >= counted * 95, "{ok} of {counted}");
}
