"""Real msprobe (mindstudio-probe 26.x, CPU) output for fxray's msprobe reader (issue 24, part 1).

One small model, module_truth.py's LLaMA-style decoder (2 layers, D=16), trained two steps:
- compiled once through module_truth's npugraph_ex-layout writer (forward and backward pass
  graphs, `torch_compile_debug/…/npugraph_ex/model__0/`), so the dumps have FX graphs of the
  same model to link against;
- run eagerly under msprobe's PrecisionDebugger, one process per configuration (the debugger is
  a singleton), each into its own dump root:

    statistics_L0/  statistics_L1/  statistics_mix/   task statistics, steps 0 and 1
    md5_mix/                                          summary_mode md5 (a crc32), step 0
    tensor_L0/                                        task tensor (.pt files), steps 0 and 1
    gloo_mix/                                         2 ranks over gloo on 127.0.0.1, step 0

  Without torch.distributed msprobe writes `step<N>/proc<PID>/`, with it `step<N>/rank<R>/`.

truth.json records msprobe's own answer beside them: per dump root and step folder the task,
level, entry count, keys per kind, and in tensor mode, for every `.pt`, torch's own
max/min/mean/norm of the loaded tensor next to the statistics dump.json gives it.

Paths inside the files are rewritten to neutral ones: this folder → /home/dev/models/gen (as
module_truth.py writes the FX graphs, so stack frames and graph source lines name the same
file), the Python prefix → /home/dev/venv, the output folder → /home/dev/dump.

Usage: python msprobe_real.py OUT_DIR
"""

import glob
import json
import os
import socket
import subprocess
import sys
import sysconfig
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402

import module_truth as mt  # noqa: E402

STEPS = 2
CONFIGS = {
    # name: (task, level, summary_mode, steps)
    "statistics_L0": ("statistics", "L0", "statistics", [0, 1]),
    "statistics_L1": ("statistics", "L1", "statistics", [0, 1]),
    "statistics_mix": ("statistics", "mix", "statistics", [0, 1]),
    "md5_mix": ("statistics", "mix", "md5", [0]),
    "tensor_L0": ("tensor", "L0", "statistics", [0, 1]),
}
GLOO = ("gloo_mix", "statistics", "mix", "statistics", [0])


def config(out, task, level, summary_mode, steps):
    return {
        "task": task,
        "dump_path": out,
        "rank": [],
        "step": steps,
        "level": level,
        "statistics": {"scope": [], "list": [], "data_mode": ["all"], "summary_mode": summary_mode},
        "tensor": {"scope": [], "list": [], "data_mode": ["all"]},
    }


def train(model, steps, before=None, after=None, distributed=False):
    """Two SGD steps of the model on fixed random ids; `before`/`after` wrap each step."""
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    g = torch.Generator().manual_seed(1)
    for _ in range(steps):
        if before:
            before()
        ids = torch.randint(0, mt.VOCAB, (mt.B, mt.T), generator=g)
        loss = model(ids).float().pow(2).mean()
        loss.backward()
        if distributed:
            import torch.distributed as dist

            for p in model.parameters():
                dist.all_reduce(p.grad)
        opt.step()
        opt.zero_grad()
        if after:
            after()


def one(cfg_path):
    """In a fresh process: the model trained under PrecisionDebugger with `cfg_path`."""
    from msprobe.pytorch import PrecisionDebugger

    distributed = "RANK" in os.environ
    if distributed:
        import torch.distributed as dist

        dist.init_process_group("gloo", init_method="env://")
    torch.manual_seed(0)
    model = mt.Llama(n_layers=2)
    dbg = PrecisionDebugger(config_path=cfg_path)

    def after():
        dbg.stop()
        dbg.step()

    train(model, STEPS, before=lambda: dbg.start(model), after=after, distributed=distributed)
    if distributed:
        dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_config(out, name, task, level, summary_mode, steps, ranks=1):
    dump = os.path.join(out, name)
    cfg = os.path.join(out, f".{name}.config.json")
    with open(cfg, "w") as f:
        json.dump(config(dump, task, level, summary_mode, steps), f)
    env = dict(os.environ)
    procs = []
    port = str(free_port())
    for r in range(ranks):
        if ranks > 1:
            env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(ranks), LOCAL_RANK=str(r),
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        log = open(os.path.join(out, f".{name}.{r}.log"), "w")
        procs.append(subprocess.Popen([sys.executable, __file__, "--one", cfg], env=env,
                                      stdout=log, stderr=subprocess.STDOUT, cwd=out))
    for p in procs:
        if p.wait() != 0:
            sys.exit(f"msprobe run {name} failed: see {out}/.{name}.*.log")
    os.remove(cfg)
    for r in range(ranks):
        os.remove(os.path.join(out, f".{name}.{r}.log"))
    print(f"{name}: {task} {level} {summary_mode} steps {steps} ranks {ranks}")


