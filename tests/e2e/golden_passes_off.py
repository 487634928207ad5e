"""A run against its golden run where the golden ran with some passes off (issue 55 item 1),
made with real torch through npugraph_ex_sim (the npugraph_ex layout): one model compiled
twice, each run in its own folder with its optimized-stage tensor dump
(`dump_optimized/worldsize1_global_rank0/<node>_device_0_0.pt`, docs/formats.md §3.2):

- target/: every pass of the short pipeline, and a real fault injected into one of them
  (remove_cat_ops rewrites the norm's rsqrt into a sqrt, in place);
- golden/: the same pipeline with apply_pattern_passes and post_grad_custom_post_pass off (as
  torch_npu's SHUT_DOWN_FX_PASS_LIST would), no fault: its graph keeps mm + add and the exact
  GELU, so most node names differ from the target's after the first fused op.

    python golden_passes_off.py OUT

`truth.json`: the fault's node in each run's last graph (`target_node`, `golden_node`: the
node whose output departs while its inputs agree, as each side names it), and torch's own
verdict on it (`torch._dynamo.utils.same`) and on the graphs' outputs.
"""
import json
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OFF = ("apply_pattern_passes", "post_grad_custom_post_pass")


def child(role, root):
    sys.path.insert(0, str(HERE / "scale"))
    import torch
    import torch.nn.functional as F
    from torch._dynamo.utils import same

    import npugraph_ex_sim as nge
    from npugraph_ex_sim import passes, stage_dump

    aten = torch.ops.aten

    class Block(torch.nn.Module):
        def __init__(self, d=16):
            super().__init__()
            self.fc1 = torch.nn.Linear(d, 4 * d)
            self.fc2 = torch.nn.Linear(4 * d, d)
            self.w = torch.nn.Parameter(torch.randn(d))

        def forward(self, x):
            mu = x.mean(-1, keepdim=True)
            xc = x - mu
            var = (xc * xc).mean(-1, keepdim=True)
            h = xc * torch.rsqrt(var + 1e-6) * self.w
            return self.fc2(F.gelu(self.fc1(h))) + x

    faulty = {}

    def sqrt_for_rsqrt(gm):
        # a wrong rewrite in place: the norm's rsqrt becomes a sqrt, keeping its name, which
        # sorts after its consumers' (`mul_2`, `add_1`): name order would blame them first
        for r in gm.graph.find_nodes(op="call_function", target=aten.rsqrt.default):
            r.target = aten.sqrt.default
            faulty["node"] = r.name

    pipeline = list(passes.SHORT_PIPELINE)
    if role == "golden":
        pipeline = [(n, fn) for n, fn in pipeline if n not in OFF]
    else:
        def wrap(fn):
            def run(gm, example_inputs=None, config=None):
                out = fn(gm, example_inputs, config)
                sqrt_for_rsqrt(gm)
                return out
            return run
        pipeline = [(n, wrap(fn) if n == "remove_cat_ops" else fn) for n, fn in pipeline]

    torch.manual_seed(0)
    m = Block().eval()
    cfg = nge.CompilerConfig(pipeline=pipeline, trace_nodes=False)
    cm = torch.compile(m, backend=nge.get_npu_backend(cfg), fullgraph=True)
    torch.manual_seed(1)
    x = torch.randn(2, 8, 16)
    with stage_dump.Capture() as graphs, torch.no_grad():
        cm(x)
    values, out = stage_dump.dump(graphs.optimized, graphs.args, os.path.join(root, "dump_optimized"))
    # the rsqrt: the node the fault changed (target), or its twin (golden)
    node = faulty.get("node") or next(
        n.name for n in graphs.optimized.graph.nodes
        if n.op == "call_function" and n.target == aten.rsqrt.default)
    torch.save({"out": out, "node": values[node]}, os.path.join(root, "values.pt"))
    with open(os.path.join(root, "node.txt"), "w") as f:
        f.write(node)


def main():
    if sys.argv[1] == "--child":
        return child(sys.argv[2], sys.argv[3])
    sys.path.insert(0, str(HERE / "scale"))
    import debug_run
    out = Path(sys.argv[1]).resolve()
    for role in ("target", "golden"):
        root = out / role
        root.mkdir(parents=True, exist_ok=True)
        rc = debug_run.child(__file__, [role, root], root)
        if rc:
            sys.exit(rc)
        # torch's trace log is not part of this case (tests/fixtures counts its trace logs)
        shutil.rmtree(root / "torch_compile_debug" / "tlparse", ignore_errors=True)
    import torch
    from torch._dynamo.utils import same
    t = torch.load(out / "target" / "values.pt", weights_only=True)
    g = torch.load(out / "golden" / "values.pt", weights_only=True)
    quiet = lambda *a, **k: None  # noqa: E731
    truth = {
        "torch": torch.__version__,
        "off": list(OFF),
        "target_node": (out / "target" / "node.txt").read_text(),
        "golden_node": (out / "golden" / "node.txt").read_text(),
        "node_same": bool(same(g["node"], t["node"], log_error=quiet)),
        "output_same": bool(same(g["out"], t["out"], log_error=quiet)),
    }
    for role in ("target", "golden"):
        (out / role / "values.pt").unlink()
        (out / role / "node.txt").unlink()
    with open(out / "truth.json", "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)
    print(json.dumps(truth))


if __name__ == "__main__":
    main()
