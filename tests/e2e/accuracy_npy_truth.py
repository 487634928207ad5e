"""Truth for fxray's compare of two TorchAir npy dumps (tests/it/accuracy_npy.rs).

    python accuracy_npy_truth.py OUT_DIR [STEP_DIR]   # default: the showcase's step 0

The golden is the showcase's step 0 as dumped. The target is the same step with one node's
output perturbed: `_softmax_1`'s OUTPUT.0 times (1 + 0.02 sin(i)), in float32, and every input
of a later node that held the same bytes (its consumers) replaced likewise. The perturbed files
are written under OUT_DIR/target_overrides/ (the test copies them over a copy of the dump).

msprobe's own metric code (mindstudio-probe, `msprobe.core.compare.npy_compare`: the checks
of `ValidateTensor` then `compare_ops_apply`, as `msprobe compare` runs them on every tensor)
is then run on every pair of the step, target file against golden file, and its six numbers
per pair written to OUT_DIR/msprobe_metrics.json as text, the way msprobe writes them.
"""

import json
import os
import sys

import numpy as np
from msprobe.core.common.const import CompareConst
from msprobe.core.compare.npy_compare import CompareResult, ValidateTensor, compare_ops_apply

NODE = "_softmax_1"


def load(path):
    # msprobe's reader squeezes what it loads (read_pt_data); do the same for .npy.
    return np.squeeze(np.load(path, allow_pickle=False))


def main():
    out = sys.argv[1]
    here = os.path.dirname(os.path.abspath(__file__))
    step_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        here, "..", "fixtures", "showcase", "data_dump", "worldsize1_global_rank0", "graph_1", "0"
    )
    overrides = os.path.join(out, "target_overrides")
    os.makedirs(overrides, exist_ok=True)
    files = sorted(os.listdir(step_dir))
    (out_file,) = [f for f in files if f.startswith(NODE + "-") and ".OUTPUT.0." in f]
    original = open(os.path.join(step_dir, out_file), "rb").read()
    g = np.load(os.path.join(step_dir, out_file))
    wave = np.sin(np.arange(g.size, dtype=np.float64)).astype(np.float32).reshape(g.shape)
    t = (g * (np.float32(1) + np.float32(0.02) * wave)).astype(g.dtype)
    replaced = [out_file]
    for f in files:
        if f != out_file and ".INPUT." in f and open(os.path.join(step_dir, f), "rb").read() == original:
            replaced.append(f)
    for f in replaced:
        np.save(os.path.join(overrides, f), t)
    metrics = {}
    for f in files:
        if not f.endswith(".npy"):
            continue
        gpath = os.path.join(step_dir, f)
        tpath = os.path.join(overrides, f) if f in replaced else gpath
        try:
            n, b = load(tpath), load(gpath)
        except ValueError:
            continue  # object arrays (a None argument): not tensors
        res = ValidateTensor().check_tensor(CompareResult(n, b))
        values, _ = compare_ops_apply(
            res.n_value, res.b_value, res.error_flag, res.err_msg,
            column_names=CompareConst.ALL_COMPARE_INDEX,
        )
        node = f.split(".", 1)[0].split("-", 1)[0]
        # <target>.<INPUT|OUTPUT>.<i>[.<j>].<ts>.npy: the slot is what sits between target and ts.
        parts = f[:-4].split(".")
        k = next(i for i, p in enumerate(parts) if p in ("INPUT", "OUTPUT"))
        key = node + "." + ".".join(parts[k:-1])
        metrics[key] = [str(v) for v in values]
    with open(os.path.join(out, "msprobe_metrics.json"), "w") as fh:
        json.dump({"node": NODE, "replaced": replaced, "metrics": metrics}, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