def compile_graphs(out):
    torch.manual_seed(0)
    torch._dynamo.reset()
    stamp = time.strftime("%Y_%m_%d_%H_%M_%S", time.gmtime()) + "_000000"
    run = os.path.join(out, "torch_compile_debug", f"run_{stamp}-pid_{os.getpid()}")
    model_dir = os.path.join(run, "npugraph_ex", "model__0")
    model = mt.Llama(n_layers=2)
    compiled = torch.compile(model, backend=mt.backend_for(model_dir), fullgraph=True)
    train(compiled, 1)
    print(f"graphs: {model_dir}")


def kind(key):
    p = key.split(".")
    if p[0] == "Module":
        return "module_" + ("parameters_grad" if p[-2] == "parameters_grad" else p[-2])
    return "api_" + p[-1]


def tensor_records(v):
    if isinstance(v, dict) and v.get("type") == "torch.Tensor":
        yield v
    elif isinstance(v, dict):
        for x in v.values():
            yield from tensor_records(x)
    elif isinstance(v, list):
        for x in v:
            yield from tensor_records(x)


def truth(out):
    t = {"torch": torch.__version__, "msprobe": msprobe_version(), "dumps": {}}
    for name in sorted(os.listdir(out)):
        folders = sorted(glob.glob(os.path.join(out, name, "step*", "*", "dump.json")))
        if not folders:
            continue
        d = t["dumps"][name] = {}
        for p in folders:
            rel = os.path.relpath(os.path.dirname(p), os.path.join(out, name))
            j = json.load(open(p))
            stack = json.load(open(os.path.join(os.path.dirname(p), "stack.json")))
            construct = json.load(open(os.path.join(os.path.dirname(p), "construct.json")))
            kinds = {}
            for k in j["data"]:
                kinds[kind(k)] = kinds.get(kind(k), 0) + 1
            rec = {"task": j["task"], "level": j["level"], "entries": len(j["data"]), "kinds": kinds,
                   "stack_groups": len(stack), "construct": len(construct),
                   "stacked_keys": sum(len(v[0]) for v in stack.values())}
            tensors = [r for v in j["data"].values() for r in tensor_records(v)]
            rec["tensors"] = len(tensors)
            rec["md5"] = sum(1 for r in tensors if "md5" in r)
            if j["task"] == "tensor":
                files = {}
                for r in tensors:
                    x = torch.load(os.path.join(os.path.dirname(p), "dump_tensor_data", r["data_name"]),
                                   weights_only=True)
                    f = x.detach().double()
                    own = None
                    if x.numel() and x.dtype.is_floating_point:
                        own = {"max": f.max().item(), "min": f.min().item(), "mean": f.mean().item(),
                               "norm": f.norm().item()}
                    files[r["data_name"]] = {"dtype": str(x.dtype), "shape": list(x.shape), "torch": own,
                                             "msprobe": {k: r.get(k) for k in ("Max", "Min", "Mean", "Norm")}}
                rec["files"] = files
            d[rel.split(os.sep)[0] + "/" + ("proc" if rel.split(os.sep)[1].startswith("proc") else rel.split(os.sep)[1])] = rec
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(t, f, indent=1, sort_keys=True)
        f.write("\n")


def msprobe_version():
    from importlib.metadata import version

    return version("mindstudio-probe")


def neutral(out):
    """Absolute paths in every JSON and graph text → neutral ones (see the module doc)."""
    prefix = sysconfig.get_paths()["purelib"]
    py = os.path.dirname(os.path.dirname(os.path.dirname(prefix)))  # …/venv
    swaps = [(os.path.abspath(out), "/home/dev/dump"), (HERE, mt.NEUTRAL), (py, "/home/dev/venv"),
             (os.path.realpath(py), "/home/dev/venv")]
    for p in glob.glob(os.path.join(out, "**", "*.json"), recursive=True) + glob.glob(
            os.path.join(out, "**", "*.txt"), recursive=True):
        text = open(p).read()
        new = text
        for a, b in swaps:
            new = new.replace(a, b)
        if new != text:
            with open(p, "w") as f:
                f.write(new)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--one":
        return one(sys.argv[2])
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = os.path.abspath(sys.argv[1])
    os.makedirs(out, exist_ok=True)
    compile_graphs(out)
    for name, (task, level, summary_mode, steps) in CONFIGS.items():
        run_config(out, name, task, level, summary_mode, steps)
    name, task, level, summary_mode, steps = GLOO
    run_config(out, name, task, level, summary_mode, steps, ranks=2)
    truth(out)
    neutral(out)


if __name__ == "__main__":
    main()
