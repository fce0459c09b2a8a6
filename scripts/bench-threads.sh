#!/usr/bin/env bash
# Benchmark (not a test): how every path scales with threads.
#
#   scripts/bench-threads.sh [WORKDIR] [ROUNDS] [THREADS ...]
#       defaults: /tmp/ggufkit-bench-threads 3, then 1 and $(nproc)
#
# Input: a SmolLM2-135M-shaped bf16 checkpoint (conformance/bench/make_small_hf.py) and its
# f16 GGUF. Paths: convert (HF → f16), quantize (f16 → Q4_K_M and Q8_0), one pass (HF →
# Q4_K_M), batch (HF → f16,q8_0,q4_k_m in one read). Each runs ROUNDS times per thread count
# (--no-sync, warm page cache); the table has the median wall seconds per count, the speedup
# of the largest count over 1, and, for the conversions, the share of the run spent outside
# the parallel tensor phase (gguf-convert --verbose: config, metadata, vocabulary, commit),
# which bounds the speedup on any number of cores.
#
# Environment: SKIP_BUILD=1 (use the built binaries as they are), PY (a python with torch, safetensors, transformers: make_small_hf.py's).
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/ggufkit-bench-threads}
ROUNDS=${2:-3}
shift $(( $# < 2 ? $# : 2 ))
COUNTS=("$@")
[ ${#COUNTS[@]} -gt 0 ] || COUNTS=(1 "$(nproc)")
PY=${PY:-/work/ref/torchvenv/bin/python}
T=${CARGO_TARGET_DIR:-target}/release
mkdir -p "$W"
[ "${SKIP_BUILD:-0}" = 1 ] || cargo build --release --quiet -p ggufkit-cli --bin gguf-convert --bin gguf-quantize
HF="$W/smollm2-135m-shaped"
F16="$W/model-f16.gguf"
[ -f "$HF/model.safetensors" ] || "$PY" conformance/bench/make_small_hf.py "$HF"
[ -f "$F16" ] || "$T/gguf-convert" "$HF" --outtype f16 --outfile "$F16" --quiet

cmd_of() { # PATH THREADS → the command, one word per line
  local p=$1 n=$2
  case "$p" in
    convert) printf '%s\n' "$T/gguf-convert" "$HF" --outtype f16 --outfile "$W/out.gguf" ;;
    quantize-q4_k_m) printf '%s\n' "$T/gguf-quantize" "$F16" "$W/out.gguf" Q4_K_M "$n" ;;
    quantize-q8_0) printf '%s\n' "$T/gguf-quantize" "$F16" "$W/out.gguf" Q8_0 "$n" ;;
    one-pass) printf '%s\n' "$T/gguf-convert" "$HF" --outtype q4_k_m --outfile "$W/out.gguf" ;;
    batch) printf '%s\n' "$T/gguf-convert" "$HF" --outtype f16,q8_0,q4_k_m \
      --outfile "$W/out-{ftype}.gguf" ;;
  esac
  case "$p" in quantize-*) ;; *) printf '%s\n' --threads "$n" ;; esac
  printf '%s\n' --no-sync --quiet
}

run() { # PATH THREADS → wall seconds
  local -a cmd
  mapfile -t cmd < <(cmd_of "$1" "$2")
  rm -f "$W"/out*.gguf
  cat "$HF"/* "$F16" > /dev/null
  /usr/bin/time -f "%e" -o "$W/.time" "${cmd[@]}" > "$W/run.log" 2>&1 \
    || { cat "$W/run.log" >&2; return 1; }
  tail -n1 "$W/.time"
}
median() { sort -n | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

serial_share() { # PATH THREADS → percent of the run outside the tensor data phase
  local -a cmd
  case "$1" in convert|one-pass|batch) ;; *) echo "-"; return ;; esac
  mapfile -t cmd < <(cmd_of "$1" "$2" | grep -v -- --quiet)
  rm -f "$W"/out*.gguf
  "${cmd[@]}" --verbose 2>&1 | awk '
    /write: tensor data/ { data = $(NF-1) }
    /^  total/ { total = $NF }
    END { if (total > 0) printf "%.0f %%", 100 * (total - data) / total; else print "-" }'
}

head="| path |"
rule="|---|"
for n in "${COUNTS[@]}"; do head+=" $n thread(s) s |"; rule+="---:|"; done
echo "Thread scaling, median wall seconds of $ROUNDS runs (--no-sync, warm cache)"
echo
echo "$head speedup | serial share |"
echo "$rule---:|---:|"
for p in convert quantize-q4_k_m quantize-q8_0 one-pass batch; do
  row="| $p |"
  first="" last=""
  for n in "${COUNTS[@]}"; do
    times=()
    for _ in $(seq "$ROUNDS"); do times+=("$(run "$p" "$n")"); done
    m=$(printf '%s\n' "${times[@]}" | median)
    row+=" $m |"
    [ -n "$first" ] || first=$m
    last=$m
  done
  speed=$(awk -v a="$first" -v b="$last" 'BEGIN{printf "%.2f", a/b}')
  echo "$row $speed | $(serial_share "$p" "${COUNTS[-1]}") |"
done
rm -f "$W"/out*.gguf
