"""Which pass, exactly (issue 54, `fxray bisect`): small runs made with real torch on CPU through
the npugraph_ex layout (tests/e2e/scale/npugraph_ex_sim, one FX file per pass), each with the
stage dumps npugraph_ex writes (`dump_original`, `dump_optimized`, `dump_reference`, as
tests/e2e/stage_faults.py makes them) so a replay takes its inputs from them, and with torch's
own answer beside it.

    python bisect_cases.py OUT [CASE…]

Cases (one folder each):
- two_passes: one node changed in place by two passes: apply_pattern_passes turns `x * 0.5`
              into `x / 2.0` (exact), post_grad_custom_post_pass changes the divisor to 2.004.
              Only the second is guilty; the model's output, after a final RMS norm, stays
              within torch's float64 rule;
- custom_op:  apply_pattern_passes fuses an RMS norm into `npu.npu_rms_norm` (a torch_npu op the
              replay has a reference for; registered here with that same reference so torch can
              run it) and post_grad_custom_post_pass turns `x * 3.0` into `fxray_case.scale3`, an
              op nothing outside this process knows. Every pass is right;
- const_fold: constant folding (post_grad_custom_pre_pass) turns a causal mask, a RoPE table
              and a lifted `torch.tensor` constant into get_attr `self._frozen_param<N>` nodes;
              pass 000 itself reads `self._tensor_constant0`. Every pass is right;
- all_right:  the stock passes only (tests/e2e/stage_faults.py's `right`);
- gelu_tanh, drop_cast, fuse_close: tests/e2e/stage_faults.py's faults, injected the same way.
              fuse_close's fused op computes in half precision; `references.py` beside it holds
              its implementation, for a replay told about it.

`truth.json` beside each, from torch itself:
- `guilty`: the pass (file number, name) that broke the numbers and its node (its name in that
  pass's graph, and the node it replaced), or null; `consumers`: the guilty node's users;
- `passes`: every pass file (relative path, number, name) with, for every node, the sha256 of
  its value (contiguous bytes, dtype, shape: replay.py's `tensor_hash`) from
  `torch.fx.Interpreter` running the real GraphModule captured at that pass, float32, CPU, on
  the inputs the dumps were made with; and `pairs` (node -> node of the pass before) from
  FX's own `replace_all_uses_with` calls;
- `hashes64`: the same for pass 000 cast by torch's `cast_to_fp64` (the judge's reference);
- `unchecked`: nodes a replay cannot compute here (custom_op's `scale3`), with the pass that
  brought them in; `references`: ops the replay must take from its reference implementations;
- `output_same`: torch's `same` on the graph's output, original against optimized.
`inputs.pt` holds the graph's inputs as one torch.save'd tuple.
"""

import copy
import hashlib
import json
import os
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ASSETS = HERE.parent.parent / "assets"
CASES = ("two_passes", "custom_op", "const_fold", "all_right", "gelu_tanh", "drop_cast",
         "fuse_close")

# the fused kernel of fuse_close, as a user would hand it to the replay
REFERENCES_PY = '''import torch


def add_rsqrt(v, eps):
    # the fused kernel's flaw: it computes in half precision
    return torch.rsqrt((v + eps).half()).to(v.dtype)


REFERENCES = {"fxray_npu::add_rsqrt": add_rsqrt}
'''


def tensor_hash(t):
    """sha256 of contiguous bytes + dtype + shape; written out again (not imported from the
    replay) so the truth does not depend on the code it checks."""
    import ctypes
    c = t.detach().cpu().resolve_conj().resolve_neg().contiguous()
    h = hashlib.sha256()
    n = c.numel() * c.element_size()
    if n:
        h.update(ctypes.string_at(c.data_ptr(), n))
    h.update(str(c.dtype).encode())
    h.update(str(list(c.shape)).encode())
    return h.hexdigest()


