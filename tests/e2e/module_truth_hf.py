"""Module truth on `transformers` architectures no one here wrote (issue 24, part 2).

Each case is a `transformers` model built from a config with tiny sizes and random weights (no
weights are downloaded: HF_HUB_OFFLINE=1), run for one training step (training mode, so dropout
runs and there is a backward), compiled whole through module_truth.py's backend: the npugraph_ex
layout, its real FX passes, and beside every graph `NNN_….modules.json` with each node's module
from torch's own `nn_module_stack` / `fwd_nn_module_stack` (see module_truth.py).

Cases (CASES below):
- llama, qwen2 — RMSNorm, rotary attention with grouped k/v, SwiGLU MLP;
- mixtral_fused — today's Mixtral: experts as 3-D weights run by `torch._grouped_mm`;
- mixtral, qwen2_moe — experts in a `ModuleList` run in a Python loop (one `torch.where` per
  expert). transformers 5 fused every such MoE into 3-D weights, so these two come from
  transformers 4.46.3, the last release whose loop runs over `range(num_experts)` (later ones loop
  over the experts hit, a data-dependent loop Dynamo cannot trace whole). It is imported from
  $FXRAY_TRANSFORMERS_4 (default ~/.cache/fxray/transformers-4.46.3), installed there by
      pip install --target ~/.cache/fxray/transformers-4.46.3 --no-deps transformers==4.46.3 \\
          tokenizers==0.20.3 huggingface-hub==0.26.5 requests charset-normalizer idna urllib3 certifi
- qwen3_moe — Qwen3-MoE: experts as 3-D weights run by `torch._grouped_mm`, q/k norms, no
  shared expert; transformers 5.25 wraps `apply_rotary_pos_emb` in a hub-kernel module held by
  a global, which the truth skips (module_truth.py);
- qwen3_moe_decomposed — the same through Inductor's decomposition table;
- qwen3_moe_6_layers — the same with 6 layers, as a new user's first model (issue 33): what the
  window shows at open is checked on it (`ui_first_view.rs`);
- gpt2 — Conv1D and a fused qkv projection, tied head;
- gpt_neox — GPT-NeoX with `use_parallel_residual=True` (`x + attn(ln1(x)) + mlp(ln2(x))`),
  partial rotary;
- gpt_neox_decomposed — the same through Inductor's decomposition table (a Linear's view back is
  a plain `view`; the two norms of one input share their statistics);
- gpt2_decomposed — the same through Inductor's decomposition table, as Inductor's own graphs
  hold it: every LayerNorm is `var_mean`, `rsqrt`, `sub`, `mul`, … of its own;
- bert — post-residual LayerNorm, masked-LM head;
- t5 — encoder–decoder, relative position bias, cross-attention;
- mamba — state space, no attention: causal depthwise conv1d, selective scan run as the slow
  path's recurrent loop (CPU, no CUDA kernels; `use_associative_scan=False`), one step per token;
- jamba — hybrid: a Mamba layer (dense MLP) then an attention layer whose MLP is a mixture of
  4 experts (3-D weights, sorted by expert, run by transformers' `grouped_mm_fallback` op as
  in float32 under Dynamo); its scan is the parallel-prefix `associative_scan` (unrolled);
- bloom — ALiBi position bias (`baddbmm` onto the scores), fused qkv, embedding LayerNorm;
- falcon — multi-query attention (one k/v head), rotary, parallel attention and MLP off one
  LayerNorm (`multi_query=True`, `alibi=False`);
- gpt_bigcode — multi-query attention, Conv1D-free GPT-2 layout with a fused `c_attn`;
- openai_gpt — the first GPT: Conv1D projections, post-residual LayerNorm, learned positions;
- bart — encoder–decoder, learned positions, cross-attention, embedding LayerNorms;
- vit — vision: `pixel_values` (2 images of 3x16x16, patches of 4) through a conv patch
  embedding, a class token, an image-classification head and a loss from class `labels`.
- gpt2_graph_break, gpt2_graph_break_head — gpt2 with a graph break: a forward hook calls
  `torch._dynamo.graph_break()` (on `transformer.h[1]`: inside the decoder stack; on
  `transformer`: between the stack and the head), compiled with `fullgraph=False`. Every Dynamo
  graph goes into a `model__N` of its own and each backward, compiled lazily during
  `.backward()`, into the latest `model__N` then, as npugraph_ex writes them
  (module_truth.GraphsRun). `<case>/where.json` says which graph each `model__N` holds (compile
  id, frame, the module its `self` is), whose backward each backward compile was and where it
  was written. The truth's module paths are torch's, relative to the frame's `self`
  (`attn.c_attn` in a block's `forward`).

The cases in TRACED (openai_gpt and both graph-break cases) keep torch's trace log in
`torch_compile_debug/tlparse/` (paths rewritten, md5s made again).

Usage: python module_truth_hf.py OUT_DIR [CASE ...]   (default: all)
Paths inside the files are rewritten: this folder to /home/dev/models/gen/, the Python
environment to /opt/venv/ and transformers 4.46.3's folder to /opt/transformers-4.46.3/.
"""

