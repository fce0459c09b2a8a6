#!/usr/bin/env python3
"""Mistral native-format fixtures and their golden data: what the reference's
`convert_hf_to_gguf.py --mistral-format` writes from a `params.json` +
`consolidated*.safetensors` directory with a Tekken (`tekken.json`) or SentencePiece
(`tokenizer.model.v3`) tokenizer.

Two tiny models, their tensors sliced from `testdata/hf/llama-spm` (BF16) and renamed to the
native names (`tok_embeddings`, `layers.N.attention.wq`, `layers.N.feed_forward.w1`, ...):

  mistral-tekken   dim 32, 1 layer, 4 heads of 8, 2 KV heads, FFN 40, no `output.weight`
                   (tied), one `consolidated.safetensors` that also holds three vision tensors
                   (`vision_encoder.*`, `vision_language_adapter.*`, `patch_merger.*`) and a
                   `vision_encoder` section in params.json, which the text conversion drops.
                   `tekken.json` is made here: the 256 byte tokens, merges learned by a plain
                   byte-pair count over a fixed text (ties broken by the smaller pair), a few
                   spare merges past `default_vocab_size` (cut by the loader), mistral_common's 33
                   special tokens padded to `default_num_special_tokens` 36 with `<SPECIAL_i>`, version
                   v7, the real Tekken split pattern (written compactly, one token a line).
  mistral-spm      dim 8, 2 layers, 2 heads of 4, 1 KV head, FFN 12, two shards
                   `consolidated-0000N-of-00002.safetensors`; `llama_4_scaling` and `yarn` in
                   params.json (so the architecture is `mistral3` with the yarn keys); the
                   tokenizer is testdata's 1000-piece SentencePiece model as
                   `tokenizer.model.v3` (by reference, `shared-files.txt`). The first shard
                   holds the embedding alone, so the FP8 fixture can share it.
  mistral-spm-fp8  mistral-spm with its projections in FP8 as Mistral ships them:
                   `quantization: {qformat_weight: fp8_e4m3}` in params.json, each
                   `...wq.weight` F8_E4M3 (round-to-nearest of w / scale, torch's cast) with a
                   0-dim F32 `qscale_weight` = amax / 448 and an unused `qscale_act`; its own
                   second shard, the first (the BF16 embedding) and the tokenizer shared.
  mistral-moe      Mistral's MoE layout (see make_moe), converted as DeepSeek-V2.
  mistral-moe-fp8  mistral-moe with its attention and FFN projections in FP8 the same way
                   (`quantization` in params.json, `qscale_weight` / `qscale_act` beside
                   each): the reference refuses it for every outtype (`MistralMoeModel` has no
                   `dequant_model` of its own and renames the scales to `weight_scale` /
                   `input_scale`, which no tensor map knows: "Can not map tensor
                   '...input_scale'"), and so do we (the cases record the refusal).

For each the reference runs with `--mistral-format` for `--outtype` f32, f16, bf16 and q8_0
(the FP8 one also with `--fp8-as-q8`);
then variants on modified copies (the Rust test makes the same modifications) for f32:
`--disable-mistral-community-chat-template`, a local `chat_template.jinja`, `--vocab-only`,
the SentencePiece file renamed `tokenizer.model` (version v1), both tokenizers present, Tekken
versions v3, v11, v13 and v15, and the refused ones (no params.json, no tokenizer file); and,
without `--mistral-format`, an HF directory (`llama-spm` with its tokenizer.json replaced by
mistral-tekken's `tekken.json`), which `LlamaModel.set_vocab` reads with Mistral's vocabulary
and the community chat template (`HF_CASES`, marked `"hf": true`). The
results go to `testdata/golden/mistral/cases.json` (checked by
`converters/tests/suite/convert/mistral_golden.rs`).

    python3 conformance/make_mistral_fixtures.py --llama-cpp <llama.cpp source>

Needs Python with torch, safetensors, numpy, sentencepiece and mistral_common (the reference
imports it for `--mistral-format`; the pinned sources name no version, 1.13.1 was used).
"""

import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from fixture_io import materialize, sha256, write_json

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
SOURCE = TESTDATA / "hf" / "llama-spm"
OUT = TESTDATA / "golden" / "mistral" / "cases.json"
OUTTYPES = ["f32", "f16", "bf16", "q8_0"]

TEKKEN_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|"
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|"
    r"\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
