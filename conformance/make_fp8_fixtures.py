#!/usr/bin/env python3
"""FP8 checkpoint fixtures and their golden data: what the reference writes from pre-quantized
safetensors in each layout its `dequant_model` reads.

Each fixture is the `llama-spm` model (testdata/hf/llama-spm), cut to its first layer with the
output tied to the embedding, with its linear projections (`*_proj.weight`) quantized to FP8 with the scales real checkpoints ship;
the embedding and the norms stay BF16. The quantization is round-to-nearest
of `w / scale` to the FP8 type (torch's cast), the scale `amax / fp8_max` over its group:

  llama-spm-fp8-channel   compressed-tensors `float-quantized`, strategy `channel`: E4M3
                          weights, `weight_scale` [out, 1] in BF16 (llm-compressor's
                          FP8-dynamic layout, e.g. RedHatAI/*-FP8-dynamic).
  llama-spm-fp8-block     compressed-tensors `float-quantized`, strategy `block`,
                          `block_structure` [128, 128]: `weight_scale` [ceil(out/128),
                          ceil(in/128)] in F32 (llm-compressor's FP8-block layout).
  llama-spm-fp8-tensor    ModelOpt FP8 (`hf_quant_config.json`, no quantization_config):
                          E4M3 weights, `weight_scale` a 0-dim F32, plus the unused
                          `input_scale`, `k_proj.k_scale`, `v_proj.v_scale` (the layout of
                          nvidia/*-FP8).
  llama-spm-fp8-e5m2      `quant_method: fp8` without `weight_block_size`: F8_E5M2 weights,
                          `weight_scale_inv` a 0-dim F32 for attention and [out] (per row,
                          1-D) for the MLP, plus unused `activation_scale`s.

config.json is the source's plus the quantization config; the other files are the source's
(`shared-files.txt`). For each fixture the pinned `convert_hf_to_gguf.py` runs for
`--outtype` f32, f16, bf16, q8_0 and, with `--fp8-as-q8`, f32 and bf16; two refused variants
(a compressed-tensors config with strategy `tensor`, and one with a static `input_scale`
tensor) are run on modified copies of the channel fixture, whose changes the Rust test makes
too. Everything goes to `testdata/golden/fp8/cases.json` (checked by
`converters/tests/suite/convert/fp8_golden.rs`).

    python3 conformance/make_fp8_fixtures.py --llama-cpp <llama.cpp source>

Needs Python with torch, safetensors, numpy, sentencepiece and protobuf.
"""

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from fixture_io import materialize, sha256

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
SOURCE = "llama-spm"
OUT = TESTDATA / "golden" / "fp8" / "cases.json"
OUTTYPES = ["f32", "f16", "bf16", "q8_0"]
# The fixtures keep the source's first layer and tie the output to the embedding (the
# source's second layer and `lm_head` are dropped), to stay small.
DROPPED = ("model.layers.1.", "lm_head.")
CONFIG_EDITS = {"num_hidden_layers": 1, "tie_word_embeddings": True}
Q8_OUTTYPES = ["f32", "bf16"]


def source_tensors() -> dict:
    from safetensors.torch import load_file
    src = TESTDATA / "hf" / SOURCE
    sd = {}
    for part in sorted(p for p in os.listdir(src) if p.startswith("model") and p.endswith(".safetensors")):
        t = load_file(str(src / part))
        for k in sorted(t):
            if k.startswith(DROPPED):
                continue
            sd[k] = t[k].contiguous()
    return sd


def quantize(w, scale_full, dtype):
    """`w / scale` rounded to the FP8 type, clamped to its finite range."""
    import torch
    fmax = torch.finfo(dtype).max
    return (w.float() / scale_full).clamp(-fmax, fmax).to(dtype)


def amax_scale(x, fmax):
    s = x.abs().amax().float() / fmax
    return s if float(s) > 0 else s + 1.0


