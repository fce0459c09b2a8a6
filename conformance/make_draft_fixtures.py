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


def _write(out: Path, cfg: dict, tensors: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n")
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})


# fixture -> (builder, target fixture under testdata/hf, seed)
FIXTURES = {
    "eagle3": (eagle3, "llama-spm", 13),
    "eagle3-spec": (eagle3_speculator, "llama-bpe", 29),
    "dflash": (dflash, "qwen3", 13),
    "dflash2": (dflash2, "qwen3", 29),
    "dspark": (dspark, "qwen3", 13),
    "dspark-spec": (dspark_speculator, "qwen3", 29),
    "gemma4-dspark": (gemma4_dspark, "gemma4", 13),
}
# Each draft family has fixtures drawn from two seeds (13 and 29), in different layouts
# and options: its second-seed variant costs no extra fixture.


def run_variants(name: str, draft: Path, target: Path, llama: Path, quantize: Path | None,
                 golden: Path, work: Path, seed: int) -> None:
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
        args = [str(draft), "--target-model-dir", str(target), "--outtype", t, "--outfile", str(out)]
        t0 = time.time()
        rc, err = mf.convert_in_process(llama, args, work)
        st = {"ok": rc == 0, "returncode": rc, "seconds": round(time.time() - t0, 2)}
        commands.append(f"[{v}] (cd <work> && python <llama.cpp>/convert_hf_to_gguf.py <testdata>/hf/{name} "
                        f"--target-model-dir <testdata>/hf/{target.name} --outtype {t} "
                        f"--outfile <work>/{name}-{t}.gguf)")
        entry = {"variant": v, "tool": "convert_hf_to_gguf.py",
                 "args": ["{model_dir}", "--target-model-dir", "{target_dir}", "--outtype", t,
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
            if t == "auto" and same:
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
        p = subprocess.run([str(quantize), str(outputs["convert-f32"]), str(out), "Q4_K_M"],
                           cwd=work, capture_output=True, text=True, errors="replace")
        st = {"ok": p.returncode == 0, "returncode": p.returncode}
        commands.append(f"[{v}] (cd <work> && <llama.cpp>/build/bin/llama-quantize "
                        f"<work>/{name}-f32.gguf <work>/{name}-{v}.gguf Q4_K_M)")
        entry = {"variant": v, "tool": "llama-quantize",
                 "args": ["{variant:convert-f32}", "{out}", "Q4_K_M"],
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--llama-cpp", type=Path, required=True)
    ap.add_argument("--quantize", type=Path)
    ap.add_argument("--only", nargs="*")
    args = ap.parse_args()
    golden_pack.restore()  # the golden files are read and written loose; share_tensors.py packs them
    for name, (build, target, seed) in FIXTURES.items():
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
                         TESTDATA / "golden" / name, work, seed)
        print(f"{name}: done", file=sys.stderr)


if __name__ == "__main__":
    main()
