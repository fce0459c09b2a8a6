#!/usr/bin/env python3
"""llama.cpp's quantizer kernels timed on the input of our kernel bench.

Reads DIR/src.f32, DIR/imatrix.f32 and DIR/ours.json (written by
`KERNEL_BENCH_DUMP=DIR cargo bench -p ggufkit-quantizers --bench kernels`), times
`ggml_quantize_chunk` from llama.cpp's libggml-base (the function llama-quantize runs, one
thread) on the same rows, plain and with the imatrix, best of 3, by CPU time with --cpu (the
figure to compare on a loaded machine) or wall time, and prints a Markdown table of both
programs' MB/s of f32 input, the speed-up, and whether the quantized bytes are identical.

    python3 scripts/bench-kernels-ref.py --lib <llama.cpp build>/bin/libggml-base.so --dir DIR [--cpu]

Needs numpy. scripts/bench-kernels.sh runs the Rust bench and this script together.
"""

import argparse
import ctypes
import hashlib
import json
import threading
import time
from pathlib import Path

import numpy as np


def timer(cpu: bool):
    return time.process_time if cpu else time.perf_counter


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True, type=Path)
    ap.add_argument("--dir", required=True, type=Path)
    ap.add_argument("--cpu", action="store_true")
    ap.add_argument("--threads", type=int, default=1,
                    help="split the rows over this many threads, as llama-quantize does"
                         " (wall time; compares with our all-threads column)")
    a = ap.parse_args()
    if a.threads > 1 and a.cpu:
        ap.error("--threads times wall time: leave out --cpu")
    ggml = ctypes.CDLL(str(a.lib))
    ggml.ggml_quantize_chunk.restype = ctypes.c_size_t
    ggml.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                         ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                         ctypes.c_void_p]
    ggml.ggml_row_size.restype = ctypes.c_size_t
    ggml.ggml_row_size.argtypes = [ctypes.c_int, ctypes.c_int64]
    ours = json.loads((a.dir / "ours.json").read_text())
    rows, n = ours["rows"], ours["n_per_row"]
    src = np.fromfile(a.dir / "src.f32", dtype="<f4")
    imatrix = np.fromfile(a.dir / "imatrix.f32", dtype="<f4")
    assert src.size == rows * n and imatrix.size == n
    mb = src.size * 4 / 1e6
    clock = timer(a.cpu)
    threads = a.threads
    column = "1" if threads == 1 else "n"
    if threads > 1 and ours["threads"] != threads:
        raise SystemExit(f"our bench ran {ours['threads']} threads, not {threads}")
    # Contiguous row ranges, one per thread: ctypes releases the GIL during the call, so the
    # threads quantize in parallel as llama-quantize's workers do.
    bounds = [rows * i // threads for i in range(threads + 1)]

    def quantize(tid, dst, im):
        def part(i):
            ggml.ggml_quantize_chunk(tid, src.ctypes.data, dst.ctypes.data, bounds[i] * n,
                                     bounds[i + 1] - bounds[i], n,
                                     None if im is None else im.ctypes.data)
        if threads == 1:
            part(0)
            return
        workers = [threading.Thread(target=part, args=(i,)) for i in range(threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()

    print(f"input: {rows} rows x {n} f32 ({mb:.0f} MB); MB/s of f32 input, {threads} thread(s),"
          f" best of 3 ({'CPU' if a.cpu else 'wall'} time)")
    print("| type | ours | llama.cpp | speed-up | ours, imatrix | llama.cpp, imatrix | speed-up | identical |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for name, t in ours["types"].items():
        dst = np.zeros(ggml.ggml_row_size(t["id"], n) * rows, dtype=np.uint8)
        cells, same = [], []
        for key, im in [("plain", None), ("imatrix", imatrix)]:
            mine = t[f"{key}_{column}"]
            if mine is None:
                cells += ["-", "-", "-"]
                continue
            best = float("inf")
            for _ in range(3):
                # As the Rust bench: repeat until a measurement takes 0.2 s.
                t0, calls = clock(), 0
                while True:
                    quantize(t["id"], dst, im)
                    calls += 1
                    if clock() - t0 >= 0.2:
                        break
                best = min(best, (clock() - t0) / calls)
            ref = mb / best
            cells += [f"{mine:.0f}", f"{ref:.1f}", f"{mine / ref:.1f}x"]
            same.append(hashlib.sha256(dst.tobytes()).hexdigest() == t["sha256"].get(key))
        ident = "yes" if same and all(same) else ("no" if same else "-")
        print(f"| {name} | " + " | ".join(cells) + f" | {ident} |")


if __name__ == "__main__":
    main()
