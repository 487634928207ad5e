#!/usr/bin/env python3
"""fxray replay: runs every pass file of one phase on the run's own inputs and names the pass
that changed the numbers, and the node where it did (issue 54, `fxray bisect`).

    python replay.py PLAN.json        (`-`: the plan on stdin)

fxray embeds this file and runs it in a child Python with torch. Standard library and torch
only; torch_npu is used when it imports (NPU ops then run for real on an npu device), numpy
only to read `.npy` inputs. It writes no file anywhere. stdout carries only the events below,
one JSON object per line, flushed; whatever a library prints is sent to stderr, which is free
for tracebacks. The parent cancels by killing the process group: there is nothing to clean up.
Exit status 0 after an answer, 1 when nothing could be replayed or the replay failed, 2 for a
bad plan, 3 without torch.

How it works
- Each pass text is read by a line scanner (print_readable writes one statement per line,
  docs/formats.md §5); each statement runs as its own small function, compiled once per text
  with the node names taken out, and every node's value is recorded when it runs (an in-place
  statement copies what it is about to overwrite first).
- Pass 0 runs whole, and again in float64 (torch's cast_to_fp64: float inputs and constants,
  convert_element_type's and `dtype=` float arguments; random ops reuse the float32 draw): the
  reference. A later pass recomputes only the statements it changed (its text, or which nodes
  they read; or everything after its first in-place statement) and what reads them; a
  statement whose recomputed inputs came out bit-identical is taken from the pass before, as
  is everything else. Passes whose text equals the one before are not run.
- Each recomputed node is paired with the pass before's (plan pairs, else equal names) and
  judged with torch._dynamo.utils.same(ref=before, res=this, fp64_ref=the float64 value of the
  pass-0 node it stands for, equal_nan=True), both sides in float64. The answer is the first
  pass with a node that departs while its inputs agree (an input not recomputed agrees; one
  recomputed but not judged agrees when its own inputs do).
- Ops this torch lacks: torch_npu's common ops have reference implementations here
  (npu_rms_norm, npu_add_rms_norm, npu_swiglu, npu_rotary_mul, npu_dtype_cast, npu_fast_gelu,
  npu_gelu, npu_format_cast), the plan may name more; any other op leaves its node, and what
  reads it, unchecked, named with the pass that brought the op in.
- get_attr constants (`self._frozen_param0`) take the node's value in the pass before, else
  the dump's under the node's or the attribute's name; an empty one (`f32[0]`) needs neither.
  Random ops take the dump's value when it has one; a new draw that departs is reported as
  randomness, never as the guilty arithmetic.
- The graph text is executed: statements may only reach torch (not its file, process or
  network APIs), `operator`, `math` and a few builtins; dunder attributes are refused.

PLAN
    {"passes": [{"index": 0, "file": "/abs/000_aot_forward_graph.txt", "name": "aot_forward_graph",
                 "graph": null,      class to run; null: the file's first top-level class
                 "same_as": null,    index of an earlier pass whose text is identical (a hint:
                                     the replay also compares the texts itself)
                 "pairs": {...} or null,  node of this pass -> node of the pass before. A node
                                     absent from the map pairs by equal name unless that earlier
                                     name is already taken by the map; null: equal names
                 "changed": [...] or null},  nodes the pass's diff changed or added. Optional:
                                     the replay diffs the texts itself and takes the union
                …],
     "inputs": {"path": "/abs/dump_dir_or_file", "kind": "auto",  (only auto: the path says)
                "step": null, "rank": null},   which replay and rank of a dump (default: the
                                     smallest present). path: npugraph_ex's .pt dump (either
                                     stage; its folder or a rank folder), TorchAir's npy dump,
                                     a folder of <node>.npy, or a torch.save'd tuple/list/dict
     "device": "cpu",                where to run (an unusable device falls back to cpu)
     "values": "/abs/dir" or null,   more tensors by node name (get_attr constants, random ops)
     "references": ["/abs/refs.py"] or absent,  Python files defining REFERENCES =
                                     {"ns::op": fn}: implementations of ops this torch lacks
                                     (a user's own kernels); they are run, so only files the
                                     user names
     "threads": null,                torch threads; null: 1 for graphs of small tensors, else
                                     torch's default
     "report": "answer" | "hashes"}  hashes: every pass's per-node sha256 (tests)

EVENTS (one per line)
    {"event": "start", "torch", "python", "torch_npu", "device", "passes"}
    {"event": "inputs", "fed": {placeholder: file}, "missing": [...], "bound": {sym: int},
     "cast": {placeholder: "f32 -> bf16"}, "threads": n}
    {"event": "progress", "index", "stage": "read"|"reference"|"replay", "done", "of"}
        (>= 1 s apart; read: pass files read so far, else statements of pass `index`)
    {"event": "pass", "index", "name", "replayed", "same_as"?, "nodes", "recomputed",
     "seconds", "departs": [{"node", "target", "paired_with", "inputs_agree", "max_abs",
     "max_rel", "cosine", "rmse_prev", "rmse_this", "multiplier", "random"?, "nonfinite"?}],
     "departs_total", "unchecked": [{"node", "target", "why", "since"?, "since_name"?,
     "downstream"}], "unchecked_total", "references"?: {op: nodes run by a reference},
     "from_dump"?: {op: nodes whose value a dump supplied, the op being unable to run here},
     "error"?, "hashes"?: {node: hex}, "hashes64"? (pass 0: the float64 reference run)}
        replayed: false when nothing in the pass needed running (same text as the one before).
        departs lists the first 100 in graph order (and the first whose inputs agree);
        max_rel is max|this - before| / max|before|; rmse_* are against the float64
        reference; unchecked lists the nodes where not knowing started, `downstream` how many
        nodes after each could not be computed either.
    {"event": "problem", "message"}     something the user must know, as a sentence
    {"event": "answer", "guilty": {"index", "name", "node", "target", "paired_with",
     "inputs_agree": true, "numbers", "source"} or null, "replayed", "unchecked": [... with
     "first_pass"], "random": [{"index", "name", "node", "target"}], "references"?,
     "sentence"}
"""

import ctypes
import gc
import hashlib
import json
import math
import operator
import os
import re
import sys
import time

try:
    import torch
except Exception as e:  # the parent shows this line to the user
    sys.stderr.write(f"replay: cannot import torch: {e}\n")
    print(json.dumps({"event": "problem", "message": f"this Python has no torch ({e})"}))
    sys.exit(3)

_OUT = None
CAP = 100  # departures/unchecked listed per event; the totals say how many there were


def _open_events():
    global _OUT
    fd = os.dup(1)
    # Libraries (torch_npu, warnings from C++) print to fd 1; they must not break the
    # one-JSON-object-per-line stream the parent parses.
    os.dup2(2, 1)
    _OUT = os.fdopen(fd, "w", encoding="utf-8", buffering=1)


def _clean(x):
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return x
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    return x


def emit(ev):
    line = json.dumps(_clean(ev), allow_nan=False, separators=(",", ":"))
    out = _OUT or sys.stdout
    out.write(line + "\n")
    out.flush()


def problem(msg):
    emit({"event": "problem", "message": msg})


# ------------------------------------------------------------------ reference implementations
# torch_npu ops this torch lacks, as their documented formulas. Half inputs are computed in
# float32 as the NPU kernels do; float64 stays float64 so the reference run keeps its precision.

def _up(x):
    return x if x.dtype == torch.float64 else x.float()


def npu_rms_norm(x, gamma, epsilon=1e-6):
    dims = tuple(range(x.dim() - gamma.dim(), x.dim()))
    xf = _up(x)
    rstd = torch.rsqrt(xf.pow(2).mean(dims, keepdim=True) + epsilon)
    y = (xf * rstd * _up(gamma)).to(x.dtype)
    return y, rstd


def npu_add_rms_norm(x1, x2, gamma, epsilon=1e-6):
    x = x1 + x2
    y, rstd = npu_rms_norm(x, gamma, epsilon)
    return y, rstd, x


def npu_swiglu(x, dim=-1):
    a, b = _up(x).chunk(2, dim)
    return (torch.nn.functional.silu(a) * b).to(x.dtype)


def _rotate(x, mode):
    if mode == "interleave":
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((-x2, x1), dim=-1).flatten(-2)
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def npu_rotary_mul(x, r1, r2, rotary_mode="half"):
    xf = _up(x)
    return (xf * _up(r1) + _rotate(xf, rotary_mode) * _up(r2)).to(x.dtype)


def npu_dtype_cast(x, dtype):
    return x.to(dtype)


def npu_fast_gelu(x):
    xf = _up(x)
    a = xf.abs()
    return (xf / (1 + torch.exp(-1.702 * a)) * torch.exp(0.851 * (xf - a))).to(x.dtype)


def npu_gelu(x, approximate="none"):
    return torch.nn.functional.gelu(x, approximate=approximate)


def npu_format_cast(x, *args, **kwargs):
    return x.clone()  # a layout change on the device; the values are the same


def prims_fma(a, b, c):
    # one rounding, as a fused multiply-add has: the float32 product is exact in float64
    dt = torch.result_type(a, b)
    wide = torch.float64 if dt in (torch.float32, torch.float16, torch.bfloat16) else dt
    return (torch.as_tensor(a, dtype=wide) * torch.as_tensor(b, dtype=wide)
            + torch.as_tensor(c, dtype=wide)).to(dt)


REFERENCE_OPS = {
    "npu.npu_rms_norm": npu_rms_norm,
    "npu.npu_add_rms_norm": npu_add_rms_norm,
    "npu.npu_swiglu": npu_swiglu,
    "npu.npu_rotary_mul": npu_rotary_mul,
    "npu.npu_dtype_cast": npu_dtype_cast,
    "npu._npu_dtype_cast": npu_dtype_cast,
    "npu.npu_fast_gelu": npu_fast_gelu,
    "npu.fast_gelu": npu_fast_gelu,
    "npu.npu_gelu": npu_gelu,
    "npu.npu_format_cast": npu_format_cast,
    "prims.fma": prims_fma,          # older torch has no prims.fma
}

# ops whose result is uninitialised memory: its bits differ run to run, so the replay fills
# them with zeros and never judges them
EMPTY_OPS = {"empty", "new_empty", "empty_like", "empty_strided", "new_empty_strided",
             "empty_permuted"}

# random ops whose draw depends on nothing but shapes: a pass that left the statement alone
# left the sample alone
PURE_SAMPLERS = {"rand", "randn", "rand_like", "randn_like", "randint", "randint_like", "randperm"}
RANDOM_OPS = {"rand", "randn", "rand_like", "randn_like", "randint", "randint_like", "randperm",
              "bernoulli", "bernoulli_", "native_dropout", "dropout", "normal", "normal_",
              "uniform", "uniform_", "exponential_", "geometric_", "cauchy_", "log_normal_",
              "multinomial", "poisson", "rrelu_with_noise", "philox_rand", "npu_dropout",
              "npu_dropout_with_add_softmax", "_npu_dropout", "npu_dropout_do_mask",
              "npu_dropout_gen_mask"}


# ------------------------------------------------------------------ the execution environment
class MissingOp(Exception):
    pass


