"""npugraph_ex's tensor dump by stage (docs/formats.md §3.2, §4.5): `data_dump_stage="original"`
runs the AOT graph before any pass eagerly, `"optimized"` the graph after every pass; each
tensor node's value is `torch.save`d as `worldsize<W>_global_rank<R>/<node>_device_0_<k>.pt`.

`Capture` keeps, while compiling, the forward graph before the first pass and after the last,
and the real tensors the compiled graph is first called with; `dump` runs a graph with an FX
interpreter that saves every tensor node; `reference` is the original graph in float64 (torch's
own `cast_to_fp64`, as its accuracy minifier makes its reference).
"""
import copy
import os

import torch

from . import npu_fx_compiler
from .graph_transform_observer import GraphTransformObserver


class Capture:
    def __init__(self):
        self.original = None
        self.optimized = None
        self.args = None

    def __enter__(self):
        self._dump_gm = GraphTransformObserver.dump_gm
        self._boxed = npu_fx_compiler.make_boxed_func
        cap, dump_gm, boxed = self, self._dump_gm, self._boxed

        def keep(observer, gm, file_name):
            if file_name == "graph":
                cap.original = copy.deepcopy(gm)
            cap.optimized = gm
            return dump_gm(observer, gm, file_name)

        def capture(f):
            def run(*args):
                if cap.args is None:
                    a = args[0] if len(args) == 1 and isinstance(args[0], list) else args
                    cap.args = [x.clone() if isinstance(x, torch.Tensor) else x for x in a]
                return f(*args)
            return boxed(run)

        GraphTransformObserver.dump_gm = keep
        npu_fx_compiler.make_boxed_func = capture
        return self

    def __exit__(self, *exc):
        GraphTransformObserver.dump_gm = self._dump_gm
        npu_fx_compiler.make_boxed_func = self._boxed
        return False


def dump(gm, inputs, folder, keep_values=True):
    """Runs `gm` on `inputs`, saving every tensor node under `folder`; returns the values (by
    node name, when `keep_values`) and the graph's output."""
    rank_dir = os.path.join(folder, "worldsize1_global_rank0")
    os.makedirs(rank_dir, exist_ok=True)
    values = {}

    class Dumper(torch.fx.Interpreter):
        def run_node(self, n):
            v = super().run_node(n)
            if isinstance(v, torch.Tensor) and n.op != "output":
                torch.save(v, os.path.join(rank_dir, f"{n.name}_device_0_0.pt"))
                if keep_values:
                    values[n.name] = v
            return v

    with torch.no_grad():
        out = Dumper(gm).run(*inputs)
    return values, out


def reference(gm, inputs):
    """The graph and inputs in float64."""
    from torch._dynamo.debug_utils import cast_to_fp64
    return cast_to_fp64(copy.deepcopy(gm), list(inputs))
