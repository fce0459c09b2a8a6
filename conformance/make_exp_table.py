#!/usr/bin/env python3
"""Measures the reference's `torch.exp` (Mamba's `A = -exp(A_log)`) for converters/src/hf/expr.rs.

The converter computes `-torch.exp(x)` on the working dtype: F32 for BF16 and F32 sources,
F16 for F16 ones. torch's CPU exp (MKL's vector exp on x86-64) is not always the correctly
rounded value. For every one of the 65536 bfloat16 inputs (as F32), this prints the inputs
where torch differs from the correctly rounded exp (a diagnostic: ggufkit's tables come from
make_torch_exp_table.py), and
the sha256 of `-exp(x)` over all non-NaN bfloat16 inputs (F32 little-endian) and over all
non-NaN float16 inputs (F16 little-endian), which the unit test `neg_exp_matches_torch`
checks (on torch's default MKL dispatch of an AVX-512 x86-64 CPU, ggufkit's default path;
`MKL_CBWR=COMPATIBLE` gives the generic path's values instead). Run it with the reference's
venv, without `MKL_CBWR`:

    python conformance/make_exp_table.py
"""
import hashlib

import numpy as np
import torch


def main() -> None:
    torch.set_num_threads(2)
    x = (np.arange(65536, dtype=np.uint32) << 16).view(np.float32)
    y = torch.exp(torch.from_numpy(x.copy())).numpy()
    with np.errstate(all="ignore"):
        cr = np.exp(x.astype(np.float64)).astype(np.float32)
    nan = np.isnan(x)
    diff = (y.view(np.uint32) != cr.view(np.uint32)) & ~nan
    print(f"torch {torch.__version__}, capability {torch.backends.cpu.get_cpu_capability()}")
    print(f"{diff.sum()} bfloat16 inputs where torch.exp is not correctly rounded:")
    for i in np.nonzero(diff)[0]:
        print(f"    (0x{x.view(np.uint32)[i] >> 16:04x}_0000, "
              f"0x{y.view(np.uint32)[i] >> 16:04x}_{y.view(np.uint32)[i] & 0xffff:04x}),")
    neg = (-torch.exp(torch.from_numpy(x[~nan].copy()))).numpy().astype("<f4")
    print("sha256 of -exp over the non-NaN bfloat16 inputs (f32):",
          hashlib.sha256(neg.tobytes()).hexdigest())
    h = np.arange(65536, dtype=np.uint16).view(np.float16)
    hn = h[~np.isnan(h)]
    negh = (-torch.exp(torch.from_numpy(hn.copy()))).numpy().astype("<f2")
    print("sha256 of -exp over the non-NaN float16 inputs (f16):",
          hashlib.sha256(negh.tobytes()).hexdigest())


if __name__ == "__main__":
    main()
