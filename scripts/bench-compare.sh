#!/usr/bin/env bash
# Benchmark (not a test): two builds of the tools side by side, to show that a change made
# nothing slower. Each workload runs ROUNDS times per build, the builds alternating (and
# taking turns to go first), with a warm page cache and no dirty pages left from the last
# run; the table gives the median wall seconds and peak RSS of each, and checks that both
# builds wrote the same bytes. Wall times of the I/O-bound f16 workload vary by 2x on a VM:
# use 5+ rounds before reading anything into them.
#
#   scripts/bench-compare.sh OLD_DIR NEW_DIR [WORKDIR] [SIZE_MB] [ROUNDS]
#
# OLD_DIR and NEW_DIR hold gguf-convert and gguf-quantize (e.g. a copy of target/release from
# an older commit, and target/release). Defaults: WORKDIR /tmp/ggufkit-bench-compare,
# SIZE_MB 600 (a generated bf16 Llama checkpoint), ROUNDS 3.
#
# Workloads: HF bf16 → f16; HF → Q4_K_M in one pass; HF → f16,q8_0,q4_k_m in one pass (the
# shared-work path); gguf-quantize f16 → Q4_K_M.
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=$(realpath "$1")
NEW=$(realpath "$2")
W=${3:-/tmp/ggufkit-bench-compare}
SIZE=${4:-600}
ROUNDS=${5:-3}
mkdir -p "$W"
cargo build --release --quiet --example gen_hf
HF="$W/synthetic-llama"
[ -f "$HF/model.safetensors" ] || target/release/examples/gen_hf "$HF" "$SIZE"
warm() { cat "$HF/model.safetensors" "$@" > /dev/null 2>&1 || true; }

# A shared f16 input for the quantize workload, made once by the new build.
F16="$W/input-f16.gguf"
[ -f "$F16" ] || "$NEW/gguf-convert" "$HF" "$F16" --outtype f16 --quiet

run() { # BIN_DIR TAG WORKLOAD → prints "wall rss_mb"
  local bin=$1 tag=$2 workload=$3 out="$W/out-$2"
  rm -rf "$out"
  mkdir -p "$out"
  local cmd
  case "$workload" in
    f16) cmd=("$bin/gguf-convert" "$HF" "$out/m.gguf" --outtype f16 --quiet) ;;
    q4km) cmd=("$bin/gguf-convert" "$HF" "$out/m.gguf" --outtype q4_k_m --quiet) ;;
    multi) cmd=("$bin/gguf-convert" "$HF" --outtype f16,q8_0,q4_k_m --outdir "$out" --quiet) ;;
    quantize) cmd=("$bin/gguf-quantize" --quiet "$F16" "$out/m.gguf" Q4_K_M) ;;
  esac
  warm "$F16"
  sync   # no earlier run's dirty pages left to slow this one's fsync
  /usr/bin/time -f "%e %M" -o "$W/.time" "${cmd[@]}" > /dev/null
  read -r wall rss < "$W/.time"
  echo "$wall $((rss / 1024))"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "| workload | old wall (s) | new wall (s) | new / old | old RSS (MB) | new RSS (MB) | same bytes |"
echo "|---|---:|---:|---:|---:|---:|---|"
for workload in f16 q4km multi quantize; do
  : > "$W/old.txt"
  : > "$W/new.txt"
  for r in $(seq "$ROUNDS"); do
    if [ $((r % 2)) = 1 ]; then
      run "$OLD" old "$workload" >> "$W/old.txt"
      run "$NEW" new "$workload" >> "$W/new.txt"
    else
      run "$NEW" new "$workload" >> "$W/new.txt"
      run "$OLD" old "$workload" >> "$W/old.txt"
    fi
  done
  ow=$(cut -d' ' -f1 "$W/old.txt" | median)
  nw=$(cut -d' ' -f1 "$W/new.txt" | median)
  orss=$(cut -d' ' -f2 "$W/old.txt" | median)
  nrss=$(cut -d' ' -f2 "$W/new.txt" | median)
  same=yes
  for f in "$W"/out-old/*.gguf; do
    cmp -s "$f" "$W/out-new/$(basename "$f")" || same=NO
  done
  ratio=$(awk -v a="$nw" -v b="$ow" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
  echo "| $workload | $ow | $nw | $ratio | $orss | $nrss | $same |"
done