class _Missing:
    def __init__(self, qual):
        self.qual = qual

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self

    def __call__(self, *a, **k):
        raise MissingOp(self.qual)


class _Ref:
    """An op packet served by a reference implementation: any overload is the function."""

    def __init__(self, qual, fn):
        self.qual, self.fn = qual, fn

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self.fn


# torch attributes a graph text never needs and that reach files, processes or the network:
# the replay executes the pass text, so it refuses these rather than trust every dump it reads
_DENIED = {"hub", "save", "load", "jit", "utils", "backends", "distributed", "multiprocessing",
           "package", "onnx", "compile", "export", "library", "serialization", "classes",
           "_classes", "fx", "testing", "overrides", "from_file", "cuda", "_dynamo", "_inductor",
           "_export", "_logging", "profiler", "autograd", "storage", "UntypedStorage", "set_default_device"}


class _Ops:
    def __init__(self, owner):
        self._owner = owner

    def __getattr__(self, ns):
        if ns.startswith("__"):
            raise AttributeError(ns)
        v = _OpsNS(ns, self._owner)
        setattr(self, ns, v)
        return v


class _OpsNS:
    def __init__(self, ns, owner):
        self._ns, self._owner = ns, owner

    def __getattr__(self, op):
        if (op.startswith("__") and op not in _OP_DUNDERS) or op in _DENIED:
            raise AttributeError(op)
        v = self._owner.resolve(self._ns, op)
        setattr(self, op, v)
        return v


class _TorchProxy:
    """What the name `torch` means inside a replayed statement."""

    def __init__(self, owner, device_fn):
        self.ops = _Ops(owner)
        self.device = device_fn

    def __getattr__(self, name):
        if name.startswith("__") or name in _DENIED:
            raise AttributeError(f"torch.{name} is not available to a replayed graph")
        v = getattr(torch, name)
        setattr(self, name, v)
        return v


_SAFE_BUILTINS = {"slice": slice, "int": int, "float": float, "bool": bool, "tuple": tuple,
                  "list": list, "len": len, "range": range, "max": max, "min": min, "abs": abs,
                  "Ellipsis": Ellipsis, "None": None, "True": True, "False": False,
                  "isinstance": isinstance}


class Unknown:
    """A value the replay could not compute; `root` is the node where that started (every
    node downstream holds the same object)."""
    __slots__ = ("root", "why", "target")

    def __init__(self, root, why, target="?"):
        self.root, self.why, self.target = root, why, target


# ------------------------------------------------------------------ annotations
_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64",
           "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "u8": "uint8",
           "u16": "uint16", "u32": "uint32", "u64": "uint64", "b8": "bool",
           "c32": "complex32", "c64": "complex64", "c128": "complex128",
           "f8e4m3fn": "float8_e4m3fn", "f8e5m2": "float8_e5m2",
           "f8e4m3fnuz": "float8_e4m3fnuz", "f8e5m2fnuz": "float8_e5m2fnuz"}
_ANN_T = re.compile(r"([a-z][a-z0-9]*)\[([^\]]*)\](?:\[([^\]]*)\])?")
_ANN_SYM = re.compile(r"^\s*Sym\((.*)\)\s*$")
_SHORT = {v: k for k, v in _DTYPES.items()}


def parse_ann(s):
    """("sym", expr) | ("tensor", torch dtype or None, [int | str dims], [strides] or None)
    | None"""
    if not s:
        return None
    m = _ANN_SYM.match(s)
    if m:
        return ("sym", m.group(1).strip())
    m = _ANN_T.search(s)
    if not m:
        return None
    dt = getattr(torch, _DTYPES.get(m.group(1), ""), None) if m.group(1) in _DTYPES else None
    dims = _dims(m.group(2))
    strides = _dims(m.group(3)) if m.group(3) is not None else None
    return ("tensor", dt, dims, strides)


def _dims(text):
    out = []
    for d in text.split(","):
        d = d.strip()
        if d:
            out.append(int(d) if re.fullmatch(r"-?\d+", d) else d)
    return out


def short_dtype(dt):
    return _SHORT.get(str(dt).replace("torch.", ""), str(dt))


# ------------------------------------------------------------------ the pass text
# print_readable writes one statement per line (docs/formats.md §5), so a line scanner reads
# it ~20x faster than ast.parse; the statement's code is compiled once per *template* (its text
# with node names as holes), and templates repeat across layers.
_STR = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")
_IDENT = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?![\w])(?!\s*=(?!=))")
_HEAD = re.compile(r'^([A-Za-z_]\w*)(?:\s*:\s*"((?:[^"\\]|\\.)*)")?\s*=\s*(.*)$')
_AUG = re.compile(r"^([A-Za-z_]\w*)\s*(\+|-|\*\*|\*|//|/|%|@|&|\||\^|>>|<<)=\s*(.*)$")
_FREE = re.compile(r"^[A-Za-z_]\w*(?:\s*=\s*[A-Za-z_]\w*)*\s*=\s*None$")
_CLASS = re.compile(r"^(\s*)class\s+([^\s(:]+)\s*(?:\([^)]*\))?\s*:\s*$")
_DUNDER = re.compile(r"(?<![\w])__\w*__")
# aten's bitwise operators are ops named like Python's dunders (aten.__and__.Tensor); they are
# the only dunders a statement may reach, and only as torch.ops.<ns>.<op>
_OP_DUNDERS = {"__and__", "__or__", "__xor__", "__lshift__", "__rshift__", "__iand__",
               "__ior__", "__ixor__", "__ilshift__", "__irshift__"}
_OP_PATH = re.compile(r"torch\.ops\.\w+\.(__\w+__)")


def _refused(masked):
    for m in _DUNDER.finditer(_OP_PATH.sub(
            lambda m: "torch.ops.ns.op" if m.group(1) in _OP_DUNDERS else m.group(0), masked)):
        return m.group(0)
    return None

NODE, ATTR, MUT, FREE = 0, 1, 2, 3


def _mask(s):
    if "'" not in s and '"' not in s:
        return s
    return _STR.sub(lambda m: "\x01" * len(m.group()), s)


def _split_top(s, masked, sep):
    """Split at `sep` outside string literals."""
    out, start = [], 0
    i = masked.find(sep)
    while i >= 0:
        out.append(s[start:i])
        start = i + len(sep)
        i = masked.find(sep, start)
    out.append(s[start:])
    return out


def _balance(masked):
    return (masked.count("(") + masked.count("[") + masked.count("{")
            - masked.count(")") - masked.count("]") - masked.count("}"))


class Stmt:
    __slots__ = ("kind", "name", "tmpl", "ins", "line", "ann", "target", "mut", "rand",
                 "attr", "names", "pos", "empty")

    def __init__(self, kind, name=None, tmpl=None, ins=(), line=0, ann=None, target=None):
        self.kind, self.name, self.tmpl, self.ins = kind, name, tmpl, ins
        self.line, self.ann, self.target = line, ann, target
        self.mut = False
        self.rand = False
        self.empty = False
        self.attr = None
        self.names = None
        self.pos = 0


class Graph:
    def __init__(self, path, cls_name):
        self.path = path
        self.cls = cls_name
        self.placeholders = []      # [(name, ann)]
        self.stmts = []
        self.index = {}             # node name -> Stmt (nodes and get_attr)
        self.nested = {}            # nested class name -> source
        self.targets = set()
        self.outputs = []
        self.problems = []
        self.first_mut = None
        self.identity = None        # {name: name}, shared by passes of this same text

    def node_count(self):
        return len(self.placeholders) + len(self.index)


def _target_of(rhs, masked, known):
    if rhs.startswith("torch.ops."):
        j = masked.find("(")
        return rhs[10:j] if j > 0 else rhs[10:]
    m = re.match(r"([A-Za-z_][\w.]*)\s*(\(|\[)?", masked)
    if not m:
        return "expr"
    head, br = m.group(1), m.group(2)
    first = head.split(".")[0]
    if br == "[" and head in known:
        return "getitem"
    if br == "(":
        if first in known and "." in head:
            return "." + head.split(".", 1)[1]          # a method call on a node
        return head
    if head in known and m.end(1) == len(rhs.rstrip()):
        return "alias"
    return "expr"


def parse_graph(path, text, want=None):
    """The graph of the class `want` (None: the first top-level class) in a print_readable
    text. Never raises on content: what it cannot read becomes a problem line."""
    lines = text.replace("\r", "").split("\n")
    start = None
    for i, line in enumerate(lines):
        m = _CLASS.match(line)
        if m and ((want is None and not m.group(1)) or (want is not None and m.group(2) == want)):
            start = i
            ci = len(m.group(1))
            cls = m.group(2)
            break
    if start is None:
        raise ValueError("no `class …(torch.nn.Module):` header found: not an FX graph text?"
                         if want is None else f"no class `{want}` in the file")
    g = Graph(path, cls)
    # the forward signature, possibly over several lines with comments
    i = start + 1
    while i < len(lines) and not lines[i].strip().startswith("def forward"):
        if lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) <= ci:
            break
        i += 1
    if i >= len(lines) or not lines[i].strip().startswith("def forward"):
        raise ValueError(f"class `{cls}` has no forward")
    sig, depth = [], 0
    while i < len(lines):
        s = _strip_comment(lines[i])
        sig.append(s.strip())
        depth += _balance(_mask(s))
        i += 1
        if depth <= 0 and s.rstrip().endswith(":"):
            break
    _read_signature(g, " ".join(sig))
    body_indent = ci + 8
    known = {n for n, _ in g.placeholders}
    ann_only = {}
    n = len(lines)
    pref = " " * body_indent
    returned = False
    while i < n:
        raw = lines[i]
        lineno = i + 1
        i += 1
        st = raw.strip()
        if not st or st[0] == "#":
            continue
        if not raw.startswith(pref):
            i -= 1                  # the body ends here; a nested class may follow
            break
        hit = _MEMO.get(st)
        if hit is not None:
            protos, reads, others = hit
            if known.isdisjoint(others) and all(r in known for r in reads) and \
                    not any(p[1] in g.index for p in protos if p[0] != FREE and p[0] != MUT):
                for proto in protos:
                    _from_proto(g, proto, lineno, known)
                continue
        masked = _mask(st)
        # a statement whose brackets stay open continues on the next lines
        joined = False
        while _balance(masked) > 0 and i < n:
            st = st + " " + lines[i].strip()
            i += 1
            masked = _mask(st)
            joined = True
        if st.startswith("return"):
            g.outputs = [m.group(1) for m in _IDENT.finditer(_mask(st[6:])) if m.group(1) in known]
            returned = True
            continue
        if ";" in masked:
            pairs = zip(_split_top(st, masked, ";"), _split_top(masked, masked, ";"))
        else:
            pairs = ((st, masked),)
        before, nprob = len(g.stmts), len(g.problems)
        for part, mpart in pairs:
            part, mpart = part.strip(), mpart.strip()
            if part:
                try:
                    _statement(g, part, mpart, lineno, known, ann_only)
                except _Skip as e:
                    g.problems.append(f"{os.path.basename(path)}:{lineno}: {e}; skipped")
        if not joined and len(g.problems) == nprob and len(g.stmts) > before:
            _remember(st, masked, g.stmts[before:])
    if not returned:
        g.problems.append(f"{os.path.basename(path)}: the file ends inside `forward` without "
                          f"`return`: truncated or still being written? Replaying what is there")
    # nested classes (sub-graphs of higher-order ops): kept as source, built when used
    while i < n:
        m = _CLASS.match(lines[i])
        if m and len(m.group(1)) == ci + 4:
            j = i + 1
            while j < n and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > ci + 4):
                j += 1
            g.nested[m.group(2)] = "\n".join(l[ci + 4:] for l in lines[i:j])
            i = j
            continue
        if lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) <= ci:
            break
        i += 1
    for s in g.stmts:
        if s.kind == ATTR and s.attr in g.nested:
            # a pass that edits only a sub-graph's body leaves `x = self.true_graph_0` as it
            # was: its text must make the statement differ, or its users would not be rerun
            s.tmpl = s.tmpl + "  # " + hashlib.sha1(g.nested[s.attr].encode()).hexdigest()
    for k, (name, ann) in enumerate(g.placeholders):
        if ann is None and name in ann_only:
            g.placeholders[k] = (name, ann_only[name])
    for k, s in enumerate(g.stmts):
        s.pos = k
        if s.mut and g.first_mut is None:
            g.first_mut = k
    return g


