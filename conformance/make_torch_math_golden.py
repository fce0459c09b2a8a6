#!/usr/bin/env python3
"""Goldens of the float computations the reference converter runs through torch, other than
`exp` (make_torch_exp_table.py), for converters/tests/suite/convert/torch_math_golden.rs.

Writes testdata/golden/torch-math/ops.json: for each case the sha256 of torch's float32
output (little-endian), computed the way the reference computes it:

* `pow-rope/<i>` (i indexes `bases`): Llama 3's `base ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)`
  for every even dim from 2 to 512, outputs concatenated (every tensor length from 1 to
  256: vector body and scalar tail);
* `pow-sweep/<i>`, `pow-sweep-1011/<i>`: `base ** y` for the float32 `y = from_bits(4099 j)` below 1, as one
  tensor (259,906 elements: a body of 259,904 and a tail of 2), and the same inputs as 257
  tensors of 1,011 elements (a tail of 19 each);
* `f16-round` / `bf16-round`: the f32 → f16 (numpy `astype`) and f32 → bf16 (gguf-py's
  rounding) conversions of every float32 `from_bits(65537 j + 3)` (65,536 inputs spanning
  all exponents; NaNs included for bf16, left out for f16).

Run with the reference's venv on the machine whose torch paths you match (AVX-512 here):

    PYTHONPATH=<llama.cpp>/gguf-py python conformance/make_torch_math_golden.py
"""
import hashlib
import json
import os

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "testdata/golden/torch-math/ops.json")

# RoPE thetas of published configs, and a few others across the range.
BASES = [10000.0, 500000.0, 1000000.0, 8000000.0, 50000.0, 75000.0, 100000.0, 150000.0,
         250000.0, 2000000.0, 5000000.0, 10000000.0, 1000.0, 12345.0, 777777.0, 3.0e7]


def h(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a, dtype="<f4").tobytes()).hexdigest()


def main() -> None:
    torch.set_num_threads(1)
    cases = {}
    for i, b in enumerate(BASES):
        outs = [(b ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim)).numpy()
                for dim in range(2, 514, 2)]
        cases[f"pow-rope/{i}"] = h(np.concatenate(outs))
    j = np.arange(0, 0x3F80_0000 // 4099 + 1, dtype=np.uint64)
    y = (j * 4099).astype(np.uint32)
    y = y[y < 0x3F80_0000].view(np.float32)
    assert len(y) == 259_906, len(y)
    for i, b in enumerate(BASES):
        cases[f"pow-sweep/{i}"] = h((b ** torch.from_numpy(y.copy())).numpy())
        parts = [(b ** torch.from_numpy(y[k:k + 1011].copy())).numpy()
                 for k in range(0, 1011 * 257, 1011)]
        cases[f"pow-sweep-1011/{i}"] = h(np.concatenate(parts))
    x = (np.arange(65536, dtype=np.uint64) * 65537 + 3).astype(np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        # NaN inputs left out: numpy keeps a NaN's payload bits, ggml (and ggufkit) write
        # 0x7e00 with the sign (docs/torch-float-semantics.md).
        cases["f16-round"] = hashlib.sha256(x[~np.isnan(x)].astype("<f2").tobytes()).hexdigest()
    import gguf
    bf = gguf.quants.quantize(x.reshape(1, -1), gguf.GGMLQuantizationType.BF16)
    cases["bf16-round"] = hashlib.sha256(bf.tobytes()).hexdigest()
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"torch": torch.__version__,
                   "capability": torch.backends.cpu.get_cpu_capability(),
                   "bases": BASES,
                   "cases": cases}, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
