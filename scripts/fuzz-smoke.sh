#!/usr/bin/env bash
# Runs every fuzz target for a short, bounded time (default 30 s each), seeded with the
# repository's fixtures, hostile corpora and past crashes. Exits non-zero on the first crash,
# leak, out-of-memory or timeout; the crashing input is left in fuzz/artifacts/<target>/ (add
# it to testdata/fuzz-regressions/<target>/ with a test). See fuzz/README.md.
#
#   scripts/fuzz-smoke.sh [SECONDS]
# Needs cargo-fuzz (`cargo install cargo-fuzz --version 0.13.2 --locked`); nightly features
# are enabled through RUSTC_BOOTSTRAP=1.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-30}
export RUSTC_BOOTSTRAP=1
TD=testdata
TARGETS="gguf_parse imatrix dequantize safetensors config_json legacy tokenizer_model tokenizer_json safetensors_index tokenizer_normalizers config_merge torch_checkpoint"
seeds() { # target -> seed files (missing ones are skipped)
  case "$1" in
    # golden-cache: the golden GGUF files the tests made (scripts/test runs first in CI).
    gguf_parse) ls ${CARGO_TARGET_DIR:-target}/release/golden-cache/*/*.gguf $TD/golden/*/files/*.gguf \
      $TD/hostile/*.gguf; find $TD/hostile-split -name '*.gguf' ;;
    imatrix) ls $TD/golden/*/files/imatrix.* $TD/hostile-imatrix/* ;;
    dequantize) ls $TD/quant-vectors/quant/*/normal.bin | head -40 ;;
    safetensors) find $TD/hf $TD/hostile-hf -name '*.safetensors' ;;
    config_json) find $TD/hf $TD/hostile-hf -name 'config.json' ;;
    legacy) ls $TD/legacy/*.bin $TD/legacy/hostile/* | head -80 ;;
    tokenizer_model) find $TD/hf $TD/hostile-hf $TD/tokenizers \( -name 'tokenizer.model' -o -name 'sentencepiece.bpe.model' \) ;;
    tokenizer_json) find $TD/hf $TD/hostile-hf -name 'tokenizer.json' ;;
    safetensors_index) find $TD/hf $TD/hostile-hf -name 'model.safetensors.index.json' ;;
    # Structure-aware: the input's bytes choose components and parameters; any bytes seed.
    tokenizer_normalizers) find $TD/hostile-hf -name 'tokenizer.json' | head -20 ;;
    config_merge) find $TD/hf $TD/hostile-hf -name 'config.json' | head -20 ;;
    torch_checkpoint) ls $TD/hostile-torch/*.bin; find $TD/hf -name 'pytorch_model*.bin' ;;
  esac 2>/dev/null
  ls $TD/fuzz-regressions/"$1"/* 2>/dev/null
  true
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The sanitizer builds link twelve large binaries; a failed build says why (the lines around
# each error, free disk and memory) and is tried once more one job at a time, which halves
# the linker's peak memory.
build() { (cd fuzz && cargo fuzz build -O) > "$work/build.log" 2>&1; }
if ! build; then
  echo "fuzz build failed; its errors:" >&2
  grep -n -B3 -A25 -E "^error|fatal|No space|Killed|signal [0-9]" "$work/build.log" | head -n 150 >&2 || true
  df -h . >&2; free -m >&2 || true
  echo "fuzz build: trying again with one job" >&2
  if ! CARGO_BUILD_JOBS=1 build; then
    tail -n 80 "$work/build.log" >&2
    echo "fuzz build: FAILED twice" >&2
    exit 1
  fi
fi
for t in $TARGETS; do
  corpus=$work/$t
  mkdir -p "$corpus" "$work/tmp-$t"
  for f in $(seeds "$t"); do cp "$f" "$corpus/$(echo "$f" | tr / _)"; done
  echo "fuzz $t: $(ls "$corpus" | wc -l) seeds, ${SECS}s"
  # The targets' scratch files go to a directory removed afterwards.
  status=0
  (cd fuzz && TMPDIR="$work/tmp-$t" cargo fuzz run -O "$t" "$corpus" -- \
    -max_total_time="$SECS" -rss_limit_mb=2048 -timeout=60 -max_len=4194304 \
    > "$work/$t.log" 2>&1) || status=$?
  if [ "$status" -ne 0 ]; then
    tail -n 40 "$work/$t.log"
    echo "fuzz $t: FAILED (exit $status); see fuzz/artifacts/$t/" >&2
    exit 1
  fi
  grep -E "^Done" "$work/$t.log" || true
  rm -rf "$corpus" "$work/tmp-$t"
done
echo "fuzz smoke: all targets clean"