TEKKEN_TEXT = (
    "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox runs. "
    "Les élèves déjeunent à l'école, très tôt. Über den Fluss, über die Brücke. "
    "[INST] What is the capital of France? [/INST] The capital of France is Paris.\n"
)
N_MERGES = 48
N_SPARE = 4
# mistral_common's special tokens (its `SpecialTokens`), which its instruct tokenizers look up.
SPECIALS = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
            "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
            "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
            "[TOOL_CONTENT]", "[ARGS]", "[CALL_ID]", "[AUDIO]", "[BEGIN_AUDIO]", "[TRANSCRIBE]",
            "[THINK]", "[/THINK]", "[STREAMING_PAD]", "[STREAMING_WORD]", "[NEXT_AUDIO_TEXT]",
            "[REPEAT_AUDIO_TEXT]", "[MODEL_SETTINGS]", "[/MODEL_SETTINGS]"]
N_SPECIAL = 36

LOCAL_TEMPLATE = "{{ bos_token }}{% for m in messages %}[INST]{{ m['content'] }}[/INST]{% endfor %}\n"


def source_tensors() -> dict:
    from safetensors.torch import load_file
    sd = {}
    for part in sorted(p.name for p in SOURCE.iterdir() if p.name.endswith(".safetensors")):
        sd.update(load_file(str(SOURCE / part)))
    return sd


def native(sd: dict, dim: int, heads: int, kv: int, head_dim: int, ffn: int, vocab: int, layers: int) -> dict:
    """The source's tensors cut to the small shape, under Mistral's native names."""
    q, k = heads * head_dim, kv * head_dim
    out = {"tok_embeddings.weight": sd["model.embed_tokens.weight"][:vocab, :dim],
           "norm.weight": sd["model.norm.weight"][:dim]}
    for b in range(layers):
        s, d = f"model.layers.{b}.", f"layers.{b}."
        out[d + "attention_norm.weight"] = sd[s + "input_layernorm.weight"][:dim]
        out[d + "ffn_norm.weight"] = sd[s + "post_attention_layernorm.weight"][:dim]
        out[d + "attention.wq.weight"] = sd[s + "self_attn.q_proj.weight"][:q, :dim]
        out[d + "attention.wk.weight"] = sd[s + "self_attn.k_proj.weight"][:k, :dim]
        out[d + "attention.wv.weight"] = sd[s + "self_attn.v_proj.weight"][:k, :dim]
        out[d + "attention.wo.weight"] = sd[s + "self_attn.o_proj.weight"][:dim, :q]
        out[d + "feed_forward.w1.weight"] = sd[s + "mlp.gate_proj.weight"][:ffn, :dim]
        out[d + "feed_forward.w2.weight"] = sd[s + "mlp.down_proj.weight"][:dim, :ffn]
        out[d + "feed_forward.w3.weight"] = sd[s + "mlp.up_proj.weight"][:ffn, :dim]
    return {n: t.contiguous() for n, t in out.items()}


def learn_merges(text: bytes, n: int) -> list:
    """Byte-pair merges: the most frequent adjacent pair each round (ties: the smallest pair);
    a merge that spells an existing token again is applied but not listed twice."""
    seq = [bytes([c]) for c in text]
    merges = []
    while len(merges) < n:
        counts = {}
        for a, b in zip(seq, seq[1:]):
            counts[(a, b)] = counts.get((a, b), 0) + 1
        if not counts:
            break
        best = min(counts, key=lambda p: (-counts[p], p))
        if best[0] + best[1] not in merges:
            merges.append(best[0] + best[1])
        out, i = [], 0
        while i < len(seq):
            if i + 1 < len(seq) and (seq[i], seq[i + 1]) == best:
                out.append(seq[i] + seq[i + 1])
                i += 2
            else:
                out.append(seq[i])
                i += 1
        seq = out
    return merges


def tekken_json(version: str = "v7") -> dict:
    merges = learn_merges(TEKKEN_TEXT.encode("utf-8"), N_MERGES + N_SPARE)
    tokens = [bytes([i]) for i in range(256)] + merges
    vocab = []
    for rank, tb in enumerate(tokens):
        try:
            s = tb.decode("utf-8")
        except UnicodeDecodeError:
            s = None
        vocab.append({"rank": rank, "token_bytes": base64.b64encode(tb).decode("ascii"), "token_str": s})
    specials = [{"rank": i, "token_str": s, "is_control": True} for i, s in enumerate(SPECIALS)]
    return {
        "config": {
            "pattern": TEKKEN_PATTERN,
            "num_vocab_tokens": len(vocab),
            "default_vocab_size": N_SPECIAL + 256 + N_MERGES,
            "default_num_special_tokens": N_SPECIAL,
            "version": version,
        },
        "vocab": vocab,
        "special_tokens": specials,
        "version": 1,
        "type": "Tekken",
    }


