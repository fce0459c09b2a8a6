#!/usr/bin/env bash
# Budgeted per-tensor types against llama-quantize's mixes at the same file size.
#
#   scripts/bench-budget.sh [WORKDIR]
#
# For every model and every mix (Q3_K_M, Q4_K_M, Q5_K_M): llama-quantize's file (the pinned
# reference binary when it exists, else ours, which is byte-identical), then
# `gguf-quantize --target-size <that file's size> ... <the mix>` (the mix as TYPE: its own mix is
# the reference the total error is capped at), then `gguf-inspect compare` of both
# against the F32 source: the total error (imatrix-weighted where the model has an imatrix,
# plain squared error otherwise) and the ratio ours / llama-quantize's (< 1: ours is better).
#
# Models: the llama-spm fixture (random N(0, 0.02) weights, with its imatrix from
# testdata/golden), a structured copy of it (cli/examples/gen_structured.rs: per-matrix and
# per-column log-normal scales, outlier columns; its own imatrix from llama-imatrix on the
# calibration text when the reference tools exist), both also without imatrix (`-plain`:
# plain squared error), and the qwen3moe fixture (MoE, no imatrix). MODELS="name=path[:imatrix] ..." replaces these
# (MODELS="" keeps only the trained model below).
#
# A trained model: with TRAIN=1 (default when /work/ref/torchvenv or $TORCH_PY has torch),
# conformance/train_tiny_llama.py trains the llama-spm shapes on the Python standard library's
# docstrings and the licence texts (a few CPU-minutes, `nice`), the model is converted to F32,
# llama-imatrix makes its imatrix on the training text, and `tiny-llama` (with that imatrix)
# and `tiny-llama-plain` join the models; their KL divergence and perplexity are measured on
# the held-out text (never trained on), REAL_CHUNKS (200) chunks of 128 tokens.
# TINY_LLAMA=DIR uses a model already trained there (default WORKDIR/tiny-llama; it is trained
# unless DIR/train-log.txt has a "saved" line). TRAINED="name=DIR[:ARGS] ..." replaces it with
# several (ARGS: train_tiny_llama.py's options, comma-separated, e.g.
# tl4=/tmp/tl4:--layers,4,--seed,7); each adds NAME and NAME-plain.
#
# Sizes: llama-quantize's file size plus the bytes our ggufkit.quantize.* keys add to the
# header (EQUAL_DATA=1, default; 0: llama-quantize's size exactly), so both files hold the same
# tensor data (the size column shows the difference, a few hundred bytes).
#
# With PERPLEXITY=1 and llama-perplexity available, also the mean KL divergence of each file's
# next-token distributions from the F32 model's (llama-perplexity, KLD_CHUNKS (60) chunks of 128
# tokens) and the perplexity of the text, for the models in KLD_MODELS (default: llama-spm
# llama-spm-structured tiny-llama tiny-llama-plain). METRICS="relative absolute" adds a row per
# metric: ours with that --budget-metric (its error ratio, and its KLD and perplexity where
# measured); ABSOLUTE=1 is METRICS=absolute. METRIC=NAME makes the main "ours" file with
# --budget-metric NAME (default: gguf-quantize's default).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
W=${1:-/tmp/bench-budget}
REF_BIN=${REF_BIN:-/work/ref/build/bin}
mkdir -p "$W"
export CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-2}
[[ ${SKIP_BUILD:-0} == 1 ]] || (cd "$ROOT" && cargo build -q --release -p ggufkit-cli && cargo build -q --release -p ggufkit-cli --example gen_structured)
T=${CARGO_TARGET_DIR:-$ROOT/target}/release
Q=$T/gguf-quantize
I=$T/gguf-inspect
if [[ -x $REF_BIN/llama-quantize ]]; then
  REF=$REF_BIN/llama-quantize
  REF_NAME=llama-quantize
