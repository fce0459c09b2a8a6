#!/usr/bin/env bash
# Benchmark (not a test) for `gguf-convert --remote`: a generated Llama checkpoint of SIZE_MB
# of bf16 safetensors served on 127.0.0.1 with the Hub's layout (converters/examples/
# serve_hub.rs), converted to f16 over HTTP and from the local directory.
#
#   scripts/bench-remote.sh [WORKDIR] [SIZE_MB] [CONNECTIONS]   # defaults: /tmp/ggufkit-bench-remote 2100 8
#
# Prints wall seconds, throughput (source bytes / wall), peak RSS of gguf-convert, and the
# local disk each run leaves: for --remote the output plus the HF cache (small files only).
# The server holds the checkpoint in its memory (its RSS is not counted).
set -euo pipefail
cd "$(dirname "$0")/.."
W=${1:-/tmp/ggufkit-bench-remote}
SIZE=${2:-2100}
CONN=${3:-8}
mkdir -p "$W"
cargo build --release --quiet -p ggufkit-cli --bins
cargo build --release --quiet --example gen_hf
cargo build --release --quiet -p ggufkit-converters --example serve_hub
CONVERT=$PWD/target/release/gguf-convert
HF="$W/synthetic-llama"
[ -f "$HF/model.safetensors" ] || target/release/examples/gen_hf "$HF" "$SIZE"
SRC_BYTES=$(stat -c %s "$HF/model.safetensors")

exec 3> >(target/release/examples/serve_hub "$HF" bench/synthetic-llama > "$W/endpoint")
for _ in $(seq 100); do [ -s "$W/endpoint" ] && break; sleep 0.2; done
ENDPOINT=$(cat "$W/endpoint")

measure() { # LABEL DIR CMD...
  local label=$1 dir=$2; shift 2
  rm -rf "$dir"; mkdir -p "$dir"
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$dir" && /usr/bin/time -f "%M" -o "$W/rss" "$@" > /dev/null 2> "$W/err") || { cat "$W/err"; exit 1; }
  t1=$(date +%s.%N)
  local wall rss disk
  wall=$(echo "$t1 - $t0" | bc -l)
  rss=$(( $(cat "$W/rss") / 1024 ))
  disk=$(du -sm --apparent-size "$dir" | cut -f1)
  printf '| %s | %.1f | %.0f | %d | %d |\n' "$label" "$wall" \
    "$(echo "$SRC_BYTES / 1048576 / $wall" | bc -l)" "$rss" "$disk"
}

echo "| run ($((SRC_BYTES / 1048576)) MiB bf16 → f16) | wall s | MiB/s | peak RSS MiB | local disk MiB |"
echo "| --- | --- | --- | --- | --- |"
cat "$HF/model.safetensors" > /dev/null
measure "local directory" "$W/local" "$CONVERT" "$HF" out.gguf --outtype f16 --no-sync
measure "--remote, $CONN connections" "$W/remote" env HF_ENDPOINT="$ENDPOINT" HF_HUB_CACHE=hub \
  "$CONVERT" --remote bench/synthetic-llama out.gguf --outtype f16 --no-sync \
  --remote-connections "$CONN"
# (general.name and general.finetune differ: the remote run names the model by its id and
# snapshot, as the reference does; the tensors are the same bytes, see the remote tests)
du -sm --apparent-size "$W/remote/hub" | awk '{print "HF cache after --remote: " $1 " MiB"}'
exec 3>&-
