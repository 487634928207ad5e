"""Real msprobe dumps whose differences only msprobe's RequiresGrad and Parameters checkers see,
and msprobe's own compare of them (tests/it/accuracy.rs).

    python accuracy_checks.py OUT

The model: linear → gelu → `torch.mul(h, s)` → linear on an [8, 32] input (seed 0, eval, no
grad), dumped by msprobe (level L1) in tensor and statistics mode. The golden multiplies by
s = 1.5, the target by s = 1.3 (a scalar argument: msprobe's Parameters checker), and the
golden's input has `requires_grad=True` (its RequiresGrad checker). Folders and CSVs as
accuracy_faults.py writes them: `checks/{golden,target}_<task>/step0/proc<PID>/` made neutral,
`checks/msprobe_<task>/compare_result_<task>.csv`.
"""

import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import accuracy_faults  # noqa: E402  (dump, neutralise, msprobe_bin)

SCALE = {"golden": 1.5, "target": 1.3}


def child(side, task, out):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self, s):
            super().__init__()
            self.s = s
            self.fc1 = nn.Linear(32, 64)
            self.fc2 = nn.Linear(64, 16)

        def forward(self, x):
            h = F.gelu(self.fc1(x))
            h = torch.mul(h, self.s)
            return self.fc2(h)

    torch.manual_seed(0)
    model = Net(SCALE[side]).eval()
    x = torch.randn(8, 32)
    if side == "golden":
        x.requires_grad_(True)
    accuracy_faults.dump(model, x, task, out)


def main():
    if len(sys.argv) == 5 and sys.argv[2] == "--child":
        child(sys.argv[3], sys.argv[4], sys.argv[1])
        return
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    case_dir = os.path.join(sys.argv[1], "checks")
    for task in ("tensor", "statistics"):
        jsons = {}
        for side in ("golden", "target"):
            root = os.path.join(case_dir, f"{side}_{task}")
            shutil.rmtree(root, ignore_errors=True)
            cmd = [sys.executable, __file__, root, "--child", side, task]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
            jsons[side] = accuracy_faults.neutralise(root, side)
        report = os.path.join(case_dir, f"msprobe_{task}")
        shutil.rmtree(report, ignore_errors=True)
        cmd = [accuracy_faults.msprobe_bin(), "compare", "-tp", jsons["target"], "-gp", jsons["golden"], "-o", report]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        (csv,) = glob.glob(os.path.join(report, "compare_result_*.csv"))
        os.rename(csv, os.path.join(report, f"compare_result_{task}.csv"))


if __name__ == "__main__":
    main()
