"""Original against optimized stage dumps (issue: the pass that broke the numbers), made with
real torch: a small block compiled through npugraph_ex_sim (the npugraph_ex layout, one FX file
per pass), then its forward graph run three times with every tensor node `torch.save`d under
npugraph_ex's naming (`worldsize1_global_rank0/<node>_device_0_0.pt`, docs/formats.md §3.2;
npugraph_ex_sim.stage_dump):

- dump_original:  the AOT graph before any pass (npugraph_ex's data_dump_stage="original");
- dump_optimized: the graph after every pass (data_dump_stage="optimized");
- dump_reference: the original graph in float64 (torch's own `cast_to_fp64`, as its accuracy
  minifier makes its reference).

    python stage_faults.py OUT [CASE…]

Cases (one folder each), each a real pattern a pass could get wrong, injected into one pass:
- right:      the stock passes only (mm+add -> addmm, exact GELU decomposed, x*2 -> x+x, CSE):
              every change is floating-point noise;
- gelu_tanh:  apply_pattern_passes replaces the erf GELU by the tanh approximation;
- drop_cast:  post_grad_custom_pre_pass drops the cast before a mean: the reduction runs in bf16;
- fuse_close: post_grad_custom_post_pass fuses add(var, eps) + rsqrt into one op whose kernel
              computes in half precision.

`truth.json` beside each: the guilty pass (its file's number and name) and node (its name in
the optimized graph and the original node it replaced); every optimized node paired with the
original node it stands for (kept by name, or the end of the chain of FX's own
`replace_all_uses_with` calls the passes made) with torch's verdict on it
(`torch._dynamo.utils.same(original, optimized, fp64_ref)`, its accuracy minifier's rule), and
the same verdict on the graph's output.
"""

import json
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = ("right", "gelu_tanh", "drop_cast", "fuse_close")


