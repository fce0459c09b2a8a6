"""Checks the float32 bilinear resize (align_corners=True) that torch runs on a channels-last
position table against the arithmetic `converters/src/hf/torch_math/bilinear.rs` performs.

The reference's RADIO projector resizes `pos_embed` ([1, n*n, C]) with
`F.interpolate(x.reshape(1, n, n, C).permute(0, 3, 1, 2), size=(m, m), mode="bilinear",
align_corners=True)`. This script draws random tables for many (n, m, C), runs torch, and
compares every output bit with the model: float32 taps and weights as ATen computes them, the
vector body (16 lanes on AVX-512) as fma(i00, w00, fma(i01, w01, fma(i11, w11, i10 * w10)))
and the scalar tail as fma(i11, w11, fma(i10, w10, fma(i00, w00, i01 * w01))). A fused
multiply-add is emulated exactly: the float32 product is exact in float64 and the sum is
rounded once to float64, then to float32, with a check that no inexact float64 sum lies on a
float32 rounding midpoint (where that double rounding could differ).

    python conformance/probe_torch_bilinear.py
"""
import sys

import numpy as np
import torch
import torch.nn.functional as F

f32, f64 = np.float32, np.float64
LANES = 16


def taps(n: int, m: int):
    if n == m:
        return [(o, o, f32(1), f32(0)) for o in range(m)]
    scale = f32(f32(n - 1) / f32(m - 1)) if m > 1 else f32(0)
    out = []
    for o in range(m):
        real = f32(scale * f32(o))
        i0 = min(int(np.floor(real)), n - 1)
        l1 = f32(min(max(f32(real - f32(i0)), f32(0)), f32(1)))
        out.append((i0, i0 + (1 if i0 < n - 1 else 0), f32(f32(1) - l1), l1))
    return out


def fma(a, b, c):
    exact = a.astype(f64) * f64(b) + c.astype(f64)
    r = exact.astype(f32)
    # the double-rounding check: a float32 midpoint would need more care
    lo, hi = np.nextafter(r, f32(-np.inf)), np.nextafter(r, f32(np.inf))
    mids = np.concatenate([(lo.astype(f64) + r.astype(f64)) / 2, (hi.astype(f64) + r.astype(f64)) / 2])
    prod, add = a.astype(f64) * f64(b), c.astype(f64)
    inexact = ((exact - prod) != add) | ((exact - add) != prod)
    assert not (np.isin(exact, mids) & inexact).any(), "a rounded sum on a midpoint"
    return r


def model(x: np.ndarray, n: int, m: int) -> np.ndarray:
    c = x.shape[-1]
    g = x.reshape(n, n, c)
    body = c - c % LANES
    t = taps(n, m)
    out = np.empty((m, m, c), f32)
    for oh, (h0, h1, hl0, hl1) in enumerate(t):
        for ow, (w0, w1, wl0, wl1) in enumerate(t):
            w00, w01, w10, w11 = f32(hl0 * wl0), f32(hl0 * wl1), f32(hl1 * wl0), f32(hl1 * wl1)
            a, b, cc, d = g[h0, w0], g[h0, w1], g[h1, w0], g[h1, w1]
            vec = fma(a, w00, fma(b, w01, fma(d, w11, (cc * w10).astype(f32))))
            tail = fma(d, w11, fma(cc, w10, fma(a, w00, (b * w01).astype(f32))))
            out[oh, ow, :body] = vec[:body]
            out[oh, ow, body:] = tail[body:]
    return out.reshape(1, m * m, c)


def main() -> int:
    torch.manual_seed(7)
    bad = 0
    cases = [(n, m, c) for n in (2, 3, 4, 5, 9, 16) for m in (1, 2, 3, 4, 7, 32)
             for c in (16, 17, 35, 48, 1280) if n != m]
    for n, m, c in cases:
        x = torch.randn(1, n * n, c) * 0.05
        for dtype in (torch.float32, torch.bfloat16):
            xs = x.to(dtype)
            d = xs.reshape(1, n, n, c).permute(0, 3, 1, 2).float()
            r = F.interpolate(d, size=(m, m), mode="bilinear", align_corners=True)
            r = r.permute(0, 2, 3, 1).reshape(1, m * m, c).contiguous().numpy()
            mine = model(xs.float().numpy(), n, m)
            diff = int((mine.view(np.uint32) != r.view(np.uint32)).sum())
            if diff:
                bad += 1
                print(f"n={n} m={m} C={c} {dtype}: {diff} of {r.size} differ")
    print(f"{len(cases) * 2 - bad} of {len(cases) * 2} cases bit-identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
