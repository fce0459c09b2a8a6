#!/usr/bin/env bash
# Benchmark (not a test): N outputs of one source written by one `gguf-convert --outtype a,b,c`
# pass against N separate `gguf-convert` runs. Checks that the files are identical.
#
#   scripts/bench-batch.sh [WORKDIR] [SIZE_MB] [TYPES]
#   defaults: /tmp/ggufkit-bench-batch 700 q8_0,q4_0,q4_k_m,q6_k
#
# The source is a synthetic llama-shaped f16 GGUF (examples/gen_model.rs). Prints a Markdown
# table: wall seconds, CPU seconds (user + sys) and peak RSS. On a shared machine compare the
# CPU seconds; wall time follows them when the cores are free.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/ggufkit-bench-batch}
SIZE=${2:-700}
TYPES=${3:-q8_0,q4_0,q4_k_m,q6_k}
mkdir -p "$W"
cargo build --release --quiet -p ggufkit-converters --bins
cargo build --release --quiet --example gen_model
BIN=target/release/gguf-convert
SRC="$W/model-f16.gguf"
[ -f "$SRC" ] || target/release/examples/gen_model "$SRC" "$SIZE" f16
cat "$SRC" > /dev/null   # warm the page cache for both contenders alike

measure() { # prints "wall user sys maxrss_kb"
  /usr/bin/time -f "%e %U %S %M" -o "$W/.time" "$@" > /dev/null 2> "$W/.err" || { cat "$W/.err" >&2; return 1; }
  tail -n1 "$W/.time"
}

rm -rf "$W/single" "$W/batch"
mkdir -p "$W/single" "$W/batch"
N=0; SW=0; SC=0; SM=0
echo "| run | wall s | CPU s | peak RSS MB |"
echo "|---|---:|---:|---:|"
for T in ${TYPES//,/ }; do
  read -r WALL USR SYS RSS < <(measure $BIN -q "$SRC" --outtype "$T" --outdir "$W/single")
  CPU=$(awk -v a="$USR" -v b="$SYS" 'BEGIN{printf "%.2f", a+b}')
  echo "| gguf-convert --outtype $T | $WALL | $CPU | $((RSS / 1024)) |"
  SW=$(awk -v a="$SW" -v b="$WALL" 'BEGIN{print a+b}')
  SC=$(awk -v a="$SC" -v b="$CPU" 'BEGIN{print a+b}')
  [ "$RSS" -gt "$SM" ] && SM=$RSS
  N=$((N + 1))
done
echo "| **$N separate runs** | **$SW** | **$SC** | $((SM / 1024)) |"
read -r WALL USR SYS RSS < <(measure $BIN -q "$SRC" --outtype "$TYPES" --outdir "$W/batch")
CPU=$(awk -v a="$USR" -v b="$SYS" 'BEGIN{printf "%.2f", a+b}')
echo "| **one pass: --outtype $TYPES** | **$WALL** | **$CPU** | $((RSS / 1024)) |"
awk -v a="$WALL" -v b="$SW" -v c="$CPU" -v d="$SC" \
  'BEGIN{printf "\none pass / separate runs: wall %.2f, CPU %.2f\n", a/b, c/d}'
(cd "$W/single" && sha256sum -- *.gguf) > "$W/single.sha"
(cd "$W/batch" && sha256sum -- *.gguf) > "$W/batch.sha"
if cmp -s "$W/single.sha" "$W/batch.sha"; then echo "outputs identical: yes"; else echo "outputs identical: NO"; diff "$W/single.sha" "$W/batch.sha"; exit 1; fi