def write_tekken(p: Path, j: dict):
    """tekken.json with one vocabulary entry a line (indenting it would double its size)."""
    head = {k: v for k, v in j.items() if k != "vocab"}
    text = json.dumps(head, ensure_ascii=False)[:-1] + ', "vocab": [\n'
    text += ",\n".join(json.dumps(v, ensure_ascii=False) for v in j["vocab"]) + "\n]}\n"
    p.write_text(text, encoding="utf-8")


def make_tekken() -> Path:
    import torch
    from safetensors.torch import save_file
    dst = TESTDATA / "hf" / "mistral-tekken"
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    n_vocab = N_SPECIAL + 256 + N_MERGES
    t = native(source_tensors(), dim=32, heads=4, kv=2, head_dim=8, ffn=40, vocab=n_vocab, layers=1)
    g = torch.Generator().manual_seed(13)
    for name, shape in [("vision_encoder.transformer.layers.0.attention.wq.weight", (4, 4)),
                        ("vision_language_adapter.w_in.weight", (4, 4)),
                        ("patch_merger.merging_layer.weight", (4, 4))]:
        t[name] = (torch.randn(shape, generator=g) * 0.02).to(torch.bfloat16)
    save_file(t, str(dst / "consolidated.safetensors"), metadata={"format": "pt"})
    write_json(dst / "params.json", {
        "dim": 32, "n_layers": 1, "head_dim": 8, "hidden_dim": 40, "n_heads": 4, "n_kv_heads": 2,
        "norm_eps": 1e-05, "vocab_size": n_vocab, "rope_theta": 1000000.0, "sliding_window": 4096,
        "vision_encoder": {"hidden_size": 4, "num_channels": 3, "image_size": 16, "patch_size": 4,
                           "num_hidden_layers": 1, "num_attention_heads": 1, "rope_theta": 10000.0,
                           "image_token_id": 10, "image_break_token_id": 12, "image_end_token_id": 13,
                           "adapter_bias": False},
    })
    write_tekken(dst / "tekken.json", tekken_json())
    return dst


def make_spm() -> Path:
    from safetensors.torch import save_file
    dst = TESTDATA / "hf" / "mistral-spm"
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    t = native(source_tensors(), dim=8, heads=2, kv=1, head_dim=4, ffn=12, vocab=1000, layers=2)
    first = {n: v for n, v in t.items() if n.startswith("tok_embeddings")}
    second = {n: v for n, v in t.items() if n not in first}
    save_file(first, str(dst / "consolidated-00001-of-00002.safetensors"), metadata={"format": "pt"})
    save_file(second, str(dst / "consolidated-00002-of-00002.safetensors"), metadata={"format": "pt"})
    write_json(dst / "params.json", {
        "dim": 8, "n_layers": 2, "head_dim": 4, "hidden_dim": 12, "n_heads": 2, "n_kv_heads": 1,
        "norm_eps": 1e-05, "vocab_size": 1000, "rope_theta": 1000000.0, "max_position_embeddings": 262144,
        "tied_embeddings": True,
        "yarn": {"original_max_position_embeddings": 16384, "factor": 16.0, "apply_scale": False,
                 "beta": 32.0, "alpha": 1.0},
        "llama_4_scaling": {"original_max_position_embeddings": 16384, "beta": 0.1},
    })
    (dst / "shared-files.txt").write_text("tokenizer.model.v3 = ../../tokenizers/spm/tokenizer.model\n")
    return dst


def fp8_copy(src: Path, dst: Path, quantized) -> None:
    """dst: src's second shard with each 2-D weight `quantized(name)` selects as F8_E4M3 with a
    0-dim F32 `qscale_weight` (amax / 448) and `qscale_act` (0.5), the rest unchanged, and
    params.json's `quantization` (per-tensor FP8, as Mistral's native FP8 checkpoints)."""
    import torch
    from safetensors.torch import load_file, save_file
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    second = load_file(str(src / "consolidated-00002-of-00002.safetensors"))
    out = {}
    for name in sorted(second):
        w = second[name]
        if w.dim() == 2 and quantized(name):
            scale = (w.float().abs().max() / 448.0).to(torch.float32)
            out[name] = (w.float() / scale).to(torch.float8_e4m3fn)
            base = name.removesuffix("weight")
            out[base + "qscale_weight"] = scale.reshape(())
            out[base + "qscale_act"] = torch.tensor(0.5, dtype=torch.float32)
        else:
            out[name] = w
    save_file(out, str(dst / "consolidated-00002-of-00002.safetensors"), metadata={"format": "pt"})
    params = json.loads((src / "params.json").read_text())
    params["quantization"] = {"qformat_weight": "fp8_e4m3", "qscheme_act": "TENSOR"}
    write_json(dst / "params.json", params)


