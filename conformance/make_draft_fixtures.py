#!/usr/bin/env python3
"""Speculative-decoding draft fixtures and the reference's conversions of them.

A draft checkpoint (EAGLE-3, ...) is converted with `--target-model-dir TARGET`: the
reference reads the target's config.json (vocabulary size, layer count, hidden size) and
its tokenizer. Draft classes are remote code transformers cannot build, so each fixture is
written directly in its vendor's published layout: config.json as given and a safetensors
file whose tensors are drawn with `numpy.random.default_rng(seed)` in sorted name order
(matrices N(0, 0.02), norm scales 1 + 0.05 N, integer tables built from the same draws),
then cast to the fixture's dtype. Each fixture is paired with a committed target fixture of
testdata/hf (named by `target_dir` in its golden variants.json, never copied).

    python conformance/make_draft_fixtures.py --llama-cpp <llama.cpp> \
        --quantize <llama.cpp>/build/bin/llama-quantize [--only eagle3 ...]

writes testdata/hf/<fixture>/ and testdata/golden/<fixture>/ (status.json, variants.json,
commands.txt and one manifest per variant: f32, f16, bf16, q8_0, auto, and llama-quantize's
Q4_K_M of the f32 file), like make_fixtures.py.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import save_file

import golden_pack  # noqa: E402
from fixture_io import materialize, sha256
import make_fixtures as mf

TESTDATA = mf.TESTDATA


def _llama_layer(prefix: str, hidden: int, heads: int, kv: int, head_dim: int, ffn: int,
                 in_dim: int) -> dict:
    """One EAGLE-3 decoder layer: attention reads the embedding and the fused target
    features side by side (`in_dim` = 2 * hidden), plus the `hidden_norm` of the latter."""
    return {
        f"{prefix}input_layernorm.weight": ("norm", [hidden]),
        f"{prefix}hidden_norm.weight": ("norm", [hidden]),
        f"{prefix}post_attention_layernorm.weight": ("norm", [hidden]),
        f"{prefix}self_attn.q_proj.weight": ("mat", [heads * head_dim, in_dim]),
        f"{prefix}self_attn.k_proj.weight": ("mat", [kv * head_dim, in_dim]),
        f"{prefix}self_attn.v_proj.weight": ("mat", [kv * head_dim, in_dim]),
        f"{prefix}self_attn.o_proj.weight": ("mat", [hidden, heads * head_dim]),
        f"{prefix}mlp.gate_proj.weight": ("mat", [ffn, hidden]),
        f"{prefix}mlp.up_proj.weight": ("mat", [ffn, hidden]),
        f"{prefix}mlp.down_proj.weight": ("mat", [hidden, ffn]),
    }


def _eagle3_tables(draft_vocab: int, target_vocab: int, rng, t2d: bool = True) -> dict:
    """`d2t` (int64: target id minus draft id, per draft token) and, with `t2d`, `t2d`
    (bool: which target tokens the draft vocabulary has), from a sorted random subset of
    the target vocabulary."""
    ids = np.sort(rng.choice(target_vocab, size=draft_vocab, replace=False))
    out = {"d2t": torch.tensor(ids - np.arange(draft_vocab), dtype=torch.int64)}
    if t2d:
        out["t2d"] = torch.zeros(target_vocab, dtype=torch.bool)
        out["t2d"][torch.tensor(ids)] = True
    return out


def _draw(shapes: dict, dtype, seed: int) -> tuple[dict, object]:
    rng = np.random.default_rng(seed)
    out = {}
    for name in sorted(shapes):
        kind, shape = shapes[name]
        x = rng.standard_normal(shape)
        x = 1 + 0.05 * x if kind == "norm" else 0.02 * x
        out[name] = torch.tensor(x, dtype=torch.float32).to(dtype).contiguous()
    return out, rng


def eagle3(out: Path, seed: int) -> None:
    """yuhuili's EAGLE-3 layout (LlamaForCausalLMEagle3, `midlayer.*`, no embedding) with
    Llama 3's rope scaling, for the llama-spm target."""
    hidden, heads, kv, ffn, draft_vocab, vocab = 32, 4, 2, 48, 40, 1024
    target_hidden = 256
    cfg = {
        "architectures": ["LlamaForCausalLMEagle3"],
        "bos_token_id": 1, "eos_token_id": 2,
        "draft_vocab_size": draft_vocab,
        "hidden_act": "silu", "hidden_size": hidden, "initializer_range": 0.02,
        "intermediate_size": ffn, "max_position_embeddings": 2048, "model_type": "llama",
        "num_attention_heads": heads, "num_hidden_layers": 1, "num_key_value_heads": kv,
        "pad_token_id": 0, "rms_norm_eps": 1e-05,
        "rope_scaling": {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 512, "rope_type": "llama3"},
        "rope_theta": 500000.0, "tie_word_embeddings": False, "torch_dtype": "float16",
        "transformers_version": "4.28.1", "use_cache": True, "vocab_size": vocab,
    }
    shapes = _llama_layer("midlayer.", hidden, heads, kv, hidden // heads, ffn, 2 * hidden)
    shapes |= {"fc.weight": ("mat", [hidden, 3 * target_hidden]),
               "norm.weight": ("norm", [hidden]),
               "lm_head.weight": ("mat", [draft_vocab, hidden])}
    tensors, rng = _draw(shapes, torch.float16, seed)
    tensors |= _eagle3_tables(draft_vocab, vocab, rng)
    _write(out, cfg, tensors)


def eagle3_speculator(out: Path, seed: int) -> None:
    """RedHat's speculators layout (Eagle3Speculator: the decoder's config nested in
    `transformer_layer_config`, no top-level model_type, `layers.0.*`), with the options
    the reference reads from the raw config set, for the llama-bpe target. Without `t2d`
    (the converter drops it; 49152 bytes for this target)."""
    hidden, heads, kv, ffn, draft_vocab, vocab = 40, 4, 2, 72, 40, 49152
    target_hidden = 64
    cfg = {
        "architectures": ["Eagle3Speculator"],
        "draft_vocab_size": draft_vocab,
        "eagle_aux_hidden_state_layer_ids": [0, 1, 1],
        "has_no_defaults_at_init": False,
        "norm_before_fc": True,
        "norm_before_residual": True,
        "speculators_model_type": "eagle3",
        "speculators_version": "0.1.0.dev14",
        "target_hidden_size": target_hidden,
        "torch_dtype": "bfloat16",
        "transformer_layer_config": {
            "architectures": ["LlamaForCausalLM"], "attention_bias": False,
            "head_dim": hidden // heads, "hidden_act": "silu", "hidden_size": hidden,
            "intermediate_size": ffn, "max_position_embeddings": 4096, "mlp_bias": False,
            "model_type": "llama", "num_attention_heads": heads, "num_hidden_layers": 1,
            "num_key_value_heads": kv, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
            "tie_word_embeddings": False, "vocab_size": vocab,
        },
        "transformers_version": "4.52.4",
    }
    shapes = _llama_layer("layers.0.", hidden, heads, kv, hidden // heads, ffn, 2 * hidden)
    shapes |= {"fc.weight": ("mat", [hidden, 3 * target_hidden]),
               "norm.weight": ("norm", [hidden]),
               "lm_head.weight": ("mat", [draft_vocab, hidden])}
    tensors, rng = _draw(shapes, torch.bfloat16, seed)
    tensors |= _eagle3_tables(draft_vocab, vocab, rng, t2d=False)
    _write(out, cfg, tensors)


def _qwen3_layer(prefix: str, hidden: int, heads: int, kv: int, head_dim: int, ffn: int) -> dict:
    """One Qwen3 decoder layer (q/k norms, no biases)."""
    return {
        f"{prefix}input_layernorm.weight": ("norm", [hidden]),
        f"{prefix}post_attention_layernorm.weight": ("norm", [hidden]),
        f"{prefix}self_attn.q_proj.weight": ("mat", [heads * head_dim, hidden]),
        f"{prefix}self_attn.k_proj.weight": ("mat", [kv * head_dim, hidden]),
        f"{prefix}self_attn.v_proj.weight": ("mat", [kv * head_dim, hidden]),
        f"{prefix}self_attn.o_proj.weight": ("mat", [hidden, heads * head_dim]),
        f"{prefix}self_attn.q_norm.weight": ("norm", [head_dim]),
        f"{prefix}self_attn.k_norm.weight": ("norm", [head_dim]),
        f"{prefix}mlp.gate_proj.weight": ("mat", [ffn, hidden]),
        f"{prefix}mlp.up_proj.weight": ("mat", [ffn, hidden]),
        f"{prefix}mlp.down_proj.weight": ("mat", [hidden, ffn]),
    }


def _dflash(out: Path, seed: int, cls: str, layers: int, extra_cfg: dict,
            dflash_config: dict) -> None:
    """z-lab's DFlash layout (a Qwen3 config, `layers.N.*` without `model.`, `fc` over the
    target layers' hidden states, `hidden_norm`, no embedding or head) for the qwen3 target
    (hidden size 256)."""
    hidden, heads, kv, head_dim, ffn, vocab, target_hidden = 32, 2, 1, 16, 48, 1024, 256
    n_target = len(dflash_config["target_layer_ids"])
    cfg = {
        "architectures": [cls],
        "attention_bias": False, "attention_dropout": 0.0,
        "auto_map": {"AutoModel": "dflash.DFlashDraftModel"},
        "block_size": 16, "bos_token_id": 1001,
        "dflash_config": dflash_config,
        "dtype": "bfloat16", "eos_token_id": 1002, "head_dim": head_dim, "hidden_act": "silu",
        "hidden_size": hidden, "initializer_range": 0.02, "intermediate_size": ffn,
        "layer_types": ["full_attention"] * layers, "max_position_embeddings": 4096,
        "max_window_layers": layers, "model_type": "qwen3", "num_attention_heads": heads,
        "num_hidden_layers": layers, "num_key_value_heads": kv, "num_target_layers": 2,
        "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 1000000,
        "sliding_window": None, "tie_word_embeddings": False, "use_cache": True,
        "use_sliding_window": False, "vocab_size": vocab,
    } | extra_cfg
    shapes = {"fc.weight": ("mat", [hidden, n_target * target_hidden]),
              "hidden_norm.weight": ("norm", [hidden]),
              "norm.weight": ("norm", [hidden])}
    for b in range(layers):
        shapes |= _qwen3_layer(f"layers.{b}.", hidden, heads, kv, head_dim, ffn)
    tensors, _ = _draw(shapes, torch.bfloat16, seed)
    _write(out, cfg, tensors)


def dflash(out: Path, seed: int) -> None:
    """DFlashDraftModel as published: mask token and target layers in `dflash_config`."""
    _dflash(out, seed, "DFlashDraftModel", 2, {},
            {"mask_token_id": 1003, "target_layer_ids": [0, 1]})


def dflash2(out: Path, seed: int) -> None:
    """DFlash2DraftModel with the options the reference reads: an interleaved rope layout
    (`rope_is_neox_style: false`), a sliding window on every layer (`use_swa`), a
    non-causal mask, the value, logit and embedding scales and a soft cap, partial rotary."""
    _dflash(out, seed, "DFlash2DraftModel", 1,
            {"rope_is_neox_style": False, "is_causal": False, "partial_rotary_factor": 0.5},
            {"mask_token_id": 1004, "target_layer_ids": [1], "block_size": 8,
             "use_swa": True, "swa_window_size": 64, "attention_value_scale": 0.5,
             "output_multiplier": 0.25, "final_logit_softcapping": 30.0,
             "input_embedding_scale": 2.0})


def _dspark_heads(hidden: int, draft_vocab: int, rank: int, confidence: bool) -> dict:
    """A DSpark draft's semi-autoregressive Markov head (the previous token's embedding and
    its bias projection over the draft vocabulary) and, optionally, its confidence head."""
    shapes = {"markov_head.markov_w1.weight": ("mat", [draft_vocab, rank]),
              "markov_head.markov_w2.weight": ("mat", [draft_vocab, rank])}
    if confidence:
        shapes["confidence_head.proj.weight"] = ("mat", [1, hidden])
    return shapes


def dspark(out: Path, seed: int) -> None:
    """DSparkDraftModel in the DFlash-lineage layout (a Qwen3 config, `layers.N.*` without
    `model.`): the target layers and mask token at the config root (no `dflash_config`), a
    reduced draft vocabulary with its `d2t` / `t2d` tables and own output head, a Markov head
    and a confidence head, for the qwen3 target (hidden size 256)."""
    hidden, heads, kv, head_dim, ffn, vocab, draft_vocab, target_hidden = 32, 2, 1, 16, 48, 1024, 40, 256
    cfg = {
        "architectures": ["DSparkDraftModel"],
        "attention_bias": False, "attention_dropout": 0.0,
        "block_size": 8, "bos_token_id": 1001, "draft_vocab_size": draft_vocab,
        "dtype": "bfloat16", "eos_token_id": 1002, "head_dim": head_dim, "hidden_act": "silu",
        "hidden_size": hidden, "initializer_range": 0.02, "intermediate_size": ffn,
        "layer_types": ["full_attention"], "markov_head_type": "vanilla",
        "mask_token_id": 1003, "max_position_embeddings": 4096, "max_window_layers": 1,
        "model_type": "qwen3", "num_attention_heads": heads, "num_hidden_layers": 1,
        "num_key_value_heads": kv, "rms_norm_eps": 1e-06, "rope_scaling": None,
        "rope_theta": 1000000, "sliding_window": None, "target_layer_ids": [0, 1],
        "tie_word_embeddings": False, "use_cache": True, "use_sliding_window": False,
        "vocab_size": vocab,
    }
    shapes = {"fc.weight": ("mat", [hidden, 2 * target_hidden]),
              "hidden_norm.weight": ("norm", [hidden]),
              "norm.weight": ("norm", [hidden]),
              "lm_head.weight": ("mat", [draft_vocab, hidden])}
    shapes |= _qwen3_layer("layers.0.", hidden, heads, kv, head_dim, ffn)
    shapes |= _dspark_heads(hidden, draft_vocab, 8, True)
    tensors, rng = _draw(shapes, torch.bfloat16, seed)
    tensors |= _eagle3_tables(draft_vocab, vocab, rng)
    _write(out, cfg, tensors)


def dspark_speculator(out: Path, seed: int) -> None:
    """DSparkSpeculator in the speculators layout (the decoder's config nested in
    `transformer_layer_config`, one-based `aux_hidden_state_layer_ids`), the full target
    vocabulary (its output head is the target's: dropped), a Markov head without a
    confidence head, for the qwen3 target."""
    hidden, heads, kv, head_dim, ffn, vocab, target_hidden = 24, 2, 1, 12, 40, 1024, 256
    cfg = {
        "architectures": ["DSparkSpeculator"],
        "aux_hidden_state_layer_ids": [1, 2],
        "block_size": 4,
        "mask_token_id": 1004,
        "speculators_model_type": "dspark",
        "torch_dtype": "bfloat16",
        "transformer_layer_config": {
            "architectures": ["Qwen3ForCausalLM"], "attention_bias": False,
            "head_dim": head_dim, "hidden_act": "silu", "hidden_size": hidden,
            "intermediate_size": ffn, "max_position_embeddings": 4096,
            "model_type": "qwen3", "num_attention_heads": heads, "num_hidden_layers": 2,
            "num_key_value_heads": kv, "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
            "tie_word_embeddings": False, "vocab_size": vocab,
        },
        "transformers_version": "4.57.1",
    }
    shapes = {"fc.weight": ("mat", [hidden, 2 * target_hidden]),
              "hidden_norm.weight": ("norm", [hidden]),
              "norm.weight": ("norm", [hidden]),
              "lm_head.weight": ("mat", [vocab, hidden])}
    for b in range(2):
        shapes |= _qwen3_layer(f"layers.{b}.", hidden, heads, kv, head_dim, ffn)
    shapes |= _dspark_heads(hidden, vocab, 4, False)
    tensors, _ = _draw(shapes, torch.bfloat16, seed)
    _write(out, cfg, tensors)


def gemma4_dspark(out: Path, seed: int) -> None:
    """Gemma4DSparkModel (a DFlash draft with Gemma 4's full-attention layers: shared K/V
    projection, pre/post norms, layer scalars, proportional rope) with the target layers
    and mask token at the config root, a sliding window on every layer, a tied output head,
    a Markov head and a confidence head stored as `confidence_proj`, for the gemma4 target
    (hidden size 16)."""
    hidden, heads, kv, head_dim, gdim, ffn, vocab, target_hidden = 32, 2, 1, 16, 32, 48, 1024, 16
    cfg = {
        "architectures": ["Gemma4DSparkModel"],
        "attention_bias": False, "attention_k_eq_v": True,
        "dflash_config": {"block_size": 8, "use_swa": True, "swa_window_size": 32},
        "dtype": "bfloat16", "enable_moe_block": False, "global_head_dim": gdim,
        "head_dim": head_dim, "hidden_activation": "gelu_pytorch_tanh", "hidden_size": hidden,
        "intermediate_size": ffn, "layer_types": ["full_attention"] * 2,
        "mask_token_id": 4, "max_position_embeddings": 4096, "num_attention_heads": heads,
        "num_global_key_value_heads": kv, "num_hidden_layers": 2, "num_key_value_heads": kv,
        "rms_norm_eps": 1e-06,
        "rope_parameters": {"full_attention": {"partial_rotary_factor": 0.25,
                                               "rope_theta": 1000000.0,
                                               "rope_type": "proportional"}},
        "sliding_window": 512, "target_layer_ids": [1, 3], "tie_word_embeddings": True,
        "vocab_size": vocab,
    }
    shapes = {"fc.weight": ("mat", [hidden, 2 * target_hidden]),
              "hidden_norm.weight": ("norm", [hidden]),
              "norm.weight": ("norm", [hidden]),
              "confidence_proj.weight": ("mat", [1, hidden])}
    for b in range(2):
        p = f"layers.{b}."
        shapes |= {
            f"{p}input_layernorm.weight": ("norm", [hidden]),
            f"{p}post_attention_layernorm.weight": ("norm", [hidden]),
            f"{p}pre_feedforward_layernorm.weight": ("norm", [hidden]),
            f"{p}post_feedforward_layernorm.weight": ("norm", [hidden]),
            f"{p}layer_scalar": ("norm", [1]),
            f"{p}self_attn.q_proj.weight": ("mat", [heads * gdim, hidden]),
            f"{p}self_attn.k_proj.weight": ("mat", [kv * gdim, hidden]),
            f"{p}self_attn.o_proj.weight": ("mat", [hidden, heads * gdim]),
            f"{p}self_attn.q_norm.weight": ("norm", [gdim]),
            f"{p}self_attn.k_norm.weight": ("norm", [gdim]),
            f"{p}mlp.gate_proj.weight": ("mat", [ffn, hidden]),
            f"{p}mlp.up_proj.weight": ("mat", [ffn, hidden]),
            f"{p}mlp.down_proj.weight": ("mat", [hidden, ffn]),
        }
    shapes |= {k: v for k, v in _dspark_heads(hidden, vocab, 4, False).items()}
    tensors, _ = _draw(shapes, torch.bfloat16, seed)
    _write(out, cfg, tensors)


def _dsv4_dspark_stage(p: str, e: int, hc: int, ne: int, ff: int, nh: int, hd: int,
                       ql: int, og: int, ol: int, tables: bool) -> dict:
    """One DeepSeek-V4 DSpark stage `mtp.K.` (an uncompressed DeepSeek-V4 block): name ->
    (kind, shape), kinds as `_dsv4_tensors` draws them. With `tables`, the hash-routing
    table and the image routing bias a released stage may carry (both dropped)."""
    mix = (2 + hc) * hc
    xw = mf.DSV4_EXPERT_WIDTH
    spec = {
        p + "hc_attn_fn": ("f32", (mix, hc * e)), p + "hc_attn_base": ("f32", (mix,)),
        p + "hc_attn_scale": ("f32", (3,)), p + "hc_ffn_fn": ("f32", (mix, hc * e)),
        p + "hc_ffn_base": ("f32", (mix,)), p + "hc_ffn_scale": ("f32", (3,)),
        p + "attn_norm.weight": ("bf16", (e,)), p + "ffn_norm.weight": ("bf16", (e,)),
        p + "attn.attn_sink": ("f32", (nh,)),
        p + "attn.wq_a.weight": ("fp8", (ql, e)), p + "attn.q_norm.weight": ("bf16", (ql,)),
        p + "attn.wq_b.weight": ("fp8", (nh * hd, ql)),
        p + "attn.wkv.weight": ("fp8", (hd, e)), p + "attn.kv_norm.weight": ("bf16", (hd,)),
        p + "attn.wo_a.weight": ("fp8", (og * ol, nh * hd // og)),
        p + "attn.wo_b.weight": ("fp8", (e, og * ol)),
        p + "ffn.gate.weight": ("bf16", (ne, e)), p + "ffn.gate.bias": ("f32", (ne,)),
        p + "ffn.shared_experts.w1.weight": ("fp8", (ff, e)),
        p + "ffn.shared_experts.w2.weight": ("fp8", (e, ff)),
        p + "ffn.shared_experts.w3.weight": ("fp8", (ff, e)),
    }
    if tables:
        spec[p + "ffn.gate.tid2eid"] = ("tid", (64, 2))
        spec[p + "ffn.gate.bias_vl"] = ("f32", (ne,))
    for x in range(ne):
        for w, (rows, cols) in (("w1", (ff, xw)), ("w2", (xw, ff)), ("w3", (ff, xw))):
            spec[p + f"ffn.experts.{x}.{w}.weight"] = ("fp4", (rows, cols // 2))
            spec[p + f"ffn.experts.{x}.{w}.scale"] = ("e8m0", (rows, cols // 32))
    return spec


def _dsv4_tensors(spec: dict, seed: int, ne: int) -> dict:
    """The tensors of `spec` (name -> (kind, shape)) as make_fixtures draws DeepSeek-V4's,
    from a generator seeded with `seed`."""
    return mf.draw_deepseek4({n: (shape, kind) for n, (kind, shape) in spec.items()},
                             np.random.default_rng(seed), ne)


def _dsv4_dspark_config(arch: str, **over) -> dict:
    """The deepseek4 target fixture's config (DeepSeek-V4's layout) with the DSpark keys."""
    cfg = {"architectures": [arch], "model_type": "deepseek_v4",
           **{k: v for k, v in mf.DSV4.items()}}
    cfg.update(over)
    return dict(sorted(cfg.items()))


def dsv4_dspark(out: Path, seed: int) -> None:
    """DeepSeek-V4-Flash-DSpark's layout: a DeepseekV4ForCausalLM checkpoint (converted with
    `--dspark`) whose `mtp.0.*` stage is the draft (an uncompressed DeepSeek-V4 block with
    MXFP4 routed experts, FP8 attention and shared experts) with its `main_proj` (FP8),
    `main_norm`, Markov head and confidence head; the model's own tensors (a norm and a
    block's norm here) are not read. For the deepseek4 target."""
    e, hc, ne, ff, nh, hd, ql, og, ol = 8, 4, 4, 32, 2, 40, 24, 2, 16
    cfg = _dsv4_dspark_config("DeepseekV4ForCausalLM", dspark_block_size=4,
                              dspark_target_layer_ids=[0, 2], dspark_noise_token_id=3)
    spec = {"norm.weight": ("bf16", (e,)), "layers.0.attn_norm.weight": ("bf16", (e,))}
    m = "mtp.0."
    spec |= _dsv4_dspark_stage(m, e, hc, ne, ff, nh, hd, ql, og, ol, False)
    spec |= {m + "main_proj.weight": ("fp8", (e, 2 * e)), m + "main_norm.weight": ("bf16", (e,)),
             m + "markov_head.markov_w1.weight": ("bf16", (64, 4)),
             m + "markov_head.markov_w2.weight": ("bf16", (64, 4)),
             m + "confidence_head.proj.weight": ("bf16", (1, e)),
             m + "norm.weight": ("bf16", (e,)), m + "hc_head_fn": ("f32", (hc, hc * e)),
             m + "hc_head_base": ("f32", (hc,)), m + "hc_head_scale": ("f32", (1,))}
    _write(out, cfg, _dsv4_tensors(spec, seed, ne))


def dsv4_dspark_class(out: Path, seed: int) -> None:
    """The class named by its config (`DeepseekV4DSparkModel`, no `--dspark`): two stages
    (blocks 0 and 1) with the root tensors split between them, stage 1 carrying a
    hash-routing table and an image routing bias (dropped), BF16 `main_proj` (no scale), no
    confidence head, two hyper-connection copies. For the deepseek4 target."""
    e, hc, ne, ff, nh, hd, ql, og, ol = 8, 2, 4, 32, 2, 40, 24, 2, 16
    cfg = _dsv4_dspark_config("DeepseekV4DSparkModel", hc_mult=hc, dspark_block_size=8,
                              dspark_target_layer_ids=[1], dspark_noise_token_id=0)
    spec = {}
    for k in range(2):
        spec |= _dsv4_dspark_stage(f"mtp.{k}.", e, hc, ne, ff, nh, hd, ql, og, ol, k == 1)
    spec |= {"mtp.0.main_proj.weight": ("bf16", (e, e)),
             "mtp.1.main_norm.weight": ("bf16", (e,)),
             "mtp.1.markov_head.markov_w1.weight": ("bf16", (32, 8)),
             "mtp.0.markov_head.markov_w2.weight": ("bf16", (32, 8)),
             "mtp.1.norm.weight": ("bf16", (e,)), "mtp.0.hc_head_fn": ("f32", (hc, hc * e)),
             "mtp.0.hc_head_base": ("f32", (hc,)), "mtp.1.hc_head_scale": ("f32", (1,))}
    _write(out, cfg, _dsv4_tensors(spec, seed, ne))


def _write(out: Path, cfg: dict, tensors: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})


# fixture -> (builder, target fixture under testdata/hf, seed[, extra converter arguments])
FIXTURES = {
    "eagle3": (eagle3, "llama-spm", 13),
    "eagle3-spec": (eagle3_speculator, "llama-bpe", 29),
    "dflash": (dflash, "qwen3", 13),
    "dflash2": (dflash2, "qwen3", 29),
    "dspark": (dspark, "qwen3", 13),
    "dspark-spec": (dspark_speculator, "qwen3", 29),
    "gemma4-dspark": (gemma4_dspark, "gemma4", 13),
    "dsv4-dspark": (dsv4_dspark, "deepseek4", 13, ["--dspark"]),
    "dsv4-dspark-class": (dsv4_dspark_class, "deepseek4", 29),
}
# Drafts whose f32 file holds already-quantized tensors (DeepSeek-V4's Q8_0 weights from FP8
# and MXFP4 experts): llama-quantize needs --allow-requantize, and the float outtypes write
# one file (its manifest is stored once).
REQUANTIZE = {"dsv4-dspark", "dsv4-dspark-class"}
# Each draft family has fixtures drawn from two seeds (13 and 29), in different layouts
# and options: its second-seed variant costs no extra fixture.


def run_variants(name: str, draft: Path, target: Path, llama: Path, quantize: Path | None,
                 golden: Path, work: Path, seed: int, extra: list[str] = ()) -> None:
    golden.mkdir(parents=True, exist_ok=True)
    status: dict = {}
    variants = []
    commands = [
        "# llama.cpp commit 0c1e57098bba43ac29e6e3b677cdceebdd22334f (0c1e570)",
        f"# environment: PYTHONPATH=<llama.cpp>/gguf-py OMP_NUM_THREADS=2, torch {torch.__version__}",
        "# generated by conformance/make_draft_fixtures.py",
    ]
    outputs: dict[str, Path] = {}
    for t in ["f32", "f16", "bf16", "q8_0", "auto"]:
        v = f"convert-{t}"
        out = work / f"{name}-{t}.gguf"
        args = [str(draft), *extra, "--target-model-dir", str(target), "--outtype", t,
                "--outfile", str(out)]
        t0 = time.time()
        rc, err = mf.convert_in_process(llama, args, work)
        st = {"ok": rc == 0, "returncode": rc, "seconds": round(time.time() - t0, 2)}
        commands.append(f"[{v}] (cd <work> && python <llama.cpp>/convert_hf_to_gguf.py <testdata>/hf/{name} "
                        f"{''.join(a + ' ' for a in extra)}--target-model-dir <testdata>/hf/{target.name} --outtype {t} "
                        f"--outfile <work>/{name}-{t}.gguf)")
        entry = {"variant": v, "tool": "convert_hf_to_gguf.py",
                 "args": ["{model_dir}", *extra, "--target-model-dir", "{target_dir}", "--outtype", t,
                          "--outfile", "{out}"],
                 "ok": rc == 0, "manifests": []}
        if rc != 0:
            st["error_tail"] = err.strip().splitlines()[-6:]
            commands.append("    -> FAILED rc=%d: %s" % (rc, " | ".join(st["error_tail"])))
            print(err[-3000:], file=sys.stderr)
        else:
            st["sha256"] = sha256(out)
            outputs[v] = out
            same = [k for k, o in outputs.items() if k != v and sha256(o) == st["sha256"]]
            if (t == "auto" or name in REQUANTIZE) and same:
                st["identical_to"] = same
                commands.append(f"    -> {v} output is byte-identical to {same[0]} (manifest not duplicated)")
            else:
                mf.manifest(llama, out, golden / f"{v}.json")
                entry["manifests"] = [f"{v}.json"]
        status[v] = st
        variants.append(entry)
    if quantize is not None and "convert-f32" in outputs:
        v = "quant-Q4_K_M"
        out = work / f"{name}-{v}.gguf"
        qargs = ["--allow-requantize"] if name in REQUANTIZE else []
        p = subprocess.run([str(quantize), *qargs, str(outputs["convert-f32"]), str(out), "Q4_K_M"],
                           cwd=work, capture_output=True, text=True, errors="replace")
        st = {"ok": p.returncode == 0, "returncode": p.returncode}
        commands.append(f"[{v}] (cd <work> && <llama.cpp>/build/bin/llama-quantize "
                        + "".join(f"{a} " for a in qargs)
                        + f"<work>/{name}-f32.gguf <work>/{name}-{v}.gguf Q4_K_M)")
        entry = {"variant": v, "tool": "llama-quantize",
                 "args": [*qargs, "{variant:convert-f32}", "{out}", "Q4_K_M"],
                 "ok": p.returncode == 0, "manifests": []}
        if p.returncode == 0:
            st["sha256"] = sha256(out)
            mf.manifest(llama, out, golden / f"{v}.json")
            entry["manifests"] = [f"{v}.json"]
        else:
            st["error_tail"] = (p.stderr or p.stdout).strip().splitlines()[-6:]
        status[v] = st
        variants.append(entry)
    (golden / "status.json").write_text(json.dumps(status, indent=1) + "\n")
    (golden / "variants.json").write_text(json.dumps({
        "llama_cpp": "0c1e570",
        "model_dir": f"<testdata>/hf/{name}",
        "target_dir": f"<testdata>/hf/{target.name}",
        "seed": seed,
        "placeholders": {
            "{model_dir}": "the draft's HF directory (its basename matters: general.name)",
            "{target_dir}": "the target model's HF directory",
            "{variant:NAME}": "the GGUF file produced by variant NAME",
            "{out}": "the output file",
        },
        "variants": variants,
    }, indent=1) + "\n")
    (golden / "commands.txt").write_text("\n".join(commands) + "\n")


# Config variants of the draft fixtures (the keys each class reads beyond what its fixture
# shows): fixture -> {variant: config patch (top-level keys; null deletes)}. Recorded like
# make_fixtures.py --variants (testdata/golden/variants/<fixture>/<variant>.json), each
# converted with the fixture's target and switches.
DRAFT_VARIANTS = {
    "dsv4-dspark": {
        "dspark-block-size": {"dspark_block_size": 16},
        "dspark-target-layers": {"dspark_target_layer_ids": [1, 2, 40]},
        "dspark-target-layers-empty": {"dspark_target_layer_ids": []},
        "dspark-noise-token": {"dspark_noise_token_id": 49151},
        "dspark-no-block-size": {"dspark_block_size": None},
        "dspark-no-target-layers": {"dspark_target_layer_ids": None},
        "dspark-no-noise-token": {"dspark_noise_token_id": None},
        "dspark-class-with-switch": {"architectures": ["DeepseekV4DSparkModel"]},
        "hash-and-compress-ignored": {"num_hash_layers": 3, "compress_ratios": [4, 128, 4, 0]},
        "no-legacy-layer-keys": {"num_hash_layers": None, "compress_ratios": None},
        "layers-2": {"num_hidden_layers": 2},
        "no-rope-scaling": {"rope_scaling": None},
        "rope-linear": {"rope_scaling": {"type": "linear", "factor": 2.0}},
        "partial-rotary": {"qk_rope_head_dim": None, "partial_rotary_factor": 0.4},
        "swiglu-int": {"swiglu_limit": 7},
        "sigmoid-scoring": {"scoring_func": "sigmoid", "routed_scaling_factor": 2.5,
                            "norm_topk_prob": False},
        "hc-2": {"hc_mult": 2, "hc_sinkhorn_iters": 5, "hc_eps": 1e-5},
        "sizes": {"sliding_window": 32, "o_groups": 1, "o_lora_rank": 8, "index_n_heads": 4,
                  "index_head_dim": 8, "index_topk": 16, "compress_rope_theta": 40000.0,
                  "n_shared_experts": 2, "q_lora_rank": 12},
        "no-nextn": {"num_nextn_predict_layers": 0},
        "defaults": {"sliding_window": None, "o_groups": None, "index_topk": None,
                     "hc_eps": None, "swiglu_limit": None, "compress_rope_theta": None},
    },
}


def run_draft_variants(names: list[str] | None, llama: Path, only: list[str] | None) -> None:
    """The DRAFT_VARIANTS records (the record format of make_fixtures.py --variants)."""
    _, gm = mf._reference(llama)
    for fx, variants in DRAFT_VARIANTS.items():
        if names and fx not in names:
            continue
        build, target, seed, *rest = FIXTURES[fx]
        extra = rest[0] if rest else []
        gold = TESTDATA / "golden" / fx
        base_cfg = json.loads((TESTDATA / "hf" / fx / "config.json").read_text())
        outdir = TESTDATA / "golden" / "variants" / fx
        for name, patch in variants.items():
            if only and name not in only:
                continue
            with tempfile.TemporaryDirectory() as tmp:
                work = Path(tmp)
                d = materialize(TESTDATA / "hf" / fx, work / fx)
                tgt = materialize(TESTDATA / "hf" / target, work / target)
                (d / "config.json").write_text(
                    json.dumps(mf._apply_patch(base_cfg, patch), indent=2) + "\n")
                rec: dict = {"fixture": fx, "variant": name, "patch": patch}
                for t in ("f32", "bf16"):
                    out = work / f"out-{t}.gguf"
                    rc, err = mf.convert_in_process(
                        llama, [str(d), *extra, "--target-model-dir", str(tgt), "--outtype", t,
                                "--outfile", str(out)], work)
                    if rc != 0:
                        lines = [x for x in err.strip().splitlines() if x.strip()]
                        rec[t] = {"ok": False, "error": (lines[-1] if lines else "")[:300]}
                        break
                    m = gm.manifest(str(out), None)
                    if t == "f32":
                        base = json.loads((gold / "convert-f32.json").read_text())
                        rec[t] = {"ok": True, **mf._delta(m, base)}
                    else:
                        rec[t] = {"ok": True, "size": m["size"], "sha256": m["sha256"]}
            outdir.mkdir(parents=True, exist_ok=True)
            (outdir / f"{name}.json").write_text(
                json.dumps(rec, separators=(",", ":"), ensure_ascii=False) + "\n")
            st = rec.get("f32", {})
            print(f"{fx} {name}: {'ok' if st.get('ok') else 'REFUSED ' + st.get('error', '')}",
                  file=sys.stderr, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--llama-cpp", type=Path, required=True)
    ap.add_argument("--quantize", type=Path)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--variants", action="store_true",
                    help="record the config variants (DRAFT_VARIANTS) instead of the fixtures")
    ap.add_argument("--variant", nargs="*", help="with --variants: only these variants")
    args = ap.parse_args()
    golden_pack.restore()  # the golden files are read and written loose; share_tensors.py packs them
    if args.variants:
        run_draft_variants(args.only, args.llama_cpp, args.variant)
        return
    for name, (build, target, seed, *extra) in FIXTURES.items():
        if args.only and name not in args.only:
            continue
        dst = TESTDATA / "hf" / name
        if dst.exists():
            shutil.rmtree(dst)
        build(dst, seed)
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            draft = materialize(dst, work / name)
            tgt = materialize(TESTDATA / "hf" / target, work / target)
            run_variants(name, draft, tgt, args.llama_cpp, args.quantize,
                         TESTDATA / "golden" / name, work, seed, *extra)
        print(f"{name}: done", file=sys.stderr)


if __name__ == "__main__":
    main()
