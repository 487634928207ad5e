#!/usr/bin/env python3
"""Writes the autotune test trees (docs/formats.md §7). Run from this folder; output is committed.

No real NPU run exists, so these trees are built to the documented layout: kernel names
`autofused_<sorted original_aten ops>_<md5>`, the `inductor_asc` log format
`[%(asctime)s] [RANK<r>] [%(levelname)s] %(message)s`, cache folders
`<cache>/ascendc/host_<h>/<kernel>/<md5>/` whose `optimize_tiling` holds
`<tiling_repr>|<workspace>|<block_dim>` and whose winner's kernel_key = md5(that line).
"""
import hashlib, os, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
MLP = os.path.join(HERE, "../../fixtures/inductor/a_mlp_inference/torch_compile_debug")
RUN = "run_2026_01_01_12_00_00_000000-pid_4242"
CACHE_ABS = "/home/dev/run/inductor_cache"  # what the log names; the tree holds it as inductor_cache/
HOST = "host_devbox"


def md5(s):
    return hashlib.md5(s.encode()).hexdigest()


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, mode) as f:
        f.write(text)


def tiling_line(tile, ub, block_dim):
    return f"TilingData(tile_len={tile}, ub_size={ub}, tail_len={tile // 4})|{16 * tile}|{block_dim}"


def log_line(t, msg, level="INFO", rank=0):
    return f"[2026-01-01 12:00:{t:02d}] [RANK{rank}] [{level}] {msg}\n"


class Kernel:
    def __init__(self, ops, tilings, timings=None, best=None, choices=None):
        self.ops = ops
        self.name = "autofused_" + "_".join(ops) + "_" + md5("src:" + "_".join(ops))
        self.cache_hash = md5("cache:" + self.name)
        self.lines = [tiling_line(*t) for t in tilings]
        self.keys = [md5(l) for l in self.lines]
        self.timings = timings
        self.best = best
        self.choices = choices or len(tilings) * 2

    def cache_dir(self, root):
        return os.path.join(root, "inductor_cache/ascendc", HOST, self.name, self.cache_hash)

    def cache_abs(self):
        return f"{CACHE_ABS}/ascendc/{HOST}/{self.name}/{self.cache_hash}"

    def debug_dir(self, root, topn=True):
        d = os.path.join(root, "torch_compile_debug", RUN, "torchinductor/model__0_inference_0.0", self.name)
        imp = "from autofuse.compile_adapter import {}\n\n"
        write(f"{d}/asc_graph.py", f"# AscGraph of {self.name}\nimport autofuse.pyautofuse as ascir\n\n"
              f"graph = ascir.HintGraph('{self.name}')\n" + "".join(
                  f"{op} = ascir.ops.{op.capitalize()}('{op}')\n" for op in self.ops))
        write(f"{d}/inductor_wrapper.cpp", f"// host wrapper of {self.name}\nextern \"C\" int wrapper(void* stream, void** args);\n")
        write(f"{d}/inductor_tiling_wrapper.cpp", f"// tiling wrapper of {self.name}\nextern \"C\" int tiling(void* tiling_data, int* block_dim);\n")
        write(f"{d}/benchmark.py", "import argparse\n\n\ndef main():\n    p = argparse.ArgumentParser()\n"
              "    p.add_argument('--mode', choices=['profile', 'precision'])\n    p.parse_args()\n\n\n"
              "if __name__ == '__main__':\n    main()\n")
        write(f"{d}/graph.svg", '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>\n')
        if topn:
            write(f"{d}/asc_tiling.py", imp.format("host_compile") + f"tiling_def = r'''{self.lines[0].split('|')[0]}'''\n"
                  "host_compile(tiling_def)\n")
            for line, key in zip(self.lines, self.keys):
                write(f"{d}/asc_kernel_{key}.py", imp.format("kernel_compile") +
                      f"tiling_def = r'''{line.split('|')[0]}'''\nkernel_key = '{key}'\nkernel_compile(tiling_def)\n")
        else:
            write(f"{d}/asc_kernel.py", imp.format("jit_compile") + "jit_compile()\n")
        return d

    def cache(self, root, winner_line=None):
        d = self.cache_dir(root)
        for f in ["wrapper.so", "tiling.so", "compile.lock"]:
            write(f"{d}/{f}", "")
        write(f"{d}/asc_tiling.py", "from autofuse.compile_adapter import host_compile\n")
        for key in self.keys:
            write(f"{d}/static_kernel/{key}/kernel.so", "")
        line = winner_line if winner_line is not None else self.lines[self.best]
        write(f"{d}/optimize_tiling", line)

    def log(self, t0, complete=True):
        out = log_line(t0, f"Static compile {self.name}, choice top {len(self.lines)} from {self.choices}")
        if self.timings is None:
            return out
        out += log_line(t0 + 5, f"Autotune completed {self.cache_abs()}, best kernel index: {self.best}, detail:")
        for key, us in zip(self.keys, self.timings):
            out += log_line(t0 + 5, f"Kernel {self.cache_abs()}/static_kernel/{key}/kernel.so: Timing = {us:.2f} us")
        return out