def make_spm_fp8() -> Path:
    """mistral-spm-fp8: every 2-D weight of mistral-spm's second shard in FP8 (fp8_copy)."""
    src = TESTDATA / "hf" / "mistral-spm"
    dst = TESTDATA / "hf" / "mistral-spm-fp8"
    fp8_copy(src, dst, lambda name: True)
    (dst / "shared-files.txt").write_text(
        "consolidated-00001-of-00002.safetensors = ../mistral-spm/consolidated-00001-of-00002.safetensors\n"
        "tokenizer.model.v3 = ../../tokenizers/spm/tokenizer.model\n")
    return dst


def make_moe_fp8() -> Path:
    """mistral-moe-fp8: mistral-moe's projections (`attention.*`, `feed_forward.*`,
    `experts.*`, `shared_experts.*` 2-D weights) in FP8 (fp8_copy); the router, the output
    and the norms stay BF16. Reads mistral-moe's own shard."""
    src = TESTDATA / "hf" / "mistral-moe"
    dst = TESTDATA / "hf" / "mistral-moe-fp8"
    projections = ("attention.w", "feed_forward.", "experts.")
    fp8_copy(src, dst, lambda name: any(p in name for p in projections))
    shutil.copy(src / "config.json", dst / "config.json")
    (dst / "shared-files.txt").write_text(
        "consolidated-00001-of-00002.safetensors = ../mistral-spm/consolidated-00001-of-00002.safetensors\n"
        "tokenizer.model.v3 = ../../tokenizers/spm/tokenizer.model\n")
    return dst


MOE_PARAMS = {
    "dim": 8, "n_layers": 2, "head_dim": 4, "hidden_dim": 12, "n_heads": 2, "n_kv_heads": 2,
    "norm_eps": 1e-05, "vocab_size": 1000, "rope_theta": 10000.0, "max_position_embeddings": 8192,
    "q_lora_rank": 4, "kv_lora_rank": 4, "qk_rope_head_dim": 2, "qk_nope_head_dim": 2, "v_head_dim": 2,
    "tied_embeddings": False,
    "yarn": {"original_max_position_embeddings": 4096, "factor": 2.0, "apply_scale": True,
             "beta": 32.0, "alpha": 1.0},
    "moe": {"num_experts": 2, "num_experts_per_tok": 1, "expert_hidden_dim": 4, "num_shared_experts": 1,
            "first_k_dense_replace": 1, "route_every_n": 1, "routed_scale": 1.5,
            "num_expert_groups": 1, "num_expert_groups_per_tok": 1},
}


