"""Module truth from torch itself, for fxray's module inference (issue 14, part 1).

Compiles small multi-layer models (CPU, training step) through a torch._dynamo backend built
on `aot_autograd` that writes the npugraph_ex debug layout the fixtures use:

    <out>/<arch>/torch_compile_debug/run_<stamp>-pid_<pid>/npugraph_ex/model__0/
        dynamo_out_graph.txt
        forward/000_aot_forward_graph.txt
        forward/001_aot_forward_graph_after_apply_pattern_passes.txt
        forward/002_aot_forward_graph_after_view_to_reshape.txt
        forward/003_aot_forward_graph_after_eliminate_dead_code.txt
        backward/000_aot_backward_graph.txt … (the same passes)

The passes are real FX rewrites, so the first and the last graph differ:
- apply_pattern_passes: `add(mm(a, b), bias)` becomes one new node `addmm(bias, a, b)`
  (named `addmm`, `addmm_1`, …), `silu(x)` becomes `x * sigmoid(x)` (new `sigmoid` and
  `mul_N` nodes), and `view(view(x))` becomes one `view(x)`; every new node
  carries the replaced node's module (as Inductor's pattern matcher keeps `nn_module_stack`)
  but no stack trace, so its text has no source comment;
- view_to_reshape: every `aten.view` becomes `aten.reshape` in place (same name);
- eliminate_dead_code: `Graph.eliminate_dead_code()`.

Beside every graph file `NNN_….txt` it writes `NNN_….modules.json`: `{node name: module}` for
every node torch knows the module of, as fxray spells it (`layers.3.attn.q_proj`, `""` for the
root module): the last entry of `node.meta["nn_module_stack"]` for forward (and Dynamo) nodes,
of `node.meta["fwd_nn_module_stack"]` for backward nodes (a backward node recomputing a forward
one has only `nn_module_stack`), skipping modules held by a global rather than the model. Nodes
without one (placeholders, output, the code of the root module's own forward) are left out.

Usage: python module_truth.py OUT_DIR [ARCH ...]   (ARCH: llama, moe, tied, hybrid; default all)
Paths inside the files are rewritten to /home/dev/models/gen/, as the fixtures' are.
"""

import json
import math
import os
import re
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._dynamo.backends.common import aot_autograd
from functorch.compile import make_boxed_func, min_cut_rematerialization_partition

HERE = os.path.dirname(os.path.abspath(__file__))
NEUTRAL = "/home/dev/models/gen"
aten = torch.ops.aten

# --- the models -------------------------------------------------------------------------------

D, HEADS, T, B, VOCAB = 16, 2, 8, 2, 32


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        var = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(var + self.eps))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.n_heads, self.d_head = HEADS, D // HEADS
        self.q_proj = nn.Linear(D, D, bias=False)
        self.k_proj = nn.Linear(D, D, bias=False)
        self.v_proj = nn.Linear(D, D, bias=False)
        self.o_proj = nn.Linear(D, D, bias=False)

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.n_heads, self.d_head).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.n_heads, self.d_head).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.n_heads, self.d_head).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d_head)
        mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(mask, float("-inf"))
        out = F.softmax(scores, dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(b, t, -1))


class SwiGLU(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(D, 2 * D, bias=False)
        self.up_proj = nn.Linear(D, 2 * D, bias=False)
        self.down_proj = nn.Linear(2 * D, D, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = RMSNorm(D)
        self.self_attn = LlamaAttention()
        self.post_attention_layernorm = RMSNorm(D)
        self.mlp = SwiGLU()

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class Llama(nn.Module):
    """LLaMA-style decoder: RMSNorm, rotary attention with q/k/v/o, SwiGLU MLP."""

    def __init__(self, n_layers=4):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, D)
        self.layers = nn.ModuleList(LlamaLayer() for _ in range(n_layers))
        self.norm = RMSNorm(D)
        self.lm_head = nn.Linear(D, VOCAB, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, D // HEADS, 2).float() / (D // HEADS)))
        freqs = torch.outer(torch.arange(T).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos(), persistent=False)
        self.register_buffer("sin_cached", emb.sin(), persistent=False)

    def forward(self, ids):
        x = self.embed_tokens(ids)
        cos, sin = self.cos_cached[: ids.shape[1]], self.sin_cached[: ids.shape[1]]
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.norm(x))


class FusedAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.n_heads, self.d_head = HEADS, D // HEADS
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=-1)
        q = q.view(b, t, self.n_heads, self.d_head).transpose(1, 2)
        k = k.view(b, t, self.n_heads, self.d_head).transpose(1, 2)
        v = v.view(b, t, self.n_heads, self.d_head).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(out.transpose(1, 2).reshape(b, t, c))


