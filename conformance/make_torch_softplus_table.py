#!/usr/bin/env python3
"""Measures torch's CPU `softplus` on every bfloat16 and float16 value, for
converters/src/hf/torch_math/softplus.rs.

`torch.nn.functional.softplus(x)` (beta 1, threshold 20) on a contiguous CPU tensor runs one
of two loops (torch 2.15, the x86-64 wheel, AVX-512 dispatch): the elements before the last
`n mod (2 * lanes)` go through the vector kernel (`exp` then `log1p` of torch's own vector
math), the rest through the scalar one (`std::log1p(std::exp(x))`: the C library's `expf`
and `log1pf`). The lanes are 16 for float32 tensors and 32 for float16 ones (computed in
float32, rounded once to half). The scalar loop is glibc's and needs no table; the vector
loop differs from it in the last bit for some inputs.

The converter computes softplus on the tensor it read: float32 for a bfloat16 checkpoint
(widened first), float16 for a float16 one. This script evaluates the vector loop on every
bfloat16 value (as float32) and every float16 value and writes the inputs where it differs
from the scalar loop to `converters/src/hf/torch_math/softplus_avx512.bin` (little-endian):
`b"TSPL" u32 n_bf16 u32 n_f16`, then `n_bf16` pairs `(u16 bfloat16 input bits, u32 float32
output bits)` and `n_f16` pairs `(u16 float16 input bits, u16 float16 output bits)`, each
sorted by input. Float32 inputs that are not bfloat16 values are not measured.

It also writes `testdata/golden/torch-math/softplus.json`, the sha256 of torch's output
(little-endian) for tensors the tests rebuild: every finite bfloat16 value in order as one
float32 tensor (the vector loop but for its tail), the same values in tensors of 31
elements (the scalar loop), and every finite float16 value as one float16 tensor.

    python conformance/make_torch_softplus_table.py
"""
import ctypes
import hashlib
import json
import os
import struct

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TABLE = os.path.join(ROOT, "converters/src/hf/torch_math/softplus_avx512.bin")
GOLDEN = os.path.join(ROOT, "testdata/golden/torch-math/softplus.json")
# The tensor length of the scalar-loop golden: below one vector step of 32.
SMALL = 31

libm = ctypes.CDLL("libm.so.6")
for f in ("expf", "log1pf"):
    getattr(libm, f).restype = ctypes.c_float
    getattr(libm, f).argtypes = [ctypes.c_float]


def scalar(x: float) -> np.float32:
    """The scalar loop: x above the threshold stays, else log1pf(expf(x))."""
    x = np.float32(x)
    if x > 20:
        return x
    return np.float32(libm.log1pf(libm.expf(float(x))))


def vector(t: torch.Tensor) -> torch.Tensor:
    """The vector loop on every element: a length that is a multiple of 2 * lanes."""
    n = t.numel()
    pad = (-n) % 64
    full = torch.cat([t, torch.zeros(pad, dtype=t.dtype)])
    return torch.nn.functional.softplus(full)[:n]


def main() -> None:
    assert torch.backends.cpu.get_cpu_capability() == "AVX512", "needs torch's AVX-512 dispatch"
    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    bf = []
    xs = torch.from_numpy(bits.view(np.int16).copy()).view(torch.bfloat16).float()
    out = vector(xs).numpy()
    for b, x, y in zip(bits, xs.numpy(), out):
        if not np.isfinite(x):
            continue
        s = scalar(x)
        if s.view(np.uint32) != y.view(np.uint32):
            bf.append((int(b), int(y.view(np.uint32))))
    hf = []
    hs = torch.from_numpy(bits.view(np.float16).copy())
    out = vector(hs).numpy()
    for b, x, y in zip(bits, hs.numpy(), out):
        if not np.isfinite(x):
            continue
        s = scalar(np.float32(x))
        s = np.float16(s) if np.float32(x) <= 20 else np.float16(x)
        if s.view(np.uint16) != y.view(np.uint16):
            hf.append((int(b), int(y.view(np.uint16))))
    with open(TABLE, "wb") as f:
        f.write(b"TSPL" + struct.pack("<II", len(bf), len(hf)))
        for a, y in bf:
            f.write(struct.pack("<HI", a, y))
        for a, y in hf:
            f.write(struct.pack("<HH", a, y))
    print(f"{TABLE}: {len(bf)} bfloat16 and {len(hf)} float16 deviations")
    fin = xs[torch.isfinite(xs)].contiguous()
    hfin = hs[torch.isfinite(hs)].contiguous()
    sha = lambda t: hashlib.sha256(t.numpy().tobytes()).hexdigest()
    small = torch.cat([torch.nn.functional.softplus(fin[i:i + SMALL])
                       for i in range(0, len(fin), SMALL)])
    golden = {
        "torch": torch.__version__,
        "bf16_values_f32": {"n": len(fin), "sha256": sha(torch.nn.functional.softplus(fin))},
        "bf16_values_f32_small": {"n": len(fin), "len": SMALL, "sha256": sha(small)},
        "f16_values": {"n": len(hfin), "sha256": sha(torch.nn.functional.softplus(hfin))},
    }
    with open(GOLDEN, "w") as f:
        f.write(json.dumps(golden, indent=1) + "\n")


if __name__ == "__main__":
    main()
