"""npugraph_ex's own tensor dump (docs/formats.md §3.2), made with real torch: a small model's
aten graph (make_fx, the names an AOT graph has: `arg0_1`, `mm`, `add_1`) run eagerly by an FX
interpreter that `torch.save`s every tensor node's value after it runs, with npugraph_ex's
naming: `worldsize1_global_rank0/<node>_device_0_<k>.pt`, one file per node and replay `k`.

    python npugraph_tensor_dump.py OUT

Two replays: the second one's input has a zero where the model divides by it, so an Inf and
then a NaN appear. Beside the dump: `graph.txt` (the graph, print_readable) and `truth.json`,
torch's own answer: each file's statistics, and per replay the first node in graph order whose
value holds a NaN and the first holding an Inf.
"""

import json
import os
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx


def model(x, w):
    h = torch.mm(x, w)
    h = h + 1.0
    s = h / x[:, :1]
    t = s - s
    return torch.relu(t) + h


def main():
    out = sys.argv[1]
    rank_dir = os.path.join(out, "worldsize1_global_rank0")
    os.makedirs(rank_dir, exist_ok=True)
    torch.manual_seed(0)
    w = torch.randn(8, 8)
    x0 = torch.randn(4, 8)
    gm = make_fx(model)(x0, w)
    with open(os.path.join(out, "graph.txt"), "w") as f:
        f.write(gm.print_readable(print_output=False))

    truth = {"files": {}, "first_nan": {}, "first_inf": {}}

    class Dumper(torch.fx.Interpreter):
        def __init__(self, gm, k):
            super().__init__(gm)
            self.k = k

        def run_node(self, n):
            v = super().run_node(n)
            if isinstance(v, torch.Tensor) and n.op != "output":
                name = f"{n.name}_device_0_{self.k}.pt"
                torch.save(v, os.path.join(rank_dir, name))
                d = v.double()
                fin = d[torch.isfinite(d)]
                truth["files"][name] = {
                    "node": n.name,
                    "step": self.k,
                    "nan": int(torch.isnan(d).sum()),
                    "pos_inf": int(torch.isposinf(d).sum()),
                    "neg_inf": int(torch.isneginf(d).sum()),
                    "min": float(fin.min()) if fin.numel() else None,
                    "max": float(fin.max()) if fin.numel() else None,
                }
                step = str(self.k)
                if torch.isnan(d).any():
                    truth["first_nan"].setdefault(step, n.name)
                if torch.isinf(d).any():
                    truth["first_inf"].setdefault(step, n.name)
            return v

    x1 = x0.clone()
    x1[2, 0] = 0.0
    for k, x in enumerate((x0, x1)):
        Dumper(gm, k).run(x, w)
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
