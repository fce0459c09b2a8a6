#!/usr/bin/env python3
"""Pre-quantized checkpoint fixtures that the reference repacks or dequantizes (other than FP8,
see make_fp8_fixtures.py), and their golden data.

Each fixture is an existing tiny fixture plus a small second safetensors part holding the
pre-quantized tensors in the layout real checkpoints ship; the first part is the source
fixture's own `model.safetensors`, shared by reference (`shared-files.txt`), and
`model.safetensors.index.json` lists both, so a fixture costs only its quantized tensors.

  gptoss-mxfp4   the `gptoss` model (3 layers, bf16 experts) plus a fourth layer holding only
                 MXFP4 experts as OpenAI ships gpt-oss (`quant_method: "mxfp4"`):
                 `mlp.experts.gate_up_proj_blocks` [4, 64, 1, 16] U8 (gate and up rows
                 interleaved), `gate_up_proj_scales` [4, 64, 1] U8 (E8M0), `down_proj_blocks`
                 [4, 32, 1, 16], `down_proj_scales` [4, 32, 1], and the bf16 biases. MXFP4
                 needs rows of whole 32-element blocks, so these experts are 32 wide where the
                 rest of the model is 8 wide (the converters never compare widths; the file is
                 a conversion case, not a runnable model). The values are random normal
                 weights quantized as OpenAI's checkpoints are (per 32 values, exponent
                 `floor(log2(amax)) - 2`, codes the nearest E2M1 value).

  kimik3-mxfp4   the `kimik3` model plus a fourth layer holding only routed experts as
                 Moonshot ships Kimi-K3: compressed-tensors `mxfp4-pack-quantized`
                 (`weight_packed` U8 [32, 16], `weight_scale` U8 [32, 1] per expert and
                 projection), 32 wide; the f32 output is also requantized (Q4_K_M, Q2_K) as
                 one-pass `--outtype` quantization does.

  mimo2-mxfp4    the `mimo2` model with its routed experts (blocks 1 and 2, four each) stored as
                 MiMo V2 stores them in MXFP4 (`quantization_config.store_dtype: "mxfp4"`, no
                 `quant_method`): per expert and projection a U8 `weight` [32, 16] (two E2M1
                 codes a byte) and a U8 E8M0 `weight_scale` [32, 1], 32 wide where the model
                 is 16 / 8 wide (unloadable, as qwen3moe-nvfp4). One `model.safetensors`
                 (the reference refuses bf16 routed experts beside MXFP4 ones, so the source's
                 experts are left out of it, not shadowed); its other tensors are the
                 source's, which share_tensors.py stores once.

  llama-bpe-nvfp4  `llama-bpe` plus a third layer whose projections are ModelOpt NVFP4
                 (`hf_quant_config.json`): U8 weights (2 E2M1 codes a byte), E4M3
                 `weight_scale` per 16 inputs, F32 `weight_scale_2` / `input_scale`,
                 `k_scale` / `v_scale`; v_proj's factors are exactly 1 (not written).
  llama-bpe-nvfp4-ct  the same layer in compressed-tensors' `nvfp4-pack-quantized` layout
                 (config.json): `weight_packed`, `weight_scale`, and the reciprocal factors
                 `weight_global_scale` / `input_global_scale` [1].
  llama-bpe-nvfp4-w4a16  ModelOpt `quant_algo: "W4A16_NVFP4"` (no `input_scale`): the
                 reference lists the weights in `general.tensor_extra.*` (prec_a4 false).
  qwen3moe-nvfp4 `qwen3moe` plus a third layer of four experts, each projection a ModelOpt
                 NVFP4 tensor of its own, 64 wide (the rest of the model is 32 wide), which the
                 reference stacks per projection.
  llama-bpe-gptq4, llama-bpe-gptq8, llama-bpe-w4a16, llama-bpe-w4a16-asym
                 the `llama-bpe` model (2 layers) plus a third layer: f16 norms and the seven
                 projections quantized with asymmetric groups of 32 as GPTQ 4-bit (act_order
                 off) and 8-bit (act_order on: `g_idx` from a permutation), and as
                 compressed-tensors `pack-quantized` W4A16, symmetric and with zero points.

For each fixture the pinned `convert_hf_to_gguf.py` runs for `--outtype` f32, f16, bf16, q8_0 and
auto, and on modified copies the reference refuses (their changes the Rust test makes too);
`llama-quantize` runs on the f16 output for MXFP4_MOE and Q4_K_M, and (with
`--allow-requantize`) Q8_0. Everything goes to `testdata/golden/prequant/cases.json`
(checked by `converters/tests/suite/convert/prequant_golden.rs`).

    python3 conformance/make_prequant_fixtures.py --llama-cpp <llama.cpp source> \\
        --llama-quantize <llama-quantize binary>

Needs Python with torch, safetensors, numpy and transformers.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from fixture_io import materialize, sha256

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
OUT = TESTDATA / "golden" / "prequant" / "cases.json"
OUTTYPES = ["f32", "f16", "bf16", "q8_0", "auto"]
PART1 = "model-00001-of-00002.safetensors"
PART2 = "model-00002-of-00002.safetensors"
SEED = 15


# E2M1 values of the codes 0..7 (bit 3 is the sign).
E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def mxfp4_quantize(w):
    """[..., cols] float → (blocks [..., cols/32, 16] u8, scales [..., cols/32] u8): per 32
    values an E8M0 exponent `floor(log2(amax)) - 2 + 127` and each value's nearest E2M1 code,
    element 2k in the low nibble of byte k and 2k+1 in the high one."""
    import torch
    *lead, cols = w.shape
    g = w.float().reshape(*lead, cols // 32, 32)
    amax = g.abs().amax(dim=-1)
    e = torch.floor(torch.log2(torch.where(amax > 0, amax, torch.ones_like(amax)))) - 2
    scales = (e + 127).clamp(0, 254).to(torch.uint8)
    x = g / torch.pow(2.0, e).unsqueeze(-1)
    mags = torch.tensor(E2M1)
    idx = (x.abs().unsqueeze(-1) - mags).abs().argmin(dim=-1)
    codes = (idx | torch.where(x < 0, 8, 0)).to(torch.uint8)
    blocks = codes[..., 0::2] | (codes[..., 1::2] << 4)
    return blocks.contiguous(), scales.contiguous()


def gptoss_mxfp4():
    """The fourth layer's tensors and the config changes."""
    import torch
    gen = torch.Generator().manual_seed(SEED)
    n_expert, n_embd, n_ff, bid = 4, 32, 32, 3
    p = f"model.layers.{bid}.mlp.experts."
    gate_up = torch.randn(n_expert, 2 * n_ff, n_embd, generator=gen) * 0.05
    down = torch.randn(n_expert, n_embd, n_ff, generator=gen) * 0.05
    t = {}
    t[p + "gate_up_proj_blocks"], t[p + "gate_up_proj_scales"] = mxfp4_quantize(gate_up)
    t[p + "down_proj_blocks"], t[p + "down_proj_scales"] = mxfp4_quantize(down)
    t[p + "gate_up_proj_bias"] = (torch.randn(n_expert, 2 * n_ff, generator=gen) * 0.1).to(torch.bfloat16)
    t[p + "down_proj_bias"] = (torch.randn(n_expert, n_embd, generator=gen) * 0.1).to(torch.bfloat16)

    def config(c):
        c["num_hidden_layers"] = 4
        c["layer_types"] = c["layer_types"] + ["full_attention"]
        c["quantization_config"] = {
            "quant_method": "mxfp4",
            "modules_to_not_convert": ["model.layers.*.self_attn", "model.layers.*.mlp.router",
                                       "model.embed_tokens", "lm_head"],
        }
    return t, config


