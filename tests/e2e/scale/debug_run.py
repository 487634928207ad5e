"""Runs a script's `--child` half in a fresh interpreter whose torch.compile writes its debug
tree under a given folder (`TORCH_COMPILE_DEBUG=1`, no compile caches, so every run compiles
and dumps). Imports no torch: the parent stays light."""
import os
import subprocess
import sys


def child(script, args, out):
    """`python SCRIPT --child ARGS…` with the debug tree under `out`; its exit status."""
    env = dict(os.environ, TORCH_COMPILE_DEBUG="1", TORCH_COMPILE_DEBUG_DIR=str(out),
               TORCHINDUCTOR_FORCE_DISABLE_CACHES="1", PYTHONDONTWRITEBYTECODE="1")
    return subprocess.call([sys.executable, str(script), "--child", *map(str, args)], env=env)