def per_channel(w, dtype, scale_dtype, keep_dim=True):
    import torch
    fmax = torch.finfo(dtype).max
    s = w.float().abs().amax(dim=1, keepdim=True) / fmax
    s = torch.where(s > 0, s, torch.ones_like(s)).to(scale_dtype)
    q = quantize(w, s.float(), dtype)
    return q, (s if keep_dim else s.reshape(-1))


def per_tensor(w, dtype):
    import torch
    fmax = torch.finfo(dtype).max
    s = amax_scale(w, fmax).reshape(())
    return quantize(w, s, dtype), s.to(torch.float32)


def per_block(w, dtype, block):
    import torch
    fmax = torch.finfo(dtype).max
    rows, cols = w.shape
    br, bc = block
    nr, nc = math.ceil(rows / br), math.ceil(cols / bc)
    s = torch.empty(nr, nc, dtype=torch.float32)
    for i in range(nr):
        for j in range(nc):
            s[i, j] = amax_scale(w[i * br:(i + 1) * br, j * bc:(j + 1) * bc], fmax)
    full = s.repeat_interleave(br, 0)[:rows].repeat_interleave(bc, 1)[:, :cols]
    return quantize(w, full, dtype), s


def is_linear(name: str) -> bool:
    return ".layers." in name and name.endswith("_proj.weight")


def ct_config(strategy: str, block=None) -> dict:
    weights = {"dynamic": False, "num_bits": 8, "observer": "minmax", "strategy": strategy,
               "symmetric": True, "type": "float", "group_size": None, "block_structure": block}
    return {
        "quant_method": "compressed-tensors",
        "format": "float-quantized",
        "quantization_status": "compressed",
        "config_groups": {"group_0": {
            "targets": ["Linear"],
            "weights": weights,
            "input_activations": {"dynamic": True, "num_bits": 8, "strategy": "token",
                                  "symmetric": True, "type": "float"},
        }},
        "ignore": ["lm_head"],
        "kv_cache_scheme": None,
    }


def make(kind: str):
    """(tensors, quantization_config or None, extra files) of one fixture."""
    import torch
    sd = source_tensors()
    out = {}
    extra = {}
    qc = None
    for name, w in sd.items():
        if not is_linear(name):
            out[name] = w
            continue
        base = name[: -len(".weight")]
        if kind == "channel":
            q, s = per_channel(w, torch.float8_e4m3fn, torch.bfloat16)
            out[name], out[base + ".weight_scale"] = q, s
        elif kind == "block":
            q, s = per_block(w, torch.float8_e4m3fn, (128, 128))
            out[name], out[base + ".weight_scale"] = q, s
        elif kind == "tensor":
            q, s = per_tensor(w, torch.float8_e4m3fn)
            out[name], out[base + ".weight_scale"] = q, s
            out[base + ".input_scale"] = torch.tensor(0.0123, dtype=torch.float32)
            if base.endswith("k_proj"):
                out[base + ".k_scale"] = torch.tensor(1.0, dtype=torch.float32)
            if base.endswith("v_proj"):
                out[base + ".v_scale"] = torch.tensor(1.0, dtype=torch.float32)
        elif kind == "e5m2":
            if ".self_attn." in name:
                q, s = per_tensor(w, torch.float8_e5m2)
            else:
                q, s = per_channel(w, torch.float8_e5m2, torch.float32, keep_dim=False)
            out[name], out[base + ".weight_scale_inv"] = q, s
            if base.endswith(("o_proj", "down_proj")):
                out[base + ".activation_scale"] = torch.tensor(0.5, dtype=torch.float32)
        else:
            raise ValueError(kind)
    if kind == "channel":
        qc = ct_config("channel")
    elif kind == "block":
        qc = ct_config("block", [128, 128])
    elif kind == "tensor":
        extra["hf_quant_config.json"] = {
            "producer": {"name": "modelopt", "version": "0.29.0"},
            "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8",
                             "exclude_modules": ["lm_head"]},
        }
    elif kind == "e5m2":
        qc = {"quant_method": "fp8", "activation_scheme": "static", "fmt": "e5m2",
              "weight_block_size": None}
    return out, qc, extra


