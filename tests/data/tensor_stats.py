#!/usr/bin/env python3
"""Expected tensor statistics for tests/tensors.rs, computed once with numpy and committed.

    python3 tests/data/tensor_stats.py      # from the crate root; needs `pip install numpy`

Writes
- tests/data/npy/*.npy: small arrays of every dtype and layout a dump can hold (f16/f32/f64,
  ints, bool, big-endian, Fortran order, 0-d, empty) and odd files (a pickled object array, as the
  dumper writes for a `None` argument);
- tests/data/tensor_stats.json: for every .npy of the fixtures' data dumps and of tests/data/npy:
  shape, dtype, NaN/+Inf/-Inf/zero counts, and min/max/mean/std of the finite values (float64,
  ddof=0) with a 64-bin histogram over [min, max] (np.histogram rules).
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CRATE = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(CRATE, "tests", "fixtures")
NPY = os.path.join(HERE, "npy")
BINS = 64


def make_small_arrays():
    os.makedirs(NPY, exist_ok=True)
    rng = np.random.default_rng(6)
    base = rng.normal(0.0, 3.0, size=(5, 7))
    base[1, 2] = np.nan
    base[3, 4] = np.inf
    base[0, 0] = -np.inf
    base[2, 2] = 0.0
    arrays = {
        "f32_le.npy": base.astype("<f4"),
        "f32_be.npy": base.astype(">f4"),
        "f64_fortran.npy": np.asfortranarray(base.astype("<f8")),
        "f16.npy": base.astype("<f2"),
        "f16_be.npy": base.astype(">f2"),
        "i64.npy": np.arange(-6, 18, dtype="<i8").reshape(4, 6),
        "i32_be.npy": np.arange(-5, 5, dtype=">i4"),
        "i8.npy": np.array([-128, -1, 0, 1, 127], dtype="i1"),
        "u8.npy": np.array([0, 1, 2, 255], dtype="u1"),
        "u16.npy": np.array([[0, 7], [65535, 3]], dtype="<u2"),
        "bool.npy": np.array([[True, False, True], [False, False, True]]),
        "scalar_0d.npy": np.array(3.5, dtype="<f4"),
        "int_0d.npy": np.array(7),
        "empty.npy": np.zeros((0, 4), dtype="<f4"),
        "constant.npy": np.full((3, 3), 2.0, dtype="<f4"),
        "all_nan.npy": np.full((4,), np.nan, dtype="<f4"),
    }
    for name, a in arrays.items():
        np.save(os.path.join(NPY, name), a)
    # What the dumper writes for a `None` positional argument (docs/formats.md §3.1).
    np.save(os.path.join(NPY, "object_none.npy"), np.array(None), allow_pickle=True)


def stats_of(path):
    try:
        a = np.load(path, allow_pickle=False)
    except ValueError as e:
        return {"error": "object" if "pickle" in str(e) else str(e)}
    x = a.astype(np.float64).ravel()
    fin = x[np.isfinite(x)]
    out = {
        "dtype": a.dtype.str,
        "shape": list(a.shape),
        "fortran_order": bool(a.flags.f_contiguous and not a.flags.c_contiguous),
        "count": int(x.size),
        "nan": int(np.isnan(x).sum()),
        "pos_inf": int(np.isposinf(x).sum()),
        "neg_inf": int(np.isneginf(x).sum()),
        "zero": int((x == 0).sum()),
    }
    if fin.size:
        lo, hi = float(fin.min()), float(fin.max())
        out.update(min=lo, max=hi, mean=float(fin.mean()), std=float(fin.std()))
        # Constant data: numpy's default range [x - 0.5, x + 0.5], as fxray does.
        rng = (lo, hi) if hi > lo else (lo - 0.5, hi + 0.5)
        try:
            counts, _ = np.histogram(fin, bins=BINS, range=rng)
            out["histogram"] = [int(c) for c in counts]
        except ValueError:
            # No finite-width bins (range past float64, or ±0.5 lost at 2**63): none, as in fxray.
            pass
    return out


def main():
    make_small_arrays()
    result = {"numpy": np.__version__, "bins": BINS, "files": {}}
    roots = [
        ("fixtures", os.path.join(FIXTURES, "data_dump")),
        ("fixtures", os.path.join(FIXTURES, "showcase", "data_dump")),
        ("npy", NPY),
    ]
    for prefix, root in roots:
        base = FIXTURES if prefix == "fixtures" else NPY
        for dirpath, _, files in os.walk(root):
            for f in sorted(files):
                if f.endswith(".npy"):
                    p = os.path.join(dirpath, f)
                    rel = prefix + "/" + os.path.relpath(p, base)
                    result["files"][rel] = stats_of(p)
    out = os.path.join(HERE, "tensor_stats.json")
    with open(out, "w") as fh:
        fh.write("{\n")
        fh.write(f' "numpy": {json.dumps(result["numpy"])},\n "bins": {BINS},\n "files": {{\n')
        items = sorted(result["files"].items())
        for i, (k, v) in enumerate(items):
            sep = "," if i + 1 < len(items) else ""
            fh.write(f"  {json.dumps(k)}: {json.dumps(v)}{sep}\n")
        fh.write(" }\n}\n")
    print(f"{len(result['files'])} files -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