class Expert(nn.Module):
    def __init__(self):
        super().__init__()
        self.w1 = nn.Linear(D, 2 * D)
        self.w2 = nn.Linear(2 * D, D)

    def forward(self, x):
        return self.w2(F.gelu(self.w1(x)))


class MoE(nn.Module):
    """Dense top-2 mixture of 4 experts (every expert runs; the gate zeroes the others)."""

    def __init__(self, n_experts=4, top_k=2):
        super().__init__()
        self.router = nn.Linear(D, n_experts, bias=False)
        self.experts = nn.ModuleList(Expert() for _ in range(n_experts))
        self.top_k = top_k

    def forward(self, x):
        probs = F.softmax(self.router(x), dim=-1)
        top, idx = probs.topk(self.top_k, dim=-1)
        gates = torch.zeros_like(probs).scatter(-1, idx, top / top.sum(-1, keepdim=True))
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            out = out + gates[..., e : e + 1] * expert(x)
        return out


class MoEBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.attn = FusedAttention()
        self.ln2 = nn.LayerNorm(D)
        self.moe = MoE()

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.moe(self.ln2(x))


class MoEModel(nn.Module):
    """Fused-qkv attention and a small mixture-of-experts MLP."""

    def __init__(self, n_layers=4):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, D)
        self.wpe = nn.Embedding(T, D)
        self.h = nn.ModuleList(MoEBlock() for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(D)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1])
        x = self.wte(ids) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        return self.head(self.ln_f(x))


class GeluMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_fc = nn.Linear(D, 4 * D)
        self.act = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * D, D)
        self.drop = nn.Dropout(0.0)

    def forward(self, x):
        return self.drop(self.c_proj(self.act(self.c_fc(x))))


class TiedBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(D)
        self.attn = FusedAttention()
        self.ln_2 = nn.LayerNorm(D)
        self.mlp = GeluMLP()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Tied(nn.Module):
    """GPT-2-style, the output head shares the input embedding's weight."""

    def __init__(self, n_layers=4):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, D)
        self.pos_emb = nn.Parameter(torch.zeros(1, T, D))
        self.blocks = nn.ModuleList(TiedBlock() for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(D)
        self.lm_head = nn.Linear(D, VOCAB, bias=False)
        self.lm_head.weight = self.tok_emb.weight

    def forward(self, ids):
        x = self.tok_emb(ids) + self.pos_emb[:, : ids.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


class MambaMixer(nn.Module):
    """A selective state-space mixer (Mamba's slow path): the children project and convolve, the
    mixer's own forward does the rest, so torch records those ops in the mixer, not in a child:
    the gating, the discretisation from `A_log` and `D` (its own parameters), the scan, a Python
    loop over the time steps, and the output projection, `F.linear` on `out_proj`'s weight (a
    child module that is never called)."""

    def __init__(self, d_inner=2 * D, d_state=4, dt_rank=4, d_conv=4):
        super().__init__()
        self.d_inner, self.d_state, self.dt_rank = d_inner, d_state, dt_rank
        self.in_proj = nn.Linear(D, 2 * d_inner, bias=False)
        self.conv1d = nn.Conv1d(d_inner, d_inner, d_conv, groups=d_inner, padding=d_conv - 1)
        self.x_proj = nn.Linear(d_inner, dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(dt_rank, d_inner)
        a = torch.arange(1, d_state + 1, dtype=torch.float32).repeat(d_inner, 1)
        self.A_log = nn.Parameter(torch.log(a))
        self.D = nn.Parameter(torch.ones(d_inner))
        self.out_proj = nn.Linear(d_inner, D, bias=False)

    def forward(self, x):
        b, t, _ = x.shape
        h, gate = self.in_proj(x).transpose(1, 2).chunk(2, dim=1)
        h = F.silu(self.conv1d(h)[..., :t])
        sizes = [self.dt_rank, self.d_state, self.d_state]
        dt, bm, cm = torch.split(self.x_proj(h.transpose(1, 2)), sizes, dim=-1)
        dt = F.softplus(self.dt_proj(dt)).transpose(1, 2)
        a = -torch.exp(self.A_log.float())
        da = torch.exp(a[None, :, None, :] * dt[:, :, :, None])
        dbu = dt[:, :, :, None] * bm[:, None, :, :] * h[:, :, :, None]
        state = torch.zeros(b, self.d_inner, self.d_state, dtype=x.dtype)
        ys = []
        for i in range(t):
            state = da[:, :, i] * state + dbu[:, :, i]
            ys.append(torch.matmul(state, cm[:, i, :].unsqueeze(-1)).squeeze(-1))
        y = torch.stack(ys, dim=-1) + h * self.D[None, :, None]
        y = y * F.silu(gate)
        return F.linear(y.transpose(1, 2), self.out_proj.weight)


class HybridAttentionLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = RMSNorm(D)
        self.self_attn = LlamaAttention()
        self.pre_ff_layernorm = RMSNorm(D)
        self.feed_forward = SwiGLU()

    def forward(self, x, cos, sin):
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.feed_forward(self.pre_ff_layernorm(x))


class HybridMambaLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = RMSNorm(D)
        self.mamba = MambaMixer()
        self.pre_ff_layernorm = RMSNorm(D)
        self.feed_forward = SwiGLU()

    def forward(self, x, cos, sin):
        x = x + self.mamba(self.input_layernorm(x))
        return x + self.feed_forward(self.pre_ff_layernorm(x))


class Hybrid(Llama):
    """Jamba-style hybrid decoder: attention layers (0, 2) alternate with Mamba layers (1, 3),
    each followed by a SwiGLU feed-forward; embedding, rotary tables, norm and head as `Llama`."""

    def __init__(self, n_layers=4):
        super().__init__(n_layers=0)
        self.layers = nn.ModuleList(
            HybridAttentionLayer() if i % 2 == 0 else HybridMambaLayer() for i in range(n_layers)
        )


ARCHS = {"llama": Llama, "moe": MoEModel, "tied": Tied, "hybrid": Hybrid}

# --- truth ------------------------------------------------------------------------------------


def dotted(qualified):
    """`L['self'].layers[0].attn`, `L['self']._modules['layers']._modules['0']`,
    `getattr(L['self'].layers, '0')`, `L['args'][0].layers[0].attn` → `layers.0.attn`; the root
    → ``."""
    s = qualified
    while True:
        m = re.search(r"getattr\(([^,()]+), '([^']+)'\)", s)
        if not m:
            break
        s = s[: m.start()] + m.group(1) + "." + m.group(2) + s[m.end() :]
    s = re.sub(r"\._modules\['([^']+)'\]", r".\1", s)
    s = re.sub(r"\[(\d+)\]", r".\1", s)
    s = re.sub(r"\['([^']+)'\]", r".\1", s)
    # The root is the compiled module, reached as `self` or, through a decorator's `*args`
    # (transformers' `@can_return_tuple`), as `args[0]`.
    s = re.sub(r"^L\.(self|args\.\d+)(\.|$)|^self(\.|$)", "", s)
    return s.strip(".")


def module_of(node, backward):
    stack = None
    if backward:
        stack = node.meta.get("fwd_nn_module_stack")
    if not stack:
        stack = node.meta.get("nn_module_stack")
    if not stack:
        return None
    # A module outside the model (transformers 5.25 wraps `apply_rotary_pos_emb` in a hub-kernel
    # module held by a global: `G['__import_…'].apply_rotary_pos_emb`) is no part of the model's
    # tree and no name in the dumps: its nodes are the enclosing module's of the model.
    inside = [path for path, _cls in stack.values() if not path.startswith("G[")]
    if not inside:
        return None
    return dotted(inside[-1])


def truth(gm, backward):
    out = {}
    for n in gm.graph.nodes:
        if n.op in ("placeholder", "output"):
            continue
        m = module_of(n, backward)
        if m is not None:
            out[n.name] = m
    return out


# --- the passes -------------------------------------------------------------------------------


def shape_of(n):
    v = n.meta.get("val") if isinstance(n, torch.fx.Node) else None
    return tuple(v.shape) if isinstance(v, torch.Tensor) else None


def new_node_like(gm, old, target, args):
    with gm.graph.inserting_before(old):
        new = gm.graph.call_function(target, tuple(args))
    for key in ("val", "tensor_meta", "nn_module_stack", "fwd_nn_module_stack", "seq_nr"):
        if key in old.meta:
            new.meta[key] = old.meta[key]
    old.replace_all_uses_with(new)
    gm.graph.erase_node(old)
    return new


def apply_pattern_passes(gm):
    for n in list(gm.graph.nodes):
        if n.op != "call_function":
            continue
        if n.target == aten.add.Tensor and len(n.args) == 2:
            mm, bias = n.args
            if (
                isinstance(mm, torch.fx.Node)
                and mm.target == aten.mm.default
                and len(mm.users) == 1
                and isinstance(bias, torch.fx.Node)
                and shape_of(bias) is not None
                and len(shape_of(bias)) == 1
            ):
                new_node_like(gm, n, aten.addmm.default, [bias, mm.args[0], mm.args[1]])
                gm.graph.erase_node(mm)
        elif n.target == aten.silu.default:
            # silu(x) = x * sigmoid(x): two new nodes, named by FX (`sigmoid`, `mul_N`).
            x = n.args[0]
            with gm.graph.inserting_before(n):
                sig = gm.graph.call_function(aten.sigmoid.default, (x,))
            for key in ("val", "nn_module_stack", "fwd_nn_module_stack"):
                if key in n.meta:
                    sig.meta[key] = n.meta[key]
            new_node_like(gm, n, aten.mul.Tensor, [x, sig])
        elif n.target == aten.view.default:
            src = n.args[0]
            if isinstance(src, torch.fx.Node) and src.target == aten.view.default and len(src.users) == 1:
                new_node_like(gm, n, aten.view.default, [src.args[0], n.args[1]])
                gm.graph.erase_node(src)


def view_to_reshape(gm):
    """In place, as npugraph_ex's pass does: the node keeps its name, its target changes."""
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target == aten.view.default:
            n.target = aten.reshape.default


def eliminate_dead_code(gm):
    gm.graph.eliminate_dead_code()


PASSES = [
    ("apply_pattern_passes", apply_pattern_passes),
    ("view_to_reshape", view_to_reshape),
    ("eliminate_dead_code", eliminate_dead_code),
]

# --- the backend ------------------------------------------------------------------------------


# (real path, neutral path) pairs applied to every file written; module_truth_hf.py adds the
# site-packages its models' code comes from.
REWRITES = [(HERE, NEUTRAL)]


def neutral(text):
    for real, fake in REWRITES:
        text = text.replace(real, fake)
    return text


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


class Writer:
    """`on_dump(relative path, gm)` is called after every graph file is written, and the compiled
    forward runs `forward_runner(final gm)` instead of `gm.forward` when given (launch_ranks.py
    fingerprints each graph and dumps tensors with them)."""

    def __init__(self, model_dir, on_dump=None, forward_runner=None):
        self.model_dir = model_dir
        self.on_dump = on_dump or (lambda rel, gm: None)
        self.forward_runner = forward_runner
        os.makedirs(model_dir, exist_ok=True)

    def dynamo(self, gm):
        write(os.path.join(self.model_dir, "dynamo_out_graph.txt"), neutral(gm.print_readable(print_output=False)))
        write(os.path.join(self.model_dir, "dynamo_out_graph.modules.json"), json.dumps(truth(gm, False), indent=0) + "\n")
        self.on_dump("dynamo_out_graph.txt", gm)

    def phase(self, gm, phase):
        d = os.path.join(self.model_dir, phase)
        os.makedirs(d, exist_ok=True)
        backward = phase == "backward"

        def dump(k, pass_name):
            stem = f"{k:03d}_aot_{phase}_graph" + (f"_after_{pass_name}" if pass_name else "")
            gm.recompile()
            write(os.path.join(d, stem + ".txt"), neutral(gm.print_readable(print_output=False)))
            write(os.path.join(d, stem + ".modules.json"), json.dumps(truth(gm, backward), indent=0) + "\n")
            self.on_dump(f"{phase}/{stem}.txt", gm)

        dump(0, None)
        for k, (name, fn) in enumerate(PASSES, start=1):
            fn(gm)
            gm.graph.lint()
            dump(k, name)
        gm.recompile()
        if phase == "forward" and self.forward_runner:
            return make_boxed_func(self.forward_runner(gm))
        return make_boxed_func(gm.forward)


def backend_for(model_dir, on_dump=None, forward_runner=None, decompositions=None):
    """`decompositions`: the table AOT Autograd lowers with (none: torch's own ops stay whole,
    as TorchAir's default table leaves them; Inductor's splits `native_layer_norm` into
    `var_mean`, `rsqrt`, `sub`, `mul`, …)."""
    w = Writer(model_dir, on_dump, forward_runner)

    def backend(gm, example_inputs):
        w.dynamo(gm)
        return aot_autograd(
            fw_compiler=lambda g, _: w.phase(g, "forward"),
            bw_compiler=lambda g, _: w.phase(g, "backward"),
            partition_fn=min_cut_rematerialization_partition,
            decompositions=decompositions,
        )(gm, example_inputs)

    return backend


class GraphsRun:
    """npugraph_ex's placement of the graphs of one run with graph breaks (`fullgraph=False`):
    every Dynamo graph handed to the backend gets its own `model__N` (N counts the backend
    calls), and its forward is compiled at once into it; AOT Autograd compiles a backward
    lazily, during `.backward()` (when no symbolic size is saved for it), and npugraph_ex writes
    it into the *latest* `model__N` at that moment: a backward can land beside another graph's
    forward, and a later backward compile overwrites an earlier one's files of the same names.
    The truth beside a backward is that backward's own (`fwd_nn_module_stack` of its nodes),
    wherever it lands.

    `graphs` says, for each `model__N`, the Dynamo compile id, the frame it was traced from and
    which module of `model` that frame's `self` is (from the parameters the graph takes, matched
    by identity: `transformer.h.1` when the frame is `GPT2Block.forward` of `h[1]`, `""` for
    the model itself, None when the graph takes no parameter); `backwards` says, in compile
    order, whose backward each one is and which folder it was written into."""

    def __init__(self, backend_dir, model, decompositions=None):
        self.backend_dir = backend_dir
        self.decompositions = decompositions
        self.names = {}
        for name, t in list(model.named_parameters(remove_duplicate=False)) + list(
            model.named_buffers(remove_duplicate=False)
        ):
            self.names.setdefault(id(t), []).append(name)
        self.graphs, self.backwards = [], []

    def model_dir(self, n):
        return os.path.join(self.backend_dir, f"model__{n}")

    def self_of(self, gm, example_inputs):
        """The module of `model` the traced frame's `self` is, from its parameter inputs."""
        selves = set()
        inputs = [n for n in gm.graph.nodes if n.op == "placeholder"]
        for node, value in zip(inputs, example_inputs):
            target = str(node.target)
            if not (target.startswith("L_self_") and target.endswith("_")) or id(value) not in self.names:
                continue
            rel = "_" + target[len("L_self_") : -1]
            for part in ("_modules_", "_parameters_", "_buffers_"):
                rel = rel.replace(part, ".")
            rel = rel.strip(".")
            for name in self.names[id(value)]:
                if name == rel or name.endswith("." + rel):
                    selves.add(name[: len(name) - len(rel)].rstrip("."))
        return selves.pop() if len(selves) == 1 else (sorted(selves) if selves else None)

    def backend(self, gm, example_inputs):
        n = len(self.graphs)
        own = Writer(self.model_dir(n))
        own.dynamo(gm)
        trace = next((x.meta["stack_trace"] for x in gm.graph.nodes if x.meta.get("stack_trace")), "")
        frame = re.search(r'File "([^"]+)", line (\d+), in (\S+)', trace)
        self.graphs.append(
            {
                "model": f"model__{n}",
                "compile_id": str(gm.meta.get("dynamo_compile_id")),
                "frame": frame and f"{neutral(frame.group(1))}:{frame.group(2)} in {frame.group(3)}",
                "self": self.self_of(gm, example_inputs),
                "nodes": len(gm.graph.nodes),
            }
        )

        def backward(g, _):
            into = len(self.graphs) - 1
            self.backwards.append(
                {"backward": len(self.backwards), "of": f"model__{n}", "written_into": f"model__{into}"}
            )
            return Writer(self.model_dir(into)).phase(g, "backward")

        return aot_autograd(
            fw_compiler=lambda g, _: own.phase(g, "forward"),
            bw_compiler=backward,
            partition_fn=min_cut_rematerialization_partition,
            decompositions=self.decompositions,
        )(gm, example_inputs)

    def where(self):
        """`graphs`, `backwards`, and `on_disk`: whose backward each `model__N/backward/` holds
        once the step is done (the last one written there)."""
        on_disk = {}
        for b in self.backwards:
            on_disk[b["written_into"]] = b["of"]
        return {"graphs": self.graphs, "backwards": self.backwards, "on_disk": on_disk}


class TraceLog:
    """torch's structured trace log (what `TORCH_TRACE=DIR` writes) into `folder`, for the
    compiles made inside the `with`: a handler of its own on `torch._logging`'s trace logger.
    On exit the paths in it are rewritten as every file here is (REWRITES, then the working
    folder, which Inductor's config names, to /home/dev/models), and each record's
    `has_payload` md5 is made again for its rewritten payload."""

    def __init__(self, folder):
        self.folder = folder

    def __enter__(self):
        from torch._logging import _internal

        from torch._logging import structured

        self.internal = _internal
        # torch names each source file once per process, in a `str` record, when first seen: a
        # case before this one (no log) saw them, so start the table again or this log names
        # files by numbers it never defines.
        structured.INTERN_TABLE.clear()
        structured.DUMPED_FILES.clear()
        self.saved = list(_internal.trace_log.handlers)
        for h in self.saved:
            _internal.trace_log.removeHandler(h)
        self.handler = _internal.LazyTraceHandler(self.folder)
        self.handler.setFormatter(_internal.TorchLogsFormatter(trace=True))
        _internal.trace_log.addHandler(self.handler)
        return self

    def __exit__(self, *exc):
        self.handler.close()
        self.internal.trace_log.removeHandler(self.handler)
        for h in self.saved:
            self.internal.trace_log.addHandler(h)
        for name in os.listdir(self.folder) if os.path.isdir(self.folder) else []:
            if name.startswith("dedicated_log_torch_trace_"):
                rewrite_trace(os.path.join(self.folder, name))
        return False


def rewrite_trace(path):
    import hashlib

    def fix(line):
        return neutral(line).replace(os.getcwd(), "/home/dev/models")

    with open(path) as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        head = fix(lines[i])
        j = i + 1
        while j < len(lines) and lines[j].startswith("\t"):
            j += 1
        payload = [fix(line) for line in lines[i + 1 : j]]
        if payload:
            md5 = hashlib.md5("\n".join(p[1:] for p in payload).encode()).hexdigest()
            head = re.sub(r'"has_payload": "[0-9a-f]+"', f'"has_payload": "{md5}"', head)
        out.append(head)
        out.extend(payload)
        i = j
    write(path, "\n".join(out))


def model_dir_for(out, case):
    """`<out>/<case>/torch_compile_debug/run_<stamp>-pid_<pid>/npugraph_ex/model__0`."""
    stamp = time.strftime("%Y_%m_%d_%H_%M_%S", time.gmtime()) + "_000000"
    run = os.path.join(out, case, "torch_compile_debug", f"run_{stamp}-pid_{os.getpid()}")
    return os.path.join(run, "npugraph_ex", "model__0")


def train_step(out, case, model, loss_of, decompositions=None, fullgraph=True, trace=False):
    """One training step of `model` compiled whole through the writer: `loss_of(compiled)` runs
    the forward and returns the loss, whose backward makes the backward graph.

    With `fullgraph=False` the model may break into several graphs, each written into a
    `model__N` of its own with its backward where npugraph_ex puts it (GraphsRun), which is
    returned. With `trace`, torch's trace log goes to `torch_compile_debug/tlparse/`."""
    import contextlib

    torch._dynamo.reset()
    model_dir = model_dir_for(out, case)
    tlparse = os.path.join(out, case, "torch_compile_debug", "tlparse")
    traced = TraceLog(tlparse) if trace else contextlib.nullcontext()
    if fullgraph:
        backend = backend_for(model_dir, decompositions=decompositions)
        with traced:
            compiled = torch.compile(model, backend=backend, fullgraph=True)
            loss = loss_of(compiled)
            loss.backward()
        print(f"{case}: {model_dir} loss {float(loss):.4f}")
        return None
    run = GraphsRun(os.path.dirname(model_dir), model, decompositions)
    with traced:
        compiled = torch.compile(model, backend=run.backend, fullgraph=False)
        loss = loss_of(compiled)
        loss.backward()
    print(f"{case}: {len(run.graphs)} graphs in {os.path.dirname(model_dir)} loss {float(loss):.4f}")
    return run


def generate(out, arch):
    torch.manual_seed(0)
    model = ARCHS[arch]()
    ids = torch.randint(0, VOCAB, (B, T))
    train_step(out, arch, model, lambda compiled: compiled(ids).float().pow(2).mean())


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    archs = sys.argv[2:] or list(ARCHS)
    for arch in archs:
        generate(out, arch)


if __name__ == "__main__":
    main()