else
  REF=$Q
  REF_NAME="gguf-quantize (byte-identical to llama-quantize)"
fi
IM=$ROOT/testdata/golden/llama-spm/files/imatrix.gguf
TEXT=$ROOT/testdata/golden/llama-spm/files/calibration.txt
# KL divergence text: two licence texts when the system has them (the fixtures' SentencePiece
# model was trained on /usr/share/common-licenses), else the calibration text.
KTEXT=$W/kld.txt
KCHUNKS=${KLD_CHUNKS:-60}
if [[ -f /usr/share/common-licenses/GPL-3 && -f /usr/share/common-licenses/Apache-2.0 ]]; then
  cat /usr/share/common-licenses/GPL-3 /usr/share/common-licenses/Apache-2.0 >"$KTEXT"
else
  cp "$TEXT" "$KTEXT"
fi

spm=$W/llama-spm-f32.gguf
[[ -f $spm ]] || "$T/gguf-convert" -q "$ROOT/testdata/hf/llama-spm" --outtype f32 --outfile "$spm"
# qwen3moe's tokenizer is shared in testdata (shared-files.txt): convert the full fixture.
moe=$W/qwen3moe-f32.gguf
for d in "${HF_FIXTURES:-/work/shared/fixtures/hf}/qwen3moe" "$ROOT/testdata/hf/qwen3moe"; do
  [[ -f $moe ]] || "$T/gguf-convert" -q "$d" --outtype f32 --outfile "$moe" 2>/dev/null || true
done
structured=$W/llama-spm-structured-f32.gguf
[[ -f $structured ]] || "$T/examples/gen_structured" "$spm" "$structured" 1 2>/dev/null

# The structured model's own imatrix, when llama-imatrix is there (else llama-spm's).
SIM=$IM
if [[ -x $REF_BIN/llama-imatrix ]]; then
  SIM=$W/llama-spm-structured-imatrix.gguf
  [[ -f $SIM ]] || "$REF_BIN/llama-imatrix" -m "$structured" -f "$TEXT" -o "$SIM" -c 128 -t 2 \
    >/dev/null 2>&1 || SIM=$IM
fi
MODELS=${MODELS-"llama-spm=$spm:$IM llama-spm-structured=$structured:$SIM llama-spm-plain=$spm llama-spm-structured-plain=$structured$([[ -f $moe ]] && echo " qwen3moe=$moe")"}