# Consecutive passes share most lines: a line read once is not scanned again while the names
# it reads are still nodes and no other word in it has become one.
_MEMO = {}


def _remember(st, masked, stmts):
    if len(_MEMO) > 1_000_000:
        _MEMO.clear()
    reads, made, freed = set(), set(), set()
    protos = []
    for s in stmts:
        reads.update(s.ins)
        if s.kind == FREE:
            freed.update(s.names)
        elif s.kind != MUT:
            made.add(s.name)
        protos.append((s.kind, s.name, s.tmpl, s.ins, s.ann, s.target, s.attr, s.names, s.mut))
    others = {m.group(1) for m in _IDENT.finditer(masked)} - reads - made - freed
    _MEMO[st] = (tuple(protos), frozenset(reads - made), frozenset(others))


def _from_proto(g, proto, lineno, known):
    kind, name, tmpl, ins, ann, target, attr, names, mut = proto
    s = Stmt(kind, name=name, tmpl=tmpl, ins=ins, line=lineno, ann=ann, target=target)
    s.attr, s.names, s.mut = attr, names, mut
    g.stmts.append(s)
    if kind == NODE or kind == ATTR:
        g.index[name] = s
        g.targets.add(target)
        known.add(name)


def _strip_comment(line):
    m = _mask(line)
    j = m.find("#")
    return line if j < 0 else line[:j]


def _read_signature(g, sig):
    import ast
    s = sig.strip()
    if not s.endswith(":"):
        s += ":"
    tree = ast.parse(s + "\n    pass\n")
    fn = tree.body[0]
    args = list(fn.args.posonlyargs) + list(fn.args.args) + list(fn.args.kwonlyargs)
    for a in args[1:] if args and args[0].arg == "self" else args:
        ann = a.annotation.value if isinstance(a.annotation, ast.Constant) else None
        g.placeholders.append((a.arg, ann))


class _Skip(Exception):
    pass


def _holes(text, masked, known):
    """(template, inputs): `text` with each node name it reads replaced by \\x00."""
    ins, out, last = [], [], 0
    for m in _IDENT.finditer(masked):
        name = m.group(1)
        if name in known:
            out.append(text[last:m.start(1)])
            out.append("\x00")
            last = m.end(1)
            ins.append(name)
    if not ins:
        return text, ()
    out.append(text[last:])
    return "".join(out), tuple(ins)


def _statement(g, part, mpart, lineno, known, ann_only):
    # the common shapes first: `name: "ann" = rhs`, then the frees after it
    if mpart.endswith("None") and _FREE.match(mpart):
        s = Stmt(FREE, line=lineno)
        s.names = [x.strip() for x in mpart.split("=")[:-1]]
        g.stmts.append(s)
        return
    m = _HEAD.match(part)
    if m is None:
        _odd_statement(g, part, mpart, lineno, known, ann_only)
        return
    name, ann, rhs = m.group(1), m.group(2), m.group(3)
    if name in g.index:
        raise _Skip(f"`{name}` is defined twice")
    if rhs.startswith("self.") and _SELF.fullmatch(rhs):
        s = Stmt(ATTR, name=name, tmpl=rhs, ins=(), line=lineno, ann=ann, target="get_attr")
        s.attr = rhs[5:]
    else:
        if rhs.startswith("fx_pytree.") or rhs.startswith("pytree."):
            return
        mrhs = mpart[len(part) - len(rhs):] if mpart is not part else rhs
        tmpl, ins = _holes(rhs, mrhs, known)
        if rhs.startswith("torch.ops."):
            j = mrhs.find("(")
            target = rhs[10:j] if j > 0 else rhs[10:]
        else:
            target = _target_of(rhs, mrhs, known)
        s = Stmt(NODE, name=name, tmpl=tmpl, ins=ins, line=lineno, ann=ann, target=target)
    g.stmts.append(s)
    g.index[name] = s
    g.targets.add(s.target)
    known.add(name)


def _odd_statement(g, part, mpart, lineno, known, ann_only):
    m = _AUG.match(mpart)
    if m:
        # `a += b`; the node follows as `iadd = a`
        tmpl, ins = _holes(part, mpart, known)
        if not ins or ins[0] != m.group(1):
            raise _Skip("in-place statement on something that is not a node")
        s = Stmt(MUT, name=m.group(1), tmpl=tmpl, ins=ins, line=lineno,
                 target="operator.i" + _AUGNAME.get(m.group(2), "op"))
        s.mut = True
        g.stmts.append(s)
        return
    if _SETITEM.match(mpart):
        # `x[i] = v` (operator.setitem); the node follows as `setitem = x`
        depth, j = 0, mpart.index("[")
        for j in range(mpart.index("["), len(mpart)):
            c = mpart[j]
            depth += c in "([{"
            depth -= c in ")]}"
            if depth == 0:
                break
        rest = mpart[j + 1:].lstrip()
        if not rest.startswith("=") or rest.startswith("=="):
            raise _Skip("not an FX statement")
        tmpl, ins = _holes(part, mpart, known)
        base = _NAME.match(mpart).group(0)
        if not ins or ins[0] != base:
            raise _Skip("item assignment on something that is not a node")
        s = Stmt(MUT, name=base, tmpl=tmpl, ins=ins, line=lineno, target="operator.setitem")
        s.mut = True
        g.stmts.append(s)
        return
    if _EXPORT_ANN.match(part):     # `x: "f32[2]"` (an unlifted export's input annotation)
        nm = part.split(":", 1)[0].strip()
        ann_only[nm] = _STR.search(part).group(0)[1:-1]
        return
    if "," in mpart.split("=", 1)[0]:
        raise _Skip("tuple assignment")
    raise _Skip("not an FX statement")


_SETITEM = re.compile(r"^[A-Za-z_]\w*\s*\[")
_SELF = re.compile(r"self(?:\.[A-Za-z_]\w*)+")
_EXPORT_ANN = re.compile(r'^[A-Za-z_]\w*\s*:\s*"')
_NAME = re.compile(r"[A-Za-z_]\w*")


_AUGNAME = {"+": "add", "-": "sub", "*": "mul", "**": "pow", "/": "truediv", "//": "floordiv",
            "%": "mod", "@": "matmul", "&": "and", "|": "or", "^": "xor", ">>": "rshift",
            "<<": "lshift"}


# ------------------------------------------------------------------ hashing, judging
def tensor_hash(t):
    """sha256 of the contiguous bytes, then dtype and shape (the fixtures' truth uses the same)."""
    c = t.detach()
    if c.device.type != "cpu":
        c = c.cpu()
    c = c.resolve_conj().resolve_neg().contiguous()
    h = hashlib.sha256()
    nbytes = c.numel() * c.element_size()
    if nbytes:
        h.update(ctypes.string_at(c.data_ptr(), nbytes))
    h.update(str(c.dtype).encode())
    h.update(str(list(c.shape)).encode())
    return h.hexdigest()


def _rmse(a, b):
    return torch.sqrt(torch.mean(torch.square(a - b))).item()


_SAME = []


def _torch_same():
    if not _SAME:
        try:
            from torch._dynamo.utils import same
        except Exception:  # pragma: no cover - a torch without dynamo
            same = None
        _SAME.append(same)
    return _SAME[0]


def _quiet(*a, **k):
    pass


def judge(prev, cur, ref64):
    """torch's accuracy rule on one pair: `same(ref=prev, res=cur, fp64_ref, equal_nan=True)`.
    Returns (agrees, numbers or None)."""
    if cur.shape != prev.shape:
        return False, {"why": f"shape {list(prev.shape)} -> {list(cur.shape)}"}
    if cur.dtype == prev.dtype and torch.equal(cur, prev):
        return True, None
    if cur.is_complex() or prev.is_complex():
        return bool(torch.allclose(cur, prev.to(cur.dtype), equal_nan=True)), None
    # Both sides in float64, as tests/e2e/stage_faults.py's verdict does: with torch's
    # exact_dtype the pair would fail on dtype alone, and exact_dtype=False rounds the earlier
    # value to a lowered (bf16) result's dtype first, which hides the very pass that lowered
    # a node's precision. A dtype change alone must not make a pair depart.
    a, b = prev.detach().double(), cur.detach().double()
    r = ref64.detach().double() if (ref64 is not None and isinstance(ref64, torch.Tensor)
                                    and ref64.shape == cur.shape) else None
    same = _torch_same()
    if same is not None:
        ok = bool(same(a, b, r, equal_nan=True, log_error=_quiet))
    else:
        ok = bool(torch.allclose(a, b, rtol=1e-4, atol=1e-4, equal_nan=True))
    fp = r if r is not None else a
    mult = 3.0 if (fp.numel() < 1000 or (a.ndim == 4 and a.shape[-1] == a.shape[-2] == 1)) else 2.0
    if not ok and cur.dtype in (torch.float16, torch.bfloat16) and mult == 2.0 and same is not None:
        # torch gives a half-precision result multiplier 3; comparing as float64 hides the
        # dtype from `same`, so its rmse test is redone here with the multiplier it would use
        mult = 3.0
        ok = _rmse(fp, b) <= 3.0 * _rmse(fp, a) + 1e-5
    if ok:
        return True, None
    return False, numbers(a, b, fp, mult)


def numbers(a, b, fp, mult):
    d = (b - a).abs()
    fin = torch.isfinite(d)
    max_abs = d[fin].max().item() if fin.any() else float("nan")
    scale = a.abs()[torch.isfinite(a)]
    scale = scale.max().item() if scale.numel() else 0.0
    out = {"max_abs": max_abs, "max_rel": max_abs / scale if scale > 0 else float("inf"),
           "rmse_prev": _rmse(fp, a), "rmse_this": _rmse(fp, b), "multiplier": mult}
    try:
        out["cosine"] = torch.nn.functional.cosine_similarity(
            a.flatten(), b.flatten(), dim=0).item() if a.numel() else 1.0
    except Exception:
        pass
    if not fin.all():
        out["nonfinite"] = int((~fin).sum().item())
    return out


