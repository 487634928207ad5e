"""One launch of 4 ranks, for fxray's rank grouping and rank matrix (issue 17).

Spawns WORLD processes (torch.multiprocessing) joined by `init_process_group("gloo",
init_method="tcp://127.0.0.1:<free port>")`. Each rank trains a tiny 2-layer model with a
collective (`_c10d_functional.all_reduce` after each block's MLP, tensor-parallel style) for two
steps, compiled through module_truth.py's backend (the npugraph_ex layout and its real FX passes),
into its own run folder:

    <out>/torch_compile_debug/run_<stamp>-pid_<pid>-rank_<R>/npugraph_ex/model__0/
        dynamo_out_graph.txt, forward/000…003_aot_forward_graph*.txt, backward/…

The stamp is taken after a barrier, so the ranks' start times are milliseconds apart, as in a
real launch. **Rank 2 takes another branch in forward**: it reshapes its input through
`view(B*T, D).view(B, T, D)` where the others call `view(B, T, D)` once. That changes the Dynamo
graph and forward pass 000; the pass `apply_pattern_passes` (001) folds the view pair into one
view, so from 001 on rank 2's forward graph is the others' again: "rank 2 diverged until 001".

Data dump per rank, in the TorchAir npy layout (docs/formats.md §3.1):
`<out>/data_dump/worldsize<W>_global_rank<R>/graph_1/<step>/<node>-<target>.<INPUT|OUTPUT>.<i>[.<j>].<ts>.npy`,
written by an FX Interpreter over the final forward graph at each call (steps 0 and 1). Tensor,
int, float and bool arguments are saved; string arguments (the collective's `'sum'`, group name)
and `getitem` calls are not (their names would hold `<built-in function getitem>`). **Rank 3's
input gets a NaN at step 1**, so NaN starts at its first node and reaches every rank through the
all-reduce. The all-reduce's output is saved before `wait_tensor` (as the interpreter runs it):
whether it holds the reduced values yet depends on gloo's timing.

`<out>/truth.json` holds torch's own answers: the ranks, the diverging rank, for every graph file
each rank's node count (len(graph.nodes)) and the ranks whose graph differs from the majority's
(fingerprint: the multiset of (node label, labels of its input nodes), a label being the op for
placeholders/output and the target otherwise), and the first (step, rank, node) holding NaN.

Usage: python launch_ranks.py OUT_DIR
Paths inside the files are rewritten: this folder to /home/dev/models/gen, the venv to /opt/venv.
"""

import collections
import datetime
import hashlib
import json
import operator
import os
import socket
import struct
import sys
import time

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import module_truth  # noqa: E402  (the npugraph_ex writer and its passes)

WORLD, DIVERGING_RANK, NAN_RANK, NAN_STEP, STEPS = 4, 2, 3, 1, 2
D, B, T = 8, 2, 4
VENV = "/opt/venv"


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(D)
        self.fc1 = nn.Linear(D, 2 * D)
        self.fc2 = nn.Linear(2 * D, D)

    def forward(self, x):
        h = self.fc2(F.silu(self.fc1(self.norm(x))))
        return x + funcol.all_reduce(h, "sum", dist.group.WORLD)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList(Block() for _ in range(2))
        self.head = nn.Linear(D, 4)

    def forward(self, x):
        if dist.get_rank() == DIVERGING_RANK:
            x = x.view(B * T, D).view(B, T, D)
        else:
            x = x.view(B, T, D)
        for layer in self.layers:
            x = layer(x)
        return self.head(x)


# --- graph facts ------------------------------------------------------------------------------


def label(n):
    if n.op in ("placeholder", "output", "get_attr"):
        return n.op
    t = n.target
    if isinstance(t, (str, torch._ops.OpOverload)):
        return str(t)
    return f"{getattr(t, '__module__', '')}.{getattr(t, '__qualname__', t)}"  # no `at 0x…` address


def fingerprint(gm):
    items = sorted(repr((label(n), [label(i) for i in n.all_input_nodes])) for n in gm.graph.nodes)
    return hashlib.sha1("\n".join(items).encode()).hexdigest()