def base_tree(root):
    if os.path.exists(root):
        shutil.rmtree(root)
    src = os.path.join(MLP, "run_2026_11_29_11_44_41_700617-pid_28980/torchinductor/model__0_inference_0.0")
    dst = os.path.join(root, "torch_compile_debug", RUN, "torchinductor/model__0_inference_0.0")
    os.makedirs(dst)
    for f in ["fx_graph_readable.py", "fx_graph_transformed.py"]:
        shutil.copy(os.path.join(src, f), dst)
    write(f"{dst}/layout_check.log", "")
    write(f"{dst}/kernel_args_dump.log", "")


# topn/: every piece of evidence present and consistent.
root = os.path.join(HERE, "topn")
base_tree(root)
gelu = Kernel(["add", "erf", "mul"], [(512, 65536, 8), (1024, 131072, 8), (2048, 196608, 4)],
              timings=[15.72, 9.81, 21.05], best=1, choices=8)
perm = Kernel(["permute"], [(256, 32768, 2), (128, 16384, 4)], timings=[3.95, 4.10], best=0, choices=2)
jit = Kernel(["addmm"], [(64, 8192, 1)])
for k in (gelu, perm):
    k.debug_dir(root)
    k.cache(root)
jit.debug_dir(root, topn=False)
console = ("W0101 12:00:00.000000 4242 torch/_inductor/config.py:1] TORCHINDUCTOR_ASCENDC_AUTOTUNE_TOPN=3\n"
           + gelu.log(1) + "step 0 loss 0.6931\n" + perm.log(10) + "step 1 loss 0.6902\n")
write(f"{root}/console.log", console)

# incomplete/: each kernel lacks something.
root = os.path.join(HERE, "incomplete")
base_tree(root)
# Log only: no debug folder, no cache entry.
sub = Kernel(["sub"], [(256, 32768, 4), (512, 65536, 4)], timings=[7.5, 6.25], best=1)
# optimize_tiling holds candidate 0 while the log says candidate 2 won: the kernel-key check fails.
div = Kernel(["div"], [(128, 16384, 2), (256, 32768, 4), (512, 65536, 8)], timings=[12.0, 8.5, 5.25], best=2)
div.debug_dir(root)
div.cache(root, winner_line=div.lines[0])
# Compiled and profiled, then the log was cut inside the first timing line.
exp = Kernel(["exp"], [(64, 8192, 1), (128, 16384, 2)], timings=None)
# A Top-N debug folder with no log lines at all: no timings.
neg = Kernel(["neg"], [(64, 8192, 1), (128, 16384, 2), (256, 32768, 2)])
neg.debug_dir(root)
# A cache entry whose optimize_tiling is not `tiling|workspace|block_dim`.
relu = Kernel(["relu"], [(64, 8192, 1)])
relu.best = 0
relu.cache(root, winner_line="corrupt")
text = sub.log(1) + div.log(10) + exp.log(20)
# The log was cut mid-line (the process was killed while writing it).
cut = f"Kernel {exp.cache_abs()}/static_kernel/{exp.keys[0]}/kern"
text += log_line(30, "Autotune completed " + exp.cache_abs() + ", best kernel index: 0, detail:") + log_line(30, cut)[:-1]
write(f"{root}/console.log", text)
