#!/usr/bin/env python3
"""`.pt` files for tests/it/pt.rs, written by torch.save itself and committed with torch's answer.

    ~/.cache/fxray/venv-torch/bin/python tests/data/pt/gen.py     # from the crate root

Writes tests/data/pt/*.pt: one tensor per file of every dtype msprobe's tensor mode saves
(f32/f64/f16/bf16, ints, bool), views (transposed, offset, expanded, a column), a 0-d and an
empty tensor, an nn.Parameter; files that hold no tensor (a dict, an int), a legacy-format
file, and a hostile pickle (a `__reduce__` calling `os.system`: never run by fxray, nor here).
expected.json holds, per tensor file, torch's dtype, shape and values in C order (NaN and
±Inf as strings), and per bad file the word fxray's error must contain.
"""
import io
import json
import math
import os
import pickle
import zipfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def vals(t):
    out = []
    for v in t.detach().to(torch.float64).reshape(-1).tolist():
        out.append(str(v) if (math.isnan(v) or math.isinf(v)) else v)
    return out


def main():
    g = torch.Generator().manual_seed(24)
    base = torch.randn(3, 4, generator=g) * 3
    tensors = {
        "f32": torch.tensor([[1.5, -2.25, float("nan")], [float("inf"), -float("inf"), 0.0]]),
        "f64": base.to(torch.float64),
        "f16": base.to(torch.float16),
        "bf16": base.to(torch.bfloat16),
        "i64": torch.arange(-3, 9, dtype=torch.int64).reshape(3, 4),
        "i32": torch.arange(-6, 6, dtype=torch.int32),
        "i16": torch.tensor([-32768, 0, 32767], dtype=torch.int16),
        "i8": torch.tensor([-128, -1, 0, 127], dtype=torch.int8),
        "u8": torch.tensor([0, 1, 200, 255], dtype=torch.uint8),
        "bool": torch.tensor([True, False, True]),
        "bf16_transposed": base.to(torch.bfloat16).t(),
        "f32_offset": torch.arange(24, dtype=torch.float32).reshape(4, 6)[1:3, 2:5],
        "f32_expanded": torch.tensor([[1.0], [2.0]]).expand(2, 3),
        "f32_column": base[:, 1],
        "f32_scalar": torch.tensor(7.25),
        "f32_empty": torch.zeros(0, 3),
        "parameter": torch.nn.Parameter(torch.ones(2, 2) * 0.5),
        "f32_3d_permuted": torch.arange(24, dtype=torch.float32).reshape(2, 3, 4).permute(2, 0, 1),
    }
    expected = {"tensors": {}, "bad": {}}
    for name, t in tensors.items():
        torch.save(t, os.path.join(HERE, f"{name}.pt"))
        expected["tensors"][f"{name}.pt"] = {
            "dtype": str(t.dtype),
            "shape": list(t.shape),
            "contiguous": t.is_contiguous(),
            "values": vals(t),
        }

    torch.save({"a": torch.ones(2), "b": torch.zeros(2)}, os.path.join(HERE, "dict.pt"))
    expected["bad"]["dict.pt"] = "holds a dict of 2 entries, not a tensor"
    torch.save(5, os.path.join(HERE, "int.pt"))
    expected["bad"]["int.pt"] = "holds an int, not a tensor"
    torch.save(torch.ones(2), os.path.join(HERE, "legacy.pt"), _use_new_zipfile_serialization=False)
    expected["bad"]["legacy.pt"] = "legacy torch.save file"

    class Hostile:
        def __reduce__(self):
            return (os.system, ("echo fxray-never-runs-this",))

    # The same archive layout torch.save writes, with a pickle that would run a command.
    with zipfile.ZipFile(os.path.join(HERE, "hostile.pt"), "w", zipfile.ZIP_STORED) as z:
        z.writestr("hostile/data.pkl", pickle.dumps(Hostile(), protocol=2))
        z.writestr("hostile/byteorder", "little")
        z.writestr("hostile/version", "3\n")
    expected["bad"]["hostile.pt"] = "refused: the pickle calls `posix.system`"

    with open(os.path.join(HERE, "not_a_tensor_file.pt"), "w") as f:
        f.write("just text\n")
    expected["bad"]["not_a_tensor_file.pt"] = "not a torch.save file"

    with open(os.path.join(HERE, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"wrote {len(tensors)} tensors and {len(expected['bad'])} bad files; torch {torch.__version__}")


if __name__ == "__main__":
    main()
