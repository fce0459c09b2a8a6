#!/usr/bin/env python3
"""Writes a SmolLM2-135M-shaped HuggingFace checkpoint for the small-model benchmark.

The shape is SmolLM2-135M-Instruct's (hidden 576, 30 layers, 9 query / 3 key-value heads,
FFN 1536, tied embeddings, 49,152-token BPE vocabulary); the weights are seeded random
bfloat16 (a conversion's cost does not depend on their values) and the tokenizer files are
the real SmolLM vocabulary the fixtures share. About 270 MB.

    python3 conformance/bench/make_small_hf.py OUT_DIR

Needs torch and safetensors (the reference venv has both).
"""
import json
import shutil
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file

ROOT = Path(__file__).resolve().parents[2]
HIDDEN, LAYERS, HEADS, KV_HEADS, FFN, VOCAB = 576, 30, 9, 3, 1536, 49152


def config():
    return {
        "architectures": ["LlamaForCausalLM"],
        "attention_bias": False,
        "bos_token_id": 1,
        "eos_token_id": 2,
        "head_dim": HIDDEN // HEADS,
        "hidden_act": "silu",
        "hidden_size": HIDDEN,
        "initializer_range": 0.041666666666666664,
        "intermediate_size": FFN,
        "max_position_embeddings": 8192,
        "mlp_bias": False,
        "model_type": "llama",
        "num_attention_heads": HEADS,
        "num_hidden_layers": LAYERS,
        "num_key_value_heads": KV_HEADS,
        "pad_token_id": 2,
        "rms_norm_eps": 1e-05,
        "rope_parameters": {"rope_theta": 100000.0, "rope_type": "default"},
        "tie_word_embeddings": True,
        "dtype": "bfloat16",
        "vocab_size": VOCAB,
    }


def tensors():
    g = torch.Generator().manual_seed(135)
    kv = HIDDEN // HEADS * KV_HEADS

    def w(*shape):
        return (torch.randn(*shape, generator=g) * 0.04).to(torch.bfloat16)

    def norm():
        return (1 + torch.randn(HIDDEN, generator=g) * 0.1).to(torch.bfloat16)

    out = {"model.embed_tokens.weight": w(VOCAB, HIDDEN), "model.norm.weight": norm()}
    for i in range(LAYERS):
        p = f"model.layers.{i}"
        out[f"{p}.input_layernorm.weight"] = norm()
        out[f"{p}.post_attention_layernorm.weight"] = norm()
        out[f"{p}.self_attn.q_proj.weight"] = w(HIDDEN, HIDDEN)
        out[f"{p}.self_attn.k_proj.weight"] = w(kv, HIDDEN)
        out[f"{p}.self_attn.v_proj.weight"] = w(kv, HIDDEN)
        out[f"{p}.self_attn.o_proj.weight"] = w(HIDDEN, HIDDEN)
        out[f"{p}.mlp.gate_proj.weight"] = w(FFN, HIDDEN)
        out[f"{p}.mlp.up_proj.weight"] = w(FFN, HIDDEN)
        out[f"{p}.mlp.down_proj.weight"] = w(HIDDEN, FFN)
    return out


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(config(), indent=2) + "\n")
    # The tokenizer files of the llama-bpe fixture, where its shared-files.txt stores them.
    fixture = ROOT / "testdata/hf/llama-bpe"
    for line in (fixture / "shared-files.txt").read_text().splitlines():
        name, _, stored = (part.strip() for part in line.partition("="))
        if name.startswith("tokenizer") or name.endswith("_config.json") or name.endswith("map.json"):
            shutil.copy(fixture / stored, out / name)
    save_file(tensors(), str(out / "model.safetensors"), metadata={"format": "pt"})


if __name__ == "__main__":
    main()
