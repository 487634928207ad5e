"""A target re-traced with two identity nodes inserted early, so a third of its node names
shift against the golden's, and one fault downstream: fxray must pair by dataflow, not by the
names, and name the faulty node (issue 34, "pairing that names cannot fool").

    python accuracy_renamed.py OUT

Both sides are npy data dumps (docs/formats.md §3.1) of a small attention block's aten graph
(make_fx), written by launch_ranks.DumpInterpreter:
- golden: `h = x @ wq`, then six scales `h * c` (`mul` … `mul_5`, the last one √d), then
  `p = softmax(h); y = p @ wv; out = y + x`;
- target: the same with `h = h * 1.0; h = h + 0.0` inserted after the fourth scale: its own new
  `mul_4` and `add`, so the golden's `mul_4` (× 1.5) is the target's `mul_5` and the golden's
  `mul_5` (× √d) its `mul_6`. Four of six same-named `mul`s still agree, so names alone pair
  the target's `mul_4` (× 1.0) with the golden's (× 1.5). The target's softmax output gets
  noise (0.05 · randn): the fault.
`OUT/truth.json` says which target node is faulty and which target nodes only the target has,
from the traced graphs themselves.
"""

import json
import math
import os
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import launch_ranks  # noqa: E402

D = 16


SCALES = (1.1, 1.2, 1.3, 1.4, 1.5, math.sqrt(D))


def block(x, wq, wv, identity_after=None):
    h = torch.mm(x, wq)
    for i, c in enumerate(SCALES):
        h = h * c
        if i == identity_after:
            h = h * 1.0
            h = h + 0.0
    p = torch.softmax(h, dim=-1)
    y = torch.mm(p, wv)
    return y + x


def golden(x, wq, wv):
    return block(x, wq, wv)


def target(x, wq, wv):
    return block(x, wq, wv, identity_after=3)


class Faulty(launch_ranks.DumpInterpreter):
    """Dumps every call; the softmax node's output gets noise."""

    def __init__(self, gm, folder):
        super().__init__(gm, folder, [])
        self.faulty = None

    def call_function(self, target, args, kwargs):
        out = super().call_function(target, args, kwargs)
        if target is torch.ops.aten._softmax.default:
            g = torch.Generator().manual_seed(7)
            out = out + 0.05 * torch.randn(out.shape, generator=g, dtype=out.dtype)
        return out

    def run_node(self, n):
        if n.target is torch.ops.aten._softmax.default:
            self.faulty = n.name
        return super().run_node(n)


def main():
    out = sys.argv[1]
    torch.manual_seed(0)
    x = torch.randn(8, D)
    wq = torch.randn(D, D) / math.sqrt(D)
    wv = torch.randn(D, D)
    step = os.path.join("worldsize1_global_rank0", "graph_1", "0")
    g = make_fx(golden)(x, wq, wv)
    t = make_fx(target)(x, wq, wv)
    launch_ranks.DumpInterpreter(g, os.path.join(out, "golden", step), []).run(x, wq, wv)
    f = Faulty(t, os.path.join(out, "target", step))
    f.run(x, wq, wv)
    g_names = {n.name: str(n.target) for n in g.graph.nodes if n.op == "call_function"}
    t_calls = [n for n in t.graph.nodes if n.op == "call_function"]
    # The identity pair: the `* 1.0` and the `+ 0.0` the target traced.
    extra = [
        n.name
        for n in t_calls
        if n.args[1:] in ((1.0,), (0.0,)) and n.target in (torch.ops.aten.mul.Tensor, torch.ops.aten.add.Tensor)
    ]
    truth = {
        "faulty": f.faulty,
        "only_in_target": extra,
        "golden_calls": sorted(g_names),
        "target_calls": [n.name for n in t_calls],
    }
    with open(os.path.join(out, "truth.json"), "w") as fh:
        json.dump(truth, fh, indent=1)
    for side, gm in (("golden", g), ("target", t)):
        with open(os.path.join(out, f"{side}_graph.txt"), "w") as fh:
            fh.write(gm.print_readable(print_output=False))


if __name__ == "__main__":
    main()
