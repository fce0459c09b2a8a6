#!/usr/bin/env bash
# The quantizer kernel table of the README, both columns from this repository:
#   scripts/bench-kernels.sh LIBGGML_BASE [MB] [TYPES]
# LIBGGML_BASE: llama.cpp 0c1e570's libggml-base.so (see conformance/README.md for building it);
# MB: input size (default 16; the IQ1–IQ3 types are slow, give 4); TYPES: comma-separated
# names (default all). Both programs are timed by CPU time, one thread, best of 3.
# THREADS=N (N > 1): both programs on N threads instead (the reference's rows split over N
# threads as llama-quantize does), by wall time: run it on an otherwise idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
lib=${1:?usage: scripts/bench-kernels.sh LIBGGML_BASE [MB] [TYPES]}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
threads=${THREADS:-1}
cpu=1 flag=--cpu
if [ "$threads" -gt 1 ]; then cpu=0 flag="--threads $threads"; export RAYON_NUM_THREADS=$threads; fi
KERNEL_BENCH_DUMP=$dir KERNEL_BENCH_CPU=$cpu KERNEL_BENCH_MB=${2:-16} KERNEL_BENCH_TYPES=${3:-} \
  cargo bench -q -p ggufkit-quantizers --bench kernels > "$dir/ours.md"
"${PYTHON:-python3}" scripts/bench-kernels-ref.py --lib "$lib" --dir "$dir" $flag