import json
import os
import subprocess
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import torch  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import module_truth  # noqa: E402  (the npugraph_ex writer, its passes and the truth)

LEGACY = "4.46.3"
LEGACY_DIR = os.environ.get(
    "FXRAY_TRANSFORMERS_4", os.path.expanduser(f"~/.cache/fxray/transformers-{LEGACY}")
)
B, T, VOCAB = 2, 8, 64
# A vision case's tiny images (16x16, 3 channels, patches of 4: 16 patches) and its classes.
IMAGE, LABELS = 16, 4

# A decoder's shared tiny sizes: 2 layers, 4 heads of 8, grouped k/v (2 heads).
DECODER = dict(
    vocab_size=VOCAB,
    hidden_size=32,
    intermediate_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    max_position_embeddings=64,
)


def causal_lm(tf, config_name, model_name, **extra):
    config = getattr(tf, config_name)(**{**DECODER, **extra})
    return getattr(tf, model_name)(config)


def llama(tf):
    return causal_lm(tf, "LlamaConfig", "LlamaForCausalLM")


def qwen2(tf):
    return causal_lm(tf, "Qwen2Config", "Qwen2ForCausalLM")


def mixtral_fused(tf):
    return causal_lm(
        tf, "MixtralConfig", "MixtralForCausalLM", num_local_experts=4, num_experts_per_tok=2
    )


def mixtral(tf):
    return causal_lm(
        tf,
        "MixtralConfig",
        "MixtralForCausalLM",
        intermediate_size=48,
        num_local_experts=4,
        num_experts_per_tok=2,
    )


def qwen2_moe(tf):
    return causal_lm(
        tf,
        "Qwen2MoeConfig",
        "Qwen2MoeForCausalLM",
        moe_intermediate_size=24,
        shared_expert_intermediate_size=48,
        num_experts=4,
        num_experts_per_tok=2,
    )


def qwen3_moe(tf, **extra):
    return causal_lm(
        tf,
        "Qwen3MoeConfig",
        "Qwen3MoeForCausalLM",
        head_dim=8,
        moe_intermediate_size=24,
        num_experts=4,
        num_experts_per_tok=2,
        **extra,
    )


def qwen3_moe_6_layers(tf):
    return qwen3_moe(tf, num_hidden_layers=6)


def gpt_neox(tf):
    config = tf.GPTNeoXConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=64,
        rotary_pct=0.5,
        use_parallel_residual=True,
        bos_token_id=0,
        eos_token_id=0,
    )
    return tf.GPTNeoXForCausalLM(config)


def gpt2(tf):
    config = tf.GPT2Config(
        vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=4, bos_token_id=0, eos_token_id=0
    )
    model = tf.GPT2LMHeadModel(config)
    # `GPT2LMHeadModel` maps to no loss by its class name; the warning that says so once would
    # break the graph.
    model.loss_type = "ForCausalLM"
    return model


def bert(tf):
    config = tf.BertConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    return tf.BertForMaskedLM(config)


def t5(tf):
    config = tf.T5Config(
        vocab_size=VOCAB,
        d_model=32,
        d_kv=8,
        d_ff=64,
        num_layers=2,
        num_decoder_layers=2,
        num_heads=4,
        relative_attention_num_buckets=8,
        relative_attention_max_distance=16,
        decoder_start_token_id=0,
        pad_token_id=0,
    )
    return tf.T5ForConditionalGeneration(config)