def child(case, root):
    sys.path.insert(0, str(HERE / "scale"))
    sys.path.insert(0, str(ASSETS))
    import torch
    import torch.fx as fx
    import torch.nn.functional as F
    from torch._dynamo.utils import same

    import npugraph_ex_sim as nge
    from npugraph_ex_sim import passes, stage_dump
    from npugraph_ex_sim.graph_transform_observer import GraphTransformObserver
    import replay as rp_ref  # the replay's reference of npu_rms_norm, so torch runs the same

    aten = torch.ops.aten

    @torch.library.custom_op("fxray_npu::add_rsqrt", mutates_args=())
    def add_rsqrt(v: torch.Tensor, eps: float) -> torch.Tensor:
        return torch.rsqrt((v + eps).half()).to(v.dtype)

    @add_rsqrt.register_fake
    def _(v, eps):
        return torch.empty_like(v)

    @torch.library.custom_op("npu::npu_rms_norm", mutates_args=())
    def npu_rms_norm(x: torch.Tensor, gamma: torch.Tensor, epsilon: float) -> tuple[torch.Tensor, torch.Tensor]:
        y, rstd = rp_ref.npu_rms_norm(x, gamma, epsilon)
        return y, rstd

    @npu_rms_norm.register_fake
    def _(x, gamma, epsilon):
        dims = x.shape[:x.dim() - gamma.dim()] + (1,) * gamma.dim()
        return torch.empty_like(x), x.new_empty(dims, dtype=torch.float32)

    @torch.library.custom_op("fxray_case::scale3", mutates_args=())
    def scale3(x: torch.Tensor) -> torch.Tensor:
        return x * 3.0

    @scale3.register_fake
    def _(x):
        return torch.empty_like(x)

    # ------------------------------------------------------------------ models
    class Block(torch.nn.Module):
        """tests/e2e/stage_faults.py's block: bf16 hidden states, a norm, a GELU MLP."""

        def __init__(self, d=16):
            super().__init__()
            self.fc1 = torch.nn.Linear(d, 4 * d)
            self.fc2 = torch.nn.Linear(4 * d, d)
            self.w = torch.nn.Parameter(torch.randn(d))

        def forward(self, x):
            hf = x.float()
            mu = hf.mean(-1, keepdim=True)
            xc = hf - mu
            var = (xc * xc).mean(-1, keepdim=True)
            h = xc * torch.rsqrt(var + 1e-6) * self.w
            return self.fc2(F.gelu(self.fc1(h))) * 2.0

    class TwoPasses(torch.nn.Module):
        """A halving inside the MLP and an RMS norm at the end: a uniform 0.2 % error on the
        halving is normalised away at the output."""

        def __init__(self, d=16):
            super().__init__()
            self.fc1 = torch.nn.Linear(d, 4 * d)
            self.fc2 = torch.nn.Linear(4 * d, d, bias=False)  # so a scale error stays a scale
            self.w = torch.nn.Parameter(torch.ones(d) + 0.1 * torch.randn(d))

        def forward(self, x):
            h = F.silu(self.fc1(x)) * 0.5
            y = self.fc2(h)
            return y * torch.rsqrt(y.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w

    class Custom(torch.nn.Module):
        def __init__(self, d=16):
            super().__init__()
            self.fc1 = torch.nn.Linear(d, d)
            self.fc2 = torch.nn.Linear(d, d)
            self.w = torch.nn.Parameter(torch.ones(d) + 0.1 * torch.randn(d))

        def forward(self, x):
            h = self.fc1(x)
            h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w
            return self.fc2(F.silu(h) * 3.0)

    class Folded(torch.nn.Module):
        def __init__(self, d=16):
            super().__init__()
            self.fc = torch.nn.Linear(d, d)

        def forward(self, x):
            t, d = x.shape[1], x.shape[2]
            mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
            inv = 1.0 / (10000 ** (torch.arange(0, d, 2, dtype=torch.float32) / d))
            ang = torch.outer(torch.arange(t, dtype=torch.float32), inv)
            scale = torch.tensor([0.5, 1.5, 2.0, 1.0] * (d // 4))
            h = self.fc(x) * torch.cat([ang.cos(), ang.sin()], -1) * scale
            s = (h @ h.transpose(-1, -2)).masked_fill(mask, float("-inf")).softmax(-1)
            return s @ h

    # ------------------------------------------------------------------ faults and rewrites
    guilty = {}

    def is_cast(n, dtype):
        return (isinstance(n, fx.Node) and n.op == "call_function"
                and ((n.target == aten._to_copy.default and n.kwargs.get("dtype") == dtype)
                     or (n.target == torch.ops.prims.convert_element_type.default
                         and n.args[1] == dtype)))

    def gelu_tanh(gm):
        for n in list(gm.graph.find_nodes(op="call_function", target=aten.gelu.default)):
            new = passes._new_node(gm, aten.gelu.default, (n.args[0],), like=n,
                                   kwargs={"approximate": "tanh"})
            n.replace_all_uses_with(new)
            gm.graph.erase_node(n)
            guilty.update(node=new.name, replaced=n.name)

    def drop_cast(gm):
        for n in list(gm.graph.find_nodes(op="call_function", target=aten.mean.dim)):
            src = n.args[0]
            low = passes._val(src.args[0]) if isinstance(src, fx.Node) else None
            if is_cast(src, torch.float32) and getattr(low, "dtype", None) == torch.bfloat16:
                before = n.name
                n.replace_input_with(src, src.args[0])
                fm = passes._fake_mode(gm)
                with fm:
                    a, kw = fx.node.map_arg((n.args, n.kwargs), lambda x: x.meta["val"])
                    n.meta["val"] = n.target(*a, **kw)
                guilty.update(node=n.name, replaced=before)
                return

    def fuse_close(gm):
        for r in list(gm.graph.find_nodes(op="call_function", target=aten.rsqrt.default)):
            add = r.args[0]
            if add.target == aten.add.Tensor and not isinstance(add.args[1], fx.Node):
                new = passes._new_node(gm, torch.ops.fxray_npu.add_rsqrt.default,
                                       (add.args[0], float(add.args[1])), like=r)
                r.replace_all_uses_with(new)
                guilty.update(node=new.name, replaced=r.name)

    def halve_as_div(gm):
        # x * 0.5 -> x / 2.0 in place (the node keeps its name): exact in binary floating point
        for n in list(gm.graph.find_nodes(op="call_function", target=aten.mul.Tensor)):
            if len(n.args) == 2 and n.args[1] == 0.5:
                n.target = aten.div.Tensor
                n.args = (n.args[0], 2.0)
                guilty.setdefault("first_touch", n.name)

    def wrong_divisor(gm):
        for n in list(gm.graph.find_nodes(op="call_function", target=aten.div.Tensor)):
            if len(n.args) == 2 and n.args[1] == 2.0:
                n.args = (n.args[0], 2.004)
                guilty.update(node=n.name, replaced=n.name)

    def fuse_rms_norm(gm):
        # mul(mul(h, rsqrt(add(mean(pow(h, 2), [-1], True), eps))), w) -> npu_rms_norm(h, w, eps)[0]
        for r in list(gm.graph.find_nodes(op="call_function", target=aten.rsqrt.default)):
            add = r.args[0]
            if add.target != aten.add.Tensor:
                continue
            mean = add.args[0]
            pw = mean.args[0] if getattr(mean, "target", None) == aten.mean.dim else None
            if pw is None or pw.target != aten.pow.Tensor_Scalar or pw.args[1] != 2:
                continue
            h = pw.args[0]
            for m1 in list(r.users):
                if m1.target != aten.mul.Tensor or h not in m1.args:
                    continue
                for m2 in list(m1.users):
                    if m2.target != aten.mul.Tensor:
                        continue
                    w = m2.args[1] if m2.args[0] is m1 else m2.args[0]
                    rms = passes._new_node(gm, torch.ops.npu.npu_rms_norm.default,
                                           (h, w, float(add.args[1])), like=m2)
                    import operator
                    y = passes._new_node(gm, operator.getitem, (rms, 0), like=m2)
                    m2.replace_all_uses_with(y)
                    guilty.setdefault("references", []).append(rms.name)
        gm.graph.eliminate_dead_code()

    def scale3_op(gm):
        for n in list(gm.graph.find_nodes(op="call_function", target=aten.mul.Tensor)):
            if len(n.args) == 2 and n.args[1] == 3.0:
                new = passes._new_node(gm, torch.ops.fxray_case.scale3.default, (n.args[0],), like=n)
                n.replace_all_uses_with(new)
                gm.graph.erase_node(n)
                guilty.setdefault("unchecked", []).append(new.name)

    inject = {
        "gelu_tanh": [("apply_pattern_passes", gelu_tanh)],
        "drop_cast": [("post_grad_custom_pre_pass", drop_cast)],
        "fuse_close": [("post_grad_custom_post_pass", fuse_close)],
        "two_passes": [("apply_pattern_passes", halve_as_div),
                       ("post_grad_custom_post_pass", wrong_divisor)],
        "custom_op": [("apply_pattern_passes", fuse_rms_norm),
                      ("post_grad_custom_post_pass", scale3_op)],
    }
    faulty = {"gelu_tanh", "drop_cast", "fuse_close", "two_passes"}
    pipeline = list(passes.SHORT_PIPELINE)
    names = [n for n, _ in pipeline]
    for pname, fault in inject.get(case, []):
        def wrap(fn, fault):
            def run(gm, example_inputs=None, config=None):
                # the fault first: a later rewrite in the same pass (GELU decomposition) must
                # not consume the node the fault targets
                fault(gm)
                return fn(gm, example_inputs, config)
            return run
        pipeline = [(n, wrap(fn, fault) if n == pname else fn) for n, fn in pipeline]
    if case in faulty:
        pname = inject[case][-1][0]
        guilty["pass"] = pname
        guilty["pass_index"] = 1 + names.index(pname)

    # every node a pass replaces, as FX itself records it, per pass: old name -> new name
    replaced, current = {}, [None]
    rauw = fx.Node.replace_all_uses_with

    def record(self, new, *a, **k):
        if isinstance(new, fx.Node) and current[0] is not None:
            replaced.setdefault(current[0], {})[self.name] = new.name
        return rauw(self, new, *a, **k)

    fx.Node.replace_all_uses_with = record

    def named(i, fn):
        def run(gm, example_inputs=None, config=None):
            current[0] = i
            try:
                return fn(gm, example_inputs, config)
            finally:
                current[0] = None
        return run

    pipeline = [(n, named(1 + i, fn)) for i, (n, fn) in enumerate(pipeline)]

    torch.manual_seed(0)
    model = {"two_passes": TwoPasses, "custom_op": Custom, "const_fold": Folded}.get(case, Block)
    m = model().eval()
    cfg = nge.CompilerConfig(pipeline=pipeline, trace_nodes=False)
    cm = torch.compile(m, backend=nge.get_npu_backend(cfg), fullgraph=True)
    x = torch.randn(2, 8, 16)
    if model is Block:
        x = x.to(torch.bfloat16)

    snaps = []
    with stage_dump.Capture() as graphs, torch.no_grad():
        inner = GraphTransformObserver.dump_gm

        def keep_every(observer, gm, file_name):
            # the GraphModule exactly as this pass's file prints it; copied outside the fake
            # mode the compile runs under, which refuses to copy real constants (const_fold)
            from torch.utils._python_dispatch import _disable_current_modes
            with _disable_current_modes():
                snaps.append((GraphTransformObserver._file_count, file_name, copy.deepcopy(gm)))
                return inner(observer, gm, file_name)

        GraphTransformObserver.dump_gm = keep_every
        cm(x)
    fx.Node.replace_all_uses_with = rauw
    args = graphs.args
    torch.save(tuple(args), os.path.join(root, "inputs.pt"))

    orig, orig_out = stage_dump.dump(graphs.original, args, os.path.join(root, "dump_original"))
    opt, opt_out = stage_dump.dump(graphs.optimized, args, os.path.join(root, "dump_optimized"))
    ref_gm, ref_args = stage_dump.reference(graphs.original, args)
    _, ref_out = stage_dump.dump(ref_gm, ref_args, os.path.join(root, "dump_reference"))

    def hashes(gm, inputs):
        out = {}

        class Hasher(fx.Interpreter):
            def run_node(self, n):
                v = super().run_node(n)
                if isinstance(v, torch.Tensor) and n.op != "output":
                    out[n.name] = tensor_hash(v)
                return v

        with torch.no_grad():
            Hasher(gm).run(*inputs)
        return out

    files = sorted(Path(root).glob("torch_compile_debug/*/npugraph_ex/model__0/forward/[0-9]*.txt"))
    by_number = {int(f.name[:3]): f for f in files}
    pass_truth = []
    prev_names = None
    for number, file_name, gm in snaps:
        f = by_number[number]
        names_now = {n.name for n in gm.graph.nodes if n.op != "output"}
        pairs = {}
        if prev_names is not None:
            pairs = {n: n for n in names_now & prev_names}
            for old, new in replaced.get(number, {}).items():
                # the end of the chain of replacements within this pass
                seen = 0
                while new in replaced.get(number, {}) and seen < 64:
                    new, seen = replaced[number][new], seen + 1
                # (the replaced node may linger, dead, until eliminate_dead_code)
                if new in names_now and new not in prev_names and old in prev_names:
                    pairs[new] = old
        pass_truth.append({"index": number, "name": "graph" if file_name == "graph"
                           else file_name[len("graph_after_"):],
                           "file": str(f.relative_to(root)), "hashes": hashes(gm, args),
                           "pairs": pairs})
        prev_names = names_now
    g64, a64 = stage_dump.reference(snaps[0][2], args)
    truth = {"case": case, "torch": torch.__version__, "passes": pass_truth,
             "hashes64": hashes(g64, a64),
             "output_same": bool(same(orig_out, opt_out, ref_out, exact_dtype=False,
                                      log_error=lambda *a, **k: None)),
             "guilty": None, "unchecked": [], "references": []}
    if case in faulty:
        last = snaps[guilty["pass_index"]][2]
        node = next(n for n in last.graph.nodes if n.name == guilty["node"])
        truth["guilty"] = {"index": guilty["pass_index"], "name": guilty["pass"],
                           "node": guilty["node"], "replaced": guilty["replaced"],
                           "consumers": sorted(u.name for u in node.users)}
        if case == "two_passes":
            truth["guilty"]["first_touch"] = {"index": 1 + names.index("apply_pattern_passes"),
                                              "node": guilty["first_touch"]}
    if case == "custom_op":
        truth["unchecked"] = [{"node": n, "since": 1 + names.index("post_grad_custom_post_pass"),
                               "target": "fxray_case.scale3.default"} for n in guilty["unchecked"]]
        truth["references"] = ["npu.npu_rms_norm.default"]
    if case == "fuse_close":
        with open(os.path.join(root, "references.py"), "w") as f:
            f.write(REFERENCES_PY)
        truth["references_file"] = "references.py"
        truth["references"] = ["fxray_npu.add_rsqrt.default"]
    with open(os.path.join(root, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1, sort_keys=True)
    print(json.dumps({"case": case, "passes": len(pass_truth), "guilty": truth["guilty"],
                      "output_same": truth["output_same"]}))


def main():
    if sys.argv[1] == "--child":
        return child(sys.argv[2], sys.argv[3])
    sys.path.insert(0, str(HERE / "scale"))
    import debug_run
    out = Path(sys.argv[1]).resolve()
    for case in sys.argv[2:] or CASES:
        if case not in CASES:
            sys.exit(f"unknown case {case}; cases: {', '.join(CASES)}")
        root = out / case
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True, exist_ok=True)
        rc = debug_run.child(__file__, [case, root], root)
        if rc:
            sys.exit(rc)
        # torch's trace log is not part of these cases
        shutil.rmtree(root / "torch_compile_debug" / "tlparse", ignore_errors=True)


if __name__ == "__main__":
    main()
