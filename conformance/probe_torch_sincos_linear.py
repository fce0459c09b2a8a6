#!/usr/bin/env python3
"""Measures the two torch computations that block Qwen2.5-Omni's, Qwen3-Omni's and Qwen3-ASR's
audio projectors and Qwen3-TTS's text embedding, and prints what it finds.

Nothing here is compiled into ggufkit: this script records how the reference's numbers are made,
so that a converter for those classes knows what it has to reproduce.

1. The audio encoders' sinusoidal position table (`Qwen25AudioModel.generate_extra_tensors`):

       inv = torch.exp(-(ln(10000) / (C/2 - 1)) * torch.arange(C/2).float())   # float32
       t   = torch.arange(1500)[:, None] * inv[None, :]                        # float32
       table = torch.cat([torch.sin(t), torch.cos(t)], dim=1)                  # float32

   The scalar is a numpy float64 that torch rounds to float32 (a wrapped number), so every step
   is float32. `torch.sin` / `torch.cos` of a contiguous float32 tensor are MKL's vector
   functions (`vsSin` / `vsCos`, high accuracy: `perf` shows `mkl_vml_kernel_sSin_<path>HAynn`),
   not SLEEF's and not the C library's. The script checks that a result depends on the input
   alone (not on the tensor's size, the element's offset or the thread count) and counts the
   results that are not the correctly rounded value (measured against the float64 `math.sin` /
   `math.cos` rounded to float32).

2. Qwen3-TTS's folded text projection, `F.linear(x, w, b)` on float32 tensors (MKL `sgemm`). The
   script compares torch with this model: each output is a chain of fused multiply-adds over
   k in order, started from 0, restarted every `kb` terms (the partial chains added in order
   with float32 additions), and the bias added last; `kb` is K for K <= 192, floor(K / 2) for
   K <= 384 and 192 above. FMA is emulated in float64 (the product of two float32 is exact;
   the sum is rounded twice, which differs from one rounding only rarely: an isolated
   mismatch is that, not a failure of the model).

3. The activation between Qwen3-TTS's two layers (`hidden_act`): float32 `silu` and `gelu`
   have a vector body and a scalar tail. The script compares the body (a tensor whose length
   is a multiple of 32, one chunk) with `x / (1 + expf_u10(-x))` (SLEEF's `expf` as
   `converters/src/hf/torch_math/sleef.rs` has it) for `silu`, and single elements (all tail)
   with the C library's `expf` / `erff` formulas. A float32 `gelu` of more than one element is
   oneDNN's `eltwise_gelu_erf` (see docs/torch-float-semantics.md), not ATen's vector kernel.

Run it with the reference's venv; `perf` (optional) names the MKL kernel:

    python conformance/probe_torch_sincos_linear.py
"""
import ctypes
import math

import numpy as np
import torch
import torch.nn.functional as F

CHANNELS = [32, 48, 64, 96, 896, 1024, 1280]


