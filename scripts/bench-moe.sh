#!/usr/bin/env bash
# Benchmark (not a test): peak memory of gguf-convert when per-expert tensors are stacked into
# `ffn_*_exps`.
#
#   scripts/bench-moe.sh [WORKDIR] [SIZE_MB] [OUTTYPES]   # defaults: /tmp/ggufkit-bench-moe 2200 "q8_0 bf16"
#
# Generates (once) a Mixtral directory of about SIZE_MB of bf16 weights whose experts are
# stored one tensor per expert (16 experts of 3 x 1536 x 2048 per layer; examples/gen_hf_moe.rs),
# converts it to each outtype, and prints a Markdown table of wall seconds, CPU seconds, peak
# RSS, peak RSS as a share of the input, and the target: 10% of the input plus the largest
# stacked tensor ([16, 1536, 2048]) in the output type. Needs about 3x SIZE_MB of free disk.
#
# Measured 2026-12-02 on the shared 2-CPU machine (load average 16, `scripts/bench-moe.sh`,
# 2164 MiB input, 7 layers of 16 experts): --outtype q8_0 142 MiB peak RSS (6.6% of the input;
# target 267 MiB), --outtype bf16 111 MiB (5.1%; target 312 MiB), stacked experts computed
# by rows. Not measured before the change (the bench ran once): the whole stack was then
# evaluated (100 MiB of bf16 per [16, 1536, 2048] tensor) and, for q8_0, widened to f32.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/ggufkit-bench-moe}
SIZE=${2:-2200}
OUTTYPES=${3:-"q8_0 bf16"}
mkdir -p "$W"
cargo build --release --quiet -p ggufkit-cli --bin gguf-convert
cargo build --release --quiet --example gen_hf_moe
CONVERT=target/release/gguf-convert

HF="$W/synthetic-mixtral"
[ -f "$HF/model.safetensors" ] || target/release/examples/gen_hf_moe "$HF" "$SIZE"
SRC_BYTES=$(stat -c %s "$HF/model.safetensors")
SRC_MB=$((SRC_BYTES / 1048576))
STACK=$((16 * 1536 * 2048))

echo "input: $HF/model.safetensors, $SRC_MB MiB ($SRC_BYTES bytes); $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| command | wall s | CPU s | peak RSS MiB | RSS / input | target MiB |"
echo "|---|---|---|---|---|---|"
for t in $OUTTYPES; do
  case $t in
    f32) per=4 ;; f16|bf16) per=2 ;; q8_0) per=1.0625 ;; *) per=2 ;;
  esac
  target=$(awk -v b="$SRC_BYTES" -v s="$STACK" -v p="$per" 'BEGIN{printf "%d", (b*0.1 + s*p)/1048576}')
  rm -f "$W/out.gguf"
  /usr/bin/time -f "%e %U %S %M" -o "$W/.time" \
    $CONVERT -q "$HF" "$W/out.gguf" --outtype "$t" > /dev/null 2> "$W/.err" || {
    cat "$W/.err" >&2
    exit 1
  }
  read -r wall usr sys rss < <(tail -n1 "$W/.time")
  cpu=$(awk -v a="$usr" -v b="$sys" 'BEGIN{printf "%.1f", a+b}')
  pct=$(awk -v r="$rss" -v b="$SRC_BYTES" 'BEGIN{printf "%.1f%%", r*1024*100/b}')
  echo "| gguf-convert --outtype $t | $wall | $cpu | $((rss / 1024)) | $pct | $target |"
  rm -f "$W/out.gguf"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
