#!/usr/bin/env python3
"""Golden data for `--mtp` / `--no-mtp` / `--no-nextn` / `--dspark` (multi-token prediction).

Runs the pinned llama.cpp's `convert_hf_to_gguf.py` with the next-token-prediction switches on
the fixtures of the families whose model class has `supports_mtp_export` (GLM-4.5 MoE and its
lite variant, Qwen3-Next, Qwen3.5 dense and MoE, Nemotron-H MoE) for every `--outtype`, quantizes
each f32 output with `llama-quantize ... Q4_K_M`, records the default output name (no
`--outfile`) and the refusals (a class without MTP export, the switches together, `--dspark`
on a class other than DeepseekV4ForCausalLM), and writes `testdata/golden/mtp/cases.json`: per
case the fixture, the arguments, and for a written file its size and sha256 (for a refusal the
last line of the reference's error). The fixture is copied into a scratch directory named like
it (the default `general.name` comes from that name).

    python3 conformance/make_mtp_golden.py --llama-cpp <llama.cpp source> \
        --quantize <llama.cpp build>/bin/llama-quantize [--only FIXTURE ...]

`--only` runs the cases of the named fixtures alone and merges them into the cases.json
already there (the other cases are kept as they are).

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
OUT = TESTDATA / "golden" / "mtp" / "cases.json"

FAMILIES = ["glm4moe", "glm4moelite", "qwen3next", "qwen35", "qwen35moe", "nemotronh",
            "deepseek4"]
# Families whose f32 files hold already-quantized tensors (DeepSeek V4's Q8_0 weights from
# FP8, MXFP4 experts): llama-quantize runs with --allow-requantize (recorded in the case).
REQUANTIZE = {"deepseek4"}
FAMILIES += ["hyv3"]
FAMILIES += ["mimo2"]
FAMILIES += ["bailingmoe3"]
FAMILIES += ["step35"]
FAMILIES += ["dots3"]
FAMILIES += ["glm5next-text"]
FLAGS = ["--mtp", "--no-mtp"]
OUTTYPES = ["f32", "f16", "bf16", "q8_0"]
# Default output names (no --outfile): the file the reference creates in the model directory.
NAMED = [("glm4moe", ["--mtp"]), ("qwen35", ["--mtp"]), ("glm4moe", ["--no-nextn"])]
REFUSED = [
    ("deepseek3", ["--mtp"]),
    ("deepseek3", ["--no-mtp"]),
    ("llama-spm", ["--no-nextn"]),
    ("qwen3", ["--mtp"]),
    ("glm4moe", ["--mtp", "--no-mtp"]),
    ("glm4moe", ["--mtp", "--dspark"]),
    ("glm4moe", ["--dspark"]),
]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-cpp", required=True, type=Path)
    ap.add_argument("--quantize", required=True, type=Path)
    ap.add_argument("--only", nargs="*",
                    help="regenerate only these fixtures' cases (the others are kept)")
    a = ap.parse_args()
    only = set(a.only or [])
    keep = lambda fixture: not only or fixture in only  # noqa: E731
    env = dict(os.environ, PYTHONPATH=str(a.llama_cpp / "gguf-py"), NO_LOCAL_GGUF="1")
    script = str(a.llama_cpp / "convert_hf_to_gguf.py")
    cases = {}
    if only and OUT.is_file():
        cases = {k: v for k, v in json.loads(OUT.read_text()).items()
                 if v["fixture"] not in only}

    def convert(model: Path, args: list, cwd: Path):
        cmd = [sys.executable, script, str(model)] + args
        return subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)

    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for fixture in filter(keep, FAMILIES):
            model = materialize(TESTDATA / "hf" / fixture, scratch / fixture)
            for flag in FLAGS:
                for outtype in OUTTYPES:
                    out = scratch / f"{fixture}{flag}-{outtype}.gguf"
                    args = [flag, "--outtype", outtype]
                    r = convert(model, args + ["--outfile", str(out)], scratch)
                    if r.returncode != 0:
                        sys.exit(f"{fixture} {args}: {r.stderr[-2000:]}")
                    cases[f"{fixture}{flag}-{outtype}"] = {
                        "fixture": fixture, "args": args, "ok": True,
                        "size": out.stat().st_size, "sha256": sha256(out),
                    }
                    print(fixture, flag, outtype, cases[f"{fixture}{flag}-{outtype}"]["sha256"][:16],
                          flush=True)
                f32 = scratch / f"{fixture}{flag}-f32.gguf"
                q = scratch / f"{fixture}{flag}-q4_k_m.gguf"
                extra = ["--allow-requantize"] if fixture in REQUANTIZE else []
                subprocess.run([str(a.quantize), *extra, str(f32), str(q), "Q4_K_M"],
                               check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                cases[f"{fixture}{flag}-q4_k_m"] = {
                    "fixture": fixture, "args": [flag, "--outtype", "q4_k_m"], "ok": True,
                    "quantized_from": f"{fixture}{flag}-f32",
                    "size": q.stat().st_size, "sha256": sha256(q),
                }
                if extra:
                    cases[f"{fixture}{flag}-q4_k_m"]["allow_requantize"] = True
        for fixture, args in NAMED:
            if not keep(fixture):
                continue
            model = materialize(TESTDATA / "hf" / fixture, scratch / fixture)
            before = set(p.name for p in model.iterdir())
            r = convert(model, args + ["--outtype", "f32"], scratch)
            if r.returncode != 0:
                sys.exit(f"{fixture} {args}: {r.stderr[-2000:]}")
            made = sorted(set(p.name for p in model.iterdir()) - before)
            assert len(made) == 1, made
            out = model / made[0]
            cases[f"{fixture}{''.join(args)}-default-name"] = {
                "fixture": fixture, "args": args + ["--outtype", "f32"], "ok": True,
                "default_name": made[0], "size": out.stat().st_size, "sha256": sha256(out),
            }
            print(fixture, args, made[0], flush=True)
        for fixture, args in REFUSED:
            if not keep(fixture):
                continue
            model = materialize(TESTDATA / "hf" / fixture, scratch / fixture)
            out = scratch / "refused.gguf"
            r = convert(model, args + ["--outtype", "f32", "--outfile", str(out)], scratch)
            assert r.returncode != 0 and not out.exists(), (fixture, args)
            tail = [l for l in r.stderr.splitlines() if l.strip()][-1]
            cases[f"{fixture}{''.join(args)}-refused"] = {
                "fixture": fixture, "args": args + ["--outtype", "f32"], "ok": False,
                "returncode": r.returncode, "error": tail,
            }
            print(fixture, args, "refused:", tail, flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(cases, indent=1) + "\n")


if __name__ == "__main__":
    main()
