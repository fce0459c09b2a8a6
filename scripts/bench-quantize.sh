#!/usr/bin/env bash
# Benchmark (not a test): gguf-quantize against llama-quantize, every type, same threads.
#
#   scripts/bench-quantize.sh [WORKDIR] [ROUNDS] [THREADS] [TYPE ...]
#       defaults: /tmp/ggufkit-bench-quantize 3 $(nproc), every type below
#
# The input is the f16 GGUF of a SmolLM2-135M-shaped checkpoint (conformance/bench/
# make_small_hf.py, converted by gguf-convert: byte-identical to the reference's conversion).
# The IQ types and Q2_K_S get an importance matrix made once by
# llama-imatrix on the repository's calibration text; the others run without. Each type
# runs llama-quantize and gguf-quantize alternately, ROUNDS times each, warm page cache;
# the table has the median wall and CPU (user + sys) seconds, their ratios (ours /
# llama-quantize; on a shared machine compare CPU) and whether the two files are identical
# (the script fails if they are not).
#
# Environment: SKIP_BUILD=1 (use the built binaries as they are), LLAMA_BIN (llama.cpp's build/bin with llama-quantize and llama-imatrix),
# PY (a python with torch, safetensors, transformers: make_small_hf.py's requirements).
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/ggufkit-bench-quantize}
ROUNDS=${2:-3}
THREADS=${3:-$(nproc)}
shift $(( $# < 3 ? $# : 3 ))
TYPES=("$@")
[ ${#TYPES[@]} -gt 0 ] || TYPES=(Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q3_K_S Q3_K_M Q3_K_L Q4_K_S
  Q4_K_M Q5_K_S Q5_K_M Q6_K IQ4_NL IQ4_XS TQ1_0 TQ2_0 Q2_K_S IQ1_S IQ1_M IQ2_XXS IQ2_XS IQ2_S
  IQ2_M IQ3_XXS IQ3_XS IQ3_S IQ3_M)
LLAMA_BIN=${LLAMA_BIN:-/work/ref/sdist/llama_cpp_python-0.3.36/vendor/llama.cpp/build/bin}
PY=${PY:-/work/ref/torchvenv/bin/python}
T=${CARGO_TARGET_DIR:-target}/release
mkdir -p "$W"
[ "${SKIP_BUILD:-0}" = 1 ] || cargo build --release --quiet -p ggufkit-cli --bin gguf-convert --bin gguf-quantize

HF="$W/smollm2-135m-shaped"
F16="$W/model-f16.gguf"
IMATRIX="$W/imatrix.gguf"
[ -f "$HF/model.safetensors" ] || "$PY" conformance/bench/make_small_hf.py "$HF"
[ -f "$F16" ] || "$T/gguf-convert" "$HF" --outtype f16 --outfile "$F16" --quiet
if [ ! -f "$IMATRIX" ]; then
  # Relative names, as the golden imatrix runs use them (they are stored in the file).
  cp testdata/golden/llama-spm/files/calibration.txt "$W/calibration.txt" 2> /dev/null \
    || python3 -c "print(open('README.md').read() * 4)" > "$W/calibration.txt"
  (cd "$W" && "$LLAMA_BIN/llama-imatrix" -m model-f16.gguf -f calibration.txt -c 128 \
    --chunks 8 -t "$THREADS" --no-ppl -o imatrix.gguf > imatrix.log 2>&1)
fi

# The IQ types run with the imatrix (required below IQ3_S, and how they are used), Q2_K_S too.
needs_imatrix() { case "$1" in IQ*|Q2_K_S) return 0 ;; *) return 1 ;; esac; }

run() { # TOOL TYPE → "wall/cpu" seconds; output in $W/TOOL-TYPE.gguf
  local tool=$1 type=$2 out="$W/$1-$2.gguf" im=()
  needs_imatrix "$type" && im=(--imatrix "$IMATRIX")
  rm -f "$out"
  cat "$F16" > /dev/null
  case "$tool" in
    ref) cmd=("$LLAMA_BIN/llama-quantize" "${im[@]}" "$F16" "$out" "$type" "$THREADS") ;;
    ours) cmd=("$T/gguf-quantize" --no-sync --quiet "${im[@]}" "$F16" "$out" "$type" "$THREADS") ;;
  esac
  /usr/bin/time -f "%e %U %S" -o "$W/.time" "${cmd[@]}" > "$W/$tool.log" 2>&1 \
    || { cat "$W/$tool.log" >&2; return 1; }
  tail -n1 "$W/.time" | awk '{printf "%s/%.2f", $1, $2 + $3}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", a/b}'; }
median() { sort -n | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "gguf-quantize vs llama-quantize, $THREADS threads, median of $ROUNDS alternating runs"
echo "(input: $(du -m "$F16" | cut -f1) MB f16, SmolLM2-135M shape)"
echo
echo "| type | imatrix | llama-quantize wall s | gguf-quantize wall s | ratio | llama-quantize CPU s | gguf-quantize CPU s | ratio | identical |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---|"
for type in "${TYPES[@]}"; do
  ref=() ours=()
  for _ in $(seq "$ROUNDS"); do
    ref+=("$(run ref "$type")")
    ours+=("$(run ours "$type")")
  done
  R=$(printf '%s\n' "${ref[@]}" | cut -d/ -f1 | median)
  O=$(printf '%s\n' "${ours[@]}" | cut -d/ -f1 | median)
  RC=$(printf '%s\n' "${ref[@]}" | cut -d/ -f2 | median)
  OC=$(printf '%s\n' "${ours[@]}" | cut -d/ -f2 | median)
  same=yes
  cmp -s "$W/ref-$type.gguf" "$W/ours-$type.gguf" || same=NO
  im=no
  needs_imatrix "$type" && im=yes
  echo "| $type | $im | $R | $O | $(ratio "$O" "$R") | $RC | $OC | $(ratio "$OC" "$RC") | $same |"
  rm -f "$W/ref-$type.gguf" "$W/ours-$type.gguf"
  [ "$same" = yes ] || { echo "$type: gguf-quantize and llama-quantize differ" >&2; exit 1; }
done
