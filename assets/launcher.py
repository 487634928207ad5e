"""fxray's launcher: runs a user's script as if started directly, after the imports and the
torch.compile backend that fxray was asked for.

    python launcher.py [options] -- script.py [args...]

It sets no environment variable: fxray builds the environment (TORCH_COMPILE_DEBUG=1 and the
rest) before Python starts, because torch reads it at import time. What it does, in order:

1. imports torch_npu, then npugraph_ex or torchair, when they are installed. They must come
   before torch.distributed is initialised: npugraph_ex adds the "-rank_R" suffix to the run
   folder only when it is imported first.
2. with --backend other than "script", makes every torch.compile(...) call in the script use
   that backend (the script's own backend= and mode= are replaced; its other arguments kept).
3. runs the script with runpy as "__main__", with sys.argv[0] = the script and sys.argv[1:] =
   its arguments, and its folder first on sys.path, exactly as `python script.py args` would.

A backend that is not installed stops here with one line on stderr and exit code 3.
"""

import argparse
import importlib
import os
import runpy
import sys

BACKENDS = ("script", "npugraph_ex", "torchair", "inductor", "aot_eager")
MODES = ("max-autotune", "reduce-overhead", "npugraph_ex")


def fail(message):
    sys.stderr.write("fxray launcher: " + message + "\n")
    sys.exit(3)


def parse(argv):
    if "--" not in argv:
        fail("usage: launcher.py [options] -- script.py [args...]")
    cut = argv.index("--")
    p = argparse.ArgumentParser(prog="launcher.py")
    p.add_argument("--backend", choices=BACKENDS, default="script")
    p.add_argument("--mode", choices=MODES, default=None,
                   help="torchair: CompilerConfig.mode")
    p.add_argument("--data-dump", metavar="PATH", default=None,
                   help="dump every node's tensors as .npy under PATH")
    p.add_argument("--deadlock-check", action="store_true")
    opts = p.parse_args(argv[:cut])
    rest = argv[cut + 1:]
    if not rest:
        fail("no script given after --")
    return opts, rest[0], rest[1:]


def optional_import(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def backend_for(opts, npu_ext):
    """The object or name to pass as torch.compile(backend=...), plus extra compile kwargs."""
    if opts.backend == "inductor" or opts.backend == "aot_eager":
        return opts.backend, {}
    if opts.backend == "npugraph_ex":
        if npu_ext is None or npu_ext.__name__ != "npugraph_ex":
            fail("backend npugraph_ex is not installed (pip install npugraph_ex, with torch_npu)")
        options = {}
        if opts.data_dump:
            options.update({"force_eager": True, "dump_tensor_data": True,
                            "data_dump_dir": opts.data_dump})
        if opts.deadlock_check:
            options["deadlock_check"] = True
        return "npugraph_ex", ({"options": options} if options else {})
    # torchair
    torchair = optional_import("torchair")
    if torchair is None:
        fail("backend torchair is not installed (it ships with torch_npu)")
    config = torchair.CompilerConfig()
    if opts.mode:
        config.mode = opts.mode
    if opts.data_dump:
        config.debug.data_dump.type = "npy"
        config.debug.data_dump.path = opts.data_dump
    if opts.deadlock_check:
        config.debug.aclgraph.deadlock_check = True
    return torchair.get_npu_backend(compiler_config=config), {}


def override_compile(torch, backend, extra):
    original = torch.compile

    def compile(model=None, **kwargs):
        kwargs["backend"] = backend
        kwargs.pop("mode", None)
        if "options" in extra:
            kwargs.pop("options", None)
        kwargs.update(extra)
        if model is None:  # used as @torch.compile(...)
            return lambda m: original(m, **kwargs)
        return original(model, **kwargs)

    torch.compile = compile


def main():
    opts, script, args = parse(sys.argv[1:])
    if not os.path.isfile(script):
        fail("no such script: " + script)
    torch = None
    npu_ext = None
    if opts.backend != "script" or optional_import("torch") is not None:
        torch = optional_import("torch")
        if torch is None:
            fail("torch is not installed in " + sys.executable)
        optional_import("torch_npu")
        npu_ext = optional_import("npugraph_ex") or optional_import("torchair")
    if opts.backend != "script":
        backend, extra = backend_for(opts, npu_ext)
        override_compile(torch, backend, extra)
    sys.argv = [script] + list(args)
    # `python script.py` puts the script's folder first on sys.path, where ours is now.
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    sys.stdout.flush()
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