def numbers_text(nb):
    if not nb:
        return ""
    if "why" in nb:
        return nb["why"]
    bits = []
    if "cosine" in nb:
        bits.append(f"cosine {nb['cosine']:.9g}")
    bits.append(f"max abs err {nb['max_abs']:.3g}")
    bits.append(f"rmse vs fp64 {nb['rmse_this']:.4g} > {nb['multiplier']:g} x {nb['rmse_prev']:.4g} + 1e-5")
    if nb.get("nonfinite"):
        bits.append(f"{nb['nonfinite']} non-finite")
    return ", ".join(bits)


# ------------------------------------------------------------------ dumps
_PT = re.compile(r"^(.+)_device_(\d+)(?:_(\d+))?\.pt$")
_RANK = re.compile(r"^worldsize(\d+)_global_rank(\d+)$")
_NPY31 = re.compile(r"^(.+)\.(INPUT|OUTPUT)\.(\d+)(?:\.(\d+))?\.(\d{20})\.npy$")


class Dump:
    """Tensors by node name: npugraph_ex's .pt tensor dump (docs/formats.md §3.2), a folder of
    `<node>.npy`, TorchAir's npy data dump (§3.1), or one torch.save'd tuple/list/dict."""

    def __init__(self, path, device, step=None, rank=None):
        self.path = path
        self.device = device
        self.files = {}        # name -> file
        self.inputs = {}       # (node, i) -> file  (§3.1 INPUT files)
        self.obj = None        # a torch.save'd container
        self.kind = None
        self.notes = []
        if os.path.isfile(path):
            self._file(path)
        elif os.path.isdir(path):
            self._dir(path, step, rank)
        else:
            raise ValueError(f"{path}: no such file or folder")

    def _file(self, path):
        if path.endswith(".npy"):
            self.kind = "npy"
            self.files[os.path.basename(path)[:-4]] = path
            return
        self.kind = "file"
        self.obj = _torch_load(path, self.device)
        if isinstance(self.obj, torch.Tensor):
            self.obj = [self.obj]
        if not isinstance(self.obj, (list, tuple, dict)):
            raise ValueError(f"{path}: holds a {type(self.obj).__name__}, not a tuple, list or dict")

    def _dir(self, path, step, rank):
        ranks = []
        for root, dirs, files in _walk(path, 3):
            m = _RANK.match(os.path.basename(root))
            if m:
                ranks.append((int(m.group(2)), root))
        if ranks:
            ranks.sort()
            pick = [r for r in ranks if rank is None or r[0] == rank]
            if not pick:
                raise ValueError(f"{path}: no rank {rank} (ranks {[r for r, _ in ranks]})")
            rdir = pick[0][1]
            same_rank = [r for r in pick if r[0] == pick[0][0]]
            if len(same_rank) > 1:
                # a run folder holding both stage dumps: the caller should name one
                self.notes.append(f"{rdir}, one of {len(same_rank)} dumps of rank {pick[0][0]} here")
            elif len(ranks) > 1:
                self.notes.append(f"rank {pick[0][0]} of {len(ranks)}")
        else:
            rdir = path
        found = {}
        npy31 = {}
        plain_npy = {}
        for root, dirs, files in _walk(rdir, 3):
            for f in files:
                m = _PT.match(f)
                if m:
                    found.setdefault(m.group(1), []).append(
                        (int(m.group(3) or 0), int(m.group(2)), m.group(3) is None, os.path.join(root, f)))
                    continue
                m = _NPY31.match(f)
                if m:
                    rel = os.path.relpath(root, rdir).split(os.sep)
                    st = int(rel[-1]) if rel and rel[-1].isdigit() else 0
                    node = m.group(1).split("-", 1)[0]
                    npy31.setdefault(st, []).append((node, m.group(2), int(m.group(3)),
                                                     m.group(4), os.path.join(root, f)))
                    continue
                if f.endswith(".npy") and root == rdir:
                    plain_npy[f[:-4]] = os.path.join(root, f)
        if found:
            self.kind = "pt"
            steps = sorted({s for v in found.values() for s, _, _, _ in v})
            want = step if step is not None else steps[0]
            if want not in steps:
                raise ValueError(f"{rdir}: no replay {want} in the dump (replays {steps[:8]})")
            if len(steps) > 1:
                self.notes.append(f"replay {want} of {len(steps)}")
            for name, v in found.items():
                v = sorted(x for x in v if x[0] == want)
                if v:
                    # `<n>_device_<d>_0.pt` wins over `<n>_device_<d>.pt` (§3.2); lowest device
                    v.sort(key=lambda x: (x[1], x[2]))
                    self.files[name] = v[0][3]
        elif npy31:
            self.kind = "npy_dump"
            want = step if step is not None else min(npy31)
            for node, io, i, j, p in npy31.get(want, []):
                if j is not None:
                    continue
                if io == "OUTPUT" and i == 0:
                    self.files[node] = p
                elif io == "INPUT":
                    self.inputs[(node, i)] = p
        elif plain_npy:
            self.kind = "npy"
            self.files = plain_npy
        else:
            raise ValueError(f"{path}: no tensor dump here (no `<node>_device_<d>_<n>.pt`, no .npy)")

    def has(self, name):
        if self.obj is not None:
            return isinstance(self.obj, dict) and name in self.obj
        return name in self.files

    def where(self, name):
        if self.obj is not None:
            return f"{self.path}[{name!r}]"
        return self.files.get(name)

    def load(self, name):
        if self.obj is not None:
            v = self.obj.get(name) if isinstance(self.obj, dict) else None
            return v
        p = self.files.get(name)
        return None if p is None else self.load_file(p)

    def load_file(self, p):
        if p.endswith(".npy"):
            return _npy_load(p, self.device)
        v = _torch_load(p, self.device)
        return v


def _walk(top, depth):
    base = top.rstrip(os.sep).count(os.sep)
    for root, dirs, files in os.walk(top):
        if root.count(os.sep) - base >= depth:
            dirs[:] = []
        dirs.sort()
        yield root, dirs, files


def _torch_load(p, device):
    # weights_only: a dump is data; a pickle that needs code to load is refused, never run
    return torch.load(p, map_location=device, weights_only=True)


def _npy_load(p, device):
    try:
        import numpy as np
    except Exception:
        raise ValueError(f"{p}: reading .npy needs numpy, which this Python lacks")
    a = np.load(p, allow_pickle=False)
    return torch.from_numpy(np.ascontiguousarray(a)).to(device)