def mamba(tf):
    config = tf.MambaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        state_size=8,
        num_hidden_layers=2,
        expand=2,
        conv_kernel=4,
        time_step_rank=4,
        # The slow path's recurrent loop, one step per token (CPU: no CUDA kernels), not the
        # parallel-prefix `associative_scan` it takes under Dynamo by default (jamba keeps that).
        use_mambapy=False,
        use_associative_scan=False,
        use_cache=False,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=0,
    )
    return tf.MambaForCausalLM(config)


def jamba(tf):
    config = tf.JambaConfig(
        **DECODER,
        num_experts=4,
        num_experts_per_tok=2,
        expert_layer_period=2,
        expert_layer_offset=1,
        attn_layer_period=2,
        attn_layer_offset=1,
        use_mamba_kernels=False,
        mamba_d_state=8,
        mamba_d_conv=4,
        mamba_expand=2,
        mamba_dt_rank=4,
        use_cache=False,
        pad_token_id=0,
        bos_token_id=0,
        eos_token_id=0,
    )
    return tf.JambaForCausalLM(config)


def bloom(tf):
    config = tf.BloomConfig(
        vocab_size=VOCAB, hidden_size=32, n_layer=2, n_head=4, bos_token_id=0, eos_token_id=0, pad_token_id=0
    )
    return tf.BloomForCausalLM(config)


def falcon(tf):
    config = tf.FalconConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        multi_query=True,
        alibi=False,
        new_decoder_architecture=False,
        parallel_attn=True,
        max_position_embeddings=64,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=0,
    )
    return tf.FalconForCausalLM(config)


def gpt_bigcode(tf):
    config = tf.GPTBigCodeConfig(
        vocab_size=VOCAB,
        n_positions=64,
        n_embd=32,
        n_layer=2,
        n_head=4,
        n_inner=64,
        multi_query=True,
        bos_token_id=0,
        eos_token_id=0,
        pad_token_id=0,
    )
    return tf.GPTBigCodeForCausalLM(config)


def openai_gpt(tf):
    config = tf.OpenAIGPTConfig(vocab_size=VOCAB, n_positions=64, n_embd=32, n_layer=2, n_head=4)
    model = tf.OpenAIGPTLMHeadModel(config)
    # As gpt2: `OpenAIGPTLMHeadModel` maps to no loss by its class name.
    model.loss_type = "ForCausalLM"
    return model


def bart(tf):
    config = tf.BartConfig(
        vocab_size=VOCAB,
        max_position_embeddings=64,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        pad_token_id=0,
        bos_token_id=0,
        eos_token_id=0,
        decoder_start_token_id=0,
        forced_eos_token_id=None,
    )
    return tf.BartForConditionalGeneration(config)


def vit(tf):
    config = tf.ViTConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=64,
        image_size=IMAGE,
        patch_size=4,
        num_channels=3,
        num_labels=LABELS,
    )
    return tf.ViTForImageClassification(config)


# case → (model builder, the transformers version it needs: None for the installed one,
# whether AOT Autograd lowers through Inductor's decompositions)
CASES = {
    "llama": (llama, None, False),
    "qwen2": (qwen2, None, False),
    "mixtral_fused": (mixtral_fused, None, False),
    "mixtral": (mixtral, LEGACY, False),
    "qwen2_moe": (qwen2_moe, LEGACY, False),
    "qwen3_moe": (qwen3_moe, None, False),
    "qwen3_moe_decomposed": (qwen3_moe, None, True),
    "qwen3_moe_6_layers": (qwen3_moe_6_layers, None, False),
    "gpt2": (gpt2, None, False),
    "gpt_neox": (gpt_neox, None, False),
    "gpt_neox_decomposed": (gpt_neox, None, True),
    "gpt2_decomposed": (gpt2, None, True),
    "bert": (bert, None, False),
    "t5": (t5, None, False),
    "mamba": (mamba, None, False),
    "jamba": (jamba, None, False),
    "bloom": (bloom, None, False),
    "falcon": (falcon, None, False),
    "gpt_bigcode": (gpt_bigcode, None, False),
    "openai_gpt": (openai_gpt, None, False),
    "bart": (bart, None, False),
    "vit": (vit, None, False),
    "gpt2_graph_break": (gpt2, None, False),
    "gpt2_graph_break_head": (gpt2, None, False),
}

