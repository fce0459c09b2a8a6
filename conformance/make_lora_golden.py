#!/usr/bin/env python3
"""LoRA adapter fixtures and what the reference's convert_lora_to_gguf.py makes of them.

Builds small PEFT-layout adapters (our own random A/B weights from a fixed seed) for bases
among the repository's HF fixtures, in `testdata/lora/<case>/` (`adapter_config.json` +
`adapter_model.safetensors`), runs the pinned llama.cpp's `convert_lora_to_gguf.py` on each
for every `--outtype` (and once without `--outfile`, which names the file itself inside the
adapter directory), and writes `testdata/golden/lora/cases.json`: per run the adapter, the
base, the arguments, the exit status and the name, size and sha256 of the file written.

    python conformance/make_lora_golden.py --llama-cpp <llama.cpp source>

Needs Python with torch, transformers, safetensors, sentencepiece, protobuf and numpy.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file

from fixture_io import sha256

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
LORA = TESTDATA / "lora"
OUT = TESTDATA / "golden" / "lora" / "cases.json"

ATTN = ["q_proj", "k_proj", "v_proj", "o_proj"]
MLP = ["gate_proj", "up_proj", "down_proj"]

# case -> (base fixture, rank, alpha, targets, dtype, extras)
ADAPTERS = {
    # Llama: q/k rows permuted for rope (applied to B), f32 weights as PEFT saves them.
    "llama-lora": ("llama-spm", 8, 16, ATTN + MLP, torch.float32, {}),
    # Qwen2: bf16 weights, rank 12, a layer norm as mergekit-extract-lora adds, and the
    # token embedding (its A is written transposed).
    "qwen2-lora": ("qwen2", 12, 24, ATTN, torch.bfloat16, {"norm": True, "embed": True}),
    # An aLoRA: its invocation tokens become adapter.alora.invocation_tokens.
    "llama-alora": ("llama-spm", 4, 8, ["q_proj", "v_proj"], torch.float32,
                    {"alora": [1, 15, 29]}),
    # PEFT's older format: adapter_model.bin (torch.save of the state dict, in PEFT's order:
    # per layer, per module, A then B; not sorted as safetensors is).
    "llama-lora-bin": ("llama-spm", 8, 16, ["v_proj", "q_proj", "down_proj"], torch.float32,
                       {"bin": True}),
}
OUTTYPES = ["f32", "f16", "bf16", "q8_0", "auto"]


def shapes(cfg: dict) -> dict:
    h, inter = cfg["hidden_size"], cfg["intermediate_size"]
    nh = cfg["num_attention_heads"]
    nkv = cfg.get("num_key_value_heads", nh)
    hd = cfg.get("head_dim") or h // nh
    return {"q_proj": ("self_attn", nh * hd, h), "k_proj": ("self_attn", nkv * hd, h),
            "v_proj": ("self_attn", nkv * hd, h), "o_proj": ("self_attn", h, nh * hd),
            "gate_proj": ("mlp", inter, h), "up_proj": ("mlp", inter, h),
            "down_proj": ("mlp", h, inter)}


def make_adapter(case: str) -> None:
    base, r, alpha, targets, dtype, extras = ADAPTERS[case]
    cfg = json.loads((TESTDATA / "hf" / base / "config.json").read_text())
    rng = np.random.default_rng(17)
    t = {}
    sh = shapes(cfg)

    def param(shape, scale=0.02):
        return torch.tensor(rng.normal(0, scale, shape), dtype=torch.float32).to(dtype)

    for layer in range(cfg["num_hidden_layers"]):
        for m in targets:
            group, o, i = sh[m]
            p = f"base_model.model.model.layers.{layer}.{group}.{m}"
            t[p + ".lora_A.weight"] = param((r, i))
            t[p + ".lora_B.weight"] = param((o, r))
    if extras.get("norm"):
        t["base_model.model.model.layers.0.input_layernorm.weight"] = (
            1 + param((cfg["hidden_size"],), 0.05))
    if extras.get("embed"):
        t["base_model.model.model.embed_tokens.lora_embedding_A"] = param((r, cfg["vocab_size"]))
        t["base_model.model.model.embed_tokens.lora_embedding_B"] = param((cfg["hidden_size"], r))
    d = LORA / case
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    if extras.get("bin"):
        torch.save(t, d / "adapter_model.bin")
    else:
        save_file(t, d / "adapter_model.safetensors", metadata={"format": "pt"})
    conf = {"base_model_name_or_path": base, "peft_type": "LORA", "task_type": "CAUSAL_LM",
            "r": r, "lora_alpha": alpha, "lora_dropout": 0.0, "bias": "none",
            "target_modules": targets}
    if "alora" in extras:
        conf["alora_invocation_tokens"] = extras["alora"]
    (d / "adapter_config.json").write_text(json.dumps(conf, indent=2) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--llama-cpp", required=True, type=Path)
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(a.llama_cpp / "gguf-py"), NO_LOCAL_GGUF="1")
    script = [sys.executable, str(a.llama_cpp / "convert_lora_to_gguf.py")]
    runs = {}
    for case in ADAPTERS:
        make_adapter(case)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for case, (base, *_rest) in ADAPTERS.items():
            for outtype in OUTTYPES + ["default-name"]:
                work = tmp / f"{case}-{outtype}"
                shutil.copytree(LORA / case, work / case)
                args = ["--base", f"{{testdata}}/hf/{base}"]
                if outtype == "default-name":
                    args += [case]
                else:
                    args += ["--outtype", outtype, "--outfile", "out.gguf", case]
                cmd = script + [x.replace("{testdata}", str(TESTDATA)) for x in args]
                before = {p for p in work.rglob("*") if p.is_file()}
                r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True)
                made = sorted(p for p in work.rglob("*") if p.is_file() and p not in before)
                run = {"adapter": case, "args": args, "status": r.returncode,
                       "files": {str(p.relative_to(work)): {"size": p.stat().st_size,
                                                            "sha256": sha256(p)} for p in made}}
                if r.returncode != 0:
                    run["error_tail"] = (r.stderr.strip().splitlines() or [""])[-1]
                runs[f"{case}-{outtype}"] = run
                print(case, outtype, r.returncode, list(run["files"]))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(runs, indent=2) + "\n")


if __name__ == "__main__":
    main()
