"""Makes a run whose trace log tells a compile story, for fxray's `compiles` tests.

    TORCH_COMPILE_DEBUG=1 python compile_story.py OUT_DIR

writes `OUT_DIR/torch_compile_debug/` (the structured trace log under `tlparse/`, and an
npugraph_ex-layout tree `run_*/npugraph_ex/model__N/` made by the small backend below) and
`OUT_DIR/expected.json`: what torch itself says happened, recorded without reading the trace
log (break lines from this file's source, reasons and the failing guard from torch's own
`graph_breaks`/`recompiles` logs, and the compile id each `model__N` was written for, as the
backend saw it).

Four stories in one process, so one trace log holds them all:
  (a) `Breaky.forward` calls `print()` and `.item()`: two graph breaks, three graphs;
  (b) `scale` is compiled with `dynamic=False` and called with a new batch size: a recompile
      naming the failing size guard;
  (c) `strict` is compiled with `fullgraph=True` around an explicit graph break: the compile
      fails; (d) `Normed` (below) restarts after its backend ran: two attempts, two folders.
"""

import json
import logging
import os
import sys

import torch
import torch._dynamo
from torch._dynamo.backends.common import aot_autograd
from torch._guards import CompileContext

# npugraph_ex's pass names, in its order; these passes change nothing here, as on a machine
# without an NPU, but each still dumps a file.
PASSES = ["post_grad_custom_pre_pass", "optimize_noop_ops", "eliminate_dead_code"]

MODELS, ATTEMPTS = {}, {}  # model__N -> compile id and attempt, as the backend saw them
_count = [0]


def _text(gm):
    # npugraph_ex dumps without strides and devices, as print_readable does by default.
    return gm.print_readable(print_output=False)


def _phase_compiler(folder, phase, graph_kind):
    def compile_phase(gm, example_inputs):
        os.makedirs(os.path.join(folder, phase), exist_ok=True)
        stem = f"aot_{graph_kind}_graph"
        with open(os.path.join(folder, phase, f"000_{stem}.txt"), "w") as f:
            f.write(_text(gm))
        for i, name in enumerate(PASSES, start=1):
            if name == "eliminate_dead_code":
                gm.graph.eliminate_dead_code()
                gm.recompile()
            with open(os.path.join(folder, phase, f"{i:03d}_{stem}_after_{name}.txt"), "w") as f:
                f.write(_text(gm))
        return gm.forward

    return compile_phase


def npugraph_ex_layout(gm, example_inputs):
    """A backend that writes what npugraph_ex writes, then runs the graph eagerly."""
    n = _count[0]
    _count[0] += 1
    run = torch._dynamo.utils.get_debug_dir()
    folder = os.path.join(run, "npugraph_ex", f"model__{n}")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "dynamo_out_graph.txt"), "w") as f:
        f.write(_text(gm))
    tid = CompileContext.current_trace_id()
    MODELS[f"model__{n}"], ATTEMPTS[f"model__{n}"] = (str(tid.compile_id), tid.attempt) if tid else (None, None)
    inner = aot_autograd(
        fw_compiler=_phase_compiler(folder, "forward", "forward"),
        bw_compiler=_phase_compiler(folder, "backward", "backward"),
    )
    return inner(gm, example_inputs)


class Breaky(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        print("hidden", tuple(h.shape))  # BREAK: print
        scale = h.mean().item()  # BREAK: item
        return self.fc2(h * scale)


def scale(x):
    return torch.tanh(x) * 3.0


def strict(x):
    y = x + 1
    torch._dynamo.graph_break()  # FAIL: graph_break
    return y * 2


class Normed(torch.nn.Module):
    """(d) Compiled with `dynamic=True`: Dynamo hands its graph to the backend, then restarts
    the compile (`TensorifyScalarRestartAnalysis`, for the LayerNorm's float `eps`), so attempt
    0 leaves a `model__N` with only `dynamo_out_graph.txt` and attempt 1 writes the next one."""

    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(8)

    def forward(self, x):
        return self.ln(x) * 2.0


def marker_line(tag):
    with open(__file__) as f:
        for i, line in enumerate(f, start=1):
            if line.rstrip().endswith(f"# {tag}"):
                return i
    raise SystemExit(f"marker {tag} not found")


class Keep(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def main():
    out = os.path.abspath(sys.argv[1])
    os.makedirs(out, exist_ok=True)
    keep = Keep()
    # torch's own console answers: the graph-break reasons and the recompile's guard.
    torch._logging.set_logs(graph_breaks=True, recompiles=True)
    for name in ["torch._dynamo"]:
        logging.getLogger(name).addHandler(keep)
    torch.manual_seed(0)

    model = torch.compile(Breaky(), backend=npugraph_ex_layout)
    with torch.no_grad():
        model(torch.randn(2, 8))

    fn = torch.compile(scale, backend=npugraph_ex_layout, dynamic=False)
    fn(torch.randn(4, 8))
    fn(torch.randn(6, 8))

    failure = None
    try:
        torch.compile(strict, backend=npugraph_ex_layout, fullgraph=True)(torch.randn(3))
    except Exception as e:  # the failure is the point
        failure = {"type": type(e).__name__, "first_line": str(e).splitlines()[0]}

    with torch.no_grad():
        torch.compile(Normed(), backend=npugraph_ex_layout, dynamic=True)(torch.randn(3, 8))

    breaks = [m for m in keep.messages if "Graph break in user code" in m]
    recompiles = [m for m in keep.messages if "triggered by the following guard failure" in m]
    expected = {
        "torch": torch.__version__,
        "script": __file__,
        "graph_breaks": [
            {"line": marker_line("BREAK: print"), "what": "print"},
            {"line": marker_line("BREAK: item"), "what": "item"},
        ],
        "graph_break_logs": breaks,
        "recompile": {"function": "scale", "logs": recompiles},
        "failure": dict(failure or {}, line=marker_line("FAIL: graph_break")),
        "models": MODELS,
        "attempts": ATTEMPTS,
    }
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
    print("done", len(MODELS), "models")


if __name__ == "__main__":
    main()