# case → the module whose forward hook calls `torch._dynamo.graph_break()`. These compile with
# `fullgraph=False`, each Dynamo graph into a `model__N` of its own, the backwards where
# npugraph_ex writes them (module_truth.GraphsRun), and write `<case>/where.json`.
GRAPH_BREAKS = {
    "gpt2_graph_break": "transformer.h.1",
    "gpt2_graph_break_head": "transformer",
}

# Cases that keep torch's trace log in `torch_compile_debug/tlparse/`: its guards name every
# module Dynamo touched with its class, what fxray reads for a weightless child called on a line
# that prints no node (GPT's `self.act(self.c_fc(x))`). Each is 1–2.5 MB, so only these.
TRACED = {"openai_gpt", "gpt2_graph_break", "gpt2_graph_break_head"}


def break_graph(module, args, output):
    torch._dynamo.graph_break()


def generate(out, case):
    import transformers as tf

    build, _, decomposed = CASES[case]
    torch.manual_seed(0)
    model = build(tf)
    model.train()
    ids = torch.randint(1, VOCAB, (B, T))
    if model.main_input_name == "pixel_values":
        # A vision model: images in, one class label per image.
        inputs = dict(
            pixel_values=torch.randn(B, 3, IMAGE, IMAGE), labels=torch.randint(0, LABELS, (B,))
        )
    else:
        inputs = dict(input_ids=ids, labels=ids)
    # A Python loop over the experts, each picking its tokens with `torch.where`: the token
    # counts are data-dependent sizes, which Dynamo keeps in one graph only when told to.
    torch._dynamo.config.capture_dynamic_output_shape_ops = True
    torch._dynamo.config.capture_scalar_outputs = True
    module_truth.REWRITES[:] = [
        (HERE, module_truth.NEUTRAL),
        (LEGACY_DIR, f"/opt/transformers-{LEGACY}"),
        (sys.prefix, "/opt/venv"),
    ]
    decompositions = None
    if decomposed:
        from torch._inductor.decomposition import select_decomp_table

        decompositions = select_decomp_table()
    hook_at, trace = GRAPH_BREAKS.get(case), case in TRACED
    if hook_at is not None:
        model.get_submodule(hook_at).register_forward_hook(break_graph)

    def loss_of(m):
        return m(**inputs).loss

    run = module_truth.train_step(out, case, model, loss_of, decompositions, hook_at is None, trace)
    if run is not None:
        where = {"case": case, "graph_break": f"forward hook of {hook_at}", **run.where()}
        foreign = [b for b in where["backwards"] if b["of"] != b["written_into"]]
        if len(where["graphs"]) < 2 or not foreign:
            sys.exit(f"{case}: want 2+ graphs, a backward beside another graph's forward: {where}")
        with open(os.path.join(out, case, "where.json"), "w") as f:
            f.write(json.dumps(where, indent=1) + "\n")


def run_legacy(out, case, script=None):
    """A case for transformers 4.46.3: a child Python that imports it first and runs `script`
    (this file by default) with `--here OUT CASE`."""
    if not os.path.isfile(os.path.join(LEGACY_DIR, "transformers", "__init__.py")):
        sys.exit(
            f"{case} needs transformers {LEGACY} in {LEGACY_DIR} (set FXRAY_TRANSFORMERS_4 to "
            "move it); install it with: pip install --target "
            f"{LEGACY_DIR} --no-deps transformers=={LEGACY} tokenizers==0.20.3 "
            "huggingface-hub==0.26.5 requests charset-normalizer idna urllib3 certifi"
        )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([LEGACY_DIR, os.environ.get("PYTHONPATH", "")]))
    script = os.path.abspath(script or __file__)
    subprocess.run([sys.executable, script, "--here", out, case], env=env, check=True)


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

        legacy = CASES[case][1]
        if legacy and not here and transformers.__version__ != legacy:
            run_legacy(out, case)
            continue
        if legacy and transformers.__version__ != legacy:
            sys.exit(f"{case}: transformers {transformers.__version__}, want {legacy}")
        generate(out, case)


if __name__ == "__main__":
    main()