# --- npy writer (torch only; numpy is not installed) -------------------------------------------

DESCR = {torch.float32: "<f4", torch.float64: "<f8", torch.int64: "<i8", torch.int32: "<i4", torch.bool: "|b1"}


def write_npy(path, t):
    if t.dtype == torch.bfloat16 or t.dtype == torch.float16:
        t = t.float()  # TorchAir saves bf16 as float32
    t = t.detach().contiguous()
    shape = "(" + "".join(f"{s}, " for s in t.shape)[:-2] + ("," if t.dim() == 1 else "") + ")"
    header = f"{{'descr': '{DESCR[t.dtype]}', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * 21  # numpy's room for a growing first axis
    pad = -(10 + len(header) + 1) % 64
    header = (header + " " * pad + "\n").encode("latin1")
    data = t.reshape(-1).view(torch.uint8).tolist() if t.numel() else []
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + bytes(data))


def as_tensor(v):
    if isinstance(v, torch.Tensor):
        return v
    if isinstance(v, bool):
        return torch.tensor(v)
    if isinstance(v, (int, float)):
        return torch.tensor(v)
    if isinstance(v, (list, tuple)) and v and all(isinstance(e, int) for e in v):
        return torch.tensor(list(v), dtype=torch.int64)
    return None  # strings, None, dtypes: not saved (see the module doc)


class DumpInterpreter(torch.fx.Interpreter):
    """Runs the final forward graph and saves every call_function's positional args and result."""

    def __init__(self, gm, folder, nan_nodes):
        super().__init__(gm)
        self.folder = folder
        self.nan_nodes = nan_nodes
        self.position = {n: i for i, n in enumerate(gm.graph.nodes)}
        os.makedirs(folder, exist_ok=True)

    def run_node(self, n):
        args = self.fetch_args_kwargs_from_env(n)[0] if n.op == "call_function" else ()
        out = super().run_node(n)
        if n.op != "call_function" or n.target is operator.getitem:
            return out
        ts = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d%H%M%S%f")
        stem = os.path.join(self.folder, f"{n.name}-{n.target}")
        for i, a in enumerate(args):
            if isinstance(a, (list, tuple)) and a and isinstance(a[0], torch.Tensor):
                for j, e in enumerate(a):
                    write_npy(f"{stem}.INPUT.{i}.{j}.{ts}.npy", e)
            elif (t := as_tensor(a)) is not None:
                write_npy(f"{stem}.INPUT.{i}.{ts}.npy", t)
        outs = out if isinstance(out, (list, tuple)) else [out]
        nan = False
        for i, o in enumerate(outs):
            if isinstance(o, torch.Tensor):
                write_npy(f"{stem}.OUTPUT.{i}.{ts}.npy", o)
                nan = nan or (o.is_floating_point() and bool(torch.isnan(o).any()))
        if nan:
            self.nan_nodes.append([self.position[n], n.name])
        return out


# --- one rank ---------------------------------------------------------------------------------


