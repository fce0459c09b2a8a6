#!/usr/bin/env bash
# Runs every fuzz target for a short, bounded time (default 30 s each), seeded with the
# repository's fixtures and hostile corpora. Fails on the first crash; the crashing input is
# left in fuzz/artifacts/<target>/ (add it to testdata/fuzz-regressions/ with a test).
#
#   scripts/fuzz-smoke.sh [SECONDS]
# Needs cargo-fuzz (`cargo install cargo-fuzz --version 0.13.2 --locked`); nightly features
# are enabled through RUSTC_BOOTSTRAP=1.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-30}
export RUSTC_BOOTSTRAP=1
TD=testdata
seeds() { # target -> seed files
  case "$1" in
    gguf_parse) ls $TD/gguf/*.gguf $TD/hostile/*.gguf $TD/fuzz-regressions/gguf_parse/* ;;
    imatrix) ls $TD/gguf/imatrix.gguf $TD/quantize/imatrix.dat ;;
    dequantize) ls $TD/quant-vectors/quant/*/normal.bin | head -40 ;;
    safetensors) find $TD/hf -name '*.safetensors' ;;
    config_json) find $TD/hf -name 'config.json' ;;
    legacy) ls $TD/legacy/*.bin $TD/legacy/hostile/* 2>/dev/null | head -80 ;;
  esac
}
cd fuzz
cargo fuzz build -O 2>&1 | grep -v "^ *Compiling" | tail -n 20
cd ..
for t in gguf_parse imatrix dequantize safetensors config_json legacy; do
  corpus=$(mktemp -d)
  for f in $(seeds "$t"); do cp "$f" "$corpus/$(echo "$f" | tr / _)" 2>/dev/null || true; done
  echo "fuzz $t: $(ls "$corpus" | wc -l) seeds, ${SECS}s"
  (cd fuzz && cargo fuzz run -O "$t" "$corpus" -- -max_total_time="$SECS" -rss_limit_mb=2048 -max_len=4194304 2>&1 | grep -E "^Done|#[0-9]+ *DONE|ERROR|panicked|SUMMARY" | tail -n 3)
  rm -rf "$corpus"
done
