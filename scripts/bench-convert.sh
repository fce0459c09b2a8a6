#!/usr/bin/env bash
# Benchmark (not a test) for gguf-convert on a big HuggingFace checkpoint: a generated Llama
# directory of SIZE_MB of bf16 safetensors converted to f16 and to Q4_K_M, against `cp` of the
# same bytes and against the two-step route (f16 file, then gguf-quantize).
#
#   scripts/bench-convert.sh [WORKDIR] [SIZE_MB] [THREADS] [ROUNDS]
#   # defaults: /tmp/ggufkit-bench-convert 2100 all 5
#
# Prints a Markdown table: wall seconds, CPU seconds (user + sys), throughput (source bytes /
# wall), peak RSS, and the ratios it is held to:
#   - f16 conversion within 1.5x of `cp`: our default run against `cp` + `sync FILE` (we sync
#     the output before renaming it into place), and `--no-sync` against plain `cp`;
#   - peak RSS a small fraction of the model size;
#   - one-pass Q4_K_M faster than f16 conversion followed by gguf-quantize.
# The page cache is warmed before every run so all contenders read from memory. Needs ~3.5x
# SIZE_MB of free disk in WORKDIR. On a shared machine compare CPU seconds as well as wall time.
# Last, the copy limit on its own: `dd` against `--no-sync` and `dd conv=fsync` against the
# durable default, ROUNDS alternating runs each, every run starting after a `sync` (so one
# run's writeback does not land in the next), reported as medians with their ratios.
# Environment: SKIP_BUILD=1 (use the built binaries as they are).
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/ggufkit-bench-convert}
SIZE=${2:-2100}
THREADS=${3:-}
ROUNDS=${4:-5}
mkdir -p "$W"
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  cargo build --release --quiet -p ggufkit-cli --bins
  cargo build --release --quiet --example gen_hf
fi
T=${CARGO_TARGET_DIR:-target}/release
CONVERT=$T/gguf-convert
QUANTIZE=$T/gguf-quantize
TFLAG=()
QTHREADS=()
if [ -n "$THREADS" ]; then
  TFLAG=(--threads "$THREADS")
  QTHREADS=("$THREADS")
fi

HF="$W/synthetic-llama"
[ -f "$HF/model.safetensors" ] || "$T/examples/gen_hf" "$HF" "$SIZE"
SRC_BYTES=$(stat -c %s "$HF/model.safetensors")
SRC_MB=$((SRC_BYTES / 1048576))
warm() { cat "$HF/model.safetensors" "$@" > /dev/null; }

ROWS=()
measure() { # LABEL CMD... ; sets WALL CPU RSS_MB and appends a table row
  local label=$1
  shift
  /usr/bin/time -f "%e %U %S %M" -o "$W/.time" "$@" > /dev/null 2> "$W/.err" || {
    cat "$W/.err" >&2
    return 1
  }
  local usr sys rss
  read -r WALL usr sys rss < <(tail -n1 "$W/.time")
  CPU=$(awk -v a="$usr" -v b="$sys" 'BEGIN{printf "%.2f", a+b}')
  RSS_MB=$((rss / 1024))
  local mbs
  mbs=$(awk -v b="$SRC_BYTES" -v w="$WALL" 'BEGIN{printf "%.0f", b/1048576/w}')
  ROWS+=("| $label | $WALL | $CPU | $mbs | $RSS_MB |")
}

