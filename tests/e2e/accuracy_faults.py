"""Real msprobe dumps of a small model with three kinds of accuracy fault, and msprobe's own
compare of each, for fxray's accuracy-compare tests (tests/it/accuracy*.rs).

    python accuracy_faults.py OUT            # every case, tensor and statistics mode
    python accuracy_faults.py OUT --big-gb 2 # one large tensor-mode pair for `fxray bench compare`

Cases (the golden run is always the fp32 model on CPU; the target run has the fault):

- perturb: the target's `F.gelu` returns its output plus noise (0.05 * randn): the op itself is
  wrong, its inputs are not. msprobe dumps the call as `Functional.gelu.0.forward` on both sides.
- bf16: the target runs the same model in bfloat16. In this case the model adds a large bias
  (300) and then centres the activation (`h - h.mean(-1)`): harmless in fp32, a catastrophic
  cancellation in bf16, where the sum is rounded to steps of 2. The faulty op is that
  `Tensor.__sub__`.
- scale: the target has one extra op, `torch.mul(h, 1.3)`, between gelu and the next linear.
  It exists only on the target side, so msprobe has no golden row for it.
- train: perturb's fault in a training step (forward and backward at level `mix`): msprobe
  dumps each module's parameter gradients (`Module.fc1.Linear.parameters_grad.0`) and its
  compare has a row for each (`….parameters_grad.0.weight`).

Each dump runs in a child process (msprobe's PrecisionDebugger is a singleton). The dumps are
made neutral for committing: `stack.json` and `construct.json` are removed, the `proc<PID>`
folder is renamed to a fixed PID and `dump_data_dir` inside dump.json rewritten to match.
Then `msprobe compare -tp TARGET/dump.json -gp GOLDEN/dump.json` runs and its CSV is kept as
`<case>/msprobe_<task>/compare_result_<task>.csv`.
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

CASES = ("perturb", "bf16", "scale", "train")
TASKS = ("tensor", "statistics")
PIDS = {"golden": 1001, "target": 2002}


def build_model(torch, big):
    nn = torch.nn
    F = torch.nn.functional

    class Net(nn.Module):
        def __init__(self, scale_fault, centre):
            super().__init__()
            self.scale_fault = scale_fault
            self.centre = centre
            self.fc1 = nn.Linear(32, 64)
            self.fc2 = nn.Linear(64, 64)
            self.offset = nn.Parameter(torch.full((64,), 300.0))
            self.fc3 = nn.Linear(64, 16)

        def forward(self, x):
            h = F.gelu(self.fc1(x))
            if self.scale_fault:
                h = torch.mul(h, 1.3)
            h = self.fc2(h)
            if self.centre:
                h = h + self.offset
                h = h - h.mean(dim=-1, keepdim=True)
            h = F.silu(h)
            return self.fc3(h)

    class Big(nn.Module):
        """Layers of [n, n] activations: every dumped tensor is n*n*4 bytes."""

        def __init__(self, n, layers):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(n, n) for _ in range(layers))

        def forward(self, x):
            for lin in self.layers:
                x = F.gelu(lin(x))
            return x

    return Net, Big


def child(case, side, task, out, big_gb):
    import torch
    import torch.nn.functional as F

    if case in ("perturb", "big", "train") and side == "target":
        orig = F.gelu

        def gelu(x, *a, **k):
            y = orig(x, *a, **k)
            g = torch.Generator().manual_seed(7)
            return y + 0.05 * torch.randn(y.shape, generator=g, dtype=y.dtype)

        # Patched before msprobe wraps the API: msprobe dumps this call as the gelu call.
        F.gelu = gelu

    # msprobe wraps the APIs when imported: after the patch.
    import msprobe.pytorch  # noqa: F401

    torch.manual_seed(0)
    Net, Big = build_model(torch, big_gb)
    if big_gb:
        n = 4096
        # Each layer dumps 5 tensors of n*n*4 bytes (linear in, weight, out; gelu in, out).
        layers = max(1, round(big_gb * 1e9 / (5 * n * n * 4)))
        model = Big(n, layers).eval()
        x = torch.randn(n, n)
    else:
        model = Net(case == "scale" and side == "target", case == "bf16").eval()
        x = torch.randn(8, 32)
    if case == "bf16" and side == "target":
        model = model.to(torch.bfloat16)
        x = x.to(torch.bfloat16)
    dump(model, x, task, out, train=case == "train")


def dump(model, x, task, out, train=False):
    """One forward of `model` on `x` under msprobe (level L1, `task`), without grad, into `out`;
    with `train`, a forward and backward of a loss at level `mix` (modules and APIs, and each
    module's parameter gradients)."""
    import contextlib

    import torch
    from msprobe.pytorch import PrecisionDebugger

    os.makedirs(os.path.dirname(out), exist_ok=True)
    cfg_path = out + ".config.json"
    cfg = {
        "task": task,
        "dump_path": out,
        "rank": [],
        "step": [],
        "level": "mix" if train else "L1",
        task: {"scope": [], "list": [], "data_mode": ["all"]},
    }
    with open(cfg_path, "w") as f:
        json.dump(cfg, f)
    debugger = PrecisionDebugger(config_path=cfg_path)
    with contextlib.nullcontext() if train else torch.no_grad():
        if train:
            model.train()
            debugger.start(model)
            model(x).square().mean().backward()
        else:
            debugger.start()
            model(x)
        debugger.stop()
        debugger.step()
    os.remove(cfg_path)


def neutralise(dump_root, side):
    """Fixed PID folder, no stack/construct files, dump_data_dir rewritten (text kept as is)."""
    (proc,) = glob.glob(os.path.join(dump_root, "step0", "proc*"))
    fixed = os.path.join(dump_root, "step0", f"proc{PIDS[side]}")
    os.rename(proc, fixed)
    for name in ("stack.json", "construct.json"):
        p = os.path.join(fixed, name)
        if os.path.exists(p):
            os.remove(p)
    dump_json = os.path.join(fixed, "dump.json")
    with open(dump_json) as f:
        text = f.read()
    with open(dump_json, "w") as f:
        f.write(text.replace(proc, "/dump/" + os.path.relpath(fixed, os.path.dirname(dump_root))))
    return dump_json


def msprobe_bin():
    return os.path.join(os.path.dirname(sys.executable), "msprobe")


def make_case(out, case, tasks, big_gb):
    case_dir = os.path.join(out, case)
    for task in tasks:
        jsons = {}
        for side in ("golden", "target"):
            root = os.path.join(case_dir, f"{side}_{task}")
            shutil.rmtree(root, ignore_errors=True)
            cmd = [sys.executable, __file__, root, "--child", case, side, task]
            if big_gb:
                cmd += ["--big-gb", str(big_gb)]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            jsons[side] = neutralise(root, side)
        report = os.path.join(case_dir, f"msprobe_{task}")
        shutil.rmtree(report, ignore_errors=True)
        cmd = [msprobe_bin(), "compare", "-tp", jsons["target"], "-gp", jsons["golden"], "-o", report]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        (csv,) = glob.glob(os.path.join(report, "compare_result_*.csv"))
        os.rename(csv, os.path.join(report, f"compare_result_{task}.csv"))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--child", nargs=3, metavar=("CASE", "SIDE", "TASK"))
    p.add_argument("--cases", default=",".join(CASES))
    p.add_argument("--big-gb", type=float, default=0.0)
    a = p.parse_args()
    if a.child:
        case, side, task = a.child
        child(case, side, task, a.out, a.big_gb)
        return
    if a.big_gb:
        make_case(a.out, "big", ("tensor",), a.big_gb)
        return
    for case in a.cases.split(","):
        make_case(a.out, case, TASKS, 0.0)


if __name__ == "__main__":
    main()
