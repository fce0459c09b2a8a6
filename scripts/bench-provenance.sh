#!/usr/bin/env bash
# Benchmark (not a test): `gguf-inspect provenance` of a quantized model against its f16 GGUF,
# next to quantizing it once with gguf-quantize (the issue's bar: provenance takes at most
# the time of one quantization).
#
#   scripts/bench-provenance.sh [WORKDIR] [SIZE_MB] [TYPE]
#
# Defaults: /tmp/ggufkit-bench-provenance, 1100 MB, Q4_K_M. Prints a Markdown table: seconds
# and peak RSS of each step, both on all cores, warm page cache.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/ggufkit-bench-provenance}
SIZE=${2:-1100}
TYPE=${3:-Q4_K_M}
mkdir -p "$W"
cargo build --release --quiet --bins --example gen_model
BIN=target/release

measure() { # prints "seconds peak_rss_kb" of a command (exit status 0 or 1 accepted)
  /usr/bin/time -f "%e %M" -o "$W/.time" "$@" > "$W/.out" 2> "$W/.err" || [ $? -eq 1 ] || { cat "$W/.err" >&2; return 1; }
  cat "$W/.time"
}

[ -f "$W/model-f16.gguf" ] || $BIN/examples/gen_model "$W/model-f16.gguf" "$SIZE" f16
cat "$W/model-f16.gguf" > /dev/null
read -r Q_S Q_RSS < <(measure $BIN/gguf-quantize -q "$W/model-f16.gguf" "$W/model-q.gguf" "$TYPE")
read -r P_S P_RSS < <(measure $BIN/gguf-inspect provenance "$W/model-q.gguf" --from "$W/model-f16.gguf")
tail -n1 "$W/.out"
grep -q ": identical against" "$W/.out" || { echo "provenance did not say identical" >&2; exit 1; }
echo "| step ($(($(stat -c %s "$W/model-f16.gguf") / 1000000)) MB f16, $TYPE) | seconds | peak RSS (MB) |"
echo "|---|---:|---:|"
echo "| gguf-quantize | $Q_S | $((Q_RSS / 1024)) |"
echo "| gguf-inspect provenance | $P_S | $((P_RSS / 1024)) |"
rm -f "$W/model-q.gguf"
