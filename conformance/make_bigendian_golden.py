#!/usr/bin/env python3
"""Golden data for big-endian output (`gguf-convert --bigendian`): what the reference writes.

Runs the pinned llama.cpp's `convert_hf_to_gguf.py --bigendian` on fixtures of the repository
for every `--outtype`, and writes `testdata/golden/bigendian/cases.json`: per case the fixture,
the arguments, and the size and sha256 of the file the reference wrote. The fixture is copied
into a scratch directory named like it (the default `general.name` comes from that name).

    python3 conformance/make_bigendian_golden.py --llama-cpp <llama.cpp source>

Needs Python with torch, transformers, sentencepiece, protobuf, safetensors and numpy.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from fixture_io import materialize, sha256

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
OUT = TESTDATA / "golden" / "bigendian" / "cases.json"

FIXTURES = ["llama-spm", "qwen2"]
OUTTYPES = ["f32", "f16", "bf16", "q8_0"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-cpp", required=True, type=Path)
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(a.llama_cpp / "gguf-py"), NO_LOCAL_GGUF="1")
    cases = {}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for fixture in FIXTURES:
            model = materialize(TESTDATA / "hf" / fixture, scratch / fixture)
            for outtype in OUTTYPES + ["vocab-only"]:
                out = scratch / f"{fixture}-{outtype}.gguf"
                args = ["--bigendian"]
                args += ["--vocab-only"] if outtype == "vocab-only" else ["--outtype", outtype]
                cmd = [sys.executable, str(a.llama_cpp / "convert_hf_to_gguf.py"), str(model),
                       "--outfile", str(out)] + args
                subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
                cases[f"{fixture}-{outtype}"] = {
                    "fixture": fixture,
                    "args": args,
                    "size": out.stat().st_size,
                    "sha256": sha256(out),
                }
                print(fixture, outtype, cases[f"{fixture}-{outtype}"]["sha256"][:16])
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(cases, indent=2) + "\n")


if __name__ == "__main__":
    main()
