//! Module inference on `transformers` architectures no one here wrote, checked against torch's
//! own `nn_module_stack` (`tests/fixtures/module_truth_hf/`, made by
//! `tests/e2e/module_truth_hf.py`): tiny configs, random weights, one training step.

use super::modules::{Share, check_thresholds, first_and_last, model_dir, shares};
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

#[test]
#[ignore = "debug: FXRAY_MOD_DEBUG=<case> writes /tmp/modules-exp/<case>.<phase>.<k>.txt"]
fn dump_mismatches() {
    use super::modules::{infer_model, truth_of};
    let case = std::env::var("FXRAY_MOD_DEBUG").unwrap();
    let root = fixture(&std::env::var("FXRAY_MOD_ROOT").unwrap_or("module_truth_hf".into()));
    let model = model_dir(&root.join(&case));
    for (phase, (paths, files, got)) in ["forward", "backward"].into_iter().zip(infer_model(&model))
    {
        for k in [0, paths.len() - 1] {
            let truth = truth_of(&paths[k]);
            let g = &files[k].graphs[0];
            let mut out = String::new();
            for (i, n) in g.nodes.iter().enumerate() {
                let want = truth.get(&n.name).map(String::as_str).unwrap_or("-");
                let have = got.passes[k].path(i);
                let mark = if want == "-" {
                    " "
                } else if want == have {
                    "."
                } else {
                    "X"
                };
                let src = n
                    .source
                    .as_ref()
                    .map(|s| {
                        format!(
                            "{}:{} {}",
                            s.function,
                            s.line,
                            s.code.chars().take(60).collect::<String>()
                        )
                    })
                    .unwrap_or_default();
                out.push_str(&format!(
                    "{mark} {:<24} {:<28} want {:<50} have {:<50} {:?} | {}\n",
                    n.name,
                    n.target.trim_start_matches("torch.ops.aten."),
                    want,
                    have,
                    got.passes[k].confidence[i],
                    src
                ));
            }
            std::fs::write(format!("/tmp/modules-exp/{case}.{phase}.{k}.txt"), out).unwrap();
        }
    }
}
