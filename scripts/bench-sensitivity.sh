#!/usr/bin/env bash
# What each tensor's quantization error costs in KL divergence (the calibration of budget mode's metric).
#
#   scripts/bench-sensitivity.sh NAME HF_DIR [WORKDIR]
#
# HF_DIR: a trained model with train.txt and heldout.txt (conformance/train_tiny_llama.py makes
# them). Converts it to F32, makes its imatrix (llama-imatrix, 100 chunks of train.txt) and the
# F32 logits of heldout.txt (llama-perplexity --kl-divergence-base), then for every quantizable
# tensor and every type of TYPES quantizes that tensor alone (all others F32, with the imatrix
# unless PLAIN=1) and measures the mean KL divergence from the F32 model and the tensor's
# errors as `gguf-inspect compare` reports them. One line per (tensor, type) in
# WORKDIR/sens-NAME-{1,0}.tsv: name, type, KLD, then compare's type, squared error, relative
# error, weighted error, weighted relative error, elements. scripts/sensitivity.py reads it.
#
# The single-tensor KL divergences add up: the sum over a mix's tensors is within 1-6 % of the
# mix's measured KL divergence (llama-quantize's Q3_K_M/Q4_K_M/Q5_K_M of the trained models).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
N=$1
D=$2
W=${3:-/tmp/bench-sensitivity}
REF_BIN=${REF_BIN:-/work/ref/build/bin}
TYPES=${TYPES:-q2_k q3_k q4_k iq4_xs q5_k q6_k q8_0}
IM=$([[ ${PLAIN:-0} == 1 ]] && echo 0 || echo 1)
mkdir -p "$W"
[[ ${SKIP_BUILD:-0} == 1 ]] || (cd "$ROOT" && cargo build -q --release -p ggufkit-cli)
T=${CARGO_TARGET_DIR:-$ROOT/target}/release
cd "$W"
[[ -f $N-f32.gguf ]] || "$T/gguf-convert" -q "$D" --outtype f32 --outfile "$N-f32.gguf"
[[ -f $N-imatrix.gguf ]] || "$REF_BIN/llama-imatrix" -m "$N-f32.gguf" -f "$D/train.txt" \
  -o "$N-imatrix.gguf" -c 128 --chunks 100 -t 2 >/dev/null 2>&1
[[ -f $N.kld-base ]] || "$REF_BIN/llama-perplexity" -m "$N-f32.gguf" -f "$D/heldout.txt" \
  --kl-divergence-base "$N.kld-base" -c 128 -b 128 --chunks 100 -t 2 >/dev/null 2>&1

kld() { # FILE -> mean KLD (the running mean of the last chunk when the summary is lost)
  "$REF_BIN/llama-perplexity" -m "$1" -f "$D/heldout.txt" --kl-divergence-base "$N.kld-base" \
    --kl-divergence -c 128 -b 128 -t 2 2>&1 |
    awk '/^Mean    KLD:/ { mean = $3 } $1 ~ /^[0-9]+$/ && $3 == "±" && NF >= 10 { last = $8 }
         END { print (mean != "" ? mean : last) }'
}

imargs=()
[[ $IM == 1 ]] && imargs=(--imatrix "$N-imatrix.gguf")
out=sens-$N-$IM.tsv
touch "$out"
names=$("$T/gguf-inspect" dump "$N-f32.gguf" |
  awk '$1 ~ /^[0-9]+$/ && $2 ~ /weight/ && $2 !~ /norm/ { print $2 }')
for n in $names; do
  for t in $TYPES; do
    grep -q "^$n	$t	" "$out" && continue
    f=one-$N-$IM.gguf
    # First match wins: this tensor at t, every other one F32 (the base type only enables
    # the overrides).
    "$T/gguf-quantize" -q "${imargs[@]}" --tensor-type "${n//./\\.}=$t" --tensor-type '.*=f32' \
      "$N-f32.gguf" "$f" Q8_0
    k=$(kld "$f")
    e=$("$T/gguf-inspect" compare "$f" "$N-f32.gguf" "${imargs[@]}" --json |
      jq -r --arg n "$n" '.tensors[] | select(.name == $n) |
        "\(.type) \(.squared_error) \(.relative_error) \(.weighted_error) \(.weighted_relative_error) \(.elements)"')
    printf '%s\t%s\t%s\t%s\n' "$n" "$t" "$k" "$e" >>"$out"
  done
done
echo "$W/$out"
