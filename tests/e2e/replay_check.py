"""Checks assets/replay.py (`fxray bisect`'s replay, issue 54) against torch's own answers on
tests/e2e/bisect_cases.py's cases.

    python replay_check.py OUT        (OUT: what `bisect_cases.py OUT` wrote)

For every case it builds the replay's plan itself, the way fxray does (every pass file, `same_as`
for identical texts, inputs from the stage dump), runs the replay in a child Python and checks:
- every pass replays bit for bit: each node's value hash equals torch's own run of that pass's
  GraphModule, and pass 000's float64 reference equals torch's `cast_to_fp64` run; a node
  without a hash must be one the case says cannot be computed here;
- each faulty case names its pass, and its node (exactly, with the pass history's pairs; with
  equal-name pairs the node or a consumer of it); two_passes names only the second pass;
  the others name none;
- an op without a reference is named as unchecked with the pass that brought it in, no crash;
- fuse_close without its references file: the fused op is unchecked, no crash;
- inputs from the optimized stage dump, and from a torch.save'd tuple (const_fold: its lifted
  constant is then unknown and said so); inputs that are not the run's are said to be so;
- the replay writes nothing into the case folder;
- the reference implementations of torch_npu ops match their formulas.
Prints one line per check and a summary; exits non-zero on any failure.
"""

import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.dont_write_bytecode = True  # it imports assets/replay.py: leave no __pycache__ in the tree
HERE = Path(__file__).resolve().parent
REPLAY = HERE.parent.parent / "assets" / "replay.py"
FAULTY = {"two_passes", "gelu_tanh", "drop_cast", "fuse_close"}

failures = []
passed = [0]


def check(ok, what):
    if ok:
        passed[0] += 1
        print(f"  ok    {what}")
    else:
        failures.append(what)
        print(f"  FAIL  {what}")
    return ok


def make_plan(root, truth, pairs=False, inputs="dump_original", references=True, report="hashes"):
    passes, seen = [], {}
    for p in truth["passes"]:
        f = root / p["file"]
        h = hashlib.sha1(f.read_bytes()).hexdigest()
        passes.append({"index": p["index"], "file": str(f), "name": p["name"], "graph": None,
                       "same_as": seen.get(h), "pairs": (p["pairs"] or None) if pairs else None,
                       "changed": None})
        seen.setdefault(h, p["index"])
    plan = {"passes": passes, "inputs": {"path": str(root / inputs), "kind": "auto"},
            "device": "cpu", "values": None, "report": report}
    if references and truth.get("references_file"):
        plan["references"] = [str(root / truth["references_file"])]
    return plan


_POOL = ThreadPoolExecutor(max(2, os.cpu_count() or 2))
_PENDING = {}


def prefetch(plan):
    """Start a replay now (a child process each, run side by side); `replay` collects it."""
    _PENDING[json.dumps(plan, sort_keys=True)] = _POOL.submit(_run, plan)


def replay(plan):
    f = _PENDING.pop(json.dumps(plan, sort_keys=True), None)
    return f.result() if f is not None else _run(plan)


def _run(plan):
    t = time.monotonic()
    r = subprocess.run([sys.executable, str(REPLAY), "-"], input=json.dumps(plan),
                       capture_output=True, text=True, timeout=600)
    events = []
    bad_lines = []
    for line in r.stdout.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            bad_lines.append(line)
    return {"rc": r.returncode, "events": events, "stderr": r.stderr, "bad": bad_lines,
            "seconds": time.monotonic() - t}


def ev(res, kind):
    return [e for e in res["events"] if e.get("event") == kind]


def answer(res):
    a = ev(res, "answer")
    return a[0] if a else None


