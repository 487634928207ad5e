"""Repeat-group truth: `transformers` models whose decoder layers differ by construction.

A model's `layers.0 … layers.N` fold into one box only when they have the same structure; a
model that mixes two kinds of layer must fold into one group per kind. Which layer is of which
kind is written in the model's config, so the answer here comes from the config alone, never
from fxray and never from the traced graph.

Each case is a `transformers` model (5, or 4.46.3 where said) built from a config with tiny
sizes and random weights (no weights are downloaded: HF_HUB_OFFLINE=1), run for one training
step (forward and backward), compiled whole through module_truth.py's backend: the npugraph_ex
layout with its real FX passes and the `NNN_….modules.json` truth beside every graph (see
module_truth.py), plus

    <out>/<case>/groups.json   {"case", "container", "groups", "why"}

`container` is the ModuleList holding the layers, as torch's `nn_module_stack` spells its path
(`model.layers`); `groups` lists the layers of each kind by that path, each group in layer
order, groups ordered by their first member; `why` says which config fields decided it.

Cases (CASES below):
- deepseek_v3 — DeepseekV3Config, 4 layers, `first_k_dense_replace=1`: layer 0 has a dense MLP,
  layers 1–3 a mixture of experts (4 routed experts as 3-D weights, one shared expert);
- qwen2_moe_sparse_step — Qwen2MoeConfig, 4 layers, `decoder_sparse_step=2`: a layer is sparse
  when `(i + 1) % decoder_sparse_step == 0` and `i` is not in `mlp_only_layers`, so 1 and 3 are
  MoE and 0 and 2 dense (alternating: neither group is a contiguous run of layers);
- qwen2_moe_dense_0_3 — Qwen2MoeConfig from transformers 4.46.3, 6 layers,
  `decoder_sparse_step=1`, `mlp_only_layers=[0, 3]`: layers 0 and 3 dense, 1, 2, 4 and 5 MoE,
  the experts an `nn.ModuleList` run in a Python loop over `range(num_experts)` with one
  `torch.where` per expert (traced whole with `capture_dynamic_output_shape_ops`), as
  module_truth_hf.py's `qwen2_moe`; it runs in a child Python that imports transformers 4.46.3
  first (module_truth_hf.run_legacy).
The first two trace whole in transformers 5 (experts as 3-D weights).

The script also checks that the model it built agrees with the groups (one MLP class per group),
so a change of transformers' rule fails here rather than in fxray's tests.

Usage: python repeat_truth_hf.py OUT_DIR [CASE ...]   (default: all)
Paths inside the files are rewritten as module_truth_hf.py does: this folder to
/home/dev/models/gen/, the Python environment to /opt/venv/, transformers 4.46.3's folder to
/opt/transformers-4.46.3/.
"""

import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import module_truth  # noqa: E402  (the npugraph_ex writer, its passes and the truth)
import module_truth_hf  # noqa: E402  (transformers 4.46.3 in a child Python: run_legacy)

B, T, VOCAB = 2, 8, 64
LAYERS = 4
CONTAINER = "model.layers"

# A decoder's shared tiny sizes: 4 layers, 4 heads of 8, small experts.
DECODER = dict(
    vocab_size=VOCAB,
    hidden_size=32,
    intermediate_size=64,
    moe_intermediate_size=16,
    num_hidden_layers=LAYERS,
    num_attention_heads=4,
    max_position_embeddings=64,
)


def deepseek_v3_config(tf):
    return tf.DeepseekV3Config(
        **DECODER,
        num_key_value_heads=4,
        n_routed_experts=4,
        n_shared_experts=1,
        num_experts_per_tok=2,
        n_group=1,
        topk_group=1,
        first_k_dense_replace=1,
        q_lora_rank=None,
        kv_lora_rank=16,
        qk_rope_head_dim=8,
        qk_nope_head_dim=8,
        v_head_dim=8,
    )


def span(start, end):
    """`layer 0`, `layers 1–3`: layers start..end-1."""
    return f"layer {start}" if end - start == 1 else f"layers {start}–{end - 1}"


def deepseek_v3_kinds(config):
    """transformers' rule (DeepseekV3DecoderLayer): MoE from `first_k_dense_replace` on."""
    kinds = ["moe" if i >= config.first_k_dense_replace else "dense" for i in range(config.num_hidden_layers)]
    k, n = config.first_k_dense_replace, config.num_hidden_layers
    why = f"first_k_dense_replace={k}: {span(0, k)} dense, {span(k, n)} MoE"
    return kinds, why


def qwen2_moe_config(tf, sparse_step, mlp_only, layers=LAYERS):
    return tf.Qwen2MoeConfig(
        **{**DECODER, "num_hidden_layers": layers},
        num_key_value_heads=2,
        shared_expert_intermediate_size=32,
        num_experts=4,
        num_experts_per_tok=2,
        decoder_sparse_step=sparse_step,
        mlp_only_layers=mlp_only,
    )


