#!/usr/bin/env bash
# Generates the llama-quantize golden cases that cli/tests/suite/quantize/quantize_iq_golden.rs checks: every
# IQ1-IQ3 ftype of llama-quantize, with and without an imatrix, plus --prune-layers runs, on
# the llama-spm fixture (its f32 conversion, made by gguf-convert and identical to llama.cpp's,
# and testdata/golden/llama-spm/files/imatrix.gguf).
#
#   scripts/make-iq-golden.sh [LLAMA_QUANTIZE]    # default: /work/ref/build/bin/llama-quantize
#
# LLAMA_QUANTIZE must be built from llama.cpp 0c1e570 (the vendor/llama.cpp of the
# llama-cpp-python 0.3.36 sdist; see conformance/README.md). Each case runs in a scratch directory
# holding llama-spm-f32.gguf and imatrix.gguf under those relative names: llama-quantize
# stores the --imatrix path as given in `quantize.imatrix.file`, so the golden files were made
# that way (../shared/golden/README.md). Output: testdata/quantize/iq/cases.json (per case:
# arguments, success, the error line on failure, and the manifest file) and one manifest per
# successful case, written with our `gguf-inspect manifest` (the GGUF files are not kept).
# Re-running overwrites them; the outputs do not depend on the thread count.
set -euo pipefail
cd "$(dirname "$0")/.."
REF=${1:-/work/ref/build/bin/llama-quantize}
[ -x "$REF" ] || { echo "no llama-quantize at $REF" >&2; exit 1; }
OUT=testdata/quantize/iq
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$OUT"
cargo build --release --quiet --bin gguf-inspect --bin gguf-convert
INSPECT=$PWD/target/release/gguf-inspect
target/release/gguf-convert testdata/hf/llama-spm "$W/llama-spm-f32.gguf" --outtype f32 -q
cp testdata/golden/llama-spm/files/imatrix.gguf "$W/imatrix.gguf"

# variant name, then llama-quantize's arguments before INPUT OUTPUT, then the type.
CASES=()
for t in IQ1_S IQ1_M IQ2_XXS IQ2_XS IQ2_S IQ2_M IQ3_XXS IQ3_XS IQ3_S IQ3_M; do
  CASES+=("quant-$t|$t")
  CASES+=("quant-imatrix-$t|--imatrix imatrix.gguf $t")
done
CASES+=("quant-prune0-Q4_K_M|--prune-layers 0 Q4_K_M")
CASES+=("quant-prune1-imatrix-IQ3_M|--imatrix imatrix.gguf --prune-layers 1 IQ3_M")
CASES+=("quant-pure-imatrix-IQ2_S|--pure --imatrix imatrix.gguf IQ2_S")

records=()
for c in "${CASES[@]}"; do
  name=${c%%|*}
  read -r -a args <<< "${c#*|}"
  type=${args[-1]}
  unset 'args[-1]'
  rm -f "$W/out.gguf"
  if (cd "$W" && "$REF" "${args[@]}" llama-spm-f32.gguf out.gguf "$type" > log.txt 2>&1); then
    "$INSPECT" manifest "$W/out.gguf" --name "llama-spm-$name.gguf" -o "$OUT/llama-spm-$name.json"
    records+=("$name|1|${args[*]} $type|")
    echo "$name: ok"
  else
    err=$(grep -m1 -iE "error|failed|abort|requires" "$W/log.txt" || tail -n1 "$W/log.txt")
    records+=("$name|0|${args[*]} $type|$err")
    echo "$name: FAILED: $err"
  fi
done

printf '%s\n' "${records[@]}" | python3 -c '
import json, sys
cases = []
for line in sys.stdin.read().splitlines():
    name, ok, args, err = line.split("|", 3)
    c = {"variant": name, "args": args.split(), "ok": ok == "1"}
    if c["ok"]:
        c["manifest"] = f"llama-spm-{name}.json"
    else:
        c["error"] = err.strip()
    cases.append(c)
doc = {
    "description": "llama-quantize (llama.cpp 0c1e570) on the f32 conversion of testdata/hf/llama-spm, "
                   "run as: llama-quantize ARGS llama-spm-f32.gguf out.gguf TYPE, in a directory "
                   "holding imatrix.gguf (testdata/golden/llama-spm/files/imatrix.gguf); made by scripts/make-iq-golden.sh",
    "cases": cases,
}
print(json.dumps(doc, indent=1))
' > "$OUT/cases.json"
echo "wrote $OUT/cases.json"
