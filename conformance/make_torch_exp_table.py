#!/usr/bin/env python3
"""Measures torch's CPU `exp` on every float32 input, for converters/src/hf/torch_math/exp.rs.

What `torch.exp` runs on a contiguous CPU float32 tensor (torch 2.15, the x86-64 wheel): MKL's
vector exp (`vsExp`, high-accuracy mode), which MKL dispatches by the CPU's instruction set on
its own (`MKL_ENABLE_INSTRUCTIONS` / `MKL_CBWR` change the result; `ATEN_CPU_CAPABILITY` does
not). Its result is the correctly rounded exp or, for about 1% of inputs, the other float
next to the exact value; it depends only on the input (not on the tensor's size, the
element's position, the stride or the thread count: `check_position_independence`).

This script evaluates torch.exp on all 2^32 float32 bit patterns, 2^24 at a time, and writes:

* `converters/src/hf/torch_math/exp_<path>.bin`: the inputs where torch is not the
  reconstruction `round(exp_f64(x))` (see `reconstruct`), as runs of input bit patterns, plus
  the explicit results for inputs whose exp lies so close to a rounding midpoint that the
  f64 exp of two libms could round differently. Format (little-endian):
  `b"TEXP" u32 n_runs u32 n_explicit`, then `n_runs` pairs of LEB128 (gap from the previous
  run's end, length - 1) over the bit patterns as u32, then `n_explicit` pairs
  `(u32 input bits, u32 output bits)` sorted by input.
* `testdata/golden/torch-math/exp-chunks-<path>.json`: the sha256 of torch's output (f32 LE) for
  each of the 4096 chunks of 2^20 consecutive bit patterns, which the tests compare.

Run it with the reference's venv once per MKL path ggufkit matches (`<path>` is `compatible`,
the path of MKL's generic x86-64 code, which every x86-64 CPU can be made to take and which
the project's goldens were made with, or `avx512`); the AVX-512 path needs an AVX-512 CPU:

    MKL_CBWR=COMPATIBLE python conformance/make_torch_exp_table.py
    MKL_CBWR=AVX512 python conformance/make_torch_exp_table.py
"""
import hashlib
import json
import os
import struct
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# MKL's code path: `MKL_CBWR` as given (COMPATIBLE or AVX512), which names the outputs.
PATH = os.environ.get("MKL_CBWR", "").lower()
assert PATH in ("compatible", "avx512"), "set MKL_CBWR=COMPATIBLE or MKL_CBWR=AVX512"
TABLE = os.path.join(ROOT, f"converters/src/hf/torch_math/exp_{PATH}.bin")
GOLDEN = os.path.join(ROOT, f"testdata/golden/torch-math/exp-chunks-{PATH}.json")
CHUNK = 1 << 24
# Each golden hash covers this many consecutive bit patterns: small enough that a test can
# check a sample of them quickly.
HASHED = 1 << 20
# An exp closer than this (in units of the f32 spacing) to a rounding midpoint is listed
# explicitly: two libms' f64 exp differ by a few f64 ulps (2^-29 f32 ulps), far below it.
NEAR = 2.0 ** -20


def reconstruct(x):
    """The rule exp.rs applies before its table: the f64 exp rounded to f32, the neighbour on
    the exact value's other side, and whether the value is too near a midpoint to trust."""
    with np.errstate(all="ignore"):
        e = np.exp(x.astype(np.float64))
        r = e.astype(np.float32)
        r64 = r.astype(np.float64)
        up = e > r64
        other = np.where(up, np.nextafter(r, np.float32(np.inf)),
                         np.nextafter(r, np.float32(-np.inf)))
        o64 = other.astype(np.float64)
        mid = (r64 + o64) * 0.5
        spacing = np.abs(o64 - r64)
        near = (np.isfinite(r64) & np.isfinite(o64)
                & (np.abs(e - mid) / spacing < NEAR))
    return e, r, other, near