def qwen2_moe_kinds(config):
    """transformers' rule (Qwen2MoeDecoderLayer): sparse every `decoder_sparse_step`-th layer,
    unless it is listed in `mlp_only_layers`."""
    kinds = [
        "moe"
        if i not in config.mlp_only_layers
        and config.num_experts > 0
        and (i + 1) % config.decoder_sparse_step == 0
        else "dense"
        for i in range(config.num_hidden_layers)
    ]
    moe = [i for i, k in enumerate(kinds) if k == "moe"]
    dense = [i for i, k in enumerate(kinds) if k == "dense"]
    why = (
        f"decoder_sparse_step={config.decoder_sparse_step}, mlp_only_layers="
        f"{list(config.mlp_only_layers)}: layers {moe} MoE, {dense} dense"
    )
    return kinds, why


# case → (config builder, kinds from the config, model class, the transformers version it needs:
# None for the installed one)
CASES = {
    "deepseek_v3": (deepseek_v3_config, deepseek_v3_kinds, "DeepseekV3ForCausalLM", None),
    "qwen2_moe_sparse_step": (
        lambda tf: qwen2_moe_config(tf, 2, []),
        qwen2_moe_kinds,
        "Qwen2MoeForCausalLM",
        None,
    ),
    "qwen2_moe_dense_0_3": (
        lambda tf: qwen2_moe_config(tf, 1, [0, 3], layers=6),
        qwen2_moe_kinds,
        "Qwen2MoeForCausalLM",
        module_truth_hf.LEGACY,
    ),
}


def groups_of(kinds):
    """Layer paths grouped by kind, each group in layer order, groups by their first member."""
    order, members = [], {}
    for i, kind in enumerate(kinds):
        if kind not in members:
            order.append(kind)
            members[kind] = []
        members[kind].append(f"{CONTAINER}.{i}")
    return [members[k] for k in order]


def check_model(model, groups):
    """The built model's layers agree with the config's groups: one MLP class per group, a
    different one per group."""
    classes = []
    for group in groups:
        names = {type(model.get_submodule(path).mlp).__name__ for path in group}
        if len(names) != 1:
            sys.exit(f"layers {group} should be of one kind, their MLPs are {sorted(names)}")
        classes.append(names.pop())
    if len(set(classes)) != len(classes):
        sys.exit(f"groups {groups} should differ, their MLPs are {classes}")


def generate(out, case):
    import transformers as tf

    make_config, kinds_of, model_class, legacy = CASES[case]
    config = make_config(tf)
    kinds, why = kinds_of(config)
    groups = groups_of(kinds)
    torch.manual_seed(0)
    model = getattr(tf, model_class)(config)
    check_model(model, groups)
    model.train()
    ids = torch.randint(1, VOCAB, (B, T))
    module_truth.REWRITES[:] = [(HERE, module_truth.NEUTRAL), (sys.prefix, "/opt/venv")]
    if legacy:
        # A Python loop over the experts, each picking its tokens with `torch.where`: the token
        # counts are data-dependent sizes, which Dynamo keeps in one graph only when told to.
        torch._dynamo.config.capture_dynamic_output_shape_ops = True
        torch._dynamo.config.capture_scalar_outputs = True
        module_truth.REWRITES[:] = [
            (HERE, module_truth.NEUTRAL),
            (module_truth_hf.LEGACY_DIR, f"/opt/transformers-{legacy}"),
            (sys.prefix, "/opt/venv"),
        ]
    module_truth.train_step(out, case, model, lambda m: m(input_ids=ids, labels=ids).loss)
    truth = {"case": case, "container": CONTAINER, "groups": groups, "why": why}
    with open(os.path.join(out, case, "groups.json"), "w") as f:
        f.write(json.dumps(truth, indent=1, ensure_ascii=False) + "\n")


def main():
    args = sys.argv[1:]
    here = args[:1] == ["--here"]
    args = args[1:] if here else args
    if not args:
        sys.exit(__doc__)
    out, cases = os.path.abspath(args[0]), args[1:] or list(CASES)
    for case in cases:
        if case not in CASES:
            sys.exit(f"unknown case {case!r}; cases: {', '.join(CASES)}")
        import transformers

        legacy = CASES[case][3]
        if legacy and not here and transformers.__version__ != legacy:
            module_truth_hf.run_legacy(out, case, __file__)
            continue
        if legacy and transformers.__version__ != legacy:
            sys.exit(f"{case}: transformers {transformers.__version__}, want {legacy}")
        generate(out, case)


if __name__ == "__main__":
    main()