def child(case, root):
    sys.path.insert(0, str(HERE / "scale"))
    import torch
    import torch.fx as fx
    import torch.nn.functional as F
    from torch._dynamo.utils import same

    import npugraph_ex_sim as nge
    from npugraph_ex_sim import passes, stage_dump

    aten = torch.ops.aten

    @torch.library.custom_op("fxray_npu::add_rsqrt", mutates_args=())
    def add_rsqrt(v: torch.Tensor, eps: float) -> torch.Tensor:
        # the fused kernel's flaw: it computes in half precision
        return torch.rsqrt((v + eps).half()).to(v.dtype)

    @add_rsqrt.register_fake
    def _(v, eps):
        return torch.empty_like(v)

    class Block(torch.nn.Module):
        def __init__(self, d=16):
            super().__init__()
            self.fc1 = torch.nn.Linear(d, 4 * d)
            self.fc2 = torch.nn.Linear(4 * d, d)
            self.w = torch.nn.Parameter(torch.randn(d))

        def forward(self, x):
            # x: bf16 hidden states from the stage before; the norm upcasts them
            hf = x.float()
            mu = hf.mean(-1, keepdim=True)
            xc = hf - mu
            var = (xc * xc).mean(-1, keepdim=True)
            h = xc * torch.rsqrt(var + 1e-6) * self.w
            return self.fc2(F.gelu(self.fc1(h))) * 2.0

    guilty = {}  # what the injected fault did: pass name, new/changed node, replaced node

    def is_cast(n, dtype):
        return (isinstance(n, fx.Node) and n.op == "call_function"
                and ((n.target == aten._to_copy.default and n.kwargs.get("dtype") == dtype)
                     or (n.target == torch.ops.prims.convert_element_type.default
                         and n.args[1] == dtype)))

    def gelu_tanh(gm):
        for n in list(gm.graph.find_nodes(op="call_function", target=aten.gelu.default)):
            new = passes._new_node(gm, aten.gelu.default, (n.args[0],), like=n,
                                   kwargs={"approximate": "tanh"})
            n.replace_all_uses_with(new)
            gm.graph.erase_node(n)
            guilty.update(node=new.name, replaced=n.name)

    def drop_cast(gm):
        for n in list(gm.graph.find_nodes(op="call_function", target=aten.mean.dim)):
            src = n.args[0]
            low = passes._val(src.args[0]) if isinstance(src, fx.Node) else None
            if is_cast(src, torch.float32) and getattr(low, "dtype", None) == torch.bfloat16:
                before = n.name
                n.replace_input_with(src, src.args[0])
                fm = passes._fake_mode(gm)
                with fm:
                    a, kw = fx.node.map_arg((n.args, n.kwargs), lambda x: x.meta["val"])
                    n.meta["val"] = n.target(*a, **kw)
                guilty.update(node=n.name, replaced=before)
                return

    def fuse_close(gm):
        for r in list(gm.graph.find_nodes(op="call_function", target=aten.rsqrt.default)):
            add = r.args[0]
            if add.target == aten.add.Tensor and not isinstance(add.args[1], fx.Node):
                new = passes._new_node(gm, torch.ops.fxray_npu.add_rsqrt.default,
                                       (add.args[0], float(add.args[1])), like=r)
                r.replace_all_uses_with(new)
                guilty.update(node=new.name, replaced=r.name)

    inject = {
        "gelu_tanh": ("apply_pattern_passes", gelu_tanh),
        "drop_cast": ("post_grad_custom_pre_pass", drop_cast),
        "fuse_close": ("post_grad_custom_post_pass", fuse_close),
    }
    pipeline = list(passes.SHORT_PIPELINE)
    if case in inject:
        name, fault = inject[case]

        def wrap(fn, fault):
            def run(gm, example_inputs=None, config=None):
                # the fault first: a later rewrite in the same pass (GELU decomposition) must
                # not consume the node the fault targets
                fault(gm)
                return fn(gm, example_inputs, config)
            return run

        pipeline = [(n, wrap(fn, fault) if n == name else fn) for n, fn in pipeline]
        guilty["pass"] = name
        guilty["pass_index"] = 1 + [n for n, _ in pipeline].index(name)

    # every node a pass replaces, as FX itself records it: old name -> (new name, pass)
    replaced, current = {}, [None]
    rauw = fx.Node.replace_all_uses_with

    def record(self, new, *a, **k):
        if isinstance(new, fx.Node) and current[0]:
            replaced[self.name] = new.name
        return rauw(self, new, *a, **k)

    fx.Node.replace_all_uses_with = record

    def named(name, fn):
        def run(gm, example_inputs=None, config=None):
            current[0] = name
            return fn(gm, example_inputs, config)
        return run

    pipeline = [(n, named(n, fn)) for n, fn in pipeline]

    torch.manual_seed(0)
    m = Block().eval()
    cfg = nge.CompilerConfig(pipeline=pipeline, trace_nodes=False)
    cm = torch.compile(m, backend=nge.get_npu_backend(cfg), fullgraph=True)
    x = torch.randn(2, 8, 16).to(torch.bfloat16)
    with stage_dump.Capture() as graphs, torch.no_grad():
        cm(x)
    args = graphs.args

    orig_gm = graphs.original
    opt_gm = graphs.optimized
    orig, orig_out = stage_dump.dump(orig_gm, args, os.path.join(root, "dump_original"))
    opt, opt_out = stage_dump.dump(opt_gm, args, os.path.join(root, "dump_optimized"))
    ref_gm, ref_args = stage_dump.reference(orig_gm, args)
    ref, ref_out = stage_dump.dump(ref_gm, ref_args, os.path.join(root, "dump_reference"))

    def verdict(o, n):
        # both in float64: torch's exact_dtype=False would round the original to a bf16
        # result's dtype first and so hide a pass that lowered a node's precision
        quiet = lambda *a, **k: None  # noqa: E731
        return bool(same(orig[o].double(), opt[n].double(), ref[o], equal_nan=True,
                         log_error=quiet))

    # each optimized node and the original node whose value it stands for: the same name (a
    # pass that edits a node in place keeps its name), or the end of its replacement chain
    final = {n.name for n in opt_gm.graph.nodes}
    pairs = {}
    for o in orig:
        n = o
        while n not in final and n in replaced:
            n = replaced[n]
        if n in opt and (n == o or n not in orig):
            pairs[n] = o
    truth = {"case": case, "torch": torch.__version__,
             "output_same": bool(same(orig_out, opt_out, ref_out, exact_dtype=False,
                                      log_error=lambda *a, **k: None)),
             "pairs": {n: {"original": o, "same": verdict(o, n)} for n, o in pairs.items()}}
    if case in inject:
        node = next(n for n in opt_gm.graph.nodes if n.name == guilty["node"])
        inputs = [a for a in node.all_input_nodes]
        truth.update(
            pass_name=guilty["pass"],
            pass_index=guilty["pass_index"],
            node=guilty["node"],
            replaced=guilty["replaced"],
            node_same=verdict(guilty["replaced"], guilty["node"]),
            # every input of the guilty node is a node of the original graph, unchanged
            inputs_same={a.name: verdict(a.name, a.name) for a in inputs},
        )
    with open(os.path.join(root, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)
    print(json.dumps(truth))


def main():
    if sys.argv[1] == "--child":
        return child(sys.argv[2], sys.argv[3])
    sys.path.insert(0, str(HERE / "scale"))
    import debug_run
    out = Path(sys.argv[1]).resolve()
    for case in sys.argv[2:] or CASES:
        root = out / case
        root.mkdir(parents=True, exist_ok=True)
        rc = debug_run.child(__file__, [case, root], root)
        if rc:
            sys.exit(rc)
        # torch's trace log is not part of these cases (tests/fixtures counts its trace logs)
        shutil.rmtree(root / "torch_compile_debug" / "tlparse", ignore_errors=True)


if __name__ == "__main__":
    main()