# The trained model (see the top).
TORCH_PY=${TORCH_PY:-/work/ref/torchvenv/bin/python}
declare -A KTEXT_OF=() KCHUNKS_OF=()
KLD_DEFAULT="llama-spm llama-spm-structured"
if [[ ${TRAIN:-$([[ -x $TORCH_PY ]] && "$TORCH_PY" -c "import torch" 2>/dev/null && echo 1 || echo 0)} == 1 ]]; then
  for entry in ${TRAINED:-tiny-llama=${TINY_LLAMA:-$W/tiny-llama}}; do
    tname=${entry%%=*}
    TL=${entry#*=}
    targs=""
    [[ $TL == *:* ]] && targs=${TL#*:} && TL=${TL%%:*}
    grep -qs "^saved" "$TL/train-log.txt" ||
      nice -n 10 "$TORCH_PY" "$ROOT/conformance/train_tiny_llama.py" "$TL" ${targs//,/ } >"$W/train-$tname.log" 2>&1
    grep -h "perplexity" "$TL/train-log.txt" | sed "s/^/trained model $tname (torch): /"
    tl=$W/$tname-f32.gguf
    [[ -f $tl ]] || "$T/gguf-convert" -q "$TL" --outtype f32 --outfile "$tl"
    TIM=""
    if [[ -x $REF_BIN/llama-imatrix ]]; then
      TIM=$W/$tname-imatrix.gguf
      [[ -f $TIM ]] || "$REF_BIN/llama-imatrix" -m "$tl" -f "$TL/train.txt" -o "$TIM" -c 128 \
        --chunks "${IMATRIX_CHUNKS:-400}" -t 2 >/dev/null 2>&1 || TIM=""
    fi
    MODELS="$MODELS $tname=$tl${TIM:+:$TIM} $tname-plain=$tl"
    KLD_DEFAULT="$KLD_DEFAULT $tname $tname-plain"
    for n in $tname $tname-plain; do
      KTEXT_OF[$n]=$TL/heldout.txt
      KCHUNKS_OF[$n]=${REAL_CHUNKS:-200}
    done
  done
fi

total() { # FILE SOURCE [IMATRIX] -> the total error compare reports
  local j
  if [[ -n ${3:-} ]]; then
    j=$("$I" compare "$1" "$2" --imatrix "$3" --json)
    jq -r '"\(.total.weighted_error) \(.total.weighted_relative_error)"' <<<"$j"
  else
    j=$("$I" compare "$1" "$2" --json)
    jq -r '"\(.total.squared_error) \(.total.relative_error)"' <<<"$j"
  fi
}

kld() { # FILE -> "KLD|PPL|PPL of the base": mean KLD against the f32 logits in $base, perplexities
  # The summary ("Mean    KLD:") is sometimes lost (llama.cpp's log thread is not always
  # flushed at exit): up to 3 runs, then the running means of the last chunk line are used.
  local out try
  for try in 1 2 3; do
    # (to a file: through a pipe the summary is lost more often)
    "$REF_BIN/llama-perplexity" -m "$1" -f "$ktext" --kl-divergence-base "$base" --kl-divergence \
      -c 128 -b 128 --chunks "$kchunks" -t 2 >"$W/perplexity.log" 2>&1 || true
    out=$(cat "$W/perplexity.log")
    grep -q "^Mean    KLD:" <<<"$out" && break
  done
  awk '
      /^Mean    KLD:/ { mean = $3 }
      /^Mean PPL\(Q\) / && $3 == ":" { ppl = $4 }
      /^Mean PPL\(base\) / && $3 == ":" { bppl = $4 }
      $1 ~ /^[0-9]+$/ && $3 == "±" && NF >= 10 { last = $8; lppl = $2; chunks = $1 }
      END {
        if (mean != "") printf "%s", mean; else if (last != "") printf "%s (%s chunks)", last, chunks
        printf "|"
        if (ppl != "") printf "%s", ppl; else if (lppl != "") printf "%s (%s chunks)", lppl, chunks
        print "|" bppl
      }' <<<"$out"
}

echo "reference: $REF_NAME"
echo
echo "| model | mix | error metric | llama-quantize size | ours size | size diff | llama-quantize error | ours error | ratio | relative error ratio |"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
for m in $MODELS; do
  name=${m%%=*}
  rest=${m#*=}
  src=${rest%%:*}
  im=""
  [[ $rest == *:* ]] && im=${rest#*:}
  imargs=()
  [[ -n $im ]] && imargs=(--imatrix "$im")
  metric=$([[ -n $im ]] && echo "imatrix-weighted" || echo "squared")
  kld_on=0
  [[ ${PERPLEXITY:-0} == 1 && -x $REF_BIN/llama-perplexity && " ${KLD_MODELS:-$KLD_DEFAULT} " == *" $name "* ]] && kld_on=1
  ktext=${KTEXT_OF[$name]:-$KTEXT}
  kchunks=${KCHUNKS_OF[$name]:-$KCHUNKS}
  if [[ $kld_on == 1 ]]; then
    base=$W/$name.kld-base
    "$REF_BIN/llama-perplexity" -m "$src" -f "$ktext" --kl-divergence-base "$base" -c 128 -b 128 \
      --chunks "$kchunks" -t 2 >/dev/null 2>&1 || true
  fi
  for mix in Q3_K_M Q4_K_M Q5_K_M; do
    ref=$W/$name-$mix-ref.gguf
    ours=$W/$name-$mix-budget.gguf
    "$REF" "${imargs[@]}" "$src" "$ref" "$mix" >/dev/null 2>&1
    size=$(stat -c %s "$ref")
    "$Q" -q "${imargs[@]}" ${METRIC:+--budget-metric "$METRIC"} --target-size "$size" "$src" "$ours" "$mix"
    # Equal tensor data: our file's header holds the ggufkit.quantize.* keys llama-quantize's
    # has not; with EQUAL_DATA=1 (default) the budget is the reference's size plus them.
    extra=0
    if [[ ${EQUAL_DATA:-1} == 1 ]]; then
      extra=$(($("$I" dump "$ours" | awk '/data at/ { print $NF }') - $("$I" dump "$ref" | awk '/data at/ { print $NF }')))
      ((extra > 0)) && "$Q" -q "${imargs[@]}" ${METRIC:+--budget-metric "$METRIC"} --target-size "$((size + extra))" "$src" "$ours" "$mix"
    fi
    osize=$(stat -c %s "$ours")
    read -r e_ref r_ref < <(total "$ref" "$src" "$im")
    read -r e_ours r_ours < <(total "$ours" "$src" "$im")
    ratio=$(awk -v a="$e_ours" -v b="$e_ref" 'BEGIN { printf "%.3f", a / b }')
    rratio=$(awk -v a="$r_ours" -v b="$r_ref" 'BEGIN { printf "%.3f", a / b }')
    e_ref=$(printf "%.4g" "$e_ref")
    e_ours=$(printf "%.4g" "$e_ours")
    diff=$(awk -v a="$osize" -v b="$size" 'BEGIN { printf "%+.2f%%", 100 * (a - b) / b }')
    echo "| $name | $mix | $metric | $size | $osize | $diff | $e_ref | $e_ours | $ratio | $rratio |"
    if [[ $kld_on == 1 && -f $base ]]; then
      IFS='|' read -r k_ref p_ref p_base < <(kld "$ref")
      [[ $mix == Q3_K_M ]] &&
        echo "| $name | F32 | perplexity ($(basename "$ktext"), $kchunks x 128 tokens) | | | | $p_base | | | |"
      IFS='|' read -r k_ours p_ours _ < <(kld "$ours")
      echo "| $name | $mix | mean KLD vs f32 | | | | $k_ref | $k_ours | $(awk -v a="${k_ours%% *}" -v b="${k_ref%% *}" 'BEGIN { if (b > 0) printf "%.3f", a / b }') | |"
      echo "| $name | $mix | perplexity | | | | $p_ref | $p_ours | | |"
    fi
    for metric_name in ${METRICS:-$([[ ${ABSOLUTE:-0} == 1 ]] && echo absolute)}; do
      # Another metric: ours with --budget-metric $metric_name.
      alt=$W/$name-$mix-budget-$metric_name.gguf
      "$Q" -q "${imargs[@]}" --budget-metric "$metric_name" --target-size "$((size + extra))" "$src" "$alt" "$mix"
      read -r e_alt _ < <(total "$alt" "$src" "$im")
      quality=""
      if [[ $kld_on == 1 && -f $base ]]; then
        IFS='|' read -r k_alt p_alt _ < <(kld "$alt")
        quality="KLD $k_alt ($(awk -v a="${k_alt%% *}" -v b="${k_ref%% *}" 'BEGIN { if (b > 0) printf "%.3f", a / b }')x), PPL $p_alt"
      fi
      echo "| $name | $mix | ours --budget-metric $metric_name: $metric${quality:+, KLD, perplexity} | | $(stat -c %s "$alt") | | | $(printf "%.4g" "$e_alt") | $(awk -v a="$e_alt" -v b="$e_ref" 'BEGIN { printf "%.3f", a / b }') | $quality |"
    done
  done
done
