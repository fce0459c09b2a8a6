#!/usr/bin/env bash
# Benchmark (not a test): N outputs of one source written by one `gguf-convert --outtype a,b,c`
# pass against N separate `gguf-convert` runs, and a check that the files are identical.
#
#   scripts/bench-batch.sh [WORKDIR] [SIZE_MB]      # defaults: /tmp/ggufkit-bench-batch 600
#
# Two sources of about SIZE_MB: a synthetic HuggingFace Llama directory (bf16 safetensors,
# examples/gen_hf.rs, tokenizer of testdata/hf/llama-spm) converted to
# f16,q8_0,q4_k_m,q2_k, and a synthetic f16 GGUF (examples/gen_model.rs) quantized to
# q8_0,q4_0,q4_k_m,q6_k. Prints Markdown tables: wall seconds, CPU seconds (user + sys), peak
# RSS. On a shared machine compare the CPU seconds; wall time follows them when cores are free.
#
# COLD=1 (root only) drops the page cache before every run, so each run reads its source from
# disk: what happens when the model does not fit in the page cache, or on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/ggufkit-bench-batch}
SIZE=${2:-600}
mkdir -p "$W"
cargo build --release --quiet -p ggufkit-cli --bins
cargo build --release --quiet --example gen_model --example gen_hf
BIN=target/release/gguf-convert

measure() { # prints "wall user sys maxrss_kb"
  [ "${COLD:-0}" = 1 ] && { sync; echo 3 > /proc/sys/vm/drop_caches; }
  /usr/bin/time -f "%e %U %S %M" -o "$W/.time" "$@" > /dev/null 2> "$W/.err" || { cat "$W/.err" >&2; return 1; }
  tail -n1 "$W/.time"
}

compare() { # SRC TYPES TITLE
  local SRC=$1 TYPES=$2 TITLE=$3 N=0 SW=0 SC=0 SM=0 WALL USR SYS RSS CPU T
  find "$SRC" -type f -exec cat {} + > /dev/null   # warm the page cache for both contenders
  rm -rf "$W/single" "$W/batch"
  mkdir -p "$W/single" "$W/batch"
  echo
  echo "### $TITLE"
  echo
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
  if cmp -s "$W/single.sha" "$W/batch.sha"; then
    echo "outputs identical: yes"
  else
    echo "outputs identical: NO"; diff "$W/single.sha" "$W/batch.sha"; exit 1
  fi
}

HF="$W/synthetic-llama"
[ -f "$HF/model.safetensors" ] || target/release/examples/gen_hf "$HF" "$SIZE"
compare "$HF" f16,q8_0,q4_k_m,q2_k "HuggingFace bf16 directory ($(du -sm "$HF" | cut -f1) MB)"

GG="$W/model-f16.gguf"
[ -f "$GG" ] || target/release/examples/gen_model "$GG" "$SIZE" f16
compare "$GG" q8_0,q4_0,q4_k_m,q6_k "f16 GGUF ($(du -sm "$GG" | cut -f1) MB)"