# ------------------------------------------------------------------ the replay
class Replay:
    def __init__(self, plan):
        self.plan = plan
        self.device = torch.device(plan.get("device") or "cpu")
        self.hashes = plan.get("report") == "hashes"
        self.refs = dict(REFERENCE_OPS)
        self.npu = False
        self.check = None           # the pass whose graph the inputs dump also holds values of
        self.check_origins = {}
        self.fn_cache = {}
        self.op_cache = {}
        self.problems_said = set()
        dev = self.device

        def device_fn(*a, **k):
            # the text names the device it was compiled for (npu:0); run on this one
            return dev

        self.genv = {"torch": _TorchProxy(self, device_fn), "device": device_fn,
                     "inf": math.inf, "nan": math.nan, "operator": operator, "math": math,
                     "__builtins__": _SAFE_BUILTINS}
        for path in plan.get("references") or []:
            self._load_references(path)

    def say(self, msg):
        if msg not in self.problems_said:
            self.problems_said.add(msg)
            problem(msg)

    def _load_references(self, path):
        ns = {"torch": torch, "__name__": "fxray_references"}
        try:
            with open(path, encoding="utf-8") as f:
                code = compile(f.read(), path, "exec")
            exec(code, ns)
        except Exception as e:
            self.say(f"references {path}: {type(e).__name__}: {e}; not used")
            return
        for k, fn in (ns.get("REFERENCES") or {}).items():
            self.refs[k.replace("::", ".")] = fn

    # ops -------------------------------------------------------------
    def resolve(self, ns, op):
        qual = f"{ns}.{op}"
        fn = self.refs.get(qual)
        if fn is not None and ns == "npu" and self.device.type != "npu":
            # torch_npu's kernels need the device; off it, its formula is what can run
            return _Ref(qual, fn)
        real = None
        try:
            real = getattr(getattr(torch.ops, ns), op)
        except Exception:
            real = None
        if real is not None:
            return real
        if fn is not None:
            return _Ref(qual, fn)
        return _Missing(qual)

    def op_info(self, target):
        """(mutates, random, how) of a statement's target: how is "torch", "reference",
        "missing" or "" (not an op)."""
        info = self.op_cache.get(target)
        if info is not None:
            return info
        mut = rand = False
        how = ""
        parts = target.split(".")
        if target.startswith(".") and not target.startswith(".__"):
            mut = target.endswith("_")
        elif len(parts) >= 2 and target not in ("getitem", "alias", "expr", "get_attr") \
                and not target.startswith("operator."):
            ns, op = parts[0], parts[1]
            ov = parts[2] if len(parts) > 2 else "default"
            packet = self.resolve(ns, op) if not target.startswith("torch.") else None
            if isinstance(packet, _Ref):
                how = "reference"
                mut = op.endswith("_")
            elif isinstance(packet, _Missing):
                how = "missing"
                mut = op.endswith("_")
            elif packet is not None:
                how = "torch"
                try:
                    o = getattr(packet, ov)
                    mut = any(a.alias_info is not None and a.alias_info.is_write
                              for a in o._schema.arguments)
                    rand = torch.Tag.nondeterministic_seeded in o.tags
                except Exception:
                    mut = op.endswith("_")
            rand = rand or op in RANDOM_OPS
        elif target.startswith("operator.i") or target == "operator.setitem":
            mut = True
        info = (mut, rand, how)
        self.op_cache[target] = info
        return info

    def fn_for(self, st, fp64):
        key = (st.kind, st.tmpl, fp64)
        f = self.fn_cache.get(key)
        if f is not None:
            return f
        parts = st.tmpl.split("\x00")
        names = [f"_a{i}" for i in range(len(parts) - 1)]
        expr = parts[0] + "".join(n + p for n, p in zip(names, parts[1:]))
        bad = _refused(_mask(expr))
        if bad:
            raise ValueError(f"refused: the statement reaches `{bad}`")
        if st.kind == MUT:
            src = f"def _f({', '.join(names)}):\n    {expr}\n    return _a0\n"
        else:
            src = f"def _f({', '.join(names)}):\n    return {expr}\n"
        if fp64 and ("dtype" in expr or "convert_element_type" in expr or "softmax" in expr):
            code = _fp64_code(src)
        else:
            code = compile(src, "<fxray replay>", "exec")
        ns = {}
        exec(code, self.genv, ns)
        f = ns["_f"]
        self.fn_cache[key] = f
        return f


    def setup_inputs(self, plan, p0, good):
        spec = plan.get("inputs") or {}
        self.inputs = {}
        self.inputs64 = {}
        self.fed = {}
        self.dump = None
        self.values_dump = None
        self.input_hashes = {}
        self.dump_cache = {}
        missing = []
        cast = {}
        if spec.get("path"):
            try:
                self.dump = Dump(spec["path"], self.device, spec.get("step"), spec.get("rank"))
                for note in self.dump.notes:
                    self.say(f"inputs: {spec['path']}: using {note}")
            except Exception as e:
                self.say(f"inputs: {e}")
        if plan.get("values"):
            try:
                self.values_dump = Dump(plan["values"], self.device)
            except Exception as e:
                self.say(f"values: {e}")
        phs = []
        seen = set()
        for p in good:
            for name, ann in p.graph.placeholders:
                if name not in seen:
                    seen.add(name)
                    phs.append((name, ann))
        first = {n for n, _ in p0.graph.placeholders}
        syms = {}
        d = self.dump
        for pos, (name, ann) in enumerate(phs):
            a = parse_ann(ann)
            if a and a[0] == "sym":
                continue
            v, src = None, None
            if d is not None:
                try:
                    if d.obj is not None and isinstance(d.obj, (list, tuple)):
                        if name in first and pos < len(d.obj):
                            v, src = d.obj[pos], f"{os.path.basename(d.path)}[{pos}]"
                    elif d.has(name):
                        v, src = d.load(name), d.where(name)
                    elif d.kind == "npy_dump":
                        v, src = self._from_consumer(d, name, p0.graph)
                except Exception as e:
                    self.say(f"inputs: {name}: {e}")
                    v = None
            if isinstance(v, torch.Tensor) and a and a[0] == "tensor":
                dt, dims, strides = a[1], a[2], a[3]
                if dt is not None and v.dtype != dt:
                    cast[name] = f"{short_dtype(v.dtype)} -> {short_dtype(dt)}"
                    v = v.to(dt)
                if strides and len(strides) == v.dim() and list(v.shape) == dims \
                        and all(isinstance(x, int) for x in strides) \
                        and tuple(strides) != v.stride():
                    # a .npy or a re-saved tensor lost the layout the graph was traced with;
                    # views in the graph may depend on it
                    w = torch.empty_strided(v.shape, strides, dtype=v.dtype, device=v.device)
                    w.copy_(v)
                    v = w
                    cast[name] = (cast.get(name, "") + " strides " + str(strides)).strip()
                if len(dims) == v.dim():
                    for dd, sz in zip(dims, v.shape):
                        if isinstance(dd, int):
                            if dd != sz:
                                self.say(f"inputs: `{name}` has shape {list(v.shape)}, the graph "
                                         f"wants {dims}: not this graph's inputs?")
                                break
                        elif re.fullmatch(r"[A-Za-z_]\w*", dd):
                            syms.setdefault(dd, int(sz))
                else:
                    self.say(f"inputs: `{name}` has shape {list(v.shape)}, the graph wants {dims}")
            elif v is not None and not isinstance(v, torch.Tensor):
                if isinstance(v, (int, float, bool)):
                    pass
                else:
                    self.say(f"inputs: `{name}` from {src} is a {type(v).__name__}, not a tensor")
                    v = None
            if v is None:
                if name in first:
                    missing.append(name)
                continue
            self.inputs[name] = v
            self.fed[name] = src
        for pos, (name, ann) in enumerate(phs):
            a = parse_ann(ann)
            if not (a and a[0] == "sym"):
                continue
            v = None
            if d is not None and d.obj is not None:
                if isinstance(d.obj, (list, tuple)) and pos < len(d.obj):
                    v = d.obj[pos]
                elif isinstance(d.obj, dict):
                    v = d.obj.get(name)
                if isinstance(v, torch.Tensor) and v.numel() == 1:
                    v = v.item()
                if v is not None:
                    self.fed[name] = f"{os.path.basename(d.path)}[{pos if not isinstance(d.obj, dict) else name!r}]"
            if v is None:
                v = _sym_eval(a[1], syms)
                if v is not None:
                    self.fed[name] = f"bound from the inputs' shapes ({a[1]} = {v})"
            if v is None:
                missing.append(name)
                continue
            self.inputs[name] = v
            if re.fullmatch(r"[A-Za-z_]\w*", a[1]):
                syms.setdefault(a[1], v)
        for name, v in self.inputs.items():
            if isinstance(v, torch.Tensor) and (v.is_floating_point()):
                self.inputs64[name] = v.to(torch.float64)
            else:
                self.inputs64[name] = v
        threads = plan.get("threads")
        if threads is None:
            # Graphs of small tensors spend their time waking OpenMP workers (10x slower on a
            # busy 2-core machine); one thread then runs them fastest. Big tensors keep torch's
            # default. Summation order inside one op does not depend on this below ATen's
            # parallel grain, so small graphs give the same bits either way.
            big = max((v.numel() for v in self.inputs.values() if isinstance(v, torch.Tensor)),
                      default=0)
            threads = 1 if big < (1 << 20) else None
        if threads:
            torch.set_num_threads(int(threads))
        ev = {"event": "inputs", "fed": self.fed, "missing": missing,
              "threads": torch.get_num_threads()}
        if syms:
            ev["bound"] = syms
        if cast:
            ev["cast"] = cast
        emit(ev)
        if missing:
            self.say(f"no value for {len(missing)} graph input(s) ({', '.join(missing[:6])}"
                     f"{'…' if len(missing) > 6 else ''}): what depends on them is not checked")

    def _from_consumer(self, d, name, g):
        # TorchAir's npy dump saves each call's positional inputs, not the graph's inputs:
        # a placeholder's value is the INPUT.i of a node that takes it as argument i
        for st in g.stmts:
            if st.kind != NODE or name not in st.ins:
                continue
            args = _positional_names(st.tmpl, st.ins)
            for i, a in enumerate(args):
                if a == name and (st.name, i) in d.inputs:
                    p = d.inputs[(st.name, i)]
                    return d.load_file(p), p
        return None, None

    def input_hash(self, name, v):
        h = self.input_hashes.get(name)
        if h is None:
            h = self.input_hashes[name] = tensor_hash(v)
        return h

    def dumped(self, name):
        for d in (self.values_dump, self.dump):
            if d is not None and d.kind != "file" and d.has(name):
                return d
            if d is not None and d.kind == "file" and isinstance(d.obj, dict) and name in d.obj:
                return d
        return None

    def dumped_value(self, name, st, fp64):
        d = self.dumped(name)
        key = (id(d), name)
        v = self.dump_cache.get(key)
        if v is None:
            v = d.load(name)
            a = parse_ann(st.ann)
            if isinstance(v, torch.Tensor) and a and a[0] == "tensor" and a[1] is not None \
                    and v.dtype != a[1]:
                v = v.to(a[1])
            if not isinstance(v, torch.Tensor):
                return Unknown(name, f"the dump's `{name}` is not a tensor", st.target)
            if len(self.dump_cache) < 4096:
                self.dump_cache[key] = v
        if fp64 and v.is_floating_point():
            v = v.to(torch.float64)
        return v

    def dumped_instead(self, name, st, fp64, run):
        """The value of a node whose op cannot run here (no reference, a collective), when a
        dump holds the node with the shape the text gives it: the device computed it, and it is
        judged like any other. Only for such nodes: a node downstream of one is computed, or
        the dump would hide what a pass changed."""
        if self.dumped(name) is None:
            return None
        v = self.dumped_value(name, st, fp64)
        if not isinstance(v, torch.Tensor):
            return None
        a = parse_ann(st.ann)
        if a and a[0] == "tensor" and all(isinstance(d, int) for d in a[2]) \
                and list(v.shape) != a[2]:
            return None
        run.from_dump[st.target] = run.from_dump.get(st.target, 0) + 1
        return v

    def attr_value(self, p, st, prev_run, fp64):
        """A get_attr node (constant folding's `self._frozen_param0`, a lifted
        `self._tensor_constant0`): the pass text holds no value, so take that node's value in
        the pass before, or the dump's under the node's (or attribute's) name."""
        name = st.name
        if st.attr in p.graph.nested:
            return self.nested_module(p.graph, st.attr, fp64)
        if prev_run is not None:
            q = p.pair.get(name)
            v = prev_run.values.get(q) if q is not None else None
            if v is not None:
                return v
        for key in (name, st.attr):
            if self.dumped(key) is not None:
                return self.dumped_value(key, st, fp64)
        a = parse_ann(st.ann)
        if a and a[0] == "tensor" and a[1] is not None and any(d == 0 for d in a[2]) \
                and all(isinstance(d, int) for d in a[2]):
            # an empty constant (f32[0]) has no values to know
            return torch.empty(a[2], dtype=torch.float64 if fp64 and a[1].is_floating_point else a[1],
                               device=self.device)
        where = "the pass before has no such node" if p.prev is not None else "no pass before it"
        return Unknown(name, f"constant `self.{st.attr}` is not in the pass file: {where} and "
                             f"the dump has no `{name}`", "get_attr")

    def nested_module(self, g, cls, fp64):
        key = (id(g), cls, fp64)
        m = self.dump_cache.get(key)
        if m is not None:
            return m
        src = g.nested[cls]
        bad = _refused(_mask(src))
        if bad and bad not in ("__init__",):
            return Unknown(cls, f"refused: the sub-graph reaches `{bad}`", "get_attr")
        ns = {"torch": self.genv["torch"], "device": self.genv["device"], "inf": math.inf,
              "nan": math.nan, "operator": operator, "math": math,
              "__builtins__": dict(_SAFE_BUILTINS, __build_class__=__builtins__["__build_class__"]
                                   if isinstance(__builtins__, dict) else __builtins__.__build_class__,
                                   __name__="fxray_nested")}
        ns["__name__"] = "fxray_nested"
        src = re.sub(r"^class\s+[^\s(:]+", f"class {_ident(cls)}", src, count=1)
        try:
            code = _fp64_code(src) if fp64 else compile(src, "<fxray sub-graph>", "exec")
            exec(code, ns)
            m = ns[_ident(cls)]()
        except Exception as e:
            return Unknown(cls, f"sub-graph `{cls}`: {type(e).__name__}: {e}", "get_attr")
        self.dump_cache[key] = m
        return m

    def setup_check(self, plans):
        """When the inputs are a stage dump holding node values too, pick the pass whose graph
        it dumped (the first or the last) and a sample of its nodes to compare."""
        self.check = None
        d = self.dump
        if d is None or d.kind not in ("pt", "npy", "npy_dump"):
            return
        good = [p for p in plans if p.graph is not None]
        first, last = good[0], good[-1]

        def cover(p):
            phs = {n for n, _ in p.graph.placeholders}
            return [n for n in p.graph.index if n not in phs and d.has(n)]

        c0, cl = cover(first), cover(last)
        if not c0 and not cl:
            return
        p = first if len(c0) >= len(cl) else last
        names = c0 if p is first else cl
        names = [n for n in names if p.graph.index[n].kind == NODE]
        if not names:
            return
        step = max(1, len(names) // 48)
        sample = list(dict.fromkeys(names[:16] + names[::step]))[:80]
        p.need |= set(sample)
        p.sample = sample
        self.check = p
        # the float64 reference values of what they stand for are needed for the rule
        self.check_origins = {n: p.origin.get(n) for n in sample}

    def run_all(self, plans):
        good = [p for p in plans if p.graph is not None]
        p0 = good[0]
        # the reference: pass 0 in float64; keep what every later judged node stands for
        ref_need = set()
        for p in good[1:]:
            if p.R:
                for n in p.R:
                    if isinstance(n, str):
                        o = p.origin.get(n)
                        if o is not None:
                            ref_need.add(o)
        if self.check is not None:
            ref_need |= {o for o in self.check_origins.values() if o}
        answer_state = {"guilty": None, "unchecked": {}, "random": [], "replayed": 0,
                        "refs": {}}
        prev_run = None
        ref64 = None
        for p in plans:
            t0 = time.monotonic()
            if p.graph is None:
                emit({"event": "pass", "index": p.index, "name": p.name, "replayed": False,
                      "error": p.error, "nodes": 0, "recomputed": 0, "seconds": 0.0,
                      "departs": [], "departs_total": 0, "unchecked": [], "unchecked_total": 0})
                self.say(f"pass {p.index:03d} {p.name}: {p.error}")
                continue
            ev = {"event": "pass", "index": p.index, "name": p.name}
            if p is p0:
                keep = p.need | {n for n in p.graph.index if p.graph.index[n].rand}
                run = run_pass(self, p, self.inputs, None, keep=keep)
                ref_run = run_pass(self, p, self.inputs64, _RandomFrom(run), fp64=True, keep=ref_need)
                ref64 = ref_run.values
                ev["replayed"] = True
            elif p.identical or not p.R:
                run = PassRun()
                run.values = {n: prev_run.values[p.pair[n]] for n in p.need
                              if n in p.pair and p.pair[n] in prev_run.values}
                if self.hashes:
                    run.hashes = {n: prev_run.hashes[q] for n, q in p.pair.items()
                                  if q in prev_run.hashes}
                    for n, _ in p.graph.placeholders:
                        if n in prev_run.hashes:
                            run.hashes[n] = prev_run.hashes[n]
                ev["replayed"] = False
                ev["same_as"] = p.spec.get("same_as")
            else:
                run = run_pass(self, p, self.inputs, prev_run, ref64=ref64)
                ev["replayed"] = True
            if ev["replayed"]:
                answer_state["replayed"] += 1
            if p is self.check:
                self.check_inputs(p, run, ref64)
            unchecked = []
            fresh = {}
            for root, (target, why, down) in run.unknown_roots.items():
                u = {"node": root, "target": target, "why": why, "downstream": down}
                since = self.since(plans, p, target)
                if since is not None:
                    u["since"], u["since_name"] = since.index, since.name
                unchecked.append(u)
                key = (root, target)
                if key not in answer_state["unchecked"]:
                    answer_state["unchecked"][key] = dict(u, first_pass=p.index)
                    fresh.setdefault((target, why), []).append(u)
            for (target, why), us in fresh.items():
                more = f" (and {len(us) - 1} more node(s) like it)" if len(us) > 1 else ""
                after = sum(u["downstream"] for u in us)
                self.say(f"pass {p.index:03d} {p.name}: `{us[0]['node']}` ({target}){more} cannot "
                         f"be computed here: {why}"
                         + (f"; {after} node(s) after it are not checked" if after else ""))
            ev.update(nodes=p.graph.node_count(), recomputed=run.recomputed,
                      seconds=round(time.monotonic() - t0, 4),
                      departs=run.departs[:CAP], departs_total=run.departs_total,
                      unchecked=unchecked[:CAP], unchecked_total=len(unchecked))
            if run.from_dump:
                ev["from_dump"] = run.from_dump
                for k2, c in run.from_dump.items():
                    self.say(f"pass {p.index:03d} {p.name}: {c} node(s) of `{k2}`, which cannot run "
                             f"here, take their value from the dump")
            if run.refs:
                ev["references"] = run.refs
                for k2, c in run.refs.items():
                    answer_state["refs"][k2] = answer_state["refs"].get(k2, 0) + c
            if self.hashes:
                ev["hashes"] = run.hashes
                if p is p0:
                    ev["hashes64"] = ref_run.hashes
            rnd = [d for d in run.departs if d.get("random")]
            if rnd:
                self.say(f"pass {p.index:03d} {p.name} changed randomness, not arithmetic: "
                         f"`{rnd[0]['node']}` ({rnd[0]['target']}) draws new random numbers here "
                         f"and the dump has no value for it")
                answer_state["random"].append({"index": p.index, "name": p.name,
                                               "node": rnd[0]["node"], "target": rnd[0]["target"]})
            if answer_state["guilty"] is None:
                for d in run.departs:
                    if d["inputs_agree"] and not d.get("random"):
                        st = p.graph.index.get(d["node"])
                        answer_state["guilty"] = {
                            "index": p.index, "name": p.name, "node": d["node"],
                            "target": d["target"], "paired_with": d["paired_with"],
                            "inputs_agree": True, "numbers": numbers_text(d),
                            "source": _source_of(p.graph.path, st.line if st else 0)}
                        break
            emit(ev)
            # only what the next pass needs stays; the rest of this pass's values go now
            prev_run = run
            del run
        emit(self.answer(answer_state, good))
        return 0

    def since(self, plans, p, target):
        if not target or target in ("?", "get_attr", "alias", "getitem", "expr"):
            return None
        first = None
        for q in plans:
            if q.graph is None:
                continue
            if target in q.graph.targets:
                first = q
                break
            if q is p:
                break
        return first

    def check_inputs(self, p, run, ref64):
        """Does this pass, replayed here, reproduce the dump's own values? A loose test on
        purpose: the dump was made on the device, whose kernels round differently, so torch's
        noise rule would flag a right run; other inputs give unrelated values (cosine far from
        1), which is what this must catch."""
        bad, total, first_bad = 0, 0, None
        for n in p.sample:
            v = run.values.get(n)
            if not isinstance(v, torch.Tensor):
                continue
            try:
                dv = self.dumped_value(n, p.graph.index[n], False)
            except Exception:
                continue
            if not isinstance(dv, torch.Tensor) or dv.shape != v.shape:
                if isinstance(dv, torch.Tensor):
                    total += 1
                    bad += 1
                    first_bad = first_bad or n
                continue
            total += 1
            if not _resembles(dv, v):
                bad += 1
                first_bad = first_bad or n
        if not total:
            return
        which = f"pass {p.index:03d} {p.name}"
        if bad * 2 > total:
            self.say(f"the inputs are not this run's: {which} replayed on them does not reproduce "
                     f"the dump's own values ({bad} of {total} sampled nodes differ, first "
                     f"`{first_bad}`)")
        elif bad:
            self.say(f"{which} replayed here differs from the dump at {bad} of {total} sampled "
                     f"nodes (first `{first_bad}`): this machine computes some ops differently "
                     f"from the device")

    def answer(self, st, good):
        g = st["guilty"]
        unchecked = sorted(st["unchecked"].values(), key=lambda u: (u["first_pass"], u["node"]))
        ev = {"event": "answer", "guilty": g, "replayed": st["replayed"],
              "unchecked": unchecked[:CAP], "random": st["random"]}
        if st["refs"]:
            ev["references"] = st["refs"]
        first = good[0].index
        if g is not None:
            where = f", {g['source']}" if g.get("source") else ""
            s = (f"pass {g['index']:03d} {g['name']} broke it: `{g['node']}` ({g['target']}{where}) "
                 f"departs ({g['numbers']}) while its inputs agree")
            if g["index"] > first:
                s += (f"; passes {first:03d}–{g['index'] - 1:03d} keep the numbers"
                      if g["index"] - 1 > first else f"; pass {first:03d} keeps the numbers")
        elif unchecked:
            s = ("no pass changed the numbers beyond floating-point noise where they could be "
                 f"checked ({st['replayed']} replayed)")
        else:
            s = ("every pass keeps the numbers within floating-point noise "
                 f"({st['replayed']} replayed)")
        extra = []
        if st["random"]:
            r = st["random"][0]
            extra.append(f"pass {r['index']:03d} {r['name']} changed randomness (not arithmetic) "
                         f"at `{r['node']}`")
        if unchecked:
            u = unchecked[0]
            bit = f"`{u['node']}` ({u['target']}"
            if u.get("since") is not None:
                bit += f", brought in by pass {u['since']:03d} {u['since_name']}"
            bit += ")"
            more = sum(x["downstream"] for x in unchecked)
            tail = f" and {more} node(s) after" if more else ""
            others = f" and {len(unchecked) - 1} more" if len(unchecked) > 1 else ""
            extra.append(f"not checked: {bit}{others}{tail}: {u['why']}")
        if extra:
            s += "; " + "; ".join(extra)
        ev["sentence"] = s
        return ev


_FLOAT_DTYPES = {"float16", "half", "bfloat16", "float32", "float", "float8_e4m3fn",
                 "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"}


def _fp64_code(src):
    """torch._dynamo.debug_utils.cast_dtype_args_to_fp64 on one statement: float dtype
    arguments of convert_element_type and `dtype=` keywords become float64, and softmax's
    half_to_float is dropped. npu_dtype_cast's dtype (positional) is treated like a dtype=."""
    import ast

    def is_float_dtype(n):
        return (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
                and n.value.id == "torch" and n.attr in _FLOAT_DTYPES)

    f64 = lambda: ast.Attribute(value=ast.Name(id="torch", ctx=ast.Load()),  # noqa: E731
                                attr="float64", ctx=ast.Load())
    tree = ast.parse(src)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = ast.unparse(node.func)
        if not fn.startswith("torch."):
            continue
        if "convert_element_type" in fn and len(node.args) == 2 and is_float_dtype(node.args[1]):
            node.args[1] = f64()
        if "dtype_cast" in fn and len(node.args) >= 2 and is_float_dtype(node.args[1]):
            node.args[1] = f64()
        for kw in node.keywords:
            if kw.arg == "dtype" and is_float_dtype(kw.value):
                kw.value = f64()
        if fn.endswith("softmax.default") or fn.endswith("softmax.out"):
            for kw in node.keywords:
                if kw.arg == "half_to_float":
                    kw.value = ast.Constant(False)
            if len(node.args) >= 3:
                node.args[2] = ast.Constant(False)
    ast.fix_missing_locations(tree)
    return compile(tree, "<fxray replay>", "exec")


# ------------------------------------------------------------------ planning
class PassPlan:
    def __init__(self, k, spec):
        self.k = k
        self.spec = spec
        self.index = spec.get("index", k)
        self.name = spec.get("name") or os.path.basename(spec.get("file", "?"))
        self.graph = None
        self.error = None
        self.identical = False      # same text as the pass before: nothing to run
        self.R = None               # names (and MUT positions) recomputed
        self.own = set()            # ... of them, those the pass itself changed
        self.textsame = set()       # random nodes whose statement this pass left as it was
        self.pair = {}              # node -> node of the pass before
        self.need = set()           # values of this pass the next pass needs
        self.origin = {}            # node -> node of pass 0 it stands for
        self.sample = []            # nodes checked against the inputs dump
        self.carry = set()          # nodes not recomputed whose value is taken from the pass before
        self.prev = None
        self.text_key = None


def build_plans(plan, rp):
    specs = plan.get("passes") or []
    plans = [PassPlan(k, s) for k, s in enumerate(specs)]
    texts = {}
    by_index = {}
    last = time.monotonic()
    for p in plans:
        if time.monotonic() - last > 1.0:
            last = time.monotonic()
            emit({"event": "progress", "index": p.index, "stage": "read", "done": p.k,
                  "of": len(plans)})
        by_index[p.index] = p
        s = p.spec
        src = s.get("same_as")
        if src is not None and src in by_index and by_index[src].graph is not None \
                and (s.get("graph") == by_index[src].spec.get("graph")):
            p.graph = by_index[src].graph
            p.text_key = by_index[src].text_key
            continue
        try:
            with open(s["file"], "rb") as f:
                raw = f.read()
            key = (hashlib.sha1(raw).hexdigest(), s.get("graph"))
            p.text_key = key
            if key in texts:
                p.graph = texts[key]
                continue
            text = raw.decode("utf-8", errors="replace")
            p.graph = parse_graph(s["file"], text, s.get("graph"))
            texts[key] = p.graph
            for msg in p.graph.problems[:20]:
                rp.say(msg)
        except Exception as e:
            p.error = f"{type(e).__name__}: {e}" if not isinstance(e, (ValueError, OSError)) else str(e)
            p.text_key = None
    done = set()
    for p in plans:
        if p.graph is None or id(p.graph) in done:
            continue
        done.add(id(p.graph))
        for st in p.graph.stmts:
            if st.kind == NODE or st.kind == MUT:
                mut, rand, _ = rp.op_info(st.target)
                st.mut = st.mut or mut
                st.rand = rand
                parts = st.target.split(".")
                st.empty = len(parts) >= 2 and parts[1] in EMPTY_OPS
        if p.graph.first_mut is None:
            for st in p.graph.stmts:
                if st.mut:
                    p.graph.first_mut = st.pos
                    break
    return plans


def plan_recompute(plans):
    """What each pass must recompute (the rest is taken from the pass before), what each pass
    must keep for the next, and which pass-0 node every node stands for."""
    prev = None
    for p in plans:
        g = p.graph
        if g is None:
            continue
        if prev is None:
            p.R = {s.name if s.kind != MUT else ("mut", s.pos) for s in g.stmts if s.kind != FREE}
            p.own = p.R
            p.origin = {n: n for n in g.index}
            p.origin.update({n: n for n, _ in g.placeholders})
            p.prev = None
            prev = p
            continue
        p.prev = prev
        gp = prev.graph
        phs = {n for n, _ in g.placeholders}
        pphs = {n for n, _ in gp.placeholders}
        spec_pairs = p.spec.get("pairs")
        pair = {}
        if g is gp and (not spec_pairs or all(a == b for a, b in spec_pairs.items())):
            # the same text as the pass before: every name stands for itself
            if g.identity is None:
                g.identity = {n: n for n in g.index}
                g.identity.update({n: n for n in phs})
            p.pair, p.origin = g.identity, prev.origin
            p.identical = not p.spec.get("changed")
            if p.identical:
                p.R, p.own = set(), set()
                prev = p
                continue
            pair = p.pair
        else:
            if spec_pairs:
                taken = set()
                for a, b in spec_pairs.items():
                    if a in g.index and b in gp.index:
                        pair[a] = b
                        taken.add(b)
                for n in g.index:
                    if n not in pair and n in gp.index and n not in taken:
                        pair[n] = n
            else:
                pair = {n: n for n in g.index if n in gp.index}
        for n in phs:
            if n in pphs:
                pair[n] = n
        p.pair = pair
        if p.origin is None or not p.origin:
            p.origin = {n: prev.origin[q] for n, q in pair.items() if q in prev.origin}
        # own: the statement itself changed (its text, or which nodes it reads); R adds what
        # reads a recomputed node. At run time a node in R only through its inputs is taken
        # from the pass before when those inputs came out bit-identical.
        own = {n for n in (p.spec.get("changed") or ()) if n in g.index}
        R = set(own)
        seed_full = False
        muts_now = [(s.tmpl, tuple(pair.get(i, "?" + i) for i in s.ins)) for s in g.stmts if s.mut]
        muts_before = [(s.tmpl, s.ins) for s in gp.stmts if s.mut]
        if muts_now != muts_before:
            # a pass that adds, drops or edits an in-place statement changes what every
            # later reader of that tensor sees: recompute all of it
            seed_full = True
        first_mut = g.first_mut
        pfirst = gp.first_mut
        p.textsame = textsame = set()
        for s in g.stmts:
            if s.kind == FREE:
                continue
            key = s.name if s.kind != MUT else ("mut", s.pos)
            if s.rand and s.kind == NODE:
                q = pair.get(s.name)
                ps = gp.index.get(q) if q is not None else None
                if ps is not None and ps.tmpl == s.tmpl and all(
                        pair.get(i) == j for i, j in zip(s.ins, ps.ins)):
                    textsame.add(s.name)
            if seed_full or s.kind == MUT:
                if seed_full or any(i in R for i in s.ins):
                    R.add(key)
                    own.add(key)
                continue
            if s.name in R:
                continue
            q = pair.get(s.name)
            ps = gp.index.get(q) if q is not None else None
            if ps is None or ps.kind != s.kind or ps.tmpl != s.tmpl or len(ps.ins) != len(s.ins) \
                    or any(pair.get(i) != j for i, j in zip(s.ins, ps.ins)) \
                    or (first_mut is not None and pfirst is not None and s.pos < first_mut
                        and ps.pos >= pfirst):   # (moved before an in-place statement)
                R.add(key)
                own.add(key)
                continue
            for i in s.ins:
                if i in R:
                    R.add(key)
                    break
        if R and first_mut is not None and not seed_full:
            # values carried from the pass before were recorded when their node ran; after an
            # in-place statement the tensors a later statement reads may no longer hold them
            for s in g.stmts[first_mut:]:
                if s.kind != FREE:
                    key = s.name if s.kind != MUT else ("mut", s.pos)
                    R.add(key)
                    own.add(key)
        p.R = R
        p.own = own
        prev = p


def plan_keep(plans):
    """Backwards: what each pass must keep for the one after it (judging the pairs it
    recomputes, feeding what it recomputes, and what it passes on itself)."""
    for idx in range(len(plans) - 1, -1, -1):
        p = plans[idx]
        if p.graph is None or p.prev is None:
            continue
        phs = {n for n, _ in p.graph.placeholders}
        if not p.R:
            p.carry = p.need - phs
            p.prev.need |= {p.pair[n] for n in p.carry if n in p.pair}
            continue
        need_prev = set()
        R = p.R
        ins_of_R = set()
        for s in p.graph.stmts:
            if s.kind == FREE:
                continue
            key = s.name if s.kind != MUT else ("mut", s.pos)
            if key in R:
                ins_of_R.update(s.ins)
                if s.kind != MUT:
                    q = p.pair.get(s.name)
                    if q is not None:
                        need_prev.add(q)
        p.carry = set()
        for n in (ins_of_R | p.need):
            if n in phs or n in R or n not in p.graph.index:
                continue
            p.carry.add(n)
            q = p.pair.get(n)
            if q is not None:
                need_prev.add(q)
        p.prev.need |= need_prev


# ------------------------------------------------------------------ running one pass
class PassRun:
    def __init__(self):
        self.values = {}        # kept values (need)
        self.hashes = {}
        self.verdict = {}       # judged node -> bool
        self.departs = []
        self.departs_total = 0
        self.unknown_roots = {}  # root -> [target, why, downstream count]
        self.recomputed = 0
        self.random = []
        self.refs = {}
        self.from_dump = {}     # op -> nodes whose value a dump supplied (the op cannot run here)
        self.agree_memo = {}


def run_pass(rp, p, inputs, prev_run, fp64=False, ref64=None, keep=None):
    g = p.graph
    R = p.R
    run = PassRun()
    keep = p.need if keep is None else keep
    env = {}
    for name, ann in g.placeholders:
        v = inputs.get(name)
        if v is None:
            v = Unknown(name, "no value for this graph input", "placeholder")
        env[name] = v
        if rp.hashes and isinstance(v, torch.Tensor):
            run.hashes[name] = tensor_hash(v) if fp64 else rp.input_hash(name, v)
    judging = prev_run is not None and not fp64
    prev_vals = prev_run.values if prev_run is not None else {}
    prev_hashes = prev_run.hashes if prev_run is not None else {}
    pair = p.pair
    carry = getattr(p, "carry", set())
    # tensors that several dicts may hold, by storage, to copy before an in-place statement
    alias = None
    if g.first_mut is not None:
        alias = {}
        # (float64 inputs are the same objects in both input dicts)
        for d in (prev_vals, rp.inputs, rp.inputs64, run.values):
            for k2, v in d.items():
                if isinstance(v, torch.Tensor):
                    alias.setdefault(_sptr(v), []).append((d, k2))
    stmts = g.stmts
    total = len(stmts)
    last = time.monotonic()
    own = p.own
    ident = set()   # recomputed nodes whose value came out bit-identical to the pass before
    torch.manual_seed(0)
    for ix, st in enumerate(stmts):
        kind = st.kind
        if kind == FREE:
            for nm in st.names:
                env.pop(nm, None)
            continue
        if ix % 2048 == 0 and time.monotonic() - last > 1.0:
            last = time.monotonic()
            emit({"event": "progress", "index": p.index, "done": ix, "of": total,
                  "stage": "reference" if fp64 else "replay"})
        name = st.name
        key = name if kind != MUT else ("mut", st.pos)
        if key not in R:
            if kind == MUT:
                continue
            if name in carry or name in keep:
                q = pair.get(name)
                v = prev_vals.get(q, None) if q is not None else None
                if v is None:
                    v = Unknown(name, "its value was not kept from the pass before (replay bug)",
                                st.target)
                env[name] = v
                if name in keep:
                    run.values[name] = v
                    if alias is not None and isinstance(v, torch.Tensor):
                        alias.setdefault(_sptr(v), []).append((run.values, name))
            if rp.hashes and not fp64:
                q = pair.get(name)
                if q in prev_hashes:
                    run.hashes[name] = prev_hashes[q]
            continue
        if judging and kind != MUT and key not in own:
            # in R only because an input was recomputed: when every recomputed input came out
            # bit-identical, so does this node; take it from the pass before
            for i in st.ins:
                if i in R and i not in ident:
                    break
            else:
                q = pair.get(name)
                if q in prev_vals:
                    v = prev_vals[q]
                    env[name] = v
                    ident.add(name)
                    run.verdict[name] = True
                    if name in keep:
                        run.values[name] = v
                        if alias is not None and isinstance(v, torch.Tensor):
                            alias.setdefault(_sptr(v), []).append((run.values, name))
                    if rp.hashes and q in prev_hashes:
                        run.hashes[name] = prev_hashes[q]
                    continue
        run.recomputed += 1
        # ---- compute
        v = None
        if kind == ATTR:
            v = rp.attr_value(p, st, prev_run, fp64)
        else:
            try:
                args = [env[i] for i in st.ins]
            except KeyError as e:
                args = None
                v = Unknown(name, f"reads `{e.args[0]}` after the text freed it", st.target)
            if args is not None:
                bad = None
                for a in args:
                    if type(a) is Unknown:
                        bad = a
                        break
                if bad is not None:
                    v = bad
                    if st.target == "getitem" and st.ins and bad.root == st.ins[0]:
                        # an element of a tuple-valued op that cannot run here
                        got = rp.dumped_instead(name, st, fp64, run)
                        if got is not None:
                            v = got
                elif st.rand and rp.dumped(name) is not None:
                    v = rp.dumped_value(name, st, fp64)
                elif st.rand and name in p.textsame and st.target.split(".")[1] in PURE_SAMPLERS \
                        and isinstance(prev_vals.get(pair.get(name)), torch.Tensor):
                    # recomputed only for the replay's own reasons: the same draw as before
                    v = prev_vals[pair[name]]
                elif st.rand and fp64 and isinstance(prev_vals.get(name), torch.Tensor):
                    pv = prev_vals[name]
                    v = pv.to(torch.float64) if pv.is_floating_point() else pv
                else:
                    if st.mut and alias is not None:
                        for a in args:
                            if isinstance(a, torch.Tensor):
                                _protect(alias, a)
                    try:
                        v = rp.fn_for(st, fp64)(*args)
                    except Exception as e:
                        v = None
                        if isinstance(e, MissingOp) or "process group" in str(e):
                            v = rp.dumped_instead(name, st, fp64, run)
                        if v is None:
                            v = Unknown(name, _why(e, st, rp), st.target)
                    else:
                        if st.empty and isinstance(v, torch.Tensor):
                            v.zero_()
                        if st.rand and not fp64 and judging:
                            run.random.append(name)
                        how = rp.op_info(st.target)[2] if kind == NODE else ""
                        if how == "reference":
                            run.refs[st.target] = run.refs.get(st.target, 0) + 1
        if kind == MUT:
            env[name] = v
            continue
        env[name] = v
        if type(v) is Unknown:
            r = run.unknown_roots.get(v.root)
            if r is None:
                r = run.unknown_roots[v.root] = [v.target, v.why, 0]
            if v.root != name:
                r[2] += 1
            if name in keep:
                run.values[name] = v
            continue
        if name in keep:
            run.values[name] = v
            if alias is not None and isinstance(v, torch.Tensor):
                alias.setdefault(_sptr(v), []).append((run.values, name))
        if not isinstance(v, torch.Tensor):
            if judging and isinstance(v, (tuple, list)):
                q = pair.get(name)
                if q is not None and _identical(prev_vals.get(q), v):
                    ident.add(name)
            continue
        if rp.hashes:
            run.hashes[name] = tensor_hash(v)
        if judging and not st.empty:
            q = pair.get(name)
            if q is not None:
                pv = prev_vals.get(q)
                # a pair whose shape changed is not the same value under a kept name (a pass
                # that rebuilt the graph reused it): judged through its consumers instead
                if isinstance(pv, torch.Tensor) and pv.shape == v.shape:
                    if pv.dtype == v.dtype and torch.equal(pv, v):
                        ident.add(name)
                        run.verdict[name] = True
                        continue
                    origin = p.origin.get(name)
                    r64 = ref64.get(origin) if (ref64 is not None and origin is not None) else None
                    ok, nb = judge(pv, v, r64)
                    run.verdict[name] = ok
                    if not ok:
                        run.departs_total += 1
                        ia = all(_agree(run, p, i) for i in dict.fromkeys(st.ins))
                        if len(run.departs) < CAP or (ia and not any(d["inputs_agree"] for d in run.departs)):
                            d = {"node": name, "target": st.target, "paired_with": q,
                                 "inputs_agree": ia}
                            if name in run.random:
                                d["random"] = True
                            d.update(nb or {})
                            run.departs.append(d)
    return run


def _why(e, st, rp):
    if isinstance(e, MissingOp):
        q = e.args[0]
        if q.startswith("_c10d_functional.") or q.startswith("c10d."):
            return f"`{q}` is a collective across ranks: one rank's replay cannot compute it"
        return (f"op `{q}` is not in this torch"
                + ("" if rp.npu or not q.startswith("npu.") else " (no torch_npu here)")
                + " and the replay has no reference for it; a dump holding this node's "
                  "value would stand in")
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    if "process group" in msg:
        return f"`{st.target}` is a collective across ranks: one rank's replay cannot compute it"
    return f"{type(e).__name__}: {msg[:300]}"


def _resembles(a, b):
    if a.is_floating_point() or b.is_floating_point():
        a, b = a.detach().double().flatten(), b.detach().double().flatten()
        fin = torch.isfinite(a) & torch.isfinite(b)
        if not torch.equal(torch.isfinite(a), torch.isfinite(b)):
            return False
        a, b = a[fin], b[fin]
        na, nb = a.norm().item(), b.norm().item()
        if na < 1e-12 or nb < 1e-12:
            return na < 1e-6 and nb < 1e-6
        return (a @ b).item() / (na * nb) >= 0.99
    if a.numel() == 0:
        return True
    return (a == b).double().mean().item() >= 0.99


def _identical(a, b):
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)) and len(a) == len(b):
        return all(_identical(x, y) for x, y in zip(a, b))
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and bool(torch.equal(a, b))
    if isinstance(a, (int, float, bool)) and isinstance(b, (int, float, bool)):
        return a == b
    return a is None and b is None