def make_moe() -> Path:
    """mistral-moe: Mistral's MoE layout (`moe` in params.json, MLA attention as in Mistral
    Large 3), which the reference converts as DeepSeek-V2 (`MistralMoeModel`): dim 8, 2 layers
    (the first dense: `first_k_dense_replace` 1), 2 heads, q/kv LoRA rank 4, rope / nope / v
    head dims 2, 2 routed experts of FFN 4 plus a shared one; `yarn` (which the class needs).
    Random BF16 tensors under the native names (`attention.wq_a`, `attention.wkv_b`,
    `experts.E.w1`, `shared_experts.w1`, `gate`, ...), `output.weight` untied; the embedding
    shard and `tokenizer.model.v3` are mistral-spm's (by reference). A config.json holding only
    `architectures` sits beside params.json: `DeepseekV2Model.__init__` reads the HF hparams
    too and fails without one (case `no-config`)."""
    import torch
    from safetensors.torch import save_file
    dst = TESTDATA / "hf" / "mistral-moe"
    if dst.exists():
        shutil.rmtree(dst)
    dst.mkdir(parents=True)
    p = MOE_PARAMS
    g = torch.Generator().manual_seed(21)
    dim, nh, ql, kl = p["dim"], p["n_heads"], p["q_lora_rank"], p["kv_lora_rank"]
    rope, nope, vd = p["qk_rope_head_dim"], p["qk_nope_head_dim"], p["v_head_dim"]
    t = {"norm.weight": 1 + 0.1 * torch.randn(dim, generator=g),
         "output.weight": 0.02 * torch.randn(p["vocab_size"], dim, generator=g)}
    for b in range(p["n_layers"]):
        d = f"layers.{b}."
        t[d + "attention_norm.weight"] = 1 + 0.1 * torch.randn(dim, generator=g)
        t[d + "ffn_norm.weight"] = 1 + 0.1 * torch.randn(dim, generator=g)
        t[d + "attention.wq_a.weight"] = 0.1 * torch.randn(ql, dim, generator=g)
        t[d + "attention.q_a_norm.weight"] = 1 + 0.1 * torch.randn(ql, generator=g)
        t[d + "attention.wq_b.weight"] = 0.1 * torch.randn(nh * (nope + rope), ql, generator=g)
        t[d + "attention.wkv_a_with_mqa.weight"] = 0.1 * torch.randn(kl + rope, dim, generator=g)
        t[d + "attention.kv_a_norm.weight"] = 1 + 0.1 * torch.randn(kl, generator=g)
        t[d + "attention.wkv_b.weight"] = 0.1 * torch.randn(nh * (nope + vd), kl, generator=g)
        t[d + "attention.wo.weight"] = 0.1 * torch.randn(dim, nh * vd, generator=g)
        ffn = [("w1", 0), ("w2", 1), ("w3", 0)]
        if b < p["moe"]["first_k_dense_replace"]:
            for w, tr in ffn:
                shape = (dim, p["hidden_dim"]) if tr else (p["hidden_dim"], dim)
                t[d + f"feed_forward.{w}.weight"] = 0.1 * torch.randn(*shape, generator=g)
            continue
        eh = p["moe"]["expert_hidden_dim"]
        t[d + "gate.weight"] = 0.1 * torch.randn(p["moe"]["num_experts"], dim, generator=g)
        for e in range(p["moe"]["num_experts"]):
            for w, tr in ffn:
                t[d + f"experts.{e}.{w}.weight"] = 0.1 * torch.randn(*((dim, eh) if tr else (eh, dim)), generator=g)
        for w, tr in ffn:
            t[d + f"shared_experts.{w}.weight"] = 0.1 * torch.randn(*((dim, eh) if tr else (eh, dim)), generator=g)
    t = {n: v.to(torch.bfloat16).contiguous() for n, v in t.items()}
    save_file(t, str(dst / "consolidated-00002-of-00002.safetensors"), metadata={"format": "pt"})
    write_json(dst / "params.json", p)
    write_json(dst / "config.json", {"architectures": ["MistralLarge3ForCausalLM"]})
    (dst / "shared-files.txt").write_text(
        "consolidated-00001-of-00002.safetensors = ../mistral-spm/consolidated-00001-of-00002.safetensors\n"
        "tokenizer.model.v3 = ../../tokenizers/spm/tokenizer.model\n")
    return dst


# Modifications of a materialized copy (the Rust test makes the same ones).
def tekken_version(v):
    def f(d: Path):
        j = json.loads((d / "tekken.json").read_text(encoding="utf-8"))
        j["config"]["version"] = v
        write_tekken(d / "tekken.json", j)
    return f


MODIFY = {
    "local-template": lambda d: (d / "chat_template.jinja").write_text(LOCAL_TEMPLATE, encoding="utf-8"),
    "spm-v1": lambda d: (d / "tokenizer.model.v3").rename(d / "tokenizer.model"),
    "both-tokenizers": lambda d: shutil.copy(TESTDATA / "tokenizers" / "spm" / "tokenizer.model",
                                             d / "tokenizer.model.v3"),
    "tekken-v3": tekken_version("v3"),
    "tekken-v11": tekken_version("v11"),
    "tekken-v13": tekken_version("v13"),
    "tekken-v15": tekken_version("v15"),
    "no-params": lambda d: (d / "params.json").unlink(),
    "no-tokenizer": lambda d: (d / "tekken.json").unlink(),
    "no-config": lambda d: (d / "config.json").unlink(),
}

