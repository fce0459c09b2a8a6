#!/usr/bin/env python3
"""Tiny HuggingFace models of the HF architectures, converted by the reference.

For every fixture below this script

1. builds the model with transformers from a small config (fixed seed, a few layers, sizes
   that are not all powers of two, several experts for MoE), overwrites every parameter with
   numpy draws in sorted parameter-name order (matrices, embeddings and biases N(0, 0.02),
   norm scales 1 + 0.05 N), casts to bf16 and saves it with `save_pretrained`;
2. adds a real tokenizer: the 1000-piece SentencePiece model of ../shared/fixtures/hf/llama-spm
   for families whose converter reads SentencePiece, the SmolLM2 BPE tokenizer.json of
   ../shared/fixtures/hf/llama-bpe (pre-tokenizer hash "smollm") for the others;
3. runs llama.cpp's convert_hf_to_gguf.py for --outtype f32, f16, bf16, q8_0 and auto, and
   llama-quantize Q4_K_M on the f32 output when the binary exists;
4. writes the fixture to testdata/hf/<fixture>/ (big tokenizer files once, in
   testdata/tokenizers/<name>/, named by the fixture's shared-files.txt) and the golden data to
   testdata/golden/<fixture>/ in the format of ../shared/golden (variants.json, status.json,
   commands.txt, one manifest per variant).

Usage (see README.md; torch's default MKL dispatch on an AVX-512 x86-64 CPU, no MKL_CBWR):
    make_fixtures.py --llama-cpp DIR [--quantize BIN] [--only NAME ...] [--work DIR]
    make_fixtures.py --llama-cpp DIR --golden-only [--only NAME ...]   # goldens only
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import golden_pack  # noqa: E402
from fixture_io import materialize, sha256

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
# The shared reference directory (tools/gguf_manifest.py, fixtures): GGUFKIT_SHARED, or
# the checkout's sibling `shared`.
SHARED = Path(os.environ.get("GGUFKIT_SHARED") or ROOT.parent / "shared")

# Tokenizers: (source fixture in ../shared/fixtures/hf, shared files, per-fixture files).
TOKENIZERS = {
    "spm": ("llama-spm", ["tokenizer.model", "tokenizer.json"],
            ["tokenizer_config.json", "special_tokens_map.json"]),
    "smollm": ("llama-bpe", ["tokenizer.json"],
               ["tokenizer_config.json", "special_tokens_map.json"]),
}
# GLM-4's converter needs `<|user|>` among the added tokens (its eot): the SmolLM2 file
# with that one token appended (id 49152); `<|endoftext|>` is already token 0.
TOKENIZERS["smollm-glm"] = ("llama-bpe", ["tokenizer.json"],
                            ["tokenizer_config.json", "special_tokens_map.json"])
# GLM-4.5's converter (`_set_vocab_glm`) needs `[gMASK]`, `<|user|>` and `<|observation|>`
# among the added tokens: the SmolLM2 file with those appended (ids 49152-49154).
TOKENIZERS["smollm-glm45"] = ("llama-bpe", ["tokenizer.json"],
                              ["tokenizer_config.json", "special_tokens_map.json"])
# XLM-RoBERTa: a 300-piece unigram SentencePiece model trained here (deterministically) on
# generated text, with the HF tokenizer files transformers makes from it.
TOKENIZERS["xlmr"] = (None, ["sentencepiece.bpe.model", "tokenizer.json"],
                      ["tokenizer_config.json"])
# BERT's WordPiece (bge-small's vocab.txt / tokenizer.json, 30522 tokens).
TOKENIZERS["bert"] = ("bert", ["tokenizer.json", "vocab.txt"],
                      ["tokenizer_config.json", "special_tokens_map.json"])
# InternLM3's converter moves eos to a special "<|im_end|>" in tokenizer_config.json's
# added_tokens_decoder: the SentencePiece fixture's files with piece 999 declared so.
TOKENIZERS["spm-internlm3"] = ("llama-spm", ["tokenizer.model", "tokenizer.json"],
                               ["tokenizer_config.json", "special_tokens_map.json"])
# The SentencePiece model alone (no tokenizer.json): Mamba's converter takes tokenizer.json
# first, so this is how its SentencePiece path is taken.
TOKENIZERS["spm-model"] = ("llama-spm", ["tokenizer.model"],
                           ["tokenizer_config.json", "special_tokens_map.json"])
# T5: XLM-R's 300-piece unigram model as `spiece.model` (stored once, under
# XLM-R's name), an `added_tokens.json` of four sentinels (ids 300-303) written here and a
# small tokenizer_config.json; no tokenizer.json (the reference's T5 path does not read it).
TOKENIZERS["t5"] = (None, ["spiece.model"],
                    ["tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"])
# DeepSeek V3.2's tokenizer files as published: tokenizer_class LlamaTokenizerFast and
# add_bos_token true in tokenizer_config.json (the SmolLM2 files, so edited).
# The SmolLM2 files with tokenizer_config.json's chat template removed (Kimi-K3's converter
# then writes the template it bundles).
TOKENIZERS["smollm-notemplate"] = ("llama-bpe", ["tokenizer.json"],
                                   ["tokenizer_config.json", "special_tokens_map.json"])
TOKENIZERS["smollm-ds32"] = ("llama-bpe", ["tokenizer.json"],
                             ["tokenizer_config.json", "special_tokens_map.json"])
# GLM-5's tokenizer_config names PreTrainedTokenizerFast (tokenizer.json loaded as it is,
# its added tokens kept): the GLM-4.5 files so edited (glm_moe_dsa has no registered
# tokenizer class, so the SmolLM2 config's GPT2Tokenizer would drop [gMASK] & co.).
TOKENIZERS["smollm-glm5"] = ("llama-bpe", ["tokenizer.json"],
                             ["tokenizer_config.json", "special_tokens_map.json"])
# ChatGLM's remote-code checkpoints have no registered tokenizer class: tokenizer_config.json
# names PreTrainedTokenizerFast, so tokenizer.json is loaded with its added tokens (the
# GLM-4 file, `<|user|>` appended; a GPT2Tokenizer would drop it).
TOKENIZERS["smollm-glm-fast"] = ("llama-bpe", ["tokenizer.json"],
                                 ["tokenizer_config.json", "special_tokens_map.json"])
# Snowflake Arctic's converter lays tokenizer_config.json's added_tokens_decoder over its
# SentencePiece table: the SentencePiece fixture's files with a redefined piece (998, not
# special), a special token past the pieces (1002, within vocab_size) and one past
# vocab_size (ignored).
TOKENIZERS["spm-arctic"] = ("llama-spm", ["tokenizer.model", "tokenizer.json"],
                            ["tokenizer_config.json", "special_tokens_map.json"])
# Shared files stored under another name: kind -> {fixture file name: stored name}.
SHARED_NAMES = {"t5": {"spiece.model": "sentencepiece.bpe.model"}}
# Gemma's 1000-piece SentencePiece model (<pad> <eos> <bos> <unk>, Gemma's special pieces),
# the files of the synced gemma3 fixture (testdata/hf/gemma3, referenced, not copied).
TOKENIZERS["gemma"] = ("gemma3", ["tokenizer.model", "tokenizer.json"],
                       ["tokenizer_config.json", "special_tokens_map.json"])
# Gemma 4 (`LlamaHfVocab`, tokenizer.json only): Gemma's 1000-piece byte-fallback BPE file
# with Gemma 4's chat-parser tokens appended as special added tokens (ids 1000-1004, in
# tokenizer.json and tokenizer_config.json; the class writes four of them as USER_DEFINED)
# and no tokenizer.model, as Gemma 4 ships.
TOKENIZERS["gemma4"] = ("gemma3", ["tokenizer.json"],
                        ["tokenizer_config.json", "special_tokens_map.json"])
GEMMA4_ADDED = ["<|channel>", "<channel|>", "<|tool_call>", '<|"|>', "<|turn>"]
# The RWKV World vocabulary file (`rwkv_vocab_v20230424.txt`, read by the RWKV classes'
# `_set_vocab_rwkv_world`): a small file of the published format written here (`_rwkv_world`).
TOKENIZERS["rwkv-world"] = (None, ["rwkv_vocab_v20230424.txt"], [])
# No tokenizer files: a model without a vocabulary (an audio decoder, `_set_vocab_none`).
TOKENIZERS["none"] = (None, [], [])
# Tokenizer kinds whose shared files are another kind's (stored once).
SHARED_AS = {"spm-internlm3": "spm", "spm-model": "spm", "t5": "xlmr", "smollm-ds32": "smollm",
             "smollm-glm5": "smollm-glm45"}
SHARED_AS["smollm-glm-fast"] = "smollm-glm"
SHARED_AS["spm-arctic"] = "spm"
SHARED_AS["smollm-notemplate"] = "smollm"
# Tokenizer kinds whose shared files are referenced in the synced fixture they come from
# (testdata/hf/<source>, identical bytes) instead of a copy under testdata/tokenizers/.
FROM_SOURCE_FIXTURE = {"bert", "gemma"}
SPM_VOCAB = 1000
XLMR_VOCAB = 302  # 300 pieces, shifted by one (fairseq), plus <mask>
BPE_VOCAB = 49152


def dense(**kw):
    """Common small decoder sizes; `kw` overrides."""
    base = dict(hidden_size=96, intermediate_size=160, num_hidden_layers=2,
                num_attention_heads=4, num_key_value_heads=2,
                max_position_embeddings=4096)
    base.update(kw)
    return base


def bpe(**kw):
    """Narrow sizes for fixtures with the 49152-token BPE vocabulary; `kw` overrides."""
    base = dict(hidden_size=16, intermediate_size=40, num_hidden_layers=2,
                num_attention_heads=2, num_key_value_heads=1,
                max_position_embeddings=4096)
    base.update(kw)
    return base


# name -> (HF class, model_type, config overrides, tokenizer, tie embeddings)
FIXTURES: dict[str, tuple[str, str, dict, str, bool]] = {
    # BPE fixtures carry the 49152-row SmolLM2 embedding, so they are narrow (hidden 16).
    "olmo2": ("Olmo2ForCausalLM", "olmo2",
              bpe(num_attention_heads=2, num_key_value_heads=2, rms_norm_eps=1e-6,
                  rope_theta=500000.0),
              "smollm", True),
    "smollm3": ("SmolLM3ForCausalLM", "smollm3",
                dense(hidden_size=128, intermediate_size=352, num_hidden_layers=2,
                      vocab_size=SPM_VOCAB, rope_theta=2000000.0,
                      rope_scaling={"rope_type": "yarn", "factor": 2.0,
                                    "original_max_position_embeddings": 2048}),
                "spm", False),
    "granite": ("GraniteForCausalLM", "granite",
                dense(hidden_size=256, intermediate_size=288, vocab_size=SPM_VOCAB,
                      attention_multiplier=0.0078125, embedding_multiplier=12.0,
                      residual_multiplier=0.22, logits_scaling=8.0,
                      rope_scaling={"rope_type": "linear", "factor": 4.0}),
                "spm", True),
    "glm4": ("Glm4ForCausalLM", "glm4",
             bpe(vocab_size=BPE_VOCAB + 1, num_attention_heads=2, num_key_value_heads=1,
                 head_dim=12, rms_norm_eps=1e-5, partial_rotary_factor=0.75),
             "smollm-glm", True),
    "ernie4_5": ("Ernie4_5ForCausalLM", "ernie4_5",
                 dense(hidden_size=192, intermediate_size=224, vocab_size=SPM_VOCAB,
                       num_attention_heads=3, num_key_value_heads=1, head_dim=64,
                       use_bias=True),
                 "spm", True),
    "cohere": ("CohereForCausalLM", "cohere",
               bpe(use_qk_norm=True, logit_scale=0.125, model_max_length=16384),
               "smollm", True),
    "cohere2": ("Cohere2ForCausalLM", "cohere2",
                bpe(num_hidden_layers=4, sliding_window=512, logit_scale=0.25,
                    rotary_pct=0.5),
                "smollm", True),
    "stablelm": ("StableLmForCausalLM", "stablelm",
                 bpe(qk_layernorm=True, use_qkv_bias=True, use_parallel_residual=False,
                     partial_rotary_factor=0.5),
                 "smollm", True),
    # qk_layernorm: the reference refuses it ("Unprocessed norms"), so must we.
    "stablelm-2": ("StableLmForCausalLM", "stablelm",
                   bpe(use_qkv_bias=True, use_parallel_residual=True,
                       partial_rotary_factor=0.25, rope_theta=20000.0),
                   "smollm", True),
    "starcoder2": ("Starcoder2ForCausalLM", "starcoder2",
                   bpe(use_bias=True, sliding_window=1000),
                   "smollm", True),
    "phi2": ("PhiForCausalLM", "phi",
             bpe(num_key_value_heads=2, intermediate_size=64, partial_rotary_factor=0.5),
             "smollm", False),
    # OLMo 1: LayerNorm without weights, clip_qkv.
    "olmo": ("OlmoForCausalLM", "olmo",
             bpe(num_attention_heads=2, num_key_value_heads=2, clip_qkv=8.0),
             "smollm", False),
    # GPT-BigCode (StarCoder 1): multi-query attention, fused c_attn, learned positions.
    "gptbigcode": ("GPTBigCodeForCausalLM", "gpt_bigcode",
                   dict(n_embd=16, n_inner=48, n_layer=2, n_head=2, n_positions=512,
                        multi_query=True),
                   "smollm", True),
    "gptneox": ("GPTNeoXForCausalLM", "gpt_neox",
                dict(hidden_size=16, intermediate_size=48, num_hidden_layers=2,
                     num_attention_heads=2, max_position_embeddings=4096,
                     rotary_pct=0.5, use_parallel_residual=True),
                "smollm", True),
    "falcon": ("FalconForCausalLM", "falcon",
               dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=4,
                    num_kv_heads=2, new_decoder_architecture=True, bias=False,
                    multi_query=False, parallel_attn=True),
               "smollm", True),
    "exaone4": ("Exaone4ForCausalLM", "exaone4",
                bpe(num_hidden_layers=4, sliding_window=256, sliding_window_pattern=2,
                    layer_types=["sliding_attention", "full_attention",
                                 "sliding_attention", "full_attention"]),
                "smollm", True),
    "olmoe": ("OlmoeForCausalLM", "olmoe",
              bpe(intermediate_size=24, num_key_value_heads=2, num_experts=5,
                  num_experts_per_tok=2),
              "smollm", True),
    "granitemoe": ("GraniteMoeForCausalLM", "granitemoe",
                   dense(hidden_size=256, intermediate_size=96, vocab_size=SPM_VOCAB,
                         num_local_experts=5, num_experts_per_tok=2,
                         attention_multiplier=0.015625, embedding_multiplier=12.0,
                         residual_multiplier=0.22, logits_scaling=6.0),
                   "spm", True),
    "seedoss": ("SeedOssForCausalLM", "seed_oss",
                bpe(head_dim=16, attention_bias=True),
                "smollm", True),
    "arcee": ("ArceeForCausalLM", "arcee",
              dense(hidden_size=160, intermediate_size=320, vocab_size=SPM_VOCAB,
                    num_attention_heads=5, num_key_value_heads=1,
                    rope_scaling={"rope_type": "yarn", "factor": 4.0,
                                  "original_max_position_embeddings": 1024,
                                  "beta_fast": 32.0, "beta_slow": 1.0}),
              "spm", False),
    # MoE families.
    "qwen2moe": ("Qwen2MoeForCausalLM", "qwen2_moe",
                 bpe(num_experts=5, num_experts_per_tok=2, moe_intermediate_size=24,
                     shared_expert_intermediate_size=56, norm_topk_prob=True),
                 "smollm", False),
    # Phi-3.5-MoE's config names the remote-code class PhiMoEForCausalLM (the one the
    # reference registers); transformers builds it as PhimoeForCausalLM.
    "phimoe": ("PhiMoEForCausalLM", "phimoe",
               dense(hidden_size=256, intermediate_size=96, num_attention_heads=4,
                     num_key_value_heads=1, vocab_size=SPM_VOCAB, num_local_experts=5,
                     num_experts_per_tok=2, attention_bias=True, lm_head_bias=True,
                     max_position_embeddings=8192, sliding_window=2047,
                     rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0,
                                      "long_factor": [1.0 + 0.25 * i for i in range(32)],
                                      "short_factor": [1.0 + 0.0625 * i for i in range(32)],
                                      "original_max_position_embeddings": 4096,
                                      "long_mscale": 1.243, "short_mscale": 1.19}),
               "spm", False),
    "ernie4_5moe": ("Ernie4_5_MoeForCausalLM", "ernie4_5_moe",
                    dense(hidden_size=256, intermediate_size=224, num_hidden_layers=4,
                          vocab_size=SPM_VOCAB, num_attention_heads=4, num_key_value_heads=1,
                          head_dim=64, use_bias=True, moe_num_experts=5, moe_k=2,
                          moe_intermediate_size=96, moe_layer_start_index=1,
                          moe_layer_end_index=3, moe_layer_interval=2,
                          moe_num_shared_experts=1),
                    "spm", True),
    "llama4": ("Llama4ForCausalLM", "llama4_text",
               bpe(num_hidden_layers=4, head_dim=8, intermediate_size=24,
                   intermediate_size_mlp=40, num_local_experts=5, num_experts_per_tok=1,
                   interleave_moe_layer_step=2, attention_chunk_size=1024,
                   rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0,
                                    "factor": 16.0, "low_freq_factor": 1.0,
                                    "high_freq_factor": 4.0,
                                    "original_max_position_embeddings": 1024}),
               "smollm", False),
    # The text part of the vision-language class (vision tower and projector filtered out),
    # every layer full attention (sliding_window 0), every layer MoE.
    "llama4-vl": ("Llama4ForConditionalGeneration", "llama4",
                  dict(text_config=bpe(num_hidden_layers=2, head_dim=8, intermediate_size=24,
                                       intermediate_size_mlp=40, num_local_experts=5,
                                       num_experts_per_tok=2, interleave_moe_layer_step=1,
                                       layer_types=["full_attention", "full_attention"]),
                       vision_config=dict(hidden_size=16, intermediate_size=24,
                                          num_hidden_layers=1, num_attention_heads=2,
                                          image_size=28, patch_size=14,
                                          vision_output_dim=16, projector_input_dim=16,
                                          projector_output_dim=16)),
                  "smollm", True),
    "granitemoeshared": ("GraniteMoeSharedForCausalLM", "granitemoeshared",
                         dense(hidden_size=192, intermediate_size=80, vocab_size=SPM_VOCAB,
                               num_attention_heads=3, num_key_value_heads=1,
                               num_local_experts=5, num_experts_per_tok=2,
                               shared_intermediate_size=144, attention_multiplier=0.03125,
                               embedding_multiplier=6.0, residual_multiplier=0.5,
                               logits_scaling=4.0),
                         "spm", False),
    # xIELU MLP (no gate), q/k norms; the default ApertusConfig rope (Llama-3 scaling).
    "apertus": ("ApertusForCausalLM", "apertus",
                dense(hidden_size=96, intermediate_size=200, num_hidden_layers=3,
                      vocab_size=SPM_VOCAB),
                "spm", False),
    # Sliding layout from the default layer types (every fourth layer global), a
    # per-layer-type rope dict with yarn on the global layers.
    "olmo3": ("Olmo3ForCausalLM", "olmo3",
              bpe(num_hidden_layers=5, num_attention_heads=2, num_key_value_heads=1,
                  sliding_window=64,
                  rope_parameters={
                      "full_attention": {"rope_type": "yarn", "factor": 2.0, "rope_theta": 300000.0,
                                         "original_max_position_embeddings": 1024},
                      "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}),
              "smollm", True),
    # Ministral3Config's default rope (yarn with mscale_all_dim and llama_4_scaling_beta),
    # head_dim not hidden/heads.
    "ministral3": ("Ministral3ForCausalLM", "ministral3",
                   dense(hidden_size=96, intermediate_size=176, num_attention_heads=4,
                         num_key_value_heads=2, head_dim=32, vocab_size=SPM_VOCAB),
                   "spm", False),
    # The text model of the vision-language class (a tiny Pixtral tower, dropped), with a
    # Ministral 3 text config and its rope given explicitly.
    "mistral3": ("Mistral3ForConditionalGeneration", "mistral3",
                 dict(text_config=dict(model_type="ministral3", hidden_size=32,
                                       intermediate_size=48, num_hidden_layers=2,
                                       num_attention_heads=2, num_key_value_heads=1,
                                       head_dim=16, vocab_size=SPM_VOCAB,
                                       max_position_embeddings=8192,
                                       rope_parameters={
                                           "rope_type": "yarn", "rope_theta": 500000.0,
                                           "factor": 4.0, "original_max_position_embeddings": 2048,
                                           "beta_fast": 32.0, "beta_slow": 1.0,
                                           "mscale_all_dim": 0.5, "mscale": 1.0,
                                           "llama_4_scaling_beta": 0.2}),
                      vision_config=dict(hidden_size=16, intermediate_size=32,
                                         num_hidden_layers=1, num_attention_heads=2,
                                         head_dim=8, image_size=56, patch_size=14),
                      vocab_size=SPM_VOCAB),
                 "spm", False),
    # EmbeddingGemma: headless Gemma 3 text model, bidirectional attention (transformers
    # changes sliding_window, the reference writes the file's), sentence-transformers
    # mean pooling and a Dense module (not converted without the reference's flag).
    "embeddinggemma": ("Gemma3TextModel", "gemma3_text",
                       dense(hidden_size=64, intermediate_size=112, num_hidden_layers=3,
                             num_attention_heads=2, num_key_value_heads=1, head_dim=32,
                             vocab_size=SPM_VOCAB, sliding_window=128,
                             use_bidirectional_attention=True, sliding_window_pattern=3,
                             rope_parameters={
                                 "full_attention": {"rope_type": "default", "rope_theta": 1000000.0},
                                 "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}),
                       "spm", True),
    # Encoders with the unigram vocabulary: position embeddings cut by pad_token_id + 1.
    "xlmroberta": ("XLMRobertaModel", "xlm-roberta",
                   dict(hidden_size=48, intermediate_size=96, num_hidden_layers=2,
                        num_attention_heads=3, max_position_embeddings=130, type_vocab_size=1,
                        vocab_size=XLMR_VOCAB, pad_token_id=1, bos_token_id=0, eos_token_id=2),
                   "xlmr", True),
    "xlmroberta-cls": ("XLMRobertaForSequenceClassification", "xlm-roberta",
                       dict(hidden_size=32, intermediate_size=80, num_hidden_layers=2,
                            num_attention_heads=2, max_position_embeddings=66, vocab_size=XLMR_VOCAB,
                            pad_token_id=1, bos_token_id=0, eos_token_id=2,
                            id2label={0: "negative", 1: "neutral", 2: "positive"},
                            label2id={"negative": 0, "neutral": 1, "positive": 2}),
                       "xlmr", True),
    # T5: encoder-decoder with relative attention buckets, v1.1 gated-gelu FFN,
    # an untied LM head, fewer decoder than encoder blocks; vocab_size above the pieces
    # (300 + 4 sentinels) so the table is padded with [PAD<i>] entries.
    "t5": ("T5ForConditionalGeneration", "t5",
           dict(vocab_size=310, d_model=32, d_kv=8, d_ff=48, num_layers=2, num_decoder_layers=1,
                num_heads=4, relative_attention_num_buckets=8, relative_attention_max_distance=16,
                feed_forward_proj="gated-gelu", layer_norm_epsilon=1e-6, pad_token_id=0,
                eos_token_id=1, bos_token_id=None, decoder_start_token_id=0),
           "t5", False),
    # T5 encoder only (sentence-t5 layout): the original ReLU FFN, n_positions given.
    "t5encoder": ("T5EncoderModel", "t5",
                  dict(vocab_size=304, d_model=24, d_kv=8, d_ff=40, num_layers=2, num_heads=3,
                       relative_attention_num_buckets=16, relative_attention_max_distance=32,
                       feed_forward_proj="relu", layer_norm_epsilon=1e-5, n_positions=96,
                       pad_token_id=0, eos_token_id=1, bos_token_id=None,
                       decoder_start_token_id=0),
                  "t5", True),
    # ModernBERT: fused Wqkv, GLU Wi, per-layer-type rope, a global layer every 2nd.
    "modernbert": ("ModernBertModel", "modernbert",
                   bpe(num_hidden_layers=4, intermediate_size=24, global_attn_every_n_layers=2,
                       local_attention=64, cls_token_id=1, sep_token_id=2, pad_token_id=0),
                   "smollm", True),
    "modernbert-cls": ("ModernBertForSequenceClassification", "modernbert",
                       bpe(num_hidden_layers=3, intermediate_size=20, local_attention=32,
                           hidden_activation="silu", classifier_pooling="mean",
                           global_rope_theta=80000.0, cls_token_id=1, sep_token_id=2,
                           pad_token_id=0, id2label={0: "no", 1: "yes"},
                           label2id={"no": 0, "yes": 1}),
                       "smollm", True),
    # NomicBertModel: nomic's checkpoints need remote code, but transformers 5 has a
    # NomicBertConfig whose defaults (hidden_size 768, 12 layers, rope theta 1000, ...)
    # sit next to nomic's own keys (n_embd, n_layer, rotary_emb_base) and win in the
    # reference's generic block. The checkpoint is written directly (see RAW_MODELS).
    "nomicbert": ("NomicBertModel", "nomic_bert",
                  dict(n_embd=32, n_head=2, n_layer=2, n_inner=48, n_positions=8192,
                       max_trained_positions=2048, layer_norm_epsilon=1e-12, vocab_size=30522,
                       type_vocab_size=2, rotary_emb_base=10000, activation_function="swiglu",
                       causal=False, qkv_proj_bias=False, mlp_fc1_bias=False,
                       mlp_fc2_bias=False, prenorm=False, rotary_emb_fraction=1.0,
                       rotary_emb_interleaved=False, rotary_emb_scale_base=None,
                       pad_token_id=0, bos_token_id=None, eos_token_id=None),
                  "bert", True),
    # InternLM3 (a Llama layout, its own class): biases on q/k/v/o and the MLP, no
    # rope_freqs; the SentencePiece vocabulary with an <|im_end|> special added token.
    "internlm3": ("InternLM3ForCausalLM", "internlm3",
                  dense(hidden_size=96, intermediate_size=160, num_attention_heads=4,
                        num_key_value_heads=2, head_dim=24, vocab_size=SPM_VOCAB,
                        attention_bias=True, mlp_bias=True,
                        rope_parameters={"rope_type": "dynamic", "factor": 2.0,
                                         "rope_theta": 50000000.0}),
                  "spm-internlm3", False),
}

# State-space and hybrid families.
FIXTURES.update({
    # Mamba: A_log -> -exp, conv1d squeezed, tied head; SentencePiece path (1000 pieces,
    # already a multiple of the padding 8).
    "mamba": ("MambaForCausalLM", "mamba",
              dict(hidden_size=128, intermediate_size=256, num_hidden_layers=2, state_size=16,
                   conv_kernel=4, time_step_rank=8, expand=2, vocab_size=SPM_VOCAB,
                   layer_norm_epsilon=1e-5),
              "spm-model", True),
    # Mamba-2: 8 heads of 32 in 2 groups, A/D unsqueezed, grouped norm, dt_bias renamed,
    # untied head; the vocabulary padded to a multiple of 16 (1008 tokens, 1000 rows);
    # config.json has transformers' `Infinity` (time_step_limit).
    "mamba2": ("Mamba2ForCausalLM", "mamba2",
               dict(hidden_size=128, num_hidden_layers=2, state_size=16, head_dim=32,
                    num_heads=8, n_groups=2, expand=2, conv_kernel=4, vocab_size=SPM_VOCAB,
                    layer_norm_epsilon=1e-5),
               "spm-model", False),
    # Granite 4 hybrid (MoE: 5 routed experts and a shared one), Mamba-2 layers 0, 2, 3 and
    # attention layer 1, Granite multipliers; SentencePiece (taken before tokenizer.json).
    "granitehybrid": ("GraniteMoeHybridForCausalLM", "granitemoehybrid",
                      dict(hidden_size=64, intermediate_size=32, shared_intermediate_size=48,
                           num_hidden_layers=4, num_attention_heads=2, num_key_value_heads=1,
                           num_local_experts=5, num_experts_per_tok=2,
                           layer_types=["mamba", "attention", "mamba", "mamba"],
                           mamba_n_heads=4, mamba_d_head=32, mamba_n_groups=2,
                           mamba_d_state=16, mamba_d_conv=4, mamba_expand=2,
                           vocab_size=SPM_VOCAB, max_position_embeddings=4096,
                           attention_multiplier=0.03125, embedding_multiplier=12.0,
                           residual_multiplier=0.22, logits_scaling=4.0,
                           position_embedding_type="nope"),
                      "spm", True),
    # Granite 4 hybrid without routed experts (granite-4.0-h-micro's layout): the shared MLP
    # is the dense FFN. Its layer types stay as transformers 5 saves them (linear_attention /
    # full_attention), which the reference takes for SSM layers only (no q/k permutation,
    # no KV heads).
    "granitehybrid-dense": ("GraniteMoeHybridForCausalLM", "granitemoehybrid",
                            dict(hidden_size=64, intermediate_size=32,
                                 shared_intermediate_size=96, num_hidden_layers=2,
                                 num_attention_heads=2, num_key_value_heads=2,
                                 num_local_experts=0, num_experts_per_tok=0,
                                 layer_types=["mamba", "attention"],
                                 mamba_n_heads=4, mamba_d_head=32, mamba_n_groups=1,
                                 mamba_d_state=16, mamba_d_conv=4, mamba_expand=2,
                                 vocab_size=SPM_VOCAB, max_position_embeddings=4096),
                            "spm", False),
    # Granite 4 without SSM layers (granite-4.0-micro's layout: every layer attention, no
    # routed experts): the reference writes it as `granite`, with this class's tensors.
    "granitehybrid-attn": ("GraniteMoeHybridForCausalLM", "granitemoehybrid",
                           dict(hidden_size=64, intermediate_size=32,
                                shared_intermediate_size=80, num_hidden_layers=2,
                                num_attention_heads=4, num_key_value_heads=2,
                                num_local_experts=0, num_experts_per_tok=0,
                                layer_types=["attention", "attention"],
                                mamba_n_heads=4, mamba_d_head=32, mamba_n_groups=1,
                                mamba_d_state=16, mamba_d_conv=4, mamba_expand=2,
                                vocab_size=SPM_VOCAB, max_position_embeddings=4096,
                                embedding_multiplier=12.0, logits_scaling=4.0),
                           "spm", True),
    # LFM2: short-convolution layers 0 and 2, attention layer 1 (q/k norms); the FFN size
    # derived (2/3 of 48, times 1.5, rounded up to 16); BPE vocabulary, so narrow.
    "lfm2": ("Lfm2ForCausalLM", "lfm2",
             bpe(hidden_size=8, num_hidden_layers=3, intermediate_size=48, num_attention_heads=2,
                 num_key_value_heads=1, layer_types=["conv", "full_attention", "conv"],
                 block_multiple_of=16, block_ffn_dim_multiplier=1.5, conv_L_cache=3,
                 norm_eps=1e-5, max_position_embeddings=128000),
             "smollm", True),
    # LFM2-MoE: a dense first layer, then 5 routed experts (sigmoid gate, expert bias).
    "lfm2moe": ("Lfm2MoeForCausalLM", "lfm2_moe",
                bpe(hidden_size=8, num_hidden_layers=3, intermediate_size=40, moe_intermediate_size=24,
                    num_attention_heads=2, num_key_value_heads=1, num_experts=5,
                    num_experts_per_tok=2, num_dense_layers=1,
                    layer_types=["conv", "full_attention", "conv"], conv_L_cache=3,
                    norm_eps=1e-5, max_position_embeddings=128000),
                "smollm", True),
    # Jamba: Mamba layers 0 and 2 (dt/B/C norms), attention layers 1 and 3, 5 experts on
    # the odd layers; SentencePiece vocabulary.
    "jamba": ("JambaForCausalLM", "jamba",
              dict(hidden_size=64, intermediate_size=48, num_hidden_layers=4,
                   num_attention_heads=4, num_key_value_heads=2, vocab_size=SPM_VOCAB,
                   num_experts=5, num_experts_per_tok=2, attn_layer_period=2,
                   attn_layer_offset=1, expert_layer_period=2, expert_layer_offset=1,
                   mamba_d_state=16, mamba_d_conv=4, mamba_expand=2, mamba_dt_rank=8,
                   max_position_embeddings=4096),
              "spm", False),
    # Falcon-H1: Mamba-2 and attention side by side in every layer, muP multipliers folded
    # into the weights (none equal to 1); BPE vocabulary, so narrow and tied.
    "falcon-h1": ("FalconH1ForCausalLM", "falcon_h1",
                  bpe(intermediate_size=40, num_attention_heads=2, num_key_value_heads=1,
                      head_dim=8, mamba_d_ssm=32, mamba_n_heads=4, mamba_d_head=8,
                      mamba_n_groups=1, mamba_d_state=16, mamba_d_conv=4, mamba_expand=2,
                      attention_in_multiplier=0.5, attention_out_multiplier=0.75,
                      key_multiplier=0.375, ssm_in_multiplier=1.25, ssm_out_multiplier=0.625,
                      mlp_multipliers=[0.8, 1.3], ssm_multipliers=[0.9, 1.1, 0.7, 1.4, 0.6],
                      lm_head_multiplier=0.3, embedding_multiplier=5.5),
                  "smollm", True),
})

def _hub_layer_types(cfg: dict) -> None:
    """transformers 5 saves GraniteMoeHybrid's layer types as linear_attention /
    full_attention; the published checkpoints (and the reference) say mamba / attention."""
    names = {"linear_attention": "mamba", "full_attention": "attention"}
    cfg["layer_types"] = [names.get(t, t) for t in cfg["layer_types"]]


# Edits of the config.json transformers saved: name -> edit(cfg dict).
def _qwen35_text_type(cfg: dict) -> None:
    """transformers loads the tokenizer of a qwen3_5_moe_text config as its own
    Qwen3_5Tokenizer (Qwen's pre-tokenizer over the file's vocabulary), which makes the
    SmolLM2 vocabulary's hash unknown and the reference refuse; the MoE fixture is typed
    as a qwen3_5_text config (the class still comes from `architectures`)."""
    cfg["model_type"] = "qwen3_5_text"


def _untied(cfg: dict) -> None:
    """T5 v1.1's config.json: the LM head is its own tensor."""
    cfg["tie_word_embeddings"] = False


def _gemma4_unified_moe_size(cfg: dict) -> None:
    """Gemma 4 Unified: the expert width the reference looks up, present and null."""
    cfg["text_config"]["moe_intermediate_size"] = None


CONFIG_EDITS = {
    "t5": _untied,
    "gemma4unified": _gemma4_unified_moe_size,
    "qwen35moe": _qwen35_text_type,
    "granitehybrid": _hub_layer_types,
    "granitehybrid-attn": _hub_layer_types,
}
# Llama-Embed-Nemotron's hub config names its remote-code config class.
CONFIG_EDITS["llamaembed"] = lambda cfg: cfg.update(model_type="llama_bidirec")

# Fixtures whose reference data is made with another transformers than the venv's 5.x: the
# version the reference itself pins (requirements/requirements-convert_hf_to_gguf.txt at
# 0c1e570: transformers==4.57.6). transformers 5's GPTNeoXConfig folds `rotary_pct` into
# `rope_parameters` (even when config.json spells it `rotary_pct`, as every published
# GPT-NeoX does), and conversion/gptneox.py reads `hparams["rotary_pct"]`: KeyError, so under
# transformers 5 the reference converts no GPT-NeoX at all. Run these with the pinned
# version first on the path (see README.md, "GPT-NeoX"):
#   PYTHONPATH=<dir with transformers 4.57.6, tokenizers 0.22, huggingface_hub 0.36> \
#       python make_fixtures.py ... --only gptneox
# The fixture itself is then built and saved by that transformers too (config.json spells
# `rotary_pct` / `rotary_emb_base`, like the published checkpoints).
PINNED_TRANSFORMERS = {"gptneox": "4.57.6"}


def _transformers_ok(name: str) -> bool:
    """Whether the imported transformers is the one fixture `name` is made with (a fixture
    not listed in PINNED_TRANSFORMERS: any 5.x)."""
    import transformers
    have = transformers.__version__
    want = PINNED_TRANSFORMERS.get(name)
    ok = have == want if want else not have.startswith("4.")
    if not ok:
        print(f"skipping {name}: made with transformers {want or '5.x'}, this is {have} "
              "(see PINNED_TRANSFORMERS)", file=sys.stderr)
    return ok


# HF classes a config names (what the reference registers) that transformers builds under
# another name.
BUILD_CLASS = {"PhiMoEForCausalLM": "PhimoeForCausalLM"}
# MPT's registered name is mosaicml's remote-code class; transformers builds it as MptForCausalLM.
BUILD_CLASS["MPTForCausalLM"] = "MptForCausalLM"
BUILD_CLASS["LlamaBidirectionalModel"] = "LlamaModel"

# MLA (DeepSeek V2/V3), next-token-prediction layers (GLM-4.5), gpt-oss.
MLA = dict(hidden_size=8, intermediate_size=40, num_hidden_layers=3, num_attention_heads=2,
           num_key_value_heads=2, kv_lora_rank=32, qk_nope_head_dim=16, qk_rope_head_dim=8,
           n_routed_experts=4, n_shared_experts=1, moe_intermediate_size=24,
           first_k_dense_replace=1, num_experts_per_tok=2, max_position_embeddings=4096)
FIXTURES.update({
    # DeepSeek-V2-Lite style: no q-lora (one q_proj), v_head_dim != qk_nope_head_dim,
    # group-limited greedy routing, tied embeddings.
    "deepseek2": ("DeepseekV2ForCausalLM", "deepseek_v2",
                  dict(MLA, q_lora_rank=None, v_head_dim=12, n_group=2, topk_group=1,
                       topk_method="group_limited_greedy", routed_scaling_factor=1.0,
                       norm_topk_prob=False),
                  "smollm", True),
    # DeepSeek-V3 style: q-lora, sigmoid routing with the selection bias, routed scaling,
    # YaRN with mscale_all_dim, and one next-token-prediction layer (model.layers.3, see
    # EXTRA_TENSORS) that the reference drops.
    "deepseek3": ("DeepseekV3ForCausalLM", "deepseek_v3",
                  dict(MLA, q_lora_rank=24, v_head_dim=16, n_group=2, topk_group=1,
                       routed_scaling_factor=2.5, norm_topk_prob=True, scoring_func="sigmoid",
                       topk_method="noaux_tc", num_nextn_predict_layers=1,
                       rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0,
                                        "factor": 4.0, "original_max_position_embeddings": 1024,
                                        "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0,
                                        "mscale_all_dim": 1.0}),
                  "smollm", True),
    # GLM-4.5 style: one dense block, then experts with a shared expert and the selection
    # bias, q/k norms, partial rotary; one next-token-prediction block (model.layers.2, see
    # EXTRA_TENSORS) that the reference keeps as blk.2.
    "glm4moe": ("Glm4MoeForCausalLM", "glm4_moe",
                bpe(vocab_size=BPE_VOCAB + 3, hidden_size=4, head_dim=16, attention_bias=True,
                    use_qk_norm=True, moe_intermediate_size=24, n_routed_experts=4,
                    n_shared_experts=1, num_experts_per_tok=2, first_k_dense_replace=1,
                    n_group=1, topk_group=1, routed_scaling_factor=2.5, norm_topk_prob=True,
                    num_nextn_predict_layers=1, partial_rotary_factor=0.5),
                "smollm-glm45", False),
    # gpt-oss from a bf16 checkpoint: fused, interleaved gate/up experts with biases,
    # attention sinks, alternating sliding/full layers, YaRN (the class default).
    "gptoss": ("GptOssForCausalLM", "gpt_oss",
               bpe(hidden_size=8, num_hidden_layers=3, num_attention_heads=4,
                   num_key_value_heads=2, head_dim=8, intermediate_size=24,
                   num_local_experts=4, num_experts_per_tok=2, sliding_window=64),
               "smollm", True),
    # GLM-4.7-Flash style: the DeepSeek-V2 layout (q-lora) with GLM's vocabulary, the first
    # block dense (mlp_layer_types), one next-token-prediction block (model.layers.3, see
    # EXTRA_TENSORS) that the reference keeps as blk.3.
    "glm4moelite": ("Glm4MoeLiteForCausalLM", "glm4_moe_lite",
                    dict(MLA, vocab_size=BPE_VOCAB + 3, q_lora_rank=24, v_head_dim=16,
                         n_group=1, topk_group=1, routed_scaling_factor=1.8,
                         norm_topk_prob=True, num_nextn_predict_layers=1),
                    "smollm-glm45", True),
    # DeepSeek V3.2: the V3 layout plus the lightning indexer (wq_b, wk, k_norm with bias,
    # weights_proj) in every block, one next-token-prediction block (model.layers.3, see
    # EXTRA_TENSORS) kept as blk.3, tokenizer files in the published layout (which the
    # reference refuses under transformers 5: tokenizer.json makes it drop add_bos_token).
    "deepseek32": ("DeepseekV32ForCausalLM", "deepseek_v32",
                   dict(MLA, q_lora_rank=24, v_head_dim=16, n_group=2, topk_group=1,
                        routed_scaling_factor=2.5, norm_topk_prob=True,
                        num_nextn_predict_layers=1, index_n_heads=2, index_head_dim=16,
                        index_topk=64),
                   "smollm-ds32", True),
    # DeepSeek-MoE (V1, remote code: written directly, see RAW_MODELS): Llama attention with
    # GQA (the q/k permutation), one dense block, then 4 routed experts and 2 shared ones;
    # the SentencePiece vocabulary (the class tries it before GPT-2 BPE).
    "deepseek": ("DeepseekForCausalLM", "deepseek",
                 dict(hidden_size=32, intermediate_size=48, moe_intermediate_size=24,
                      num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
                      n_routed_experts=4, n_shared_experts=2, num_experts_per_tok=2,
                      first_k_dense_replace=1, moe_layer_freq=1, norm_topk_prob=False,
                      scoring_func="softmax", rms_norm_eps=1e-6, rope_theta=10000.0,
                      rope_scaling=None, max_position_embeddings=4096, vocab_size=SPM_VOCAB,
                      hidden_act="silu", attention_bias=False, bos_token_id=1,
                      eos_token_id=2),
                 "spm", False),
    # Kimi-K2.5 (the text half of KimiK25ForConditionalGeneration, written directly in the
    # published layout, see RAW_MODELS): the DeepSeek-V3 text model in a `kimi_k2`
    # text_config (which transformers builds as deepseek_v3, defaults included) under
    # `language_model.`, with vision tensors the text conversion drops.
    "kimik25": ("KimiK25ForConditionalGeneration", "kimi_k25",
                dict(text_config=dict(MLA, model_type="kimi_k2", vocab_size=BPE_VOCAB,
                                      q_lora_rank=24, v_head_dim=12, n_group=2, topk_group=1,
                                      routed_scaling_factor=2.827, norm_topk_prob=True,
                                      scoring_func="sigmoid", topk_method="noaux_tc",
                                      tie_word_embeddings=True, rms_norm_eps=1e-5,
                                      rope_theta=50000.0, bos_token_id=1, eos_token_id=2),
                     vision_config=dict(model_type="kimi_k25_vision"),
                     bos_token_id=1, eos_token_id=2),
                "smollm", True),
    # GLM-5 (GlmMoeDsa): the DeepSeek-V2 layout with q-lora, the sparse-attention indexer,
    # GLM's vocabulary, rope on half the rope head (partial_rotary_factor), indexer types
    # from index_topk_freq 2 (full, full, shared), one next-token-prediction block
    # (model.layers.3, see EXTRA_TENSORS) kept as blk.3.
    "glmdsa": ("GlmMoeDsaForCausalLM", "glm_moe_dsa",
               dict(MLA, vocab_size=BPE_VOCAB + 3, q_lora_rank=24, v_head_dim=12,
                    n_group=1, topk_group=1, routed_scaling_factor=2.5, norm_topk_prob=True,
                    num_nextn_predict_layers=1, index_n_heads=2, index_head_dim=16,
                    index_topk=64, index_topk_freq=2,
                    rope_parameters={"rope_type": "default", "rope_theta": 1000000.0,
                                     "partial_rotary_factor": 0.5}),
               "smollm-glm5", True),
})


# DeepSeek V4 (written directly in the layout DeepSeek publishes, see RAW_WRITERS): hyper-
# connections (hc_* F32), MLA-like attention with a q-lora, one shared kv head, a grouped
# output projection (wo_a / wo_b), attention sinks, per-layer KV compressors (ratios 0, 4
# and 128) and the sparse indexer in the ratio-4 layer; FP8 E4M3 attention and shared-expert
# weights with E8M0 block scales (`.scale`), routed experts in MXFP4 (I8 nibbles, E8M0
# scales per 32 values; 32 wide where the model is 8 wide: the converter never compares
# widths), a hash-routed first layer (`tid2eid`, I64, its gate bias dropped) with the image
# bias `bias_vl`, YaRN in `rope_scaling`, and one `mtp.0` block that only `--mtp` writes.
# The embedding and the untied head are the gpt-oss fixture's embedding (stored once).
DSV4 = dict(vocab_size=BPE_VOCAB, hidden_size=8, num_hidden_layers=3, num_attention_heads=2,
            num_key_value_heads=1, head_dim=40, q_lora_rank=24, qk_rope_head_dim=8,
            o_groups=2, o_lora_rank=16, n_routed_experts=4, n_shared_experts=1,
            num_experts_per_tok=2, moe_intermediate_size=32, scoring_func="sqrtsoftplus",
            norm_topk_prob=True, routed_scaling_factor=1.5, num_hash_layers=1,
            swiglu_limit=10.0, sliding_window=64, compress_ratios=[0, 4, 128, 0],
            compress_rope_theta=160000.0, rope_theta=10000.0,
            rope_scaling={"type": "yarn", "factor": 16, "original_max_position_embeddings": 2048,
                          "beta_fast": 32, "beta_slow": 1},
            hc_mult=4, hc_sinkhorn_iters=20, hc_eps=1e-6, index_n_heads=2,
            index_head_dim=16, index_topk=64, num_nextn_predict_layers=1,
            max_position_embeddings=32768, rms_norm_eps=1e-6, hidden_act="silu",
            bos_token_id=0, eos_token_id=1, torch_dtype="bfloat16", expert_dtype="fp4",
            quantization_config={"activation_scheme": "dynamic", "fmt": "e4m3",
                                 "quant_method": "fp8", "scale_fmt": "ue8m0",
                                 "weight_block_size": [128, 128]})
FIXTURES.update({
    "deepseek4": ("DeepseekV4ForCausalLM", "deepseek_v4", DSV4, "smollm", False),
})


# Gated delta-net hybrids (helper arch2): Qwen3-Next and the Qwen3.5 text classes. Hidden
# size 4 with tied embeddings keeps the 49152-row BPE embedding at 393 KB; 2 key heads and
# 4 value heads (two value heads per key head: the qkvz split and Qwen3.5's value-head
# reordering both act), one linear-attention layer and one full-attention layer, and one
# next-token-prediction layer (mtp.*, see EXTRA_TENSORS) in the layout the released
# checkpoints ship: Qwen3-Next's count comes from the tensors, Qwen3.5's from
# mtp_num_hidden_layers.
QWEN_LINEAR = dict(hidden_size=4, num_hidden_layers=2, num_attention_heads=2,
                   num_key_value_heads=1, head_dim=16, linear_conv_kernel_dim=4,
                   linear_key_head_dim=8, linear_value_head_dim=8, linear_num_key_heads=2,
                   linear_num_value_heads=4, max_position_embeddings=4096,
                   layer_types=["linear_attention", "full_attention"])
FIXTURES.update({
    "qwen3next": ("Qwen3NextForCausalLM", "qwen3_next",
                  dict(QWEN_LINEAR, intermediate_size=40, num_experts=4, num_experts_per_tok=2,
                       moe_intermediate_size=32, shared_expert_intermediate_size=16,
                       rope_parameters={"rope_type": "default", "rope_theta": 1000000.0,
                                        "partial_rotary_factor": 0.25}),
                  "smollm", True),
    "qwen35": ("Qwen3_5ForCausalLM", "qwen3_5_text",
               dict(QWEN_LINEAR, intermediate_size=32, mtp_num_hidden_layers=1),
               "smollm", True),
    "qwen35moe": ("Qwen3_5MoeForCausalLM", "qwen3_5_moe_text",
                  dict(QWEN_LINEAR, num_experts=4, num_experts_per_tok=2,
                       moe_intermediate_size=32, shared_expert_intermediate_size=16,
                       mtp_num_hidden_layers=1,
                       rope_parameters={"rope_type": "default", "rope_theta": 10000000.0,
                                        "partial_rotary_factor": 0.25,
                                        "mrope_section": [1, 1, 0], "mrope_interleaved": True}),
                  "smollm", True),
})

# Qwen4-Exp (Qwen3.8-Flash-Next, transformers' qwen4_exp): Qwen3.5-MoE's gated delta-net
# and experts with hyper-connections (two streams) in place of every layer norm, the QSA
# indexer's fused q/k projection on the full-attention layer, and the n-gram PLE module on
# the second (linear) layer: its table in two shards, its int64 hash constants as buffers.
# transformers renames full_attention layers indexed_attention, so the reference writes
# every compress ratio 0. The embedding is qwen35's (BORROWED: stored once).
QWEN4EXP = dict(QWEN_LINEAR, num_hidden_layers=3,
                layer_types=["linear_attention", "linear_attention", "full_attention"],
                num_experts=4, num_experts_per_tok=2, moe_intermediate_size=8,
                shared_expert_intermediate_size=8, hc_count=2, hc_lowrank=4,
                ple_layer_ids=[2], ple_embed_dim=8, ple_conv_kernel_size=3, ngram_size=3,
                heads_per_ngram=2, ngram_vocab_size_base=10,
                make_ngram_vocab_size_divisible_by=8, split_ngram_parts=2,
                indexer_n_heads=2, indexer_kv_heads=1, indexer_head_dim=8, indexer_budget=8,
                indexer_compress_ratio=4,
                rope_parameters={"rope_type": "default", "rope_theta": 10000000.0,
                                 "partial_rotary_factor": 0.25, "mrope_section": [1, 1, 0],
                                 "mrope_interleaved": True})
FIXTURES["qwen4exp"] = ("Qwen4ExpForCausalLM", "qwen4_exp_text", QWEN4EXP, "smollm", True)


# Nemotron-H (helper arch2): Mamba-2 mixers ("M"), attention ("*"), a relu2 MLP ("-") and
# routed experts with a shared one ("E"), and the next-token-prediction head (mtp.layers.0:
# embedding/hidden fusion and attention, mtp.layers.1: experts and the head norm; see
# EXTRA_TENSORS). transformers 5 saves the pattern as `layers_block_type` and always fills
# num_experts_per_tok, so the reference writes every such model as nemotron_h_moe. Hidden
# size 4 and the LM head dropped (tied: transformers saves it anyway) keep the 49152-row
# BPE embedding at 393 KB.
NEMOTRON_H = dict(hidden_size=4, num_attention_heads=2, num_key_value_heads=1, head_dim=8,
                  intermediate_size=32, mamba_num_heads=4, mamba_head_dim=16, n_groups=2,
                  ssm_state_size=8, conv_kernel=4, max_position_embeddings=4096)
FIXTURES.update({
    "nemotronh": ("NemotronHForCausalLM", "nemotron_h",
                  dict(NEMOTRON_H, hybrid_override_pattern="M*-E", n_routed_experts=4,
                       num_experts_per_tok=2, moe_intermediate_size=32,
                       moe_shared_expert_intermediate_size=16, n_shared_experts=1,
                       routed_scaling_factor=2.5, num_nextn_predict_layers=1),
                  "smollm", True),
})


# Gemma 3n (helper gemma3n): per-layer embeddings (512 of the 1000 tokens, padded to the
# vocabulary by the reference), AltUp with its 4 inputs, LAuReL, per-layer FFN sizes, an
# activation sparsity pattern with sparse and dense layers, sliding / full / sliding layers,
# the last one sharing the KV cache of the first (it has no k/v tensors). Gemma's
# SentencePiece vocabulary (1000 pieces), hidden size 16.
GEMMA3N = dict(hidden_size=16, intermediate_size=[32, 48, 32], num_hidden_layers=3,
               num_attention_heads=2, num_key_value_heads=1, head_dim=8,
               hidden_size_per_layer_input=4, vocab_size=SPM_VOCAB,
               vocab_size_per_layer_input=512, laurel_rank=4, altup_num_inputs=4,
               num_kv_shared_layers=1, sliding_window=64, max_position_embeddings=4096,
               layer_types=["sliding_attention", "full_attention", "sliding_attention"],
               activation_sparsity_pattern=[0.95, 0.75, 0.0],
               bos_token_id=2, eos_token_id=1, pad_token_id=0)
FIXTURES.update({
    "gemma3n": ("Gemma3nForCausalLM", "gemma3n_text", dict(GEMMA3N), "gemma", True),
})


# Gemma 4 (helper gemma4), E2B style: per-layer input embeddings (hidden 4 per layer), sliding
# and full layers with their own head sizes (16 and 32) and rope layouts, the last two layers
# sharing the KV cache of the first two (no k/v tensors) with double-wide MLPs, logit
# soft-capping. The MoE fixture (26B-A4B style): 3 experts, 2 used, keys equal to values on
# full layers with their own KV head count, no per-layer embeddings. The tokenizer is the
# byte-fallback BPE file (1005 tokens); the embedding has 1024 rows and is cut by the class.
GEMMA4 = dict(hidden_size=16, intermediate_size=40, num_hidden_layers=4,
              num_attention_heads=2, num_key_value_heads=1, head_dim=16, global_head_dim=32,
              hidden_size_per_layer_input=4, vocab_size=1024, vocab_size_per_layer_input=1024,
              num_kv_shared_layers=2, use_double_wide_mlp=True, sliding_window=64,
              max_position_embeddings=4096, final_logit_softcapping=30.0,
              layer_types=["sliding_attention", "full_attention", "sliding_attention",
                           "full_attention"],
              bos_token_id=2, eos_token_id=1, pad_token_id=0)
GEMMA4_MOE = dict(hidden_size=16, intermediate_size=24, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=2, head_dim=8, global_head_dim=16,
                  num_global_key_value_heads=1, attention_k_eq_v=True,
                  hidden_size_per_layer_input=0, vocab_size=1024,
                  vocab_size_per_layer_input=1024, enable_moe_block=True, num_experts=3,
                  top_k_experts=2, moe_intermediate_size=12, sliding_window=32,
                  max_position_embeddings=4096,
                  layer_types=["sliding_attention", "full_attention"],
                  bos_token_id=2, eos_token_id=1, pad_token_id=0)
# Gemma 4 Unified (text; the transformer-less vision and audio embedders are filtered out):
# transformers 5 saves no `moe_intermediate_size` for its text config and the reference then
# fails on it (KeyError), so config.json names it (null), and generation_config.json lists
# tokens to suppress. The assistant (MTP draft head, arch gemma4-assistant): every layer reuses
# the target model's KV cache, ordered embeddings (a masked embedder the reference skips),
# pre/post projections to the target model's width.
GEMMA4_TEXT = dict(vocab_size=1024, hidden_size=16, intermediate_size=24, num_hidden_layers=2,
                   num_attention_heads=2, num_key_value_heads=1, head_dim=8, global_head_dim=16,
                   layer_types=["sliding_attention", "full_attention"], sliding_window=32,
                   max_position_embeddings=4096, bos_token_id=2, eos_token_id=1, pad_token_id=0)
FIXTURES.update({
    "gemma4": ("Gemma4ForCausalLM", "gemma4_text", dict(GEMMA4), "gemma4", True),
    "gemma4moe": ("Gemma4ForCausalLM", "gemma4_text", dict(GEMMA4_MOE), "gemma4", False),
    "gemma4unified": ("Gemma4UnifiedForConditionalGeneration", "gemma4_unified",
                      dict(text_config=dict(GEMMA4_TEXT, final_logit_softcapping=30.0),
                           vision_config=dict(patch_size=2, pooling_kernel_size=2,
                                              mm_embed_dim=16, mm_posemb_size=8,
                                              output_proj_dims=16),
                           audio_config=dict(audio_embed_dim=8)),
                      "gemma4", True),
    "gemma4assistant": ("Gemma4AssistantForCausalLM", "gemma4_assistant",
                        dict(text_config=dict(GEMMA4_TEXT, model_type="gemma4_text",
                                              hidden_size_per_layer_input=0,
                                              vocab_size_per_layer_input=0),
                             backbone_hidden_size=24, use_ordered_embeddings=True,
                             num_centroids=8, centroid_intermediate_top_k=2),
                        "gemma4", True),
})

# 2025-2026 MoE text families (helper arch-misc). BPE vocabulary, hidden size 16 and tied
# embeddings (the embedding is the one other fixtures share), 4 routed experts.
FIXTURES.update({
    # dots.llm1: a Qwen2-MoE subclass with DeepSeek-style routing: one dense block, a shared
    # expert, the expert selection bias, routed scaling, q/k norms.
    "dots1": ("Dots1ForCausalLM", "dots1",
              bpe(num_hidden_layers=3, intermediate_size=40, moe_intermediate_size=24,
                  n_routed_experts=4, n_shared_experts=1, num_experts_per_tok=2,
                  first_k_dense_replace=1, norm_topk_prob=True, routed_scaling_factor=2.5),
              "smollm", True),
    # Hunyuan dense: q/k norms named query_/key_layernorm, NTK-alpha ("dynamic") rope scaling
    # folded into the rope base, eod as eos and the first of generation_config's eos as eot.
    "hunyuan-dense": ("HunYuanDenseV1ForCausalLM", "hunyuan_v1_dense",
                      bpe(head_dim=8, max_position_embeddings=32768, eod_token_id=5,
                          eos_token_id=[2, 7],
                          rope_parameters={"rope_type": "dynamic", "alpha": 1000.0, "factor": 1.0,
                                           "rope_theta": 10000.0}),
                      "smollm", True),
    # MiniMax-M2: every block MoE (block_sparse_moe, w1/w2/w3 experts), sigmoid routing with
    # the selection bias, full-width q/k norms, partial rotary from the legacy rotary_dim.
    "minimax-m2": ("MiniMaxM2ForCausalLM", "minimax_m2",
                   bpe(head_dim=8, intermediate_size=24, num_local_experts=4,
                       num_experts_per_tok=2, rotary_dim=4, scoring_func="sigmoid"),
                   "smollm", True),
    # MiniMax-M3 (remote code: written directly, see RAW_MODELS): MiniMax-M2's attention and
    # experts, a leading dense block (moe_layer_freq), one shared expert, the sparse-attention
    # indexer (index_q/k_proj, index_q/k_norm) and Gemma-style (1 + w) norms.
    "minimax-m3": ("MiniMaxM3SparseForCausalLM", "minimax_m3",
                   bpe(num_hidden_layers=3, head_dim=8, intermediate_size=24,
                       dense_intermediate_size=40, shared_intermediate_size=24,
                       vocab_size=BPE_VOCAB, rms_norm_eps=1e-6, rope_theta=5000000.0,
                       num_local_experts=4, num_experts_per_tok=2, n_shared_experts=1,
                       routed_scaling_factor=2.0, rotary_dim=4, scoring_func="sigmoid",
                       moe_layer_freq=[0, 1, 1], hidden_act="swigluoai",
                       sparse_attention_config={
                           "sparse_num_index_heads": 2, "sparse_index_dim": 8,
                           "sparse_topk_blocks": 16, "sparse_block_size": 64,
                           "sparse_local_block": 1, "sparse_attention_freq": [0, 1, 1]},
                       bos_token_id=1, eos_token_id=2),
                   "smollm", True),
    # MiniMax-Text-01 / M1 (remote code: written directly, see RAW_MODELS): lightning
    # (linear) attention blocks (fused qkv_proj, output_gate, out_proj, a per-head norm) and
    # softmax attention blocks by attn_type_list, every block a MoE (w1/w2/w3 experts), the
    # layernorm alphas as one residual scale, partial rotary from rotary_dim; the vendor's
    # sharded layout (model.safetensors.index.json, which the class reads) and a
    # chat_template.jinja (see EXTRA_FILES).
    "minimax01": ("MiniMaxText01ForCausalLM", "minimax_text_01",
                  bpe(num_hidden_layers=3, head_dim=8, intermediate_size=24,
                      num_attention_heads=2, num_key_value_heads=1, vocab_size=BPE_VOCAB,
                      rms_norm_eps=1e-5, rope_theta=10000000.0, rotary_dim=4,
                      num_local_experts=3, num_experts_per_tok=2, attn_type_list=[0, 1, 0],
                      layernorm_full_attention_alpha=3.5, layernorm_full_attention_beta=1.0,
                      layernorm_linear_attention_alpha=3.5,
                      layernorm_linear_attention_beta=1.0, layernorm_mlp_alpha=3.5,
                      layernorm_mlp_beta=1.0, postnorm=True, shared_intermediate_size=0,
                      hidden_act="silu", bos_token_id=None, eos_token_id=2),
                  "smollm", True),
    # dots.ocr's text half (DotsOCRForCausalLM, remote code: written directly, see
    # RAW_MODELS): converted as Qwen2 (q/k/v biases, GPT-2 BPE), the vision tower's tensors
    # (vision_tower.*) left out; the text hparams at the config's root beside vision_config.
    "dotsocr": ("DotsOCRForCausalLM", "dots_ocr",
                bpe(num_hidden_layers=2, intermediate_size=40, num_attention_heads=2,
                    num_key_value_heads=1, vocab_size=BPE_VOCAB, rms_norm_eps=1e-6,
                    rope_theta=1000000.0, attention_bias=True, hidden_act="silu",
                    max_window_layers=2, sliding_window=4096, use_sliding_window=False,
                    image_token_id=151665, video_token_id=151656,
                    vision_config={"model_type": "dots_vit", "embed_dim": 16,
                                   "hidden_size": 16, "intermediate_size": 24,
                                   "num_hidden_layers": 1, "num_attention_heads": 2,
                                   "patch_size": 14, "spatial_merge_size": 2,
                                   "num_channels": 3, "rms_norm_eps": 1e-5},
                    bos_token_id=None, eos_token_id=2),
                "smollm", True),
    # Ling 1.0 (BailingMoe v1, remote code: written directly, see RAW_MODELS): a fused
    # attention.query_key_value split into q/k/v with the rotary permutation on q and k,
    # attention.dense as the output, routed experts (per-expert down/gate/up_proj stacked in
    # that order) with a shared one and the router mlp.gate; norm_head applies to an untied
    # head only (this one is tied).
    "bailingmoe": ("BailingMoeForCausalLM", "bailing_moe",
                   dict(hidden_size=16, intermediate_size=40, num_hidden_layers=2,
                        num_attention_heads=2, num_key_value_heads=1,
                        vocab_size=BPE_VOCAB, max_position_embeddings=4096,
                        rms_norm_eps=1e-6, rope_theta=600000.0, first_k_dense_replace=0,
                        moe_intermediate_size=24, num_experts=3, num_experts_per_tok=2,
                        num_shared_experts=1, norm_topk_prob=True, norm_head=True,
                        use_qkv_bias=False, use_bias=False, hidden_act="silu",
                        rope_scaling=None, bos_token_id=1, eos_token_id=2,
                        pad_token_id=None),
                   "smollm", True),
    # Hy3 (HYV3, written directly in the hub layout, see RAW_MODELS; transformers' hy_v3
    # config class reads it): q/k norms, one dense block, then routed experts (per-expert
    # down/gate/up_proj) with the router under mlp.router.gate, the selection bias
    # mlp.expert_bias and a shared expert mlp.shared_mlp; one next-token-prediction block
    # appended as layer 3 (eh_proj, enorm, hnorm, final_layernorm).
    "hyv3": ("HYV3ForCausalLM", "hy_v3",
             bpe(num_hidden_layers=3, head_dim=8, intermediate_size=40, moe_intermediate_size=24,
                 vocab_size=BPE_VOCAB, rms_norm_eps=1e-5, num_experts=4, num_experts_per_tok=2,
                 num_shared_experts=1, router_scaling_factor=2.5, route_norm=True,
                 num_nextn_predict_layers=1, mlp_layer_types=["dense", "sparse", "sparse"],
                 rope_parameters={"rope_type": "default", "rope_theta": 11158840.0},
                 bos_token_id=1, eos_token_id=2),
             "smollm", True),
    # Hy4 (HYV4, written directly in the hub layout, see RAW_MODELS): DeepSeek-V3's MLA with a
    # gated output (self_attn.linear_gate) and learnable sinks, DSA indexers on the "full"
    # layers, iHC (hc_attn_layer / hc_mlp_layer / hc_head), one dense block then fused
    # stacked experts (mlp.experts.gate_up_proj / down_proj); MTP layers under mtp_layers.
    "hyv4": ("HYV4ForCausalLM", "hy_v4",
             bpe(num_hidden_layers=3, num_attention_heads=2, num_key_value_heads=2,
                 q_lora_rank=8, kv_lora_rank=8, qk_nope_head_dim=4, qk_rope_head_dim=4,
                 v_head_dim=8, intermediate_size=40, moe_intermediate_size=8,
                 n_routed_experts=4, num_experts_per_tok=2, n_shared_experts=1,
                 routed_scaling_factor=2.5, norm_topk_prob=True, n_group=1, topk_group=1,
                 first_k_dense_replace=1, mlp_layer_types=["dense", "sparse", "sparse"],
                 index_n_heads=2, index_head_dim=8, index_topk=4,
                 indexer_types=["full", "shared", "full"], hc_mult=2, hc_eps=1e-6,
                 hc_magnitude=1.5, swiglu_limit=7.0, num_nextn_predict_layers=1,
                 vocab_size=BPE_VOCAB, rms_norm_eps=1e-5,
                 rope_parameters={"rope_type": "default", "rope_theta": 10000.0},
                 bos_token_id=1, eos_token_id=2),
             "smollm", True),
    # MiMo-V2-Flash (written directly in the hub layout, see RAW_MODELS): full / sliding
    # attention by hybrid_layer_pattern with their own KV head counts, per-head sink biases
    # on the sliding layers, v_head_dim below head_dim, partial rope; one dense block then
    # per-expert MoE with the sigmoid router's correction bias; three MTP layers under
    # model.mtp.layers (the number the converter always counts).
    "mimo2": ("MiMoV2FlashForCausalLM", "mimo_v2_flash",
              bpe(num_hidden_layers=3, num_attention_heads=2, num_key_value_heads=1,
                  head_dim=8, v_head_dim=4, swa_head_dim=8, swa_v_head_dim=4,
                  swa_num_attention_heads=2, swa_num_key_value_heads=2,
                  hybrid_layer_pattern=[0, 1, 1], moe_layer_freq=[0, 1, 1],
                  intermediate_size=40, moe_intermediate_size=8, n_routed_experts=4,
                  num_experts_per_tok=2, n_shared_experts=None, n_group=1, topk_group=1,
                  norm_topk_prob=True, routed_scaling_factor=None, scoring_func="sigmoid",
                  topk_method="noaux_tc", sliding_window=8, attention_value_scale=0.707,
                  layernorm_epsilon=1e-5, vocab_size=BPE_VOCAB, num_nextn_predict_layers=3,
                  rope_parameters={"rope_type": "default", "rope_theta": 5000000.0,
                                   "partial_rotary_factor": 0.5},
                  add_swa_attention_sink_bias=True, add_full_attention_sink_bias=False,
                  bos_token_id=1, eos_token_id=2),
              "smollm", True),
    # Step 3.5 (remote code: written directly in the hub layout, see RAW_MODELS): full and
    # sliding layers by layer_types with their own head counts (attention_other_setting),
    # partial rope on the full layers, per-layer rope_theta list, head-wise attention gate, zero-centred norms; one dense block then
    # stacked routed experts with the router bias and a shared expert; per-layer SwiGLU
    # clamps with nulls; one MTP layer appended as model.layers.3. The per-layer lists stop
    # at num_hidden_layers: the hub's MTP entries fail transformers' layer_types check when
    # the reference loads the tokenizer, and the reference pads them itself.
    "step35": ("Step3p5ForCausalLM", "step3p5",
               bpe(num_hidden_layers=3, num_attention_heads=2, num_attention_groups=1,
                   head_dim=8, attention_other_setting={
                       "attention_type": "sliding_attention", "num_attention_heads": 4,
                       "num_attention_groups": 2, "head_dim": 8, "true_head_dim": 8},
                   intermediate_size=40, moe_intermediate_size=8, moe_num_experts=4,
                   moe_top_k=2, share_expert_dim=12, moe_layers_enum="1,2",
                   moe_every_n_layer=1, moe_router_activation="sigmoid",
                   moe_router_scaling_factor=3.0, norm_expert_weight=True,
                   use_moe_router_bias=True, need_fp32_gate=True, use_head_wise_attn_gate=True,
                   use_qk_norm=True, sliding_window=8, max_seq_len=4096,
                   layer_types=["full_attention", "sliding_attention", "sliding_attention"],
                   partial_rotary_factors=[0.5, 1.0, 1.0],
                   rope_theta=[5000000.0, 10000.0, 10000.0],
                   yarn_only_types=["full_attention"], num_nextn_predict_layers=1,
                   swiglu_limits=[None, 7.0, 7.5], swiglu_limits_shared=[None, 16.0, None, None],
                   zero_centered=True, vocab_size=BPE_VOCAB, rms_norm_eps=1e-5,
                   bos_token_id=1, eos_token_id=2),
               "smollm", True),
    # Arcee AFMoE (Trinity): a Llama subclass without the q/k permutation; one dense block,
    # then routed experts (stacked gate/up/down) with a shared one and the selection bias,
    # a gated attention with q/k norms, pre/post MLP norms, sliding layers.
    "afmoe": ("AfmoeForCausalLM", "afmoe",
              bpe(num_hidden_layers=3, head_dim=8, moe_intermediate_size=24, num_dense_layers=1,
                  num_experts=4, num_experts_per_tok=2, num_shared_experts=1, route_scale=2.0,
                  route_norm=True, global_attn_every_n_layers=2, sliding_window=64),
              "smollm", True),
    # K-EXAONE: EXAONE 4's attention (q/k norms, sliding layers) with pre-norms, one dense
    # block, routed experts with a shared one and the selection bias, and one
    # next-token-prediction layer (mtp.*, see EXTRA_TENSORS) written as blk.3.
    "exaonemoe": ("ExaoneMoeForCausalLM", "exaone_moe",
                  bpe(num_hidden_layers=3, moe_intermediate_size=24, first_k_dense_replace=1,
                      num_experts=4, num_experts_per_tok=2, num_shared_experts=1,
                      sliding_window=64, sliding_window_pattern=2, num_nextn_predict_layers=1),
                  "smollm", True),
    # Cohere2 MoE (North): Cohere2's parallel block with routed experts and a shared one
    # (average combination), one dense prefix block (first_k_dense_replace, which the config
    # class turns into mlp_layer_types), sliding layers every other one, logit scale.
    "cohere2moe": ("Cohere2MoeForCausalLM", "cohere2_moe",
                   bpe(num_hidden_layers=3, head_dim=8, intermediate_size=24, num_experts=4,
                       num_experts_per_tok=2, num_shared_experts=1, first_k_dense_replace=1,
                       prefix_dense_intermediate_size=40, sliding_window=64,
                       sliding_window_pattern=2, logit_scale=0.25),
                   "smollm", True),
    # Ling 2.0 (BailingMoeV2, remote code: written directly, see RAW_MODELS): fused QKV with
    # q/k norms, partial rotary, one dense block, routed experts with a shared one and the
    # selection bias (mlp.gate.expert_bias), sigmoid routing.
    "bailingmoe2": ("BailingMoeV2ForCausalLM", "bailing_moe_v2",
                    dict(hidden_size=16, intermediate_size=40, num_hidden_layers=3,
                         num_attention_heads=2, num_key_value_heads=1, head_dim=8,
                         vocab_size=BPE_VOCAB, max_position_embeddings=4096, rms_norm_eps=1e-6,
                         rope_theta=600000.0, partial_rotary_factor=0.5, first_k_dense_replace=1,
                         moe_intermediate_size=24, num_experts=4, num_experts_per_tok=2,
                         num_shared_experts=1, routed_scaling_factor=2.5, norm_topk_prob=True,
                         n_group=2, topk_group=1, score_function="sigmoid", use_qk_norm=True,
                         num_nextn_predict_layers=0, rope_scaling=None,
                         bos_token_id=1, eos_token_id=2, pad_token_id=None),
                    "smollm", True),
    # Laguna (poolside): per-layer head counts, a per-head attention output gate (g_proj),
    # q/k norms, sliding and full layers with per-layer-type partial rotary, one dense block,
    # routed experts with a shared one and the selection bias, eos list -> eot.
    "laguna": ("LagunaForCausalLM", "laguna",
               bpe(num_hidden_layers=3, head_dim=8, num_attention_heads_per_layer=[2, 4, 2],
                   moe_intermediate_size=24, shared_expert_intermediate_size=16, num_experts=4,
                   num_experts_per_tok=2, sliding_window=64, moe_routed_scaling_factor=2.0,
                   layer_types=["full_attention", "sliding_attention", "full_attention"],
                   eos_token_id=[2, 5]),
               "smollm", True),
    # Ling 3.0 (BailingMoeV3, remote code: written directly, see RAW_MODELS): KDA linear
    # attention layers (q/k/v with short convolutions, a full-rank forget gate f_proj, beta,
    # A_log, dt_bias, output gate and norm) and every layer_group_size-th layer MLA with a
    # head-wise output gate, one dense block, routed experts with a shared one and the
    # selection bias, per-layer SwiGLU clamps (lists shorter than the blocks, with nulls) and
    # one next-token-prediction layer (eh_proj, enorm, hnorm, final_layernorm) after them.
    "bailingmoe3": ("BailingMoeV3ForCausalLM", "bailing_moe_v3",
                    dict(hidden_size=16, intermediate_size=40, num_hidden_layers=3,
                         num_attention_heads=2, num_key_value_heads=2, head_dim=8,
                         vocab_size=BPE_VOCAB, max_position_embeddings=4096, rms_norm_eps=1e-6,
                         rope_theta=600000.0, first_k_dense_replace=1, layer_group_size=3,
                         moe_intermediate_size=8, moe_shared_expert_intermediate_size=12,
                         num_experts=4, num_experts_per_tok=2, num_shared_experts=1,
                         routed_scaling_factor=2.5, norm_topk_prob=True, n_group=2,
                         topk_group=1, score_function="sigmoid", kv_lora_rank=8,
                         q_lora_rank=None, qk_nope_head_dim=4, qk_rope_head_dim=4,
                         v_head_dim=6, short_conv_kernel_size=4, kda_safe_gate=True,
                         kda_lower_bound=-5.0, no_kda_lora=True,
                         gated_attention_proj_granularity_type="head_wise",
                         expert_swiglu_limit_list=[None, 7.0],
                         share_expert_swiglu_limit_list=[None, 10, 7.5],
                         num_nextn_predict_layers=1, rope_scaling=None,
                         bos_token_id=1, eos_token_id=2, pad_token_id=None),
                    "smollm", True),
    # Ling 3.0 VL's text half (BailingMoeV3VL, remote code): the text hparams under
    # text_config with M-RoPE sections and a q LoRA rank; the vision tower (model.visual.*)
    # and the projector (linear_proj.*) are not text.
    "bailingmoe3-vl": ("BailingMoeV3VLForConditionalGeneration", "bailing_moe_v3_vl",
                       dict(text_config=dict(
                           hidden_size=16, intermediate_size=40, num_hidden_layers=4,
                           num_attention_heads=2, num_key_value_heads=2, head_dim=8,
                           vocab_size=BPE_VOCAB, max_position_embeddings=4096,
                           rms_norm_eps=1e-5, rope_theta=10000.0, first_k_dense_replace=2,
                           layer_group_size=2, moe_intermediate_size=8,
                           moe_shared_expert_intermediate_size=8, num_experts=3,
                           num_experts_per_tok=2,
                           routed_scaling_factor=1.5, norm_topk_prob=False,
                           score_function="sigmoid", kv_lora_rank=8, q_lora_rank=6,
                           qk_nope_head_dim=4, qk_rope_head_dim=6, v_head_dim=4,
                           short_conv_kernel_size=3, kda_safe_gate=True,
                           kda_lower_bound=-4.0, no_kda_lora=True,
                           gated_attention_proj_granularity_type="head_wise",
                           mrope_section=[1, 1, 1], num_nextn_predict_layers=0),
                           vision_config=dict(hidden_size=8, depth=1, num_heads=2,
                                              out_hidden_size=32, spatial_merge_size=2,
                                              disable_merger_proj=True),
                           bos_token_id=1, eos_token_id=2, pad_token_id=None),
                       "smollm", True),
})

# Older encoders and GPT-era decoders. The WordPiece fixtures take their 30522-row word
# embedding from nomicbert's (hidden size 32) and the BPE ones their 49152-row one from
# another BPE fixture (see BORROWED), so the vocabulary-sized tensors are stored once.
FIXTURES.update({
    # DistilBERT: BERT's layout under other names, no token types, eps fixed at 1e-12; the
    # masked-LM head (vocab_*) is dropped.
    "distilbert": ("DistilBertForMaskedLM", "distilbert",
                   dict(dim=32, n_heads=2, n_layers=2, hidden_dim=48,
                        max_position_embeddings=40, vocab_size=30522, pad_token_id=0),
                   "bert", True),
    # DistilBERT with a real label map: pre_classifier -> cls, classifier -> cls.output.
    "distilbert-cls": ("DistilBertForSequenceClassification", "distilbert",
                       dict(dim=32, n_heads=4, n_layers=3, hidden_dim=40,
                            max_position_embeddings=24, vocab_size=30522, pad_token_id=0,
                            sinusoidal_pos_embds=True,
                            id2label={0: "neg", 1: "neu", 2: "pos"},
                            label2id={"neg": 0, "neu": 1, "pos": 2}),
                       "bert", True),
    # RoBERTa with a tokenizer.json: the GPT-2 BPE path; position embeddings (and the
    # context length) cut by pad_token_id + 1.
    "roberta": ("RobertaModel", "roberta",
                bpe(intermediate_size=40, max_position_embeddings=34, type_vocab_size=2,
                    pad_token_id=1, bos_token_id=0, eos_token_id=2),
                "smollm", True),
    # RoBERTa's classification head (classifier.dense -> cls, classifier.out_proj ->
    # cls.output) with a real label map, one token type.
    "roberta-cls": ("RobertaForSequenceClassification", "roberta",
                    bpe(num_hidden_layers=3, intermediate_size=24, max_position_embeddings=21,
                        type_vocab_size=1, pad_token_id=3, bos_token_id=0, eos_token_id=2,
                        id2label={0: "no", 1: "yes"}, label2id={"no": 0, "yes": 1}),
                    "smollm", True),
    # EuroBERT: a bidirectional Llama-shaped encoder (GQA, SwiGLU, RMS norms), no rotary
    # permutation, mean pooling from modules.json.
    "eurobert": ("EuroBertModel", "eurobert",
                 bpe(num_hidden_layers=3, head_dim=8, intermediate_size=24,
                     max_position_embeddings=512, rms_norm_eps=1e-6, pad_token_id=0,
                     mask_token_id=4, classifier_pooling="mean",
                     rope_parameters={"rope_type": "default",
                                      "rope_theta": 250000.0}),
                 "smollm", False),
    # NeoBERT (remote code: written directly, see RAW_MODELS): pre-norm RMS layers, fused
    # qkv, a packed SwiGLU (w12: both halves of 2/3 of intermediate_size), a final
    # layer_norm; the masked-LM decoder is dropped. Context from max_length.
    "neobert": ("NeoBERTLMHead", "neobert",
                dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=36, max_length=1024, norm_eps=1e-5, vocab_size=30522,
                     pad_token_id=0, dim_head=16, rope=True, embedding_init_range=0.02,
                     decoder_init_range=0.02),
                "bert", True),
    # NeoBERT's classifier (dense -> cls, classifier -> cls.output with real labels).
    "neobert-cls": ("NeoBERTForSequenceClassification", "neobert",
                    dict(hidden_size=32, num_hidden_layers=3, num_attention_heads=4,
                         intermediate_size=48, max_length=512, vocab_size=30522,
                         pad_token_id=0, dim_head=8, rope=True, num_labels=3,
                         id2label={"0": "a", "1": "b", "2": "c"},
                         label2id={"a": 0, "b": 1, "c": 2}, classifier_init_range=0.02),
                    "bert", True),
    # Jina BERT v2 (remote code under model_type bert: written directly, see RAW_MODELS):
    # ALiBi (no position embeddings), a fused GEGLU (mlp.gated_layers), a post-MLP
    # layernorm; the WordPiece vocabulary since tokenizer_class is BertTokenizer.
    "jinabert": ("JinaBertForMaskedLM", "bert",
                 dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=40, max_position_embeddings=8192, vocab_size=30522,
                      type_vocab_size=2, layer_norm_eps=1e-12, pad_token_id=0,
                      position_embedding_type="alibi", feed_forward_type="geglu",
                      emb_pooler="mean", attn_implementation="torch"),
                 "bert", True),
    # BLOOM: ALiBi, a per-head [q k v] fused projection regrouped to [Q K V], an embedding
    # layernorm, FFN 4x hidden; context from seq_length.
    "bloom": ("BloomForCausalLM", "bloom",
              dict(hidden_size=16, n_layer=2, n_head=2, vocab_size=BPE_VOCAB,
                   layer_norm_epsilon=1e-5, seq_length=2048),
              "smollm", True),
    # BloomModel (no `transformer.` prefix), no seq_length: the context length is the
    # hidden size, as the reference writes it.
    "bloom-model": ("BloomModel", "bloom",
                    dict(hidden_size=16, n_layer=3, n_head=4, vocab_size=BPE_VOCAB,
                         layer_norm_epsilon=1e-6),
                    "smollm", True),
    # MPT: fused Wqkv, no biases, ALiBi with its bias maximum, a q/k/v clamp.
    "mpt": ("MPTForCausalLM", "mpt",
            dict(d_model=16, n_heads=2, n_layers=2, expansion_ratio=4, max_seq_len=1024,
                 vocab_size=BPE_VOCAB, attn_config={"alibi": True, "alibi_bias_max": 6,
                                                    "clip_qkv": 8.0}),
            "smollm", True),
    # Nemotron: layernorm1p (norm weights + 1), squared-ReLU FFN without a gate, partial
    # rotary (half the head), the SentencePiece vocabulary with pad 0 / unk 1.
    "nemotron": ("NemotronForCausalLM", "nemotron",
                 dense(hidden_size=48, intermediate_size=80, num_attention_heads=4,
                       num_key_value_heads=2, head_dim=12, vocab_size=SPM_VOCAB, norm_eps=1e-5,
                       rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                        "partial_rotary_factor": 0.5}),
                 "spm", False),
    # Nemotron with linear rope scaling and a quarter of the head rotated, tied embeddings.
    "nemotron-linear": ("NemotronForCausalLM", "nemotron",
                        dense(hidden_size=32, intermediate_size=56, num_attention_heads=2,
                              num_key_value_heads=1, head_dim=16, vocab_size=SPM_VOCAB,
                              norm_eps=1e-6, num_hidden_layers=3,
                              rope_parameters={"rope_type": "linear", "factor": 4.0,
                                               "rope_theta": 50000.0,
                                               "partial_rotary_factor": 0.25}),
                        "spm", True),
    # CodeShell (remote code: written directly, see RAW_MODELS): GPT-2 names, a grouped
    # fused c_attn (one kv group), rotary positions whose inv_freq buffers are skipped.
    "codeshell": ("CodeShellForCausalLM", "codeshell",
                  dict(n_embd=16, n_head=2, num_query_groups=1, n_layer=2, n_positions=512,
                       layer_norm_epsilon=1e-5, vocab_size=BPE_VOCAB, rope_scaling=None,
                       position_embedding_type="rope", activation_function="gelu_pytorch_tanh",
                       bos_token_id=1, eos_token_id=2),
                  "smollm", True),
    # EXAONE 3: transformers 5's ExaoneConfig keeps activation_function only as hidden_act,
    # so the reference's assert on it refuses every variant (recorded as refusals).
    "exaone": ("ExaoneForCausalLM", "exaone",
               bpe(activation_function="silu", rope_parameters={"rope_type": "llama3",
                   "factor": 8.0, "rope_theta": 500000.0, "low_freq_factor": 1.0,
                   "high_freq_factor": 4.0, "original_max_position_embeddings": 1024}),
               "smollm", True),
    # Llama-Embed-Nemotron (LlamaBidirectionalModel, remote code under model_type
    # llama_bidirec, so the reference reads config.json as written): a headless Llama
    # (built as transformers' LlamaModel), q/k permuted, no `model.` prefix added.
    "llamaembed": ("LlamaBidirectionalModel", "llama",
                   dense(hidden_size=32, intermediate_size=56, num_attention_heads=4,
                         num_key_value_heads=2, vocab_size=SPM_VOCAB, pooling="avg"),
                   "spm", True),
    # DBRX: fused Wqkv with one kv head, a q/k/v clamp, experts stored as one 2-D tensor per
    # projection (viewed as 3-D, w2 transposed), a router; untied head (DbrxConfig refuses a
    # tied one), both vocabulary-sized tensors borrowed.
    "dbrx": ("DbrxForCausalLM", "dbrx",
             dict(d_model=16, n_heads=2, n_layers=2, max_seq_len=1024, vocab_size=BPE_VOCAB,
                  attn_config={"kv_n_heads": 1, "clip_qkv": 6.0, "rope_theta": 500000.0},
                  ffn_config={"ffn_hidden_size": 24, "moe_num_experts": 3, "moe_top_k": 2}),
             "smollm", False),
    # Refact (remote code: written directly, see RAW_MODELS): GPT-2 names with RMS norms, a
    # separate q and a fused kv (one kv head), a fused gate_up of the class's own FFN width
    # (2/3 of 4 n_embd rounded up to 256), fixed FIM token ids; both vocabulary-sized tensors
    # borrowed.
    "refact": ("GPTRefactForCausalLM", "gpt_refact",
               dict(n_embd=16, n_head=2, n_layer=2, n_positions=4096, layer_norm_epsilon=1e-5,
                    vocab_size=BPE_VOCAB, multi_query=True, bos_token_id=1, eos_token_id=2),
               "smollm", False),
})

# Llama-like remote-code text families (transformers has no class: written directly in the
# vendor's published layout, see RAW_MODELS and `_llamalike`).
FIXTURES.update({
    # Maincoder: the base TextModel hparams plus rope dimensions from head_dim, q/k norms,
    # GPT-2 BPE vocabulary; head_dim not hidden/heads.
    "maincoder": ("MaincoderForCausalLM", "maincoder",
                  bpe(head_dim=12, vocab_size=BPE_VOCAB, rms_norm_eps=1e-6, rope_theta=1000000.0,
                      rope_scaling=None,
                      hidden_act="silu", attention_bias=False, bos_token_id=1, eos_token_id=2),
                  "smollm", True),
    # Nanbeige (a LlamaModel subclass): Llama's q/k permutation, SentencePiece path and
    # hparams, plus the loop count and the final-norm flag of its looped blocks.
    "nanbeige": ("NanbeigeForCausalLM", "nanbeige",
                 dense(hidden_size=64, intermediate_size=88, vocab_size=SPM_VOCAB,
                       num_key_value_heads=1, rms_norm_eps=1e-5,
                       rope_theta=70000000.0, num_loops=2, skip_loop_final_norm=True,
                       bos_token_id=1, eos_token_id=2),
                 "spm", True),
    # Orion: its own hparam block (no rope keys), LayerNorm with biases under the RMSNorm
    # names, an untied head, SentencePiece; max_sequence_length wins over the other lengths.
    "orion": ("OrionForCausalLM", "orion",
              dense(hidden_size=64, intermediate_size=88, vocab_size=SPM_VOCAB,
                    num_attention_heads=4, num_key_value_heads=4, rms_norm_eps=1e-5,
                    max_sequence_length=2048, rope_theta=10000.0, hidden_act="silu",
                    bos_token_id=1, eos_token_id=2, pad_token_id=0),
              "spm", False),
    # Baichuan 2 (7B layout): the fused W_pack [q; k; v], an untied head, SentencePiece. The
    # reference refuses every Baichuan checkpoint (its modify_tensors calls itself without
    # end on any tensor but W_pack: RecursionError), so the golden data are refusals.
    "baichuan": ("BaichuanForCausalLM", "baichuan",
                 dict(hidden_size=64, intermediate_size=88, num_hidden_layers=2,
                      num_attention_heads=4, vocab_size=SPM_VOCAB, rms_norm_eps=1e-6,
                      max_position_embeddings=4096, model_max_length=4096, hidden_act="silu",
                      z_loss_weight=0, bos_token_id=1, eos_token_id=2, pad_token_id=0),
                 "spm", False),
    # IQuest-Coder (LlamaModel; transformers' IQuestCoderConfig defaults, head_dim 128 unless
    # given): head_dim not hidden/heads, SentencePiece.
    "iquestcoder": ("IQuestCoderForCausalLM", "iquestcoder",
                    dense(hidden_size=64, intermediate_size=88, vocab_size=SPM_VOCAB,
                          num_attention_heads=4, num_key_value_heads=2, head_dim=24,
                          rope_parameters={"rope_type": "default", "rope_theta": 500000.0}),
                    "spm", False),
    # openPangu-Embedded: the generic hparams, vocab_size, rope dimensions and (no head_dim)
    # key/value lengths; q/k/v biases; a tied model whose checkpoint still holds lm_head
    # (dropped); SentencePiece with tokenizer_config.json's add_prefix_space.
    "pangu": ("PanguEmbeddedForCausalLM", "PanguEmbedded",
              dense(hidden_size=64, intermediate_size=88, vocab_size=SPM_VOCAB,
                    num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5,
                    rope_theta=16000000.0, bos_token_id=1, eos_token_id=2, pad_token_id=0),
              "spm", True),
    # PLM: multi-head latent attention without q-lora (kv_a_proj_with_mqa, kv_b_proj kept
    # whole), a squared-ReLU MLP without gate, GPT-2 BPE.
    "plm": ("PLMForCausalLM", "plm",
            bpe(vocab_size=BPE_VOCAB, num_attention_heads=2, num_key_value_heads=2, kv_lora_rank=8,
                q_lora_rank=None,
                qk_nope_head_dim=8, qk_rope_head_dim=4, v_head_dim=12, hidden_act="relu2",
                rms_norm_eps=1e-6, rope_theta=100000.0, bos_token_id=1, eos_token_id=2),
            "smollm", True),
    # KORMo (converted as Qwen2): the generic hparams, SentencePiece first, an untied head.
    "kormo": ("KORMoForCausalLM", "kormo",
              dense(hidden_size=64, intermediate_size=88, vocab_size=SPM_VOCAB,
                    num_attention_heads=4, num_key_value_heads=1, rms_norm_eps=1e-5,
                    rope_theta=500000.0, bos_token_id=1, eos_token_id=2, pad_token_id=0),
              "spm", False),
    # SmallThinker: every layer MoE (block_sparse_moe: primary_router, per-expert
    # gate/up/down stacked), its own expert keys, softmax routing, a sliding window from
    # sliding_window_layout, GPT-2 BPE.
    "smallthinker": ("SmallThinkerForCausalLM", "smallthinker",
                     dict(hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                          num_key_value_heads=1, head_dim=8, moe_ffn_hidden_size=24,
                          moe_num_primary_experts=4, moe_num_active_primary_experts=2,
                          moe_primary_router_apply_softmax=True, sliding_window_layout=[1, 0],
                          sliding_window_size=64, rope_layout=[1, 1], rope_theta=1500000.0,
                          rms_norm_eps=1e-6, max_position_embeddings=4096, vocab_size=BPE_VOCAB,
                          hidden_act="relu", bos_token_id=1, eos_token_id=2),
                     "smollm", True),
    # Spark 2.5: fused q_k_v_proj written as attn_qkv, a head-wise sigmoid output gate
    # (g_proj, one row per head), sliding and full layers with per-layer-type rope dicts and
    # partial rotary factors, GELU, GPT-2 BPE.
    "spark2_5": ("Spark2_5ForCausalLM", "spark2_5",
                 bpe(vocab_size=BPE_VOCAB, head_dim=8, hidden_act="gelu", sliding_window=64,
                     layer_types=["sliding_attention", "full_attention"],
                     gate_attn_act_mode="sigmoid", headwise_attn_output_gate=True,
                     rms_norm_eps=1e-6,
                     rope_parameters={
                         "full_attention": {"rope_type": "default", "rope_theta": 1000000.0,
                                            "partial_rotary_factor": 0.5},
                         "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0,
                                               "partial_rotary_factor": 1.0}},
                     bos_token_id=1, eos_token_id=2),
                 "smollm", True),
    # Maple: q/k norms, every block a routed MoE (mlp.gate, per-expert gate/up/down_proj
    # stacked), partial rotary, sliding and global layers, the SwiGLU clamp list, GPT-2 BPE.
    "maple": ("MapleForCausalLM", "maple",
              bpe(vocab_size=BPE_VOCAB, head_dim=8, num_experts=4, num_experts_per_tok=2,
                  moe_intermediate_size=24, num_shared_experts=0, norm_topk_prob=True,
                  nope_on_global_attention=True, partial_rotary_factor=0.5, sliding_window=64,
                  layer_types=["sliding_attention", "full_attention"], hidden_act="silu",
                  rms_norm_eps=1e-6, rope_theta=10000.0, bos_token_id=1, eos_token_id=2),
              "smollm", True),
    # Mellum (transformers' MellumConfig reads the file; the checkpoint in the hub's per-expert
    # layout): q/k norms, every block a routed MoE (mlp.gate, per-expert gate/up/down_proj
    # stacked), sliding and full layers with per-layer-type rope dicts, GPT-2 BPE.
    "mellum": ("MellumForCausalLM", "mellum",
               bpe(vocab_size=BPE_VOCAB, head_dim=8, num_experts=4, num_experts_per_tok=2,
                   moe_intermediate_size=24, sliding_window=64,
                   layer_types=["sliding_attention", "full_attention"],
                   mlp_layer_types=["sparse", "sparse"], hidden_act="silu", rms_norm_eps=1e-6,
                   rope_parameters={
                       "full_attention": {"rope_type": "default", "rope_theta": 500000.0},
                       "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}},
                   bos_token_id=1, eos_token_id=2),
               "smollm", True),
    # InternLM2: the fused, head-grouped wqkv split into permuted q and k and v, the generic
    # hparams, its own SentencePiece table (tokenizer_config.json's and tokenizer.json's
    # added tokens laid over the pieces, eos moved to <|im_end|>), an untied head.
    "internlm2": ("InternLM2ForCausalLM", "internlm2",
                  dense(hidden_size=64, intermediate_size=88, vocab_size=SPM_VOCAB,
                        num_attention_heads=4, num_key_value_heads=2, rms_norm_eps=1e-5,
                        rope_theta=1000000.0, rope_scaling=None, bias=False,
                        bos_token_id=1, eos_token_id=2, pad_token_id=0),
                  "spm-internlm3", False),
    # XVERSE: the tokenizer.json vocabulary as a `llama` table without scores (AutoTokenizer's
    # view), q/k permuted with the class's own head rule (GQA here), the generic hparams,
    # the tensor layout and rope dimensions, an untied head.
    "xverse": ("XverseForCausalLM", "xverse",
               dense(hidden_size=64, intermediate_size=88, vocab_size=SPM_VOCAB,
                     num_attention_heads=8, num_key_value_heads=2, rms_norm_eps=1e-6,
                     rope_theta=500000.0, max_tokenizer_truncation=6144,
                     bos_token_id=1, eos_token_id=2, pad_token_id=0),
               "spm", False),
    # Jais (remote code: written directly, see RAW_MODELS): GPT-2 names with a SwiGLU FFN
    # (c_fc up, c_fc2 gate), muP embedding and output scales, ALiBi without precomputed
    # slopes (bias maximum 8), the attention-mask buffers the class drops, an untied head
    # (the borrowed embedding again, so it is shared).
    "jais": ("JAISLMHeadModel", "jais",
             dict(n_embd=16, n_head=4, n_inner=40, n_layer=2, n_positions=256,
                  layer_norm_epsilon=1e-5, vocab_size=BPE_VOCAB,
                  activation_function="swiglu", position_embedding_type="alibi",
                  mup_embeddings_scale=14.6, mup_output_alpha=2.22, mup_width_scale=0.125,
                  bos_token_id=1, eos_token_id=2),
             "smollm", False),
    # Jais 2: Llama names with LayerNorm (biased), biased attention and a gate-less
    # squared-ReLU FFN, GQA, an explicit head_dim (rope dimensions), linear rope scaling,
    # an untied head (the borrowed embedding again, so it is shared).
    "jais2": ("Jais2ForCausalLM", "jais2",
              bpe(num_attention_heads=4, num_key_value_heads=2, head_dim=8,
                  rope_parameters={"rope_type": "linear", "factor": 2.0,
                                   "rope_theta": 20000.0}),
              "smollm", False),
    # OpenELM (remote code: written directly, see RAW_MODELS): per-layer query/kv head
    # counts and FFN sizes (multipliers made divisible by ffn_dim_divisor), a fused qkv with
    # q/k norms, a fused gate-and-up proj_1 split per layer, a tied head.
    "openelm": ("OpenELMForCausalLM", "openelm",
                dict(model_dim=24, head_dim=8, num_transformer_layers=3,
                     num_query_heads=[2, 3, 4], num_kv_heads=[1, 1, 2],
                     ffn_multipliers=[0.5, 1.0, 1.5], ffn_dim_divisor=8,
                     max_context_length=512, rope_freq_constant=10000,
                     rope_max_length=1024, normalize_qk_projections=True,
                     share_input_output_layers=True, ffn_with_glu=True,
                     vocab_size=SPM_VOCAB, bos_token_id=1, eos_token_id=2),
                "spm", True),
})

# Older text families (second batch). The GLM fixtures borrow glm4's 49153-row embedding.
FIXTURES.update({
    # GLM-4 in transformers' layout (GlmForCausalLM): separate q/k/v with biases, a fused
    # gate_up kept as ffn_up, an untied head; the class reads ChatGLM's own hparam spellings
    # (no seq_length: the context length is the hidden size; eps fixed at 1e-5 without
    # layernorm_epsilon; rotary dims from hidden_size / heads, not head_dim).
    "glm": ("GlmForCausalLM", "glm",
            bpe(vocab_size=BPE_VOCAB + 1, num_attention_heads=2, num_key_value_heads=1,
                head_dim=12, rms_norm_eps=1e-6, partial_rotary_factor=0.75),
            "smollm-glm", False),
    # ChatGLM / GLM-4 remote code (written directly, see RAW_MODELS): the fused
    # query_key_value with bias, dense_h_to_4h as ffn_up, names under transformer.,
    # padded_vocab_size (the reference also requires vocab_size), multi_query_group_num,
    # rope_ratio.
    "chatglm": ("ChatGLMModel", "chatglm",
                dict(hidden_size=16, num_layers=2, num_attention_heads=2, kv_channels=8,
                     multi_query_attention=True, multi_query_group_num=1,
                     ffn_hidden_size=40, padded_vocab_size=BPE_VOCAB + 1, vocab_size=BPE_VOCAB + 1,
                     seq_length=2048,
                     layernorm_epsilon=1.5625e-07, rope_ratio=500, add_qkv_bias=True,
                     add_bias_linear=False, rmsnorm=True, post_layer_norm=True,
                     original_rope=True, apply_residual_connection_post_layernorm=False,
                     pad_token_id=0, eos_token_id=[0, BPE_VOCAB]),
                "smollm-glm-fast", False),
    # MiniCPM (remote code: written directly, see RAW_MODELS): Llama names with the q/k
    # permutation, the muP-style scales (scale_emb, scale_depth, dim_model_base), LongRoPE
    # factors as rope_scaling gives them (written as rope_factors_long/short tensors).
    "minicpm": ("MiniCPMForCausalLM", "minicpm",
                dense(hidden_size=64, intermediate_size=96, vocab_size=SPM_VOCAB,
                      max_position_embeddings=8192, rms_norm_eps=1e-5, rope_theta=10000.0,
                      scale_emb=12, dim_model_base=256, scale_depth=1.4,
                      rope_scaling={"type": "longrope",
                                    "long_factor": [1.07, 1.19, 1.38, 1.62, 2.05, 2.61, 3.3,
                                                    4.15],
                                    "short_factor": [1.0, 1.01, 1.03, 1.05, 1.08, 1.12, 1.17,
                                                     1.25],
                                    "original_max_position_embeddings": 4096},
                      bos_token_id=1, eos_token_id=2),
                "spm", True),
    # MiniCPM3: multi-head latent attention (q-lora and kv-lora ranks), LongRoPE factors
    # sized for the rope part of the head; the class writes none of MiniCPM's scales.
    "minicpm3": ("MiniCPM3ForCausalLM", "minicpm3",
                 dense(hidden_size=64, intermediate_size=96, num_attention_heads=4,
                       num_key_value_heads=4, q_lora_rank=24, kv_lora_rank=16,
                       qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=8,
                       vocab_size=SPM_VOCAB, max_position_embeddings=8192,
                       rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0,
                                        "long_factor": [1.11, 1.52, 2.37, 3.94],
                                        "short_factor": [1.0, 1.02, 1.06, 1.13],
                                        "original_max_position_embeddings": 4096}),
                 "spm", True),
    # DeciLM, Llama-3.1-Nemotron-51B layout (remote code: written directly, see RAW_MODELS):
    # block_configs with a normal attention layer (n_heads_in_group), a linear one
    # (replace_with_linear: self_attn.linear_attn) and an attention-free one whose FFN is a
    # no-op too; FFN widths from the multipliers (rounded up to 256); the SentencePiece-
    # derived tokenizer.json (vocab_size is not 128256: _set_vocab_llama_hf). No scaled rope:
    # transformers 5 cannot load the tokenizer of a config of unknown model_type whose rope
    # is llama3, yarn or longrope, so the reference refuses those.
    "deci": ("DeciLMForCausalLM", "nemotron-nas",
             dict(hidden_size=16, num_attention_heads=4, num_hidden_layers=3,
                  max_position_embeddings=4096, rms_norm_eps=1e-5, rope_theta=500000.0,
                  vocab_size=SPM_VOCAB, bos_token_id=1, eos_token_id=2,
                  block_configs=[
                      {"attention": {"n_heads_in_group": 2, "no_op": False,
                                     "replace_with_linear": False},
                       "ffn": {"ffn_mult": 2.5, "no_op": False, "replace_with_linear": False}},
                      {"attention": {"n_heads_in_group": None, "no_op": False,
                                     "replace_with_linear": True},
                       "ffn": {"ffn_mult": 1.0, "no_op": False, "replace_with_linear": False}},
                      {"attention": {"n_heads_in_group": None, "no_op": True,
                                     "replace_with_linear": False},
                       "ffn": {"ffn_mult": None, "no_op": True, "replace_with_linear": False}},
                  ]),
             "spm", True),
    # DeciLM-7B layout (tied, as the Nemotron one): per-layer KV head counts (num_key_value_heads_per_layer), the
    # generic hparams, q/k permuted with each layer's count.
    "deci7b": ("DeciLMForCausalLM", "deci",
               dict(hidden_size=16, intermediate_size=24, num_attention_heads=4,
                    num_hidden_layers=2, num_key_value_heads_per_layer=[4, 1],
                    max_position_embeddings=4096, rms_norm_eps=1e-6, rope_theta=10000.0,
                    vocab_size=SPM_VOCAB, bos_token_id=1, eos_token_id=2),
               "spm", True),
})

# Older text families, third batch (remote code: written directly, see RAW_MODELS).
FIXTURES.update({
    # Snowflake Arctic: a dense residual MLP (hidden x hidden, residual_layernorm) beside
    # three experts per layer (post_attention_layernorm is their norm), GQA with Llama's q/k
    # permutation, vocab_size past the 1000 pieces ([PAD] entries) and its own added tokens
    # laid over the table (TOKENIZERS["spm-arctic"]), an untied head. Generate it in a run of
    # its own (`--only arctic`): the reference's name map for Arctic updates gguf-py's shared
    # block-mapping table in place, so a fixture converted after it in the same process
    # (Grok's pre_moe_norm) can no longer map its FFN norm.
    "arctic": ("ArcticForCausalLM", "arctic",
               dict(hidden_size=8, intermediate_size=12, num_hidden_layers=2,
                    num_attention_heads=2, num_key_value_heads=1, num_local_experts=3,
                    num_experts_per_tok=2, moe_layer_frequency=1, parallel_attn_mlp_res=True,
                    use_residual=True, max_position_embeddings=4096, rms_norm_eps=1e-5,
                    rope_theta=10000.0, hidden_act="silu", vocab_size=SPM_VOCAB + 4,
                    bos_token_id=1, eos_token_id=2),
               "spm-arctic", False),
    # Grok-2's layout: pre/post attention and MoE norms, a dense MLP beside three experts of
    # their own width, head_dim apart from hidden/heads, the "original" (yarn) rope keys at
    # the top level, final logit cap, attention temperature length, an untied head.
    "grok": ("Grok1ForCausalLM", "grok-2",
             dict(hidden_size=8, intermediate_size=12, moe_intermediate_size=20,
                  num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                  head_dim=6, num_local_experts=3, num_experts_per_tok=2, residual_moe=True,
                  max_position_embeddings=8192, rms_norm_eps=1e-5, rope_theta=208533496,
                  rope_type="original", scaling_factor=16.0,
                  original_max_position_embeddings=512, extrapolation_factor=1.0,
                  attn_factor=1.0, beta_fast=8, beta_slow=1, final_logit_softcapping=50,
                  attn_logit_softcapping=30.0, router_logit_softcapping=30.0,
                  attn_temperature_len=1024, embedding_multiplier_scale=90.50966799187809,
                  output_multiplier_scale=0.5, vocab_size=SPM_VOCAB,
                  bos_token_id=1, eos_token_id=2),
             "spm", False),
    # Grok-1's layout (keyfan/grok-1-hf): transformer.decoder_layer names, experts
    # moe.{x}.linear / linear_1 / linear_v, the embedding tied, attn_output_multiplier given,
    # no expert width, no rope scaling, no final cap (the class's defaults for the others).
    "grok1": ("GrokForCausalLM", "grok-1",
              dict(hidden_size=8, intermediate_size=12, num_hidden_layers=2,
                   num_attention_heads=2, num_key_value_heads=1, num_local_experts=3,
                   num_experts_per_tok=2, max_position_embeddings=8192, rms_norm_eps=1e-5,
                   rope_theta=10000, attn_output_multiplier=0.08838834764831845,
                   embedding_multiplier_scale=78.38367176906169,
                   output_multiplier_scale=0.5773502691896257, vocab_size=SPM_VOCAB,
                   bos_token_id=1, eos_token_id=2),
              "spm", True),
    # Bamba (GraniteHybridModel): a Mamba-2 layer 0 and attention layer 1
    # (attn_layer_indices), a dense SwiGLU FFN in every layer, rope kept (the class keeps it
    # for Bamba only), the embedding tied (shared with the other 1000 x 64 fixtures).
    "bamba": ("BambaForCausalLM", "bamba",
              dict(hidden_size=64, intermediate_size=40, num_hidden_layers=2,
                   num_attention_heads=2, num_key_value_heads=1, attn_layer_indices=[1],
                   mamba_n_heads=4, mamba_d_head=16, mamba_n_groups=1, mamba_d_state=8,
                   mamba_d_conv=4, mamba_expand=1, vocab_size=SPM_VOCAB,
                   max_position_embeddings=4096, rms_norm_eps=1e-5),
              "spm", True),
    # Youtu-LLM (DeepseekV2Model): MLA with q-lora, v_head_dim apart from qk_nope_head_dim,
    # no routed experts (every block dense: the leading dense count is the block count and
    # the expert FFN size intermediate_size), tied embeddings (shared with the MLA fixtures).
    "youtu": ("YoutuForCausalLM", "youtu",
              dict(hidden_size=8, intermediate_size=40, num_hidden_layers=2,
                   num_attention_heads=2, num_key_value_heads=2, kv_lora_rank=32,
                   q_lora_rank=24, qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12,
                   max_position_embeddings=4096, rope_interleave=True),
              "smollm", True),
})


FIXTURES.update({
    # RWKV-6 "Finch" in the layout of RWKV/v6-Finch-1B6-HF (remote code: written directly,
    # see RAW_MODELS): time-mix and channel-mix tensors, the five token-shift lerps fused by
    # the class, rescaled output matrices (rescale_every 1), the RWKV World vocabulary.
    "rwkv6": ("Rwkv6ForCausalLM", "rwkv6",
              dict(hidden_size=16, attention_hidden_size=16, head_size=8, head_size_divisor=8,
                   num_hidden_layers=2, intermediate_size=24, layer_norm_epsilon=1e-5,
                   rescale_every=1, vocab_size=320, bos_token_id=0, eos_token_id=0),
              "rwkv-world", False),
    # RWKV-7 "Goose" in fla-hub's layout (fla-hub/rwkv7-*-world, remote code): LoRA tensors
    # as `*_lora.lora.{0,2}`, the six lerps as separate `attn.x_*`, no value LoRA in layer 0.
    "rwkv7": ("RWKV7ForCausalLM", "rwkv7",
              dict(hidden_size=16, head_dim=8, num_heads=2, num_hidden_layers=2,
                   intermediate_size=40, norm_eps=1e-5, decay_low_rank_dim=8,
                   a_low_rank_dim=8, v_low_rank_dim=4, gate_low_rank_dim=12, norm_bias=True,
                   norm_first=True, vocab_size=320, bos_token_id=0, eos_token_id=0),
              "rwkv-world", False),
})


def _rwkv6_tensors(kw: dict) -> dict:
    """Rwkv6ForCausalLM's tensor names and shapes (RWKV/v6-Finch-*-HF)."""
    e, i, v, hs = kw["hidden_size"], kw["intermediate_size"], kw["vocab_size"], kw["head_size"]
    out = {"rwkv.embeddings.weight": (v, e), "rwkv.blocks.0.pre_ln.weight": (e,),
           "rwkv.blocks.0.pre_ln.bias": (e,), "rwkv.ln_out.weight": (e,),
           "rwkv.ln_out.bias": (e,), "head.weight": (v, e)}
    for b in range(kw["num_hidden_layers"]):
        p = f"rwkv.blocks.{b}."
        for n in ("ln1", "ln2", "attention.ln_x"):
            out.update({p + n + ".weight": (e,), p + n + ".bias": (e,)})
        for x in "xwkvrg":
            out[p + f"attention.time_maa_{x}"] = (1, 1, e)
        out.update({p + "attention.time_maa_w1": (e, 32 * 5), p + "attention.time_maa_w2": (5, 32, e),
                    p + "attention.time_decay": (1, 1, e), p + "attention.time_decay_w1": (e, 64),
                    p + "attention.time_decay_w2": (64, e), p + "attention.time_faaaa": (e // hs, hs)})
        for n in ("receptance", "key", "value", "gate", "output"):
            out[p + f"attention.{n}.weight"] = (e, e)
        out.update({p + "feed_forward.time_maa_k": (1, 1, e), p + "feed_forward.time_maa_r": (1, 1, e),
                    p + "feed_forward.key.weight": (i, e), p + "feed_forward.receptance.weight": (e, e),
                    p + "feed_forward.value.weight": (e, i)})
    return out


def _rwkv7_tensors(kw: dict) -> dict:
    """fla-hub's RWKV7ForCausalLM tensor names and shapes."""
    e, i, v, hd = kw["hidden_size"], kw["intermediate_size"], kw["vocab_size"], kw["head_dim"]
    ranks = {"w": kw["decay_low_rank_dim"], "a": kw["a_low_rank_dim"],
             "v": kw["v_low_rank_dim"], "g": kw["gate_low_rank_dim"]}
    out = {"model.embeddings.weight": (v, e), "model.layers.0.pre_norm.weight": (e,),
           "model.layers.0.pre_norm.bias": (e,), "model.norm.weight": (e,),
           "model.norm.bias": (e,), "lm_head.weight": (v, e)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        for n in ("attn_norm", "ffn_norm", "attn.g_norm"):
            out.update({p + n + ".weight": (e,), p + n + ".bias": (e,)})
        for x in "rwkvag":
            out[p + f"attn.x_{x}"] = (1, 1, e)
        out.update({p + "attn.k_k": (e,), p + "attn.k_a": (e,), p + "attn.r_k": (e // hd, hd)})
        for n in ("r_proj", "k_proj", "v_proj", "o_proj"):
            out[p + f"attn.{n}.weight"] = (e, e)
        for x, r in ranks.items():
            if x == "v" and b == 0:
                continue
            out.update({p + f"attn.{x}_lora.lora.0.weight": (r, e),
                        p + f"attn.{x}_lora.lora.2.weight": (e, r)})
            if x != "g":
                out[p + f"attn.{x}_lora.lora.2.bias"] = (e,)
        out.update({p + "ffn.x_k": (e,), p + "ffn.key.weight": (i, e),
                    p + "ffn.value.weight": (e, i)})
    return out


FIXTURES.update({
    # QRWKV6 (RWKV6Qwen2ForCausalLM, recursal's remote code: written directly): RWKV-6 time
    # mixing under `self_attn.` with grouped key/value projections, Qwen2's norms and MLP, the
    # token-shift LoRA chunks in r, k, v, w, g order; lora_rank_decay absent (the class's
    # default is written); the SentencePiece vocabulary.
    "rwkv6qwen2": ("RWKV6Qwen2ForCausalLM", "rwkv6qwen2",
                   dict(hidden_size=16, num_attention_heads=2, num_key_value_heads=1,
                        num_hidden_layers=2, intermediate_size=24, rms_norm_eps=1e-6,
                        lora_rank_tokenshift=8, vocab_size=SPM_VOCAB, bos_token_id=1,
                        eos_token_id=2),
                   "spm", True),
    # ARWKV-7 (RwkvHybridForCausalLM, remote code): RWKV-7 time mixing under
    # `self_attn.time_mixer.` in BlinkDL's layout (LoRA matrices transposed, dummy v0/v1/v2 in
    # layer 0), no output gate (wkv_has_gate false: five token-shift mixes), Qwen2's norms and
    # MLP, the SentencePiece vocabulary.
    "arwkv7": ("RwkvHybridForCausalLM", "rwkv_hybrid",
               dict(hidden_size=16, head_size=8, num_attention_heads=2, num_hidden_layers=2,
                    intermediate_size=24, rms_norm_eps=1e-6, wkv_version=7, wkv_has_gate=False,
                    vocab_size=SPM_VOCAB, bos_token_id=1, eos_token_id=2),
               "spm", True),
})


def _rwkv6qwen2_tensors(kw: dict) -> dict:
    """RWKV6Qwen2ForCausalLM's tensor names and shapes (tied embedding)."""
    e, i, v = kw["hidden_size"], kw["intermediate_size"], kw["vocab_size"]
    kv = e // kw["num_attention_heads"] * kw["num_key_value_heads"]
    r = kw["lora_rank_tokenshift"]
    out = {"model.embed_tokens.weight": (v, e), "model.norm.weight": (e,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,), p + "post_attention_layernorm.weight": (e,),
                    p + "mlp.gate_proj.weight": (i, e), p + "mlp.up_proj.weight": (i, e),
                    p + "mlp.down_proj.weight": (e, i)})
        for x in "xwkvrg":
            out[p + f"self_attn.time_maa_{x}"] = (1, 1, e)
        out.update({p + "self_attn.time_maa_w1": (e, r * 5), p + "self_attn.time_maa_w2": (5, r, e),
                    p + "self_attn.time_decay": (1, 1, e), p + "self_attn.time_decay_w1": (e, 8),
                    p + "self_attn.time_decay_w2": (8, e)})
        out.update({p + "self_attn.q_proj.weight": (e, e), p + "self_attn.k_proj.weight": (kv, e),
                    p + "self_attn.v_proj.weight": (kv, e), p + "self_attn.gate.weight": (e, e),
                    p + "self_attn.o_proj.weight": (e, e)})
    return out


def _arwkv7_tensors(kw: dict) -> dict:
    """RwkvHybridForCausalLM's tensor names and shapes (ARWKV-7, tied embedding)."""
    e, i, v, hs = kw["hidden_size"], kw["intermediate_size"], kw["vocab_size"], kw["head_size"]
    out = {"model.embed_tokens.weight": (v, e), "model.norm.weight": (e,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,), p + "post_attention_layernorm.weight": (e,),
                    p + "mlp.gate_proj.weight": (i, e), p + "mlp.up_proj.weight": (i, e),
                    p + "mlp.down_proj.weight": (e, i)})
        t = p + "self_attn.time_mixer."
        for x in "rwkva":
            out[t + f"x_{x}"] = (1, 1, e)
        for x, r in (("w", 8), ("a", 8), ("v", 4)):
            out.update({t + f"{x}0": (1, 1, e), t + f"{x}1": (e, r), t + f"{x}2": (r, e)})
        out.update({t + "k_k": (1, 1, e), t + "k_a": (1, 1, e), t + "r_k": (e // hs, hs),
                    t + "ln_x.weight": (e,), t + "ln_x.bias": (e,)})
        for n in ("receptance", "key", "value", "output"):
            out[t + f"{n}.weight"] = (e, e)
    return out


def _nomic_tensors(kw: dict) -> dict:
    """NomicBertModel's tensor names and shapes (no biases, SwiGLU MLP)."""
    e, i, v, t = kw["n_embd"], kw["n_inner"], kw["vocab_size"], kw["type_vocab_size"]
    out = {"embeddings.word_embeddings.weight": (v, e),
           "embeddings.token_type_embeddings.weight": (t, e),
           "emb_ln.weight": (e,), "emb_ln.bias": (e,)}
    for b in range(kw["n_layer"]):
        p = f"encoder.layers.{b}."
        out.update({p + "attn.Wqkv.weight": (3 * e, e), p + "attn.out_proj.weight": (e, e),
                    p + "norm1.weight": (e,), p + "norm1.bias": (e,),
                    p + "mlp.fc11.weight": (i, e), p + "mlp.fc12.weight": (i, e),
                    p + "mlp.fc2.weight": (e, i),
                    p + "norm2.weight": (e,), p + "norm2.bias": (e,)})
    return out


def _neobert_tensors(kw: dict) -> dict:
    """NeoBERT's tensor names and shapes (no biases in the encoder), under `model.` with
    the masked-LM decoder or the classification head."""
    e, v, n = kw["hidden_size"], kw["vocab_size"], kw["num_hidden_layers"]
    f = int(2 * kw["intermediate_size"] / 3)
    f = 8 * ((f + 7) // 8)
    out = {"model.encoder.weight": (v, e), "model.layer_norm.weight": (e,)}
    for b in range(n):
        p = f"model.transformer_encoder.{b}."
        out.update({p + "qkv.weight": (3 * e, e), p + "wo.weight": (e, e),
                    p + "attention_norm.weight": (e,), p + "ffn_norm.weight": (e,),
                    p + "ffn.w12.weight": (2 * f, e), p + "ffn.w3.weight": (e, f)})
    if "num_labels" in kw:
        out.update({"dense.weight": (e, e), "dense.bias": (e,),
                    "classifier.weight": (kw["num_labels"], e),
                    "classifier.bias": (kw["num_labels"],)})
    else:
        out.update({"decoder.weight": (v, e), "decoder.bias": (v,)})
    return out


def _jinabert_tensors(kw: dict) -> dict:
    """JinaBertForMaskedLM's tensor names and shapes (under `bert.`, with the pooler and
    the masked-LM head the converter drops)."""
    e, v, i = kw["hidden_size"], kw["vocab_size"], kw["intermediate_size"]
    out = {"bert.embeddings.word_embeddings.weight": (v, e),
           "bert.embeddings.token_type_embeddings.weight": (kw["type_vocab_size"], e),
           "bert.embeddings.LayerNorm.weight": (e,), "bert.embeddings.LayerNorm.bias": (e,),
           "bert.pooler.dense.weight": (e, e), "bert.pooler.dense.bias": (e,),
           "cls.predictions.bias": (v,),
           "cls.predictions.transform.dense.weight": (e, e),
           "cls.predictions.transform.dense.bias": (e,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"bert.encoder.layer.{b}."
        for t in ("attention.self.query", "attention.self.key", "attention.self.value",
                  "attention.output.dense"):
            out.update({p + t + ".weight": (e, e), p + t + ".bias": (e,)})
        out.update({p + "attention.output.LayerNorm.weight": (e,),
                    p + "attention.output.LayerNorm.bias": (e,),
                    p + "mlp.gated_layers.weight": (2 * i, e),
                    p + "mlp.wo.weight": (e, i), p + "mlp.wo.bias": (e,),
                    p + "mlp.layernorm.weight": (e,), p + "mlp.layernorm.bias": (e,)})
    return out


def _refact_tensors(kw: dict) -> dict:
    """Refact's tensor names and shapes (no biases, RMS norm weights; kv holds one key head
    then one value head; gate_up holds gate then up, each of the class's FFN width)."""
    e, h = kw["n_embd"], kw["n_head"]
    d = e // h
    ff = 256 * ((int(2 * (4 * e) / 3) + 255) // 256)
    out = {"transformer.wte.weight": (kw["vocab_size"], e), "lm_head.weight": (kw["vocab_size"], e),
           "transformer.ln_f.weight": (e,)}
    for b in range(kw["n_layer"]):
        p = f"transformer.h.{b}."
        out.update({p + "ln_1.weight": (e,), p + "attn.q.weight": (e, e),
                    p + "attn.kv.weight": (2 * d, e), p + "attn.c_proj.weight": (e, e),
                    p + "ln_2.weight": (e,), p + "mlp.gate_up_proj.weight": (2 * ff, e),
                    p + "mlp.c_proj.weight": (e, ff)})
    return out


def _codeshell_tensors(kw: dict) -> dict:
    """CodeShell's tensor names and shapes (GPT-2's, with biases; c_attn holds the query
    heads then one key and one value block per kv group)."""
    e, h, g = kw["n_embd"], kw["n_head"], kw["num_query_groups"]
    d = e // h
    out = {"transformer.wte.weight": (kw["vocab_size"], e),
           "transformer.ln_f.weight": (e,), "transformer.ln_f.bias": (e,)}
    for b in range(kw["n_layer"]):
        p = f"transformer.h.{b}."
        out.update({p + "ln_1.weight": (e,), p + "ln_1.bias": (e,),
                    p + "attn.c_attn.weight": (e + 2 * g * d, e),
                    p + "attn.c_attn.bias": (e + 2 * g * d,),
                    p + "attn.c_proj.weight": (e, e), p + "attn.c_proj.bias": (e,),
                    p + "attn.rotary_emb.inv_freq": (d // 2,),
                    p + "ln_2.weight": (e,), p + "ln_2.bias": (e,),
                    p + "mlp.c_fc.weight": (4 * e, e), p + "mlp.c_fc.bias": (4 * e,),
                    p + "mlp.c_proj.weight": (e, 4 * e), p + "mlp.c_proj.bias": (e,)})
    return out


def _jais_tensors(kw: dict) -> dict:
    """Jais's tensor names and shapes: GPT-2's Conv1D layout (input first), a gated FFN and
    the `attn.bias` mask buffers. No `relative_pe.slopes`: the reference cannot read their
    values (its tensors are lazy) and refuses checkpoints that have them."""
    e, f = kw["n_embd"], kw["n_inner"]
    out = {"transformer.wte.weight": (kw["vocab_size"], e), "lm_head.weight": (kw["vocab_size"], e),
           "transformer.ln_f.weight": (e,), "transformer.ln_f.bias": (e,)}
    for b in range(kw["n_layer"]):
        p = f"transformer.h.{b}."
        out.update({p + "ln_1.weight": (e,), p + "ln_1.bias": (e,),
                    p + "attn.bias": (1, 1, 4, 4),
                    p + "attn.c_attn.weight": (e, 3 * e), p + "attn.c_attn.bias": (3 * e,),
                    p + "attn.c_proj.weight": (e, e), p + "attn.c_proj.bias": (e,),
                    p + "ln_2.weight": (e,), p + "ln_2.bias": (e,),
                    p + "mlp.c_fc.weight": (e, f), p + "mlp.c_fc.bias": (f,),
                    p + "mlp.c_fc2.weight": (e, f), p + "mlp.c_fc2.bias": (f,),
                    p + "mlp.c_proj.weight": (f, e), p + "mlp.c_proj.bias": (e,)})
    return out


def _openelm_tensors(kw: dict) -> dict:
    """OpenELM's tensor names and shapes: per layer, a fused qkv for its own head counts,
    q/k RMS norms over the head, and a fused gate-and-up proj_1 of twice its FFN size."""
    e, d, div = kw["model_dim"], kw["head_dim"], kw["ffn_dim_divisor"]
    out = {"transformer.token_embeddings.weight": (kw["vocab_size"], e),
           "transformer.norm.weight": (e,)}
    for b in range(kw["num_transformer_layers"]):
        q, kv = kw["num_query_heads"][b], kw["num_kv_heads"][b]
        v = kw["ffn_multipliers"][b] * e
        ff = max(div, int(v + div / 2) // div * div)
        ff += div if ff < 0.9 * v else 0
        p = f"transformer.layers.{b}."
        out.update({p + "attn_norm.weight": (e,), p + "ffn_norm.weight": (e,),
                    p + "attn.qkv_proj.weight": ((q + 2 * kv) * d, e),
                    p + "attn.q_norm.weight": (d,), p + "attn.k_norm.weight": (d,),
                    p + "attn.out_proj.weight": (e, q * d),
                    p + "ffn.proj_1.weight": (2 * ff, e), p + "ffn.proj_2.weight": (e, ff)})
    return out


def _deepseek_v1_tensors(kw: dict) -> dict:
    """DeepseekForCausalLM's tensor names and shapes (deepseek-moe's remote code): Llama
    attention, `first_k_dense_replace` dense MLPs, then per-expert MLPs, shared experts and
    the router, an untied LM head."""
    e, i, v = kw["hidden_size"], kw["intermediate_size"], kw["vocab_size"]
    nh, nkv, ff = kw["num_attention_heads"], kw["num_key_value_heads"], kw["moe_intermediate_size"]
    hd = e // nh
    sh = ff * kw["n_shared_experts"]
    out = {"model.embed_tokens.weight": (v, e), "model.norm.weight": (e,),
           "lm_head.weight": (v, e)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,),
                    p + "post_attention_layernorm.weight": (e,),
                    p + "self_attn.q_proj.weight": (nh * hd, e),
                    p + "self_attn.k_proj.weight": (nkv * hd, e),
                    p + "self_attn.v_proj.weight": (nkv * hd, e),
                    p + "self_attn.o_proj.weight": (e, nh * hd)})
        if b < kw["first_k_dense_replace"]:
            out.update({p + "mlp.gate_proj.weight": (i, e), p + "mlp.up_proj.weight": (i, e),
                        p + "mlp.down_proj.weight": (e, i)})
            continue
        out[p + "mlp.gate.weight"] = (kw["n_routed_experts"], e)
        out.update({p + "mlp.shared_experts.gate_proj.weight": (sh, e),
                    p + "mlp.shared_experts.up_proj.weight": (sh, e),
                    p + "mlp.shared_experts.down_proj.weight": (e, sh)})
        for x in range(kw["n_routed_experts"]):
            q = p + f"mlp.experts.{x}."
            out.update({q + "gate_proj.weight": (ff, e), q + "up_proj.weight": (ff, e),
                        q + "down_proj.weight": (e, ff)})
    return out


def _kimik25_tensors(kw: dict) -> dict:
    """Kimi-K2.5's checkpoint layout: the DeepSeek-V3 text model (MLA with q-lora, one dense
    block, routed experts with the selection bias and a shared expert) under
    `language_model.`, tied embeddings, and a vision tower and projector (`vision_tower.`,
    `mm_projector.`) that the text conversion drops."""
    t = kw["text_config"]
    e, i, v = t["hidden_size"], t["intermediate_size"], t["vocab_size"]
    nh, nope, rope, vd = (t["num_attention_heads"], t["qk_nope_head_dim"],
                          t["qk_rope_head_dim"], t["v_head_dim"])
    kvr, qr, ff, x = t["kv_lora_rank"], t["q_lora_rank"], t["moe_intermediate_size"], \
        t["n_routed_experts"]
    sh = ff * t["n_shared_experts"]
    out = {"language_model.model.embed_tokens.weight": (v, e),
           "language_model.model.norm.weight": (e,),
           "vision_tower.patch_embed.proj.weight": (8, 3, 2, 2),
           "mm_projector.proj.0.weight": (e, 32)}
    for b in range(t["num_hidden_layers"]):
        p = f"language_model.model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,),
                    p + "post_attention_layernorm.weight": (e,),
                    p + "self_attn.q_a_proj.weight": (qr, e),
                    p + "self_attn.q_a_layernorm.weight": (qr,),
                    p + "self_attn.q_b_proj.weight": (nh * (nope + rope), qr),
                    p + "self_attn.kv_a_proj_with_mqa.weight": (kvr + rope, e),
                    p + "self_attn.kv_a_layernorm.weight": (kvr,),
                    p + "self_attn.kv_b_proj.weight": (nh * (nope + vd), kvr),
                    p + "self_attn.o_proj.weight": (e, nh * vd)})
        if b < t["first_k_dense_replace"]:
            out.update({p + "mlp.gate_proj.weight": (i, e), p + "mlp.up_proj.weight": (i, e),
                        p + "mlp.down_proj.weight": (e, i)})
            continue
        out.update({p + "mlp.gate.weight": (x, e), p + "mlp.gate.e_score_correction_bias": (x,),
                    p + "mlp.shared_experts.gate_proj.weight": (sh, e),
                    p + "mlp.shared_experts.up_proj.weight": (sh, e),
                    p + "mlp.shared_experts.down_proj.weight": (e, sh)})
        for j in range(x):
            q = p + f"mlp.experts.{j}."
            out.update({q + "gate_proj.weight": (ff, e), q + "up_proj.weight": (ff, e),
                        q + "down_proj.weight": (e, ff)})
def _bailing2_tensors(kw: dict) -> dict:
    """BailingMoeV2ForCausalLM's tensor names and shapes (inclusionAI's remote code)."""
    e, h, nh, nkv = kw["hidden_size"], kw["head_dim"], kw["num_attention_heads"], \
        kw["num_key_value_heads"]
    ff, mff, x = kw["intermediate_size"], kw["moe_intermediate_size"], kw["num_experts"]
    sff = mff * kw["num_shared_experts"]
    out = {"model.word_embeddings.weight": (kw["vocab_size"], e), "model.norm.weight": (e,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,), p + "post_attention_layernorm.weight": (e,),
                    p + "attention.query_key_value.weight": ((nh + 2 * nkv) * h, e),
                    p + "attention.dense.weight": (e, nh * h),
                    p + "attention.query_layernorm.weight": (h,),
                    p + "attention.key_layernorm.weight": (h,)})
        if b < kw["first_k_dense_replace"]:
            out.update({p + "mlp.gate_proj.weight": (ff, e), p + "mlp.up_proj.weight": (ff, e),
                        p + "mlp.down_proj.weight": (e, ff)})
            continue
        out.update({p + "mlp.gate.weight": (x, e), p + "mlp.gate.expert_bias": (x,),
                    p + "mlp.shared_experts.gate_proj.weight": (sff, e),
                    p + "mlp.shared_experts.up_proj.weight": (sff, e),
                    p + "mlp.shared_experts.down_proj.weight": (e, sff)})
        for i in range(x):
            out.update({p + f"mlp.experts.{i}.gate_proj.weight": (mff, e),
                        p + f"mlp.experts.{i}.up_proj.weight": (mff, e),
                        p + f"mlp.experts.{i}.down_proj.weight": (e, mff)})
    return out


def _minimax_m3_tensors(kw: dict) -> dict:
    """MiniMaxM3SparseForCausalLM's tensor names and shapes (MiniMax's remote code): the
    M2 block with a dense MLP where `moe_layer_freq` is 0, else the routed experts
    (`block_sparse_moe.experts.{i}.w1/w2/w3`), a shared expert and, on the layers
    `sparse_attention_freq` marks, the indexer's projections and norms."""
    e, h, nh, nkv = kw["hidden_size"], kw["head_dim"], kw["num_attention_heads"], \
        kw["num_key_value_heads"]
    ff, dff, x = kw["intermediate_size"], kw["dense_intermediate_size"], kw["num_local_experts"]
    sff = kw["shared_intermediate_size"]
    sac = kw["sparse_attention_config"]
    ih, idim = sac["sparse_num_index_heads"], sac["sparse_index_dim"]
    out = {"model.embed_tokens.weight": (kw["vocab_size"], e), "model.norm.weight": (e,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,), p + "post_attention_layernorm.weight": (e,),
                    p + "self_attn.q_proj.weight": (nh * h, e),
                    p + "self_attn.k_proj.weight": (nkv * h, e),
                    p + "self_attn.v_proj.weight": (nkv * h, e),
                    p + "self_attn.o_proj.weight": (e, nh * h),
                    p + "self_attn.q_norm.weight": (h,), p + "self_attn.k_norm.weight": (h,)})
        if sac["sparse_attention_freq"][b]:
            out.update({p + "self_attn.index_q_proj.weight": (ih * idim, e),
                        p + "self_attn.index_k_proj.weight": (idim, e),
                        p + "self_attn.index_q_norm.weight": (idim,),
                        p + "self_attn.index_k_norm.weight": (idim,)})
        if not kw["moe_layer_freq"][b]:
            out.update({p + "mlp.gate_proj.weight": (dff, e), p + "mlp.up_proj.weight": (dff, e),
                        p + "mlp.down_proj.weight": (e, dff)})
            continue
        q = p + "block_sparse_moe."
        out.update({q + "gate.weight": (x, e), q + "e_score_correction_bias": (x,),
                    q + "shared_experts.gate_proj.weight": (sff, e),
                    q + "shared_experts.up_proj.weight": (sff, e),
                    q + "shared_experts.down_proj.weight": (e, sff)})
        for i in range(x):
            out.update({q + f"experts.{i}.w1.weight": (ff, e), q + f"experts.{i}.w3.weight": (ff, e),
                        q + f"experts.{i}.w2.weight": (e, ff)})
    return out


def _dotsocr_tensors(kw: dict) -> dict:
    """DotsOCRForCausalLM's tensor names and shapes: Qwen2's (q/k/v biases, tied head) and
    two tensors of the vision tower, which the text conversion leaves out."""
    out = _llamalike(qkv_bias=True)(kw)
    v = kw["vision_config"]
    out.update({"vision_tower.blocks.0.attn.qkv.weight": (3 * v["embed_dim"], v["embed_dim"]),
                "vision_tower.blocks.0.norm1.weight": (v["embed_dim"],)})
    return out


def _bailing1_tensors(kw: dict) -> dict:
    """BailingMoeForCausalLM's tensor names and shapes (Ling 1.0, inclusionAI's remote
    code): the fused `attention.query_key_value`, `attention.dense`, the router `mlp.gate`,
    a shared expert and per-expert `mlp.experts.{i}.*_proj` on every block."""
    e, nh, nkv, v = kw["hidden_size"], kw["num_attention_heads"], kw["num_key_value_heads"], \
        kw["vocab_size"]
    h = kw.get("head_dim") or e // nh
    ff, x = kw["moe_intermediate_size"], kw["num_experts"]
    sff = ff * kw["num_shared_experts"]
    out = {"model.word_embeddings.weight": (v, e), "model.norm.weight": (e,)}
    if not kw.get("tie_word_embeddings", True):
        out["lm_head.weight"] = (v, e)
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,),
                    p + "post_attention_layernorm.weight": (e,),
                    p + "attention.query_key_value.weight": ((nh + 2 * nkv) * h, e),
                    p + "attention.dense.weight": (e, nh * h),
                    p + "mlp.gate.weight": (x, e),
                    p + "mlp.shared_experts.gate_proj.weight": (sff, e),
                    p + "mlp.shared_experts.up_proj.weight": (sff, e),
                    p + "mlp.shared_experts.down_proj.weight": (e, sff)})
        for i in range(x):
            out.update({p + f"mlp.experts.{i}.gate_proj.weight": (ff, e),
                        p + f"mlp.experts.{i}.up_proj.weight": (ff, e),
                        p + f"mlp.experts.{i}.down_proj.weight": (e, ff)})
    return out


def _minimax01_tensors(kw: dict) -> dict:
    """MiniMaxText01ForCausalLM's tensor names and shapes (MiniMax's remote code): a
    lightning-attention block (`attn_type_list` 0: fused `qkv_proj`, `output_gate`,
    `out_proj` and the per-head `norm`) or a softmax one (1: q/k/v/o projections), then the
    router and the per-expert `w1`/`w2`/`w3` under `block_sparse_moe`."""
    e, h, nh, nkv = kw["hidden_size"], kw["head_dim"], kw["num_attention_heads"], \
        kw["num_key_value_heads"]
    ff, x = kw["intermediate_size"], kw["num_local_experts"]
    out = {"model.embed_tokens.weight": (kw["vocab_size"], e), "model.norm.weight": (e,)}
    for b, kind in enumerate(kw["attn_type_list"][:kw["num_hidden_layers"]]):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,),
                    p + "post_attention_layernorm.weight": (e,)})
        if kind == 0:
            out.update({p + "self_attn.qkv_proj.weight": (3 * nh * h, e),
                        p + "self_attn.output_gate.weight": (nh * h, e),
                        p + "self_attn.out_proj.weight": (e, nh * h),
                        p + "self_attn.norm.weight": (nh * h,)})
        else:
            out.update({p + "self_attn.q_proj.weight": (nh * h, e),
                        p + "self_attn.k_proj.weight": (nkv * h, e),
                        p + "self_attn.v_proj.weight": (nkv * h, e),
                        p + "self_attn.o_proj.weight": (e, nh * h)})
        q = p + "block_sparse_moe."
        out[q + "gate.weight"] = (x, e)
        for i in range(x):
            out.update({q + f"experts.{i}.w1.weight": (ff, e), q + f"experts.{i}.w3.weight": (ff, e),
                        q + f"experts.{i}.w2.weight": (e, ff)})
    return out


def _hyv3_tensors(kw: dict) -> dict:
    """HYV3ForCausalLM's tensor names and shapes in the hub layout (tencent/Hy3): a dense
    MLP where `mlp_layer_types` says so, else per-expert `mlp.experts.{i}.*`, the router
    `mlp.router.gate`, the selection bias `mlp.expert_bias` and the shared expert
    `mlp.shared_mlp`; each next-token-prediction block after the last layer is a sparse
    layer with `eh_proj`, `enorm`, `hnorm` and `final_layernorm`."""
    e, h, nh, nkv = kw["hidden_size"], kw["head_dim"], kw["num_attention_heads"], \
        kw["num_key_value_heads"]
    ff, mff, x = kw["intermediate_size"], kw["moe_intermediate_size"], kw["num_experts"]
    sff = mff * kw["num_shared_experts"]
    n, nextn = kw["num_hidden_layers"], kw["num_nextn_predict_layers"]
    out = {"model.embed_tokens.weight": (kw["vocab_size"], e), "model.norm.weight": (e,)}
    for b in range(n + nextn):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,), p + "post_attention_layernorm.weight": (e,),
                    p + "self_attn.q_proj.weight": (nh * h, e),
                    p + "self_attn.k_proj.weight": (nkv * h, e),
                    p + "self_attn.v_proj.weight": (nkv * h, e),
                    p + "self_attn.o_proj.weight": (e, nh * h),
                    p + "self_attn.q_norm.weight": (h,), p + "self_attn.k_norm.weight": (h,)})
        if b >= n:
            out.update({p + "eh_proj.weight": (e, 2 * e), p + "enorm.weight": (e,),
                        p + "hnorm.weight": (e,), p + "final_layernorm.weight": (e,)})
        elif kw["mlp_layer_types"][b] == "dense":
            out.update({p + "mlp.gate_proj.weight": (ff, e), p + "mlp.up_proj.weight": (ff, e),
                        p + "mlp.down_proj.weight": (e, ff)})
            continue
        out.update({p + "mlp.router.gate.weight": (x, e), p + "mlp.expert_bias": (x,),
                    p + "mlp.shared_mlp.gate_proj.weight": (sff, e),
                    p + "mlp.shared_mlp.up_proj.weight": (sff, e),
                    p + "mlp.shared_mlp.down_proj.weight": (e, sff)})
        for i in range(x):
            out.update({p + f"mlp.experts.{i}.gate_proj.weight": (mff, e),
                        p + f"mlp.experts.{i}.up_proj.weight": (mff, e),
                        p + f"mlp.experts.{i}.down_proj.weight": (e, mff)})
    return out


def _hyv4_tensors(kw: dict) -> dict:
    """HYV4ForCausalLM's tensor names and shapes in the hub layout (tencent/Hy4): MLA with
    q_a/q_b, kv_a_proj_with_mqa/kv_b, the output gate `linear_gate` and the per-head
    `learnable_sink_param`; the DSA indexer on the layers `indexer_types` calls "full"; the
    iHC pre-mixers of attention and MLP (`hc_*_layer.hc_pre.hc_{fn,base,scale}`) and the
    head's (`model.hc_head.hc_head_*`); dense MLP where `mlp_layer_types` says so, else the
    router `mlp.gate` with its correction bias, fused stacked experts and shared experts;
    the MTP layers under `model.mtp_layers.` (the converter drops them)."""
    e, nh, hc = kw["hidden_size"], kw["num_attention_heads"], kw["hc_mult"]
    ql, kvl = kw["q_lora_rank"], kw["kv_lora_rank"]
    nope, rope, v = kw["qk_nope_head_dim"], kw["qk_rope_head_dim"], kw["v_head_dim"]
    ff, mff, x = kw["intermediate_size"], kw["moe_intermediate_size"], kw["n_routed_experts"]
    sff = mff * kw["n_shared_experts"]
    ih, ihd = kw["index_n_heads"], kw["index_head_dim"]
    out = {"model.embed_tokens.weight": (kw["vocab_size"], e), "model.norm.weight": (e,),
           "model.hc_head.hc_head_fn": (hc, hc * e), "model.hc_head.hc_head_base": (hc,),
           "model.hc_head.hc_head_scale": (1,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        a = p + "self_attn."
        out.update({p + "input_layernorm.weight": (e,), p + "post_attention_layernorm.weight": (e,),
                    a + "q_a_proj.weight": (ql, e), a + "q_a_layernorm.weight": (ql,),
                    a + "q_b_proj.weight": (nh * (nope + rope), ql),
                    a + "kv_a_proj_with_mqa.weight": (kvl + rope, e),
                    a + "kv_a_layernorm.weight": (kvl,),
                    a + "kv_b_proj.weight": (nh * (nope + v), kvl),
                    a + "o_proj.weight": (e, nh * v), a + "linear_gate.weight": (nh * v, e),
                    a + "learnable_sink_param": (nh,)})
        for part in ("hc_attn_layer", "hc_mlp_layer"):
            q = p + part + ".hc_pre."
            out.update({q + "hc_fn": (2 * hc, hc * e), q + "hc_base": (2 * hc,),
                        q + "hc_scale": (2,)})
        if kw["indexer_types"][b] == "full":
            out.update({a + "indexer.wq_b.weight": (ih * ihd, ql), a + "indexer.wk.weight": (ihd, e),
                        a + "indexer.k_norm.weight": (ihd,), a + "indexer.k_norm.bias": (ihd,),
                        a + "indexer.weights_proj.weight": (ih, e)})
        if kw["mlp_layer_types"][b] == "dense":
            out.update({p + "mlp.gate_proj.weight": (ff, e), p + "mlp.up_proj.weight": (ff, e),
                        p + "mlp.down_proj.weight": (e, ff)})
            continue
        out.update({p + "mlp.gate.weight": (x, e), p + "mlp.gate.e_score_correction_bias": (x,),
                    p + "mlp.experts.gate_up_proj": (x, 2 * mff, e),
                    p + "mlp.experts.down_proj": (x, e, mff),
                    p + "mlp.shared_experts.gate_proj.weight": (sff, e),
                    p + "mlp.shared_experts.up_proj.weight": (sff, e),
                    p + "mlp.shared_experts.down_proj.weight": (e, sff)})
    for m in range(kw["num_nextn_predict_layers"]):
        p = f"model.mtp_layers.{m}."
        out.update({p + "eh_proj.weight": (e, 2 * e), p + "enorm.weight": (e,),
                    p + "hnorm.weight": (e,)})
    return out


def _mimo2_tensors(kw: dict) -> dict:
    """MiMoV2FlashForCausalLM's tensor names and shapes in the hub layout: the sliding layers
    (hybrid_layer_pattern 1) have their own KV heads and a per-head attention_sink_bias, values
    are v_head_dim wide; a dense MLP where moe_layer_freq is 0, else the router with its
    correction bias and per-expert projections; each MTP layer under model.mtp.layers has the
    sliding attention, a dense MLP, enorm / hnorm / eh_proj and final_layernorm."""
    e, nh, hd, vhd = kw["hidden_size"], kw["num_attention_heads"], kw["head_dim"], \
        kw["v_head_dim"]
    ff, mff, x = kw["intermediate_size"], kw["moe_intermediate_size"], kw["n_routed_experts"]
    n = kw["num_hidden_layers"]
    out = {"model.embed_tokens.weight": (kw["vocab_size"], e), "model.norm.weight": (e,)}

    def block(p: str, swa: bool, moe: bool) -> None:
        kv = kw["swa_num_key_value_heads" if swa else "num_key_value_heads"]
        out.update({p + "input_layernorm.weight": (e,), p + "post_attention_layernorm.weight": (e,),
                    p + "self_attn.q_proj.weight": (nh * hd, e),
                    p + "self_attn.k_proj.weight": (kv * hd, e),
                    p + "self_attn.v_proj.weight": (kv * vhd, e),
                    p + "self_attn.o_proj.weight": (e, nh * vhd)})
        if swa:
            out[p + "self_attn.attention_sink_bias"] = (nh,)
        if not moe:
            out.update({p + "mlp.gate_proj.weight": (ff, e), p + "mlp.up_proj.weight": (ff, e),
                        p + "mlp.down_proj.weight": (e, ff)})
            return
        out.update({p + "mlp.gate.weight": (x, e), p + "mlp.gate.e_score_correction_bias": (x,)})
        for i in range(x):
            out.update({p + f"mlp.experts.{i}.gate_proj.weight": (mff, e),
                        p + f"mlp.experts.{i}.up_proj.weight": (mff, e),
                        p + f"mlp.experts.{i}.down_proj.weight": (e, mff)})

    for b in range(n):
        block(f"model.layers.{b}.", kw["hybrid_layer_pattern"][b] == 1, kw["moe_layer_freq"][b] == 1)
    for m in range(kw["num_nextn_predict_layers"]):
        p = f"model.mtp.layers.{m}."
        block(p, True, False)
        out.update({p + "enorm.weight": (e,), p + "hnorm.weight": (e,),
                    p + "eh_proj.weight": (e, 2 * e), p + "final_layernorm.weight": (e,)})
    return out


def _step35_tensors(kw: dict) -> dict:
    """Step3p5ForCausalLM's tensor names and shapes in the hub layout: the sliding layers
    (layer_types) take their head counts from attention_other_setting; q/k norms of the head
    width and a head-wise gate (g_proj); a dense MLP outside moe_layers_enum, else the router
    (moe.gate) with its bias (moe.router_bias), the experts already stacked (moe.*_proj) and
    the shared expert (share_expert.*); each MTP layer (model.layers.{n + i}) has the
    attention, a dense MLP, enorm / hnorm / eh_proj and its shared head under transformer."""
    e, hd = kw["hidden_size"], kw["head_dim"]
    ff, mff, x = kw["intermediate_size"], kw["moe_intermediate_size"], kw["moe_num_experts"]
    sff, n = kw["share_expert_dim"], kw["num_hidden_layers"]
    moe = {int(i) for i in kw["moe_layers_enum"].split(",")}
    other = kw["attention_other_setting"]
    out = {"model.embed_tokens.weight": (kw["vocab_size"], e), "model.norm.weight": (e,)}

    def block(b: int) -> None:
        p = f"model.layers.{b}."
        swa = b < n and kw["layer_types"][b] == "sliding_attention"
        nh = other["num_attention_heads"] if swa else kw["num_attention_heads"]
        kv = other["num_attention_groups"] if swa else kw["num_attention_groups"]
        out.update({p + "input_layernorm.weight": (e,), p + "post_attention_layernorm.weight": (e,),
                    p + "self_attn.q_proj.weight": (nh * hd, e),
                    p + "self_attn.k_proj.weight": (kv * hd, e),
                    p + "self_attn.v_proj.weight": (kv * hd, e),
                    p + "self_attn.o_proj.weight": (e, nh * hd),
                    p + "self_attn.q_norm.weight": (hd,), p + "self_attn.k_norm.weight": (hd,),
                    p + "self_attn.g_proj.weight": (nh, e)})
        if b not in moe:
            out.update({p + "mlp.gate_proj.weight": (ff, e), p + "mlp.up_proj.weight": (ff, e),
                        p + "mlp.down_proj.weight": (e, ff)})
            return
        out.update({p + "moe.gate.weight": (x, e), p + "moe.router_bias": (x,),
                    p + "moe.gate_proj.weight": (x, mff, e), p + "moe.up_proj.weight": (x, mff, e),
                    p + "moe.down_proj.weight": (x, e, mff),
                    p + "share_expert.gate_proj.weight": (sff, e),
                    p + "share_expert.up_proj.weight": (sff, e),
                    p + "share_expert.down_proj.weight": (e, sff)})

    for b in range(n + kw["num_nextn_predict_layers"]):
        block(b)
    for b in range(n, n + kw["num_nextn_predict_layers"]):
        p = f"model.layers.{b}."
        out.update({p + "enorm.weight": (e,), p + "hnorm.weight": (e,),
                    p + "eh_proj.weight": (e, 2 * e),
                    p + "transformer.shared_head.norm.weight": (e,),
                    p + "transformer.shared_head.output.weight": (kw["vocab_size"], e)})
    return out


def _llamalike(qk_norm: bool = False, qkv_bias: bool = False, untied: bool = False,
               fused: str | None = None, attn: str = "self_attn", norm_bias: bool = False,
               gate: bool = False):
    """Tensor names and shapes of a Llama-layout checkpoint (`model.layers.{b}.self_attn.*`,
    `mlp.{gate,up,down}_proj`, `input_layernorm` / `post_attention_layernorm`) for remote-code
    classes: optional q/k norms (per head), q/k/v biases, an untied `lm_head`, a fused
    attention input (`fused`: the name of one [q; k; v] matrix replacing q/k/v_proj) and
    LayerNorm biases beside the norm weights (`norm_bias`), a head-wise attention output
    gate `g_proj` of one row per head (`gate`)."""
    def shapes(kw: dict) -> dict:
        e, i, v = kw["hidden_size"], kw["intermediate_size"], kw["vocab_size"]
        nh, nkv = kw["num_attention_heads"], kw.get("num_key_value_heads") or kw["num_attention_heads"]
        hd = kw.get("head_dim") or e // nh
        out = {"model.embed_tokens.weight": (v, e), "model.norm.weight": (e,)}
        if untied:
            out["lm_head.weight"] = (v, e)
        for b in range(kw["num_hidden_layers"]):
            p, a = f"model.layers.{b}.", f"model.layers.{b}.{attn}."
            out.update({p + "input_layernorm.weight": (e,),
                        p + "post_attention_layernorm.weight": (e,),
                        a + "o_proj.weight": (e, nh * hd),
                        p + "mlp.gate_proj.weight": (i, e), p + "mlp.up_proj.weight": (i, e),
                        p + "mlp.down_proj.weight": (e, i)})
            if fused:
                out[a + fused + ".weight"] = ((nh + 2 * nkv) * hd, e)
            else:
                out.update({a + "q_proj.weight": (nh * hd, e), a + "k_proj.weight": (nkv * hd, e),
                            a + "v_proj.weight": (nkv * hd, e)})
            if qkv_bias and not fused:
                out.update({a + "q_proj.bias": (nh * hd,), a + "k_proj.bias": (nkv * hd,),
                            a + "v_proj.bias": (nkv * hd,)})
            if qk_norm:
                out.update({a + "q_norm.weight": (hd,), a + "k_norm.weight": (hd,)})
            if gate:
                out[a + "g_proj.weight"] = (nh, e)
            if norm_bias:
                out.update({p + "input_layernorm.bias": (e,),
                            p + "post_attention_layernorm.bias": (e,)})
        if norm_bias:
            out["model.norm.bias"] = (e,)
        return out
    return shapes


def _plm_tensors(kw: dict) -> dict:
    """PLMForCausalLM's checkpoint: multi-head latent attention without q-lora and an MLP of
    up/down projections only, tied embeddings."""
    e, i, v, nh = kw["hidden_size"], kw["intermediate_size"], kw["vocab_size"], \
        kw["num_attention_heads"]
    nope, rope, vd, kvr = (kw["qk_nope_head_dim"], kw["qk_rope_head_dim"], kw["v_head_dim"],
                           kw["kv_lora_rank"])
    out = {"model.embed_tokens.weight": (v, e), "model.norm.weight": (e,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,),
                    p + "post_attention_layernorm.weight": (e,),
                    p + "self_attn.q_proj.weight": (nh * (nope + rope), e),
                    p + "self_attn.kv_a_proj_with_mqa.weight": (kvr + rope, e),
                    p + "self_attn.kv_a_layernorm.weight": (kvr,),
                    p + "self_attn.kv_b_proj.weight": (nh * (nope + vd), kvr),
                    p + "self_attn.o_proj.weight": (e, nh * vd),
                    p + "mlp.up_proj.weight": (i, e), p + "mlp.down_proj.weight": (e, i)})
    return out


def _smallthinker_tensors(kw: dict) -> dict:
    """SmallThinkerForCausalLM's checkpoint: Llama attention, every block's FFN a routed MoE
    (`block_sparse_moe.primary_router`, `block_sparse_moe.experts.{i}.{gate,up,down}`)."""
    e, v, nh, nkv, hd = (kw["hidden_size"], kw["vocab_size"], kw["num_attention_heads"],
                         kw["num_key_value_heads"], kw["head_dim"])
    ff, x = kw["moe_ffn_hidden_size"], kw["moe_num_primary_experts"]
    out = {"model.embed_tokens.weight": (v, e), "model.norm.weight": (e,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,),
                    p + "post_attention_layernorm.weight": (e,),
                    p + "self_attn.q_proj.weight": (nh * hd, e),
                    p + "self_attn.k_proj.weight": (nkv * hd, e),
                    p + "self_attn.v_proj.weight": (nkv * hd, e),
                    p + "self_attn.o_proj.weight": (e, nh * hd),
                    p + "block_sparse_moe.primary_router.weight": (x, e)})
        for i in range(x):
            q = p + f"block_sparse_moe.experts.{i}."
            out.update({q + "gate.weight": (ff, e), q + "up.weight": (ff, e),
                        q + "down.weight": (e, ff)})
    return out


def _maple_tensors(kw: dict) -> dict:
    """MapleForCausalLM's (and Mellum's) checkpoint: Llama attention with q/k norms, every
    block's FFN a routed MoE (`mlp.gate`, `mlp.experts.{i}.{gate,up,down}_proj`)."""
    out = {k: v for k, v in _llamalike(qk_norm=True)(kw).items() if ".mlp." not in k}
    e, ff, x = kw["hidden_size"], kw["moe_intermediate_size"], kw["num_experts"]
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}.mlp."
        out[p + "gate.weight"] = (x, e)
        for i in range(x):
            out.update({p + f"experts.{i}.gate_proj.weight": (ff, e),
                        p + f"experts.{i}.up_proj.weight": (ff, e),
                        p + f"experts.{i}.down_proj.weight": (e, ff)})
    return out


def _internlm2_tensors(kw: dict) -> dict:
    """InternLM2ForCausalLM's checkpoint: `model.tok_embeddings`, `attention.wqkv` (per KV
    group: its q heads, then k, then v), `attention.wo`, `feed_forward.w1/w3/w2`,
    `attention_norm` / `ffn_norm`, an untied `output`."""
    e, i, v = kw["hidden_size"], kw["intermediate_size"], kw["vocab_size"]
    nh, nkv = kw["num_attention_heads"], kw["num_key_value_heads"]
    hd = e // nh
    out = {"model.tok_embeddings.weight": (v, e), "model.norm.weight": (e,),
           "output.weight": (v, e)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        out.update({p + "attention_norm.weight": (e,), p + "ffn_norm.weight": (e,),
                    p + "attention.wqkv.weight": ((nh + 2 * nkv) * hd, e),
                    p + "attention.wo.weight": (e, nh * hd),
                    p + "feed_forward.w1.weight": (i, e), p + "feed_forward.w3.weight": (i, e),
                    p + "feed_forward.w2.weight": (e, i)})
    return out


# Fixtures without a transformers class: name -> (tensor shapes from the config, extra
# config keys). Written with the same draws as build_model (sorted names).
def _chatglm_tensors(kw: dict) -> dict:
    """ChatGLM's tensor names and shapes: query_key_value holds the query heads then one key
    and one value block per group (with bias); dense_h_to_4h holds gate then up rows."""
    e, h, d = kw["hidden_size"], kw["num_attention_heads"], kw["kv_channels"]
    g, ff, v = kw["multi_query_group_num"], kw["ffn_hidden_size"], kw["padded_vocab_size"]
    out = {"transformer.embedding.word_embeddings.weight": (v, e),
           "transformer.output_layer.weight": (v, e),
           "transformer.encoder.final_layernorm.weight": (e,),
           "transformer.rotary_pos_emb.inv_freq": (d // 4,)}
    for b in range(kw["num_layers"]):
        p = f"transformer.encoder.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,),
                    p + "self_attention.query_key_value.weight": (h * d + 2 * g * d, e),
                    p + "self_attention.query_key_value.bias": (h * d + 2 * g * d,),
                    p + "self_attention.dense.weight": (e, h * d),
                    p + "post_attention_layernorm.weight": (e,),
                    p + "mlp.dense_h_to_4h.weight": (2 * ff, e),
                    p + "mlp.dense_4h_to_h.weight": (e, ff)})
    return out


def _deci_tensors(kw: dict) -> dict:
    """DeciLM's tensor names and shapes: Llama's, per layer as its block config says (a
    linear attention layer has one linear_attn matrix, a no-op one nothing, a no-op FFN
    neither norm nor MLP), KV heads per layer, FFN widths from the multipliers."""
    e, nh = kw["hidden_size"], kw["num_attention_heads"]
    hd = e // nh
    out = {"model.embed_tokens.weight": (kw["vocab_size"], e), "model.norm.weight": (e,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        if "block_configs" in kw:
            att, ffn = kw["block_configs"][b]["attention"], kw["block_configs"][b]["ffn"]
            g, mult = att["n_heads_in_group"], ffn["ffn_mult"]
            ff = 0 if mult is None else -(-int(2 * mult * e / 3) // 256) * 256
        else:
            g = nh // kw["num_key_value_heads_per_layer"][b]
            att, ff = {"replace_with_linear": False}, kw["intermediate_size"]
        if g is not None:
            out.update({p + "input_layernorm.weight": (e,),
                        p + "self_attn.q_proj.weight": (e, e),
                        p + "self_attn.k_proj.weight": (nh // g * hd, e),
                        p + "self_attn.v_proj.weight": (nh // g * hd, e),
                        p + "self_attn.o_proj.weight": (e, e)})
        elif att["replace_with_linear"]:
            out.update({p + "input_layernorm.weight": (e,),
                        p + "self_attn.linear_attn.weight": (e, e)})
        if ff:
            out.update({p + "post_attention_layernorm.weight": (e,),
                        p + "mlp.gate_proj.weight": (ff, e), p + "mlp.up_proj.weight": (ff, e),
                        p + "mlp.down_proj.weight": (e, ff)})
    return out


def _arctic_tensors(kw: dict) -> dict:
    """Snowflake Arctic's checkpoint: Llama attention, a hidden x hidden residual MLP
    (`residual_mlp.w1/w2/w3`, `residual_layernorm`), the router and per-expert w1/w2/w3
    under `block_sparse_moe`, an untied head."""
    e, i, v = kw["hidden_size"], kw["intermediate_size"], kw["vocab_size"]
    nh, nkv, x = kw["num_attention_heads"], kw["num_key_value_heads"], kw["num_local_experts"]
    hd = e // nh
    out = {"model.embed_tokens.weight": (v, e), "model.norm.weight": (e,),
           "lm_head.weight": (v, e)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,),
                    p + "post_attention_layernorm.weight": (e,),
                    p + "residual_layernorm.weight": (e,),
                    p + "self_attn.q_proj.weight": (nh * hd, e),
                    p + "self_attn.k_proj.weight": (nkv * hd, e),
                    p + "self_attn.v_proj.weight": (nkv * hd, e),
                    p + "self_attn.o_proj.weight": (e, nh * hd),
                    p + "residual_mlp.w1.weight": (e, e), p + "residual_mlp.w3.weight": (e, e),
                    p + "residual_mlp.w2.weight": (e, e),
                    p + "block_sparse_moe.gate.weight": (x, e)})
        for j in range(x):
            q = p + f"block_sparse_moe.experts.{j}."
            out.update({q + "w1.weight": (i, e), q + "w3.weight": (i, e), q + "w2.weight": (e, i)})
    return out


def _grok_tensors(kw: dict) -> dict:
    """Grok-2's checkpoint: Llama attention between pre/post attention norms, the router and
    per-expert w1/w2/w3 under block_sparse_moe, a dense mlp, pre/post MoE norms."""
    e, i, mi, v = kw["hidden_size"], kw["intermediate_size"], kw["moe_intermediate_size"], \
        kw["vocab_size"]
    nh, nkv, hd, x = kw["num_attention_heads"], kw["num_key_value_heads"], kw["head_dim"], \
        kw["num_local_experts"]
    out = {"model.embed_tokens.weight": (v, e), "model.norm.weight": (e,),
           "lm_head.weight": (v, e)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        out.update({p + n + ".weight": (e,) for n in
                    ("pre_attn_norm", "post_attn_norm", "pre_moe_norm", "post_moe_norm")})
        out.update({p + "self_attn.q_proj.weight": (nh * hd, e),
                    p + "self_attn.k_proj.weight": (nkv * hd, e),
                    p + "self_attn.v_proj.weight": (nkv * hd, e),
                    p + "self_attn.o_proj.weight": (e, nh * hd),
                    p + "mlp.gate_proj.weight": (i, e), p + "mlp.up_proj.weight": (i, e),
                    p + "mlp.down_proj.weight": (e, i),
                    p + "block_sparse_moe.gate.weight": (x, e)})
        for j in range(x):
            q = p + f"block_sparse_moe.experts.{j}."
            out.update({q + "w1.weight": (mi, e), q + "w3.weight": (mi, e),
                        q + "w2.weight": (e, mi)})
    return out


def _grok1_tensors(kw: dict) -> dict:
    """Grok-1's checkpoint (keyfan/grok-1-hf): transformer.decoder_layer names, four norms
    per layer, experts moe.{x}.linear / linear_v / linear_1, the embedding tied."""
    e, i, v = kw["hidden_size"], kw["intermediate_size"], kw["vocab_size"]
    nh, nkv, x = kw["num_attention_heads"], kw["num_key_value_heads"], kw["num_local_experts"]
    hd = e // nh
    out = {"transformer.in_out_embed.weight": (v, e), "transformer.rms_norm.weight": (e,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"transformer.decoder_layer.{b}."
        out.update({p + n + ".weight": (e,) for n in
                    ("rms_norm", "rms_norm_1", "rms_norm_2", "rms_norm_3")})
        out.update({p + "multi_head_attention.query.weight": (nh * hd, e),
                    p + "multi_head_attention.key.weight": (nkv * hd, e),
                    p + "multi_head_attention.value.weight": (nkv * hd, e),
                    p + "multi_head_attention.linear.weight": (e, nh * hd),
                    p + "router.weight": (x, e)})
        for j in range(x):
            q = p + f"moe.{j}."
            out.update({q + "linear.weight": (i, e), q + "linear_v.weight": (i, e),
                        q + "linear_1.weight": (e, i)})
    return out


def _bailing3_tensors(kw: dict) -> dict:
    """BailingMoeV3ForCausalLM's tensor names and shapes (inclusionAI's remote code): KDA
    layers, MLA layers every layer_group_size-th (and past num_hidden_layers), the MTP layer's
    fusion tensors; a VL checkpoint (text_config) adds the vision tower and projector."""
    kw = {**kw, **kw.get("text_config", {})}
    e, nh, hd = kw["hidden_size"], kw["num_attention_heads"], kw["head_dim"]
    ff, mff, x = kw["intermediate_size"], kw["moe_intermediate_size"], kw["num_experts"]
    sff, conv = kw["moe_shared_expert_intermediate_size"], kw["short_conv_kernel_size"]
    rank, nope, rope, vd = kw["kv_lora_rank"], kw["qk_nope_head_dim"], kw["qk_rope_head_dim"], \
        kw["v_head_dim"]
    n, g, qr = kw["num_hidden_layers"], kw["layer_group_size"], kw.get("q_lora_rank")
    d = nh * hd
    out = {"model.word_embeddings.weight": (kw["vocab_size"], e), "model.norm.weight": (e,)}
    for b in range(n + kw.get("num_nextn_predict_layers", 0)):
        p = f"model.layers.{b}."
        a = p + "attention."
        out.update({p + "input_layernorm.weight": (e,), p + "post_attention_layernorm.weight": (e,)})
        if b >= n or (b + 1) % g == 0 or b >= n // g * g:
            if qr:
                out.update({a + "q_a_proj.weight": (qr, e), a + "q_a_layernorm.weight": (qr,),
                            a + "q_b_proj.weight": (nh * (nope + rope), qr)})
            else:
                out[a + "q_proj.weight"] = (nh * (nope + rope), e)
            out.update({a + "kv_a_proj_with_mqa.weight": (rank + rope, e),
                        a + "kv_a_layernorm.weight": (rank,),
                        a + "kv_b_proj.weight": (nh * (nope + vd), rank),
                        a + "g_proj.weight": (nh, e), a + "dense.weight": (e, nh * vd)})
        else:
            out.update({a + "q_proj.weight": (d, e), a + "k_proj.weight": (d, e),
                        a + "v_proj.weight": (d, e), a + "q_conv1d.weight": (d, 1, conv),
                        a + "k_conv1d.weight": (d, 1, conv), a + "v_conv1d.weight": (d, 1, conv),
                        a + "f_proj.weight": (d, e), a + "b_proj.weight": (nh, e),
                        a + "A_log": (nh,), a + "dt_bias": (d,), a + "g_proj.weight": (d, e),
                        a + "o_norm.weight": (hd,), a + "o_proj.weight": (e, d)})
        if b >= n:
            out.update({p + "eh_proj.weight": (e, 2 * e), p + "enorm.weight": (e,),
                        p + "hnorm.weight": (e,), p + "final_layernorm.weight": (e,)})
        if b < kw["first_k_dense_replace"]:
            out.update({p + "mlp.gate_proj.weight": (ff, e), p + "mlp.up_proj.weight": (ff, e),
                        p + "mlp.down_proj.weight": (e, ff)})
            continue
        out.update({p + "mlp.gate.weight": (x, e), p + "mlp.gate.expert_bias": (x,),
                    p + "mlp.shared_experts.gate_proj.weight": (sff, e),
                    p + "mlp.shared_experts.up_proj.weight": (sff, e),
                    p + "mlp.shared_experts.down_proj.weight": (e, sff)})
        for i in range(x):
            out.update({p + f"mlp.experts.{i}.gate_proj.weight": (mff, e),
                        p + f"mlp.experts.{i}.up_proj.weight": (mff, e),
                        p + f"mlp.experts.{i}.down_proj.weight": (e, mff)})
    if "vision_config" in kw:
        vh, vo = kw["vision_config"]["hidden_size"], kw["vision_config"]["out_hidden_size"]
        out.update({"model.visual.patch_embed.proj.weight": (vh, 3, 2, 2, 2),
                    "model.visual.blocks.0.attn.qkv.weight": (3 * vh, vh),
                    "model.visual.merger.norm.weight": (vh,),
                    "linear_proj.0.weight": (e, vo), "linear_proj.0.bias": (e,),
                    "linear_proj.2.weight": (e, e), "linear_proj.2.bias": (e,)})
    return out


RAW_MODELS = {
    "nomicbert": (_nomic_tensors, {"model_type": "nomic_bert"}),
    "deepseek": (_deepseek_v1_tensors, {"model_type": "deepseek"}),
    "kimik25": (_kimik25_tensors, {"model_type": "kimi_k25"}),
    "bailingmoe2": (_bailing2_tensors, {"model_type": "bailing_moe_v2"}),
    "neobert": (_neobert_tensors, {"model_type": "neobert"}),
    "neobert-cls": (_neobert_tensors, {"model_type": "neobert"}),
    "jinabert": (_jinabert_tensors, {"model_type": "bert"}),
    "codeshell": (_codeshell_tensors, {"model_type": "codeshell"}),
    "refact": (_refact_tensors, {"model_type": "gpt_refact"}),
    "maincoder": (_llamalike(qk_norm=True), {"model_type": "maincoder"}),
    "nanbeige": (_llamalike(), {"model_type": "nanbeige"}),
    "orion": (_llamalike(untied=True, norm_bias=True), {"model_type": "orion"}),
    "baichuan": (_llamalike(untied=True, fused="W_pack"), {"model_type": "baichuan"}),
    "pangu": (_llamalike(untied=True, qkv_bias=True), {"model_type": "PanguEmbedded"}),
    "plm": (_plm_tensors, {"model_type": "plm"}),
    "kormo": (_llamalike(untied=True), {"model_type": "kormo"}),
    "smallthinker": (_smallthinker_tensors, {"model_type": "smallthinker"}),
    "spark2_5": (_llamalike(fused="q_k_v_proj", gate=True), {"model_type": "spark2_5"}),
    "maple": (_maple_tensors, {"model_type": "maple"}),
    "mellum": (_maple_tensors, {"model_type": "mellum"}),
    "internlm2": (_internlm2_tensors, {"model_type": "internlm2"}),
    "xverse": (_llamalike(untied=True), {"model_type": "xverse"}),
    "jais": (_jais_tensors, {"model_type": "jais"}),
    "openelm": (_openelm_tensors, {"model_type": "openelm"}),
    "deepseek4": (None, {"model_type": "deepseek_v4"}),
    "chatglm": (_chatglm_tensors, {"model_type": "chatglm"}),
    "minicpm": (_llamalike(), {"model_type": "minicpm"}),
    "deci": (_deci_tensors, {"model_type": "nemotron-nas"}),
    "deci7b": (_deci_tensors, {"model_type": "deci"}),
    "minimax-m3": (_minimax_m3_tensors, {"model_type": "minimax_m3"}),
    "hyv3": (_hyv3_tensors, {"model_type": "hy_v3"}),
    "arctic": (_arctic_tensors, {"model_type": "arctic"}),
    "grok": (_grok_tensors, {"model_type": "grok-2"}),
    "grok1": (_grok1_tensors, {"model_type": "grok-1"}),
    "rwkv6": (_rwkv6_tensors, {"model_type": "rwkv6"}),
    "rwkv7": (_rwkv7_tensors, {"model_type": "rwkv7"}),
    "rwkv6qwen2": (_rwkv6qwen2_tensors, {"model_type": "rwkv6qwen2"}),
    "arwkv7": (_arwkv7_tensors, {"model_type": "rwkv_hybrid"}),
    "minimax01": (_minimax01_tensors, {"model_type": "minimax_text_01"}),
    "dotsocr": (_dotsocr_tensors, {"model_type": "dots_ocr"}),
    "bailingmoe": (_bailing1_tensors, {"model_type": "bailing_moe"}),
    "hyv4": (_hyv4_tensors, {"model_type": "hy_v4"}),
    "mimo2": (_mimo2_tensors, {"model_type": "mimo_v2_flash"}),
    "bailingmoe3": (_bailing3_tensors, {"model_type": "bailing_moe_v3"}),
    "bailingmoe3-vl": (_bailing3_tensors, {"model_type": "bailing_moe_v3_vl"}),
    # Without model_type: transformers 5.24 registers `step3p5` (Step3p7TextConfig), whose
    # to_dict() renames num_attention_groups / moe_num_experts, which the reference then
    # fails to find (the model_type is a refused config variant, see family_variants).
    "step35": (_step35_tensors, {}),
}


# LFM2.5-Audio's detokenizer (Lfm25AudioTokenizer, written directly in the published
# layout): an LFM2 backbone under `lfm.` (convolution and attention layers, the embedding
# norm), the code embedding `emb.emb` and the ISTFT window (both dropped), and the output
# projection `lin` to `output_size`; sliding-window attention; no vocabulary.
FIXTURES["lfm25audio"] = (
    "Lfm25AudioTokenizer", "lfm2",
    dict(hidden_size=16, block_ff_dim=40, intermediate_size=40, num_hidden_layers=3,
         num_attention_heads=2, num_key_value_heads=1,
         layer_types=["conv", "full_attention", "conv"], conv_L_cache=3, norm_eps=1e-5,
         block_auto_adjust_ff_dim=True, block_ffn_dim_multiplier=1.0, block_multiple_of=16,
         max_position_embeddings=2048, vocab_size=65, rope_theta=1000000.0,
         sliding_window=24, output_size=18),
    "none", False)


def _lfm25_audio_tensors(kw: dict) -> dict:
    """Lfm25AudioTokenizer's tensor names and shapes."""
    e, v, out = kw["hidden_size"], kw["vocab_size"], kw["output_size"]
    ff = 32  # the FFN width the model builds from block_ff_dim 40
    hd = e // kw["num_attention_heads"]
    kv = kw["num_key_value_heads"] * hd
    shapes = {"emb.emb.weight": (v, e), "istft.window": (out,),
              "lfm.embedding_norm.weight": (e,), "lin.weight": (out, e), "lin.bias": (out,)}
    for b, t in enumerate(kw["layer_types"]):
        p = f"lfm.layers.{b}."
        shapes.update({p + "operator_norm.weight": (e,), p + "ffn_norm.weight": (e,),
                       p + "feed_forward.w1.weight": (ff, e), p + "feed_forward.w3.weight": (ff, e),
                       p + "feed_forward.w2.weight": (e, ff)})
        if t == "conv":
            shapes.update({p + "conv.conv.weight": (e, 1, kw["conv_L_cache"]),
                           p + "conv.in_proj.weight": (3 * e, e),
                           p + "conv.out_proj.weight": (e, e)})
        else:
            shapes.update({p + "self_attn.q_proj.weight": (e, e), p + "self_attn.k_proj.weight": (kv, e),
                           p + "self_attn.v_proj.weight": (kv, e),
                           p + "self_attn.out_proj.weight": (e, e),
                           p + "self_attn.q_layernorm.weight": (hd,),
                           p + "self_attn.k_layernorm.weight": (hd,)})
    return shapes


RAW_MODELS["lfm25audio"] = (_lfm25_audio_tensors, {"model_type": "lfm2"})

# LFM2 embedding models (the reference's LFM2ColBertModel), built as transformers' headless
# Lfm2Model: tensor names without the `model.` prefix the class adds. LFM2.5-ColBERT
# (Lfm2Model) carries its projection in 1_Dense/model.safetensors (`linear.weight`, written
# as dense_2 with its width as embedding_length_out) and no pooling module; LFM2.5-Embedding
# (Lfm2BidirectionalModel: non-causal attention) a CLS pooling module and no Dense file. The
# seed's first draw is the embedding, the lfm2 fixture's (stored once).
FIXTURES["lfm2-colbert"] = (
    "Lfm2Model", "lfm2",
    bpe(hidden_size=8, num_hidden_layers=3, intermediate_size=48, num_attention_heads=2,
        num_key_value_heads=1, layer_types=["conv", "full_attention", "conv"],
        block_multiple_of=16, block_ffn_dim_multiplier=1.5, conv_L_cache=3,
        norm_eps=1e-5, max_position_embeddings=128000),
    "smollm", True)
FIXTURES["lfm2-bidir"] = (
    "Lfm2BidirectionalModel", "lfm2",
    bpe(hidden_size=8, num_hidden_layers=3, intermediate_size=40, num_attention_heads=2,
        num_key_value_heads=2, layer_types=["full_attention", "conv", "full_attention"],
        block_multiple_of=8, block_auto_adjust_ff_dim=False, conv_L_cache=4,
        norm_eps=1e-6, max_position_embeddings=32768),
    "smollm", True)
BUILD_CLASS["Lfm2BidirectionalModel"] = "Lfm2Model"


def _lfm2_dense(out: Path, dims: tuple[int, int] | None, pooling: str | None) -> None:
    """LFM2 embedding models' sentence-transformers files: modules.json, a pooling module
    (`pooling`, when given) and a 1_Dense projection `dims` = (in, out) (when given)."""
    import numpy as np
    import torch
    from safetensors.torch import save_file
    mods = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"}]
    if dims is not None:
        mods.append({"idx": 1, "name": "1", "path": "1_Dense",
                     "type": "pylate.models.Dense.Dense"})
        (out / "1_Dense").mkdir()
        (out / "1_Dense/config.json").write_text(json.dumps({
            "in_features": dims[0], "out_features": dims[1], "bias": False,
            "activation_function": "torch.nn.modules.linear.Identity"}, indent=2) + "\n")
        w = 0.02 * np.random.default_rng(11).standard_normal((dims[1], dims[0]))
        save_file({"linear.weight": torch.from_numpy(w.astype(np.float32)).to(torch.bfloat16)},
                  str(out / "1_Dense/model.safetensors"), metadata={"format": "pt"})
    if pooling is not None:
        mods.append({"idx": len(mods), "name": str(len(mods)), "path": "1_Pooling",
                     "type": "sentence_transformers.models.Pooling"})
        (out / "1_Pooling").mkdir()
        (out / "1_Pooling/config.json").write_text(json.dumps({
            "word_embedding_dimension": 8, "pooling_mode_cls_token": pooling == "cls",
            "pooling_mode_mean_tokens": pooling == "mean", "pooling_mode_max_tokens": False,
            "pooling_mode_lasttoken": pooling == "last", "include_prompt": True},
            indent=2) + "\n")
    (out / "modules.json").write_text(json.dumps(mods, indent=2) + "\n")


# WavTokenizer's decoder (WavTokenizerDec, written directly in the layout llama.cpp's TTS
# example converts the published checkpoint to): the code embedding, an input convolution,
# the six PosNet blocks (residual, residual, attention, residual, residual, norm), ConvNeXt
# blocks, the ISTFT head's projection, and the quantizer's training statistics (dropped).
FIXTURES["wavtokenizer"] = (
    "WavTokenizerDec", "",
    dict(vocab_size=64, hidden_size=20, n_embd_features=16, n_ff=48, n_head=1, n_layer=6,
         max_position_embeddings=8192, layer_norm_epsilon=1e-6, group_norm_epsilon=1e-6,
         group_norm_groups=4, posnet={"n_embd": 16, "n_layer": 6},
         convnext={"n_embd": 16, "n_layer": 2}),
    "none", False)


def _wavtokenizer_tensors(kw: dict) -> dict:
    """WavTokenizerDec's tensor names and shapes (PyTorch layouts: convolutions are
    [out, in, kernel])."""
    v, f, out, ff = kw["vocab_size"], kw["n_embd_features"], kw["hidden_size"], kw["n_ff"]
    pe, ce = kw["posnet"]["n_embd"], kw["convnext"]["n_embd"]
    q = "feature_extractor.encodec.quantizer.vq.layers.0._codebook."
    shapes = {"backbone.embedding.weight": (v, f), q + "cluster_size": (v,),
              q + "embed_avg": (v, f), q + "inited": (1,),
              "backbone.embed.weight": (pe, f, 7), "backbone.embed.bias": (pe,),
              "backbone.norm.weight": (pe,), "backbone.norm.bias": (pe,),
              "backbone.final_layer_norm.weight": (ce,), "backbone.final_layer_norm.bias": (ce,),
              "head.out.weight": (out, ce), "head.out.bias": (out,)}
    for b in range(kw["posnet"]["n_layer"]):
        p = f"backbone.posnet.{b}."
        if b in (0, 1, 3, 4):
            for n in ("norm1", "norm2"):
                shapes.update({p + n + ".weight": (pe,), p + n + ".bias": (pe,)})
            for n in ("conv1", "conv2"):
                shapes.update({p + n + ".weight": (pe, pe, 3), p + n + ".bias": (pe,)})
        else:
            shapes.update({p + "norm.weight": (pe,), p + "norm.bias": (pe,)})
        if b == 2:
            for n in ("q", "k", "v", "proj_out"):
                shapes.update({p + n + ".weight": (pe, pe, 1), p + n + ".bias": (pe,)})
    for b in range(kw["convnext"]["n_layer"]):
        p = f"backbone.convnext.{b}."
        shapes.update({p + "dwconv.weight": (ce, 1, 7), p + "dwconv.bias": (ce,),
                       p + "norm.weight": (ce,), p + "norm.bias": (ce,),
                       p + "pwconv1.weight": (ff, ce), p + "pwconv1.bias": (ff,),
                       p + "pwconv2.weight": (ce, ff), p + "pwconv2.bias": (ce,),
                       p + "gamma": (ce,)})
    return shapes


RAW_MODELS["wavtokenizer"] = (_wavtokenizer_tensors, {})

# Width of the MXFP4 routed experts of the deepseek4 fixture (whole 32-value blocks).
DSV4_EXPERT_WIDTH = 32


def _deepseek4_checkpoint(kw: dict, rng) -> dict:
    """DeepSeek V4's published checkpoint layout (see the deepseek4 fixture): name -> torch
    tensor in the vendor's dtypes, values drawn in sorted name order. FP8 weights are
    N(0, 0.02) divided by their power-of-two block scale (one 128 x 128 block here);
    MXFP4 experts are random codes with exponents near 2^-7."""
    import numpy as np
    import torch
    e, v, nh, hd = kw["hidden_size"], kw["vocab_size"], kw["num_attention_heads"], kw["head_dim"]
    ql, og, ol = kw["q_lora_rank"], kw["o_groups"], kw["o_lora_rank"]
    ne, ff, hc = kw["n_routed_experts"], kw["moe_intermediate_size"], kw["hc_mult"]
    ih, ihd = kw["index_n_heads"], kw["index_head_dim"]
    xw = DSV4_EXPERT_WIDTH
    mix = (2 + hc) * hc
    spec = {}  # name -> (shape, kind)

    def layer(p: str, ratio: int, hashed: bool) -> None:
        spec.update({
            p + "hc_attn_fn": ((mix, hc * e), "f32"), p + "hc_attn_base": ((mix,), "f32"),
            p + "hc_attn_scale": ((3,), "f32"), p + "hc_ffn_fn": ((mix, hc * e), "f32"),
            p + "hc_ffn_base": ((mix,), "f32"), p + "hc_ffn_scale": ((3,), "f32"),
            p + "attn_norm.weight": ((e,), "bf16"), p + "ffn_norm.weight": ((e,), "bf16"),
            p + "attn.attn_sink": ((nh,), "f32"),
            p + "attn.wq_a.weight": ((ql, e), "fp8"), p + "attn.q_norm.weight": ((ql,), "bf16"),
            p + "attn.wq_b.weight": ((nh * hd, ql), "fp8"),
            p + "attn.wkv.weight": ((hd, e), "fp8"), p + "attn.kv_norm.weight": ((hd,), "bf16"),
            p + "attn.wo_a.weight": ((og * ol, nh * hd // og), "fp8"),
            p + "attn.wo_b.weight": ((e, og * ol), "fp8"),
            p + "ffn.gate.weight": ((ne, e), "bf16"), p + "ffn.gate.bias": ((ne,), "f32"),
            p + "ffn.shared_experts.w1.weight": ((ff, e), "fp8"),
            p + "ffn.shared_experts.w2.weight": ((e, ff), "fp8"),
            p + "ffn.shared_experts.w3.weight": ((ff, e), "fp8"),
        })
        if hashed:
            spec[p + "ffn.gate.tid2eid"] = ((257, kw["num_experts_per_tok"]), "tid")
            spec[p + "ffn.gate.bias_vl"] = ((ne,), "f32")
        if ratio:
            width = 2 * hd if ratio == 4 else hd
            spec.update({p + "attn.compressor.ape": ((ratio, width), "f32"),
                         p + "attn.compressor.wkv.weight": ((width, e), "bf16"),
                         p + "attn.compressor.wgate.weight": ((width, e), "bf16"),
                         p + "attn.compressor.norm.weight": ((hd,), "bf16")})
        if ratio == 4:
            spec.update({p + "attn.indexer.wq_b.weight": ((ih * ihd, ql), "fp8"),
                         p + "attn.indexer.weights_proj.weight": ((ih, e), "bf16"),
                         p + "attn.indexer.compressor.ape": ((ratio, 2 * ihd), "f32"),
                         p + "attn.indexer.compressor.wkv.weight": ((2 * ihd, e), "bf16"),
                         p + "attn.indexer.compressor.wgate.weight": ((2 * ihd, e), "bf16"),
                         p + "attn.indexer.compressor.norm.weight": ((ihd,), "bf16")})
        for x in range(ne):
            for w, (rows, cols) in (("w1", (ff, xw)), ("w2", (xw, ff)), ("w3", (ff, xw))):
                spec[p + f"ffn.experts.{x}.{w}.weight"] = ((rows, cols // 2), "fp4")
                spec[p + f"ffn.experts.{x}.{w}.scale"] = ((rows, cols // 32), "e8m0")

    ratios = kw["compress_ratios"]
    for b in range(kw["num_hidden_layers"]):
        layer(f"layers.{b}.", ratios[b], b < kw["num_hash_layers"])
    spec.update({"norm.weight": ((e,), "bf16"), "hc_head_fn": ((hc, hc * e), "f32"),
                 "hc_head_base": ((hc,), "f32"), "hc_head_scale": ((1,), "f32")})
    m = "mtp.0."
    layer(m, ratios[kw["num_hidden_layers"]], False)
    spec.update({m + "e_proj.weight": ((e, e), "fp8"), m + "h_proj.weight": ((e, e), "fp8"),
                 m + "enorm.weight": ((e,), "bf16"), m + "hnorm.weight": ((e,), "bf16"),
                 m + "norm.weight": ((e,), "bf16"), m + "hc_head_fn": ((hc, hc * e), "f32"),
                 m + "hc_head_base": ((hc,), "f32"), m + "hc_head_scale": ((1,), "f32")})
    return draw_deepseek4(spec, rng, ne)


def draw_deepseek4(spec: dict, rng, ne: int) -> dict:
    """The tensors of `spec` (name -> (shape, kind)) in DeepSeek-V4's published dtypes, drawn
    from `rng` in sorted name order: FP8 weights N(0, 0.02) over a power-of-two block scale
    (E8M0, one per 128 x 128 block), MXFP4 experts as random codes with E8M0 exponents near
    2^-7, int64 routing tables (expert ids below `ne`), F32 / BF16 matrices N(0, 0.02) and
    norms 1 + 0.05 N."""
    import numpy as np
    import torch
    out = {}
    for name in sorted(spec):
        shape, kind = spec[name]
        if kind == "fp8":
            # One block scale 2^(s - 127) per 128 x 128 block, the weight divided by it.
            sexp = 120 + int(rng.integers(0, 4))
            w = 0.02 * rng.standard_normal(shape) / 2.0 ** (sexp - 127)
            out[name] = torch.from_numpy(w.astype(np.float32)).to(torch.float8_e4m3fn)
            sshape = tuple(-(-d // 128) for d in shape)
            out[name[:-len("weight")] + "scale"] = torch.from_numpy(
                np.full(sshape, sexp, dtype=np.uint8)).view(torch.float8_e8m0fnu)
        elif kind == "fp4":
            out[name] = torch.from_numpy(
                rng.integers(0, 256, size=shape, dtype=np.uint8)).view(torch.int8)
        elif kind == "e8m0":
            out[name] = torch.from_numpy(
                rng.integers(118, 123, size=shape, dtype=np.uint8)).view(torch.float8_e8m0fnu)
        elif kind == "tid":
            out[name] = torch.from_numpy(rng.integers(0, ne, size=shape, dtype=np.int64))
        else:
            is_norm = "norm" in name and len(shape) == 1
            x = 1.0 + 0.05 * rng.standard_normal(shape) if is_norm \
                else 0.02 * rng.standard_normal(shape)
            t = torch.from_numpy(x.astype(np.float32))
            out[name] = t if kind == "f32" else t.to(torch.bfloat16)
    return out


# Raw models whose whole checkpoint (dtypes included) a function writes: name ->
# fn(kw, rng) -> {name: tensor}; BORROWED tensors are put in afterwards.
RAW_WRITERS = {"deepseek4": _deepseek4_checkpoint}

# Raw-model tensors drawn first, before the sorted others: a tied vocabulary embedding drawn
# first is the one the other BPE fixtures of its width hold (stored once, share_tensors.py).
RAW_FIRST = {"bailingmoe2": ["model.word_embeddings.weight"],
             "internlm2": ["output.weight", "model.tok_embeddings.weight"],
             "bailingmoe": ["model.word_embeddings.weight"],
             "bailingmoe3": ["model.word_embeddings.weight"],
             "bailingmoe3-vl": ["model.word_embeddings.weight"]}

# Small remote-code families (written directly in their hub layout).
FIXTURES.update({
    # GroveMoE (inclusionAI, remote code): Qwen3-MoE attention (q/k norms) and routed experts,
    # plus "adjugate" chunk experts (half as many, FFN width head_dim) and an unused
    # selection bias the converter drops.
    "grovemoe": ("GroveMoeForCausalLM", "grove_moe",
                 bpe(head_dim=8, moe_intermediate_size=24, num_experts=4, num_experts_per_tok=2,
                     vocab_size=BPE_VOCAB, rms_norm_eps=1e-6, rope_theta=1000000.0,
                     norm_topk_prob=True),
                 "smollm", True),
    # Sarvam-MoE (sarvam-30b's layout: BailingMoeV2's names, full rotary, zero-mean selection
    # bias) under the auto_map spelling and without `model_type` (config.json read as
    # written): converted, with a partial_rotary_factor the class overrides. The published
    # config's `model_type: sarvam_moe` is typed by transformers' SarvamMoEConfig, whose
    # attribute_map hides num_experts / num_shared_experts, so the reference refuses it (the
    # `fam-sarvam-moe-typed` variant).
    "sarvam-untyped": ("modeling_sarvam_moe.SarvamMoEForCausalLM", "",
                       dict(hidden_size=16, intermediate_size=40, num_hidden_layers=2,
                            num_attention_heads=2, num_key_value_heads=1, head_dim=8,
                            vocab_size=BPE_VOCAB, max_position_embeddings=4096,
                            rms_norm_eps=1e-6, rope_theta=8000000.0, first_k_dense_replace=1,
                            partial_rotary_factor=0.5, moe_intermediate_size=20,
                            num_experts=4, num_experts_per_tok=2, num_shared_experts=1,
                            routed_scaling_factor=2.5, norm_topk_prob=False,
                            num_nextn_predict_layers=0, bos_token_id=1, eos_token_id=2),
                       "smollm", True),
})


def _grove_tensors(kw: dict) -> dict:
    """GroveMoeForCausalLM's tensor names and shapes (inclusionAI's remote code): the
    Qwen3 layout with routed experts, chunk experts of width head_dim and a selection bias."""
    e, hd, x = kw["hidden_size"], kw["head_dim"], kw["num_experts"]
    mff = kw["moe_intermediate_size"]
    out = _llamalike(qk_norm=True)(kw)
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}.mlp."
        for w in ("gate_proj", "up_proj", "down_proj"):
            del out[p + w + ".weight"]
        out.update({p + "gate.weight": (x, e), p + "expert_bias": (x,)})
        for i in range(x):
            out.update({p + f"experts.{i}.gate_proj.weight": (mff, e),
                        p + f"experts.{i}.up_proj.weight": (mff, e),
                        p + f"experts.{i}.down_proj.weight": (e, mff)})
        for i in range(x // 2):
            out.update({p + f"chunk_experts.{i}.gate_proj.weight": (hd, e),
                        p + f"chunk_experts.{i}.up_proj.weight": (hd, e),
                        p + f"chunk_experts.{i}.down_proj.weight": (e, hd)})
    return out


RAW_MODELS.update({
    "grovemoe": (_grove_tensors, {"model_type": "grove_moe"}),
    "sarvam-untyped": (_bailing2_tensors, {}),
})
RAW_FIRST.update({"grovemoe": ["model.embed_tokens.weight"],
                  "sarvam-untyped": ["model.word_embeddings.weight"]})

# Diffusion language models (remote code, written directly in their hub layout). The untied
# ones draw their head and embedding first, as the transformers-built untied BPE fixtures of
# width 16 do, so both are stored once.
FIXTURES.update({
    # LLaDA (GSAI-ML): OLMo-style config spellings (d_model, n_heads, n_kv_heads, n_layers,
    # mlp_hidden_size, max_sequence_length), `model.transformer.*` names, q/k un-permuted with
    # the kv head count, non-causal, no logit shift, add_bos_token forced on.
    "llada": ("LLaDAModelLM", "llada",
              dict(d_model=16, n_heads=2, n_kv_heads=1, n_layers=2, mlp_hidden_size=40,
                   max_sequence_length=4096, vocab_size=BPE_VOCAB, embedding_size=BPE_VOCAB,
                   rope_theta=500000.0, rms_norm_eps=1e-5, weight_tying=False, rope=True,
                   block_type="llama", layer_norm_type="rms", include_bias=False,
                   mask_token_id=49151, eos_token_id=2, pad_token_id=2),
              "smollm", False),
    # LLaDA-MoE (inclusionAI): OLMoE's layout (q/k norms, routed experts), the expert width
    # `expert_intermediate_size`, a fixed mask token id.
    "lladamoe": ("LLaDAMoEModelLM", "lladamoe",
                 bpe(intermediate_size=40, expert_intermediate_size=24, num_experts=4,
                     num_experts_per_tok=2, rms_norm_eps=1e-5, rope_theta=50000.0,
                     vocab_size=BPE_VOCAB, qk_layernorm=True),
                 "smollm", False),
    # Dream (Dream-org): Qwen2's layout (q/k/v biases), non-causal, its mask token id; no
    # tokenizer.model, so its own GPT-2 vocabulary path.
    "dream": ("DreamModel", "Dream",
              bpe(vocab_size=BPE_VOCAB, rms_norm_eps=1e-6, rope_theta=1000000.0,
                  mask_token_id=49151, pad_token_id=2, bos_token_id=1, eos_token_id=2),
              "smollm", False),
    # RND1 (Radical Numerics): Qwen3-MoE's layout as Qwen2-MoE's converter reads it, non-causal,
    # its mask token id.
    "rnd1": ("RND1", "rnd1",
             bpe(head_dim=8, moe_intermediate_size=24, num_experts=4, num_experts_per_tok=2,
                 vocab_size=BPE_VOCAB, rms_norm_eps=1e-6, rope_theta=1000000.0,
                 norm_topk_prob=True, mask_token_id=49151),
             "smollm", False),
})


def _llada_tensors(kw: dict) -> dict:
    """LLaDAModelLM's tensor names and shapes (GSAI-ML's remote code, OLMo's layout)."""
    e, nh, nkv, ff = kw["d_model"], kw["n_heads"], kw["n_kv_heads"], kw["mlp_hidden_size"]
    hd, v = e // nh, kw["embedding_size"]
    out = {"model.transformer.wte.weight": (v, e), "model.transformer.ln_f.weight": (e,)}
    if not kw["weight_tying"]:
        out["model.transformer.ff_out.weight"] = (v, e)
    for b in range(kw["n_layers"]):
        p = f"model.transformer.blocks.{b}."
        out.update({p + "attn_norm.weight": (e,), p + "ff_norm.weight": (e,),
                    p + "q_proj.weight": (nh * hd, e), p + "k_proj.weight": (nkv * hd, e),
                    p + "v_proj.weight": (nkv * hd, e), p + "attn_out.weight": (e, nh * hd),
                    p + "ff_proj.weight": (ff, e), p + "up_proj.weight": (ff, e),
                    p + "ff_out.weight": (e, ff)})
    return out


def _moe_llamalike(ff_key: str, **kw_layout):
    """A Llama-layout checkpoint (see `_llamalike`) whose FFN is routed experts only:
    `mlp.gate` and `mlp.experts.{i}.{gate,up,down}_proj` of width `kw[ff_key]`."""
    base = _llamalike(**kw_layout)

    def shapes(kw: dict) -> dict:
        out = base(kw)
        e, x, mff = kw["hidden_size"], kw["num_experts"], kw[ff_key]
        for b in range(kw["num_hidden_layers"]):
            p = f"model.layers.{b}.mlp."
            for w in ("gate_proj", "up_proj", "down_proj"):
                del out[p + w + ".weight"]
            out[p + "gate.weight"] = (x, e)
            for i in range(x):
                out.update({p + f"experts.{i}.gate_proj.weight": (mff, e),
                            p + f"experts.{i}.up_proj.weight": (mff, e),
                            p + f"experts.{i}.down_proj.weight": (e, mff)})
        return out
    return shapes


RAW_MODELS.update({
    "llada": (_llada_tensors, {"model_type": "llada"}),
    "lladamoe": (_moe_llamalike("expert_intermediate_size", qk_norm=True, untied=True),
                 {"model_type": "lladamoe"}),
    "dream": (_llamalike(qkv_bias=True, untied=True), {"model_type": "Dream"}),
    "rnd1": (_moe_llamalike("moe_intermediate_size", qk_norm=True, untied=True),
             {"model_type": "rnd1"}),
})
RAW_FIRST.update({
    "llada": ["model.transformer.ff_out.weight", "model.transformer.wte.weight"],
    "lladamoe": ["lm_head.weight", "model.embed_tokens.weight"],
    "dream": ["lm_head.weight", "model.embed_tokens.weight"],
    "rnd1": ["lm_head.weight", "model.embed_tokens.weight"],
})

# HRM-Text (sapientinc's hub layout: fused `attn.gqkv_proj` and `mlp.gate_up_proj`, weightless
# norms, an L and an H stack of `num_hidden_layers` blocks each, the recurrent state's
# `z_L_init`); transformers' HrmTextConfig types the config.
FIXTURES.update({
    "hrmtext": ("HrmTextForCausalLM", "hrm_text",
                dict(hidden_size=16, intermediate_size=40, num_hidden_layers=1,
                     num_attention_heads=2, head_dim=8, H_cycles=2, L_cycles=1,
                     embedding_scale=4.0, prefix_lm=True, vocab_size=BPE_VOCAB,
                     max_position_embeddings=4096, rms_norm_eps=1e-6, rope_theta=10000.0),
                "smollm", False),
})


def _hrm_tensors(kw: dict) -> dict:
    """HrmTextForCausalLM's tensor names and shapes in the hub layout."""
    e, nh, hd, ff = kw["hidden_size"], kw["num_attention_heads"], kw["head_dim"], \
        kw["intermediate_size"]
    out = {"model.embed_tokens.weight": (kw["vocab_size"], e),
           "lm_head.weight": (kw["vocab_size"], e), "model.z_L_init": (e,)}
    for stack in ("L", "H"):
        for b in range(kw["num_hidden_layers"]):
            p = f"model.{stack}_module.layers.{b}."
            out.update({p + "attn.gqkv_proj.weight": (4 * nh * hd, e),
                        p + "attn.o_proj.weight": (e, nh * hd),
                        p + "mlp.gate_up_proj.weight": (2 * ff, e),
                        p + "mlp.down_proj.weight": (e, ff)})
    return out


RAW_MODELS["hrmtext"] = (_hrm_tensors, {"model_type": "hrm_text"})
RAW_FIRST["hrmtext"] = ["lm_head.weight", "model.embed_tokens.weight"]

# Talkie (lewtun's HF port, remote code): weightless RMS norms with torch's default eps, gains
# (`a_g`, `head_g`, `w_g`) instead of norm weights, q/k rows carrying an inverse rope sign.
FIXTURES["talkie"] = ("TalkieForCausalLM", "talkie",
                      dict(hidden_size=16, intermediate_size=40, num_hidden_layers=2,
                           num_attention_heads=2, head_dim=8, vocab_size=BPE_VOCAB,
                           max_position_embeddings=4096, rope_theta=10000.0),
                      "smollm", False)


def _talkie_tensors(kw: dict) -> dict:
    """TalkieForCausalLM's tensor names and shapes (the HF port's layout)."""
    e, nh, hd, ff = kw["hidden_size"], kw["num_attention_heads"], kw["head_dim"], \
        kw["intermediate_size"]
    out = {"model.embed.weight": (kw["vocab_size"], e), "lm_head.weight": (kw["vocab_size"], e),
           "lm_head_gain.w_g": (1,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.blocks.{b}."
        out.update({p + "attn.attn_query.weight": (nh * hd, e),
                    p + "attn.attn_key.weight": (nh * hd, e),
                    p + "attn.attn_value.weight": (nh * hd, e),
                    p + "attn.attn_resid.weight": (e, nh * hd),
                    p + "attn.head_gain.head_g": (nh,), p + "attn_gain.a_g": (1,),
                    p + "mlp.mlp_linear.weight": (ff, e), p + "mlp.mlp_gate.weight": (ff, e),
                    p + "mlp.mlp_resid.weight": (e, ff), p + "mlp_gain.a_g": (1,),
                    p + "embed_skip.a_g": (1,)})
    return out


RAW_MODELS["talkie"] = (_talkie_tensors, {"model_type": "talkie"})
RAW_FIRST["talkie"] = ["lm_head.weight", "model.embed.weight"]

# PLaMo 2 / PLaMo 3 (pfnet's hub layout, remote code: config.json read as written). PLaMo 2
# interleaves Mamba mixers (`mixer.in_proj`, `bcdt_proj`, `dt_bias`, `A_log`, norms stored as
# `*_norm_weight`) with attention mixers (fused `qkv_proj`, per-head `q_weight` / `k_weight`
# norms) every `mamba_step` layers; PLaMo 3 is attention only with sliding-window layers. Both
# read the PLaMo vocabulary file `tokenizer.jsonl` (kind "plamo").
PLAMO_TOKENS = 300
FIXTURES.update({
    "plamo2": ("Plamo2ForCausalLM", "plamo2",
               dict(hidden_size=32, hidden_size_per_head=8, intermediate_size=48,
                    num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                    mamba_d_state=8, mamba_d_conv=4, mamba_num_heads=8, mamba_step=2,
                    mamba_enabled=True, mamba_chunk_size=256, max_position_embeddings=2048,
                    rms_norm_eps=1e-6, rope_theta=10000, vocab_size=PLAMO_TOKENS + 3),
               "plamo", False),
    "plamo3": ("Plamo3ForCausalLM", "plamo3",
               dict(hidden_size=32, head_dim=8, intermediate_size=48, num_hidden_layers=4,
                    num_attention_heads=4, num_key_value_heads=2, window_size=64,
                    sliding_window_pattern=2, max_position_embeddings=4096,
                    rms_norm_eps=1e-6, rope_theta=1000000.0, rope_local_theta=10000.0,
                    vocab_size=PLAMO_TOKENS + 3),
               "plamo3", True),
})


def _plamo2_tensors(kw: dict) -> dict:
    """Plamo2ForCausalLM's tensor names and shapes (modeling_plamo.py's layout)."""
    e, hd, ff = kw["hidden_size"], kw["hidden_size_per_head"], kw["intermediate_size"]
    nh, nkv, mh = kw["num_attention_heads"], kw["num_key_value_heads"], kw["mamba_num_heads"]
    d_inner, d_state, dt_rank = mh * hd, kw["mamba_d_state"], max(16, e // 16)
    n, step = kw["num_hidden_layers"], kw["mamba_step"]
    out = {"model.embed_tokens.weight": (kw["vocab_size"], e), "model.norm.weight": (e,),
           "lm_head.weight": (kw["vocab_size"], e)}
    for b in range(n):
        p = f"model.layers.layers.{b}."
        mamba = b != n - 1 if n <= step // 2 else b % step != step // 2
        if mamba:
            m = p + "mixer."
            out.update({m + "in_proj.weight": (2 * d_inner, e),
                        m + "conv1d.weight": (d_inner, 1, kw["mamba_d_conv"]),
                        m + "bcdt_proj.weight": (dt_rank + 2 * d_state, d_inner),
                        m + "dt_proj.weight": (mh, dt_rank), m + "dt_bias": (mh,),
                        m + "A_log": (mh,), m + "D": (mh,),
                        m + "dt_norm_weight": (dt_rank,), m + "B_norm_weight": (d_state,),
                        m + "C_norm_weight": (d_state,), m + "out_proj.weight": (e, d_inner)})
        else:
            out.update({p + "mixer.qkv_proj.weight": ((nh + 2 * nkv) * hd, e),
                        p + "mixer.q_weight": (nh, hd), p + "mixer.k_weight": (nkv, hd),
                        p + "mixer.o_proj.weight": (e, nh * hd)})
        out.update({p + "pre_mixer_norm.weight": (e,), p + "post_mixer_norm.weight": (e,),
                    p + "pre_mlp_norm.weight": (e,), p + "post_mlp_norm.weight": (e,),
                    p + "mlp.gate_up_proj.weight": (2 * ff, e),
                    p + "mlp.down_proj.weight": (e, ff)})
    return out


def _plamo3_tensors(kw: dict) -> dict:
    """Plamo3ForCausalLM's tensor names and shapes (modeling_plamo3.py's layout)."""
    e, hd, ff = kw["hidden_size"], kw["head_dim"], kw["intermediate_size"]
    nh, nkv = kw["num_attention_heads"], kw["num_key_value_heads"]
    out = {"model.embed_tokens.weight": (kw["vocab_size"], e), "model.norm.weight": (e,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.layers.{b}."
        out.update({p + "mixer.qkv_proj.weight": ((nh + 2 * nkv) * hd, e),
                    p + "mixer.q_norm.weight": (hd,), p + "mixer.k_norm.weight": (hd,),
                    p + "mixer.o_proj.weight": (e, nh * hd),
                    p + "pre_mixer_norm.weight": (e,), p + "post_mixer_norm.weight": (e,),
                    p + "pre_mlp_norm.weight": (e,), p + "post_mlp_norm.weight": (e,),
                    p + "mlp.gate_up_proj.weight": (2 * ff, e),
                    p + "mlp.down_proj.weight": (e, ff)})
    return out


RAW_MODELS["plamo2"] = (_plamo2_tensors, {"model_type": "plamo2"})
RAW_MODELS["plamo3"] = (_plamo3_tensors, {"model_type": "plamo3"})
RAW_FIRST["plamo2"] = ["model.embed_tokens.weight"]
RAW_FIRST["plamo3"] = ["model.embed_tokens.weight"]
TOKENIZERS["plamo"] = (None, ["tokenizer.jsonl"], ["tokenizer_config.json"])
TOKENIZERS["plamo3"] = (None, ["tokenizer.jsonl"], ["tokenizer_config.json",
                                                    "chat_template.jinja"])
SHARED_AS["plamo3"] = "plamo"

PLAMO3_TEMPLATE = ("{% for m in messages %}<|plamo:msg|>{{ m['role'] }}\n{{ m['content'] }}"
                   "<|plamo:op|>\n{% endfor %}")


def _plamo_tokenizer(out: Path, plamo3: bool) -> None:
    """A small PLaMo vocabulary (`tokenizer.jsonl`: one JSON list a line, `[text, score,
    type, ...]`, the type missing on some lines; blank lines between), its specials typed
    UNKNOWN / CONTROL, the 256 byte tokens BYTE, `<|plamo:...|>` texts of type NORMAL (control
    by their name), multi-byte characters; and tokenizer_config.json naming the specials
    (PLaMo 3: with a chat template, and chat_template.jinja replacing it)."""
    lines = [["<|plamo:unk|>", 0.0, "UNKNOWN", 0, None, None, None],
             ["<|plamo:bos|>", 0.0, "CONTROL", 0, None, None, None],
             ["<|plamo:eos|>", 0.0, "CONTROL", 0, None, None, None],
             ["<|plamo:pad|>", 0.0, "CONTROL", 0, None, None, None],
             ["<|plamo:op|>", 0.0, "NORMAL", 0, None, None, None],
             ["<|plamo:msg|>", 0.0, "NORMAL"]]
    lines += [[f"<0x{b:02X}>", 0.0, "BYTE", 0, None, None, None] for b in range(256)]
    words = ["\u2581the", "\u2581a", "ing", "\u2581and", "\u3053\u3093", "\u306b\u3061\u306f",
             "\u65e5\u672c", "\U0001f600", "<|plamo:x", "x|>", "\t", "\u2581\u2581",
             "caf\u00e9", "\"q\"", "back\\slash", "<|plamo:role|>", "\u2581of",
             "\u2581to", "ed", "er", "es", "\u2581in", "\u2581is", "on", "\u2581it",
             "or", "at", "\u2581be", "en", "an", "al", "\u2581that", "\u2581for", "re", "\u2581with", "\u2581on", "ly", "\u2581as"]
    for i, w in enumerate(words):
        score = -1.5 - 0.25 * i
        if i % 3 == 0:
            lines.append([w, score])
        elif i % 3 == 1:
            lines.append([w, score, "NORMAL", 1, None, None, None])
        else:
            lines.append([w, score, "USER_DEFINED"])
    assert len(lines) == PLAMO_TOKENS, len(lines)
    text = ""
    for i, ln in enumerate(lines):
        text += json.dumps(ln, ensure_ascii=(i % 2 == 0)) + "\n"
        if i % 50 == 49:
            text += "\n"
    (out / "tokenizer.jsonl").write_text(text, encoding="utf-8")
    tc = {"bos_token": "<|plamo:bos|>", "eos_token": "<|plamo:eos|>",
          "pad_token": "<|plamo:pad|>", "unk_token": "<|plamo:unk|>", "sep_token": None,
          "add_bos_token": True, "add_eos_token": False, "clean_up_tokenization_spaces": False,
          "model_max_length": 1000000000000000019884624838656,
          "tokenizer_class": "Plamo2Tokenizer",
          "auto_map": {"AutoTokenizer": ["tokenization_plamo.Plamo2Tokenizer", None]}}
    if plamo3:
        tc["chat_template"] = "{{ messages[0]['content'] }}"
        (out / "chat_template.jinja").write_text(PLAMO3_TEMPLATE, encoding="utf-8")
    (out / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n",
                                               encoding="utf-8")


# Chameleon (transformers' ChameleonForConditionalGeneration): a Llama decoder with per-head
# q/k LayerNorms (2-D weights and biases) and a VQ-VAE image tokenizer the converter drops (a
# tiny one here); GPT-2 BPE vocabulary. The reference's k-norm permutation takes its head size
# from hidden_size / num_key_value_heads, so only checkpoints without GQA convert.
FIXTURES["chameleon"] = ("ChameleonForConditionalGeneration", "chameleon",
                         bpe(num_key_value_heads=2, rms_norm_eps=1e-5, rope_theta=10000.0,
                             swin_norm=False, vocab_size=BPE_VOCAB,
                             vq_config=dict(embed_dim=4, num_embeddings=8, latent_channels=4,
                                            resolution=8, in_channels=3, base_channels=4,
                                            channel_multiplier=[1, 2], num_res_blocks=1),
                             vocabulary_map={"<image>": 8711, "IMGIMGBA": 4}),
                         "smollm", False)




def _chameleon_tensors(kw: dict) -> dict:
    """ChameleonForConditionalGeneration's tensor names and shapes (per-head q/k norms with
    biases), with two tensors of the image tokenizer the converter drops."""
    e, nh, nkv, ff = kw["hidden_size"], kw["num_attention_heads"], kw["num_key_value_heads"], \
        kw["intermediate_size"]
    hd = e // nh
    out = {"lm_head.weight": (kw["vocab_size"], e), "model.embed_tokens.weight": (kw["vocab_size"], e),
           "model.norm.weight": (e,), "model.vqmodel.quantize.embedding.weight": (8, 4),
           "model.vqmodel.encoder.conv_in.weight": (4, 3, 3, 3)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,), p + "post_attention_layernorm.weight": (e,),
                    p + "self_attn.q_proj.weight": (nh * hd, e),
                    p + "self_attn.k_proj.weight": (nkv * hd, e),
                    p + "self_attn.v_proj.weight": (nkv * hd, e),
                    p + "self_attn.o_proj.weight": (e, nh * hd),
                    p + "self_attn.q_norm.weight": (nh, hd), p + "self_attn.q_norm.bias": (nh, hd),
                    p + "self_attn.k_norm.weight": (nkv, hd), p + "self_attn.k_norm.bias": (nkv, hd),
                    p + "mlp.gate_proj.weight": (ff, e), p + "mlp.up_proj.weight": (ff, e),
                    p + "mlp.down_proj.weight": (e, ff)})
    return out


RAW_MODELS["chameleon"] = (_chameleon_tensors, {"model_type": "chameleon"})
RAW_FIRST["chameleon"] = ["lm_head.weight", "model.embed_tokens.weight"]


# ruGPT-3 XL (evilfreelancer's HF port, remote code: config.json read as written): a GPT-2
# decoder (LayerNorms and linear layers with biases, learned positions) whose q/k/v projections
# are separate; the converter concatenates them into `attn_qkv`. GPT-2 BPE vocabulary.
FIXTURES["rugpt3xl"] = ("RuGPT3XLForCausalLM", "rugpt3xl",
                        dict(hidden_size=16, intermediate_size=64, num_hidden_layers=2,
                             num_attention_heads=2, max_position_embeddings=64,
                             layer_norm_eps=1e-5, vocab_size=BPE_VOCAB, bos_token_id=1,
                             eos_token_id=2),
                        "smollm", False)


def _rugpt3xl_tensors(kw: dict) -> dict:
    """RuGPT3XLForCausalLM's tensor names and shapes (the port's layout)."""
    e, ff = kw["hidden_size"], kw["intermediate_size"]
    out = {"lm_head.weight": (kw["vocab_size"], e), "model.embed_tokens.weight": (kw["vocab_size"], e),
           "model.embed_positions.weight": (kw["max_position_embeddings"], e),
           "model.norm.weight": (e,), "model.norm.bias": (e,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        for n in ("input_layernorm", "post_attention_layernorm"):
            out.update({p + n + ".weight": (e,), p + n + ".bias": (e,)})
        for n in ("q_proj", "k_proj", "v_proj", "o_proj"):
            out.update({p + "self_attn." + n + ".weight": (e, e), p + "self_attn." + n + ".bias": (e,)})
        out.update({p + "mlp.up_proj.weight": (ff, e), p + "mlp.up_proj.bias": (ff,),
                    p + "mlp.down_proj.weight": (e, ff), p + "mlp.down_proj.bias": (e,)})
    return out


RAW_MODELS["rugpt3xl"] = (_rugpt3xl_tensors, {"model_type": "rugpt3xl"})
RAW_FIRST["rugpt3xl"] = ["lm_head.weight", "model.embed_tokens.weight"]


# Extra files some fixtures carry (sentence-transformers modules): name -> writer(out_dir).
def _st_modules(out: Path, dense_dims: tuple[int, int] | None, dim: int = 64,
                mode: str = "mean") -> None:
    import numpy as np
    import torch
    from safetensors.torch import save_file
    mods = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
    (out / "1_Pooling").mkdir()
    (out / "1_Pooling/config.json").write_text(json.dumps({
        "word_embedding_dimension": dim, "pooling_mode_cls_token": mode == "cls",
        "pooling_mode_mean_tokens": mode == "mean", "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False, "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": False, "include_prompt": True}, indent=2) + "\n")
    if dense_dims is not None:
        mods.append({"idx": 2, "name": "2", "path": "2_Dense",
                     "type": "sentence_transformers.models.Dense"})
        (out / "2_Dense").mkdir()
        (out / "2_Dense/config.json").write_text(json.dumps({
            "in_features": dense_dims[0], "out_features": dense_dims[1], "bias": False,
            "activation_function": "torch.nn.modules.linear.Identity"}, indent=2) + "\n")
        w = 0.02 * np.random.default_rng(7).standard_normal((dense_dims[1], dense_dims[0]))
        save_file({"linear.weight": torch.from_numpy(w.astype(np.float32)).to(torch.bfloat16)},
                  str(out / "2_Dense/model.safetensors"))
    (out / "modules.json").write_text(json.dumps(mods, indent=2) + "\n")


def _mtp_deepseek(kw: dict, saved: dict) -> dict:
    """A DeepSeek-V3 next-token-prediction block after the last layer (transformers does not
    build it): some of its tensors, an expert among them."""
    e, n = kw["hidden_size"], kw["num_hidden_layers"]
    p = f"model.layers.{n}."
    return {p + "eh_proj.weight": (e, 2 * e), p + "enorm.weight": (e,),
            p + "hnorm.weight": (e,), p + "shared_head.norm.weight": (e,),
            p + "input_layernorm.weight": (e,),
            p + "self_attn.kv_a_layernorm.weight": (kw["kv_lora_rank"],),
            p + "mlp.gate.weight": (kw["n_routed_experts"], e),
            p + "mlp.gate.e_score_correction_bias": (kw["n_routed_experts"],),
            p + "mlp.experts.0.up_proj.weight": (kw["moe_intermediate_size"], e)}


def _mtp_glm4moe(kw: dict, saved: dict) -> dict:
    """GLM-4.5's next-token-prediction block (transformers does not build it): a whole MoE
    decoder block after the last layer plus eh_proj, enorm, hnorm and shared_head.norm."""
    e, n, h = kw["hidden_size"], kw["num_hidden_layers"], kw["head_dim"]
    nh, nkv, ff, x = (kw["num_attention_heads"], kw["num_key_value_heads"],
                      kw["moe_intermediate_size"], kw["n_routed_experts"])
    p = f"model.layers.{n}."
    out = {p + "eh_proj.weight": (e, 2 * e), p + "enorm.weight": (e,), p + "hnorm.weight": (e,),
           p + "shared_head.norm.weight": (e,), p + "input_layernorm.weight": (e,),
           p + "post_attention_layernorm.weight": (e,),
           p + "self_attn.q_proj.weight": (nh * h, e), p + "self_attn.q_proj.bias": (nh * h,),
           p + "self_attn.k_proj.weight": (nkv * h, e), p + "self_attn.k_proj.bias": (nkv * h,),
           p + "self_attn.v_proj.weight": (nkv * h, e), p + "self_attn.v_proj.bias": (nkv * h,),
           p + "self_attn.o_proj.weight": (e, nh * h), p + "self_attn.q_norm.weight": (h,),
           p + "self_attn.k_norm.weight": (h,), p + "mlp.gate.weight": (x, e),
           p + "mlp.gate.e_score_correction_bias": (x,),
           p + "mlp.shared_experts.gate_proj.weight": (ff, e),
           p + "mlp.shared_experts.up_proj.weight": (ff, e),
           p + "mlp.shared_experts.down_proj.weight": (e, ff)}
    for i in range(x):
        out[p + f"mlp.experts.{i}.gate_proj.weight"] = (ff, e)
        out[p + f"mlp.experts.{i}.up_proj.weight"] = (ff, e)
        out[p + f"mlp.experts.{i}.down_proj.weight"] = (e, ff)
    return out


def _mtp_copy_last(kw: dict, saved: dict) -> dict:
    """A next-token-prediction block that transformers does not build: the last layer's
    tensors (shapes) under the next index, plus eh_proj, enorm, hnorm and shared_head.norm."""
    e, n = kw["hidden_size"], kw["num_hidden_layers"]
    last, p = f"model.layers.{n - 1}.", f"model.layers.{n}."
    out = {p + k[len(last):]: tuple(v.shape) for k, v in saved.items() if k.startswith(last)}
    out.update({p + "eh_proj.weight": (e, 2 * e), p + "enorm.weight": (e,),
                p + "hnorm.weight": (e,), p + "shared_head.norm.weight": (e,)})
    return out


def _mtp_qwen(kw: dict, saved: dict) -> dict:
    """Qwen3-Next / Qwen3.5's next-token-prediction block as the released checkpoints name
    it (transformers does not build it): mtp.fc, mtp.pre_fc_norm_embedding,
    mtp.pre_fc_norm_hidden, mtp.norm and a full-attention decoder layer under
    mtp.layers.0 (the shapes of the last layer, a full-attention one here)."""
    e, n = kw["hidden_size"], kw["num_hidden_layers"]
    last = f"model.layers.{n - 1}."
    out = {"mtp.layers.0." + k[len(last):]: tuple(v.shape)
           for k, v in saved.items() if k.startswith(last)}
    out.update({"mtp.fc.weight": (e, 2 * e), "mtp.pre_fc_norm_embedding.weight": (e,),
                "mtp.pre_fc_norm_hidden.weight": (e,), "mtp.norm.weight": (e,)})
    return out


def _mtp_nemotronh(kw: dict, saved: dict) -> dict:
    """Nemotron-H's MTP head as the released MoE checkpoints name it (transformers does not
    build it): mtp.layers.0 fuses the embedding and hidden state (enorm, hnorm, eh_proj) and
    holds an attention mixer, mtp.layers.1 the experts and the final head norm."""
    e, h = kw["hidden_size"], kw["head_dim"]
    nh, nkv, ff, x = (kw["num_attention_heads"], kw["num_key_value_heads"],
                      kw["moe_intermediate_size"], kw["n_routed_experts"])
    sh = kw["moe_shared_expert_intermediate_size"]
    a, b = "mtp.layers.0.", "mtp.layers.1."
    out = {a + "enorm.weight": (e,), a + "hnorm.weight": (e,), a + "eh_proj.weight": (e, 2 * e),
           a + "norm.weight": (e,), a + "mixer.q_proj.weight": (nh * h, e),
           a + "mixer.k_proj.weight": (nkv * h, e), a + "mixer.v_proj.weight": (nkv * h, e),
           a + "mixer.o_proj.weight": (e, nh * h), b + "norm.weight": (e,),
           b + "final_layernorm.weight": (e,), b + "mixer.gate.weight": (x, e),
           b + "mixer.gate.e_score_correction_bias": (x,),
           b + "mixer.shared_experts.up_proj.weight": (sh, e),
           b + "mixer.shared_experts.down_proj.weight": (e, sh)}
    for i in range(x):
        out[b + f"mixer.experts.{i}.up_proj.weight"] = (ff, e)
        out[b + f"mixer.experts.{i}.down_proj.weight"] = (e, ff)
    return out


def _mtp_exaone(kw: dict, saved: dict) -> dict:
    """K-EXAONE's next-token-prediction layer as the released checkpoints name it
    (transformers does not build it): mtp.fc, the two pre-fc norms, mtp.norm and a decoder
    layer under mtp.layers.0 with a dense MLP (the reference refuses routed experts there)."""
    e, n, ff = kw["hidden_size"], kw["num_hidden_layers"], kw["intermediate_size"]
    last = f"model.layers.{n - 1}."
    out = {"mtp.layers.0." + k[len(last):]: tuple(v.shape) for k, v in saved.items()
           if k.startswith(last) and ".mlp." not in k}
    out.update({"mtp.layers.0.mlp.gate_proj.weight": (ff, e),
                "mtp.layers.0.mlp.up_proj.weight": (ff, e),
                "mtp.layers.0.mlp.down_proj.weight": (e, ff),
                "mtp.fc.weight": (e, 2 * e), "mtp.pre_fc_norm_embedding.weight": (e,),
                "mtp.pre_fc_norm_hidden.weight": (e,), "mtp.norm.weight": (e,)})
    return out


# Tensors transformers does not build, added to the saved checkpoint: name -> shapes from
# the config. Drawn like build_model's (sorted names, its own seed).
EXTRA_TENSORS = {
    "deepseek3": _mtp_deepseek,
    "glm4moe": _mtp_glm4moe,
    "glm4moelite": _mtp_copy_last,
    "deepseek32": _mtp_copy_last,
    "glmdsa": _mtp_copy_last,
    "qwen3next": _mtp_qwen,
    "qwen35": _mtp_qwen,
    "qwen35moe": _mtp_qwen,
    "nemotronh": _mtp_nemotronh,
    "exaonemoe": _mtp_exaone,
    # transformers 5's T5Config saves tie_word_embeddings true whatever it is given: the
    # untied LM head of T5 v1.1 checkpoints is added here (and the config edited below).
    "t5": lambda kw, saved: {"lm_head.weight": (kw["vocab_size"], kw["d_model"])},
}


def add_tensors(path: Path, shapes_of, kw: dict, seed: int) -> None:
    import numpy as np
    import torch
    from safetensors.torch import load_file, save_file
    tensors = load_file(str(path))
    if kw.get("tie_word_embeddings"):
        # A tied model's LM head that transformers saved anyway (Nemotron-H) is dropped.
        tensors.pop("lm_head.weight", None)
    shapes = shapes_of(kw, tensors)
    rng = np.random.default_rng(seed)
    for pname, shape in sorted(shapes.items()):
        is_norm = "norm" in pname and len(shape) == 1 and pname.endswith("weight")
        v = 1.0 + 0.05 * rng.standard_normal(shape) if is_norm \
            else 0.02 * rng.standard_normal(shape)
        tensors[pname] = torch.from_numpy(v.astype(np.float32)).to(torch.bfloat16)
    save_file(tensors, str(path), metadata={"format": "pt"})


# fixture -> {parameter: (fixture, tensor)}: parameters copied from a committed fixture's
# weights (bf16, same shape) after the draws, so that share_tensors.py stores them once.
BORROWED = {
    # The MTP layer's own head: the embedding's values (the seed's first draw, stored once).
    "step35": {"model.layers.3.transformer.shared_head.output.weight":
               ("afmoe", "model.embed_tokens.weight")},
    "distilbert": {"distilbert.embeddings.word_embeddings.weight":
                   ("nomicbert", "embeddings.word_embeddings.weight")},
    "distilbert-cls": {"distilbert.embeddings.word_embeddings.weight":
                       ("nomicbert", "embeddings.word_embeddings.weight")},
    "roberta": {"embeddings.word_embeddings.weight":
                ("modernbert", "embeddings.tok_embeddings.weight")},
    "roberta-cls": {"roberta.embeddings.word_embeddings.weight":
                    ("modernbert", "embeddings.tok_embeddings.weight")},
    "eurobert": {"embed_tokens.weight": ("modernbert", "embeddings.tok_embeddings.weight")},
    "neobert": {"model.encoder.weight": ("nomicbert", "embeddings.word_embeddings.weight"),
                "decoder.weight": ("nomicbert", "embeddings.word_embeddings.weight")},
    "neobert-cls": {"model.encoder.weight": ("nomicbert", "embeddings.word_embeddings.weight")},
    "jinabert": {"bert.embeddings.word_embeddings.weight":
                 ("nomicbert", "embeddings.word_embeddings.weight")},
    "bloom": {"transformer.word_embeddings.weight":
              ("modernbert", "embeddings.tok_embeddings.weight")},
    "bloom-model": {"word_embeddings.weight": ("modernbert", "embeddings.tok_embeddings.weight")},
    "mpt": {"transformer.wte.weight": ("modernbert", "embeddings.tok_embeddings.weight")},
    "codeshell": {"transformer.wte.weight": ("modernbert", "embeddings.tok_embeddings.weight")},
    "exaone": {"model.embed_tokens.weight": ("modernbert", "embeddings.tok_embeddings.weight")},
    "jais": {"transformer.wte.weight": ("modernbert", "embeddings.tok_embeddings.weight"),
             "lm_head.weight": ("modernbert", "embeddings.tok_embeddings.weight")},
    "jais2": {"model.embed_tokens.weight": ("modernbert", "embeddings.tok_embeddings.weight"),
              "lm_head.weight": ("modernbert", "embeddings.tok_embeddings.weight")},
    "dbrx": {"transformer.wte.weight": ("modernbert", "embeddings.tok_embeddings.weight"),
             "lm_head.weight": ("modernbert", "embeddings.tok_embeddings.weight")},
    "refact": {"transformer.wte.weight": ("modernbert", "embeddings.tok_embeddings.weight"),
               "lm_head.weight": ("modernbert", "embeddings.tok_embeddings.weight")},
    "deepseek4": {"embed.weight": ("gptoss", "model.embed_tokens.weight"),
                  "head.weight": ("gptoss", "model.embed_tokens.weight")},
    "glm": {"model.embed_tokens.weight": ("glm4", "model.embed_tokens.weight"),
            "lm_head.weight": ("glm4", "model.embed_tokens.weight")},
    "chatglm": {"transformer.embedding.word_embeddings.weight":
                ("glm4", "model.embed_tokens.weight"),
                "transformer.output_layer.weight": ("glm4", "model.embed_tokens.weight")},
    "minicpm": {"model.embed_tokens.weight": ("baichuan", "model.embed_tokens.weight")},
    "minicpm3": {"model.embed_tokens.weight": ("baichuan", "model.embed_tokens.weight")},
    "qwen4exp": {"model.embed_tokens.weight": ("qwen35", "model.embed_tokens.weight")},
}
# PLaMo 3's (tied) embedding is PLaMo 2's, stored once.
BORROWED["plamo3"] = {"model.embed_tokens.weight": ("plamo2", "model.embed_tokens.weight")}


EXTRA_FILES = {
    "embeddinggemma": lambda out: _st_modules(out, (64, 96)),
    "xlmroberta": lambda out: _st_modules(out, None, dim=48, mode="cls"),
    "modernbert": lambda out: _st_modules(out, None, dim=16, mode="mean"),
    "gemma4unified": lambda out: _suppress_tokens(out, [5, 1003]),
    "eurobert": lambda out: _st_modules(out, None, dim=16, mode="mean"),
    "minimax01": lambda out: _vendor_layout(out, "{{ messages[0]['content'] }}\n"),
}
EXTRA_FILES["lfm2-colbert"] = lambda out: _lfm2_dense(out, (8, 6), None)
EXTRA_FILES["lfm2-bidir"] = lambda out: _lfm2_dense(out, None, "cls")


def _vendor_layout(out: Path, template: str) -> None:
    """A one-shard `model.safetensors.index.json` naming every tensor (the class reads the
    embedding's shard from it) and a `chat_template.jinja` (the class prefers it to the
    template bundled with the reference)."""
    from safetensors import safe_open
    with safe_open(str(out / "model.safetensors"), "pt") as f:
        names = sorted(f.keys())
    index = {"metadata": {}, "weight_map": {n: "model.safetensors" for n in names}}
    (out / "model.safetensors.index.json").write_text(json.dumps(index, indent=2) + "\n",
                                                      encoding="utf-8")
    (out / "chat_template.jinja").write_text(template, encoding="utf-8")


def _suppress_tokens(out: Path, ids: list[int]) -> None:
    """generation_config.json with `suppress_tokens`."""
    p = out / "generation_config.json"
    gen = json.loads(p.read_text(encoding="utf-8"))
    gen["suppress_tokens"] = ids
    p.write_text(json.dumps(gen, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _xlmr_tokenizer(out: Path) -> None:
    """A unigram SentencePiece model trained on generated sentences (one thread, fixed
    seeds: the same bytes every run) and the HF files transformers converts it to."""
    import io
    import random
    import tempfile
    import sentencepiece as spm
    import transformers
    rng = random.Random(13)
    syll = ["ka", "lo", "mi", "re", "su", "ta", "ne", "po", "vi", "da",
            "ge", "hu", "ja", "zo", "be", "fa", "ri", "ko", "wu", "xe"]
    words = ["".join(rng.choice(syll) for _ in range(rng.randint(1, 4))) for _ in range(400)]
    lines = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
             + rng.choice([".", "!", "?", ",", ""]) for _ in range(3000)]
    lines += ["Ünïcödé façade naïve café 123 4567 ＡＢＣ ｶﾀｶﾅ"] * 3
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=buf, model_type="unigram", vocab_size=300,
        num_threads=1, character_coverage=1.0, shuffle_input_sentence=False,
        normalization_rule_name="nmt_nfkc", minloglevel=2)
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "sentencepiece.bpe.model").write_bytes(buf.getvalue())
        tok = transformers.XLMRobertaTokenizer.from_pretrained(d)
        tok.save_pretrained(str(out))
    (out / "sentencepiece.bpe.model").write_bytes(buf.getvalue())


def build_model(name: str, out: Path, seed: int) -> None:
    import numpy as np
    import torch
    import transformers

    cls_name, model_type, kw, tok, tie = FIXTURES[name]
    kw = dict(kw)
    if name in RAW_MODELS:
        return build_raw(name, out, seed)
    # A composite (vision-language) config: the text hparams live in text_config.
    text = kw.setdefault("text_config", {}) if "text_config" in kw else kw
    text.setdefault("vocab_size", SPM_VOCAB if tok == "spm" else BPE_VOCAB)
    if tok.startswith("smollm"):
        kw.setdefault("bos_token_id", 1)
        kw.setdefault("eos_token_id", 2)
        kw.setdefault("pad_token_id", None)
    else:
        kw.setdefault("bos_token_id", 1)
        kw.setdefault("eos_token_id", 2)
        kw.setdefault("pad_token_id", None)
    kw["tie_word_embeddings"] = tie
    config = transformers.AutoConfig.for_model(model_type, **kw)
    config.architectures = [cls_name]
    torch.manual_seed(seed)
    build = BUILD_CLASS.get(cls_name, cls_name)
    if hasattr(transformers, build):
        model = getattr(transformers, build)(config)
    else:  # a class transformers maps to another one (internlm3 -> LlamaForCausalLM)
        model = transformers.AutoModelForCausalLM.from_config(config)
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        params = dict(model.named_parameters())
        for pname in sorted(params):
            p = params[pname]
            shape = tuple(p.shape)
            is_norm = ("norm" in pname or "ln_" in pname or "layernorm" in pname.lower()) \
                and p.ndim == 1 and pname.endswith("weight")
            if is_norm:
                v = 1.0 + 0.05 * rng.standard_normal(shape)
            else:
                v = 0.02 * rng.standard_normal(shape)
            p.copy_(torch.from_numpy(v.astype(np.float32)))
    model = model.to(torch.bfloat16)
    if name in BORROWED:
        from safetensors.torch import load_file
        with torch.no_grad():
            for pname, (src, sname) in BORROWED[name].items():
                t = load_file(str(TESTDATA / "hf" / src / "model.safetensors"))[sname]
                params[pname].copy_(t)
    model.save_pretrained(out)
    if name in EXTRA_TENSORS:
        add_tensors(out / "model.safetensors", EXTRA_TENSORS[name], kw, seed + 1)
    cfg_path = out / "config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    if name in CONFIG_EDITS:
        CONFIG_EDITS[name](cfg)
        cfg_path.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if cfg.get("architectures") != [cls_name]:
        # save_pretrained names the class that was built (internlm3 -> LlamaForCausalLM).
        cfg["architectures"] = [cls_name]
        cfg_path.write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def build_raw(name: str, out: Path, seed: int) -> None:
    """A checkpoint written directly: config.json as given, bf16 tensors drawn like
    build_model's in sorted name order."""
    import numpy as np
    import torch
    from safetensors.torch import save_file
    cls_name, _, kw, _, tie = FIXTURES[name]
    shapes_of, extra = RAW_MODELS[name]
    cfg = {"architectures": [cls_name], **extra, **kw, "tie_word_embeddings": tie}
    (out / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    rng = np.random.default_rng(seed)
    tensors = RAW_WRITERS[name](kw, rng) if name in RAW_WRITERS else {}
    shapes = shapes_of(kw) if shapes_of is not None else {}
    first = RAW_FIRST.get(name, [])
    for pname, shape in [(n, shapes[n]) for n in first] + \
            [(n, v) for n, v in sorted(shapes.items()) if n not in first]:
        is_norm = ("norm" in pname or "ln" in pname) and len(shape) == 1 \
            and pname.endswith("weight")
        v = 1.0 + 0.05 * rng.standard_normal(shape) if is_norm \
            else 0.02 * rng.standard_normal(shape)
        tensors[pname] = torch.from_numpy(v.astype(np.float32)).to(torch.bfloat16)
    if name in BORROWED:
        from safetensors.torch import load_file
        for pname, (src, sname) in BORROWED[name].items():
            tensors[pname] = load_file(str(TESTDATA / "hf" / src / "model.safetensors"))[sname]
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})


def _t5_tokenizer(out: Path) -> None:
    """XLM-R's unigram model as spiece.model, four `<extra_id_N>` sentinels after its 300
    pieces in added_tokens.json, and T5Tokenizer's config files written directly."""
    shutil.copyfile(TESTDATA / "tokenizers/xlmr/sentencepiece.bpe.model", out / "spiece.model")
    extra = {f"<extra_id_{i}>": 303 - i for i in range(4)}
    (out / "added_tokens.json").write_text(json.dumps(extra, indent=2) + "\n", encoding="utf-8")
    special = {"eos_token": "</s>", "pad_token": "<pad>", "unk_token": "<unk>",
               "additional_special_tokens": list(extra)}
    (out / "special_tokens_map.json").write_text(json.dumps(special, indent=2) + "\n",
                                                 encoding="utf-8")
    (out / "tokenizer_config.json").write_text(json.dumps(
        {**special, "extra_ids": 4, "model_max_length": 512, "tokenizer_class": "T5Tokenizer"},
        indent=2) + "\n", encoding="utf-8")


def _rwkv_world(out: Path) -> None:
    """A small RWKV World vocabulary file in the published format (`ID REPR LEN` lines,
    REPR a Python str literal, or a bytes literal where the token is not UTF-8): the 256
    bytes, `\\n\\n` at id 261 (the class's eot), then words, quotes, backslashes and
    multi-byte characters."""
    toks = [bytes([b]) for b in range(256)]
    toks += [b"  ", b"\n ", b"the", b" the", b"\n\n"]
    words = ["and", " and", "ing", " in", "'s", '"', "\\", "it's", 'say "hi"', "\t\t",
             "caf\u00e9", " \u4e2d\u6587", "\U0001f600", "a b", "  x  ", "\r\n", "\x7f",
             "na\u00efve", " \u00fc", "</s>"]
    toks += [w.encode("utf-8") for w in words]
    toks += [b"\xe4\xb8", b"\xc3", b"\xff\xfe"]
    lines = []
    for i, t in enumerate(toks, start=1):
        try:
            r = repr(t.decode("utf-8"))
        except UnicodeDecodeError:
            r = repr(t)
        lines.append(f"{i} {r} {len(t)}\n")
    (out / "rwkv_vocab_v20230424.txt").write_text("".join(lines), encoding="utf-8")


def add_tokenizer(kind: str, out: Path) -> None:
    if kind == "none":
        return None
    if kind == "rwkv-world":
        return _rwkv_world(out)
    if kind in ("plamo", "plamo3"):
        return _plamo_tokenizer(out, kind == "plamo3")
    if kind == "xlmr":
        return _xlmr_tokenizer(out)
    if kind == "t5":
        return _t5_tokenizer(out)
    src, shared, own = TOKENIZERS[kind]
    for f in shared + own:
        shutil.copyfile(SHARED / "fixtures/hf" / src / f, out / f)
    if kind == "spm-internlm3":
        tc = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
        tc.setdefault("added_tokens_decoder", {})["999"] = {
            "content": "<|im_end|>", "lstrip": False, "normalized": False, "rstrip": False,
            "single_word": False, "special": True}
        tc["add_prefix_space"] = False
        (out / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n",
                                                   encoding="utf-8")
    if kind == "spm-arctic":
        tc = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
        for tid, content, special in [("998", "<|arctic|>", False), ("1002", "<|im_end|>", True),
                                      ("5000", "<|far|>", True)]:
            tc["added_tokens_decoder"][tid] = {
                "content": content, "lstrip": False, "normalized": False, "rstrip": False,
                "single_word": False, "special": special}
        (out / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n",
                                                   encoding="utf-8")
    if kind == "smollm-notemplate":
        tc = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
        tc.pop("chat_template", None)
        (out / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n",
                                                   encoding="utf-8")
    if kind == "smollm-ds32":
        tc = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
        tc.update(add_bos_token=True, add_eos_token=False, tokenizer_class="LlamaTokenizerFast")
        (out / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n",
                                                   encoding="utf-8")
    if kind == "smollm-glm5":
        tc = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
        tc["tokenizer_class"] = "PreTrainedTokenizerFast"
        (out / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n",
                                                   encoding="utf-8")
    if kind in ("smollm-glm45", "smollm-glm5"):
        tj = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
        for i, tok in enumerate(["[gMASK]", "<|user|>", "<|observation|>"]):
            tj["added_tokens"].append({"id": BPE_VOCAB + i, "content": tok, "single_word": False,
                                       "lstrip": False, "rstrip": False, "normalized": False,
                                       "special": True})
        (out / "tokenizer.json").write_text(
            json.dumps(tj, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    if kind == "gemma4":
        tj = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
        for i, tok in enumerate(GEMMA4_ADDED):
            tj["added_tokens"].append({"id": SPM_VOCAB + i, "content": tok, "single_word": False,
                                       "lstrip": False, "rstrip": False, "normalized": False,
                                       "special": True})
        (out / "tokenizer.json").write_text(
            json.dumps(tj, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
        # transformers 5 takes a Gemma tokenizer's added tokens from tokenizer_config.json.
        tc = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
        for i, tok in enumerate(GEMMA4_ADDED):
            tc["added_tokens_decoder"][str(SPM_VOCAB + i)] = {
                "content": tok, "lstrip": False, "normalized": False, "rstrip": False,
                "single_word": False, "special": True}
        (out / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n",
                                                   encoding="utf-8")
    if kind == "smollm-solar":
        _solar_tokenizer(out)
    if kind == "smollm-dots3":
        _dots3_tokenizer(out)
    if kind == "smollm-glm-fast":
        tc = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
        tc["tokenizer_class"] = "PreTrainedTokenizerFast"
        (out / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n",
                                                   encoding="utf-8")
    if kind in ("smollm-glm", "smollm-glm-fast"):
        tj = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
        tj["added_tokens"].append({"id": BPE_VOCAB, "content": "<|user|>", "single_word": False,
                                   "lstrip": False, "rstrip": False, "normalized": False,
                                   "special": True})
        (out / "tokenizer.json").write_text(
            json.dumps(tj, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


_MODULES: dict = {}


def _reference(llama: Path):
    """The reference converter and the manifest writer, imported once (with llama.cpp's own
    gguf-py first on sys.path): starting Python and torch for every variant is most of the
    time otherwise. Each conversion builds fresh model objects, so runs do not interact."""
    if not _MODULES:
        sys.path.insert(0, str(SHARED / "tools"))
        sys.path.insert(0, str(llama))
        sys.path.insert(0, str(llama / "gguf-py"))
        import convert_hf_to_gguf  # noqa: E402
        import gguf_manifest  # noqa: E402
        _MODULES["convert"] = convert_hf_to_gguf
        _MODULES["manifest"] = gguf_manifest
    return _MODULES["convert"], _MODULES["manifest"]


def manifest(llama: Path, f: Path, out: Path) -> None:
    _, gm = _reference(llama)
    out.write_text(gm.dumps(gm.manifest(str(f), None)) + "\n", encoding="utf-8")


def _fresh_class_state() -> None:
    """Empties the class-level buffers some converter classes keep between tensors (the RWKV
    classes' `lerp_weights`), as a new process would have them: a class attribute outlives
    one conversion in this process."""
    for mod in [m for n, m in sys.modules.items() if n.startswith("conversion.")]:
        for obj in vars(mod).values():
            if isinstance(obj, type) and isinstance(obj.__dict__.get("lerp_weights"), dict):
                obj.lerp_weights = {}


def convert_in_process(llama: Path, args: list[str], cwd: Path) -> tuple[int, str]:
    """`convert_hf_to_gguf.py ARGS` run in this process; (return code, error text)."""
    import traceback
    ch, _ = _reference(llama)
    old_argv, old_cwd = sys.argv, os.getcwd()
    sys.argv = ["convert_hf_to_gguf.py", *args]
    os.chdir(cwd)
    _fresh_class_state()
    try:
        ch.main()
        return 0, ""
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        return code, f"SystemExit({e.code})"
    except Exception:  # the reference refusing the model
        return 1, traceback.format_exc()
    finally:
        sys.argv = old_argv
        os.chdir(old_cwd)


def run_variants(name: str, model_dir: Path, llama: Path, quantize: Path | None,
                 golden: Path, work: Path) -> None:
    golden.mkdir(parents=True, exist_ok=True)
    status: dict = {}
    variants = []
    commands = [
        "# llama.cpp commit 0c1e57098bba43ac29e6e3b677cdceebdd22334f (0c1e570)",
        f"# environment: PYTHONPATH=<llama.cpp>/gguf-py OMP_NUM_THREADS=2, transformers "
        f"{__import__('transformers').__version__}, torch {__import__('torch').__version__}",
        "# generated by conformance/make_fixtures.py",
    ]
    outputs: dict[str, Path] = {}
    for t in ["f32", "f16", "bf16", "q8_0", "auto"]:
        v = f"convert-{t}"
        out = work / f"{name}-{t}.gguf"
        args = [str(model_dir), "--outtype", t, "--outfile", str(out)]
        t0 = time.time()
        rc, err = convert_in_process(llama, args, work)
        st = {"ok": rc == 0, "returncode": rc, "seconds": round(time.time() - t0, 2)}
        commands.append(f"[{v}] (cd <work> && python <llama.cpp>/convert_hf_to_gguf.py "
                        f"<testdata>/hf/{name} --outtype {t} --outfile <work>/{name}-{t}.gguf)")
        entry = {"variant": v, "tool": "convert_hf_to_gguf.py",
                 "args": ["{model_dir}", "--outtype", t, "--outfile", "{out}"],
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
                manifest(llama, out, golden / f"{v}.json")
                entry["manifests"] = [f"{v}.json"]
        status[v] = st
        variants.append(entry)
    if quantize is not None and "convert-f32" in outputs:
        v = "quant-Q4_K_M"
        out = work / f"{name}-{v}.gguf"
        t0 = time.time()
        extra = quantize_args(name)
        p = subprocess.run([str(quantize), *extra, str(outputs["convert-f32"]), str(out), "Q4_K_M"],
                           cwd=work, capture_output=True, text=True, errors="replace")
        st = {"ok": p.returncode == 0, "returncode": p.returncode,
              "seconds": round(time.time() - t0, 2)}
        commands.append(f"[{v}] (cd <work> && <llama.cpp>/build/bin/llama-quantize "
                        + "".join(f"{a} " for a in extra)
                        + f"<work>/{name}-f32.gguf <work>/{name}-{v}.gguf Q4_K_M)")
        entry = {"variant": v, "tool": "llama-quantize",
                 "args": [*extra, "{variant:convert-f32}", "{out}", "Q4_K_M"],
                 "ok": p.returncode == 0, "manifests": []}
        if p.returncode == 0:
            st["sha256"] = sha256(out)
            manifest(llama, out, golden / f"{v}.json")
            entry["manifests"] = [f"{v}.json"]
        else:
            st["error_tail"] = (p.stderr or p.stdout).strip().splitlines()[-6:]
            commands.append("    -> FAILED rc=%d: %s" % (p.returncode, " | ".join(st["error_tail"])))
        status[v] = st
        variants.append(entry)
    (golden / "status.json").write_text(json.dumps(status, indent=1) + "\n")
    (golden / "variants.json").write_text(json.dumps({
        "llama_cpp": "0c1e570",
        "model_dir": f"<testdata>/hf/{name}",
        "placeholders": {
            "{model_dir}": "the HF model directory (its basename matters: general.name)",
            "{variant:NAME}": "the GGUF file produced by variant NAME",
            "{out}": "the output file",
        },
        "variants": variants,
    }, indent=1) + "\n")
    (golden / "commands.txt").write_text("\n".join(commands) + "\n")


# Fixtures whose f32 file holds already-quantized tensors (DeepSeek V4's Q8_0 weights from
# FP8 and MXFP4 experts): llama-quantize needs --allow-requantize for them (the Rust test
# always plans with it; other f32 files hold nothing it would requantize).
REQUANTIZE = {"deepseek4"}


def quantize_args(name: str) -> list[str]:
    return ["--allow-requantize"] if name in REQUANTIZE else []


def add_quantized(name: str, llama: Path, quantize: Path, work: Path) -> None:
    """Adds the quant-Q4_K_M variant to a committed fixture: the reference converter's f32
    output (checked against the committed sha256) quantized by llama-quantize."""
    golden = TESTDATA / "golden" / name
    status = json.loads((golden / "status.json").read_text())
    variants = json.loads((golden / "variants.json").read_text())
    if not status.get("convert-f32", {}).get("ok"):
        print(f"{name}: the reference refused f32; no quant variant", file=sys.stderr)
        return
    model_dir = materialize(TESTDATA / "hf" / name, work / name)
    f32 = work / f"{name}-f32.gguf"
    rc, err = convert_in_process(llama, [str(model_dir), "--outtype", "f32", "--outfile", str(f32)], work)
    assert rc == 0, err
    assert sha256(f32) == status["convert-f32"]["sha256"], f"{name}: f32 differs from the committed one"
    v = "quant-Q4_K_M"
    out = work / f"{name}-{v}.gguf"
    t0 = time.time()
    extra = quantize_args(name)
    p = subprocess.run([str(quantize), *extra, str(f32), str(out), "Q4_K_M"], cwd=work,
                       capture_output=True, text=True, errors="replace")
    st = {"ok": p.returncode == 0, "returncode": p.returncode, "seconds": round(time.time() - t0, 2)}
    entry = {"variant": v, "tool": "llama-quantize",
             "args": [*extra, "{variant:convert-f32}", "{out}", "Q4_K_M"],
             "ok": p.returncode == 0, "manifests": []}
    if p.returncode == 0:
        st["sha256"] = sha256(out)
        manifest(llama, out, golden / f"{v}.json")
        entry["manifests"] = [f"{v}.json"]
    else:
        st["error_tail"] = (p.stderr or p.stdout).strip().splitlines()[-6:]
    status[v] = st
    variants["variants"] = [x for x in variants["variants"] if x["variant"] != v] + [entry]
    (golden / "status.json").write_text(json.dumps(status, indent=1) + "\n")
    (golden / "variants.json").write_text(json.dumps(variants, indent=1) + "\n")
    lines = [l for l in (golden / "commands.txt").read_text().splitlines()
             if not l.startswith(f"[{v}]") and not l.startswith("    -> quant")]
    lines.append(f"[{v}] (cd <work> && <llama.cpp>/build/bin/llama-quantize "
                 + "".join(f"{a} " for a in extra)
                 + f"<work>/{name}-f32.gguf <work>/{name}-{v}.gguf Q4_K_M)"
                 + ("" if p.returncode == 0 else f"  -> FAILED rc={p.returncode}"))
    (golden / "commands.txt").write_text("\n".join(lines) + "\n")
    print(f"{name}: {v} {'ok' if p.returncode == 0 else 'FAILED'}", file=sys.stderr)


def remake_golden(name: str, llama: Path, quantize: Path | None, work: Path) -> None:
    """Remakes the golden data of a committed fixture from its stored files (the weights stay
    as they are). Without llama-quantize, an existing quant-Q4_K_M record is kept when the
    f32 output is unchanged, and removed (with a note to run `--quantize-only`) when it is not,
    since it was made from the old f32 file."""
    golden = TESTDATA / "golden" / name
    old_status = json.loads((golden / "status.json").read_text()) if (golden / "status.json").is_file() else {}
    old_variants = json.loads((golden / "variants.json").read_text()) if (golden / "variants.json").is_file() else {}
    old_commands = (golden / "commands.txt").read_text().splitlines() if (golden / "commands.txt").is_file() else []
    model_dir = materialize(TESTDATA / "hf" / name, work / "hf" / name)
    run_variants(name, model_dir, llama, quantize, golden, work)
    v = "quant-Q4_K_M"
    if quantize is not None or v not in old_status:
        return
    same_f32 = old_status.get("convert-f32", {}).get("sha256") == \
        json.loads((golden / "status.json").read_text()).get("convert-f32", {}).get("sha256")
    if not same_f32:
        (golden / f"{v}.json").unlink(missing_ok=True)
        print(f"{name}: the f32 output changed; remake {v} with --quantize-only", file=sys.stderr)
        return
    status = json.loads((golden / "status.json").read_text())
    variants = json.loads((golden / "variants.json").read_text())
    status[v] = old_status[v]
    variants["variants"] += [x for x in old_variants.get("variants", []) if x["variant"] == v]
    (golden / "status.json").write_text(json.dumps(status, indent=1) + "\n")
    (golden / "variants.json").write_text(json.dumps(variants, indent=1) + "\n")
    kept = [line for line in old_commands if line.startswith(f"[{v}]")]
    with (golden / "commands.txt").open("a") as f:
        f.write("".join(line + "\n" for line in kept))


def store_fixture(name: str, model_dir: Path) -> None:
    """Copies the fixture into testdata/hf/<name>, big tokenizer files by reference."""
    kind = FIXTURES[name][3]
    src, shared, _ = TOKENIZERS[kind]
    dest = TESTDATA / "hf" / name
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    lines = []
    for f in sorted(model_dir.iterdir()):
        if f.name in shared and kind in FROM_SOURCE_FIXTURE:
            assert sha256(TESTDATA / "hf" / src / f.name) == sha256(f), f"{f.name} differs"
            lines.append(f"{f.name} = ../{src}/{f.name}")
        elif f.name in shared:
            tdir = TESTDATA / "tokenizers" / SHARED_AS.get(kind, kind)
            tdir.mkdir(parents=True, exist_ok=True)
            stored = SHARED_NAMES.get(kind, {}).get(f.name, f.name)
            if not (tdir / stored).exists():
                shutil.copyfile(f, tdir / stored)
            assert sha256(tdir / stored) == sha256(f), f"shared {f.name} differs"
            lines.append(f"{f.name} = ../../tokenizers/{SHARED_AS.get(kind, kind)}/{stored}")
        elif f.is_dir():
            shutil.copytree(f, dest / f.name)
        else:
            shutil.copyfile(f, dest / f.name)
    (dest / "shared-files.txt").write_text("\n".join(lines) + "\n")


# ---------------------------------------------------------------------------------------------
# Config variants (`--variants`): cases the fixtures do not show, for the cost of a small JSON.
#
# A variant changes only config.json (the fixture's safetensors and tokenizer are reused
# unchanged): a patch of top-level keys (null deletes the key; for a composite config the patch
# applies to `text_config`). The reference converts the patched directory (named like the
# fixture) for f32 and bf16; the result is stored in testdata/golden/variants/<fx>/<v>.json as
# the patch and, for f32, a manifest *relative to the fixture's own golden f32 manifest*: a kv
# or tensor entry equal to one of the base's is written as its index in the base's list
# (consecutive ones as a run "a-b", inclusive), a
# tensor list equal to the base's as "=base" (version, alignment and the counts follow); for
# bf16 the file's size and sha256. A refused variant keeps the last line of the error. A
# fixture the reference refuses as it is (gptneox) has no base: its records list every entry.
# converters/tests/suite/convert/arch_variants.rs rebuilds the manifests and compares whole files.

# Fixtures whose config variants are generated, most-used families first.
VARIANT_FIXTURES = [
    "llama-spm", "llama-bpe", "qwen2", "qwen3", "gemma3", "embeddinggemma", "ministral3",
    "mistral3", "phi3", "olmo2", "granite", "cohere2", "exaone4", "smollm3", "glm4",
    "starcoder2", "falcon", "apertus", "llama4", "ernie4_5", "seedoss", "mixtral", "qwen3moe",
    "qwen2moe", "olmoe", "granitemoe", "phimoe", "ernie4_5moe", "llama4-vl", "granitemoeshared",
    "cohere", "stablelm", "phi2", "olmo", "olmo3", "arcee", "internlm3", "gptbigcode", "gptneox",
    "stablelm-2", "xlmroberta", "xlmroberta-cls", "modernbert", "nomicbert", "gemma3n",
    "gemma4", "gemma4moe",
    "maincoder", "nanbeige", "mellum", "internlm2", "orion", "pangu", "xverse", "spark2_5",
    "maple", "smallthinker", "plm", "kormo", "iquestcoder",
    "minimax-m3", "hyv3", "kimik3",
    "rwkv7",
    "minimax01", "bailingmoe",
    "sarvam-untyped",
    "qwen4exp",
    "lfm2-colbert", "lfm2-bidir",
    "plamo2", "plamo3", "chameleon", "rugpt3xl",
    "nemotronhpuzzle", "graniteswitch",
    "sarashina2-text", "hunyuanvl-text", "minicpmv46-text",
]


# Fixtures that get every generic variant; the others get the core set (rope linear, yarn,
# llama3 and transformers 4's spelling, absent keys, tied/untied head) and their own.
FULL_VARIANTS = {"llama-spm", "llama-bpe", "qwen2", "qwen3", "gemma3", "phi3", "mistral3"}
# Variants whose tensors change (permutations, head): converted to bf16 as well (the first
# records of llama-spm have bf16 for every variant).
BF16_VARIANTS = {"kv-absent", "tie-flip", "head-dim-explicit", "partial-rotary"}


def _text_cfg(cfg: dict) -> dict:
    return cfg.get("text_config", cfg)


def _theta(c: dict) -> float:
    rp = c.get("rope_parameters") or c.get("rope_scaling") or {}
    rp = rp.get("full_attention", rp)
    return rp.get("rope_theta", c.get("rope_theta", 10000.0))


def _rope_dims(c: dict) -> int:
    hd = c.get("head_dim") or c["hidden_size"] // c["num_attention_heads"]
    rp = c.get("rope_parameters") or {}
    prf = rp.get("partial_rotary_factor", c.get("partial_rotary_factor", 1.0))
    return int(hd * prf)


def _rope(c: dict, **kw) -> dict:
    """A `rope_parameters` patch (v5 spelling); per-layer-type dicts get it on full_attention."""
    rp = c.get("rope_parameters") or {}
    if "full_attention" in rp:
        return {"rope_parameters": {**rp, "full_attention": {"rope_theta": _theta(c), **kw}}}
    keep = {k: v for k, v in rp.items() if k == "partial_rotary_factor"}
    return {"rope_parameters": {**keep, "rope_theta": _theta(c), **kw}, "rope_scaling": None}


# Fixtures whose generic variants another fixture's already cover (the same conversion of the
# same text config class): only their family's own are generated.
FAMILY_VARIANTS_ONLY = {"minicpmv46-text"}  # qwen35-vl's Qwen3.5 text model


def config_variants(fx: str, cfg: dict) -> dict[str, dict]:
    """name -> config patch for fixture `fx` (its config.json `cfg`)."""
    c = _text_cfg(cfg)
    v: dict[str, dict] = {}
    has_rope = "rope_parameters" in c or "rope_theta" in c or "rope_scaling" in c
    if has_rope:
        v["rope-linear"] = _rope(c, rope_type="linear", factor=2.0)
        v["rope-yarn"] = _rope(c, rope_type="yarn", factor=4.0,
                               original_max_position_embeddings=1024, beta_fast=16.0,
                               beta_slow=2.0, attention_factor=0.75)
        if fx in FULL_VARIANTS:
            v["rope-dynamic"] = _rope(c, rope_type="dynamic", factor=2.0)
        v["rope-llama3"] = _rope(c, rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                 high_freq_factor=4.0, original_max_position_embeddings=1024)
        if "full_attention" not in (c.get("rope_parameters") or {}):
            # transformers 4's spelling: rope_scaling with "type" and a top-level rope_theta.
            v["rope-v4-yarn"] = {"rope_parameters": None, "rope_theta": 250000.0,
                                 "rope_scaling": {"type": "yarn", "factor": 2.0,
                                                  "original_max_position_embeddings": 2048}}
            if fx in FULL_VARIANTS:
                v["rope-absent"] = {"rope_parameters": None, "rope_scaling": None,
                                    "rope_theta": None}
        half = _rope_dims(c) // 2
        if fx in FULL_VARIANTS or fx in ("phi3", "phimoe"):
            v["rope-longrope"] = _rope(c, rope_type="longrope",
                                       long_factor=[1.0 + 0.5 * i for i in range(half)],
                                       short_factor=[1.0 + 0.125 * i for i in range(half)],
                                       original_max_position_embeddings=1024)
    for k in ("max_position_embeddings", "n_positions"):
        if k in c:
            v["ctx-absent"] = {k: None}
            break
    if c.get("num_key_value_heads") is not None and "text_config" not in cfg:
        v["kv-absent"] = {"num_key_value_heads": None}
    if "head_dim" not in c and "hidden_size" in c and "num_attention_heads" in c:
        v["head-dim-explicit"] = {"head_dim": c["hidden_size"] // c["num_attention_heads"]}
    elif c.get("head_dim") is None and "hidden_size" in c and "num_attention_heads" in c:
        v["head-dim-explicit"] = {"head_dim": c["hidden_size"] // c["num_attention_heads"]}
    for k in ("rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_epsilon", "norm_eps"):
        if k in c and fx in FULL_VARIANTS:
            v["eps"] = {k: 3.25e-6}
            break
    if "tie_word_embeddings" in cfg or "tie_word_embeddings" in c:
        v["tie-flip"] = {"tie_word_embeddings": not c.get("tie_word_embeddings",
                                                          cfg.get("tie_word_embeddings"))}
    if fx in FULL_VARIANTS:
        v["special-ids"] = {"bos_token_id": 3, "eos_token_id": [2, 4], "pad_token_id": 5}
    if "sliding_window" in c:
        v["swa-none"] = {"sliding_window": None}
        v["swa-333"] = {"sliding_window": 333}
    if isinstance(c.get("layer_types"), list) and len(c["layer_types"]) > 1:
        lt = c["layer_types"]
        kinds = sorted(set(lt))
        if "sliding_attention" in kinds or "full_attention" in kinds:
            v["layer-types-flip"] = {"layer_types": [
                "full_attention" if t == "sliding_attention" else
                "sliding_attention" if t == "full_attention" else t for t in lt]}
        if "sliding_window" in c:
            v["layer-types-absent"] = {"layer_types": None}
    for k, val in (("partial_rotary_factor", 0.25), ("rotary_pct", 0.25)):
        if k in c:
            v["partial-rotary"] = {k: val}
    if "rope_parameters" in c and "partial_rotary_factor" in (c["rope_parameters"] or {}):
        v["partial-rotary"] = {"rope_parameters": {**c["rope_parameters"],
                                                   "partial_rotary_factor": 0.5}}
    for k, val in (("final_logit_softcapping", 30.0), ("attn_logit_softcapping", 50.0),
                   ("logit_scale", 0.5), ("logits_scaling", 3.0), ("attention_multiplier", 0.5),
                   ("embedding_multiplier", 2.5), ("residual_multiplier", 0.75),
                   ("query_pre_attn_scalar", 48), ("sliding_window_pattern", 3),
                   ("clip_qkv", 4.0), ("attention_chunk_size", 512), ("norm_topk_prob", False),
                   ("use_bidirectional_attention", False), ("use_parallel_residual", True),
                   ("attention_bias", True), ("use_qk_norm", False), ("qk_layernorm", False),
                   ("llama_4_scaling_beta", 0.5)):
        if k in c and c[k] != val:
            v[f"set-{k}"] = {k: val}
    if fx in FAMILY_VARIANTS_ONLY:
        v = {}
    v.update(family_variants(fx, c))
    return v


def family_variants(fx: str, c: dict) -> dict[str, dict]:
    """The rules one family's converter (or its transformers config class) reads beyond the
    generic ones: old key spellings, keys the config class fills in, flags that pick a path."""
    v: dict[str, dict] = {}
    default_rope = {"rope_parameters": {"rope_theta": _theta(c), "rope_type": "default"},
                    "rope_scaling": None}
    if fx == "falcon":
        # conversion/falcon.py: n_head / n_head_kv (default 1) are the old spellings;
        # FalconConfig fills num_kv_heads with num_attention_heads and takes n_embed.
        v["fam-n-embed"] = {"hidden_size": None, "n_embed": c["hidden_size"]}
        v["fam-old-head-names"] = {"num_attention_heads": None, "n_head": c["num_attention_heads"],
                                   "num_kv_heads": None, "n_head_kv": c["num_kv_heads"]}
        v["fam-kv-heads-absent"] = {"num_kv_heads": None}
        v["fam-alibi"] = {"alibi": True}
        v["fam-bias"] = {"bias": True}
        v["fam-old-decoder"] = {"new_decoder_architecture": False, "multi_query": True}
        v["fam-serial-attn"] = {"parallel_attn": False, "num_ln_in_parallel_attn": None}
        rw = {"architectures": ["RWForCausalLM"], "model_type": "RefinedWeb",
              "num_attention_heads": None, "n_head": c["num_attention_heads"],
              "num_kv_heads": None, "n_head_kv": c["num_kv_heads"],
              "num_hidden_layers": None, "n_layer": c["num_hidden_layers"]}
        v["fam-rw-config"] = rw
        v["fam-rw-config-no-kv"] = {**rw, "n_head_kv": None}
    elif fx in ("apertus", "llama4"):
        v["fam-rope-default"] = default_rope
    if fx == "llama4":
        n = c["num_hidden_layers"]
        v["fam-layer-types-all-full"] = {"layer_types": ["full_attention"] * n}
        v["fam-layer-types-absent"] = {"layer_types": None}
        v["fam-no-rope-layers-absent"] = {"no_rope_layers": None, "layer_types": None}
        v["fam-interleave-1"] = {"interleave_moe_layer_step": 1, "moe_layers": None}
        v["fam-ffn-mlp-absent"] = {"intermediate_size_mlp": None}
        v["fam-experts-used-2"] = {"num_experts_per_tok": 2}
        v["fam-temperature-tuning-off"] = {"attn_temperature_tuning": False}
    elif fx == "ernie4_5":
        v["fam-head-dim-absent"] = {"head_dim": None}
        v["fam-use-bias-off"] = {"use_bias": False}
    elif fx == "seedoss":
        v["fam-head-dim-absent"] = {"head_dim": None}
        v["fam-out-bias"] = {"attention_out_bias": True, "mlp_bias": True}
    elif fx == "mixtral":
        v["fam-experts-used-1"] = {"num_experts_per_tok": 1}
        v["fam-experts-absent"] = {"num_local_experts": None, "num_experts_per_tok": None}
        # MixtralConfig.attribute_map = {"num_experts": "num_local_experts"}
        v["fam-num-experts-spelling"] = {"num_local_experts": None,
                                         "num_experts": c["num_local_experts"]}
    elif fx == "olmoe":
        # OlmoeConfig.attribute_map = {"num_local_experts": "num_experts"}
        v["fam-num-local-experts-spelling"] = {"num_experts": None,
                                               "num_local_experts": c["num_experts"]}
    elif fx in ("qwen2moe", "qwen3moe"):
        v["fam-moe-size-absent"] = {"moe_intermediate_size": None}
        v["fam-experts-used-1"] = {"num_experts_per_tok": 1}
        v["fam-sparse-step-2"] = {"decoder_sparse_step": 2}
        v["fam-use-sliding-window"] = {"use_sliding_window": True, "sliding_window": 64}
        if fx == "qwen2moe":
            v["fam-shared-size-absent"] = {"shared_expert_intermediate_size": None}
            v["fam-shared-size-other"] = {"shared_expert_intermediate_size": 72}
        else:
            v["fam-num-experts-spelling"] = {"num_local_experts": None, "num_experts": 4}
    elif fx == "mistral3":
        rp = dict(c["rope_parameters"])
        v["fam-text-mistral"] = {"model_type": "mistral"}
        v["fam-text-mistral-rope-default"] = {"model_type": "mistral", **default_rope}
        v["fam-yarn-no-llama4-beta"] = {"rope_parameters": {
            k: x for k, x in rp.items() if k != "llama_4_scaling_beta"}}
        v["fam-yarn-no-mscale-all-dim"] = {"rope_parameters": {
            k: x for k, x in rp.items() if k != "mscale_all_dim"}}
        v["fam-yarn-mscale-all-dim-1"] = {"rope_parameters": {**rp, "mscale_all_dim": 1.0}}
        v["fam-ministral3-default-rope"] = default_rope
    elif fx == "embeddinggemma":
        v["fam-swa-pattern-1"] = {"sliding_window_pattern": 1, "_sliding_window_pattern": 1}
        v["fam-head-dim-absent"] = {"head_dim": None}
        v["fam-heads-absent"] = {"num_attention_heads": None, "num_key_value_heads": None}
        v["fam-causal"] = {"use_bidirectional_attention": None}
    elif fx == "gptneox":
        # Made with transformers 4.57.6 (PINNED_TRANSFORMERS), whose GPTNeoXConfig sets
        # partial_rotary_factor from rotary_pct (default 0.25). The reference writes neither
        # rope theta nor rope scaling for GPT-NeoX.
        v["fam-pythia-spelling"] = {"partial_rotary_factor": None, "rope_theta": None,
                                    "rope_scaling": None}
        v["fam-rotary-pct-absent"] = {"rotary_pct": None, "partial_rotary_factor": None}
        v["fam-serial-residual"] = {"use_parallel_residual": False}
        v["fam-parallel-residual-absent"] = {"use_parallel_residual": None}
    elif fx == "stablelm-2":
        # conversion/stablelm.py stacks per-head q/k layernorms; with fewer KV heads than
        # heads it leaves k norms unprocessed (the `stablelm` fixture is refused so).
        v["fam-qk-layernorm-mha"] = {"qk_layernorm": False, "num_key_value_heads": None}
        v["fam-qkv-bias-off"] = {"use_qkv_bias": False}
        # The same class is registered for StableLM-based LLaVA checkpoints' text model.
        v["fam-llava-stablelm-epoch"] = {"architectures": ["LlavaStableLMEpochForCausalLM"]}
    elif fx == "sarvam-untyped":
        v["fam-sarvam-moe-typed"] = {"model_type": "sarvam_moe"}
    elif fx == "modernbert":
        v["fam-global-every-3"] = {"global_attn_every_n_layers": 3, "layer_types": None}
        v["fam-global-every-absent"] = {"global_attn_every_n_layers": None, "layer_types": None}
        v["fam-local-attention"] = {"local_attention": 128}
        v["fam-hidden-activation-absent"] = {"hidden_activation": None}
        v["fam-v4-rope-thetas"] = {"rope_parameters": None, "global_rope_theta": 80000.0,
                                   "local_rope_theta": 5000.0}
    elif fx == "nomicbert":
        # conversion/bert.py asserts these for a dense NomicBERT.
        v["fam-n-positions-8192"] = {"max_trained_positions": None}
        v["fam-causal"] = {"causal": True}
        v["fam-rotary-fraction"] = {"rotary_emb_fraction": 0.5}
        v["fam-rotary-interleaved"] = {"rotary_emb_interleaved": True}
        v["fam-prenorm"] = {"prenorm": True}
        v["fam-gelu"] = {"activation_function": "gelu"}
    elif fx in ("xlmroberta", "xlmroberta-cls"):
        v["fam-type-vocab-2"] = {"type_vocab_size": 2}
        v["fam-positions-absent"] = {"max_position_embeddings": None}
    elif fx == "cohere2":
        v["fam-rotary-pct-absent"] = {"rotary_pct": None}
        v["fam-logit-scale-absent"] = {"logit_scale": None}
        v["fam-swa-pattern-spelling"] = {"layer_types": None, "sliding_window_pattern": 2}
        v["fam-sliding-window-absent"] = {"sliding_window": None, "layer_types": None}
    if fx == "gemma3n":
        # KV sharing off, another AltUp index, the class refusing 3 AltUp inputs, the
        # sparsity pattern transformers fills in (all dense: -inf) and one with a central
        # and a negative quantile, one FFN size for all layers, and per-layer lists of the
        # wrong length (AutoConfig raises: config.json is read as written).
        v["kv-shared-0"] = {"num_kv_shared_layers": 0}
        v["altup-active-1"] = {"altup_active_idx": 1}
        v["altup-inputs-3"] = {"altup_num_inputs": 3}
        v["sparsity-absent"] = {"activation_sparsity_pattern": None}
        v["sparsity-other"] = {"activation_sparsity_pattern": [0.5, 0.99, 0.1]}
        # Quantiles where MKL's float32 erfinv is not what two Newton steps give (0.8454).
        v["sparsity-decimals"] = {"activation_sparsity_pattern": [0.8454, 0.3, 0.0]}
        v["ffn-scalar"] = {"intermediate_size": 40}
        v["ffn-list-short"] = {"intermediate_size": [32, 48]}
        v["sparsity-short"] = {"activation_sparsity_pattern": [0.95, 0.0]}
        # The vision-language class's name on the text checkpoint: the same text model.
        v["arch-conditional"] = {"architectures": ["Gemma3nForConditionalGeneration"]}
    if fx in ("gemma4", "gemma4moe"):
        # Bidirectional attention over everything (non-causal, even window); the full layers'
        # sizes from global_head_dim (and, keys equal to values, num_global_key_value_heads)
        # instead of per_layer_config; the class defaults of the per-layer input size and the
        # expert width; KV sharing and the double-wide MLP off; default rope on full layers
        # (the reference asserts proportional).
        full_rope = dict(c["rope_parameters"])
        full_rope["full_attention"] = {"rope_type": "default", "rope_theta": 1000000.0}
        v["fam-bidirectional-all"] = {"use_bidirectional_attention": "all",
                                      "sliding_window": 65}
        v["fam-full-rope-default"] = {"rope_parameters": full_rope}
        v["fam-per-layer-absent"] = {"hidden_size_per_layer_input": None}
        v["fam-moe-size-absent"] = {"moe_intermediate_size": None}
        if fx == "gemma4":
            v["fam-global-head-dim"] = {"per_layer_config": None, "global_head_dim": 64}
            v["fam-kv-shared-0"] = {"num_kv_shared_layers": 0}
            v["fam-double-wide-off"] = {"use_double_wide_mlp": False}
        else:
            v["fam-global-kv-heads"] = {"per_layer_config": None, "global_head_dim": 16,
                                        "num_global_key_value_heads": 2}
            v["fam-k-eq-v-off"] = {"attention_k_eq_v": False, "per_layer_config": None,
                                   "global_head_dim": 16, "num_global_key_value_heads": 2}
    if fx == "minimax-m3":
        # conversion/minimax.py (MiniMaxM3Model): the leading dense blocks are the first zeros
        # of moe_layer_freq; n_shared_experts, routed_scaling_factor and the indexer's sizes
        # are required. transformers' own config types (the vision-language class's text
        # config) consume sparse_attention_config and moe_layer_freq, so the reference
        # refuses them.
        v["fam-all-sparse"] = {"moe_layer_freq": [1, 1, 1]}
        v["fam-no-dense-prefix"] = {"moe_layer_freq": [1, 0, 0]}
        v["fam-bool-freq"] = {"moe_layer_freq": [False, False, True]}
        v["fam-moe-freq-absent"] = {"moe_layer_freq": None}
        v["fam-shared-absent"] = {"n_shared_experts": None}
        v["fam-scale"] = {"routed_scaling_factor": 2.5}
        v["fam-num-experts"] = {"num_local_experts": None, "num_experts": 4}
        v["fam-sparse-absent"] = {"sparse_attention_config": None}
        v["fam-vl-text-type"] = {"model_type": "minimax_m3_vl_text"}
        # The composite type with the text keys in text_config (typed, so they lose the two
        # consumed keys) and at the root as well (kept as given): converted from the root's.
        text = {k: val for k, val in c.items() if k not in ("architectures", "model_type")}
        v["fam-vl-composite"] = {"model_type": "minimax_m3_vl", "text_config": text,
                                 "architectures": ["MiniMaxM3SparseForConditionalGeneration"]}
    if fx == "qwen4exp":
        # conversion/qwen4exp.py: the compress ratios follow `full_attention` layer types,
        # which transformers retypes `indexed_attention` (zeros) unless AutoConfig refuses the
        # config (an output gate it does not know: config.json read as written); the PLE keys
        # only with PLE layers; the EOS the hash resets on (the last of a list, required);
        # the image token id when the config has one; the indexer's sizes required; exactly
        # split_ngram_parts shards (fewer: refused; more: the table written twice, refused).
        lin, full = "linear_attention", "full_attention"
        v["fam-full-attention"] = {"layer_types": [lin, lin, full]}
        v["fam-raw-config"] = {"layer_types": [lin, lin, full], "output_gate_type": "relu"}
        v["fam-layer-types-absent"] = {"layer_types": None, "full_attention_interval": 3}
        v["fam-ple-absent"] = {"ple_layer_ids": None}
        v["fam-ple-unsorted"] = {"ple_layer_ids": [2, 2, 1]}
        v["fam-eos-list"] = {"eos_token_id": [2, 0]}
        v["fam-eos-absent"] = {"eos_token_id": None}
        v["fam-image-token"] = {"image_token_id": 7}
        v["fam-indexer-absent"] = {"indexer_n_heads": None, "indexer_kv_heads": None,
                                   "indexer_head_dim": None, "indexer_budget": None,
                                   "indexer_compress_ratio": None}
        v["fam-split-parts-3"] = {"split_ngram_parts": 3}
        v["fam-split-parts-1"] = {"split_ngram_parts": 1}
        v["fam-split-parts-absent"] = {"split_ngram_parts": None}
        v["fam-hc"] = {"hc_count": 3, "hc_lowrank": 6}
        v["fam-hc-one"] = {"hc_count": 1}
    if fx == "minimax01":
        # conversion/minimax.py (MiniMaxText01Model): M1's class and config type, the
        # asserted layernorm factors, the required rotary_dim and num_local_experts.
        v["fam-m1"] = {"architectures": ["MiniMaxM1ForCausalLM"], "model_type": "minimax_m1"}
        v["fam-alpha-unequal"] = {"layernorm_mlp_alpha": 2.0}
        v["fam-beta-not-one"] = {"layernorm_full_attention_beta": 0.5}
        v["fam-alpha-other"] = {"layernorm_full_attention_alpha": 1.25,
                                "layernorm_linear_attention_alpha": 1.25,
                                "layernorm_mlp_alpha": 1.25}
        v["fam-rotary-absent"] = {"rotary_dim": None}
        v["fam-rotary-8"] = {"rotary_dim": 8}
        v["fam-num-experts"] = {"num_local_experts": None, "num_experts": 3}
    if fx in ("minimax01", "bailingmoe"):
        # Not generated: the reference fails on transformers 4's `rope_scaling` yarn spelling
        # of these remote-code configs (AutoTokenizer's plain PreTrainedConfig has no
        # max_position_embeddings yet), a refusal this converter does not model yet.
        v.pop("rope-v4-yarn", None)
    if fx == "bailingmoe":
        # conversion/bailingmoe.py (BailingMoeModel): head_dim or hidden / heads, the KV head
        # count the split needs, the dense-prefix and shared-expert counts, norm_topk_prob.
        v["fam-head-dim"] = {"head_dim": 8}
        v["fam-kv-absent"] = {"num_key_value_heads": None}
        v["fam-dense-prefix"] = {"first_k_dense_replace": 1}
        v["fam-shared-2"] = {"num_shared_experts": 2}
        v["fam-topk-norm-off"] = {"norm_topk_prob": False}
        v["fam-num-experts"] = {"num_experts": None, "num_local_experts": 3}
        v["fam-norm-head-off"] = {"norm_head": False}
    if fx == "kimik3":
        # conversion/kimi_k3.py (KimiK3Model; config.json read as written, patched in
        # text_config): the root class wins over text_config's; q-lora, the KDA gate's lower
        # bound and the latent size are optional; kv_b is split with num_key_value_heads
        # (absent: KeyError; 1: an assertion); the class asserts mla_use_nope, sigmoid routing
        # and the situ activation and indexes the KDA kernel, situ betas, residual block size
        # and num_experts (no alias); the MLA blocks are the listed ones (Python's `in`).
        la = c["linear_attn_config"]
        v["fam-text-arch-other"] = {"architectures": ["DeepseekV3ForCausalLM"]}
        v["fam-q-lora"] = {"q_lora_rank": 24}
        v["fam-lower-bound-absent"] = {"linear_attn_config": {
            k: x for k, x in la.items() if k != "gate_lower_bound"}}
        v["fam-full-attn-float"] = {"linear_attn_config": {**la, "full_attn_layers": [2.0]}}
        v["fam-full-attn-13"] = {"linear_attn_config": {**la, "full_attn_layers": [1, 3],
                                                        "kda_layers": [2]}}
        v["fam-conv-kernel-absent"] = {"linear_attn_config": {
            k: x for k, x in la.items() if k != "short_conv_kernel_size"}}
        v["fam-latent-absent"] = {"routed_expert_hidden_size": None}
        v["fam-renormalize-off"] = {"moe_renormalize": False}
        v["fam-eos-7"] = {"eos_token_id": 7}
        v["fam-ctx-absent"] = {"model_max_length": None}
        v["fam-kv-heads-absent"] = {"num_key_value_heads": None}
        v["fam-kv-heads-1"] = {"num_key_value_heads": 1}
        v["fam-nope-off"] = {"mla_use_nope": False}
        v["fam-act-silu"] = {"hidden_act": "silu"}
        v["fam-router-softmax"] = {"moe_router_activation_func": "softmax"}
        v["fam-situ-absent"] = {"activation_situ_beta": None}
        v["fam-block-size-absent"] = {"attn_res_block_size": None}
        v["fam-num-local-experts"] = {"num_experts": None, "num_local_experts": 4}
    if fx == "glm5next-text":
        # conversion/glm.py (Glm5NextModel; patched in text_config): the KDA settings of
        # linear_attn_config (the lower bound optional, the head count asserted equal to the
        # attention heads'), the nope-only MLA and mHC assertions, the k-pool tail flag, the
        # indexer types (given, from a pattern, from the frequency and offset), the SwiGLU
        # clamp (optional), the MTP block count, first_k_dense_replace (required), the layer
        # schedule Glm5NextTextConfig fills, and a config it rejects (KV heads other than the
        # attention heads: config.json read as written).
        la = c["linear_attn_config"]
        v["fam-lower-bound-absent"] = {"linear_attn_config": {
            k: x for k, x in la.items() if k != "gate_lower_bound"}}
        v["fam-linear-heads-3"] = {"linear_attn_config": {**la, "num_heads": 3}}
        v["fam-nope-off"] = {"mla_use_nope": False}
        v["fam-mhc-off"] = {"mhc": False}
        v["fam-tail-off"] = {"index_kpool_always_select_tail": False}
        v["fam-indexer-types"] = {"indexer_types": ["full", "shared"]}
        v["fam-indexer-pattern"] = {"indexer_types": None, "index_topk_pattern": "FS"}
        v["fam-indexer-freq"] = {"indexer_types": None, "index_topk_freq": 2,
                                 "index_skip_topk_offset": 0}
        v["fam-swiglu-absent"] = {"swiglu_limit": None}
        v["fam-swiglu-7"] = {"swiglu_limit": 7.5}
        v["fam-nextn-0"] = {"num_nextn_predict_layers": None}
        v["fam-dense-absent"] = {"first_k_dense_replace": None}
        v["fam-layer-types-absent"] = {"layer_types": None}
        v["fam-layer-types-full"] = {"layer_types": ["linear_attention", "full_attention"]}
        v["fam-kv-heads-1"] = {"num_key_value_heads": 1}
        v["fam-hc-sizes"] = {"hc_sinkhorn_iters": 7, "hc_eps": 2.5e-5}
        v["fam-kpool-4"] = {"index_kpool": 4, "index_topk": 8}
    if fx == "hyv3":
        # conversion/hunyuan.py (HYV3Model): route_norm (default true), router_scaling_factor
        # (default 1), num_shared_experts, the MTP block count; HYV3Config stores
        # num_local_experts as num_experts.
        v["fam-route-norm-off"] = {"route_norm": False}
        v["fam-route-norm-absent"] = {"route_norm": None}
        v["fam-scale-absent"] = {"router_scaling_factor": None}
        v["fam-shared-2"] = {"num_shared_experts": 2}
        v["fam-num-local-experts"] = {"num_experts": None, "num_local_experts": 4}
        v["fam-nextn-0"] = {"num_nextn_predict_layers": 0}
        v["fam-nextn-absent"] = {"num_nextn_predict_layers": None}
    if fx == "rwkv7":
        # conversion/rwkv.py (Rwkv7Model): BlinkDL's key spellings (head_size with
        # layer_norm_epsilon, the four lora_rank_*), no output gate (five token-shift mixes;
        # x_g is left out of the fused tensor).
        v["fam-blink-keys"] = {"head_dim": None, "norm_eps": None, "head_size": c["head_dim"],
                               "layer_norm_epsilon": c["norm_eps"], "lora_rank_decay": 8,
                               "lora_rank_iclr": 8, "lora_rank_value_residual_mix": 4,
                               "lora_rank_gate": 12, "decay_low_rank_dim": None,
                               "a_low_rank_dim": None, "v_low_rank_dim": None,
                               "gate_low_rank_dim": None}
        v["fam-gate-off"] = {"wkv_has_gate": False}
    if fx == "dots3":
        # conversion/dots3.py (Dots3NoteModel): the hub's model_type (transformers 5.24's
        # config class fails its own checks on this checkpoint, so the file is read as
        # written), the LoRA-norm rescale off, every refused setting of __init__ and
        # set_gguf_parameters, the optional keys, the leading dense count absent and a yarn
        # rope with mscale_all_dim.
        v["fam-model-type"] = {"model_type": "dots3_note"}
        # The adapters' widths equal to hidden_size: transformers builds the config (the text
        # class's per-kind rope, no root rope_theta read), the swa_* keys stay at the root.
        v["fam-model-type-typed"] = {"model_type": "dots3_note",
                                     "vision_config": {"adapter_out_dim": c["hidden_size"]},
                                     "audio_config": {"adapter_out_dim": c["hidden_size"]}}
        v["fam-model-type-typed-defaults"] = {
            "model_type": "dots3_note", "vision_config": {"adapter_out_dim": c["hidden_size"]},
            "audio_config": {"adapter_out_dim": c["hidden_size"]}, "rms_norm_eps": None,
            "swa_rope_theta": None, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}
        v["fam-model-type-typed-kv"] = {"model_type": "dots3_note",
                                        "vision_config": {"adapter_out_dim": c["hidden_size"]},
                                        "audio_config": {"adapter_out_dim": c["hidden_size"]},
                                        "swa_num_key_value_heads": 2}
        # The text class alone consumes the swa_* keys: the reference misses them.
        v["fam-text-model-type"] = {"model_type": "dots3_note_text"}
        v["fam-rescale-off"] = {"apply_mla_qkv_lora_rescale": False}
        v["fam-rescale-absent"] = {"apply_mla_qkv_lora_rescale": None}
        v["fam-use-dsa-off"] = {"use_dsa": False}
        v["fam-layernorm"] = {"normalization": "LayerNorm"}
        v["fam-final-layernorm"] = {"final_norm": "LayerNorm"}
        v["fam-k-rope-norm-off"] = {"k_rope_only_layernorm": False}
        v["fam-topk-greedy"] = {"topk_method": "greedy"}
        v["fam-softmax"] = {"scoring_func": "softmax"}
        v["fam-scoring-absent"] = {"scoring_func": None}
        v["fam-grouped"] = {"n_group": 2, "topk_group": 1}
        v["fam-group-keys-absent"] = {"n_group": None, "topk_group": None}
        v["fam-dynamic-rsf"] = {"use_dynamic_rsf": True}
        v["fam-gating-fp32"] = {"moe_gating_fp32": True}
        v["fam-gate-elementwise"] = {"attention_gate_type": "elementwise"}
        v["fam-swa-gate-elementwise"] = {"swa_attention_gate_type": "elementwise"}
        v["fam-checks-absent"] = {"use_dsa": None, "normalization": None, "final_norm": None,
                                  "k_rope_only_layernorm": None, "topk_method": None,
                                  "attention_gate_type": None,
                                  "swa_attention_gate_type": None}
        v["fam-swa-head-mismatch"] = {"swa_head_dim": 16}
        v["fam-swa-head-absent"] = {"swa_head_dim": None}
        v["fam-swa-rope-mismatch"] = {"swa_qk_rope_head_dim": 8, "swa_head_dim": 16}
        v["fam-layer-types-short"] = {"layer_types": c["layer_types"][:2]}
        v["fam-layer-types-long"] = {"layer_types": c["layer_types"] + ["full_attention"]}
        v["fam-swa-q-lora"] = {"swa_q_lora_rank": 4}
        v["fam-swa-theta-absent"] = {"swa_rope_theta": None}
        v["fam-rms-eps-absent"] = {"rms_norm_eps": None}
        v["fam-dense-absent"] = {"first_k_dense_replace": None}
        # A yarn rope in rope_parameters (with mscale_all_dim); in the v4 rope_scaling the
        # tokenizer's generic config fails on it (rope-v4-yarn).
        v["fam-yarn"] = {"rope_parameters": {"rope_type": "yarn", "factor": 4.0,
                                             "rope_theta": 80000000.0,
                                             "original_max_position_embeddings": 1024,
                                             "mscale_all_dim": 1.0}}
    if fx in ("lfm2-colbert", "lfm2-bidir"):
        # conversion/lfm2.py (LFM2ColBertModel): the other registered class (causal or not),
        # the FFN size rules, the attention layers from full_attn_idxs (Lfm2Config), the
        # convolution cache, the classifier pooling `_try_set_pooling_type` reads (and
        # refuses), the keys the reference requires.
        other = "Lfm2BidirectionalModel" if fx == "lfm2-colbert" else "Lfm2Model"
        n = c["num_hidden_layers"]
        v["fam-other-class"] = {"architectures": [other]}
        v["fam-ff-adjust-flip"] = {"block_auto_adjust_ff_dim":
                                   not c.get("block_auto_adjust_ff_dim", True)}
        v["fam-ff-multiplier-other"] = {"block_ffn_dim_multiplier": 1.3,
                                        "block_auto_adjust_ff_dim": True}
        v["fam-ff-multiple-of-24"] = {"block_multiple_of": 24, "block_auto_adjust_ff_dim": True}
        v["fam-ff-dim-key"] = {"block_ff_dim": 72}
        v["fam-full-attn-idxs"] = {"layer_types": None, "full_attn_idxs": [1]}
        v["fam-layer-types-absent"] = {"layer_types": None}
        v["fam-conv-cache-4"] = {"conv_L_cache": 4}
        v["fam-norm-eps"] = {"norm_eps": 1e-4}
        v["fam-classifier-mean"] = {"classifier_pooling": "mean"}
        v["fam-classifier-cls"] = {"classifier_pooling": "cls"}
        v["fam-classifier-max"] = {"classifier_pooling": "max"}
        v["fam-kv-per-layer-absent"] = {"num_key_value_heads": None}
    if fx == "step35":
        # conversion/step3.py (Step35Model): the hub's model_type (transformers 5's
        # Step3p7TextConfig renames num_attention_groups, which the reference then misses),
        # the hub's per-layer lists with the MTP layer's entry (refused by transformers'
        # generic config when the tokenizer is loaded), the rotary-factor assert, the
        # optional keys, a scalar rope_theta and a Llama 3 rope (rope_freqs).
        n = c["num_hidden_layers"]
        v["fam-model-type"] = {"model_type": "step3p5"}
        v["fam-mtp-list-entries"] = {"layer_types": c["layer_types"] + ["full_attention"]}
        v["fam-rotary-mismatch"] = {"partial_rotary_factors": [0.5] * n}
        v["fam-lists-absent"] = {"layer_types": None, "partial_rotary_factors": None}
        v["fam-nextn-0"] = {"num_nextn_predict_layers": 0}
        v["fam-clamps-absent"] = {"swiglu_limits": None, "swiglu_limits_shared": None}
        v["fam-other-heads-absent"] = {"attention_other_setting": None}
        v["fam-moe-enum-absent"] = {"moe_layers_enum": None, "moe_every_n_layer": None}
        v["fam-router-keys-absent"] = {"moe_router_scaling_factor": None,
                                       "norm_expert_weight": None, "rms_norm_eps": None}
        v["fam-theta-scalar"] = {"rope_theta": 10000.0}
        v["fam-llama3"] = {"rope_parameters": {
            "rope_type": "llama3", "rope_theta": 5000000.0, "factor": 2.0,
            "low_freq_factor": 1.0, "high_freq_factor": 32.0,
            "original_max_position_embeddings": 64}}
    if fx == "rugpt3xl":
        # conversion/gpt2.py (RuGPT3XLModel): the generic hparams under other spellings.
        v["fam-n-positions"] = {"max_position_embeddings": None, "n_positions": 64}
        v["fam-eps-spelling"] = {"layer_norm_eps": None, "layer_norm_epsilon": 1e-6}
        v["fam-layers-spelling"] = {"num_hidden_layers": None, "n_layer": 2}
    if fx == "chameleon":
        # conversion/chameleon.py: swin_norm (default false), the obsolete class name, and GQA
        # (refused: the k-norm rebuild takes its head size from hidden / KV heads).
        v["fam-swin-norm"] = {"swin_norm": True}
        v["fam-swin-norm-absent"] = {"swin_norm": None}
        v["fam-causal-lm-class"] = {"architectures": ["ChameleonForCausalLM"]}
        v["fam-gqa"] = {"num_key_value_heads": 1}
    if fx == "plamo2":
        # conversion/plamo.py (Plamo2Model): the Mamba layer pattern (mamba_step, the
        # few-layers rule, mamba_enabled), every hparam it reads with its default, the rope
        # theta from rope_parameters, the required vocab_size.
        v["fam-mamba-step-3"] = {"mamba_step": 3}
        v["fam-mamba-step-8"] = {"mamba_step": 8}
        v["fam-mamba-step-absent"] = {"mamba_step": None}
        v["fam-mamba-step-0"] = {"mamba_step": 0}
        v["fam-mamba-step-negative"] = {"mamba_step": -3}
        v["fam-mamba-disabled"] = {"mamba_enabled": False}
        v["fam-mamba-enabled-absent"] = {"mamba_enabled": None}
        v["fam-heads-absent"] = {"num_attention_heads": None, "num_key_value_heads": None}
        v["fam-defaults"] = {k: None for k in (
            "hidden_size_per_head", "mamba_d_state", "mamba_d_conv", "mamba_num_heads",
            "intermediate_size", "hidden_size", "rms_norm_eps", "rope_theta")}
        v["fam-rope-parameters"] = {"rope_theta": None,
                                    "rope_parameters": {"rope_theta": 5000.0,
                                                        "rope_type": "default"}}
        v["fam-vocab-absent"] = {"vocab_size": None}
        v["fam-vocab-short"] = {"vocab_size": 200}
    if fx == "nemotronhpuzzle":
        # conversion/nemotron.py (NemotronHPuzzleModel): block_configs is the block count and
        # pattern (a truthy hybrid_override_pattern still wins, with the length assert), the
        # per-block sizes (absent or falsy: 0), the top-level MoE keys the generic hparams
        # write first, the required router keys and latent size, Granite 4's spellings and
        # asserts (mamba_-prefixed keys, hidden_act, d_head).
        blocks = c["block_configs"]
        v["fam-layers-stale"] = {"num_hidden_layers": 88}
        v["fam-layers-absent"] = {"num_hidden_layers": None}
        v["fam-override-pattern"] = {"hybrid_override_pattern": "M**E-"}
        v["fam-override-pattern-empty"] = {"hybrid_override_pattern": ""}
        v["fam-override-pattern-short"] = {"hybrid_override_pattern": "M*E"}
        v["fam-block-configs-absent"] = {"block_configs": None}
        v["fam-block-type-absent"] = {"block_configs": [{}, *blocks[1:]]}
        v["fam-block-sizes-absent"] = {"block_configs": [
            {"block_type": b["block_type"]} for b in blocks]}
        v["fam-block-sizes-zero"] = {"block_configs": [
            {**b, "moe_intermediate_size": 0} if b["block_type"] == "moe" else b
            for b in blocks]}
        v["fam-full-attention-name"] = {"block_configs": [
            {**b, "block_type": "full_attention"} if b["block_type"] == "attention" else b
            for b in blocks]}
        v["fam-top-level-moe"] = {"num_experts_per_tok": 3, "moe_intermediate_size": 40}
        v["fam-router-keys"] = {"norm_topk_prob": False, "routed_scaling_factor": 1.0,
                                "n_group": 2, "n_shared_experts": 2}
        v["fam-latent-absent"] = {"moe_latent_size": None}
        v["fam-router-scale-absent"] = {"routed_scaling_factor": None}
        v["fam-mamba-prefixed"] = {"n_groups": None, "mamba_n_groups": c["n_groups"],
                                   "conv_kernel": None, "mamba_d_conv": c["conv_kernel"]}
        v["fam-attention-head-dim"] = {"head_dim": None, "attention_head_dim": c["head_dim"]}
        v["fam-hidden-act"] = {"hidden_act": "relu2"}
        v["fam-hidden-act-silu"] = {"hidden_act": "silu"}
        v["fam-d-head-mismatch"] = {"d_head": 48}
        v["fam-rotary-dims"] = {"attn_rotary_emb": 4}
        v["fam-no-mtp"] = {"num_nextn_predict_layers": 0, "mtp_block_configs": None}
    if fx == "graniteswitch":
        # conversion/granite.py (GraniteSwitchModel): the block count one below the config's
        # (whichever spelling), the head size's three sources, the dense expert_used_count
        # pin, the required adapter keys and the router gain's default, Granite's multipliers.
        v["fam-layers-spelling"] = {"num_hidden_layers": None, "n_layers": 3}
        v["fam-head-dim-explicit"] = {"head_dim": 4}
        v["fam-projection-head-dim"] = {"projection_head_dim": 4, "head_dim": 2}
        v["fam-projection-head-dim-wrong"] = {"projection_head_dim": 2}
        v["fam-local-experts-absent"] = {"num_local_experts": None}
        v["fam-local-experts-set"] = {"num_local_experts": 4}
        v["fam-experts-used-absent"] = {"num_experts_per_tok": None}
        v["fam-gain-absent"] = {"control_token_gain": None}
        v["fam-gain-int"] = {"control_token_gain": 20}
        v["fam-adapters-absent"] = {"num_adapters": None}
        v["fam-rank-absent"] = {"max_lora_rank": None}
        v["fam-activate-absent"] = {"adapter_token_ids": None}
        v["fam-substitute-absent"] = {"adapter_substitute_token_ids": None}
        v["fam-shared-size-absent"] = {"shared_intermediate_size": None}
        v["fam-multipliers-absent"] = {"embedding_multiplier": None, "attention_multiplier": None,
                                       "residual_multiplier": None, "logits_scaling": None}
    if fx == "plamo3":
        # conversion/plamo.py (Plamo3Model): the window's two spellings and its pattern (a
        # count or flags, required with a window), YaRN from rope_scaling_factor unless a rope
        # type is given, the local theta.
        n = c["num_hidden_layers"]
        v["fam-window-absent"] = {"window_size": None}
        v["fam-sliding-window"] = {"window_size": None, "sliding_window": 128}
        v["fam-pattern-flags"] = {"sliding_window_pattern": [i % 2 == 0 for i in range(n)]}
        v["fam-pattern-absent"] = {"sliding_window_pattern": None}
        v["fam-rope-scaling"] = {"rope_scaling_factor": 4.0, "initial_context_length": 1024}
        v["fam-rope-scaling-int"] = {"rope_scaling_factor": 2, "initial_context_length": 512.7}
        v["fam-rope-scaling-one"] = {"rope_scaling_factor": 1.0, "initial_context_length": 1024}
        v["fam-rope-scaling-no-ctx"] = {"rope_scaling_factor": 4.0}
        v["fam-rope-scaling-typed"] = {"rope_scaling_factor": 4.0,
                                       "initial_context_length": 1024,
                                       "rope_parameters": {"rope_type": "linear",
                                                           "factor": 2.0,
                                                           "rope_theta": 1000000.0}}
        v["fam-local-theta-absent"] = {"rope_local_theta": None}
        v["fam-vocab-absent"] = {"vocab_size": None}
    if fx == "sarashina2-text":
        # conversion/sarashina2.py: the class is routed on the root name whatever the text
        # config names; config.json as written (no Llama defaults): no kv head count (no
        # permutation of k by groups), head_dim given, a tied head.
        v["fam-text-arch"] = {"architectures": ["MistralForCausalLM"]}
        v["fam-kv-absent"] = {"num_key_value_heads": None}
        v["fam-eps-absent"] = {"rms_norm_eps": None, "rope_theta": None}
    if fx == "hunyuanvl-text":
        # conversion/hunyuan.py (HunyuanVLTextModel) and HunYuanVLTextConfig: the aliases
        # against the keys they stand for, XD-RoPE in v5 spelling, with three sections,
        # without alpha or factor, sections that do not split half a head (AutoConfig fails:
        # config.json as written), both section keys, "dynamic" without sections (the dense
        # class's NTK rope), no rope scaling, the canonical pad id.
        xd = c["rope_scaling"]
        v["fam-head-dim-alias"] = {"head_dim": None}
        v["fam-head-dim-absent"] = {"head_dim": None, "attention_head_dim": None}
        v["fam-alias-wins"] = {"head_dim": 16, "org_vocab_size": 1000}
        v["fam-pad-canonical"] = {"pad_id": None, "pad_token_id": 3}
        v["fam-rope-v5"] = {"rope_scaling": None, "rope_theta": None, "rope_parameters": {
            "rope_type": "xdrope", "alpha": 500.0, "factor": 2.0, "rope_theta": 20000.0,
            "xdrope_section": [1, 1, 2, 0]}}
        v["fam-three-sections"] = {"rope_scaling": {**xd, "xdrope_section": [2, 1, 1]}}
        v["fam-float-sections"] = {"rope_scaling": {**xd, "xdrope_section": [1.0, 1, 1, 1]}}
        v["fam-alpha-absent"] = {"rope_scaling": {k: x for k, x in xd.items() if k != "alpha"}}
        v["fam-factor-absent"] = {"rope_scaling": {k: x for k, x in xd.items()
                                                   if k != "factor"}}
        v["fam-sections-bad-sum"] = {"rope_scaling": {**xd, "xdrope_section": [1, 1, 1, 2]}}
        v["fam-sections-both"] = {"rope_scaling": {**xd, "mrope_section": [1, 1, 1, 1]}}
        v["fam-sections-differ"] = {"rope_scaling": {**xd, "mrope_section": [2, 2, 0, 0]}}
        v["fam-dynamic"] = {"rope_scaling": {"type": "dynamic", "alpha": 1000.0,
                                             "factor": 1.0}}
        v["fam-dynamic-ctx"] = {"rope_scaling": {"type": "dynamic", "alpha": 1000.0,
                                                 "factor": 1.0},
                                "max_position_embeddings": 4096}
        v["fam-rope-absent"] = {"rope_scaling": None}
    if fx == "minicpmv46-text":
        # conversion/minicpm.py (MiniCPMV4_6TextModel over Qwen3.5): the MTP layers the config
        # counts (none: refused, the class drops the tensors the count would come from; two),
        # the text config's class named by default.
        v["fam-mtp-absent"] = {"mtp_num_hidden_layers": None}
        v["fam-mtp-two"] = {"mtp_num_hidden_layers": 2}
        v["fam-text-type-absent"] = {"model_type": None}
    return v


def _apply_patch(cfg: dict, patch: dict) -> dict:
    cfg = json.loads(json.dumps(cfg))
    target = cfg["text_config"] if "text_config" in cfg else cfg
    for k, val in patch.items():
        if val is None:
            target.pop(k, None)
        else:
            target[k] = val
    return cfg


def _delta(m: dict, base: dict) -> dict:
    """`m` relative to `base` (see the section comment): a kv or tensor entry equal to one of
    the base's is written as its index in the base's list."""
    def rel(xs: list, bs: list) -> list:
        idx = {json.dumps(e): i for i, e in enumerate(bs)}
        out: list = []
        for e in xs:
            i = idx.get(json.dumps(e))
            if i is None:
                out.append(e)
            elif out and isinstance(out[-1], str) and int(out[-1].split("-")[1]) + 1 == i:
                out[-1] = f"{out[-1].split('-')[0]}-{i}"  # a run "a-b" of base entries a..=b
            else:
                out.append(f"{i}-{i}")
        return out
    out = {k: m[k] for k in ("size", "sha256", "data_offset")}
    out["kv"] = rel(m["kv"], base["kv"])
    out["tensors"] = "=base" if m["tensors"] == base["tensors"] else rel(m["tensors"],
                                                                          base["tensors"])
    return out


def run_config_variants(fixtures: list[str], llama: Path, work_root: Path,
                        only_variants: list[str] | None) -> None:
    _, gm = _reference(llama)
    for fx in fixtures:
        gold = TESTDATA / "golden" / fx
        if not _transformers_ok(fx):
            continue
        base_cfg = json.loads((TESTDATA / "hf" / fx / "config.json").read_text())
        outdir = TESTDATA / "golden" / "variants" / fx
        for name, patch in config_variants(fx, base_cfg).items():
            if only_variants and name not in only_variants:
                continue
            if (outdir / f"{name}.json").exists() and not only_variants:
                continue  # made by an earlier (interrupted) run
            work = work_root / fx / name
            if work.exists():
                shutil.rmtree(work)
            work.mkdir(parents=True)
            d = materialize(TESTDATA / "hf" / fx, work / fx)
            (d / "config.json").write_text(json.dumps(_apply_patch(base_cfg, patch), indent=2)
                                           + "\n", encoding="utf-8")
            rec: dict = {"fixture": fx, "variant": name, "patch": patch}
            if not (gold / "convert-f32.json").is_file() and not name.startswith("raw-config"):
                continue  # the reference refuses the fixture itself: nothing to vary
            for t in ("f32", "bf16"):
                if t == "bf16" and name not in BF16_VARIANTS:
                    continue
                base_m = gold / f"convert-{t}.json"
                out = work / f"out-{t}.gguf"
                rc, err = convert_in_process(llama, [str(d), "--outtype", t, "--outfile",
                                                     str(out)], work)
                if rc != 0:
                    lines = [x for x in err.strip().splitlines() if x.strip()]
                    rec[t] = {"ok": False, "error": (lines[-1] if lines else "")[:300]}
                    if out.exists():
                        out.unlink()
                    break  # one refusal is enough: the other outtypes refuse alike
                m = gm.manifest(str(out), None)
                if t == "f32":
                    # No base (the reference refuses the fixture as it is): every entry.
                    base = json.loads(base_m.read_text()) if base_m.is_file() \
                        else {"kv": [], "tensors": []}
                    rec[t] = {"ok": True, **_delta(m, base)}
                else:  # the f32 manifest explains a difference; bf16 keeps the file's hash
                    rec[t] = {"ok": True, "size": m["size"], "sha256": m["sha256"]}
                out.unlink()
            outdir.mkdir(parents=True, exist_ok=True)
            (outdir / f"{name}.json").write_text(json.dumps(rec, separators=(",", ":"),
                                                            ensure_ascii=False) + "\n")
            st = rec.get("f32", {})
            print(f"{fx} {name}: {'ok' if st.get('ok') else 'REFUSED ' + st.get('error', '')}",
                  file=sys.stderr, flush=True)
            shutil.rmtree(work)


# Granite SWA (interleaved sliding-window attention with per-head sinks): the hub's configs
# carry `no_rope_layers` (1 = RoPE, 0 = NoPE), which the class writes as the rope pattern;
# the dense one's `layer_types` removed (the config class derives every fourth layer full).
FIXTURES.update({
    "granite-swa": ("GraniteSWAForCausalLM", "granite_swa",
                    dense(hidden_size=16, intermediate_size=40, num_hidden_layers=3,
                          num_attention_heads=2, num_key_value_heads=1, vocab_size=SPM_VOCAB,
                          sliding_window=64, attention_multiplier=0.125,
                          embedding_multiplier=6.0, residual_multiplier=0.5,
                          logits_scaling=2.0, bos_token_id=1, eos_token_id=2),
                    "spm", True),
    "granitemoe-swa": ("GraniteMoeSWAForCausalLM", "granitemoe_swa",
                       dense(hidden_size=16, intermediate_size=24, num_hidden_layers=2,
                             num_attention_heads=2, num_key_value_heads=1,
                             vocab_size=SPM_VOCAB, num_local_experts=3, num_experts_per_tok=2,
                             shared_intermediate_size=40, sliding_window=32,
                             layer_types=["sliding_attention", "full_attention"],
                             attention_multiplier=0.25, embedding_multiplier=4.0),
                       "spm", True),
})


def _granite_swa_hub(cfg: dict) -> None:
    """The published GraniteSWA config: no `layer_types`, a `no_rope_layers` list."""
    del cfg["layer_types"]
    cfg["no_rope_layers"] = [1, 0, 1]


CONFIG_EDITS["granite-swa"] = _granite_swa_hub


# Solar Open's converter takes eos/eot, unk and bos from the added vocabulary by their text
# (`<|endoftext|>` is SmolLM2's token 0): the SmolLM2 file with `<|startoftext|>` and `<unk>`
# appended (ids 49152-49153), loaded as PreTrainedTokenizerFast (solar_open has no
# registered tokenizer class; SmolLM2's GPT2Tokenizer would drop the appended tokens).
TOKENIZERS["smollm-solar"] = ("llama-bpe", ["tokenizer.json"],
                              ["tokenizer_config.json", "special_tokens_map.json"])


def _solar_tokenizer(out: Path) -> None:
    tc = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    tc["tokenizer_class"] = "PreTrainedTokenizerFast"
    (out / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n", encoding="utf-8")
    tj = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    for i, tok in enumerate(["<|startoftext|>", "<unk>"]):
        tj["added_tokens"].append({"id": BPE_VOCAB + i, "content": tok, "single_word": False,
                                   "lstrip": False, "rstrip": False, "normalized": False,
                                   "special": True})
    (out / "tokenizer.json").write_text(
        json.dumps(tj, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


# Solar Open: GLM-4.5's MoE decoder (every layer MoE, no MTP layers), narrow like the GLM-4.5
# fixture so that its embedding and head are the same draws (stored once); one padded token.
FIXTURES.update({
    "solaropen": ("SolarOpenForCausalLM", "solar_open",
                  bpe(vocab_size=BPE_VOCAB + 3, hidden_size=4, head_dim=16,
                      moe_intermediate_size=24, n_routed_experts=4, n_shared_experts=1,
                      num_experts_per_tok=2, routed_scaling_factor=1.5, norm_topk_prob=True,
                      rope_parameters={"rope_theta": 1000000.0, "rope_type": "default",
                                       "partial_rotary_factor": 0.75}),
                  "smollm-solar", False),
})
# Kimi Linear (moonshotai's remote code, written directly in the published layout, see
# RAW_MODELS): KDA (gated delta-rule linear attention: q/k/v with short convolutions stored
# [channels, 1, kernel], the forget gate's f_a/f_b, dt_bias, A_log [1, 1, heads, 1], beta,
# the output gate's g_a/g_b, o_norm) in the blocks `linear_attn_config` lists as kda_layers
# (1-based), MLA without q-lora in its full_attn_layers, one dense block, then routed
# experts (w1/w2/w3 under block_sparse_moe) with the selection bias and a shared expert.
# The config spells the hparams as the vendor does (num_experts, num_experts_per_token,
# num_shared_experts, moe_renormalize, model_max_length), which transformers' KimiLinearConfig
# keeps; tied embeddings keep the 49152-row BPE embedding one stored tensor.
FIXTURES["kimilinear"] = (
    "KimiLinearForCausalLM", "kimi_linear",
    dict(hidden_size=8, intermediate_size=40, moe_intermediate_size=24, num_hidden_layers=3,
         num_attention_heads=2, num_key_value_heads=2, kv_lora_rank=32, q_lora_rank=None,
         qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12, num_experts=4,
         num_experts_per_token=2, num_shared_experts=1, first_k_dense_replace=1,
         moe_layer_freq=1, moe_renormalize=True, moe_router_activation_func="sigmoid",
         routed_scaling_factor=2.446, num_expert_group=1, topk_group=1, use_grouped_topk=True,
         mla_use_nope=True, num_nextn_predict_layers=0, model_max_length=4096,
         rms_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=None, vocab_size=BPE_VOCAB,
         hidden_act="silu", bos_token_id=1, eos_token_id=2,
         linear_attn_config={"full_attn_layers": [2], "kda_layers": [1, 3], "head_dim": 6,
                             "num_heads": 2, "short_conv_kernel_size": 4}),
    "smollm", True)


def _kimi_linear_tensors(kw: dict) -> dict:
    """Kimi Linear's checkpoint layout (see the kimilinear fixture)."""
    e, i, v = kw["hidden_size"], kw["intermediate_size"], kw["vocab_size"]
    nh, nope, rope, vd = (kw["num_attention_heads"], kw["qk_nope_head_dim"],
                          kw["qk_rope_head_dim"], kw["v_head_dim"])
    kvr, ff, x = kw["kv_lora_rank"], kw["moe_intermediate_size"], kw["num_experts"]
    la = kw["linear_attn_config"]
    kh, kd, kc = la["num_heads"], la["head_dim"], la["short_conv_kernel_size"]
    qkv = kh * kd
    sh = ff * kw["num_shared_experts"]
    out = {"model.embed_tokens.weight": (v, e), "model.norm.weight": (e,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        a = p + "self_attn."
        out.update({p + "input_layernorm.weight": (e,),
                    p + "post_attention_layernorm.weight": (e,)})
        if b + 1 in la["full_attn_layers"]:
            q = kw.get("q_lora_rank")
            if q:
                out.update({a + "q_a_proj.weight": (q, e), a + "q_a_layernorm.weight": (q,),
                            a + "q_b_proj.weight": (nh * (nope + rope), q)})
            else:
                out[a + "q_proj.weight"] = (nh * (nope + rope), e)
            out.update({a + "kv_a_proj_with_mqa.weight": (kvr + rope, e),
                        a + "kv_a_layernorm.weight": (kvr,),
                        a + "kv_b_proj.weight": (nh * (nope + vd), kvr),
                        a + "o_proj.weight": (e, nh * vd)})
        else:
            out.update({a + n + "_proj.weight": (qkv, e) for n in "qkv"})
            out.update({a + n + "_conv1d.weight": (qkv, 1, kc) for n in "qkv"})
            out.update({a + "f_a_proj.weight": (kd, e), a + "f_b_proj.weight": (qkv, kd),
                        a + "dt_bias": (qkv,), a + "A_log": (1, 1, kh, 1),
                        a + "b_proj.weight": (kh, e), a + "g_a_proj.weight": (kd, e),
                        a + "g_b_proj.weight": (qkv, kd), a + "o_norm.weight": (kd,),
                        a + "o_proj.weight": (e, qkv)})
        if b < kw["first_k_dense_replace"]:
            out.update({p + "mlp.gate_proj.weight": (i, e), p + "mlp.up_proj.weight": (i, e),
                        p + "mlp.down_proj.weight": (e, i)})
            continue
        m = p + "block_sparse_moe."
        out.update({m + "gate.weight": (x, e), m + "gate.e_score_correction_bias": (x,),
                    m + "shared_experts.gate_proj.weight": (sh, e),
                    m + "shared_experts.up_proj.weight": (sh, e),
                    m + "shared_experts.down_proj.weight": (e, sh)})
        for j in range(x):
            out.update({m + f"experts.{j}.w1.weight": (ff, e),
                        m + f"experts.{j}.w2.weight": (e, ff),
                        m + f"experts.{j}.w3.weight": (ff, e)})
    return out


RAW_MODELS["kimilinear"] = (_kimi_linear_tensors, {"model_type": "kimi_linear"})
RAW_FIRST["kimilinear"] = ["model.embed_tokens.weight"]


# GLM-5.3-Flash's text model (Glm5NextForConditionalGeneration, built by transformers, which
# saves the hub layout): a KDA linear-attention block (q/k/v short convolutions, forget and
# output gates, A_log, dt_bias) with one dense MLP, then a nope-only MLA block with the DSA
# indexer and its k-pool compressor and routed experts (per-expert, the selection bias, a
# shared expert); mHC parameters (`hc_attn_*`, `hc_ffn_*`) in every block. The hub's keys
# that the reference reads beside transformers' own are in text_config (`linear_attn_config`,
# `first_k_dense_replace`, `mla_use_nope`, `num_nextn_predict_layers`); one next-token-
# prediction block (a copy of the last block's shapes plus eh_proj / enorm / hnorm /
# shared_head.norm, see EXTRA_TENSORS) is kept as blk.2. Tied embeddings: the 49155-row
# embedding is glm4moelite's (BORROWED, stored once); GLM-5's tokenizer files (the class
# is not in transformers' tokenizer map: tokenizer_config.json names PreTrainedTokenizerFast,
# as the hub's does). A one-block vision tower is dropped.
FIXTURES["glm5next-text"] = (
    "Glm5NextForConditionalGeneration", "glm5_next",
    dict(text_config=dict(
             model_type="glm5_next_text", vocab_size=BPE_VOCAB + 3, hidden_size=8,
             intermediate_size=24, moe_intermediate_size=8, num_hidden_layers=2,
             num_attention_heads=2, num_key_value_heads=2, n_routed_experts=3,
             n_shared_experts=1, num_experts_per_tok=2, kv_lora_rank=16, q_lora_rank=12,
             qk_rope_head_dim=0, qk_nope_head_dim=8, v_head_dim=6, index_topk=4,
             index_kpool=2, index_head_dim=8, index_n_heads=2, hc_mult=4,
             hc_sinkhorn_iters=20, hc_eps=1e-6, swiglu_limit=10.0, routed_scaling_factor=2.5,
             norm_topk_prob=True, layer_types=["linear_attention", "indexed_attention"],
             mlp_layer_types=["dense", "sparse"], first_k_dense_replace=1, mla_use_nope=True,
             num_nextn_predict_layers=1, max_position_embeddings=4096, rms_norm_eps=1e-5,
             tie_word_embeddings=True, pad_token_id=None,
             linear_attn_config={"head_dim": 4, "num_heads": 2, "short_conv_kernel_size": 4,
                                 "gate_lower_bound": -5.0, "safe_gate": True}),
         vision_config=dict(depth=1, hidden_size=8, intermediate_size=12, num_heads=2,
                            out_hidden_size=8, image_size=28, patch_size=7,
                            spatial_merge_size=2, temporal_patch_size=2,
                            projection_intermediate_size=12)),
    "smollm-glm5", True)


def _mtp_glm5next(kw: dict, saved: dict) -> dict:
    """GLM-5.3-Flash's next-token-prediction block (transformers does not build it): the
    last block's tensors (shapes) under the next index, plus eh_proj, enorm, hnorm and
    shared_head.norm."""
    t = kw["text_config"]
    e, n = t["hidden_size"], t["num_hidden_layers"]
    root = "model.language_model.layers."
    last, p = f"{root}{n - 1}.", f"{root}{n}."
    out = {p + k[len(last):]: tuple(v.shape) for k, v in saved.items() if k.startswith(last)}
    out.update({p + "eh_proj.weight": (e, 2 * e), p + "enorm.weight": (e,),
                p + "hnorm.weight": (e,), p + "shared_head.norm.weight": (e,)})
    return out


EXTRA_TENSORS["glm5next-text"] = _mtp_glm5next
BORROWED["glm5next-text"] = {"model.language_model.embed_tokens.weight":
                             ("glm4moelite", "model.embed_tokens.weight")}


# DeepSeek-OCR (deepseek-ai's remote code, written directly in the published layout, see
# RAW_MODELS): the text half is DeepSeek-V2 without MLA (`use_mla` false: plain q/k/v
# projections, no rope head) in `language_config`, whose own `architectures` names
# DeepseekV2ForCausalLM; the reference converts it as `deepseek2-ocr` because the root names
# the OCR class. A SAM and a CLIP tower, the projector and the two learned separators are in
# the checkpoint too, and the text conversion drops them.
FIXTURES["deepseekocr"] = (
    "DeepseekOCRForCausalLM", "deepseek_vl_v2",
    dict(language_config=dict(
        architectures=["DeepseekV2ForCausalLM"], model_type="deepseek_v2", hidden_size=8,
        intermediate_size=40, moe_intermediate_size=24, num_hidden_layers=3,
        num_attention_heads=2, num_key_value_heads=2, n_routed_experts=4, n_shared_experts=1,
        num_experts_per_tok=2, first_k_dense_replace=1, kv_lora_rank=None, q_lora_rank=None,
        qk_nope_head_dim=0, qk_rope_head_dim=0, v_head_dim=0, use_mla=False, lm_head=True,
        rm_head=False, topk_method="greedy", n_group=1, topk_group=1,
        max_position_embeddings=8192, vocab_size=BPE_VOCAB, bos_token_id=0, eos_token_id=1,
        torch_dtype="bfloat16"),
         vision_config=dict(image_size=1024, mlp_ratio=3.7362, model_name="deeplip_b_l",
                            model_type="vision", width=dict(
                                sam_vit_b=dict(downsample_channels=[512, 1024], global_attn_indexes=[2, 5, 8, 11], heads=12, layers=12, width=768),
                                **{"clip-l-14-224": dict(heads=16, image_size=224, layers=24, patch_size=14, width=1024)})),
         projector_config=dict(input_dim=2048, model_type="mlp_projector", n_embed=8,
                               projector_type="linear"),
         candidate_resolutions=[[1024, 1024]], global_view_pos="head", tile_tag="2D"),
    "smollm", True)


def _deepseek_ocr_tensors(kw: dict) -> dict:
    """DeepSeek-OCR's checkpoint layout (see the deepseekocr fixture): the text model, and a
    few tensors of each vision part, which the text conversion drops."""
    t = kw["language_config"]
    e, i, v = t["hidden_size"], t["intermediate_size"], t["vocab_size"]
    nh, nkv, ff, x = (t["num_attention_heads"], t["num_key_value_heads"],
                      t["moe_intermediate_size"], t["n_routed_experts"])
    hd = e // nh
    sh = ff * t["n_shared_experts"]
    out = {"model.embed_tokens.weight": (v, e), "model.norm.weight": (e,),
           "model.sam_model.patch_embed.proj.weight": (4, 3, 2, 2),
           "model.vision_model.embeddings.patch_embedding.weight": (4, 3, 2, 2),
           "model.projector.layers.weight": (e, 16), "model.image_newline": (e,),
           "model.view_seperator": (e,)}
    for b in range(t["num_hidden_layers"]):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,),
                    p + "post_attention_layernorm.weight": (e,),
                    p + "self_attn.q_proj.weight": (nh * hd, e),
                    p + "self_attn.k_proj.weight": (nkv * hd, e),
                    p + "self_attn.v_proj.weight": (nkv * hd, e),
                    p + "self_attn.o_proj.weight": (e, nh * hd)})
        if b < t["first_k_dense_replace"]:
            out.update({p + "mlp.gate_proj.weight": (i, e), p + "mlp.up_proj.weight": (i, e),
                        p + "mlp.down_proj.weight": (e, i)})
            continue
        out.update({p + "mlp.gate.weight": (x, e),
                    p + "mlp.shared_experts.gate_proj.weight": (sh, e),
                    p + "mlp.shared_experts.up_proj.weight": (sh, e),
                    p + "mlp.shared_experts.down_proj.weight": (e, sh)})
        for j in range(x):
            q = p + f"mlp.experts.{j}."
            out.update({q + "gate_proj.weight": (ff, e), q + "up_proj.weight": (ff, e),
                        q + "down_proj.weight": (e, ff)})
    return out


RAW_MODELS["deepseekocr"] = (_deepseek_ocr_tensors, {"model_type": "deepseek_vl_v2"})

# Unlimited-OCR (baidu/Unlimited-OCR, remote code): DeepSeek-OCR's layout under its own root
# class, whose `language_config` here names no class of its own, so the root class is the
# one converted (the reference registers it with the DeepSeek-V2 text model, as
# `deepseek2-ocr`). The same tensors as deepseekocr (stored once).
FIXTURES["unlimitedocr"] = (
    "UnlimitedOCRForCausalLM", "deepseek_vl_v2",
    dict(FIXTURES["deepseekocr"][2], language_config={
        k: v for k, v in FIXTURES["deepseekocr"][2]["language_config"].items()
        if k != "architectures"}),
    "smollm", True)
RAW_MODELS["unlimitedocr"] = RAW_MODELS["deepseekocr"]


# Youtu-VL's text half (YoutuVLForConditionalGeneration, remote code in the hub layout of
# tencent/Youtu-VL-4B-Instruct: the text hparams at the root, `model_type` youtu_vl, which
# AutoConfig does not know, and a SigLIP2 `vision_config`): the youtu fixture's sizes and
# MLA layers (the embedding drawn first, shared with the BPE fixtures of its width), and a
# tensor of the vision tower and of the merger, which the text conversion drops. The
# youtuvl projector fixture covers the other half.
FIXTURES["youtuvl-text"] = (
    "YoutuVLForConditionalGeneration", "youtu_vl",
    dict(hidden_size=8, intermediate_size=40, num_hidden_layers=2, num_attention_heads=2,
         num_key_value_heads=2, kv_lora_rank=32, q_lora_rank=24, qk_nope_head_dim=16,
         qk_rope_head_dim=8, v_head_dim=12, max_position_embeddings=4096, rope_theta=10000.0,
         rope_interleave=True, rms_norm_eps=1e-6, vocab_size=BPE_VOCAB, bos_token_id=1,
         eos_token_id=2, torch_dtype="bfloat16",
         auto_map={"AutoConfig": "configuration_youtu_vl.YoutuVLConfig",
                   "AutoModelForCausalLM": "modeling_youtu_vl.YoutuVLForConditionalGeneration"},
         vision_config=dict(model_type="siglip2_vision_model", hidden_size=16,
                            intermediate_size=24, num_hidden_layers=3, num_attention_heads=2,
                            patch_size=7, num_patches=16, spatial_merge_size=2)),
    "smollm", True)


def _youtu_vl_tensors(kw: dict) -> dict:
    e, i, v = kw["hidden_size"], kw["intermediate_size"], kw["vocab_size"]
    nh, q, kv = kw["num_attention_heads"], kw["q_lora_rank"], kw["kv_lora_rank"]
    nope, rope, vd = kw["qk_nope_head_dim"], kw["qk_rope_head_dim"], kw["v_head_dim"]
    out = {"model.embed_tokens.weight": (v, e), "model.norm.weight": (e,),
           "siglip2.vision_model.post_layernorm.weight": (16,),
           "merger.ln_q.weight": (16,)}
    for b in range(kw["num_hidden_layers"]):
        p = f"model.layers.{b}."
        a = p + "self_attn."
        out.update({p + "input_layernorm.weight": (e,),
                    p + "post_attention_layernorm.weight": (e,),
                    a + "q_a_proj.weight": (q, e), a + "q_a_layernorm.weight": (q,),
                    a + "q_b_proj.weight": (nh * (nope + rope), q),
                    a + "kv_a_proj_with_mqa.weight": (kv + rope, e),
                    a + "kv_a_layernorm.weight": (kv,),
                    a + "kv_b_proj.weight": (nh * (nope + vd), kv),
                    a + "o_proj.weight": (e, nh * vd),
                    p + "mlp.gate_proj.weight": (i, e), p + "mlp.up_proj.weight": (i, e),
                    p + "mlp.down_proj.weight": (e, i)})
    return out


RAW_MODELS["youtuvl-text"] = (_youtu_vl_tensors, {"model_type": "youtu_vl"})


# PaddleOCR-VL's text half (PaddleOCRVLForConditionalGeneration, converted as ERNIE 4.5 under
# the `paddleocr` architecture): the config as transformers saves it (a `paddleocr_vl_text`
# text_config, the paddleocr-vl projector fixture's vision config) and the hub checkpoint's
# names (the text model under `model.`, the vision tower under `visual.`, the projector
# `mlp_AR.`, one tensor of each dropped), the SentencePiece vocabulary.
FIXTURES["paddleocr-text"] = (
    "PaddleOCRVLForConditionalGeneration", "paddleocr_vl",
    dict(text_config=dict(model_type="paddleocr_vl_text", vocab_size=SPM_VOCAB, hidden_size=8,
                          intermediate_size=16, num_hidden_layers=2, num_attention_heads=2,
                          num_key_value_heads=1, head_dim=4, hidden_act="silu",
                          max_position_embeddings=4096, rms_norm_eps=1e-5, use_bias=False,
                          pad_token_id=0, bos_token_id=1, eos_token_id=2,
                          tie_word_embeddings=True,
                          rope_parameters={"rope_theta": 500000.0, "rope_type": "default"}),
         vision_config=dict(architectures=["PaddleOCRVisionModel"],
                            model_type="paddleocr_vl_vision", hidden_size=16,
                            intermediate_size=24, num_hidden_layers=3, num_attention_heads=2,
                            image_size=28, patch_size=7, spatial_merge_size=2),
         image_token_id=100295, video_token_id=100296, vision_start_token_id=101305,
         vision_end_token_id=101306),
    "spm", True)


def _paddleocr_text_tensors(kw: dict) -> dict:
    t = kw["text_config"]
    e, i, v = t["hidden_size"], t["intermediate_size"], t["vocab_size"]
    nh, nkv, hd = t["num_attention_heads"], t["num_key_value_heads"], t["head_dim"]
    out = {"model.embed_tokens.weight": (v, e), "model.norm.weight": (e,),
           "visual.vision_model.post_layernorm.weight": (16,),
           "mlp_AR.pre_norm.weight": (16,)}
    for b in range(t["num_hidden_layers"]):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": (e,),
                    p + "post_attention_layernorm.weight": (e,),
                    p + "self_attn.q_proj.weight": (nh * hd, e),
                    p + "self_attn.k_proj.weight": (nkv * hd, e),
                    p + "self_attn.v_proj.weight": (nkv * hd, e),
                    p + "self_attn.o_proj.weight": (e, nh * hd),
                    p + "mlp.gate_proj.weight": (i, e), p + "mlp.up_proj.weight": (i, e),
                    p + "mlp.down_proj.weight": (e, i)})
    return out


RAW_MODELS["paddleocr-text"] = (_paddleocr_text_tensors, {"model_type": "paddleocr_vl"})


# The Qwen2-VL vision config of the sarashina2-vl projector fixture (its text half reads none
# of it).
SARASHINA2_VISION = dict(depth=3, embed_dim=8, hidden_act="quick_gelu", hidden_size=16,
                         in_channels=3, mlp_ratio=2, model_type="qwen2_vl_vision", num_heads=2,
                         patch_size=7, spatial_merge_size=2, temporal_patch_size=2)

# Sarashina2-Vision's text half (Sarashina2VisionForCausalLM, remote code in the hub layout of
# sbintuitions/sarashina2.2-vision-3b: AutoConfig refuses the remote code, so the reference
# reads config.json as written, a Llama `text_config` merged into the root): the Llama model
# under `llm.` (the class strips the prefix), the top-level `norm.` the class drops, one
# tensor of the vision tower (`visual.`, dropped as multimodal), a tied head and the shared
# SentencePiece vocabulary. The sarashina2-vl projector fixture covers the other half.
FIXTURES["sarashina2-text"] = (
    "Sarashina2VisionForCausalLM", "sarashina2_vision",
    dict(text_config=dict(model_type="llama", architectures=["LlamaForCausalLM"],
                          vocab_size=SPM_VOCAB, hidden_size=4, intermediate_size=8,
                          num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1,
                          max_position_embeddings=4096, rms_norm_eps=1e-5,
                          rope_theta=500000.0, rope_scaling=None, attention_bias=False,
                          mlp_bias=False, bos_token_id=1, eos_token_id=2,
                          hidden_act="silu", torch_dtype="bfloat16"),
         vision_config=SARASHINA2_VISION, image_token_index=14, torch_dtype="bfloat16",
         auto_map={"AutoConfig": "configuration_sarashina2_vision.Sarashina2VisionConfig",
                   "AutoModelForCausalLM":
                       "modeling_sarashina2_vision.Sarashina2VisionForCausalLM"}),
    "spm", True)


def _sarashina2_text_tensors(kw: dict) -> dict:
    t = kw["text_config"]
    out = {f"llm.{k}": v for k, v in _llamalike()(t).items()}
    out["norm.weight"] = (t["hidden_size"],)
    out["visual.merger.ln_q.weight"] = (16,)
    return out


RAW_MODELS["sarashina2-text"] = (_sarashina2_text_tensors, {"model_type": "sarashina2_vision"})


# HunyuanOCR's text half (HunYuanVLForConditionalGeneration, arch hunyuan_vl) in the flat hub
# layout of tencent/HunyuanOCR: the text hparams at the root (HunYuanVLConfig moves the text
# class's keys into its text_config; `attention_head_dim`, `org_vocab_size` and `pad_id` are
# its aliases), XD-RoPE as the hub spells it (`rope_scaling` type "xdrope" with `alpha` and
# `xdrope_section`, which transformers rewrites as "dynamic" with an `mrope_section`), a
# negative pad id, the hunyuan-dense fixture's text weights (BORROWED: stored once) and one
# tensor of the vision tower (`vit.`, dropped). The hunyuanvl projector fixture covers the
# other half.
FIXTURES["hunyuanvl-text"] = (
    "HunYuanVLForConditionalGeneration", "hunyuan_vl",
    dict(attention_bias=False, attention_head_dim=8, head_dim=8, hidden_act="silu",
         hidden_size=16, intermediate_size=40, max_position_embeddings=32768,
         num_attention_heads=2, num_hidden_layers=2, num_key_value_heads=1, rms_norm_eps=1e-5,
         rope_theta=10000.0,
         rope_scaling={"type": "xdrope", "alpha": 1000.0, "factor": 1.0,
                       "xdrope_section": [1, 1, 1, 1], "beta_fast": 32, "beta_slow": 1,
                       "mscale": 1.0, "mscale_all_dim": 1.0},
         vocab_size=BPE_VOCAB, org_vocab_size=BPE_VOCAB, pad_id=-1, bos_token_id=1,
         eos_token_id=2, eod_token_id=5, sep_token_id=4, image_token_id=120120,
         norm_type="rms", use_qk_norm=True, torch_dtype="bfloat16",
         vision_config=dict(hidden_size=16, intermediate_size=24, num_hidden_layers=3,
                            num_attention_heads=2, patch_size=7, out_hidden_size=16,
                            max_image_size=28, spatial_merge_size=2)),
    "smollm", True)


def _hunyuanvl_text_tensors(kw: dict) -> dict:
    return {"vit.perceive.after_rms.weight": (kw["hidden_size"],)}


RAW_MODELS["hunyuanvl-text"] = (_hunyuanvl_text_tensors, {"model_type": "hunyuan_vl"})


# MiniCPM-V 4.6's text half (MiniCPMV4_6ForConditionalGeneration, arch qwen35): the minicpmv46
# projector fixture's config (the qwen35-vl fixture's Qwen3.5 text model with one MTP layer)
# and checkpoint layout, with its text weights: the qwen35-vl fixture's text model under
# `model.language_model.` and one tensor of its MTP block under `mtp.` (BORROWED: stored
# once), one tensor of the final merger (`model.merger.`, which the class drops) and of the
# vision tower. The class drops the `mtp*` tensors but the Qwen3.5 conversion still counts
# the config's MTP layer.
FIXTURES["minicpmv46-text"] = (
    "MiniCPMV4_6ForConditionalGeneration", "minicpmv4_6",
    dict(downsample_mode="16x", drop_vision_last_layer=False, dtype="bfloat16", image_size=448,
         image_token_id=10, insert_layer_id=1, merge_kernel_size=[2, 2], merger_times=1,
         patch_size=7, video_token_id=11,
         text_config=dict(attention_bias=False, attention_dropout=0.0, bos_token_id=None,
                          eos_token_id=None, head_dim=16, hidden_act="silu", hidden_size=4,
                          initializer_range=0.02, intermediate_size=32,
                          layer_types=["linear_attention", "full_attention"],
                          linear_conv_kernel_dim=4, linear_key_head_dim=8,
                          linear_num_key_heads=2, linear_num_value_heads=4,
                          linear_value_head_dim=8, max_position_embeddings=4096,
                          model_type="qwen3_5_text", mtp_num_hidden_layers=1,
                          num_attention_heads=2, num_hidden_layers=2, num_key_value_heads=1,
                          pad_token_id=None, rms_norm_eps=1e-6,
                          rope_parameters={"mrope_interleaved": True, "mrope_section": [1, 1, 0],
                                           "partial_rotary_factor": 0.25,
                                           "rope_theta": 10000000.0, "rope_type": "default"},
                          tie_word_embeddings=True, use_cache=True, vocab_size=BPE_VOCAB),
         vision_config=dict(attention_dropout=0.0, hidden_act="gelu_pytorch_tanh",
                            hidden_size=16, image_size=28, insert_layer_id=1,
                            intermediate_size=24, layer_norm_eps=1e-6,
                            model_type="minicpmv4_6_vision", num_attention_heads=2,
                            num_channels=3, num_hidden_layers=3, patch_size=7,
                            window_kernel_size=[2, 2])),
    "smollm", True)

# The qwen35-vl fixture's text tensors and MTP input projection (the minicpmv46-text fixture
# borrows them).
_QWEN35_VL_TEXT = (
    ["model.language_model.embed_tokens.weight", "model.language_model.norm.weight"]
    + [f"model.language_model.layers.0.{t}" for t in (
        "input_layernorm.weight", "linear_attn.A_log", "linear_attn.conv1d.weight",
        "linear_attn.dt_bias", "linear_attn.in_proj_a.weight", "linear_attn.in_proj_b.weight",
        "linear_attn.in_proj_qkv.weight", "linear_attn.in_proj_z.weight",
        "linear_attn.norm.weight", "linear_attn.out_proj.weight", "mlp.down_proj.weight",
        "mlp.gate_proj.weight", "mlp.up_proj.weight", "post_attention_layernorm.weight")]
    + [f"model.language_model.layers.1.{t}.weight" for t in (
        "input_layernorm", "mlp.down_proj", "mlp.gate_proj", "mlp.up_proj",
        "post_attention_layernorm", "self_attn.k_norm", "self_attn.k_proj", "self_attn.o_proj",
        "self_attn.q_norm", "self_attn.q_proj", "self_attn.v_proj")]
    + ["mtp.fc.weight"])


def _minicpmv46_text_tensors(kw: dict) -> dict:
    return {"model.merger.mlp.0.pre_norm.weight": (64,),
            "model.vision_tower.post_layernorm.weight": (16,)}


RAW_MODELS["minicpmv46-text"] = (_minicpmv46_text_tensors, {"model_type": "minicpmv4_6"})
BORROWED["minicpmv46-text"] = {n: ("qwen35-vl", n) for n in _QWEN35_VL_TEXT}
BORROWED["hunyuanvl-text"] = {
    n: ("hunyuan-dense", n) for n in
    ["model.embed_tokens.weight", "model.norm.weight"]
    + [f"model.layers.{b}.{t}.weight" for b in range(2) for t in (
        "input_layernorm", "post_attention_layernorm", "mlp.down_proj", "mlp.gate_proj",
        "mlp.up_proj", "self_attn.k_proj", "self_attn.key_layernorm", "self_attn.o_proj",
        "self_attn.q_proj", "self_attn.query_layernorm", "self_attn.v_proj")]}


# dots3-note (Dots3NoteForCausalLM, written directly in the hub layout): DeepSeek-V3's MLA with
# two geometries (full layers with the DSA lightning indexer, sliding-window layers with their
# own head count, kv rank and head sizes, `swa_*` keys), a head-wise output gate
# (`self_attn.g_proj`), a norm on the rope key (`self_attn.k_rope_only_layernorm`), one dense
# block then routed (per-expert) and shared experts with the sigmoid selection bias; the MTP
# block is layer N (sliding attention) plus its own embedding `model.mtp.embed_tokens`. No
# model_type: transformers 5.24's dots3_note config class pops the swa_* keys the reference
# reads (variant fam-model-type). The embedding is GLM-4's draw (hidden 16, one added token:
# the `<|endofassistant|>` the class takes as eot), the MTP embedding its copy (stored once).
TOKENIZERS["smollm-dots3"] = ("llama-bpe", ["tokenizer.json"],
                              ["tokenizer_config.json", "special_tokens_map.json"])


def _dots3_tokenizer(out: Path) -> None:
    tc = json.loads((out / "tokenizer_config.json").read_text(encoding="utf-8"))
    tc["tokenizer_class"] = "PreTrainedTokenizerFast"
    (out / "tokenizer_config.json").write_text(json.dumps(tc, indent=2) + "\n", encoding="utf-8")
    tj = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    tj["added_tokens"].append({"id": BPE_VOCAB, "content": "<|endofassistant|>",
                               "single_word": False, "lstrip": False, "rstrip": False,
                               "normalized": False, "special": True})
    (out / "tokenizer.json").write_text(
        json.dumps(tj, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


DOTS3_TEXT = dict(
    hidden_size=16, intermediate_size=40, moe_intermediate_size=8,
    moe_shared_expert_intermediate_size=8, num_hidden_layers=3, num_attention_heads=2,
    num_key_value_heads=2, q_lora_rank=8, kv_lora_rank=8, qk_nope_head_dim=4,
    qk_rope_head_dim=4, v_head_dim=8, head_dim=8,
    swa_num_attention_heads=4, swa_num_key_value_heads=4, swa_q_lora_rank=8,
    swa_kv_lora_rank=12, swa_qk_nope_head_dim=8, swa_qk_rope_head_dim=4, swa_head_dim=12,
    swa_v_head_dim=4, layer_types=["full_attention", "sliding_attention", "sliding_attention"],
    use_dsa=True, use_sliding_window=True, sliding_window_size=32, index_n_heads=2,
    index_head_dim=8, index_topk=4, n_routed_experts=4, num_experts_per_tok=2,
    n_shared_experts=1, routed_scaling_factor=2.5, norm_topk_prob=True, scoring_func="sigmoid",
    topk_method="noaux_tc", n_group=1, topk_group=1, first_k_dense_replace=1,
    rope_theta=80000000.0, swa_rope_theta=50000.0, rms_norm_eps=1e-5,
    max_position_embeddings=4096, vocab_size=BPE_VOCAB + 1, apply_mla_qkv_lora_rescale=True,
    normalization="RMSNorm", final_norm="RMSNorm", k_rope_only_layernorm=True,
    attention_gate_type="headwise", swa_attention_gate_type="headwise",
    bos_token_id=1, eos_token_id=2)
FIXTURES["dots3"] = ("Dots3NoteForCausalLM", "dots3_note", DOTS3_TEXT, "smollm-dots3", True)


def _dots3_tensors(kw: dict) -> dict:
    """Dots3NoteForCausalLM's text tensors in the hub layout (per-expert experts, the router
    `mlp.gate` with its `e_score_correction_bias`); the MTP block is `model.layers.N` with
    `eh_proj`, `enorm`, `hnorm`, `shared_head.norm` and the embedding `model.mtp.embed_tokens`
    when `_mtp` is set (the default)."""
    e, n = kw["hidden_size"], kw["num_hidden_layers"]
    ff, mff, x = kw["intermediate_size"], kw["moe_intermediate_size"], kw["n_routed_experts"]
    sff = kw["moe_shared_expert_intermediate_size"] * kw["n_shared_experts"]
    ih, ihd = kw["index_n_heads"], kw["index_head_dim"]
    mtp = kw.get("_mtp", True)
    out = {"model.embed_tokens.weight": (kw["vocab_size"], e), "model.norm.weight": (e,)}
    for b in range(n + (1 if mtp else 0)):
        swa = b >= n or kw["layer_types"][b] == "sliding_attention"
        pre = "swa_" if swa else ""
        nh, ql, kvl = kw[pre + "num_attention_heads"], kw[pre + "q_lora_rank"], \
            kw[pre + "kv_lora_rank"]
        nope, rope, v = kw[pre + "qk_nope_head_dim"], kw[pre + "qk_rope_head_dim"], \
            kw[pre + "v_head_dim"]
        p = f"model.layers.{b}."
        a = p + "self_attn."
        out.update({p + "input_layernorm.weight": (e,), p + "post_attention_layernorm.weight": (e,),
                    a + "q_a_proj.weight": (ql, e), a + "q_a_layernorm.weight": (ql,),
                    a + "q_b_proj.weight": (nh * (nope + rope), ql),
                    a + "kv_a_proj_with_mqa.weight": (kvl + rope, e),
                    a + "kv_a_layernorm.weight": (kvl,),
                    a + "kv_b_proj.weight": (nh * (nope + v), kvl),
                    a + "k_rope_only_layernorm.weight": (rope,),
                    a + "g_proj.weight": (nh, e), a + "o_proj.weight": (e, nh * v)})
        if not swa:
            out.update({a + "indexer.wq_b.weight": (ih * ihd, ql), a + "indexer.wk.weight": (ihd, e),
                        a + "indexer.k_norm.weight": (ihd,), a + "indexer.k_norm.bias": (ihd,),
                        a + "indexer.weights_proj.weight": (ih, e)})
        if b >= n:
            out.update({p + "eh_proj.weight": (e, 2 * e), p + "enorm.weight": (e,),
                        p + "hnorm.weight": (e,), p + "shared_head.norm.weight": (e,)})
        if b < kw["first_k_dense_replace"]:
            out.update({p + "mlp.gate_proj.weight": (ff, e), p + "mlp.up_proj.weight": (ff, e),
                        p + "mlp.down_proj.weight": (e, ff)})
            continue
        out.update({p + "mlp.gate.weight": (x, e), p + "mlp.gate.e_score_correction_bias": (x,),
                    p + "mlp.shared_experts.gate_proj.weight": (sff, e),
                    p + "mlp.shared_experts.up_proj.weight": (sff, e),
                    p + "mlp.shared_experts.down_proj.weight": (e, sff)})
        for i in range(x):
            out.update({p + f"mlp.experts.{i}.gate_proj.weight": (mff, e),
                        p + f"mlp.experts.{i}.up_proj.weight": (mff, e),
                        p + f"mlp.experts.{i}.down_proj.weight": (e, mff)})
    return out


RAW_MODELS["dots3"] = (_dots3_tensors, {})
BORROWED["dots3"] = {"model.mtp.embed_tokens.weight": ("glm4", "model.embed_tokens.weight")}
RAW_FIRST["deepseekocr"] = ["model.embed_tokens.weight"]
RAW_FIRST["unlimitedocr"] = RAW_FIRST["deepseekocr"]
RAW_FIRST["youtuvl-text"] = ["model.embed_tokens.weight"]
RAW_FIRST["paddleocr-text"] = ["model.embed_tokens.weight"]
RAW_FIRST["sarashina2-text"] = ["llm.model.embed_tokens.weight"]



# Kimi-K3 (KimiK3ForConditionalGeneration, moonshotai's remote code, written directly in the
# published layout, see RAW_MODELS): the Kimi Linear text model under `language_model.`
# (its text_config names KimiLinearForCausalLM; the reference routes on the root class) with
# K3's additions: cross-layer attention residuals (`<x>_res_norm` / `<x>_res_proj` pairs per
# block and one for the output, fused into their product), a full-rank KDA gate and an MLA
# output gate (both `self_attn.g_proj`), a latent MoE (routed experts 6 wide between
# `routed_expert_down_proj` / `routed_expert_up_proj`, `routed_expert_norm`), the situ
# activation. The vision tower and projector are dropped. Its tokenizer_config.json has no
# chat template, so the reference writes the one it bundles; config eos 5 replaces the
# tokenizer's.
_K3_TEXT = dict(
    architectures=["KimiLinearForCausalLM"], model_type="kimi_linear",
    hidden_size=8, intermediate_size=40, moe_intermediate_size=24, num_hidden_layers=3,
    num_attention_heads=2, num_key_value_heads=2, kv_lora_rank=32, q_lora_rank=None,
    qk_nope_head_dim=16, qk_rope_head_dim=8, v_head_dim=12, num_experts=4,
    num_experts_per_token=2, num_shared_experts=1, first_k_dense_replace=1,
    moe_layer_freq=1, moe_renormalize=True, moe_router_activation_func="sigmoid",
    routed_scaling_factor=2.446, num_expert_group=1, topk_group=1, use_grouped_topk=True,
    mla_use_nope=True, routed_expert_hidden_size=6, hidden_act="situ",
    activation_situ_beta=1.5, activation_situ_linear_beta=0.25, attn_res_block_size=2,
    model_max_length=4096, rms_norm_eps=1e-5, rope_theta=10000.0, rope_scaling=None,
    vocab_size=BPE_VOCAB, bos_token_id=1, eos_token_id=5, tie_word_embeddings=True,
    linear_attn_config={"full_attn_layers": [2], "kda_layers": [1, 3], "head_dim": 6,
                        "num_heads": 2, "short_conv_kernel_size": 4,
                        "gate_lower_bound": -5.0})
FIXTURES["kimik3"] = (
    "KimiK3ForConditionalGeneration", "kimi_k3",
    dict(text_config=_K3_TEXT, vision_config=dict(model_type="kimi_k3_vision"),
         bos_token_id=1, eos_token_id=5),
    "smollm-notemplate", True)


def _kimi_k3_tensors(kw: dict) -> dict:
    """Kimi-K3's checkpoint layout (see the kimik3 fixture)."""
    t = kw["text_config"]
    e, i, v = t["hidden_size"], t["intermediate_size"], t["vocab_size"]
    nh, nope, rope, vd = (t["num_attention_heads"], t["qk_nope_head_dim"],
                          t["qk_rope_head_dim"], t["v_head_dim"])
    kvr, ff, x = t["kv_lora_rank"], t["moe_intermediate_size"], t["num_experts"]
    lat = t.get("routed_expert_hidden_size") or e
    la = t["linear_attn_config"]
    kh, kd, kc = la["num_heads"], la["head_dim"], la["short_conv_kernel_size"]
    qkv = kh * kd
    sh = ff * t["num_shared_experts"]
    r = "language_model.model."
    out = {r + "embed_tokens.weight": (v, e), r + "norm.weight": (e,),
           r + "output_attn_res_norm.weight": (e,), r + "output_attn_res_proj.weight": (1, e),
           "vision_tower.patch_embed.proj.weight": (8, 3, 2, 2),
           "mm_projector.proj.0.weight": (e, 32)}
    for b in range(t["num_hidden_layers"]):
        p = f"{r}layers.{b}."
        a = p + "self_attn."
        out.update({p + "input_layernorm.weight": (e,),
                    p + "post_attention_layernorm.weight": (e,),
                    p + "self_attention_res_norm.weight": (e,),
                    p + "self_attention_res_proj.weight": (1, e),
                    p + "mlp_res_norm.weight": (e,), p + "mlp_res_proj.weight": (1, e)})
        if b + 1 in la["full_attn_layers"]:
            out.update({a + "q_proj.weight": (nh * (nope + rope), e),
                        a + "kv_a_proj_with_mqa.weight": (kvr + rope, e),
                        a + "kv_a_layernorm.weight": (kvr,),
                        a + "kv_b_proj.weight": (nh * (nope + vd), kvr),
                        a + "g_proj.weight": (nh * vd, e),
                        a + "o_proj.weight": (e, nh * vd)})
        else:
            out.update({a + n + "_proj.weight": (qkv, e) for n in "qkv"})
            out.update({a + n + "_conv1d.weight": (qkv, 1, kc) for n in "qkv"})
            out.update({a + "f_a_proj.weight": (kd, e), a + "f_b_proj.weight": (qkv, kd),
                        a + "dt_bias": (qkv,), a + "A_log": (1, 1, kh, 1),
                        a + "b_proj.weight": (kh, e), a + "g_proj.weight": (qkv, e),
                        a + "o_norm.weight": (kd,), a + "o_proj.weight": (e, qkv)})
        if b < t["first_k_dense_replace"]:
            out.update({p + "mlp.gate_proj.weight": (i, e), p + "mlp.up_proj.weight": (i, e),
                        p + "mlp.down_proj.weight": (e, i)})
            continue
        m = p + "block_sparse_moe."
        out.update({m + "gate.weight": (x, e), m + "gate.e_score_correction_bias": (x,),
                    m + "shared_experts.gate_proj.weight": (sh, e),
                    m + "shared_experts.up_proj.weight": (sh, e),
                    m + "shared_experts.down_proj.weight": (e, sh),
                    m + "routed_expert_down_proj.weight": (lat, e),
                    m + "routed_expert_up_proj.weight": (e, lat),
                    m + "routed_expert_norm.weight": (lat,)})
        for j in range(x):
            out.update({m + f"experts.{j}.w1.weight": (ff, lat),
                        m + f"experts.{j}.w2.weight": (lat, ff),
                        m + f"experts.{j}.w3.weight": (ff, lat)})
    return out


RAW_MODELS["kimik3"] = (_kimi_k3_tensors, {"model_type": "kimi_k3"})
RAW_FIRST["kimik3"] = ["language_model.model.embed_tokens.weight"]



# Nemotron-H Puzzle (NemotronHPuzzleForCausalLM, remote code: config.json read as written,
# model_type nemotron_h_puzzle) in the published layout: the trunk under `model.` (not
# `backbone.`), the router bias spelled `e_score_correction_bias`, a per-block MoE shape in
# `block_configs` (block_type, moe_intermediate_size, num_experts_per_tok), which is also the
# block pattern, a latent MoE (fc1/fc2_latent_proj), and the MTP head (`mtp.*`, dropped by the
# converter). Nemotron-H's sizes; the 49152-row embedding is the nemotronh fixture's (BORROWED).
NEMOTRON_H_PUZZLE_BLOCKS = [
    {"block_type": "mamba"},
    {"block_type": "moe", "moe_intermediate_size": 24, "num_experts_per_tok": 2},
    {"block_type": "attention"},
    {"block_type": "moe", "moe_intermediate_size": 16, "num_experts_per_tok": 1},
    {"block_type": "mlp"},
]
FIXTURES["nemotronhpuzzle"] = (
    "NemotronHPuzzleForCausalLM", "nemotron_h_puzzle",
    dict(NEMOTRON_H, vocab_size=BPE_VOCAB, num_hidden_layers=len(NEMOTRON_H_PUZZLE_BLOCKS),
         block_configs=NEMOTRON_H_PUZZLE_BLOCKS, n_routed_experts=4, n_shared_experts=1,
         moe_shared_expert_intermediate_size=16, moe_latent_size=8, norm_topk_prob=True,
         routed_scaling_factor=2.5, n_group=1, topk_group=1, layer_norm_epsilon=1e-5,
         mamba_hidden_act="silu", mlp_hidden_act="relu2", num_nextn_predict_layers=1,
         mtp_block_configs=[{"block_type": "attention"},
                            {"block_type": "moe", "moe_intermediate_size": 24,
                             "num_experts_per_tok": 2}],
         bos_token_id=1, eos_token_id=2),
    "smollm", True)


def _nemotron_h_puzzle_tensors(kw: dict) -> dict:
    """NemotronHPuzzleForCausalLM's published tensor names and shapes."""
    e, v, hd = kw["hidden_size"], kw["vocab_size"], kw["head_dim"]
    nh, nkv, ff = kw["num_attention_heads"], kw["num_key_value_heads"], kw["intermediate_size"]
    mh, md, ng, st, k = (kw["mamba_num_heads"], kw["mamba_head_dim"], kw["n_groups"],
                         kw["ssm_state_size"], kw["conv_kernel"])
    x, sh, lat = kw["n_routed_experts"], kw["moe_shared_expert_intermediate_size"], \
        kw["moe_latent_size"]
    di = mh * md
    conv = di + 2 * ng * st
    out = {"model.embeddings.weight": (v, e), "model.norm_f.weight": (e,),
           "mtp.layers.0.enorm.weight": (e,), "mtp.layers.0.eh_proj.weight": (e, 2 * e),
           "mtp.layers.1.final_layernorm.weight": (e,)}
    for b, bc in enumerate(kw["block_configs"]):
        p = f"model.layers.{b}."
        m = p + "mixer."
        out[p + "norm.weight"] = (e,)
        t = bc["block_type"]
        if t == "mamba":
            out.update({m + "in_proj.weight": (2 * di + 2 * ng * st + mh, e),
                        m + "conv1d.weight": (conv, 1, k), m + "conv1d.bias": (conv,),
                        m + "dt_bias": (mh,), m + "A_log": (mh,), m + "D": (mh,),
                        m + "norm.weight": (di,), m + "out_proj.weight": (e, di)})
        elif t == "attention":
            out.update({m + "q_proj.weight": (nh * hd, e), m + "k_proj.weight": (nkv * hd, e),
                        m + "v_proj.weight": (nkv * hd, e), m + "o_proj.weight": (e, nh * hd)})
        elif t == "mlp":
            out.update({m + "up_proj.weight": (ff, e), m + "down_proj.weight": (e, ff)})
        else:
            mf = bc["moe_intermediate_size"]
            out.update({m + "gate.weight": (x, e), m + "gate.e_score_correction_bias": (x,),
                        m + "shared_experts.up_proj.weight": (sh, e),
                        m + "shared_experts.down_proj.weight": (e, sh),
                        m + "fc1_latent_proj.weight": (lat, e),
                        m + "fc2_latent_proj.weight": (e, lat)})
            for j in range(x):
                out.update({m + f"experts.{j}.up_proj.weight": (mf, lat),
                            m + f"experts.{j}.down_proj.weight": (lat, mf)})
    return out


RAW_MODELS["nemotronhpuzzle"] = (_nemotron_h_puzzle_tensors, {"model_type": "nemotron_h_puzzle"})
BORROWED["nemotronhpuzzle"] = {"model.embeddings.weight": ("nemotronh", "backbone.embeddings.weight")}



# Granite Switch (GraniteSwitchForCausalLM, remote code: config.json read as written): a dense
# all-attention Granite whose fused qkv, o_proj and shared-MLP projections each carry
# `num_adapters` stacked LoRA adapters (`base_layer.weight`, `lora_A[_slices.N]` of shape
# [adapters, 1, rank, in], `lora_B[_slices.N]` of shape [adapters, 1, out, rank]), the
# weightless switch module (`model.switch.*`, dropped) and a block count one below
# num_hidden_layers. The SentencePiece fixture's vocabulary.
FIXTURES["graniteswitch"] = (
    "GraniteSwitchForCausalLM", "granite_switch",
    dict(hidden_size=16, intermediate_size=24, shared_intermediate_size=24,
         num_hidden_layers=3, num_attention_heads=4, num_key_value_heads=2,
         max_position_embeddings=4096, vocab_size=SPM_VOCAB, rms_norm_eps=1e-5,
         rope_theta=10000.0, num_local_experts=0, num_experts_per_tok=2,
         embedding_multiplier=12.0, attention_multiplier=0.25, residual_multiplier=0.5,
         logits_scaling=4.0, num_adapters=3, max_lora_rank=4,
         adapter_token_ids=[990, 991, 992], adapter_substitute_token_ids=[5, 6, 7],
         control_token_gain=12.5, bos_token_id=1, eos_token_id=2),
    "spm", True)


def _granite_switch_tensors(kw: dict) -> dict:
    """GraniteSwitchForCausalLM's tensor names and shapes."""
    e, v, ff = kw["hidden_size"], kw["vocab_size"], kw["shared_intermediate_size"]
    nh, nkv = kw["num_attention_heads"], kw["num_key_value_heads"]
    na, r = kw["num_adapters"], kw["max_lora_rank"]
    hd = e // nh
    q, kv = nh * hd, nkv * hd
    out = {"model.embed_tokens.weight": (v, e), "model.norm.weight": (e,),
           "model.switch.router.weight": (na, e)}
    for b in range(kw["num_hidden_layers"] - 1):
        p = f"model.layers.{b}."
        a, m = p + "self_attn.", p + "shared_mlp."
        out.update({p + "input_layernorm.weight": (e,), p + "post_attention_layernorm.weight": (e,),
                    a + "qkv_proj.base_layer.weight": (q + 2 * kv, e),
                    a + "o_proj.base_layer.weight": (e, q),
                    a + "o_proj.lora_A": (na, 1, r, q), a + "o_proj.lora_B": (na, 1, e, r),
                    m + "input_linear.base_layer.weight": (2 * ff, e),
                    m + "output_linear.base_layer.weight": (e, ff),
                    m + "output_linear.lora_A": (na, 1, r, ff),
                    m + "output_linear.lora_B": (na, 1, e, r)})
        for i, rows in enumerate((q, kv, kv)):
            out[a + f"qkv_proj.lora_A_slices.{i}"] = (na, 1, r, e)
            out[a + f"qkv_proj.lora_B_slices.{i}"] = (na, 1, rows, r)
        for i in range(2):
            out[m + f"input_linear.lora_A_slices.{i}"] = (na, 1, r, e)
            out[m + f"input_linear.lora_B_slices.{i}"] = (na, 1, ff, r)
    return out


RAW_MODELS["graniteswitch"] = (_granite_switch_tensors, {"model_type": "granite_switch"})
RAW_FIRST["graniteswitch"] = ["model.embed_tokens.weight"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llama-cpp", type=Path, required=True, help="the pinned llama.cpp source tree")
    ap.add_argument("--quantize", type=Path, help="llama-quantize binary (Q4_K_M variant)")
    ap.add_argument("--only", nargs="*", help="fixtures to (re)generate (default: all)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/ggufkit-arch-fixtures"))
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--quantize-only", action="store_true",
                    help="only add the quant-Q4_K_M variant to the committed fixtures (needs --quantize)")
    ap.add_argument("--variants", action="store_true",
                    help="config variants of the committed fixtures (testdata/golden/variants)")
    ap.add_argument("--variant", nargs="*", help="with --variants: only these variant names")
    ap.add_argument("--golden-only", action="store_true",
                    help="remake only the golden data, from the committed fixtures' files")
    a = ap.parse_args()
    golden_pack.restore()  # the golden files are read and written loose; share_tensors.py packs them
    if a.variants:
        run_config_variants(a.only or VARIANT_FIXTURES, a.llama_cpp, a.work / "variants",
                            a.variant)
        return 0
    names = a.only or list(FIXTURES)
    quantize = a.quantize if a.quantize and a.quantize.is_file() else None
    if quantize is None:
        print("note: no llama-quantize, the quant-Q4_K_M variant is skipped", file=sys.stderr)
    if a.quantize_only:
        assert quantize is not None, "--quantize-only needs --quantize"
        for name in names:
            if not _transformers_ok(name):
                continue
            work = a.work / name
            if work.exists():
                shutil.rmtree(work)
            work.mkdir(parents=True)
            add_quantized(name, a.llama_cpp, quantize, work)
        return 0
    for name in names:
        if not _transformers_ok(name):
            continue
        print(f"== {name}", file=sys.stderr)
        work = a.work / name
        if work.exists():
            shutil.rmtree(work)
        model_dir = work / name  # the directory name is general.name
        model_dir.mkdir(parents=True)
        if a.golden_only:
            remake_golden(name, a.llama_cpp, quantize, work)
            continue
        build_model(name, model_dir, a.seed)
        add_tokenizer(FIXTURES[name][3], model_dir)
        if name in EXTRA_FILES:
            EXTRA_FILES[name](model_dir)
        run_variants(name, model_dir, a.llama_cpp, quantize, TESTDATA / "golden" / name, work)
        store_fixture(name, model_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