def snapshot(root):
    return sorted((str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in root.rglob("*"))


def sane(res, what):
    ok = res["rc"] == 0 and answer(res) is not None and not res["bad"]
    if not ok:
        print(res["stderr"][-3000:])
    return check(ok, f"{what}: the replay ran to its answer (rc {res['rc']}, "
                     f"{len(res['bad'])} non-JSON lines, {res['seconds']:.1f} s)")


def case_plans(root, truth):
    plans = [make_plan(root, truth), make_plan(root, truth, pairs=True, report="answer"),
             make_plan(root, truth, inputs="dump_optimized", report="answer")]
    if truth["case"] == "fuse_close":
        plans.append(make_plan(root, truth, references=False, report="answer"))
        plans.append(make_plan(root, truth, references=False, inputs="dump_optimized",
                               report="answer"))
    if truth["case"] == "const_fold":
        plans.append(make_plan(root, truth, inputs="inputs.pt", report="answer"))
    return plans


def case_checks(root, truth, before):
    case = truth["case"]
    print(f"{case}:")
    res = replay(make_plan(root, truth))
    if not sane(res, "plan with equal-name pairs"):
        return
    check(snapshot(root) == before, "nothing written into the case folder")
    passes = {e["index"]: e for e in ev(res, "pass")}
    a = answer(res)
    unknown_ok = {u["node"] for u in truth.get("unchecked", [])}
    roots = {u["node"] for u in a["unchecked"]}
    # bit for bit, pass by pass
    for p in truth["passes"]:
        e = passes.get(p["index"])
        if not check(e is not None and "hashes" in e, f"pass {p['index']:03d} reported"):
            continue
        got, want = e["hashes"], p["hashes"]
        wrong = [n for n in got if n in want and got[n] != want[n]]
        extra = [n for n in got if n not in want]
        missing = [n for n in want if n not in got]
        check(not wrong and not extra,
              f"pass {p['index']:03d} {p['name']}: {len(got)} node values equal torch's bit for bit"
              + (f" (differ: {wrong[:5]}, unknown to torch: {extra[:5]})" if wrong or extra else ""))
        if missing:
            # only what an op the machine lacks feeds may stay uncomputed
            since = min((u["since"] for u in truth.get("unchecked", [])), default=None)
            check(since is not None and p["index"] >= since and roots <= unknown_ok,
                  f"pass {p['index']:03d}: {len(missing)} node(s) not computed "
                  f"({', '.join(missing[:4])}…), all behind an op this machine lacks")
    h64 = passes[truth["passes"][0]["index"]].get("hashes64", {})
    w64 = truth["hashes64"]
    wrong = [n for n in h64 if n in w64 and h64[n] != w64[n]]
    check(h64 and not wrong and all(n in h64 for n in w64 if n not in unknown_ok),
          f"pass 000 in float64: {len(h64)} values equal torch's cast_to_fp64 run"
          + (f" (differ: {wrong[:6]})" if wrong else ""))
    # the answer
    g, tg = a["guilty"], truth["guilty"]
    if case in FAULTY:
        ok = g is not None and g["index"] == tg["index"] and \
            (g["node"] == tg["node"] or g["node"] in tg["consumers"])
        check(ok, f"names pass {tg['index']:03d} {tg['name']} at `{tg['node']}` "
                  f"(or a consumer): {a['sentence']}")
    else:
        check(g is None, f"names no pass: {a['sentence']}")
    if case == "two_passes":
        first = truth["guilty"]["first_touch"]
        e, before = passes[first["index"]], passes[first["index"] - 1]
        n = first["node"]
        check(e["replayed"] and not e["departs"] and e["hashes"].get(n) == before["hashes"].get(n)
              and a["guilty"]["index"] != first["index"],
              f"pass {first['index']:03d} changed `{n}` exactly: replayed, bit-identical, not blamed")
        check(truth["output_same"], "torch's rule passes the model's output (outputs alone miss it)")
    for u in truth.get("unchecked", []):
        hit = [x for x in a["unchecked"] if x["node"] == u["node"]]
        check(hit and hit[0].get("since") == u["since"] and u["target"] in hit[0]["target"],
              f"`{u['node']}` ({u['target']}) named unchecked, brought in by pass {u['since']:03d}: "
              f"{hit[0] if hit else a['unchecked']}")
        check("not checked" in a["sentence"], f"the sentence says what was not checked")
    for r in truth.get("references", []):
        check(r in (a.get("references") or {}), f"{r} run by its reference implementation")
    # with the pass history's pairs, the node itself
    res2 = replay(make_plan(root, truth, pairs=True, report="answer"))
    if sane(res2, "plan with the pass history's pairs"):
        a2 = answer(res2)
        if case in FAULTY:
            g2 = a2["guilty"]
            check(g2 is not None and g2["index"] == tg["index"] and g2["node"] == tg["node"],
                  f"with pairs: names `{tg['node']}` in pass {tg['index']:03d}: {a2['sentence']}")
        else:
            check(a2["guilty"] is None, f"with pairs: names no pass")
    # the other stage's dump as inputs
    res3 = replay(make_plan(root, truth, inputs="dump_optimized", report="answer"))
    if sane(res3, "inputs from dump_optimized"):
        a3 = answer(res3)
        same_pass = (a3["guilty"] or {}).get("index") == (tg or {}).get("index")
        check(same_pass, f"inputs from the optimized dump: same pass ({a3['sentence']})")
        fed = ev(res3, "inputs")[0]["fed"]
        check(all("dump_optimized" in v for v in fed.values()) and fed,
              f"which file fed which input is reported ({len(fed)} inputs)")
        check(not any("not this run" in e["message"] for e in ev(res3, "problem")),
              "the optimized dump's own values are reproduced")
    if case == "fuse_close":
        res4 = replay(make_plan(root, truth, references=False, report="answer"))
        if sane(res4, "without the references file"):
            a4 = answer(res4)
            un = [u for u in a4["unchecked"] if u["node"] == tg["node"]]
            check(un and un[0].get("since") == tg["index"] and a4["guilty"] is None,
                  f"without references: `{tg['node']}` named unchecked, no pass blamed: "
                  f"{a4['sentence']}")
        res7 = replay(make_plan(root, truth, references=False, inputs="dump_optimized",
                                report="answer"))
        if sane(res7, "without the references file, inputs from dump_optimized"):
            a7 = answer(res7)
            took = [e for e in ev(res7, "pass") if e.get("from_dump")]
            check(took and took[0]["index"] == tg["index"] and a7["guilty"] is not None
                  and a7["guilty"]["index"] == tg["index"],
                  f"the optimized dump stands in for the op nobody has, and the pass is found: "
                  f"{a7['sentence']}")
    if case == "const_fold":
        res5 = replay(make_plan(root, truth, inputs="inputs.pt", report="answer"))
        if sane(res5, "inputs from a torch.save'd tuple"):
            a5 = answer(res5)
            check(any(u["node"] == "_tensor_constant0" for u in a5["unchecked"])
                  and "_tensor_constant0" in a5["sentence"],
                  f"the lifted constant no dump holds is named unchecked: {a5['sentence']}")
            fed = ev(res5, "inputs")[0]["fed"]
            check(fed.get("arg0_1", "").startswith("inputs.pt["), f"tuple inputs fed: {fed}")
    if case == "all_right":
        # the same graph on other inputs: the pass the dump was made of (000 or the last) no
        # longer reproduces the dump's own values
        for stage in ("dump_original", "dump_optimized"):
            tmp = Path(tempfile.mkdtemp(prefix="fxray_replay_check_"))
            try:
                dst = tmp / stage
                shutil.copytree(root / stage, dst)
                import torch
                rank = dst / "worldsize1_global_rank0"
                x = torch.load(rank / "arg0_1_device_0_0.pt", weights_only=True)
                g = torch.Generator().manual_seed(7)
                torch.save(torch.randn(x.shape, generator=g).to(x.dtype),
                           rank / "arg0_1_device_0_0.pt")
                plan = make_plan(root, truth, report="answer")
                plan["inputs"]["path"] = str(dst)
                res6 = replay(plan)
                if sane(res6, f"inputs of another run ({stage})"):
                    probs = [e["message"] for e in ev(res6, "problem")]
                    check(any("not this run's" in m for m in probs),
                          f"says the inputs are not this run's: {probs[:2]}")
            finally:
                shutil.rmtree(tmp, ignore_errors=True)


# print_readable forms the fixtures' passes never print, each with what torch itself computes
FORMS = """class <lambda>(torch.nn.Module):
    def forward(self, s0: "Sym(s0)", arg0_1: "f32[s0, 16]", arg1_1: "f32[16]", pred: "b8[]"):
        # File: /home/dev/m.py:3 in forward, code: y = x.view(-1, 8) + 1
        mul: "Sym(2*s0)" = s0 * 2
        view: "f32[2*s0, 8]" = torch.ops.aten.view.default(arg0_1, [mul, 8]);  mul = None
        add: "f32[2*s0, 8]" = torch.ops.aten.add.Tensor(view, 1.0);  view = None
        getitem: "f32[8]" = arg1_1[slice(None, 8, None)];  arg1_1 = None
        add += getitem;  iadd = add;  add = getitem = None
        clone: "f32[2*s0, 8]" = torch.ops.aten.clone.default(iadd)
        clone[0] = 5.0;  setitem = clone;  clone = None
        zeros: "f32[4, 4]" = torch.ops.aten.zeros.default([4, 4], device = device(type='npu', index=0), pin_memory = False)
        true_graph_0 = self.true_graph_0
        false_graph_0 = self.false_graph_0
        cond = torch.ops.higher_order.cond(pred, true_graph_0, false_graph_0, (zeros,));  pred = true_graph_0 = false_graph_0 = zeros = None
        getitem_1: "f32[4, 4]" = cond[0];  cond = None
        sin: "f32[2*s0, 8]" = torch.ops.aten.sin.default(setitem);  setitem = None
        _tensor_constant0: "f32[0]" = self._tensor_constant0
        return (getitem_1, sin, iadd, _tensor_constant0)

    class true_graph_0(torch.nn.Module):
        def forward(self, arg0_1: "f32[4, 4]"):
            sin: "f32[4, 4]" = torch.ops.aten.sin.default(arg0_1);  arg0_1 = None
            add: "f32[4, 4]" = torch.ops.aten.add.Tensor(sin, 1.0, alpha = 2);  sin = None
            return (add,)

    class false_graph_0(torch.nn.Module):
        def forward(self, arg0_1: "f32[4, 4]"):
            cos: "f32[4, 4]" = torch.ops.aten.cos.default(arg0_1);  arg0_1 = None
            return (cos,)
"""

HEAD = """class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[4, 8]"):
        add: "f32[4, 8]" = torch.ops.aten.add.Tensor(arg0_1, 1.0);  arg0_1 = None
        mul: "f32[4, 8]" = torch.ops.aten.mul.Tensor(add, 2.0)
"""
TAIL = """        mul_1: "f32[4, 8]" = torch.ops.aten.mul.Tensor(mul, rand);  rand = None
        sum_1: "f32[]" = torch.ops.aten.sum.default(mul_1);  mul_1 = None
"""
RAND = """        rand: "f32[4, 8]" = torch.ops.aten.rand.default([4, 8], device = device(type='npu', index=0), pin_memory = False)
"""
# 001 draws another number first and edits `rand`: a new sample, not new arithmetic;
# 002 adds an in-place add on `add` after `mul` read it; 003 brings in an op nobody has
MULTI = [
    HEAD + RAND + TAIL + "        return (sum_1, add, mul)\n",
    HEAD + """        rand_1: "f32[2]" = torch.ops.aten.rand.default([2], device = device(type='npu', index=0), pin_memory = False)
""" + RAND.replace("[4, 8], device", "[4, 8], dtype = torch.float32, device") + TAIL
    + "        return (sum_1, add, mul, rand_1)\n",
]
MULTI.append(MULTI[1].replace("        return (sum_1, add, mul, rand_1)\n", """        add_1: "f32[4, 8]" = torch.ops.aten.add_.Tensor(add, 0.5)
        mul_2: "f32[4, 8]" = torch.ops.aten.mul.Tensor(add, 3.0);  add = None
        return (sum_1, mul, rand_1, mul_2)
"""))
MULTI.append(MULTI[2].replace("        return (sum_1, mul, rand_1, mul_2)\n", """        npu_foo: "f32[4, 8]" = torch.ops.npu.npu_foo.default(mul_2, 2)
        neg: "f32[4, 8]" = torch.ops.aten.neg.default(npu_foo);  npu_foo = None
        return (sum_1, mul, rand_1, neg)
"""))


def synthetic():
    print("synthetic pass texts:")
    import torch
    sys.path.insert(0, str(REPLAY.parent))
    from replay import tensor_hash
    tmp = Path(tempfile.mkdtemp(prefix="fxray_replay_forms_"))
    try:
        f = tmp / "000_aot_forward_graph.txt"
        f.write_text(FORMS)
        x, w = torch.randn(4, 16), torch.randn(16)
        torch.save({"arg0_1": x, "arg1_1": w, "pred": torch.tensor(True)}, tmp / "in.pt")
        plan = {"passes": [{"index": 0, "file": str(f), "name": "graph"}],
                "inputs": {"path": str(tmp / "in.pt")}, "report": "hashes"}
        res = replay(plan)
        if sane(res, "class <lambda>, Sym input, +=, x[i] = v, cond sub-graphs, npu device"):
            h = ev(res, "pass")[0]["hashes"]
            add = x.view(8, 8) + 1.0
            iadd = add + w[:8]
            setitem = iadd.clone()
            setitem[0] = 5.0
            want = {"view": x.view(8, 8), "add": add, "iadd": iadd, "clone": iadd,
                    "setitem": setitem, "getitem_1": torch.zeros(4, 4).sin() + 2.0,
                    "sin": setitem.sin(), "_tensor_constant0": torch.empty(0)}
            wrong = [n for n, v in want.items() if h.get(n) != tensor_hash(v)]
            check(not wrong, f"every node as torch computes it, each at the time it ran "
                             f"(wrong: {wrong})")
            check(ev(res, "inputs")[0].get("bound") == {"s0": 4}, "s0 bound from arg0_1's shape")
        files = []
        for k, text in enumerate(MULTI):
            f = tmp / f"{k:03d}_aot_forward_graph_after_p{k}.txt"
            f.write_text(text)
            files.append(f)
        x = torch.randn(4, 8)
        torch.save((x,), tmp / "in2.pt")
        plan = {"passes": [{"index": k, "file": str(f), "name": f"p{k}"} for k, f in enumerate(files)],
                "inputs": {"path": str(tmp / "in2.pt")}, "report": "hashes"}
        res = replay(plan)
        if sane(res, "four passes: randomness, an in-place op, an op nobody has"):
            a = answer(res)
            ps = ev(res, "pass")
            check(a["guilty"] is None and a["random"] and a["random"][0]["index"] == 1
                  and "changed randomness" in a["sentence"],
                  f"a new random draw is named as randomness, no pass blamed: {a['sentence']}")
            h2 = ps[2]["hashes"]
            check(h2.get("add") == tensor_hash(x + 1.0) and
                  h2.get("mul_2") == tensor_hash((x + 1.0 + 0.5) * 3.0) and
                  h2.get("add_1") == tensor_hash(x + 1.0 + 0.5),
                  "an in-place add: `add` recorded before it, its readers after it")
            check(h2.get("rand") == ps[1]["hashes"].get("rand"),
                  "an unchanged random statement keeps its draw through a full recompute")
            un = a["unchecked"]
            check(un and un[0]["node"] == "npu_foo" and un[0].get("since") == 3
                  and un[0]["downstream"] == 1 and "neg" not in ps[3]["hashes"],
                  f"npu.npu_foo named unchecked since pass 003, `neg` after it: {un[:1]}")
        # a graph that writes into its own input (AOT's copy_ for an input mutation): every
        # pass must start from the input as it was, and readers after the copy_ see the write
        mut = ["""class GraphModule(torch.nn.Module):
    def forward(self, arg0_1: "f32[4, 8]", arg1_1: "f32[4, 8]"):
        add: "f32[4, 8]" = torch.ops.aten.add.Tensor(arg0_1, arg1_1)
        copy_: "f32[4, 8]" = torch.ops.aten.copy_.default(arg0_1, add);  add = None
        mul: "f32[4, 8]" = torch.ops.aten.mul.Tensor(arg0_1, %s);  arg0_1 = None
        return (mul,)
""" % c for c in ("2.0", "3.0")]
        files = []
        for k, text in enumerate(mut):
            f = tmp / f"{k:03d}_aot_forward_graph_m{k}.txt"
            f.write_text(text)
            files.append(f)
        a0, a1 = torch.randn(4, 8), torch.randn(4, 8)
        torch.save({"arg0_1": a0, "arg1_1": a1}, tmp / "in3.pt")
        plan = {"passes": [{"index": k, "file": str(f), "name": f"m{k}"} for k, f in enumerate(files)],
                "inputs": {"path": str(tmp / "in3.pt")}, "report": "hashes"}
        res = replay(plan)
        if sane(res, "a graph that writes into its input"):
            ps = ev(res, "pass")
            ok = all(p["hashes"].get("arg0_1") == tensor_hash(a0) for p in ps) and \
                ps[0]["hashes"].get("mul") == tensor_hash((a0 + a1) * 2.0) and \
                ps[1]["hashes"].get("mul") == tensor_hash((a0 + a1) * 3.0)
            check(ok, "each pass starts from the input as it was; readers after copy_ see the write")
            g = answer(res)["guilty"]
            check(g is not None and g["index"] == 1 and g["node"] == "mul",
                  f"x2 -> x3 after the copy_ is found: {answer(res)['sentence']}")
        # a pass that changes only a sub-graph's body (cond's true branch: + 1 -> + 1.5)
        f1 = tmp / "001_aot_forward_graph_after_sub.txt"
        f1.write_text(FORMS.replace("add.Tensor(sin, 1.0, alpha = 2)", "add.Tensor(sin, 1.5, alpha = 2)"))
        plan = {"passes": [{"index": 0, "file": str(tmp / "000_aot_forward_graph.txt"), "name": "graph"},
                           {"index": 1, "file": str(f1), "name": "sub"}],
                "inputs": {"path": str(tmp / "in.pt")}, "report": "answer"}
        res = replay(plan)
        if sane(res, "a pass that edits only a sub-graph"):
            g = answer(res)["guilty"]
            check(g is not None and g["index"] == 1 and g["node"] in ("cond", "getitem_1"),
                  f"the pass is found at the higher-order op's output: {answer(res)['sentence']}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def reference_formulas():
    """Each torch_npu reference against its documented formula, written out independently."""
    print("reference ops:")
    sys.path.insert(0, str(REPLAY.parent))
    import torch
    import replay as rp
    g = torch.Generator().manual_seed(0)
    for dt in (torch.float32, torch.bfloat16, torch.float64):
        x = torch.randn(3, 5, 16, generator=g).to(dt)
        x2 = torch.randn(3, 5, 16, generator=g).to(dt)
        w = (1 + 0.1 * torch.randn(16, generator=g)).to(dt)
        tol = {torch.float32: 1e-5, torch.bfloat16: 2e-2, torch.float64: 1e-12}[dt]

        def close(a, b):
            return a.shape == b.shape and a.dtype == b.dtype and \
                torch.allclose(a.double(), b.double(), rtol=tol, atol=tol)

        xd, x2d, wd = x.double(), x2.double(), w.double()
        ms = (xd * xd).sum(-1, keepdim=True) / 16
        y, rstd = rp.npu_rms_norm(x, w, 1e-6)
        check(close(y, (xd / torch.sqrt(ms + 1e-6) * wd).to(dt)) and
              torch.allclose(rstd.double(), 1 / torch.sqrt(ms + 1e-6), rtol=1e-5, atol=1e-6),
              f"npu_rms_norm {dt}: x / sqrt(mean(x^2) + eps) * gamma, rstd")
        s = (x + x2)
        y, rstd, xo = rp.npu_add_rms_norm(x, x2, w, 1e-6)
        sd = s.double()
        ms2 = (sd * sd).sum(-1, keepdim=True) / 16
        check(close(y, (sd / torch.sqrt(ms2 + 1e-6) * wd).to(dt)) and torch.equal(xo, s),
              f"npu_add_rms_norm {dt}: rms_norm(x1 + x2), and x1 + x2")
        a, b = xd[..., :8], xd[..., 8:]
        check(close(rp.npu_swiglu(x, -1), (a / (1 + torch.exp(-a)) * b).to(dt)),
              f"npu_swiglu {dt}: silu(first half) * second half")
        # rotary, half mode: pairs (i, i + d/2) rotated by angle theta_i
        th = torch.rand(5, 8, generator=g).double() * 6
        cos = torch.cat([th.cos(), th.cos()], -1).to(dt)
        sin = torch.cat([th.sin(), th.sin()], -1).to(dt)
        z = torch.complex(xd[..., :8], xd[..., 8:]) * torch.exp(1j * th)
        want = torch.cat([z.real, z.imag], -1).to(dt)
        check(close(rp.npu_rotary_mul(x, cos, sin), want),
              f"npu_rotary_mul {dt} half: (x1 + i x2) e^(i theta)")
        cosi = th.cos().repeat_interleave(2, -1).to(dt)
        sini = th.sin().repeat_interleave(2, -1).to(dt)
        z = torch.complex(xd[..., 0::2], xd[..., 1::2]) * torch.exp(1j * th)
        want = torch.stack([z.real, z.imag], -1).flatten(-2).to(dt)
        check(close(rp.npu_rotary_mul(x, cosi, sini, "interleave"), want),
              f"npu_rotary_mul {dt} interleave")
        check(close(rp.npu_fast_gelu(x), (xd / (1 + torch.exp(-1.702 * xd))).to(dt)),
              f"npu_fast_gelu {dt}: x * sigmoid(1.702 x)")
        erf = torch.special.erf(xd / math.sqrt(2))
        check(close(rp.npu_gelu(x), (0.5 * xd * (1 + erf)).to(dt)),
              f"npu_gelu {dt}: x/2 (1 + erf(x / sqrt 2))")
        check(rp.npu_dtype_cast(x, torch.float16).dtype == torch.float16 and
              torch.equal(rp.npu_dtype_cast(x, torch.float16), x.to(torch.float16)),
              f"npu_dtype_cast {dt}")


def main():
    out = Path(sys.argv[1]).resolve()
    cases = sorted(p.parent for p in out.glob("*/truth.json"))
    if not cases:
        sys.exit(f"{out}: no case with a truth.json (run bisect_cases.py {out} first)")
    t = time.monotonic()
    truths = {root: json.loads((root / "truth.json").read_text()) for root in cases}
    before = {root: snapshot(root) for root in cases}
    for root in cases:
        for plan in case_plans(root, truths[root]):
            prefetch(plan)
    for root in cases:
        case_checks(root, truths[root], before[root])
    synthetic()
    reference_formulas()
    print(f"\n{passed[0]} checks passed, {len(failures)} failed "
          f"({len(cases)} cases, {time.monotonic() - t:.0f} s)")
    for f in failures:
        print(f"  FAILED: {f}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