# (case suffix, modification, extra flags), run for f32 on one fixture.
VARIANTS = {
    "mistral-tekken": [
        ("no-community-template", None, ["--disable-mistral-community-chat-template"]),
        ("local-template", "local-template", []),
        ("local-template-no-community-template", "local-template", ["--disable-mistral-community-chat-template"]),
        ("vocab-only", None, ["--vocab-only"]),
        ("both-tokenizers", "both-tokenizers", []),
        ("tekken-v3", "tekken-v3", []),
        ("tekken-v11", "tekken-v11", []),
        ("tekken-v13", "tekken-v13", []),
        ("tekken-v15", "tekken-v15", []),
        ("tekken-v15-no-community-template", "tekken-v15", ["--disable-mistral-community-chat-template"]),
        ("no-params", "no-params", []),
        ("no-tokenizer", "no-tokenizer", []),
    ],
    "mistral-spm": [
        ("no-community-template", None, ["--disable-mistral-community-chat-template"]),
        ("spm-v1", "spm-v1", []),
    ],
    "mistral-spm-fp8": [
        ("fp8-as-q8", None, ["--fp8-as-q8"]),
    ],
    "mistral-moe": [
        ("no-config", "no-config", []),
    ],
    "mistral-moe-fp8": [],
}


def hf_tekken(d: Path):
    """An HF directory (llama-spm) whose tokenizer is a tekken.json (no tokenizer.json)."""
    (d / "tokenizer.json").unlink()
    shutil.copy(TESTDATA / "hf" / "mistral-tekken" / "tekken.json", d / "tekken.json")


# HF directories the reference reads with LlamaModel.set_vocab's tekken.json path (no
# --mistral-format): (case, source fixture, modification), f32.
HF_CASES = [("llama-spm-tekken-f32", "llama-spm", hf_tekken)]


def convert(llama_cpp: Path, model: Path, outtype: str, flags: list, out: Path, mistral=True) -> dict:
    env = dict(os.environ, PYTHONPATH=str(llama_cpp / "gguf-py"), NO_LOCAL_GGUF="1")
    cmd = [sys.executable, str(llama_cpp / "convert_hf_to_gguf.py"), str(model)]
    cmd += ["--mistral-format"] if mistral else []
    cmd += ["--outfile", str(out), "--outtype", outtype] + flags
    r = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return {"ok": False, "returncode": r.returncode,
                "error_tail": [l.replace(str(model.parent), "<scratch>") for l in r.stderr.strip().splitlines()[-1:]]}
    digest = sha256(out)
    out.unlink()
    return {"ok": True, "sha256": digest}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llama-cpp", type=Path, required=True)
    ap.add_argument("--fixtures-only", action="store_true", help="write the fixtures, run nothing")
    ap.add_argument("--only", nargs="*", help="run only these fixtures (their cases replace the ones in cases.json)")
    ap.add_argument("--hf-only", action="store_true", help="run only the HF-directory cases (HF_CASES)")
    args = ap.parse_args()
    fixtures = [make_tekken(), make_spm(), make_spm_fp8(), make_moe(), make_moe_fp8()]
    if args.fixtures_only:
        return
    cases = {}
    if args.only or args.hf_only:
        only = args.only or []
        fixtures = [f for f in fixtures if f.name in only]
        cases = {k: v for k, v in json.loads(OUT.read_text()).items()
                 if v["fixture"] not in only and not (args.hf_only and v.get("hf"))}
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for fx in fixtures:
            model = materialize(fx, scratch / fx.name)
            for outtype in OUTTYPES:
                name = f"{fx.name}-{outtype}"
                r = convert(args.llama_cpp, model, outtype, [], scratch / "out.gguf")
                cases[name] = {"fixture": fx.name, "outtype": outtype, "flags": [], **r}
                print(name, r, flush=True)
            for suffix, mod, flags in VARIANTS[fx.name]:
                model = materialize(fx, scratch / "modified" / fx.name)
                if mod is not None:
                    MODIFY[mod](model)
                name = f"{fx.name}-f32-{suffix}"
                r = convert(args.llama_cpp, model, "f32", flags, scratch / "out.gguf")
                case = {"fixture": fx.name, "outtype": "f32", "flags": flags, **r}
                if mod is not None:
                    case["modify"] = mod
                cases[name] = case
                print(name, r, flush=True)
        if args.hf_only or not args.only:
            for name, source, mod in HF_CASES:
                model = materialize(TESTDATA / "hf" / source, scratch / "hf" / source)
                mod(model)
                r = convert(args.llama_cpp, model, "f32", [], scratch / "out.gguf", mistral=False)
                cases[name] = {"fixture": source, "outtype": "f32", "flags": [], "hf": True, **r}
                print(name, r, flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(cases, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