def rank_main(rank, out, port):
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=WORLD)
    dist.barrier()
    now = datetime.datetime.now(datetime.timezone.utc)
    run = os.path.join(out, "torch_compile_debug", now.strftime("run_%Y_%m_%d_%H_%M_%S_%f") + f"-pid_{os.getpid()}-rank_{rank}")
    model_dir = os.path.join(run, "npugraph_ex", "model__0")
    graphs = {}  # relative path → {nodes, fingerprint}
    nan_nodes = {}  # step → [position in the graph, node] of the nodes whose output holds NaN
    step = [0]

    def on_dump(rel, gm):
        graphs[rel] = {"nodes": len(gm.graph.nodes), "fingerprint": fingerprint(gm)}

    def forward_runner(gm):
        def run_forward(*args):
            s = step[0]
            folder = os.path.join(out, "data_dump", f"worldsize{WORLD}_global_rank{rank}", "graph_1", str(s))
            nan_nodes[s] = []
            return DumpInterpreter(gm, folder, nan_nodes[s]).run(*args)

        return run_forward

    torch.manual_seed(0)
    model = Net()
    compiled = torch.compile(model, backend=module_truth.backend_for(model_dir, on_dump, forward_runner), fullgraph=True)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    data = torch.Generator().manual_seed(100 + rank)
    for s in range(STEPS):
        step[0] = s
        x = torch.randn(B, T, D, generator=data)
        if rank == NAN_RANK and s == NAN_STEP:
            x[0, 0, 3] = float("nan")
        loss = compiled(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    with open(os.path.join(out, f".rank{rank}.json"), "w") as f:
        json.dump({"rank": rank, "run": os.path.basename(run), "pid": os.getpid(), "graphs": graphs, "nan_nodes": nan_nodes}, f)
    dist.barrier()
    dist.destroy_process_group()


# --- truth ------------------------------------------------------------------------------------


def majority_differs(by_rank):
    """Ranks whose fingerprint is not the most common one (the lowest rank's on a tie)."""
    counts = collections.Counter(by_rank.values())
    top = max(counts.values())
    majority = next(fp for _, fp in sorted(by_rank.items()) if counts[fp] == top)
    return sorted(r for r, fp in by_rank.items() if fp != majority)


def build_truth(pieces):
    ranks = sorted(p["rank"] for p in pieces)
    files = sorted(set().union(*(p["graphs"] for p in pieces)))
    graphs = {}
    for rel in files:
        per = {p["rank"]: p["graphs"][rel] for p in pieces if rel in p["graphs"]}
        graphs[rel] = {
            "nodes": {str(r): g["nodes"] for r, g in sorted(per.items())},
            "differs": majority_differs({r: g["fingerprint"] for r, g in per.items()}),
        }
    # earliest step, then earliest node of the final graph (the same graph on every rank), then rank
    held = [(int(s), pos, p["rank"], node) for p in pieces for s, nodes in p["nan_nodes"].items() for pos, node in nodes]
    first = None
    if held:
        s, _, r, node = min(held)
        first = {"step": s, "rank": r, "node": node}
    return {
        "about": "torch's own answers for launch_4rank (tests/e2e/launch_ranks.py). nodes = len(graph.nodes); "
        "differs = ranks whose graph differs from the majority's (multiset of (node label, input labels)).",
        "world_size": WORLD,
        "ranks": ranks,
        "runs": {str(p["rank"]): p["run"] for p in sorted(pieces, key=lambda p: p["rank"])},
        "diverging_rank": DIVERGING_RANK,
        "graphs": graphs,
        "differing_files": {
            str(r): [rel for rel, g in graphs.items() if r in g["differs"]] for r in ranks if any(r in g["differs"] for g in graphs.values())
        },
        "nan": {
            "injected": {"rank": NAN_RANK, "step": NAN_STEP, "into": "the model input x[0, 0, 3]"},
            "first": first,
            "first_per_rank": {
                str(p["rank"]): (p["nan_nodes"].get(str(NAN_STEP)) or [[None, None]])[0][1] for p in sorted(pieces, key=lambda p: p["rank"])
            },
        },
        "dump_steps": list(range(STEPS)),
    }


def neutralize(root):
    here = os.path.dirname(os.path.abspath(__file__))
    for folder, _, names in os.walk(root):
        for name in names:
            if not name.endswith((".txt", ".json", ".py", ".log")):
                continue
            path = os.path.join(folder, name)
            with open(path) as f:
                text = f.read()
            new = text.replace(sys.prefix, VENV).replace(here, module_truth.NEUTRAL)
            if new != text:
                with open(path, "w") as f:
                    f.write(new)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = os.path.abspath(sys.argv[1])
    os.makedirs(out, exist_ok=True)
    start = time.time()
    mp.spawn(rank_main, args=(out, free_port()), nprocs=WORLD, join=True)
    pieces = []
    for r in range(WORLD):
        path = os.path.join(out, f".rank{r}.json")
        with open(path) as f:
            pieces.append(json.load(f))
        os.remove(path)
    truth = build_truth(pieces)
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
        f.write("\n")
    neutralize(out)
    print(f"{WORLD} ranks in {time.time() - start:.1f}s; differing: {truth['differing_files']}; first NaN: {truth['nan']['first']}")


if __name__ == "__main__":
    main()
