#!/usr/bin/env python3
"""Golden data for added tokens written with an id past the vocabulary: what the
reference converter does with them.

Each case is the llama-bpe fixture (GPT-2 BPE path, smollm tokenizer) with one added token
`<extra>` written with an id past the 49,152 ids of the BPE vocabulary, config.json's
`vocab_size` set, and the token embedding padded with zero rows to `embedding_rows`. The
tokenizers library renumbers such a token to the next free id (49,152). The reference:

- accepts it when `vocab_size` leaves room (the token at 49,152, CONTROL, the rest `[PAD<i>]`);
- stops (`assert max(tokenizer.vocab.values()) < vocab_size`) when it does not.

Writes `testdata/golden/added-tokens/cases.json`: per case the mutation, and either the size
and sha256 of the `--outtype f32` file the reference wrote, or `"refused"` with the last line
of its error. converters/tests/suite/security/hardening_hf.rs rebuilds every case the same way and checks it.

    python3 conformance/make_added_token_golden.py --llama-cpp <llama.cpp source>

Needs Python with torch, transformers, sentencepiece, safetensors and numpy.
"""

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from fixture_io import materialize, sha256

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
OUT = TESTDATA / "golden" / "added-tokens" / "cases.json"
FIXTURE = "llama-bpe"

TOKEN = {"content": "<extra>", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True}

CASES = {
    # Room for the renumbered token: accepted.
    "added-past-vocab": {"vocab_size": 49160, "embedding_rows": 49160, "id": 49155},
    # No room: the reference's assertion stops it.
    "added-past-vocab-full": {"vocab_size": 49152, "embedding_rows": 49152, "id": 49155},
}


def pad_embedding(path: Path, rows: int) -> None:
    """Zero rows appended to model.embed_tokens.weight (and lm_head.weight if present)."""
    b = path.read_bytes()
    n = struct.unpack("<Q", b[:8])[0]
    header = json.loads(b[8:8 + n])
    data = b[8 + n:]
    meta = header.pop("__metadata__", None)
    out, blobs, off = {}, [], 0
    for k, v in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"][0]):
        s, e = v["data_offsets"]
        t = data[s:e]
        if k in ("model.embed_tokens.weight", "lm_head.weight"):
            r, c = v["shape"]
            t = t + b"\0" * (len(t) // (r * c) * c * (rows - r))
            v["shape"] = [rows, c]
        v["data_offsets"] = [off, off + len(t)]
        off += len(t)
        blobs.append(t)
        out[k] = v
    if meta:
        out["__metadata__"] = meta
    hb = json.dumps(out).encode()
    hb += b" " * ((8 - len(hb) % 8) % 8)
    path.write_bytes(struct.pack("<Q", len(hb)) + hb + b"".join(blobs))


def mutate(d: Path, case: dict) -> None:
    tj = json.loads((d / "tokenizer.json").read_text())
    tj["added_tokens"].append(dict(id=case["id"], **TOKEN))
    (d / "tokenizer.json").write_text(json.dumps(tj, ensure_ascii=False))
    tc = json.loads((d / "tokenizer_config.json").read_text())
    tc["added_tokens_decoder"][str(case["id"])] = TOKEN
    (d / "tokenizer_config.json").write_text(json.dumps(tc, indent=2))
    cfg = json.loads((d / "config.json").read_text())
    cfg["vocab_size"] = case["vocab_size"]
    (d / "config.json").write_text(json.dumps(cfg, indent=2))
    pad_embedding(d / "model.safetensors", case["embedding_rows"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-cpp", required=True, type=Path)
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(a.llama_cpp / "gguf-py"), NO_LOCAL_GGUF="1")
    cases = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, case in CASES.items():
            d = materialize(TESTDATA / "hf" / FIXTURE, Path(tmp) / name)
            mutate(d, case)
            out = Path(tmp) / f"{name}.gguf"
            r = subprocess.run(
                [sys.executable, str(a.llama_cpp / "convert_hf_to_gguf.py"), str(d),
                 "--outtype", "f32", "--outfile", str(out)],
                env=env, capture_output=True, text=True)
            entry = dict(fixture=FIXTURE, token=TOKEN["content"], **case)
            if r.returncode == 0:
                entry.update(size=out.stat().st_size, sha256=sha256(out))
            else:
                lines = [x for x in r.stderr.splitlines() if x.strip()]
                entry.update(refused=lines[-1] if lines else f"exit {r.returncode}")
            cases[name] = entry
            print(name, entry.get("sha256", entry.get("refused")))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(cases, indent=2) + "\n")


if __name__ == "__main__":
    main()
