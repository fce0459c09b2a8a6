#!/usr/bin/env python3
"""Golden data for added tokens when tokenizer.json and tokenizer_config.json disagree, per
`tokenizer_class`.

transformers 5 builds the tokenizer the reference converter reads (AutoTokenizer) in two ways:
a class without its own pipeline (TokenizersBackend, PreTrainedTokenizerFast, and LlamaTokenizer
over a ByteLevel tokenizer.json) loads tokenizer.json with its `added_tokens`; a class with its
own pipeline (GPT2Tokenizer, Qwen2Tokenizer, ...) keeps only tokenizer.json's vocab and merges
and takes its added tokens from tokenizer_config.json. This script records what the reference
writes for each combination.

A case starts from one of two directories (BASES): "smollm" (the default), the llama-bpe
fixture's config.json and tokenizer_config.json with the shared smollm tokenizer.json
(testdata/tokenizers/smollm, a ByteLevel BPE: the GPT-2 path); or "spm-hf", the llama-spm
fixture's with the shared byte-fallback BPE testdata/tokenizers/spm/tokenizer.json and no
tokenizer.model (the reference's `_set_vocab_llama_hf` path, where LlamaTokenizer rebuilds
with its own Metaspace pipeline). A case not on the default base names its base (stored with
it). A case is a list of edits (below, stored with the results so the test replays them),
applied once per tokenizer_class in CLASSES ("none" removes the key). The reference runs with
`--vocab-only --outtype f32`; per case and class the golden holds the size and sha256 of the
file, or `"refused"` with the last line of its error, and the tokens past id 49,151 with
their types (for reading a failure, not checked).

Edits:
  {"tj_add": {token with id}}           append to tokenizer.json's added_tokens
  {"tj_set": [content, field, value]}   change a field of tokenizer.json's added token
  {"tc_add": [id, {token}]}             set added_tokens_decoder[id] in tokenizer_config.json
  {"tc_set": [id, field, value]}        change a field of added_tokens_decoder[id]
  {"tc": {key: value}}                  set top-level keys of tokenizer_config.json
  {"tc": [[key, value], ...]}           the same, where the order of new keys matters (a
                                        JSON object read back may lose it)
  {"tc_drop": key}                      remove a top-level key of tokenizer_config.json

A case whose base and edits are unchanged keeps its results from the existing output file
(the reference is pinned), so that a new case costs only its own runs; `--all` runs every
case again.
  {"config": {key: value}}              set top-level keys of config.json

Writes testdata/golden/added-tokens/classes.json; converters/tests/suite/security/hardening_hf.rs
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
# Other bases: fixture (config.json, tokenizer_config.json, tensors) and tokenizer.json.
BASES = {
    "spm-hf": {"fixture": "llama-spm", "tokenizer": "tokenizers/spm/tokenizer.json"},
    "bert": {"fixture": "bert", "tokenizer": "hf/bert/tokenizer.json"},
}

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
# The later cases run fewer classes (a `Fast` name, PreTrainedTokenizerFast and "none" give
# the same tokenizer as a class already run; LlamaTokenizer over the ByteLevel smollm file is
# TokenizersBackend).
FEW_CLASSES = ["GPT2Tokenizer", "TokenizersBackend", "Qwen2Tokenizer"]
HF_CLASSES = ["GPT2Tokenizer", "LlamaTokenizer", "TokenizersBackend", "Qwen2Tokenizer"]
BERT_CLASSES = ["BertTokenizer", "TokenizersBackend"]
# The first cases (those before the model-specific ones) run every class in CLASSES.
ALL_CLASS_CASES = 11


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
        # Model-specific `*_token` keys (transformers 5 makes them named special tokens).
        "model-token-new": [ROOM, {"tc": [["image_token", "<image>"], ["boi_token", "<boi>"]]}],
        "model-token-decoder": [{"tc_set": ["3", "special", False]},
                                {"tc": {"image_token": "<repo_name>"}}],
        "model-token-vocab": [{"tc": {"image_token": w300}}],
        "model-token-not-text": [ROOM, {"tc": {"image_token": 5, "audio_token": None,
                                               "video_token": ["<v>"]}}],
        "model-token-object": [ROOM, {"tc": {"image_token": {
            "__type": "AddedToken", **tok("<image>", special=False, normalized=True)}}}],
        # extra_special_tokens as a dict of named tokens, and an empty list.
        "extra-dict": [ROOM, {"tc": {"extra_special_tokens": {
            "image_token": "<img>", "video_token": "<|im_end|>"}}}],
        "extra-dict-named": [ROOM, {"tc": {"extra_special_tokens": {"bos_token": "<dictbos>"}}}],
        "extra-empty-list": [ROOM, {"tc": {"extra_special_tokens": [],
                                           "additional_special_tokens": ["<addl>"]}}],
        # The class's own pre-tokenizer (GPT2Tokenizer: ByteLevel with add_prefix_space).
        "prefix-space": [{"tc": {"add_prefix_space": True}}],
        # transformers refuses a named token that is not a string or an AddedToken.
        "extra-dict-not-token": [{"tc": {"extra_special_tokens": {"image_token": 5}}}],
    }


BERT_ROOM = {"config": {"vocab_size": 30530}}


def bert_cases():
    """Cases on the "bert" base (WordPiece, 30,522 tokens; no added_tokens_decoder)."""
    decoder = {str(i): tok(t) for i, t in
               ((0, "[PAD]"), (100, "[UNK]"), (101, "[CLS]"), (102, "[SEP]"), (103, "[MASK]"))}
    return {
        "bert-same": [],
        "bert-tj-only-new": [BERT_ROOM, {"tj_add": tok("[NEW]", id=30522)}],
        "bert-tc-decoder": [BERT_ROOM, {"tj_add": tok("[TJ]", id=30522)},
                            {"tc": {"added_tokens_decoder": {**decoder,
                                                              "30523": tok("[NEW]")}}}],
        "bert-tc-decoder-few": [{"tc": {"added_tokens_decoder": {"0": tok("[PAD]")}}}],
        "bert-model-token": [{"tc": {"image_token": "[unused0]"}}],
        "bert-lower": [{"tc": {"do_lower_case": False}}],
        "bert-lower-null": [{"tc": {"do_lower_case": None}}],
    }


SPM_ROOM = {"config": {"vocab_size": 1024}}


def hf_cases(vocab_text):
    """Cases on the "spm-hf" base (1,000 tokens; config vocab_size 1,024)."""
    w300 = vocab_text[300]
    return {
        "hf-same": [],
        "hf-tj-only-new": [{"tj_add": tok("<tj_only>", id=1000)}],
        "hf-tc-only-new": [{"tc_add": ["1000", tok("<tc_only>")]}],
        "hf-tc-only-user": [{"tc_add": ["1001", tok("tc user", special=False)]}],
        "hf-flags-differ": [{"tc_set": ["1", "special", False]},
                            {"tj_set": ["</s>", "special", False]}],
        "hf-tc-only-existing": [{"tc_add": ["300", tok(w300, special=False, normalized=True)]}],
        "hf-model-token-new": [{"tc": {"image_token": "<image>"}}],
        "hf-extra-list": [{"tc": {"additional_special_tokens": ["<x1>", "</s>"]}}],
        "hf-named-special-new": [{"tc": {"pad_token": "<pad>"}}],
        "hf-no-decoder": [{"tc_drop": "added_tokens_decoder"},
                          {"tj_add": tok("<tj_only>", id=1000)}],
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
            tc.update(dict(arg) if isinstance(arg, list) else arg)
        elif op == "tc_drop":
            tc.pop(arg, None)
        elif op == "config":
            cf.update(arg)
        else:
            raise ValueError(op)
    tjp.write_text(json.dumps(tj, ensure_ascii=False))
    tcp.write_text(json.dumps(tc, indent=2, ensure_ascii=False))
    cfp.write_text(json.dumps(cf, indent=2))


def base_dir(scratch: Path, base: str) -> Path:
    fixture, tokenizer = base_files(base)
    d = scratch / f"base-{base}"
    d.mkdir()
    src = TESTDATA / "hf" / fixture
    for n in ("config.json", "tokenizer_config.json"):
        shutil.copy(src / n, d / n)
    shutil.copy(TESTDATA / tokenizer, d / "tokenizer.json")
    return d


def base_files(base: str):
    if base == "smollm":
        return FIXTURE, TOKENIZER
    return BASES[base]["fixture"], BASES[base]["tokenizer"]


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
    ap.add_argument("--all", action="store_true", help="run every case, keeping no result")
    ARGS = ap.parse_args()
    sys.path.insert(0, str(ARGS.llama_cpp / "gguf-py"))
    sys.path.insert(0, str(ARGS.llama_cpp))
    import convert_hf_to_gguf as conv

    def vocab_of(base):
        vocab = json.loads((TESTDATA / base_files(base)[1]).read_text())["model"]["vocab"]
        return {i: t for t, i in vocab.items()}

    all_cases = {}
    for i, (name, edits) in enumerate(cases(vocab_of("smollm")).items()):
        all_cases[name] = ("smollm", edits, CLASSES if i < ALL_CLASS_CASES else FEW_CLASSES)
    for name, edits in hf_cases(vocab_of("spm-hf")).items():
        all_cases[name] = ("spm-hf", edits, HF_CLASSES)
    for name, edits in bert_cases().items():
        all_cases[name] = ("bert", edits, BERT_CLASSES)
    old = {}
    if OUT.is_file() and not ARGS.all and not ARGS.only:
        old = json.loads(OUT.read_text())["cases"]
    if ARGS.only:
        all_cases = {k: v for k, v in all_cases.items() if k in ARGS.only.split(",")}
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        bases = {}
        for name, (base, edits, classes) in all_cases.items():
            prev = old.get(name)
            if (prev and prev["edits"] == edits and prev.get("base", "smollm") == base
                    and list(prev["classes"]) == classes):
                results[name] = prev
                continue
            if base not in bases:
                bases[base] = base_dir(tmp, base)
            n_vocab = len(vocab_of(base))
            per_class = {}
            for cls in classes:
                # A fresh path per run: nothing the reference caches by path is reused.
                # (the directory's own name gives general.name: always "model").
                d = tmp / f"{name}-{cls}" / "model"
                shutil.copytree(bases[base], d)
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
                    # (padding tokens, type UNUSED, left out)
                    entry["past_vocab"] = [[i, toks[i], types[i]] for i in range(n_vocab, len(toks))
                                           if types[i] != 5]
                    entry["changed"] = [[i, toks[i], types[i]] for i in (1, 2, 3, 300, 301)]
                except BaseException as e:  # noqa: BLE001 - SystemExit and asserts alike
                    entry = {"refused": f"{type(e).__name__}: {e}"[:300]}
                finally:
                    logging.disable(logging.NOTSET)
                per_class[cls] = entry
                print(name, cls, entry.get("sha256", entry.get("refused"))[:70],
                      entry.get("past_vocab", ""), file=sys.stderr, flush=True)
            results[name] = {"edits": edits, "classes": per_class}
            if base != "smollm":
                results[name] = {"base": base, **results[name]}
    if ARGS.only:
        print(json.dumps(results, indent=1, ensure_ascii=False))
        return
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps({"fixture": FIXTURE, "tokenizer": TOKENIZER, "bases": BASES,
                               "cases": results}, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