def check_position_independence() -> None:
    """torch.exp of an element does not depend on where it sits or how the work is split."""
    rng = np.random.default_rng(7)
    x = rng.uniform(-12, 6, size=300_001).astype(np.float32)
    whole = torch.exp(torch.from_numpy(x)).numpy().view(np.uint32)
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for off in range(17):
            for n in (1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 1000, 4097, 70001):
                part = torch.exp(torch.from_numpy(x)[off:off + n]).numpy().view(np.uint32)
                assert (part == whole[off:off + n]).all(), (threads, off, n)
    torch.set_num_threads(1)


def leb128(v: int, out: bytearray) -> None:
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return


def main() -> None:
    check_position_independence()
    runs = []  # [start, end) of consecutive exceptional bit patterns
    explicit = []
    hashes = []
    # The 2^24-pattern chunks measured: all for AVX-512; for the generic path the
    # magnitudes [2^-27, 128) of both signs (bit patterns 0x32.. to 0x43.., 0xb2.. to
    # 0xc3..): every input whose exp is neither exactly 1, 0 nor infinite, and where real
    # A_log values lie (outside them ggufkit rounds the f64 exp, exact there on AVX-512).
    chunks = list(range(1 << 8)) if PATH == "avx512" else \
        list(range(0x32, 0x44)) + list(range(0xB2, 0xC4))
    for c in chunks:
        bits = np.arange(c * CHUNK, (c + 1) * CHUNK, dtype=np.uint64).astype(np.uint32)
        x = bits.view(np.float32)
        y = torch.exp(torch.from_numpy(x)).numpy()
        for k in range(0, CHUNK, HASHED):
            hashes.append(hashlib.sha256(y[k:k + HASHED].astype("<f4").tobytes()).hexdigest())
        yb = y.view(np.uint32)
        nan = np.isnan(x)
        assert (yb[nan] == (bits[nan] | 0x0040_0000)).all(), "NaN is not quieted in place"
        e, r, other, near = reconstruct(x)
        ok = ~nan & ~near
        exc = ok & (yb != r.view(np.uint32))
        assert (yb[exc] == other.view(np.uint32)[exc]).all(), f"chunk {c}: off by more than 1"
        assert not (exc & (e == r.astype(np.float64))).any(), f"chunk {c}: exact value missed"
        for i in np.nonzero(~nan & near)[0]:
            explicit.append((int(bits[i]), int(yb[i])))
        d = np.diff(np.concatenate([[0], exc.astype(np.int8), [0]]))
        starts = np.nonzero(d == 1)[0] + c * CHUNK
        ends = np.nonzero(d == -1)[0] + c * CHUNK
        for s, t in zip(starts.tolist(), ends.tolist()):
            if runs and runs[-1][1] == s:
                runs[-1][1] = t
            else:
                runs.append([s, t])
        print(f"chunk {c:3}: {int(exc.sum()):8} exceptions, {int(near.sum())} near", file=sys.stderr)
    out = bytearray(b"TEXP")
    out += struct.pack("<II", len(runs), len(explicit))
    prev = 0
    for s, t in runs:
        leb128(s - prev, out)
        leb128(t - s - 1, out)
        prev = t
    for i, o in explicit:
        out += struct.pack("<II", i, o)
    os.makedirs(os.path.dirname(TABLE), exist_ok=True)
    with open(TABLE, "wb") as f:
        f.write(out)
    os.makedirs(os.path.dirname(GOLDEN), exist_ok=True)
    with open(GOLDEN, "w") as f:
        json.dump({
            "what": "sha256 of torch.exp (f32 LE) over runs of 2^20 consecutive float32 bit "
                    "patterns: the 16 runs of each chunk of 2^24 patterns starting at run "
                    "first_runs[i], in order",
            "torch": torch.__version__,
            "mkl_path": os.environ.get("MKL_CBWR", "native"),
            "capability": torch.backends.cpu.get_cpu_capability(),
            "first_runs": [c << 4 for c in chunks],
            "chunks": hashes,
        }, f, indent=1)
        f.write("\n")
    print(f"{len(runs)} runs, {len(explicit)} explicit, {len(out)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