def position_inputs(channels):
    """The float32 tensor the reference hands to sin and cos, computed as the reference does."""
    increment = np.log(10000) / (channels // 2 - 1)
    inv = torch.exp(-increment * torch.arange(channels // 2).float())
    return (torch.arange(1500)[:, np.newaxis] * inv[np.newaxis, :]).contiguous()


def correctly_rounded(fn, values):
    return np.array([fn(float(v)) for v in values], dtype=np.float64).astype(np.float32)


def probe_sincos():
    print("sin/cos of the audio position table (float32, MKL vsSin/vsCos):")
    for channels in CHANNELS:
        t = position_inputs(channels)
        flat = t.flatten()
        for name, op, exact in (("sin", torch.sin, math.sin), ("cos", torch.cos, math.cos)):
            whole = op(t).flatten()
            # element-wise: the same input gives the same output alone, at another offset, or
            # with one thread
            single = torch.stack([op(flat[i : i + 1])[0] for i in range(0, flat.numel(), 997)])
            offset = op(flat[5:]).flatten()
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            one_thread = op(t).flatten()
            torch.set_num_threads(threads)
            independent = (
                torch.equal(single, whole[::997])
                and torch.equal(offset, whole[5:])
                and torch.equal(one_thread, whole)
            )
            values = flat.numpy()
            reference = correctly_rounded(exact, values)
            got = whole.numpy()
            off = int((got != reference).sum())
            exact64 = np.array([exact(float(v)) for v in values])
            err = np.abs(got.astype(np.float64) - exact64)
            ulp = np.spacing(np.abs(reference)).astype(np.float64)
            print(
                f"  C={channels:5} {name}: {off:7} of {values.size:8} not correctly rounded"
                f" ({100 * off / values.size:.2f}%), max error {np.max(err / ulp):.3f} ulp,"
                f" input-only: {independent}"
            )


def k_block(k):
    if k <= 192:
        return k
    if k <= 384:
        return k // 2
    return 192


def linear_model(x, w, b):
    """The FMA-chain model of float32 `F.linear` described in the module docstring."""
    xd = x.astype(np.float64)
    wd = w.astype(np.float64)
    k = x.shape[1]
    kb = k_block(k)
    # torch copies the bias into the output and calls sgemm with beta = 1: each block's chain
    # is added to what the output holds
    total = np.broadcast_to(b, (x.shape[0], w.shape[0])).astype(np.float32)
    for start in range(0, k, kb):
        acc = np.zeros((x.shape[0], w.shape[0]), np.float32)
        for j in range(start, min(k, start + kb)):
            acc = (acc.astype(np.float64) + np.outer(xd[:, j], wd[:, j])).astype(np.float32)
        total = total + acc
    return total


def probe_linear():
    print("float32 F.linear (MKL sgemm) against the FMA-chain model:")
    generator = torch.Generator().manual_seed(7)
    for m, k, n in [(151, 32, 48), (300, 64, 96), (64, 129, 24), (48, 193, 24), (48, 257, 24),
                    (40, 385, 24), (40, 1000, 24), (32, 2048, 16)]:
        x = torch.randn(m, k, generator=generator)
        w = torch.randn(n, k, generator=generator)
        b = torch.randn(n, generator=generator)
        got = F.linear(x, w, b).numpy()
        model = linear_model(x.numpy(), w.numpy(), b.numpy())
        off = int((got != model).sum())
        print(f"  M={m:4} K={k:5} N={n:4} (kb {k_block(k):3}): {off} of {got.size} differ")


def fma32(a, b, c):
    """float32 fused multiply-add through float64 (the product is exact; rarely rounds twice)."""
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)


def expf_u10(d):
    """SLEEF's 1-ulp float32 exp (the AVX-512 build's operations), element-wise on an array."""
    d = d.astype(np.float32)
    q = np.rint(d * np.float32(math.log2(math.e))).astype(np.float32)
    s = fma32(q, np.full_like(d, -0.693145751953125), d)
    s = fma32(q, np.full_like(d, -1.428606765330187045e-6), s)
    u = np.full_like(d, 0.000198527617612853646278381)
    for c in (0.00139304355252534151077271, 0.00833336077630519866943359,
              0.0416664853692054748535156, 0.166666671633720397949219, 0.5):
        u = fma32(u, s, np.full_like(d, c))
    u = np.float32(1.0) + fma32(s * s, u, s)
    qi = q.astype(np.int64)
    half = qi >> 1
    u = (u * np.ldexp(np.float32(1), half).astype(np.float32)) * np.ldexp(
        np.float32(1), qi - half
    ).astype(np.float32)
    return np.where(d < -104, np.float32(0), np.where(d > 100, np.float32(np.inf), u)).astype(
        np.float32
    )


def probe_activations():
    print("float32 silu / gelu: vector body and scalar tail")
    libm = ctypes.CDLL("libm.so.6")
    for fn in (libm.expf, libm.erff):
        fn.restype = ctypes.c_float
        fn.argtypes = [ctypes.c_float]
    generator = torch.Generator().manual_seed(9)
    x = torch.randn(1 << 16, generator=generator) * 4
    xn = x.numpy()
    one = np.float32(1)
    body = F.silu(x).numpy()
    model = (xn / (one + expf_u10(-xn))).astype(np.float32)
    print(f"  silu body vs x / (1 + expf_u10(-x)): {int((body != model).sum())} of {xn.size} differ")
    singles = torch.stack([F.silu(x[i : i + 1])[0] for i in range(2000)]).numpy()
    tail = np.array(
        [v / (one + np.float32(libm.expf(float(-v)))) for v in xn[:2000]], dtype=np.float32
    )
    print(f"  silu single elements vs x / (1 + libm expf(-x)): {int((singles != tail).sum())} of 2000")
    alpha = np.float32(math.sqrt(0.5))
    singles = torch.stack([F.gelu(x[i : i + 1])[0] for i in range(2000)]).numpy()
    tail = np.array(
        [(v * np.float32(0.5)) * (one + np.float32(libm.erff(float(np.float32(v * alpha)))))
         for v in xn[:2000]],
        dtype=np.float32,
    )
    print(f"  gelu single elements vs x * 0.5 * (1 + libm erff(x * sqrt(1/2))): "
          f"{int((singles != tail).sum())} of 2000")
    body = F.gelu(x).numpy()
    print(f"  gelu single elements vs the same inputs in one tensor: "
          f"{int((singles != body[:2000]).sum())} of 2000 differ (longer tensors: oneDNN)")


def main():
    print(f"torch {torch.__version__}, capability {torch.backends.cpu.get_cpu_capability()}")
    probe_sincos()
    probe_linear()
    probe_activations()


if __name__ == "__main__":
    main()