def _agree(run, p, name):
    """Does input `name` agree with its counterpart in the pass before? Not recomputed: yes
    (same value). Judged: its verdict. Recomputed but not judged (a node the pass built, or a
    tuple): its own inputs, back to the nearest judged producers."""
    if name in run.verdict:
        return run.verdict[name]
    if name not in p.R or name not in p.graph.index:
        return True
    m = run.agree_memo.get(name)
    if m is not None:
        return m
    run.agree_memo[name] = True  # cycles cannot happen in a graph; this bounds recursion anyway
    st = p.graph.index[name]
    r = all(_agree(run, p, i) for i in st.ins)
    run.agree_memo[name] = r
    return r


def _sptr(t):
    try:
        return t.untyped_storage().data_ptr()
    except Exception:
        return id(t)


def _protect(alias, t):
    """Before `t` is written in place, every kept value sharing its storage becomes a copy,
    so that what was recorded stays the value its node had when it ran."""
    sp = _sptr(t)
    if not sp:
        return
    for d, k in alias.pop(sp, ()):
        v = d.get(k)
        if isinstance(v, torch.Tensor) and _sptr(v) == sp:
            d[k] = v.clone()


# ------------------------------------------------------------------ entry
def _import_npu():
    try:
        import torch_npu  # noqa: F401  (registers torch.ops.npu and the npu device)
        return True
    except Exception:
        return False


