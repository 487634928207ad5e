"""Makes the debug trees and trace logs of one torch release, for fxray's torch-version fixtures.

    python torch_versions.py OUT_DIR [CASE ...]

runs each case (all when none is named) in its own process with TORCH_COMPILE_DEBUG=1 and the
stock `inductor` backend on CPU, in `OUT_DIR/<torch version>/<case>/`: torch writes
`torch_compile_debug/run_*/…` there, and its structured trace log (torch 2.2 and later) under
`torch_compile_debug/tlparse/` (TORCH_TRACE points there: torch 2.15 does that by itself with
TORCH_COMPILE_DEBUG=1, older releases only when told). Beside each tree, `case.json` records the torch and Python
versions, the case, the marker lines of this script it hits and the exception a failing case
raised (torch's own answer, read without the trace log). `tlparse_answer.py` then records what
tlparse says about each trace log.

The cases, each small so that Inductor compiles in seconds on a CPU:
  graph_break  a forward with `print()`: two graphs around the break;
  recompile    a function called with a new batch size: a recompile (automatic dynamic);
  dynamic      a LayerNorm compiled with dynamic=True, called with two sizes;
  failure      fullgraph=True around torch._dynamo.graph_break(): the compile fails;
  training     an MLP's forward and backward: forward and backward graphs.

Run it with each torch's interpreter (regenerating is manual; see tests/fixtures/README.md):
    ~/.cache/fxray/venv-torch-2.1.2/bin/python tests/e2e/torch_versions.py tests/fixtures/torch_versions
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

CASES = ["graph_break", "recompile", "dynamic", "failure", "training"]


def marker_line(tag):
    with open(__file__) as f:
        for i, line in enumerate(f, start=1):
            if line.rstrip().endswith(f"# {tag}"):
                return i
    raise SystemExit(f"marker {tag} not found")


def run_case(name):
    import torch
    import torch._dynamo

    class Breaky(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(8, 16)
            self.fc2 = torch.nn.Linear(16, 4)

        def forward(self, x):
            h = torch.relu(self.fc1(x))
            print("hidden", tuple(h.shape))  # BREAK: print
            return self.fc2(h)

    class Norm(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = torch.nn.LayerNorm(8)
            self.fc = torch.nn.Linear(8, 8)

        def forward(self, x):
            return torch.relu(self.fc(self.ln(x)))

    def scale(x):
        return torch.tanh(x) * 3.0

    def strict(x):
        y = x + 1
        torch._dynamo.graph_break()  # FAIL: graph_break
        return y * 2

    torch.manual_seed(0)
    out = {}
    if name == "graph_break":
        m = torch.compile(Breaky())
        with torch.no_grad():
            m(torch.randn(2, 8))
        out["breaks"] = [marker_line("BREAK: print")]
    elif name == "recompile":
        f = torch.compile(scale)
        f(torch.randn(4, 8))
        f(torch.randn(6, 8))
    elif name == "dynamic":
        m = torch.compile(Norm(), dynamic=True)
        with torch.no_grad():
            m(torch.randn(3, 8))
            m(torch.randn(5, 8))
    elif name == "failure":
        try:
            torch.compile(strict, fullgraph=True)(torch.randn(3))
        except Exception as e:  # the failure is the point
            out["failure"] = {
                "type": type(e).__name__,
                "first_line": str(e).splitlines()[0] if str(e) else "",
                "line": marker_line("FAIL: graph_break"),
            }
    elif name == "training":
        m = torch.compile(
            torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
        )
        m(torch.randn(4, 8)).sum().backward()
    else:
        raise SystemExit(f"unknown case {name}")
    return out


def child(name, out_dir):
    import torch

    facts = run_case(name)
    case = {
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "case": name,
        "script": os.path.abspath(__file__),
    }
    case.update(facts)
    with open(os.path.join(out_dir, "case.json"), "w") as f:
        json.dump(case, f, indent=1)


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3])
        return
    root = os.path.abspath(sys.argv[1])
    cases = sys.argv[2:] or CASES
    version = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.__version__.split('+')[0])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    for name in cases:
        out = os.path.join(root, version, name)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        with tempfile.TemporaryDirectory() as cache:
            env = dict(
                os.environ,
                TORCH_COMPILE_DEBUG="1",
                TORCHINDUCTOR_CACHE_DIR=cache,
                TORCHINDUCTOR_FORCE_DISABLE_CACHES="1",
                TORCH_TRACE=os.path.join(out, "torch_compile_debug", "tlparse"),
            )
            p = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--child", name, out],
                cwd=out,
                env=env,
                capture_output=True,
                text=True,
            )
        with open(os.path.join(out, "console.log"), "w") as f:
            f.write(p.stdout + p.stderr)
        print(version, name, "exit", p.returncode, flush=True)
        if p.returncode != 0:
            sys.exit(f"{name} failed: see {out}/console.log")


if __name__ == "__main__":
    main()
