"""An npy data dump and an msprobe dump of the same model, for fxray's mixed accuracy compare
(issue 23: `fxray compare NPY_DUMP MSPROBE_DUMP --graph GRAPH_FILE`).

    python accuracy_mixed.py OUT

The model is accuracy_faults.py's MLP (linear → gelu → linear → silu → linear, [8, 32] input),
built and fed exactly as there (seed 0, eval, no grad), so both sides hold the same weights and
input:

- OUT/golden_<task>/step0/proc1001/: real msprobe (mindstudio-probe, level L1) of the eager fp32
  model, tensor and statistics mode, made neutral as accuracy_faults.py does (no stack.json or
  construct.json, a fixed PID folder, `dump_data_dir` rewritten).
- OUT/torch_compile_debug/run_…/npugraph_ex/model__0/: the model compiled through
  module_truth.py's backend (the npugraph_ex layout and its real FX passes: `mm + add` becomes
  `addmm`, `silu(x)` becomes `x * sigmoid(x)`, …); its last forward pass is the GRAPH_FILE.
- OUT/target_npy/worldsize1_global_rank0/graph_1/0/: that last forward graph run by
  launch_ranks.py's DumpInterpreter (TorchAir's npy layout, docs/formats.md §3.1), with **the
  gelu node's output perturbed** (+0.05·randn, generator seed 7: accuracy_faults.py's `perturb`
  fault, here on the compiled side). The perturbed value flows on to the nodes after it.
- OUT/truth.json: what torch knows: the gelu node's name, every dumped node's target, and per
  msprobe output the node of the final graph holding the same values (max |Δ| < 1e-5 against the
  unperturbed interpreter's outputs, same shape).

Paths inside the graph files are rewritten: this folder to /home/dev/models/gen, the venv to
/opt/venv.
"""

import glob
import json
import os
import shutil
import subprocess
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_faults  # noqa: E402  (the model, the msprobe child, neutralise)
import launch_ranks  # noqa: E402  (write_npy, DumpInterpreter, neutralize)
import module_truth  # noqa: E402  (the npugraph_ex writer and its passes)

aten = torch.ops.aten


def model_and_input():
    """As accuracy_faults.child builds them for the golden side."""
    torch.manual_seed(0)
    Net, _ = accuracy_faults.build_model(torch, 0)
    model = Net(False, False).eval()
    x = torch.randn(8, 32)
    return model, x


class Perturbing(launch_ranks.DumpInterpreter):
    """Dumps every call; the gelu node's output gets accuracy_faults' noise."""

    def __init__(self, gm, folder, perturb, outputs):
        super().__init__(gm, folder, [])
        self.perturb = perturb
        self.outputs = outputs

    def run_node(self, n):
        if not self.perturb or n.target is not aten.gelu.default:
            out = super().run_node(n)
        else:
            # The same dump as the base class, of the perturbed value.
            args = self.fetch_args_kwargs_from_env(n)[0]
            y = torch.fx.Interpreter.run_node(self, n)
            g = torch.Generator().manual_seed(7)
            out = y + 0.05 * torch.randn(y.shape, generator=g, dtype=y.dtype)
            self.gelu = n.name
            import datetime

            ts = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d%H%M%S%f")
            stem = os.path.join(self.folder, f"{n.name}-{n.target}")
            for i, a in enumerate(args):
                if (t := launch_ranks.as_tensor(a)) is not None:
                    launch_ranks.write_npy(f"{stem}.INPUT.{i}.{ts}.npy", t)
            launch_ranks.write_npy(f"{stem}.OUTPUT.0.{ts}.npy", out)
        if isinstance(out, torch.Tensor) and n.op == "call_function":
            self.outputs[n.name] = (str(n.target), out.detach().clone())
        return out


def compile_and_dump(out):
    model, x = model_and_input()
    stamp = "2026_12_03_08_00_00_000000"
    model_dir = os.path.join(out, "torch_compile_debug", f"run_{stamp}-pid_3003", "npugraph_ex", "model__0")
    folder = os.path.join(out, "target_npy", "worldsize1_global_rank0", "graph_1", "0")
    clean = {}
    seen = {}

    def runner(gm):
        def run(*args):
            # The dump with the fault, then the unperturbed values (truth, not kept).
            p = Perturbing(gm, folder, True, seen)
            r = p.run(*args)
            seen["__gelu__"] = p.gelu
            c = Perturbing(gm, os.path.join(out, ".clean"), False, clean)
            c.run(*args)
            return r

        return run

    torch._dynamo.reset()
    compiled = torch.compile(model, backend=module_truth.backend_for(model_dir, None, runner), fullgraph=True)
    with torch.no_grad():
        compiled(x)
    shutil.rmtree(os.path.join(out, ".clean"), ignore_errors=True)
    return model_dir, seen.pop("__gelu__"), clean, seen


def msprobe_outputs(dump_root):
    """(key of each output tensor, its tensor) of a tensor-mode dump."""
    (proc,) = glob.glob(os.path.join(dump_root, "step0", "proc*"))
    with open(os.path.join(proc, "dump.json")) as f:
        data = json.load(f)["data"]
    outs = {}
    for call, rec in data.items():
        for k, t in enumerate(rec.get("output", [])):
            if isinstance(t, dict) and t.get("data_name"):
                outs[f"{call}.output.{k}"] = torch.load(
                    os.path.join(proc, "dump_tensor_data", t["data_name"]), weights_only=True
                )
    return outs


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    for d in ("torch_compile_debug", "target_npy", "golden_tensor", "golden_statistics"):
        shutil.rmtree(os.path.join(out, d), ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    for task in ("tensor", "statistics"):
        root = os.path.join(out, f"golden_{task}")
        cmd = [sys.executable, accuracy_faults.__file__, root, "--child", "perturb", "golden", task]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        accuracy_faults.neutralise(root, "golden")
    model_dir, gelu, clean, _ = compile_and_dump(out)
    launch_ranks.neutralize(os.path.join(out, "torch_compile_debug"))
    graphs = sorted(glob.glob(os.path.join(model_dir, "forward", "*.txt")))
    holders = {}
    for key, t in msprobe_outputs(os.path.join(out, "golden_tensor")).items():
        holders[key] = [
            name
            for name, (_, v) in clean.items()
            if v.shape == t.shape and v.dtype == t.dtype and float((v - t).abs().max()) < 1e-5
        ]
    truth = {
        "graph": os.path.relpath(graphs[-1], out),
        "gelu_node": gelu,
        "targets": {name: target for name, (target, _) in clean.items()},
        "msprobe_output_nodes": holders,
        "torch": torch.__version__,
    }
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)
    print(json.dumps(truth, indent=1))


if __name__ == "__main__":
    main()