def main_plan(plan):
    if not isinstance(plan, dict) or not isinstance(plan.get("passes"), list) \
            or not all(isinstance(p, dict) for p in plan["passes"]):
        problem("the plan has no list of passes ({\"passes\": [{\"index\", \"file\", …}]})")
        return 2
    npu = _import_npu()
    try:
        torch.empty(1, device=plan.get("device") or "cpu")
    except Exception as e:
        problem(f"device {plan.get('device')!r} is not usable here ({str(e).splitlines()[0]}): "
                f"replaying on the CPU")
        plan = dict(plan, device="cpu")
    rp = Replay(plan)
    rp.npu = npu
    npu_ver = None
    if rp.npu:
        try:
            import torch_npu
            npu_ver = getattr(torch_npu, "__version__", "?")
        except Exception:
            pass
    emit({"event": "start", "torch": torch.__version__, "python": sys.version.split()[0],
          "torch_npu": npu_ver, "device": str(rp.device), "passes": len(plan.get("passes") or [])})
    plans = build_plans(plan, rp)
    good = [p for p in plans if p.graph is not None]
    if not good:
        for p in plans:
            emit({"event": "pass", "index": p.index, "name": p.name, "replayed": False,
                  "error": p.error, "nodes": 0, "seconds": 0.0, "departs": [], "unchecked": []})
        emit({"event": "answer", "guilty": None, "replayed": 0, "unchecked": [], "random": [],
              "sentence": "nothing replayed: no pass file could be read"})
        return 1
    p0 = good[0]
    rp.setup_inputs(plan, p0, good)
    plan_recompute(plans)
    rp.setup_check(plans)
    plan_keep(plans)
    return rp.run_all(plans)


