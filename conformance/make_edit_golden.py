#!/usr/bin/env python3
"""Golden data for GGUF metadata editing (`gguf-edit`): what gguf-py's own scripts write.

Runs the pinned gguf-py's `gguf_new_metadata.py` (a copy with new metadata) and
`gguf_set_metadata.py` (a scalar changed in place) on GGUF files of the repository's fixtures,
one command line per case, and writes `testdata/golden/edit/cases.json`: for every case the
input, the script, its arguments (with `{input}`, `{output}`, `{testdata}` placeholders), and
the size and sha256 of what it wrote, plus a manifest of each output
(`testdata/golden/edit/<case>.json`, made with `gguf-inspect manifest`) for readable diffs.

The inputs are made with our own gguf-convert, whose outputs for these fixtures equal
llama.cpp's (the golden suites check that), so the repository stores no GGUF file.

    python3 conformance/make_edit_golden.py --gguf-py <llama.cpp>/gguf-py [--bin target/release]

Needs Python with numpy (gguf-py's only dependency that matters here).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from fixture_io import sha256

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
OUT_DIR = TESTDATA / "golden" / "edit"

# Inputs: name -> (fixture, gguf-convert --outtype).
INPUTS = {
    "llama-spm-f16": ("llama-spm", "f16"),
    "qwen2-q8_0": ("qwen2", "q8_0"),
    # "+bigendian": converted with --bigendian (gguf-py keeps such a file big-endian).
    "qwen2-f16-be": ("qwen2", "f16+bigendian"),
}

TEMPLATE = "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
TEMPLATES_JSON = json.dumps(
    [
        {"name": "default", "template": "A {{ messages }}"},
        {"name": "tool_use", "template": "B {{ tools }}"},
    ]
)

# name -> (input, script, args). gguf_new_metadata.py takes {input} {output} first.
CASES = {
    "general-name": ("llama-spm-f16", "new", ["--general-name", "Edited Llama"]),
    "general-description": (
        "llama-spm-f16",
        "new",
        ["--general-description", "A tiny model, described by hand"],
    ),
    "chat-template": ("llama-spm-f16", "new", ["--chat-template", TEMPLATE]),
    "chat-template-list": ("llama-spm-f16", "new", ["--chat-template", TEMPLATES_JSON]),
    "chat-template-file": (
        "llama-spm-f16",
        "new",
        ["--chat-template-file", "{testdata}/golden/edit/template.jinja"],
    ),
    "chat-template-config": (
        "llama-spm-f16",
        "new",
        ["--chat-template-config", "{testdata}/hf/qwen2/tokenizer_config.json"],
    ),
    "chat-template-replaces": ("qwen2-q8_0", "new", ["--chat-template", TEMPLATE]),
    "pre-tokenizer": ("qwen2-q8_0", "new", ["--pre-tokenizer", "llama-bpe"]),
    "remove-metadata": (
        "llama-spm-f16",
        "new",
        [
            "--remove-metadata",
            "general.name",
            "--remove-metadata",
            "tokenizer.ggml.scores",
            "--remove-metadata",
            "no.such.key",
            "--force",
        ],
    ),
    "special-token": (
        "llama-spm-f16",
        "new",
        ["--special-token", "eos", "<s>", "--special-token", "pad", "</s>"],
    ),
    "special-token-unknown-name": (
        "llama-spm-f16",
        "new",
        ["--special-token", "nosuch", "<s>"],
    ),
    "special-token-by-id": (
        "qwen2-q8_0",
        "new",
        ["--special-token-by-id", "pad", "5", "--special-token-by-id", "eos", "0"],
    ),
    "everything": (
        "qwen2-q8_0",
        "new",
        [
            "--general-name",
            "Everything",
            "--general-description",
            "d",
            "--chat-template",
            TEMPLATES_JSON,
            "--pre-tokenizer",
            "qwen2",
            "--remove-metadata",
            "general.size_label",
            "--special-token-by-id",
            "bos",
            "1",
            "--force",
        ],
    ),
    "set-eos-id": ("llama-spm-f16", "set", ["tokenizer.ggml.eos_token_id", "1"]),
    "set-context-length": ("qwen2-q8_0", "set", ["qwen2.context_length", "4096"]),
    "bigendian-general-name": ("qwen2-f16-be", "new", ["--general-name", "Big"]),
    "bigendian-chat-template": ("qwen2-f16-be", "new", ["--chat-template", TEMPLATE]),
    "bigendian-set": ("qwen2-f16-be", "set", ["qwen2.context_length", "4096"]),
    "set-float": ("llama-spm-f16", "set", ["llama.attention.layer_norm_rms_epsilon", "0.001"]),
}


def expand(args, **values):
    out = []
    for a in args:
        for k, v in values.items():
            a = a.replace("{" + k + "}", str(v))
        out.append(a)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gguf-py", required=True, type=Path, help="llama.cpp's gguf-py directory")
    ap.add_argument("--bin", default=ROOT / "target" / "release", type=Path)
    a = ap.parse_args()
    scripts = a.gguf_py / "gguf" / "scripts"
    env = dict(os.environ, PYTHONPATH=str(a.gguf_py), NO_LOCAL_GGUF="1")
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    (OUT_DIR / "template.jinja").write_text(TEMPLATE + "\n", encoding="utf-8")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        inputs = {}
        for name, (fixture, outtype) in INPUTS.items():
            path = tmp / f"{name}.gguf"
            subprocess.run(
                [str(a.bin / "gguf-convert"), str(TESTDATA / "hf" / fixture), str(path),
                 "--outtype", outtype.split("+")[0], "--quiet"]
                + (["--bigendian"] if outtype.endswith("+bigendian") else []),
                check=True,
            )
            inputs[name] = {"fixture": fixture, "outtype": outtype,
                            "size": path.stat().st_size, "sha256": sha256(path)}
        records = []
        for case, (inp, script, args) in CASES.items():
            src = tmp / f"{inp}.gguf"
            out = tmp / f"{case}.gguf"
            if script == "new":
                cmd = [sys.executable, str(scripts / "gguf_new_metadata.py"), str(src), str(out)]
                cmd += expand(args, testdata=TESTDATA)
            else:
                shutil.copyfile(src, out)
                cmd = [sys.executable, str(scripts / "gguf_set_metadata.py"), str(out)]
                cmd += expand(args, testdata=TESTDATA) + ["--force"]
            subprocess.run(cmd, check=True, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            manifest = subprocess.run(
                [str(a.bin / "gguf-inspect"), "manifest", str(out)],
                check=True, capture_output=True, text=True,
            ).stdout
            (OUT_DIR / f"{case}.json").write_text(manifest, encoding="utf-8")
            records.append({
                "case": case,
                "input": inp,
                "script": "gguf_new_metadata.py" if script == "new" else "gguf_set_metadata.py",
                "args": args if script == "new" else args + ["--force"],
                "size": out.stat().st_size,
                "sha256": sha256(out),
            })
            print(f"{case}: {records[-1]['sha256'][:16]}…")
    (OUT_DIR / "cases.json").write_text(
        json.dumps({"inputs": inputs, "cases": records}, indent=1) + "\n", encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
