#!/usr/bin/env python3
"""Measures torch's CPU `erfinv` on every float32 input, for torch_math/erfinv.rs.

The reference turns Gemma 3n's `activation_sparsity_pattern` into scales with
`torch.distributions.Normal(0, 1).icdf(torch.tensor(p, dtype=torch.float32))`, which is
`0 + 1 * torch.erfinv(2 * p - 1) * math.sqrt(2)` on float32 tensors. On the x86-64 wheel
(torch 2.15) a float32 `erfinv` is MKL's vector erfinv (`vsErfInv`, high accuracy) for a
tensor of any size, a 0-dim one included; like MKL's exp it dispatches by CPU on its own
(`MKL_CBWR` changes results, `ATEN_CPU_CAPABILITY` does not). Its result is the correctly
rounded erfinv or, for a few inputs in ten thousand, the float on the exact value's other
side; it is odd (`erfinv(-y) == -erfinv(y)`, checked on every input) and depends on the
input alone (`check_position_independence`).

The script evaluates torch.erfinv on every float32 of magnitude below 1 (both signs), 2^24
bit patterns at a time, and writes:

* `converters/src/hf/torch_math/erfinv_<path>.bin`: over the bit patterns of [0, 1), the
  inputs where torch is not `round_f32(erfinv_f64(y))` (the f64 value being torch's own
  float64 erfinv, accurate to an f64 unit, which erfinv.rs reproduces within a few), as runs,
  plus the explicit results of inputs whose erfinv lies within 2^-20 of an f32 spacing of a
  rounding midpoint. Format (little-endian): `b"TERF" u32 n_runs u32 n_explicit`, then
  `n_runs` pairs of LEB128 (gap from the previous run's end, length - 1), then `n_explicit`
  pairs `(u32 input bits, u32 output bits)` sorted by input.
* `testdata/golden/torch-math/erfinv-<path>.json`: the sha256 of torch's output (f32 LE) for
  each run of 2^20 consecutive bit patterns of [0, 1), and of `Normal(0, 1).icdf` on the
  probability sets `ICDF_SETS` names, which converters/tests/suite/convert/torch_math_golden.rs compares.

Run with the reference's venv, once per MKL path (`MKL_CBWR=AVX512`: the path torch's default
dispatch takes on an AVX-512 CPU, with which the project's goldens were made; or
`MKL_CBWR=COMPATIBLE`):

    MKL_CBWR=AVX512 python conformance/make_torch_erfinv_table.py
"""
import hashlib
import json
import os
import struct
import sys

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH = os.environ.get("MKL_CBWR", "").lower()
assert PATH in ("compatible", "avx512"), "set MKL_CBWR=COMPATIBLE or MKL_CBWR=AVX512"
TABLE = os.path.join(ROOT, f"converters/src/hf/torch_math/erfinv_{PATH}.bin")
GOLDEN = os.path.join(ROOT, f"testdata/golden/torch-math/erfinv-{PATH}.json")
CHUNK = 1 << 24
HASHED = 1 << 20
ONE = 0x3F80_0000  # the bit pattern of 1.0: [0, ONE) is every float in [0, 1)
NEAR = 2.0 ** -20


def icdf_sets() -> dict[str, np.ndarray]:
    """Probabilities for the icdf golden: every decimal with up to four digits (what configs
    hold), every 4096th float32 of [0, 1], and a few extremes."""
    dec = np.unique(np.concatenate([np.arange(0, 10**n + 1) / 10**n for n in range(1, 5)]))
    strided = np.arange(0, ONE + 1, 4096, dtype=np.uint32).view(np.float32)
    extremes = np.array([0.0, 1.0, 1e-45, 1e-30, 1e-8, 0.5, 1 - 2**-24, 1 - 2**-23],
                        dtype=np.float32)
    return {
        "decimals": dec.astype(np.float32),
        "strided": strided,
        "extremes": extremes,
    }


def icdf(p: np.ndarray) -> np.ndarray:
    normal = torch.distributions.normal.Normal(0, 1)
    return normal.icdf(torch.from_numpy(p)).numpy()


