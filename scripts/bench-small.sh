#!/usr/bin/env bash
# Benchmark (not a test): a small real-shaped model, where fixed costs show. A SmolLM2-135M-
# shaped HF checkpoint (bf16, the real 49,152-token BPE vocabulary; conformance/bench/
# make_small_hf.py) converted to f16 by gguf-convert and by llama.cpp's convert_hf_to_gguf.py,
# alternating, ROUNDS times each, warm page cache; checks both wrote the same bytes, prints
# the medians, their ratio, and gguf-convert's per-phase table (--verbose) of its median run.
#
#   scripts/bench-small.sh [WORKDIR] [ROUNDS] [THREADS]   # defaults: /tmp/ggufkit-bench-small 5 all
#
# Environment: L (llama.cpp checkout: convert_hf_to_gguf.py and gguf-py), PY (a python with
# torch, safetensors, transformers, numpy: the reference's requirements). gguf-convert runs
# with --no-sync (the reference does not sync its output) and again with its default durable
# write.
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/ggufkit-bench-small}
ROUNDS=${2:-5}
THREADS=${3:-}
L=${L:-/work/ref/sdist/llama_cpp_python-0.3.36/vendor/llama.cpp}
PY=${PY:-/work/ref/torchvenv/bin/python}
T=${CARGO_TARGET_DIR:-target}/release
mkdir -p "$W"
[ "${SKIP_BUILD:-0}" = 1 ] || cargo build --release --quiet -p ggufkit-cli --bin gguf-convert
HF="$W/smollm2-135m-shaped"
[ -f "$HF/model.safetensors" ] || "$PY" conformance/bench/make_small_hf.py "$HF"
TFLAG=()
[ -n "$THREADS" ] && TFLAG=(--threads "$THREADS")
warm() { cat "$HF"/* > /dev/null; }

run() { # TAG → prints "wall cpu" seconds (cpu: user + sys); output in $W/TAG.gguf
  local tag=$1 out="$W/$1.gguf"
  rm -f "$out"
  warm
  sync
  local cmd
  case "$tag" in
    ours) cmd=("$T/gguf-convert" "$HF" --outtype f16 --outfile "$out" --no-sync --quiet "${TFLAG[@]}") ;;
    ours-durable) cmd=("$T/gguf-convert" "$HF" --outtype f16 --outfile "$out" --quiet "${TFLAG[@]}") ;;
    ref) cmd=(env PYTHONPATH="$L/gguf-py" NO_LOCAL_GGUF=1 "$PY" "$L/convert_hf_to_gguf.py" "$HF" --outtype f16 --outfile "$out") ;;
  esac
  /usr/bin/time -f "%e %U %S" -o "$W/.time" "${cmd[@]}" > "$W/$tag.log" 2>&1
  tail -n1 "$W/.time" | awk '{printf "%s/%.2f", $1, $2 + $3}'
}

median() { sort -n | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
# The median of the wall (FIELD 1) or CPU (FIELD 2) seconds of TAG's runs.
stat() { tr ' ' '\n' <<< "${TIMES[$1]}" | grep . | cut -d/ -f"$2" | median; }

declare -A TIMES
for r in $(seq "$ROUNDS"); do
  for tag in ref ours ours-durable; do
    TIMES[$tag]+="$(run "$tag") "
  done
done
cmp "$W/ours.gguf" "$W/ref.gguf" || { echo "gguf-convert and the reference differ" >&2; exit 1; }
cmp "$W/ours-durable.gguf" "$W/ref.gguf"

REF=$(stat ref 1)
REF_CPU=$(stat ref 2)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", a/b}'; }
echo "| run | median wall s ($ROUNDS rounds) | ratio | median CPU s | ratio |"
echo "|---|---|---|---|---|"
echo "| convert_hf_to_gguf.py --outtype f16 | $REF | 1 | $REF_CPU | 1 |"
for tag in ours ours-durable; do
  M=$(stat "$tag" 1)
  C=$(stat "$tag" 2)
  echo "| gguf-convert ($tag) | $M | $(ratio "$M" "$REF") | $C | $(ratio "$C" "$REF_CPU") |"
done
echo
echo "gguf-convert --verbose (one more run, --no-sync):"
rm -f "$W/ours.gguf"
warm
"$T/gguf-convert" "$HF" --outtype f16 --outfile "$W/ours.gguf" --no-sync --verbose "${TFLAG[@]}" 2>&1 | sed -n '/phase timings/,$p'
