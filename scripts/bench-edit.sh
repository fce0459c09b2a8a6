#!/usr/bin/env bash
# Bench of gguf-edit on a large file: an in-place header rewrite (should take milliseconds
# whatever the size) against a streamed edit (a copy through a temporary file, which should
# run at copy speed: compared with cp).
#
#   scripts/bench-edit.sh [SIZE_GB] [DIR]     (default 2.5 GB in $TMPDIR; needs 3x SIZE free)
#
# The file is a GGUF with a few metadata keys and 64 F32 tensors of pseudo-random bytes
# (written for real, not sparse, so that the copies read and write every byte). Times are
# wall-clock, warm page cache (the file was just written); the streamed edit syncs the output
# before renaming it (gguf-edit's default), so it is compared with `cp` + `sync` as well as
# with plain `cp` and `gguf-edit --no-sync`.
set -euo pipefail

SIZE_GB=${1:-2.5}
DIR=${2:-${TMPDIR:-/tmp}/ggufkit-bench-edit}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${GGUF_EDIT:-$ROOT/target/release/gguf-edit}
[ -x "$BIN" ] || { echo "build it first: cargo build --release -p ggufkit-cli --bin gguf-edit" >&2; exit 2; }
mkdir -p "$DIR"
BIG=$DIR/big.gguf
trap 'rm -f "$DIR"/*.gguf "$DIR"/*.gguf-edit-journal' EXIT

python3 - "$BIG" "$SIZE_GB" <<'EOF'
import os, struct, sys
path, size_gb = sys.argv[1], float(sys.argv[2])
n_tensors = 64
elems = int(size_gb * 1e9 / 4 / n_tensors) // 256 * 256
def s(b): return struct.pack("<Q", len(b)) + b
kv = [(b"general.architecture", 8, s(b"llama")),
      (b"general.name", 8, s(b"Bench A")),
      (b"llama.context_length", 4, struct.pack("<I", 4096)),
      (b"tokenizer.chat_template", 8, s(b"{% for m in messages %}{{ m.content }}{% endfor %}"))]
h = b"GGUF" + struct.pack("<IQQ", 3, n_tensors, len(kv))
for k, t, v in kv:
    h += s(k) + struct.pack("<I", t) + v
off = 0
for i in range(n_tensors):
    h += s(b"blk.%d.ffn_up.weight" % i) + struct.pack("<I", 1) + struct.pack("<Q", elems)
    h += struct.pack("<IQ", 0, off)
    off += elems * 4            # a multiple of 32: no padding
h += b"\0" * (-len(h) % 32)
block = os.urandom(16 << 20)
with open(path, "wb") as f:
    f.write(h)
    left = off
    while left:
        n = min(left, len(block))
        f.write(block[:n])
        left -= n
EOF
sync "$BIG"      # the new file's pages on disk: the first fsync below must not pay for them
SIZE=$(stat -c %s "$BIG")
echo "file: $BIG, $SIZE bytes ($(awk "BEGIN{printf \"%.2f\", $SIZE/1e9}") GB)"

ms() { local t0 t1; t0=$(date +%s%N); "$@" >/dev/null; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
rate() { awk "BEGIN{printf \"%.0f MB/s\", $SIZE/1e6/($1/1000)}"; }

# In place: the same-size name, back and forth.
for name in "Bench B" "Bench C" "Bench A"; do
    t=$(ms "$BIN" --in-place "$BIG" --general-name "$name" -q)
    echo "in-place edit (general.name -> $name): $t ms"
done
t=$(ms "$BIN" --in-place "$BIG" --general-name "Bench D" -q --no-sync)
echo "in-place edit, --no-sync: $t ms"
t=$(ms "$BIN" set "$BIG" llama.context_length 8192 -q)
echo "gguf-edit set llama.context_length 8192: $t ms"

# Streamed: a description that makes the header grow, into a new file.
DESC="a description long enough to make the header grow past its padding, $(printf 'x%.0s' {1..64})"
cp "$BIG" "$DIR/warm.gguf"; rm -f "$DIR/warm.gguf"       # warm the page cache
t=$(ms cp "$BIG" "$DIR/cp.gguf"); echo "cp:                           $t ms ($(rate "$t"))"
rm -f "$DIR/cp.gguf"
t=$(ms sh -c "cat '$BIG' > '$DIR/cp.gguf'"); echo "cat (read + write):           $t ms ($(rate "$t"))"
rm -f "$DIR/cp.gguf"
t=$(ms sh -c "cp '$BIG' '$DIR/cp.gguf' && sync '$DIR/cp.gguf'"); echo "cp + sync:                    $t ms ($(rate "$t"))"
rm -f "$DIR/cp.gguf"
t=$(ms "$BIN" "$BIG" "$DIR/out.gguf" --general-description "$DESC" -q --no-sync)
echo "streamed edit, --no-sync:     $t ms ($(rate "$t"))"
rm -f "$DIR/out.gguf"
t=$(ms "$BIN" "$BIG" "$DIR/out.gguf" --general-description "$DESC" -q)
echo "streamed edit (synced):       $t ms ($(rate "$t"))"
rm -f "$DIR/out.gguf"
t=$(ms "$BIN" --in-place "$BIG" --general-description "$DESC" -q)
echo "--in-place, header grows:     $t ms ($(rate "$t")) (a synced copy renamed over the file)"