KINDS = ["channel", "block", "tensor", "e5m2"]


def write_fixture(kind: str) -> Path:
    from safetensors.torch import save_file
    src = TESTDATA / "hf" / SOURCE
    dst = TESTDATA / "hf" / f"{SOURCE}-fp8-{kind}"
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    tensors, qc, extra = make(kind)
    save_file(tensors, str(dst / "model.safetensors"), metadata={"format": "pt"})
    config = json.loads((src / "config.json").read_text())
    config.update(CONFIG_EDITS)
    if qc is not None:
        config["quantization_config"] = qc
    (dst / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    for name, value in extra.items():
        (dst / name).write_text(json.dumps(value, indent=2) + "\n")
    lines = []
    for p in sorted(src.iterdir()):
        if p.is_file() and p.name != "config.json" and not p.name.endswith((".safetensors", ".index.json")):
            lines.append(f"{p.name} = ../{SOURCE}/{p.name}")
    (dst / "shared-files.txt").write_text("\n".join(lines) + "\n")
    return dst


def convert(llama_cpp: Path, model: Path, outtype: str, q8: bool, out: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(llama_cpp / "gguf-py"), NO_LOCAL_GGUF="1")
    cmd = [sys.executable, str(llama_cpp / "convert_hf_to_gguf.py"), str(model),
           "--outfile", str(out), "--outtype", outtype] + (["--fp8-as-q8"] if q8 else [])
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return {"ok": False, "returncode": r.returncode, "error_tail": r.stderr.strip().splitlines()[-1:]}
    digest = sha256(out)
    out.unlink()
    return {"ok": True, "sha256": digest}


# The refused variants: a modification of the channel fixture's copy (the Rust test makes the
# same one).
def refuse_tensor_strategy(d: Path):
    c = json.loads((d / "config.json").read_text())
    c["quantization_config"]["config_groups"]["group_0"]["weights"]["strategy"] = "tensor"
    (d / "config.json").write_text(json.dumps(c, indent=2) + "\n")


def refuse_input_scale(d: Path):
    """A second part `model-extra.safetensors` holding a static activation scale."""
    from safetensors.torch import save_file
    import torch
    t = {"model.layers.0.self_attn.q_proj.input_scale": torch.tensor(0.5, dtype=torch.float32)}
    save_file(t, str(d / "model-extra.safetensors"), metadata={"format": "pt"})


REFUSED = {"tensor-strategy": refuse_tensor_strategy, "input-scale": refuse_input_scale}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llama-cpp", type=Path, required=True)
    args = ap.parse_args()
    cases = {}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for kind in KINDS:
            fx = write_fixture(kind)
            model = materialize(fx, scratch / fx.name)
            runs = [(t, False) for t in OUTTYPES] + [(t, True) for t in Q8_OUTTYPES]
            for outtype, q8 in runs:
                case = f"{fx.name}-{outtype}" + ("-fp8-as-q8" if q8 else "")
                r = convert(args.llama_cpp, model, outtype, q8, scratch / "out.gguf")
                cases[case] = {"fixture": fx.name, "outtype": outtype, "fp8_as_q8": q8, **r}
                print(case, r.get("sha256") or r)
            if kind == "channel":
                for what, modify in REFUSED.items():
                    m = materialize(fx, scratch / fx.name)
                    modify(m)
                    case = f"{fx.name}-refused-{what}"
                    r = convert(args.llama_cpp, m, "f16", False, scratch / "out.gguf")
                    assert not r["ok"], f"{case}: the reference converted it"
                    cases[case] = {"fixture": fx.name, "outtype": "f16", "fp8_as_q8": False,
                                   "modify": what, **r}
                    print(case, r)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(cases, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