def kimik3_mxfp4():
    """A fourth Kimi-K3 layer of routed experts only, in compressed-tensors'
    `mxfp4-pack-quantized` layout (the one Moonshot publishes), and the config changes."""
    import torch
    gen = torch.Generator().manual_seed(SEED)
    n_expert, latent, n_ff, bid = 4, 32, 32, 3
    p = f"language_model.model.layers.{bid}.block_sparse_moe.experts."
    t = {}
    for x in range(n_expert):
        for w, (rows, cols) in (("w1", (n_ff, latent)), ("w2", (latent, n_ff)), ("w3", (n_ff, latent))):
            blocks, scales = mxfp4_quantize(torch.randn(rows, cols, generator=gen) * 0.05)
            t[p + f"{x}.{w}.weight_packed"] = blocks.reshape(rows, cols // 2).contiguous()
            t[p + f"{x}.{w}.weight_scale"] = scales
    mxfp4 = {"num_bits": 4, "type": "float", "group_size": 32, "strategy": "group",
             "symmetric": True, "dynamic": False, "scale_dtype": "torch.uint8"}

    def config(c):
        c["text_config"]["num_hidden_layers"] = 4
        c["quantization_config"] = {
            "quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized",
            "quantization_status": "compressed",
            "config_groups": {"group_0": {"format": "mxfp4-pack-quantized", "weights": mxfp4,
                                          "targets": ["re:.*block_sparse_moe.experts.*"]}},
            "ignore": ["lm_head", "re:.*self_attn.*", "re:vision_tower.*", "re:mm_projector.*"],
        }
    return t, config


def mimo2_mxfp4():
    """Blocks 1 and 2's routed experts in MiMo V2's MXFP4 layout, the source tensors they
    replace, and the config change."""
    import torch
    gen = torch.Generator().manual_seed(SEED)
    n_expert, width = 4, 32
    t = {}
    for bid in (1, 2):
        for x in range(n_expert):
            for w in ("gate", "up", "down"):
                blocks, scales = mxfp4_quantize(torch.randn(width, width, generator=gen) * 0.05)
                name = f"model.layers.{bid}.mlp.experts.{x}.{w}_proj.weight"
                t[name] = blocks.reshape(width, width // 2).contiguous()
                t[name + "_scale"] = scales

    def config(c):
        c["quantization_config"] = {"store_dtype": "mxfp4", "mxfp4_block_size": 32}

    def replaced(name):
        return ".mlp.experts." in name and name.startswith("model.layers.")
    return t, config, {}, replaced


# The projections of the Llama layer added to llama-bpe (name, out, in).
LLAMA_PROJ = [("self_attn.q_proj", 64, 64), ("self_attn.k_proj", 32, 64), ("self_attn.v_proj", 32, 64),
              ("self_attn.o_proj", 64, 64), ("mlp.gate_proj", 128, 64), ("mlp.up_proj", 128, 64),
              ("mlp.down_proj", 64, 128)]
GROUP = 32


def pack_int32(q, bits, dim):
    """Unsigned `bits`-bit values → int32 words along `dim`, value j of a word at bit bits*j
    (zero-padded to whole words)."""
    import numpy as np
    q = np.moveaxis(np.asarray(q, dtype=np.uint64), dim, 0)
    pf = 32 // bits
    n = -(-q.shape[0] // pf)
    pad = np.zeros((n * pf,) + q.shape[1:], dtype=np.uint64)
    pad[: q.shape[0]] = q
    words = np.zeros((n,) + q.shape[1:], dtype=np.uint64)
    for j in range(pf):
        words |= pad[j::pf] << np.uint64(bits * j)
    return np.moveaxis(words.astype(np.uint32).view(np.int32), 0, dim)


def llama_layer2(extra):
    """The norms of the added layer 2 (f16, as llama-bpe) and one tensors dict per projection."""
    import torch
    gen = torch.Generator().manual_seed(SEED)
    t = {}
    for n in ("input_layernorm", "post_attention_layernorm"):
        t[f"model.layers.2.{n}.weight"] = (1 + 0.05 * torch.randn(64, generator=gen)).to(torch.float16)
    for name, out, inp in LLAMA_PROJ:
        w = torch.randn(out, inp, generator=gen) * 0.02
        t.update(extra(f"model.layers.2.{name}", w, gen))
    return t


def gptq(bits, act_order):
    """GPTQ (AutoGPTQ / GPTQModel `checkpoint_format: gptq`): asymmetric per group of 32 inputs;
    `qweight` [in / pf, out] packed along the inputs, `qzeros` [groups, out / pf] holding
    zero - 1, `scales` [groups, out] f16, `g_idx` [in] (with act_order a permutation's groups)."""
    import numpy as np
    import torch
    maxq = 2 ** bits - 1

    def one(base, w, gen):
        out, inp = w.shape
        g = inp // GROUP
        if act_order:
            perm = torch.randperm(inp, generator=gen)
            g_idx = torch.empty(inp, dtype=torch.int32)
            g_idx[perm] = (torch.arange(inp) // GROUP).to(torch.int32)
        else:
            g_idx = (torch.arange(inp) // GROUP).to(torch.int32)
        wt = w.t()  # [in, out]
        scales = torch.empty(g, out)
        zeros = torch.empty(g, out)
        for gi in range(g):
            rows = wt[g_idx == gi]
            lo, hi = rows.min(0).values.clamp(max=0), rows.max(0).values.clamp(min=0)
            sc = ((hi - lo) / maxq).clamp(min=1e-8)
            scales[gi], zeros[gi] = sc, torch.round(-lo / sc).clamp(0, maxq)
        scales = scales.to(torch.float16)
        s_full, z_full = scales.float()[g_idx.long()], zeros[g_idx.long()]
        q = torch.clamp(torch.round(wt / s_full) + z_full, 0, maxq).to(torch.int64).numpy()
        zq = (zeros.to(torch.int64).numpy() - 1) & maxq
        return {
            base + ".qweight": torch.from_numpy(pack_int32(q, bits, 0).copy()),
            base + ".qzeros": torch.from_numpy(pack_int32(zq, bits, 1).copy()),
            base + ".scales": scales,
            base + ".g_idx": g_idx,
        }

    def config(c):
        c["num_hidden_layers"] = 3
        c["quantization_config"] = {
            "bits": bits, "group_size": GROUP, "desc_act": act_order, "sym": False,
            "lm_head": False, "quant_method": "gptq", "checkpoint_format": "gptq",
            "damp_percent": 0.01, "static_groups": False, "true_sequential": True,
        }
    del np
    return llama_layer2(one), config


def pack_quantized(symmetric):
    """compressed-tensors `pack-quantized` (llm-compressor W4A16): groups of 32 inputs,
    `weight_packed` [out, in / 8] int32 packed along the inputs (value + 8 when symmetric),
    `weight_scale` [out, groups] bf16, `weight_shape` [2] int64, and for the asymmetric form
    `weight_zero_point` [out / 8, groups] int32 packed along the outputs."""
    import torch
    bits, mask = 4, 15

    def one(base, w, gen):
        out, inp = w.shape
        g = w.reshape(out, inp // GROUP, GROUP)
        t = {}
        if symmetric:
            sc = (g.abs().amax(-1) / 7).clamp(min=1e-8).to(torch.bfloat16)
            q = torch.clamp(torch.round(g / sc.float().unsqueeze(-1)), -8, 7) + 8
        else:
            lo, hi = g.amin(-1).clamp(max=0), g.amax(-1).clamp(min=0)
            sc = ((hi - lo) / mask).clamp(min=1e-8).to(torch.bfloat16)
            zp = torch.round(-lo / sc.float()).clamp(0, mask)
            q = torch.clamp(torch.round(g / sc.float().unsqueeze(-1)) + zp.unsqueeze(-1), 0, mask)
            t[base + ".weight_zero_point"] = torch.from_numpy(
                pack_int32(zp.to(torch.int64).numpy(), bits, 0).copy())
        q = q.reshape(out, inp).to(torch.int64).numpy()
        t[base + ".weight_packed"] = torch.from_numpy(pack_int32(q, bits, 1).copy())
        t[base + ".weight_scale"] = sc
        t[base + ".weight_shape"] = torch.tensor([out, inp], dtype=torch.int64)
        return t

    def config(c):
        c["num_hidden_layers"] = 3
        c["quantization_config"] = {
            "quant_method": "compressed-tensors",
            "format": "pack-quantized",
            "quantization_status": "compressed",
            "config_groups": {"group_0": {
                "targets": ["Linear"],
                "weights": {"num_bits": bits, "type": "int", "symmetric": symmetric,
                            "strategy": "group", "group_size": GROUP, "dynamic": False,
                            "observer": "minmax", "actorder": None, "block_structure": None},
                "input_activations": None, "output_activations": None,
            }},
            "ignore": ["lm_head"],
            "kv_cache_scheme": None,
        }
    return llama_layer2(one), config


E2M1_CODES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def nvfp4_quantize(w, trivial):
    """ModelOpt NVFP4 of one [out, in] weight: (codes U8 [out, in / 2], E4M3 scales
    [out, in / 16], F32 global scale `weight_scale_2`). The global scale is amax / (6 * 448)
    (exactly 1 with `trivial`), each 16-value scale amax16 / 6 / weight_scale_2, each code the
    nearest E2M1 value of w / (scale * scale_2), element 2i in the low nibble of byte i."""
    import torch
    out, inp = w.shape
    s2 = torch.tensor(1.0) if trivial else (w.abs().amax() / (6 * 448)).float()
    g = w.reshape(out, inp // 16, 16)
    sc = (g.abs().amax(-1) / 6 / s2).clamp(min=2 ** -9, max=448).to(torch.float8_e4m3fn)
    x = g / (sc.float() * s2).unsqueeze(-1)
    mags = torch.tensor(E2M1_CODES)
    idx = (x.abs().unsqueeze(-1) - mags).abs().argmin(-1)
    codes = (idx | torch.where(x < 0, 8, 0)).to(torch.uint8).reshape(out, inp)
    return (codes[:, 0::2] | (codes[:, 1::2] << 4)).contiguous(), sc.contiguous(), s2.reshape(()).to(torch.float32)


def nvfp4(layout="modelopt", algo="NVFP4"):
    """NVFP4 projections of Llama's layer 2 (see `nvfp4_quantize`). `layout` "modelopt"
    (`hf_quant_config.json` with `algo`): `weight` U8, `weight_scale` E4M3, F32
    `weight_scale_2` and (unless W4A16) `input_scale`, `k_scale` / `v_scale` on k/v; v_proj's
    factors are exactly 1 (not written). "ct" (compressed-tensors `nvfp4-pack-quantized` in
    config.json): `weight_packed`, `weight_scale`, and the reciprocals `weight_global_scale` /
    `input_global_scale` [1]."""
    import torch

    def one(base, w, gen):
        trivial = base.endswith("v_proj")
        codes, sc, s2 = nvfp4_quantize(w, trivial)
        inp = torch.tensor(1.0 if trivial else 0.0123, dtype=torch.float32)
        if layout == "ct":
            return {
                base + ".weight_packed": codes,
                base + ".weight_scale": sc,
                base + ".weight_global_scale": (1.0 / s2).reshape(1),
                base + ".input_global_scale": (1.0 / inp).reshape(1),
            }
        t = {
            base + ".weight": codes,
            base + ".weight_scale": sc,
            base + ".weight_scale_2": s2,
        }
        if algo != "W4A16_NVFP4":
            t[base + ".input_scale"] = inp
        if base.endswith("k_proj"):
            t[base + ".k_scale"] = torch.tensor(1.0, dtype=torch.float32)
        if base.endswith("v_proj"):
            t[base + ".v_scale"] = torch.tensor(1.0, dtype=torch.float32)
        return t

    def config(c):
        c["num_hidden_layers"] = 3
        if layout == "ct":
            scheme = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16,
                      "symmetric": True, "dynamic": False}
            c["quantization_config"] = {
                "quant_method": "compressed-tensors",
                "format": "nvfp4-pack-quantized",
                "quantization_status": "compressed",
                "config_groups": {"group_0": {
                    "targets": ["Linear"], "format": "nvfp4-pack-quantized", "weights": scheme,
                    "input_activations": dict(scheme, dynamic="local"),
                }},
                "ignore": ["lm_head"],
                "kv_cache_scheme": None,
            }
    if layout == "ct":
        return llama_layer2(one), config
    extra = {"hf_quant_config.json": {
        "producer": {"name": "modelopt", "version": "0.29.0"},
        "quantization": {"quant_algo": algo, "kv_cache_quant_algo": "FP8", "group_size": 16,
                         "exclude_modules": ["lm_head"]},
    }}
    return llama_layer2(one), config, extra


def qwen3moe_nvfp4():
    """A third qwen3moe layer holding only its four experts, each projection a ModelOpt NVFP4
    tensor of its own (`mlp.experts.E.{gate,up,down}_proj.weight` [64, 32] U8 with its
    `weight_scale` [64, 4] E4M3, `weight_scale_2`, `input_scale`), 64 wide where the rest of
    the model is 32 (NVFP4 rows are whole 64-value blocks). down_proj's factors are 1 for
    every expert (not written); gate_proj's input_scale is shared by the experts."""
    import torch
    gen = torch.Generator().manual_seed(SEED)
    t = {}
    for e in range(4):
        for proj in ("gate_proj", "up_proj", "down_proj"):
            base = f"model.layers.2.mlp.experts.{e}.{proj}"
            w = torch.randn(64, 64, generator=gen) * 0.02
            trivial = proj == "down_proj"
            codes, sc, s2 = nvfp4_quantize(w, trivial)
            t[base + ".weight"], t[base + ".weight_scale"], t[base + ".weight_scale_2"] = codes, sc, s2
            inp = 1.0 if trivial else (0.02 if proj == "gate_proj" else 0.01 * (e + 1))
            t[base + ".input_scale"] = torch.tensor(inp, dtype=torch.float32)

    def config(c):
        c["num_hidden_layers"] = 3
    extra = {"hf_quant_config.json": {
        "producer": {"name": "modelopt", "version": "0.29.0"},
        "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": None, "group_size": 16,
                         "exclude_modules": ["lm_head", "model.layers.*.mlp.gate"]},
    }}
    return t, config, extra


FIXTURES = {
    "gptoss-mxfp4": ("gptoss", gptoss_mxfp4),
    "kimik3-mxfp4": ("kimik3", kimik3_mxfp4),
    "mimo2-mxfp4": ("mimo2", mimo2_mxfp4),
    "llama-bpe-nvfp4": ("llama-bpe", nvfp4),
    "llama-bpe-nvfp4-ct": ("llama-bpe", lambda: nvfp4("ct")),
    "llama-bpe-nvfp4-w4a16": ("llama-bpe", lambda: nvfp4("modelopt", "W4A16_NVFP4")),
    "qwen3moe-nvfp4": ("qwen3moe", qwen3moe_nvfp4),
    "llama-bpe-gptq4": ("llama-bpe", lambda: gptq(4, False)),
    "llama-bpe-gptq8": ("llama-bpe", lambda: gptq(8, True)),
    "llama-bpe-w4a16": ("llama-bpe", lambda: pack_quantized(True)),
    "llama-bpe-w4a16-asym": ("llama-bpe", lambda: pack_quantized(False)),
}


# Fixtures whose first part is a copy of the source's weights, not a reference to them: the
# source is stored cut (a hollow file spliced from another fixture), which a plain reference
# would make share_tensors.py store whole; the copy is cut the same way.
COPY_PART1 = {"kimik3-mxfp4"}


def source_names(src: Path) -> list:
    from safetensors import safe_open
    with safe_open(str(src / "model.safetensors"), "pt") as f:
        return list(f.keys())


def write_fixture(name: str) -> Path:
    from safetensors.torch import save_file
    source, make = FIXTURES[name]
    src = TESTDATA / "hf" / source
    dst = TESTDATA / "hf" / name
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    made = make()
    tensors, edit = made[0], made[1]
    for fname, value in (made[2] if len(made) > 2 else {}).items():
        (dst / fname).write_text(json.dumps(value, indent=2) + "\n")
    if len(made) > 3:
        return write_replacing(src, dst, source, tensors, edit, made[3])
    save_file(tensors, str(dst / PART2), metadata={"format": "pt"})
    config = json.loads((src / "config.json").read_text())
    edit(config)
    (dst / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    weight_map = {n: PART1 for n in source_names(src)}
    weight_map.update({n: PART2 for n in sorted(tensors)})
    index = {"metadata": {}, "weight_map": weight_map}
    (dst / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n")
    if name in COPY_PART1:
        shutil.copyfile(src / "model.safetensors", dst / PART1)
        lines = []
    else:
        lines = [f"{PART1} = ../{source}/model.safetensors"]
    shared = {}
    if (src / "shared-files.txt").is_file():
        for line in (src / "shared-files.txt").read_text().splitlines():
            if "=" in line:
                k, v = (x.strip() for x in line.split("=", 1))
                shared[k] = f"../{source}/{v}"
    for p in sorted(src.iterdir()):
        if p.is_file() and p.name not in ("config.json", "shared-files.txt") \
                and not p.name.endswith((".safetensors", ".index.json")):
            shared[p.name] = f"../{source}/{p.name}"
    lines += [f"{k} = {shared[k]}" for k in sorted(shared)]
    (dst / "shared-files.txt").write_text("\n".join(lines) + "\n")
    return dst


def write_replacing(src: Path, dst: Path, source: str, tensors: dict, edit, replaced) -> Path:
    """A fixture of one `model.safetensors`: the source's tensors but those `replaced`
    accepts, and `tensors`; the config edited; the source's other files referenced."""
    from safetensors.torch import load_file, save_file
    with tempfile.TemporaryDirectory() as tmp:
        whole = materialize(src, Path(tmp) / source)
        base = load_file(str(whole / "model.safetensors"))
    out = {n: v for n, v in base.items() if not replaced(n)}
    out.update(tensors)
    save_file(out, str(dst / "model.safetensors"), metadata={"format": "pt"})
    config = json.loads((src / "config.json").read_text())
    edit(config)
    (dst / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    shared = {}
    if (src / "shared-files.txt").is_file():
        for line in (src / "shared-files.txt").read_text().splitlines():
            if "=" in line:
                k, v = (x.strip() for x in line.split("=", 1))
                if "|" not in v:  # the source's own weights are not referenced
                    shared[k] = f"../{source}/{v}"
    for p in sorted(src.iterdir()):
        if p.is_file() and p.name not in ("config.json", "shared-files.txt") \
                and not p.name.endswith((".safetensors", ".index.json", ".hollow")):
            shared[p.name] = f"../{source}/{p.name}"
    (dst / "shared-files.txt").write_text("".join(f"{k} = {shared[k]}\n" for k in sorted(shared)))
    return dst


def run(cmd, env=None) -> dict:
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return {"ok": False, "returncode": r.returncode, "error_tail": r.stderr.strip().splitlines()[-1:]}
    return {"ok": True}


def convert(llama_cpp: Path, model: Path, outtype: str, out: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(llama_cpp / "gguf-py"), NO_LOCAL_GGUF="1")
    cmd = [sys.executable, str(llama_cpp / "convert_hf_to_gguf.py"), str(model),
           "--outfile", str(out), "--outtype", outtype]
    r = run(cmd, env)
    if r["ok"]:
        r["sha256"] = sha256(out)
    return r


def quantize(binary: Path, src: Path, ftype: str, out: Path, requantize: bool = False) -> dict:
    allow = requantize or ftype == "Q8_0"
    cmd = [str(binary)] + (["--allow-requantize"] if allow else []) + [str(src), str(out), ftype, "2"]
    r = run(cmd, dict(os.environ, OMP_NUM_THREADS="2"))
    if r["ok"]:
        r["sha256"] = sha256(out)
        out.unlink()
    return r


# The refused variants: a modification of the fixture's materialized copy (the Rust test makes
# the same one).
def refuse_scales_shape(d: Path):
    """The down_proj scales of layer 3 with two scales per row (blocks have one)."""
    from safetensors.torch import load_file, save_file
    import torch
    t = load_file(str(d / PART2))
    k = "model.layers.3.mlp.experts.down_proj_scales"
    t[k] = torch.cat([t[k], t[k]], dim=-1).contiguous()
    save_file(t, str(d / PART2), metadata={"format": "pt"})


def refuse_blocks_dtype(d: Path):
    """The gate_up blocks of layer 3 stored as I8."""
    from safetensors.torch import load_file, save_file
    t = load_file(str(d / PART2))
    k = "model.layers.3.mlp.experts.gate_up_proj_blocks"
    t[k] = t[k].view(__import__("torch").int8).contiguous()
    save_file(t, str(d / PART2), metadata={"format": "pt"})


def edit_config(d: Path, f):
    c = json.loads((d / "config.json").read_text())
    f(c["quantization_config"])
    (d / "config.json").write_text(json.dumps(c, indent=2) + "\n")


def drop_tensor(d: Path, name: str):
    """Removes a tensor from the second part and the index."""
    from safetensors.torch import load_file, save_file
    t = load_file(str(d / PART2))
    del t[name]
    save_file(t, str(d / PART2), metadata={"format": "pt"})
    idx = json.loads((d / "model.safetensors.index.json").read_text())
    del idx["weight_map"][name]
    (d / "model.safetensors.index.json").write_text(json.dumps(idx, indent=2) + "\n")


def reshape_tensor(d: Path, name: str, shape):
    """A tensor of the second part stored under another shape (same bytes)."""
    from safetensors.torch import load_file, save_file
    t = load_file(str(d / PART2))
    t[name] = t[name].reshape(shape).contiguous()
    save_file(t, str(d / PART2), metadata={"format": "pt"})


def rename_tensor(d: Path, name: str, new: str):
    """A tensor of the second part stored (and indexed) under another name."""
    from safetensors.torch import load_file, save_file
    t = load_file(str(d / PART2))
    t[new] = t.pop(name)
    save_file(t, str(d / PART2), metadata={"format": "pt"})
    idx = json.loads((d / "model.safetensors.index.json").read_text())
    idx["weight_map"][new] = idx["weight_map"].pop(name)
    (d / "model.safetensors.index.json").write_text(json.dumps(idx, indent=2) + "\n")


K3_EXPERTS = "language_model.model.layers.3.block_sparse_moe."
MIMO_EXPERTS = "model.layers.1.mlp.experts."


def drop_one(d: Path, *names: str):
    """Removes tensors from a one-file fixture's model.safetensors."""
    from safetensors.torch import load_file, save_file
    t = load_file(str(d / "model.safetensors"))
    for n in names:
        del t[n]
    save_file(t, str(d / "model.safetensors"), metadata={"format": "pt"})


def rename_one(d: Path, name: str, new: str):
    """Renames a tensor of a one-file fixture's model.safetensors."""
    from safetensors.torch import load_file, save_file
    t = load_file(str(d / "model.safetensors"))
    t[new] = t.pop(name)
    save_file(t, str(d / "model.safetensors"), metadata={"format": "pt"})

REFUSED = {
    "kimik3-mxfp4": {
        # KeyError: missing <scale> for <packed>.
        "k3-no-scale": lambda d: drop_tensor(d, K3_EXPERTS + "experts.2.w2.weight_scale"),
        # KeyError: layer 3 w1: 1 of 4 experts missing.
        "k3-no-expert": lambda d: drop_tensor(d, K3_EXPERTS + "experts.3.w1.weight_packed"),
        # NotImplementedError: an MXFP4 tensor outside the routed experts.
        "k3-stray": lambda d: rename_tensor(d, K3_EXPERTS + "experts.1.w3.weight_packed",
                                            K3_EXPERTS + "shared_experts.up_proj.weight_packed"),
    },
    "gptoss-mxfp4": {"scales-shape": refuse_scales_shape, "blocks-dtype": refuse_blocks_dtype},
    "mimo2-mxfp4": {
        # KeyError: missing <weight>_scale for <weight>.
        "mimo-no-scale": lambda d: drop_one(d, MIMO_EXPERTS + "2.down_proj.weight_scale"),
        # KeyError: layer 1 gate_proj: 3 of 4 experts present.
        "mimo-no-expert": lambda d: drop_one(d, MIMO_EXPERTS + "3.gate_proj.weight",
                                             MIMO_EXPERTS + "3.gate_proj.weight_scale"),
        # NotImplementedError: an MXFP4 tensor outside the routed experts.
        "mimo-stray": lambda d: rename_one(d, MIMO_EXPERTS + "1.up_proj.weight_scale",
                                           "model.layers.1.mlp.shared_up.weight_scale"),
        # NotImplementedError: MXFP4 block size 64 is not ggml's.
        "mimo-block-64": lambda d: edit_config(d, lambda q: q.update(mxfp4_block_size=64)),
    },
    "llama-bpe-gptq4": {
        "bits-3": lambda d: edit_config(d, lambda q: q.update(bits=3)),
        "no-g-idx": lambda d: drop_tensor(d, "model.layers.2.mlp.up_proj.g_idx"),
    },
    "llama-bpe-nvfp4": {
        "nvfp4-scales-shape": lambda d: reshape_tensor(d, "model.layers.2.mlp.up_proj.weight_scale", [64, 8]),
    },
    "llama-bpe-w4a16": {
        "strategy-channel": lambda d: edit_config(
            d, lambda q: q["config_groups"]["group_0"]["weights"].update(strategy="channel")),
        "no-weight-shape": lambda d: drop_tensor(d, "model.layers.2.mlp.up_proj.weight_shape"),
    },
}
QUANTS = {"gptoss-mxfp4": ["MXFP4_MOE", "Q4_K_M", "Q8_0"], "llama-bpe-nvfp4": ["Q4_K_M", "Q8_0"],
          "kimik3-mxfp4": ["MXFP4_MOE", "Q4_K_M", "Q8_0"]}
QUANTS["mimo2-mxfp4"] = ["MXFP4_MOE", "Q4_K_M", "Q8_0"]
# llama-quantize --allow-requantize on the f32 output: what one-pass `--outtype` quantization
# writes (it always allows requantizing).
REQUANTS = {"kimik3-mxfp4": ["Q4_K_M", "Q2_K"]}
REQUANTS["mimo2-mxfp4"] = ["Q4_K_M", "Q2_K"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llama-cpp", type=Path, required=True)
    ap.add_argument("--llama-quantize", type=Path, required=True)
    ap.add_argument("--only", nargs="*", help="fixtures to remake (the others' cases are kept)")
    args = ap.parse_args()
    cases = json.loads(OUT.read_text()) if OUT.is_file() else {}
    names = args.only or list(FIXTURES)
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for name in names:
            cases = {k: v for k, v in cases.items() if v.get("fixture") != name}
            fx = write_fixture(name)
            model = materialize(fx, scratch / fx.name)
            for outtype in OUTTYPES:
                case = f"{name}-{outtype}"
                out = scratch / f"{case}.gguf"
                r = convert(args.llama_cpp, model, outtype, out)
                cases[case] = {"fixture": name, "outtype": outtype, **r}
                print(case, r.get("sha256") or r)
                if outtype == "f32" and r["ok"]:
                    for ftype in REQUANTS.get(name, []):
                        qcase = f"{name}-f32-requant-{ftype}"
                        q = quantize(args.llama_quantize, out, ftype, scratch / "q.gguf", True)
                        cases[qcase] = {"fixture": name, "outtype": "f32", "quantize": ftype,
                                        "requantize": True, **q}
                        print(qcase, q.get("sha256") or q)
                if outtype == "f16" and r["ok"]:
                    for ftype in QUANTS.get(name, []):
                        qcase = f"{name}-f16-quant-{ftype}"
                        q = quantize(args.llama_quantize, out, ftype, scratch / "q.gguf")
                        cases[qcase] = {"fixture": name, "outtype": "f16", "quantize": ftype, **q}
                        print(qcase, q.get("sha256") or q)
                if out.exists():
                    out.unlink()
            for what, modify in REFUSED.get(name, {}).items():
                m = materialize(fx, scratch / fx.name)
                modify(m)
                case = f"{name}-refused-{what}"
                r = convert(args.llama_cpp, m, "f16", scratch / "out.gguf")
                assert not r["ok"], f"{case}: the reference converted it"
                cases[case] = {"fixture": name, "outtype": "f16", "modify": what, **r}
                print(case, r)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(cases, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
