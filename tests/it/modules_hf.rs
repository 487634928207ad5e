//! Module inference on `transformers` architectures no one here wrote, checked against torch's
//! own `nn_module_stack` (`tests/fixtures/module_truth_hf/`, made by
//! `tests/e2e/module_truth_hf.py`): tiny configs, random weights, one training step.

use super::modules::{
    Share, check_thresholds, first_and_last, infer_model, model_dir, shares, truth_of,
};
use crate::common::fixture;
use fxray::model::fx::{FxGraph, FxNode, OpKind};
use std::collections::HashMap;
use std::path::Path;

/// Every case `module_truth_hf.py` writes.
pub const CASES: [&str; 22] = [
    "llama",
    "qwen2",
    "mixtral_fused",
    "mixtral",
    "qwen2_moe",
    "qwen3_moe",
    "qwen3_moe_decomposed",
    "qwen3_moe_6_layers",
    "gpt2",
    "gpt_neox",
    "gpt_neox_decomposed",
    "gpt2_decomposed",
    "bert",
    "t5",
    "mamba",
    "jamba",
    "bloom",
    "falcon",
    "gpt_bigcode",
    "openai_gpt",
    "bart",
    "vit",
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
    let (mut meet, mut below) = (Vec::new(), Vec::new());
    for (arch, n) in lines {
        print_table(arch, &all[at..at + n]);
        let own = &all[at..at + n];
        match BELOW_GOAL.iter().find(|b| b.0 == arch) {
            Some(&(_, floor, _)) => below.push((own, floor)),
            None => meet.extend(own.iter()),
        }
        at += n;
    }
    let meet: Vec<Share> = meet.into_iter().cloned().collect();
    check_thresholds(&meet, LEAF_GOAL);
    // The cases whose truth the files cannot give stay where they are, not lower.
    for (own, floor) in below {
        check_thresholds(own, floor);
    }
    let meeting: Vec<&str> = CASES
        .into_iter()
        .filter(|c| !BELOW_GOAL.iter().any(|b| b.0 == *c))
        .collect();
    println!("{} cases meet the goals: {meeting:?}", meeting.len());
}

/// Cases below the leaf goal, with the share they keep and why: none today. `openai_gpt` was
/// (83.2 % backward): its MLP calls `self.act(self.c_fc(x))` on a line that prints no node, so
/// the name `act` is in no pass file; the guards of its trace log name it (rule 12).
pub const BELOW_GOAL: [(&str, f64, &str); 0] = [];

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

/// Over the first and last pass of both phases of `case`: the nodes `pick(graph, node, truth)`
/// selects, counted, and how many fxray puts in torch's module: (counted, right).
fn node_share(
    root: &Path,
    case: &str,
    pick: impl Fn(&FxGraph, usize, &HashMap<String, String>) -> bool,
) -> (usize, usize) {
    let (mut counted, mut ok) = (0, 0);
    for (paths, files, got) in infer_model(&model_dir(&root.join(case))) {
        for k in [0, paths.len() - 1] {
            let g = &files[k].graphs[0];
            let truth = truth_of(&paths[k]);
            for (i, n) in g.nodes.iter().enumerate() {
                let Some(want) = truth.get(n.name.as_str()) else {
                    continue;
                };
                if pick(g, i, &truth) {
                    counted += 1;
                    ok += usize::from(got.passes[k].path(i) == want);
                }
            }
        }
    }
    (counted, ok)
}

fn op(n: &FxNode) -> &str {
    let t = n
        .target
        .strip_prefix("torch.ops.aten.")
        .unwrap_or(&n.target);
    t.split('.').next().unwrap_or(t)
}

/// Seen when tried: `F.linear` is `view(x)` → `mm`/`addmm` → a view back to `x`'s leading
/// dims, and torch records all three in the Linear; through a decomposition table the view
/// back is a plain `view`, and a backward recomputes it from the saved product, and there
/// fxray put it in the Linear's parent. Counted over the nodes torch puts in a Linear (a
/// module holding a matmul): every view that feeds, or is fed by, a matmul of the same module.
#[test]
fn a_linear_keeps_the_views_around_its_matmul() {
    let root = fixture("module_truth_hf");
    let matmul = |n: &FxNode| matches!(op(n), "mm" | "addmm");
    let view = |n: &FxNode| matches!(op(n), "view" | "reshape" | "_unsafe_view");
    let mut all = (0, 0);
    for case in CASES {
        let (counted, ok) = node_share(&root, case, |g, i, truth| {
            let n = &g.nodes[i];
            // A Linear: a module torch gives a matmul of this graph.
            let linear = |m: &str| {
                g.nodes
                    .iter()
                    .any(|p| matmul(p) && truth.get(p.name.as_str()).is_some_and(|t| t == m))
            };
            // The product may be one the forward saved, read back by the backward.
            let product = |j: usize| matmul(&g.nodes[j]) || g.nodes[j].op == OpKind::Placeholder;
            view(n)
                && truth.get(n.name.as_str()).is_some_and(|m| linear(m))
                && (n.users.iter().any(|&u| matmul(&g.nodes[u]))
                    || n.inputs.iter().any(|&j| product(j)))
        });
        println!("{case:<22} {ok:>4} of {counted:>4} views around a Linear's matmul in the Linear");
        assert!(counted > 0, "{case}");
        all = (all.0 + counted, all.1 + ok);
        assert!(ok * 100 >= counted * 95, "{case}: {ok} of {counted}");
    }
    assert!(all.0 > 500, "{all:?}");
}