class _RandomFrom:
    """The float64 reference draws no random numbers of its own: a random node takes the
    float32 run's value (cast), so both runs see the same sample."""

    def __init__(self, run):
        self.values = run.values
        self.hashes = {}


def _ident(name):
    return re.sub(r"\W", "_", name) or "_graph"


def _positional_names(tmpl, ins):
    """Names at each top-level positional argument of a call template."""
    j = tmpl.find("(")
    if j < 0:
        return []
    body = tmpl[j + 1:tmpl.rfind(")")]
    out, depth, cur, k = [], 0, [], 0
    for c in body:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    out.append("".join(cur))
    names = []
    for a in out:
        a = a.strip()
        if "=" in a.split("(")[0] and not a.startswith("\x00"):
            break                      # keyword arguments follow
        n = a.count("\x00")
        if a == "\x00":
            names.append(ins[k])
        else:
            names.append(None)
        k += n
    return names


def _sym_eval(expr, syms):
    if expr in syms:
        return syms[expr]
    if not re.fullmatch(r"[\w\s+\-*/()%,.]*", expr):
        return None
    env = {"Max": max, "Min": min, "FloorDiv": lambda a, b: a // b,
           "CeilToInt": math.ceil, "FloorToInt": math.floor, "__builtins__": {}}
    env.update(syms)
    try:
        v = eval(expr, env)
        return int(v) if float(v).is_integer() else v
    except Exception:
        return None


def _source_of(path, line):
    """The `# File: …` comment in effect at a statement's line: where the user's code made it."""
    if not line:
        return None
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()[:line]
    except OSError:
        return None
    for ln in reversed(lines):
        s = ln.strip()
        if s.startswith("# File:"):
            m = re.match(r"# File: (.*?):(\d+) in (\w+)", s)
            if m:
                return f"{os.path.basename(m.group(1))}:{m.group(2)} in {m.group(3)}"
            return s[7:].strip()[:120]
        if s.startswith("class ") or s.startswith("def forward"):
            break
    return None


def load_plan(arg):
    if arg == "-":
        return json.load(sys.stdin)
    with open(arg, encoding="utf-8") as f:
        return json.load(f)


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: python replay.py PLAN.json   (or - for stdin)\n")
        return 2
    _open_events()
    # Millions of small objects stay alive (statements, values): each cyclic collection walks
    # them all and made parsing 1.7x slower. Tensors are freed by reference counting anyway.
    gc.disable()
    try:
        plan = load_plan(argv[1])
    except Exception as e:
        problem(f"cannot read the plan: {e}")
        return 2
    try:
        return main_plan(plan)
    except Exception as e:
        import traceback
        traceback.print_exc()
        problem(f"replay failed: {type(e).__name__}: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
