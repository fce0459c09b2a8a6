#!/usr/bin/env bash
# Benchmark (not a test): peak memory of gguf-convert on a big pre-quantized FP8 checkpoint.
#
#   scripts/bench-fp8.sh [WORKDIR] [SIZE_MB] [OUTTYPES]   # defaults: /tmp/ggufkit-bench-fp8 2200 "bf16 q8_0"
#
# Generates (once) a Llama directory of about SIZE_MB of FP8 weights in DeepSeek-V3's layout
# (F8_E4M3 projections with F32 128x128 `weight_scale_inv` blocks, `quant_method: fp8`;
# examples/gen_hf_fp8.rs), converts it to each outtype, and prints a Markdown table of wall
# seconds, CPU seconds, peak RSS and peak RSS as a share of the input (the target:
# at most 10%). Every FP8 tensor is dequantized to F32 on the fly, one window at a time.
# Needs about 4x SIZE_MB of free disk in WORKDIR.
#
# Measured 2026-12-02 on the shared 2-CPU machine (`scripts/bench-fp8.sh`, 2096 MiB input):
# --outtype q8_0 72 MiB peak RSS (3.5%), --outtype bf16 63 MiB (3.0%). Before FP8 matrices
# were dequantized by rows: 675 MiB (32%) and 562 MiB (27%).
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/ggufkit-bench-fp8}
SIZE=${2:-2200}
OUTTYPES=${3:-"bf16 q8_0"}
mkdir -p "$W"
cargo build --release --quiet -p ggufkit-cli --bin gguf-convert
cargo build --release --quiet --example gen_hf_fp8
CONVERT=target/release/gguf-convert

HF="$W/synthetic-llama-fp8"
[ -f "$HF/model.safetensors" ] || target/release/examples/gen_hf_fp8 "$HF" "$SIZE"
SRC_BYTES=$(stat -c %s "$HF/model.safetensors")
SRC_MB=$((SRC_BYTES / 1048576))

echo "input: $HF/model.safetensors, $SRC_MB MiB ($SRC_BYTES bytes); $(nproc) CPUs"
echo
echo "| command | wall s | CPU s | peak RSS MiB | RSS / input |"
echo "|---|---|---|---|---|"
for t in $OUTTYPES; do
  rm -f "$W/out.gguf"
  /usr/bin/time -f "%e %U %S %M" -o "$W/.time" \
    $CONVERT -q "$HF" "$W/out.gguf" --outtype "$t" > /dev/null 2> "$W/.err" || {
    cat "$W/.err" >&2
    exit 1
  }
  read -r wall usr sys rss < <(tail -n1 "$W/.time")
  cpu=$(awk -v a="$usr" -v b="$sys" 'BEGIN{printf "%.1f", a+b}')
  pct=$(awk -v r="$rss" -v b="$SRC_BYTES" 'BEGIN{printf "%.1f%%", r*1024*100/b}')
  echo "| gguf-convert --outtype $t | $wall | $cpu | $((rss / 1024)) | $pct |"
  rm -f "$W/out.gguf"
done
