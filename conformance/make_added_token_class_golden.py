#!/usr/bin/env python3
"""Golden data for added tokens when tokenizer.json and tokenizer_config.json disagree, per
`tokenizer_class` (issue 22).

transformers 5 builds the tokenizer the reference converter reads (AutoTokenizer) in two ways:
a class without its own pipeline (TokenizersBackend, PreTrainedTokenizerFast, and LlamaTokenizer
over a ByteLevel tokenizer.json) loads tokenizer.json with its `added_tokens`; a class with its
own pipeline (GPT2Tokenizer, Qwen2Tokenizer, ...) keeps only tokenizer.json's vocab and merges
and takes its added tokens from tokenizer_config.json. This script records what the reference
writes for each combination.

Every case starts from the same directory: the llama-bpe fixture's config.json and
tokenizer_config.json with the shared smollm tokenizer.json (testdata/tokenizers/smollm). A
case is a list of edits (below, stored with the results so the test replays them), applied
once per tokenizer_class in CLASSES ("none" removes the key). The reference runs with
`--vocab-only --outtype f32`; per case and class the golden holds the size and sha256 of the
file, or `"refused"` with the last line of its error, and the tokens past id 49,151 with
their types (for reading a failure, not checked).

Edits:
  {"tj_add": {token with id}}           append to tokenizer.json's added_tokens
  {"tj_set": [content, field, value]}   change a field of tokenizer.json's added token
  {"tc_add": [id, {token}]}             set added_tokens_decoder[id] in tokenizer_config.json
  {"tc_set": [id, field, value]}        change a field of added_tokens_decoder[id]
  {"tc": {key: value}}                  set top-level keys of tokenizer_config.json
  {"config": {key: value}}              set top-level keys of config.json

Writes testdata/golden/added-tokens/classes.json; converters/tests/hardening_hf.rs
(`added_tokens_by_tokenizer_class_as_the_reference`) replays it.

    /work/ref/torchvenv/bin/python conformance/make_added_token_class_golden.py \\
        --llama-cpp <llama.cpp source>

Needs the reference's Python (torch, transformers 5.24, sentencepiece, numpy). The reference
runs in this process, one conversion after another.
"""

import argparse
import contextlib
import io
import json
import logging
import shutil
import sys
import tempfile
from pathlib import Path

from fixture_io import sha256

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
OUT = TESTDATA / "golden" / "added-tokens" / "classes.json"
FIXTURE = "llama-bpe"
TOKENIZER = "tokenizers/smollm/tokenizer.json"

CLASSES = [
    "GPT2Tokenizer",
    "GPT2TokenizerFast",
    "LlamaTokenizer",
    "LlamaTokenizerFast",
    "PreTrainedTokenizerFast",
    "TokenizersBackend",
    "Qwen2Tokenizer",
    "none",
]


def tok(content, special=True, normalized=False, id=None):
    t = {"content": content, "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": normalized, "special": special}
    if id is not None:
        t = {"id": id, **t}
    return t


ROOM = {"config": {"vocab_size": 49160}}

# Vocabulary tokens used below (smollm ids): 300 "Ġm", 301 ... filled in from the tokenizer.
EXISTING = [300, 301]


def cases(vocab_text):
    w300, w301 = vocab_text[300], vocab_text[301]
    return {
        "same": [],
        "tj-only-new": [ROOM, {"tj_add": tok("<tj_only>", id=49152)}],
        "tc-only-new": [ROOM, {"tc_add": ["49152", tok("<tc_only>")]}],
        "tc-only-gap": [ROOM, {"tc_add": ["49155", tok("<tc_gap>", special=False)]}],
        "both-new-other-ids": [ROOM, {"tj_add": tok("<both>", id=49152)},
                               {"tc_add": ["49153", tok("<both>")]}],
        "flags-differ": [{"tc_set": ["1", "special", False]},
                         {"tc_set": ["1", "normalized", True]},
                         {"tj_set": ["<|im_end|>", "special", False]}],
        "tj-only-existing": [{"tj_add": tok(w300, id=300)}],
        "tc-only-existing": [{"tc_add": ["301", tok(w301, special=False, normalized=True)]}],
        "tj-only-user": [ROOM, {"tj_add": tok("tj user", special=False, id=49152)}],
        "tc-only-user": [ROOM, {"tc_add": ["49152", tok("tc user", special=False)]}],
        "named-special-new": [ROOM, {"tc": {"bos_token": "<newbos>"}}],
    }


