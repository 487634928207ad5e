"""An npugraph_ex stage dump in msprobe's tensor-mode layout (docs/formats.md §4.1, §4.2), so
`msprobe compare` can be timed on the same tensors as `fxray compare RUN` (`fxray bench stages`).

usage: python stage_dumps_as_msprobe.py DUMP OUT      (DUMP: a folder holding
       worldsize1_global_rank0/<node>_device_0_0.pt; OUT gets step0/proc1/dump.json and
       dump_tensor_data/, the tensor files hard-linked, not copied)

Each node becomes the call `Functional.<node>.0.forward` with its tensor as `output.0`, its
statistics computed by torch as msprobe's dump writes them. msprobe pairs calls by name only: the
nodes both stages name alike pair, a node a pass renamed or built does not.
"""
import json
import os
import re
import sys

import torch


def main():
    dump, out = sys.argv[1], sys.argv[2]
    rank = os.path.join(dump, "worldsize1_global_rank0")
    step = os.path.join(out, "step0", "proc1")
    data = os.path.join(step, "dump_tensor_data")
    os.makedirs(data, exist_ok=True)
    entries = {}
    for f in sorted(os.listdir(rank)):
        m = re.fullmatch(r"(.+)_device_0_0\.pt", f)
        if not m:
            continue
        t = torch.load(os.path.join(rank, f), weights_only=True)
        key = f"Functional.{m.group(1)}.0.forward"
        name = f"{key}.output.0.pt"
        target = os.path.join(data, name)
        if not os.path.exists(target):
            os.link(os.path.join(rank, f), target)
        x = t.detach().float()
        finite = x.numel() > 0 and bool(torch.isfinite(x).all())
        entries[key] = {
            "input_args": [],
            "input_kwargs": {},
            "output": [{
                "type": "torch.Tensor",
                "dtype": str(t.dtype),
                "shape": list(t.shape),
                "Max": float(x.max()) if finite else None,
                "Min": float(x.min()) if finite else None,
                "Mean": float(x.mean()) if finite else None,
                "Norm": float(x.norm()) if finite else None,
                "requires_grad": False,
                "data_name": name,
            }],
        }
    with open(os.path.join(step, "dump.json"), "w") as fh:
        json.dump({"task": "tensor", "level": "L1", "framework": "pytorch",
                   "dump_data_dir": os.path.abspath(data), "data": entries}, fh)
    print(len(entries), "calls")


if __name__ == "__main__":
    main()