def check_position_independence() -> None:
    """An element's erfinv does not depend on where it sits, the tensor's size or threads, and
    a 0-dim tensor (the reference's case) gives the same as a long one."""
    rng = np.random.default_rng(7)
    y = rng.uniform(-1, 1, size=100_001).astype(np.float32)
    whole = torch.erfinv(torch.from_numpy(y)).numpy().view(np.uint32)
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for off in range(9):
            for n in (1, 3, 8, 15, 16, 17, 33, 1000, 4097):
                part = torch.erfinv(torch.from_numpy(y)[off:off + n]).numpy().view(np.uint32)
                assert (part == whole[off:off + n]).all(), (threads, off, n)
    torch.set_num_threads(1)
    for i in range(0, 2000, 7):
        one = torch.erfinv(torch.tensor(float(y[i]), dtype=torch.float32)).numpy()
        assert one.view(np.uint32) == whole[i], i


def reconstruct(y: np.ndarray):
    """erfinv.rs's rule before its table: the f64 erfinv rounded to f32, the neighbour on the
    exact value's other side, and whether the value is too near a midpoint to trust."""
    e = torch.erfinv(torch.from_numpy(y.astype(np.float64))).numpy()
    r = e.astype(np.float32)
    r64 = r.astype(np.float64)
    up = e > r64
    other = np.where(up, np.nextafter(r, np.float32(np.inf)), np.nextafter(r, np.float32(-np.inf)))
    o64 = other.astype(np.float64)
    with np.errstate(all="ignore"):
        near = np.abs(e - (r64 + o64) * 0.5) / np.abs(o64 - r64) < NEAR
    return e, r, other, near


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
    runs, explicit, hashes = [], [], []
    for start in range(0, ONE, CHUNK):
        end = min(start + CHUNK, ONE)
        bits = np.arange(start, end, dtype=np.uint64).astype(np.uint32)
        y = bits.view(np.float32)
        t = torch.erfinv(torch.from_numpy(y)).numpy()
        neg = torch.erfinv(torch.from_numpy(-y)).numpy()
        assert (neg.view(np.uint32) == (-t).view(np.uint32)).all(), f"{start:#x}: not odd"
        for k in range(0, end - start, HASHED):
            hashes.append(hashlib.sha256(t[k:k + HASHED].astype("<f4").tobytes()).hexdigest())
        tb = t.view(np.uint32)
        e, r, other, near = reconstruct(y)
        exc = ~near & (tb != r.view(np.uint32))
        assert (tb[exc] == other.view(np.uint32)[exc]).all(), f"{start:#x}: off by more than 1"
        assert not (exc & (e == r.astype(np.float64))).any(), f"{start:#x}: exact value missed"
        for i in np.nonzero(near)[0]:
            explicit.append((int(bits[i]), int(tb[i])))
        d = np.diff(np.concatenate([[0], exc.astype(np.int8), [0]]))
        for s, u in zip((np.nonzero(d == 1)[0] + start).tolist(),
                        (np.nonzero(d == -1)[0] + start).tolist()):
            if runs and runs[-1][1] == s:
                runs[-1][1] = u
            else:
                runs.append([s, u])
        print(f"{start:#010x}: {int(exc.sum()):7} exceptions, {int(near.sum())} near",
              file=sys.stderr)
    out = bytearray(b"TERF")
    out += struct.pack("<II", len(runs), len(explicit))
    prev = 0
    for s, u in runs:
        leb128(s - prev, out)
        leb128(u - s - 1, out)
        prev = u
    for i, o in explicit:
        out += struct.pack("<II", i, o)
    with open(TABLE, "wb") as f:
        f.write(out)
    sets = {name: {"n": int(len(p)),
                   "sha256": hashlib.sha256(icdf(p).astype("<f4").tobytes()).hexdigest()}
            for name, p in icdf_sets().items()}
    os.makedirs(os.path.dirname(GOLDEN), exist_ok=True)
    with open(GOLDEN, "w") as f:
        json.dump({
            "what": "sha256 of torch.erfinv (f32 LE) over runs of 2^20 consecutive float32 bit "
                    "patterns from 0 up to 1.0 (the last run shorter), and of "
                    "Normal(0, 1).icdf on make_torch_erfinv_table.py's icdf_sets",
            "torch": torch.__version__,
            "mkl_path": os.environ.get("MKL_CBWR"),
            "capability": torch.backends.cpu.get_cpu_capability(),
            "chunks": hashes,
            "icdf": sets,
        }, f, indent=1)
        f.write("\n")
    print(f"{len(runs)} runs, {len(explicit)} explicit, {len(out)} bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
