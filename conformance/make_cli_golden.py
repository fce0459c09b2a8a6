#!/usr/bin/env python3
"""Golden data for the reference's documented command lines.

Runs the command lines that llama.cpp documents (tools/quantize/README.md's examples,
docs/build-s390x.md's big-endian conversion, the local-directory form of the conversion
example) with the pinned reference, each in a fresh working directory holding the
`llama-spm` fixture (as `llama-spm/`), `input-model-f32.gguf` and `llama-spm-bf16.gguf`
(made by the reference converter), `imatrix.gguf` (the golden imatrix of that fixture) and
`metadata.json` (testdata/golden/cli/metadata.json, for `--metadata`).
It writes `testdata/golden/cli/cases.json`: per case the tool, its arguments exactly as
documented, the exit status, and every file the command created (path relative to the
working directory, size, sha256). `cli/tests/suite/convert/reference_commands.rs` runs the same lines
with `convert_hf_to_gguf` / `gguf-quantize` and compares.

    python conformance/make_cli_golden.py --llama-cpp <llama.cpp source> \\
        --quantize <llama.cpp build>/bin/llama-quantize

Needs Python with torch, transformers, sentencepiece, protobuf, safetensors and numpy.
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
OUT = TESTDATA / "golden" / "cli" / "cases.json"
FIXTURE = TESTDATA / "hf" / "llama-spm"
IMATRIX = TESTDATA / "golden" / "llama-spm" / "files" / "imatrix.gguf"

# name -> (tool, args as documented; `llama-spm` stands for the model directory).
CASES = {
    # tools/quantize/README.md, "Prepare the input GGUF file", with a local directory.
    "convert-readme-bf16": ("convert", ["--outfile", "llama-spm-bf16-out.gguf", "--outtype", "bf16", "llama-spm"]),
    # The same note: omitting --outtype works too (the default name goes into the model dir).
    "convert-readme-default": ("convert", ["llama-spm"]),
    # docs/build-s390x.md: a big-endian f16 file.
    "convert-s390x-bigendian": ("convert", ["--outfile", "model-name-be.f16.gguf", "--outtype", "f16", "--bigendian", "llama-spm/"]),
    # tools/quantize/README.md, "Quantize the GGUF".
    "quantize-readme": ("quantize", ["llama-spm-bf16.gguf", "llama-spm-Q4_K_M.gguf", "Q4_K_M"]),
    # tools/quantize/README.md, "Quantization Examples", in order.
    "quantize-naive": ("quantize", ["input-model-f32.gguf", "q4_k_m", "8"]),
    "quantize-requantize-pure": ("quantize", ["--allow-requantize", "--leave-output-tensor", "--pure", "input-model-f32.gguf", "q4_k_m", "8"]),
    "quantize-include-weights": ("quantize", ["--imatrix", "imatrix.gguf", "--include-weights", "attn_v", "--include-weights", "ffn_down", "input-model-f32.gguf", "q4_k_m", "8"]),
    "quantize-output-embd-keep-split": ("quantize", ["--imatrix", "imatrix.gguf", "--output-tensor-type", "q5_k", "--token-embedding-type", "q3_k", "--keep-split", "input-model-f32.gguf", "q4_k_m", "8"]),
    "quantize-tensor-type-regex": ("quantize", ["--imatrix", "imatrix.gguf", "--tensor-type", "\\.(\\d*[13579])\\.attn_k=q5_k", "--tensor-type", "\\.(\\d*[02468])\\.attn_q=q3_k", "input-model-f32.gguf", "q4_k_m", "8"]),
    "quantize-tensor-type-prune": ("quantize", ["--imatrix", "imatrix.gguf", "--tensor-type", "attn_v=q5_k", "--tensor-type", "ffn_down=q5_k", "--prune-layers", "20,21,22", "input-model-f32.gguf", "q4_k_m", "8"]),
    "quantize-override-prune-copy": ("quantize", ["--imatrix", "imatrix.gguf", "--override-kv", "qwen3moe.expert_used_count=int:16", "--prune-layers", "20,21,22", "input-model-f32.gguf", "pruned-model-f32.gguf", "copy", "8"]),
    # The last two with layers this 2-layer model has (the documented ones prune nothing here).
    "quantize-tensor-type-prune-1": ("quantize", ["--imatrix", "imatrix.gguf", "--tensor-type", "attn_v=q5_k", "--tensor-type", "ffn_down=q5_k", "--prune-layers", "1", "input-model-f32.gguf", "q4_k_m", "8"]),
    "quantize-override-prune-copy-1": ("quantize", ["--imatrix", "imatrix.gguf", "--override-kv", "llama.expert_used_count=int:16", "--prune-layers", "1", "input-model-f32.gguf", "pruned-model-f32.gguf", "copy", "8"]),
    # convert_hf_to_gguf.py's own options: output written by gguf-py's writer.
    "convert-vocab-only": ("convert", ["llama-spm", "--vocab-only", "--outfile", "vocab.gguf"]),
    "convert-vocab-only-default-name": ("convert", ["llama-spm", "--vocab-only"]),
    "convert-model-name": ("convert", ["llama-spm", "--outtype", "f16", "--model-name", "My Model 7B", "--outfile", "named.gguf"]),
    "convert-model-name-default-file": ("convert", ["llama-spm", "--model-name", "Tiny-Llama-v0.2-Chat", "--outtype", "q8_0"]),
    "convert-metadata": ("convert", ["llama-spm", "--outtype", "f32", "--metadata", "metadata.json", "--outfile", "meta.gguf"]),
    "convert-metadata-default-file": ("convert", ["llama-spm", "--metadata", "metadata.json", "--outtype", "bf16"]),
    "convert-split-max-tensors": ("convert", ["llama-spm", "--outtype", "f32", "--split-max-tensors", "8", "--outfile", "split.gguf"]),
    "convert-split-max-size": ("convert", ["llama-spm", "--outtype", "f16", "--split-max-size", "1M", "--outfile", "sized.gguf"]),
    "convert-split-max-size-G": ("convert", ["llama-spm", "--outtype", "f16", "--split-max-size", "1G", "--outfile", "one.gguf"]),
    "convert-no-tensor-first-split": ("convert", ["llama-spm", "--outtype", "f32", "--split-max-tensors", "10", "--no-tensor-first-split", "--outfile", "ntf.gguf"]),
    "convert-split-default-name": ("convert", ["llama-spm", "--split-max-tensors", "12"]),
    "convert-split-vocab-only": ("convert", ["llama-spm", "--vocab-only", "--split-max-tensors", "4", "--outfile", "vsplit.gguf"]),
}
# A file every working directory holds (--metadata's argument).
METADATA = TESTDATA / "golden" / "cli" / "metadata.json"


def listing(d: Path) -> set[str]:
    return {str(p.relative_to(d)) for p in d.rglob("*") if p.is_file()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-cpp", required=True, type=Path)
    ap.add_argument("--quantize", required=True, type=Path)
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(a.llama_cpp / "gguf-py"), NO_LOCAL_GGUF="1")
    convert = [sys.executable, str(a.llama_cpp / "convert_hf_to_gguf.py")]
    cases = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        inputs = tmp / "inputs"
        shutil.copytree(FIXTURE, inputs / "llama-spm")
        for name, outtype in [("input-model-f32.gguf", "f32"), ("llama-spm-bf16.gguf", "bf16")]:
            subprocess.run(convert + ["llama-spm", "--outtype", outtype, "--outfile", name],
                           cwd=inputs, env=env, check=True, capture_output=True)
        shutil.copy(IMATRIX, inputs / "imatrix.gguf")
        shutil.copy(METADATA, inputs / "metadata.json")
        for name, (tool, args) in CASES.items():
            work = tmp / name
            shutil.copytree(inputs, work)
            before = listing(work)
            cmd = (convert if tool == "convert" else [str(a.quantize)]) + args
            r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
            files = {}
            for rel in sorted(listing(work) - before):
                files[rel] = {"size": (work / rel).stat().st_size, "sha256": sha256(work / rel)}
            case = {"tool": tool, "args": args, "status": r.returncode, "files": files}
            if r.returncode != 0:
                case["error_tail"] = (r.stderr.strip().splitlines() or [""])[-1]
            cases[name] = case
            print(name, r.returncode, list(files))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(cases, indent=2) + "\n")


if __name__ == "__main__":
    main()
