#!/usr/bin/env python3
"""Measures torch's CPU `softplus` for converters/tests/suite/convert/torch_math_golden.rs.

`torch.nn.functional.softplus(x)` (beta 1, threshold 20) on a contiguous CPU tensor runs one
of two loops (torch 2.15, the x86-64 wheel, AVX-512 dispatch): the elements before the last
`n mod (2 * lanes)` go through the vector kernel (`log1p(exp(x))` with SLEEF's 1-ulp vector
`expf` and `log1pf`), the rest through the scalar one (the C library's `expf` and
`log1pf`). The lanes are 16 for float32 tensors and 32 for float16 ones (computed in
float32, rounded once to half). ggufkit reproduces both (converters/src/hf/torch_math/).

Writes `testdata/golden/torch-math/softplus.json`, the sha256 of torch's output
(little-endian) for tensors the tests rebuild:

* `bf16_values_f32`: every finite bfloat16 value in order, as one float32 tensor (the vector
  loop but for its tail), and `bf16_values_f32_small`: the same values in tensors of 31
  elements (the scalar loop);
* `f16_values`: every finite float16 value as one float16 tensor;
* `f32_chunks`: every float32 bit pattern, as 256 tensors of 2^24 consecutive patterns (the
  vector loop only); each output NaN is written as 0x7fc00000 before hashing, since NaN
  payloads are not reproduced;
* `f32_ranges`: for each range `[lo, hi]` of what checkpoints hold (per-dimension scales
  near 0, values around the threshold, the extremes where exp underflows or overflows),
  `n` float32 values `float32(lo + (hi - lo) * (j / (n - 1)))` (the arithmetic in float64),
  as one tensor (`one`) and split into consecutive tensors of lengths 1, 2, ..., 97, 1, 2,
  ... (`split`: every tail length with and without a vector body).

    python conformance/make_torch_softplus_golden.py
"""
import hashlib
import json
import os

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(ROOT, "testdata/golden/torch-math/softplus.json")
# The tensor length of the scalar-loop golden: below one vector step of 32.
SMALL = 31
# The longest tensor of the `split` goldens: three vector steps and a tail of 1.
SPLIT_MAX = 97
RANGES = [(-1.0, 1.0), (-8.0, 8.0), (-30.0, 30.0), (-110.0, 110.0)]
RANGE_N = 1 << 18
CHUNK = 1 << 24

softplus = torch.nn.functional.softplus


def sha(a: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def canonical_nan(y: np.ndarray) -> np.ndarray:
    bits = y.view(np.uint32).copy()
    bits[np.isnan(y)] = 0x7FC0_0000
    return bits


def split_lengths(n: int):
    """The tensor lengths 1, 2, ..., SPLIT_MAX, 1, 2, ... covering n elements."""
    at, k = 0, 0
    while at < n:
        ln = min(k % SPLIT_MAX + 1, n - at)
        yield at, ln
        at += ln
        k += 1


def range_values(lo: float, hi: float, n: int) -> np.ndarray:
    j = np.arange(n, dtype=np.float64)
    return (lo + (hi - lo) * (j / (n - 1))).astype(np.float32)


def main() -> None:
    assert torch.backends.cpu.get_cpu_capability() == "AVX512", "needs torch's AVX-512 dispatch"
    torch.set_num_threads(1)
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    xs = torch.from_numpy(bits.view(np.int16).copy()).view(torch.bfloat16).float()
    hs = torch.from_numpy(bits.view(np.float16).copy())
    fin = xs[torch.isfinite(xs)].contiguous()
    hfin = hs[torch.isfinite(hs)].contiguous()
    small = torch.cat([softplus(fin[i:i + SMALL]) for i in range(0, len(fin), SMALL)])
    golden = {
        "torch": torch.__version__,
        "bf16_values_f32": {"n": len(fin), "sha256": sha(softplus(fin).numpy())},
        "bf16_values_f32_small": {"n": len(fin), "len": SMALL, "sha256": sha(small.numpy())},
        "f16_values": {"n": len(hfin), "sha256": sha(softplus(hfin).numpy())},
    }
    ranges = []
    for lo, hi in RANGES:
        x = range_values(lo, hi, RANGE_N)
        one = softplus(torch.from_numpy(x.copy())).numpy()
        split = np.concatenate([softplus(torch.from_numpy(x[a:a + n].copy())).numpy()
                                for a, n in split_lengths(len(x))])
        ranges.append({"lo": lo, "hi": hi, "n": RANGE_N, "split_max": SPLIT_MAX,
                       "one": sha(one), "split": sha(split)})
    golden["f32_ranges"] = ranges
    chunks = []
    for k in range(1 << 32 >> 24):
        b = np.arange(k * CHUNK, (k + 1) * CHUNK, dtype=np.uint64).astype(np.uint32)
        y = softplus(torch.from_numpy(b.view(np.float32).copy())).numpy()
        chunks.append(sha(canonical_nan(y)))
    golden["f32_chunks"] = {"len": CHUNK, "sha256": chunks}
    with open(GOLDEN, "w") as f:
        f.write(json.dumps(golden, indent=1) + "\n")


if __name__ == "__main__":
    main()