rm -f "$W"/*.gguf "$W/copy.safetensors"
warm
measure "cp model.safetensors" cp "$HF/model.safetensors" "$W/copy.safetensors"
CP=$WALL
rm -f "$W/copy.safetensors"
warm
measure "cp + sync (same durability as ours)" sh -c 'cp "$1" "$2" && sync "$2"' sh \
  "$HF/model.safetensors" "$W/copy.safetensors"
CPSYNC=$WALL
rm -f "$W/copy.safetensors"
# cp moves the bytes inside the kernel (copy_file_range); a copy through user space, as any
# converter must make, is dd with read and write calls.
warm
measure "dd bs=8M (copy through user space)" dd if="$HF/model.safetensors" \
  of="$W/copy.safetensors" bs=8M status=none
DD=$WALL
rm -f "$W/copy.safetensors"

warm
measure "gguf-convert --outtype f16" $CONVERT -q "${TFLAG[@]}" "$HF" "$W/f16.gguf" --outtype f16
F16=$WALL
F16_RSS=$RSS_MB
rm -f "$W/f16-nosync.gguf"
warm
measure "gguf-convert --outtype f16 --no-sync (same durability as cp)" $CONVERT -q "${TFLAG[@]}" \
  "$HF" "$W/f16-nosync.gguf" --outtype f16 --no-sync
F16NS=$WALL
cmp -s "$W/f16.gguf" "$W/f16-nosync.gguf" || { echo "f16 outputs differ" >&2; exit 1; }
rm -f "$W/f16-nosync.gguf"
warm "$W/f16.gguf"
measure "gguf-quantize f16.gguf Q4_K_M" $QUANTIZE "$W/f16.gguf" "$W/two-step-q4_k_m.gguf" Q4_K_M \
  "${QTHREADS[@]}"
QUANT=$WALL
warm
measure "gguf-convert --outtype q4_k_m (one pass)" $CONVERT -q "${TFLAG[@]}" "$HF" \
  "$W/one-pass-q4_k_m.gguf" --outtype q4_k_m
ONEPASS=$WALL
ONEPASS_RSS=$RSS_MB

echo
echo "### gguf-convert: $SRC_MB MiB bf16 safetensors, threads: ${THREADS:-all ($(nproc))}"
echo
echo "| run | wall s | CPU s | MiB/s of source | peak RSS MiB |"
echo "|---|---:|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
echo
awk -v f="$F16" -v n="$F16NS" -v c="$CP" -v d="$DD" -v s="$CPSYNC" -v q="$QUANT" -v o="$ONEPASS" \
  -v r1="$F16_RSS" -v r2="$ONEPASS_RSS" -v m="$SRC_MB" 'BEGIN{
  printf "f16 / (cp + sync): %.2fx   f16 --no-sync / cp: %.2fx   f16 --no-sync / dd: %.2fx   (target: within 1.5x)\n", f/s, n/c, n/d
  printf "peak RSS / model size: f16 %.1f%%, one-pass Q4_K_M %.1f%%\n", 100*r1/m, 100*r2/m
  printf "one-pass Q4_K_M %.2f s vs f16 + gguf-quantize %.2f s (%.2fx faster)\n", o, f+q, (f+q)/o
}'
ls -l "$W"/*.gguf | awk '{print $5, $NF}'

# The copy limit: medians of ROUNDS alternating runs.
wall() { # CMD... → prints wall seconds
  /usr/bin/time -f "%e" -o "$W/.time" "$@" > /dev/null 2> "$W/.err" || {
    cat "$W/.err" >&2
    return 1
  }
  tail -n1 "$W/.time"
}
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
DDS=() OURS=() DDF=() DUR=()
for _ in $(seq "$ROUNDS"); do
  for c in dd ours ddsync durable; do
    rm -f "$W/copy.safetensors" "$W/round.gguf"
    sync
    warm
    case $c in
      dd) DDS+=("$(wall dd if="$HF/model.safetensors" of="$W/copy.safetensors" bs=8M status=none)") ;;
      ddsync) DDF+=("$(wall dd if="$HF/model.safetensors" of="$W/copy.safetensors" bs=8M conv=fsync status=none)") ;;
      ours) OURS+=("$(wall $CONVERT -q "${TFLAG[@]}" "$HF" "$W/round.gguf" --outtype f16 --no-sync)") ;;
      durable) DUR+=("$(wall $CONVERT -q "${TFLAG[@]}" "$HF" "$W/round.gguf" --outtype f16)") ;;
    esac
  done
done
cmp -s "$W/f16.gguf" "$W/round.gguf" || { echo "f16 outputs differ" >&2; exit 1; }
rm -f "$W/copy.safetensors" "$W/round.gguf"
echo
echo "### The copy limit: medians of $ROUNDS alternating runs (wall s)"
echo
echo "| pair | copy | gguf-convert f16 | ratio |"
echo "|---|---:|---:|---:|"
awk -v a="$(median "${DDS[@]}")" -v b="$(median "${OURS[@]}")" -v c="$(median "${DDF[@]}")" \
  -v d="$(median "${DUR[@]}")" 'BEGIN{
  printf "| dd bs=8M vs --no-sync | %.2f | %.2f | %.2f |\n", a, b, b/a
  printf "| dd conv=fsync vs durable (default) | %.2f | %.2f | %.2f |\n", c, d, d/c
}'
echo "runs: dd ${DDS[*]}; --no-sync ${OURS[*]}; dd conv=fsync ${DDF[*]}; durable ${DUR[*]}"
