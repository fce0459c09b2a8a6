#!/usr/bin/env bash
# Benchmark (not a test): peak memory of gguf-convert on pre-quantized checkpoints that are
# repacked (MXFP4 gpt-oss experts, ModelOpt NVFP4) or dequantized (GPTQ 4-bit).
#
#   scripts/bench-prequant.sh [WORKDIR] [SIZE_MB] [KINDS] [OUTTYPE]
#   # defaults: /tmp/ggufkit-bench-prequant 2200 "mxfp4 nvfp4 gptq" q8_0
#
# Generates (once per kind) a directory of about SIZE_MB of pre-quantized weights
# (examples/gen_hf_prequant.rs), converts it with --outtype OUTTYPE, and prints a Markdown
# table of wall seconds, CPU seconds, peak RSS and peak RSS as a share of the input (target:
# 10%). Needs about 2x SIZE_MB of free disk per kind (the input and the output).
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/ggufkit-bench-prequant}
SIZE=${2:-2200}
KINDS=${3:-"mxfp4 nvfp4 gptq"}
OUTTYPE=${4:-q8_0}
mkdir -p "$W"
cargo build --release --quiet -p ggufkit-cli --bin gguf-convert
cargo build --release --quiet --example gen_hf_prequant
CONVERT=target/release/gguf-convert

echo "$(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| input | MiB | command | wall s | CPU s | peak RSS MiB | RSS / input |"
echo "|---|---|---|---|---|---|---|"
for k in $KINDS; do
  HF="$W/synthetic-$k"
  [ -f "$HF/model.safetensors" ] || target/release/examples/gen_hf_prequant "$k" "$HF" "$SIZE"
  SRC_BYTES=$(stat -c %s "$HF/model.safetensors")
  rm -f "$W/out.gguf"
  /usr/bin/time -f "%e %U %S %M" -o "$W/.time" \
    $CONVERT -q "$HF" "$W/out.gguf" --outtype "$OUTTYPE" > /dev/null 2> "$W/.err" || {
    cat "$W/.err" >&2
    exit 1
  }
  read -r wall usr sys rss < <(tail -n1 "$W/.time")
  cpu=$(awk -v a="$usr" -v b="$sys" 'BEGIN{printf "%.1f", a+b}')
  pct=$(awk -v r="$rss" -v b="$SRC_BYTES" 'BEGIN{printf "%.1f%%", r*1024*100/b}')
  echo "| $k | $((SRC_BYTES / 1048576)) | gguf-convert --outtype $OUTTYPE | $wall | $cpu | $((rss / 1024)) | $pct |"
  rm -f "$W/out.gguf"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