def apply(d: Path, edits, cls: str):
    tjp, tcp, cfp = d / "tokenizer.json", d / "tokenizer_config.json", d / "config.json"
    tj, tc, cf = (json.loads(p.read_text()) for p in (tjp, tcp, cfp))
    if cls == "none":
        tc.pop("tokenizer_class", None)
    else:
        tc["tokenizer_class"] = cls
    for e in edits:
        (op, arg), = e.items()
        if op == "tj_add":
            tj["added_tokens"].append(arg)
        elif op == "tj_set":
            content, field, value = arg
            next(t for t in tj["added_tokens"] if t["content"] == content)[field] = value
        elif op == "tc_add":
            tc["added_tokens_decoder"][arg[0]] = arg[1]
        elif op == "tc_set":
            tc["added_tokens_decoder"][arg[0]][arg[1]] = arg[2]
        elif op == "tc":
            tc.update(arg)
        elif op == "config":
            cf.update(arg)
        else:
            raise ValueError(op)
    tjp.write_text(json.dumps(tj, ensure_ascii=False))
    tcp.write_text(json.dumps(tc, indent=2, ensure_ascii=False))
    cfp.write_text(json.dumps(cf, indent=2))


def base_dir(scratch: Path) -> Path:
    d = scratch / "base"
    d.mkdir()
    src = TESTDATA / "hf" / FIXTURE
    for n in ("config.json", "tokenizer_config.json"):
        shutil.copy(src / n, d / n)
    shutil.copy(TESTDATA / TOKENIZER, d / "tokenizer.json")
    return d


def read_tokens(path: Path):
    sys.path.insert(0, str(ARGS.llama_cpp / "gguf-py"))
    import gguf
    r = gguf.GGUFReader(path)
    f = r.fields["tokenizer.ggml.tokens"]
    toks = [bytes(f.parts[i]).decode() for i in f.data]
    t = r.fields["tokenizer.ggml.token_type"]
    types = [int(t.parts[i][0]) for i in t.data]
    return toks, types


def main() -> None:
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-cpp", required=True, type=Path)
    ap.add_argument("--only", help="comma-separated case names (for experiments)")
    ARGS = ap.parse_args()
    sys.path.insert(0, str(ARGS.llama_cpp / "gguf-py"))
    sys.path.insert(0, str(ARGS.llama_cpp))
    import convert_hf_to_gguf as conv

    vocab = json.loads((TESTDATA / TOKENIZER).read_text())["model"]["vocab"]
    by_id = {i: t for t, i in vocab.items()}
    all_cases = cases(by_id)
    if ARGS.only:
        all_cases = {k: v for k, v in all_cases.items() if k in ARGS.only.split(",")}
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        base = base_dir(tmp)
        for name, edits in all_cases.items():
            per_class = {}
            for cls in CLASSES:
                # A fresh path per run: nothing the reference caches by path is reused.
                # (the directory's own name gives general.name: always "model").
                d = tmp / f"{name}-{cls}" / "model"
                shutil.copytree(base, d)
                apply(d, edits, cls)
                out = tmp / "out.gguf"
                out.unlink(missing_ok=True)
                sys.argv = ["convert_hf_to_gguf.py", str(d), "--vocab-only", "--outtype", "f32",
                            "--outfile", str(out)]
                err = io.StringIO()
                try:
                    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                        logging.disable(logging.CRITICAL)
                        conv.main()
                    entry = {"size": out.stat().st_size, "sha256": sha256(out)}
                    toks, types = read_tokens(out)
                    entry["past_vocab"] = [[i, toks[i], types[i]] for i in range(49152, len(toks))]
                    entry["changed"] = [[i, toks[i], types[i]] for i in (1, 2, 300, 301)]
                except BaseException as e:  # noqa: BLE001 - SystemExit and asserts alike
                    entry = {"refused": f"{type(e).__name__}: {e}"[:300]}
                finally:
                    logging.disable(logging.NOTSET)
                per_class[cls] = entry
                print(name, cls, entry.get("sha256", entry.get("refused"))[:70],
                      entry.get("past_vocab", ""), file=sys.stderr, flush=True)
            results[name] = {"edits": edits, "classes": per_class}
    if ARGS.only:
        print(json.dumps(results, indent=1, ensure_ascii=False))
        return
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"fixture": FIXTURE, "tokenizer": TOKENIZER, "cases": results},
                              indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