/// Seen when tried: the residual sums of a decoder layer (`x + attn(ln1(x)) + mlp(ln2(x))`, a
/// parallel residual, or `residual + hidden_states` after the attention's call) landed in the
/// attention or the MLP whose statements they follow. Counted over the sums of two computed
/// values that torch puts in a layer (a module whose path ends with its index). Not T5's: its
/// decoder runs the encoder's lines, and a decoder line takes the encoder's frame (another
/// failure, of stacks sharing code).
#[test]
fn residual_sums_stay_in_their_layer() {
    let root = fixture("module_truth_hf");
    let mut all = (0, 0);
    // Falcon's `mlp_output += attention_output` after a parallel attention and MLP whose own
    // lines print no node: nothing in the files says the MLP has returned (left alone).
    for case in CASES.into_iter().filter(|&c| c != "t5" && c != "falcon") {
        let (counted, ok) = node_share(&root, case, |g, i, truth| {
            let n = &g.nodes[i];
            let layer = truth.get(n.name.as_str()).is_some_and(|m| {
                m.rsplit('.')
                    .next()
                    .is_some_and(|s| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
            });
            let computed = n
                .inputs
                .iter()
                .filter(|&&j| g.nodes[j].op != OpKind::Placeholder)
                .count();
            op(n) == "add" && layer && computed == 2
        });
        println!("{case:<22} {ok:>3} of {counted:>3} residual sums in their layer");
        all = (all.0 + counted, all.1 + ok);
        if case.starts_with("gpt_neox") {
            assert!(counted >= 8, "{case}: {counted}");
        }
        assert_eq!(ok, counted, "{case}");
    }
    assert!(all.0 >= 80, "{all:?}");
}

/// `openai_gpt`'s MLP calls `self.act(self.c_fc(x))`: no line of the call prints a node, the
/// activation's own lines (`activations.py:66 in forward`) name no module, so before its trace
/// log was read every one of them landed in the MLP. The log's guards name `mlp.act` and its
/// class in `transformers.activations`: 8 forward and 13 backward nodes a layer, counted on the
/// first and last pass of both phases, are in `mlp.act` (checked with the log moved away: none).
#[test]
fn an_activation_called_on_a_silent_line_is_named_by_the_guards() {
    let root = fixture("module_truth_hf");
    let is_act = |want: &str| want.ends_with("mlp.act");
    let (counted, ok) = class_share(&root, "openai_gpt", is_act, |want, have| want == have);
    println!("openai_gpt: {ok} of {counted} activation nodes in `mlp.act`");
    // 2 layers × 2 passes × (8 forward + 13 backward).
    assert_eq!(counted, 84);
    assert_eq!(ok, counted);
}

/// Without its trace log nothing names the activation, and nothing is made up: its nodes stay in
/// the MLP that called it, as before the guards were read.
#[test]
fn without_a_trace_log_the_activation_stays_in_its_caller() {
    let tmp = tempfile::tempdir().expect("tmp");
    let case = tmp.path().join("openai_gpt");
    crate::common::copy_tree(&fixture("module_truth_hf/openai_gpt"), &case);
    std::fs::remove_dir_all(case.join("torch_compile_debug/tlparse")).expect("tlparse");
    let is_act = |want: &str| want.ends_with("mlp.act");
    let in_mlp = |want: &str, have: &str| have == &want[..want.len() - ".act".len()];
    let (counted, ok) = class_share(tmp.path(), "openai_gpt", is_act, in_mlp);
    assert_eq!((counted, ok), (84, 84));
}

/// Module inference reads of a trace log only its Dynamo graphs and guard trees
/// (`trace_log::load_for_modules`): the modules it finds are the whole read's, and the model
/// folder's compile names the activation no pass file names.
#[test]
fn the_guards_read_alone_are_the_whole_reads() {
    use fxray::sources::trace_log;
    for case in ["openai_gpt", "gpt2_graph_break", "gpt2_graph_break_head"] {
        // Found from a model folder, as module inference finds it.
        let logs = trace_log::find_around(&model_dir(&fixture(&format!("module_truth_hf/{case}"))));
        assert_eq!(logs.len(), 1, "{case}: {logs:?}");
        let named = |t: &fxray::model::compile::CompileTrace| {
            t.compiles
                .iter()
                .filter(|c| !c.modules.is_empty())
                .map(|c| {
                    (
                        c.id(),
                        c.modules.clone(),
                        c.dynamo_graph().map(|g| g.text.clone()),
                    )
                })
                .collect::<Vec<_>>()
        };
        let whole = named(&trace_log::load(&logs[0]).expect("whole"));
        let alone = named(&trace_log::load_for_modules(&logs[0]).expect("alone"));
        assert!(!whole.is_empty(), "{case}");
        assert_eq!(alone, whole, "{case}");
    }
    let model = model_dir(&fixture("module_truth_hf/openai_gpt"));
    let guards = fxray::pipeline::module_guards::of_model(&model.join("dynamo_out_graph.txt"))
        .expect("the compile's guards");
    let act = guards
        .iter()
        .find(|m| m.path == "transformer.h.1.mlp.act")
        .expect("mlp.act");
    assert_eq!(act.class, "transformers.activations.NewGELUActivation");
}
