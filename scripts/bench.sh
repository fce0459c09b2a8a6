#!/usr/bin/env bash
# Benchmarks (not tests): container throughput and gguf-quantize against llama-quantize.
#
#   scripts/bench.sh [WORKDIR]            # default WORKDIR: /tmp/ggufkit-bench
#   LLAMA_QUANTIZE=/path/to/llama-quantize scripts/bench.sh   # also time llama.cpp's tool
#
# Prints Markdown tables: seconds, MB/s (of input), peak RSS. Needs ~8 GB of free disk.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/ggufkit-bench}
mkdir -p "$W"
cargo build --release --quiet --bins --example gen_model --example roundtrip
BIN=target/release
NPROC=$(nproc)

measure() { # prints "seconds peak_rss_kb" of a command
  local out
  out=$( { /usr/bin/time -f "%e %M" "$@" > /dev/null 2> "$W/.err"; } 2>&1 ) || { cat "$W/.err" >&2; return 1; }
  tail -n1 "$W/.err"
}
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", (s > 0 ? b / s / 1e6 : 0) }'; }

echo "## Container throughput (2.2 GB f16 model)"
[ -f "$W/big-f16.gguf" ] || $BIN/examples/gen_model "$W/big-f16.gguf" 2200 f16
SIZE=$(stat -c %s "$W/big-f16.gguf")
cat "$W/big-f16.gguf" > /dev/null   # warm the page cache for every contender alike
echo "| operation | seconds | MB/s | ratio to cp | peak RSS (MB) |"
echo "|---|---:|---:|---:|---:|"
read -r CP_S CP_RSS < <(measure cp "$W/big-f16.gguf" "$W/cp-copy.gguf")
echo "| cp | $CP_S | $(mbps "$SIZE" "$CP_S") | 1.00 | $((CP_RSS / 1024)) |"
read -r RT_S RT_RSS < <(measure $BIN/examples/roundtrip "$W/big-f16.gguf" "$W/rt-copy.gguf")
cmp "$W/big-f16.gguf" "$W/rt-copy.gguf"
echo "| round-trip copy (read + write) | $RT_S | $(mbps "$SIZE" "$RT_S") | $(awk -v a="$RT_S" -v b="$CP_S" 'BEGIN{printf "%.2f", a/b}') | $((RT_RSS / 1024)) |"
read -r D_S D_RSS < <(measure $BIN/gguf-inspect dump "$W/big-f16.gguf")
echo "| gguf-inspect dump | $D_S | $(mbps "$SIZE" "$D_S") | $(awk -v a="$D_S" -v b="$CP_S" 'BEGIN{printf "%.2f", a/b}') | $((D_RSS / 1024)) |"
rm -f "$W/cp-copy.gguf" "$W/rt-copy.gguf"

echo
echo "## gguf-quantize (1.1 GB f16 llama-shaped model)"
[ -f "$W/model-f16.gguf" ] || $BIN/examples/gen_model "$W/model-f16.gguf" 1100 f16
SIZE=$(stat -c %s "$W/model-f16.gguf")
cat "$W/model-f16.gguf" > /dev/null
echo "| type | threads | tool | seconds | MB/s | peak RSS (MB) | identical |"
echo "|---|---:|---|---:|---:|---:|---|"
for T in Q4_0 Q8_0 Q4_K_M Q6_K; do
  for J in 1 "$NPROC"; do
    read -r S RSS < <(measure $BIN/gguf-quantize --quiet --force -j "$J" "$W/model-f16.gguf" "$W/ours-$T.gguf" "$T")
    SAME=-
    if [ -n "${LLAMA_QUANTIZE:-}" ]; then
      read -r LS LRSS < <(measure "$LLAMA_QUANTIZE" "$W/model-f16.gguf" "$W/llama-$T.gguf" "$T" "$J")
      if cmp -s "$W/ours-$T.gguf" "$W/llama-$T.gguf"; then SAME=yes; else SAME=NO; fi
      echo "| $T | $J | llama-quantize | $LS | $(mbps "$SIZE" "$LS") | $((LRSS / 1024)) | |"
      rm -f "$W/llama-$T.gguf"
    fi
    echo "| $T | $J | gguf-quantize | $S | $(mbps "$SIZE" "$S") | $((RSS / 1024)) | $SAME |"
  done
  rm -f "$W/ours-$T.gguf"
done
