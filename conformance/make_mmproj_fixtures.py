#!/usr/bin/env python3
"""Tiny vision-language checkpoints and the reference's `--mmproj` (and text) output for them.

For every fixture in FIXTURES this script

1. builds the composite model with transformers from a small config (vision tower: image
   28 px, patch 7 or 14, hidden 16-32, one layer; the text half as small as the family
   allows), overwrites every parameter with numpy draws exactly as make_fixtures.py does
   (sorted parameter names; matrices N(0, 0.02), norm scales 1 + 0.05 N), casts to bf16 and
   saves it with `save_pretrained`; writes a small preprocessor_config.json (image mean/std);
2. adds a tokenizer only where a conversion reads one (the text half of a family ggufkit
   converts, Pixtral's `[IMG_BREAK]` lookup): files of a fixture already in testdata/,
   referenced through shared-files.txt, never copied;
3. runs llama.cpp's convert_hf_to_gguf.py `--mmproj` for --outtype f32, f16, q8_0 and auto
   (bf16 for these bf16 checkpoints), once more without --outfile (the default name, recorded in status.json), and, for
   families whose text half ggufkit converts, the plain text conversions and llama-quantize
   Q4_K_M of the f32 text file;
4. writes testdata/hf/<fixture>/ and testdata/golden/<fixture>/ (status.json, variants.json,
   commands.txt and one manifest per variant, as make_fixtures.py).

Usage (see README.md):
    make_mmproj_fixtures.py --llama-cpp DIR [--quantize BIN] [--only NAME ...] [--work DIR]
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_pack  # noqa: E402
import make_fixtures as mf  # noqa: E402  (sha256, the in-process reference, manifests)

TESTDATA = mf.TESTDATA

PRE = {"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5]}
CLIP_PRE = {"image_mean": [0.48145466, 0.4578275, 0.40821073],
            "image_std": [0.26862954, 0.26130258, 0.27577711]}


def siglip(**kw):
    d = dict(model_type="siglip_vision_model", hidden_size=16, intermediate_size=24,
             num_hidden_layers=1, num_attention_heads=2, image_size=28, patch_size=7,
             vision_use_head=False)
    d.update(kw)
    return d


def gemma3_text(**kw):
    d = dict(model_type="gemma3_text", hidden_size=16, intermediate_size=24,
             num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1, head_dim=8,
             vocab_size=1000, layer_types=["full_attention"], sliding_window=64,
             max_position_embeddings=256, query_pre_attn_scalar=8)
    d.update(kw)
    return d


def llama_text(**kw):
    d = dict(model_type="llama", hidden_size=16, intermediate_size=24, num_hidden_layers=1,
             num_attention_heads=2, num_key_value_heads=1, vocab_size=32,
             max_position_embeddings=256)
    d.update(kw)
    return d


def pixtral(**kw):
    # three blocks: the projector's `linear_1` / `linear_2` map through the block table
    d = dict(model_type="pixtral", hidden_size=16, intermediate_size=24, num_hidden_layers=3,
             num_attention_heads=2, head_dim=8, image_size=28, patch_size=7)
    d.update(kw)
    return d


def qwen_text(model_type, **kw):
    # the text half is converted too: the shared SentencePiece vocabulary (1000 pieces),
    # tied embeddings (one 1000 x 16 matrix)
    d = dict(model_type=model_type, hidden_size=16, intermediate_size=24, num_hidden_layers=1,
             num_attention_heads=2, num_key_value_heads=1, vocab_size=SPM_VOCAB,
             max_position_embeddings=256, tie_word_embeddings=True)
    d.update(kw)
    return d


# Qwen3.5's text model as the qwen35 text fixture has it (make_fixtures.py QWEN_LINEAR):
# one linear-attention and one full-attention layer, partial rotary with interleaved mrope.
QWEN35_TEXT = dict(hidden_size=4, num_hidden_layers=2, num_attention_heads=2,
                   num_key_value_heads=1, head_dim=16, linear_conv_kernel_dim=4,
                   linear_key_head_dim=8, linear_value_head_dim=8, linear_num_key_heads=2,
                   linear_num_value_heads=4, max_position_embeddings=4096,
                   layer_types=["linear_attention", "full_attention"], vocab_size=49152,
                   tie_word_embeddings=True,
                   rope_parameters={"rope_type": "default", "rope_theta": 10000000.0,
                                    "partial_rotary_factor": 0.25,
                                    "mrope_section": [1, 1, 0], "mrope_interleaved": True})


# The merger's `mlp.0` / `mlp.2` (Qwen2-VL, Qwen2.5-VL) and the audio tower's `conv1` /
# `conv2` (Qwen2-Audio) map through the block table: those towers have three blocks.

# Pixtral's converter looks up `[IMG_BREAK]` in tokenizer_config.json: a file of its own.
IMG_BREAK = {"added_tokens_decoder": {"12": {
    "content": "[IMG_BREAK]", "lstrip": False, "normalized": False, "rstrip": False,
    "single_word": False, "special": True}}}

def _glm_tokenizer_config() -> dict:
    """The glm4 fixture's tokenizer_config.json naming the fast tokenizer class, as GLM's
    released checkpoints do: transformers has no tokenizer registered for `glm_ocr`, so the
    class named here is the one built, and a GPT2Tokenizer (the glm4 fixture's) would drop
    tokenizer.json's added `<|user|>`, which GLM's vocabulary step looks up."""
    from fixture_io import fixture_file
    tc = json.loads(fixture_file(TESTDATA / "hf" / "glm4", "tokenizer_config.json").read_text())
    tc["tokenizer_class"] = "PreTrainedTokenizerFast"
    return tc


# Small files a fixture has of its own (written as JSON).
OWN_FILES = {
    "glmocr": {"tokenizer_config.json": _glm_tokenizer_config()},
    "llava-pixtral": {"tokenizer_config.json": IMG_BREAK},
    "mistral3-vl": {"tokenizer_config.json": IMG_BREAK},
}

# The shared SentencePiece tokenizer (testdata/tokenizers/spm, 1000 pieces) the text halves
# of the fixtures below read; `tokenizer_config.json` / `special_tokens_map.json` are
# smollm3's (the same vocabulary). Pixtral fixtures keep their own tokenizer_config.json.
SPM_VOCAB = 1000
SPM = [("tokenizer.model", "../../tokenizers/spm"), ("tokenizer.json", "../../tokenizers/spm"),
       ("tokenizer_config.json", "../smollm3"), ("special_tokens_map.json", "../smollm3")]
SPM_NO_CONFIG = SPM[:2]
# The same files named where share_tensors.py stores smollm3's small files once (what a
# fixture's shared-files.txt names after it ran).
SPM_STORED = SPM_NO_CONFIG + [
    ("tokenizer_config.json", "../../tokenizers/shared/960f96ee98f61930"),
    ("special_tokens_map.json", "../../tokenizers/shared/6fa06efa2785e450")]

# The SmolLM2 BPE tokenizer (testdata/tokenizers/smollm, 49152 tokens, pre-tokenizer hash
# `smollm`) with qwen3moe's tokenizer_config.json / special_tokens_map.json.
BPE_VOCAB = 49152
BPE = [("tokenizer.json", "../../tokenizers/smollm"), ("tokenizer_config.json", "../qwen3moe"),
       ("special_tokens_map.json", "../qwen3moe")]

# The same files named where share_tensors.py stores qwen3moe's small files once.
BPE_STORED = BPE[:1] + [
    ("tokenizer_config.json", "../../tokenizers/shared/3f1854467a08fcad"),
    ("special_tokens_map.json", "../../tokenizers/shared/2b7379f3ae813529")]

IMAGENET_PRE = {"image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225],
                "crop_size": 28, "do_center_crop": True, "do_normalize": True,
                "do_resize": True, "image_processor_type": "CLIPImageProcessor", "size": 28}

QWEN_PRE = {"image_mean": [0.48145466, 0.4578275, 0.40821073],
            "image_std": [0.26862954, 0.26130258, 0.27577711]}

# name -> (class, model_type, config kwargs, preprocessor config, tokenizer source fixture or
#          None, the tokenizer files taken from it, text variants too)
FIXTURES = {
    "gemma3-vl": ("Gemma3ForConditionalGeneration", "gemma3",
                  dict(text_config=gemma3_text(), vision_config=siglip(),
                       mm_tokens_per_image=4, image_token_index=5, boi_token_index=6,
                       eoi_token_index=7),
                  {**PRE, "image_seq_length": 4}, "gemma3",
                  ["tokenizer.model", "tokenizer.json", "tokenizer_config.json",
                   "special_tokens_map.json"], True),
    "llava-pixtral": ("LlavaForConditionalGeneration", "llava",
                      dict(text_config=llama_text(vocab_size=SPM_VOCAB,
                                                  tie_word_embeddings=True),
                           vision_config=pixtral(), image_token_index=10,
                           projector_hidden_act="gelu", tie_word_embeddings=True),
                      PRE, None, SPM_NO_CONFIG, True),
    "mistral3-vl": ("Mistral3ForConditionalGeneration", "mistral3",
                    dict(text_config=llama_text(model_type="mistral"), vision_config=pixtral(),
                         image_token_index=10, spatial_merge_size=2),
                    PRE, None, [], False),
    "smolvlm": ("SmolVLMForConditionalGeneration", "smolvlm",
                dict(text_config=llama_text(),
                     vision_config=dict(model_type="smolvlm_vision", hidden_size=16,
                                        intermediate_size=24, num_hidden_layers=1,
                                        num_attention_heads=2, image_size=28, patch_size=7),
                     scale_factor=2, image_token_id=10),
                {**PRE, "size": {"longest_edge": 56}, "max_image_size": {"longest_edge": 28}},
                None, [], True),
    "idefics3": ("Idefics3ForConditionalGeneration", "idefics3",
                 dict(text_config=llama_text(),
                      vision_config=dict(model_type="idefics3_vision", hidden_size=16,
                                         intermediate_size=24, num_hidden_layers=1,
                                         num_attention_heads=2, image_size=28, patch_size=7),
                      scale_factor=2, image_token_id=10),
                 {**PRE, "size": {"longest_edge": 56}, "max_image_size": {"longest_edge": 28}},
                 None, [], True),
    # The published SmolVLM / SmolVLM2 config shape: `text_config.architectures` names
    # VLlama3ForCausalLM, which the reference converts as llama (the fixtures above lack the
    # key, and the reference refuses their text half). Text sizes off the multiples of 8.
    "smolvlm2-hub": ("SmolVLMForConditionalGeneration", "smolvlm",
                     dict(text_config=llama_text(vocab_size=SPM_VOCAB, hidden_size=24,
                                                 intermediate_size=40, num_attention_heads=3,
                                                 architectures=["VLlama3ForCausalLM"]),
                          vision_config=dict(model_type="smolvlm_vision", hidden_size=16,
                                             intermediate_size=24, num_hidden_layers=1,
                                             num_attention_heads=2, image_size=28,
                                             patch_size=7),
                          scale_factor=2, image_token_id=10),
                     {**PRE, "size": {"longest_edge": 56}, "max_image_size": {"longest_edge": 28}},
                     None, SPM, True),
    "idefics3-hub": ("Idefics3ForConditionalGeneration", "idefics3",
                     dict(text_config=llama_text(vocab_size=SPM_VOCAB, hidden_size=24,
                                                 intermediate_size=40, num_attention_heads=3,
                                                 architectures=["VLlama3ForCausalLM"]),
                          vision_config=dict(model_type="idefics3_vision", hidden_size=16,
                                             intermediate_size=24, num_hidden_layers=1,
                                             num_attention_heads=2, image_size=28,
                                             patch_size=7),
                          scale_factor=2, image_token_id=10),
                     {**PRE, "size": {"longest_edge": 56}, "max_image_size": {"longest_edge": 28}},
                     None, SPM, True),
    "qwen2vl": ("Qwen2VLForConditionalGeneration", "qwen2_vl",
                dict(text_config=qwen_text("qwen2_vl_text", rope_parameters={
                         "rope_type": "default", "mrope_section": [1, 1, 2],
                         "rope_theta": 10000.0}),
                     vision_config=dict(depth=3, embed_dim=8, hidden_size=16, num_heads=2,
                                        mlp_ratio=2, patch_size=7, spatial_merge_size=2,
                                        temporal_patch_size=2),
                     image_token_id=10, video_token_id=11, vision_start_token_id=12,
                     vision_end_token_id=13, tie_word_embeddings=True),
                QWEN_PRE, None, SPM, True),
    # The base model class (no LM head): the reference registers it for the text model and
    # the projector.
    "qwen2vl-model": ("Qwen2VLModel", "qwen2_vl",
                dict(text_config=qwen_text("qwen2_vl_text", rope_parameters={
                         "rope_type": "default", "mrope_section": [1, 1, 2],
                         "rope_theta": 10000.0}),
                     vision_config=dict(depth=3, embed_dim=8, hidden_size=16, num_heads=2,
                                        mlp_ratio=2, patch_size=7, spatial_merge_size=2,
                                        temporal_patch_size=2),
                     image_token_id=10, video_token_id=11, vision_start_token_id=12,
                     vision_end_token_id=13, tie_word_embeddings=True),
                QWEN_PRE, None, SPM, True),
    "qwen25vl": ("Qwen2_5_VLForConditionalGeneration", "qwen2_5_vl",
                 dict(text_config=qwen_text("qwen2_5_vl_text", rope_parameters={
                          "rope_type": "default", "mrope_section": [1, 1, 2],
                          "rope_theta": 10000.0}),
                      vision_config=dict(depth=3, hidden_size=8, intermediate_size=12,
                                         num_heads=2, out_hidden_size=16, patch_size=7,
                                         spatial_merge_size=2, temporal_patch_size=2,
                                         window_size=28, fullatt_block_indexes=[2]),
                      image_token_id=10, video_token_id=11, vision_start_token_id=12,
                      vision_end_token_id=13, tie_word_embeddings=True),
                 QWEN_PRE, None, SPM, True),
    "qwen3vl": ("Qwen3VLForConditionalGeneration", "qwen3_vl",
                dict(text_config=qwen_text("qwen3_vl_text", head_dim=8, rope_parameters={
                         "rope_type": "default", "mrope_section": [1, 1, 2],
                         "mrope_interleaved": True, "rope_theta": 10000.0}),
                     vision_config=dict(depth=2, hidden_size=8, intermediate_size=12,
                                        num_heads=2, out_hidden_size=16, patch_size=7,
                                        spatial_merge_size=2, temporal_patch_size=2,
                                        num_position_embeddings=16,
                                        deepstack_visual_indexes=[0]),
                     image_token_id=10, video_token_id=11, vision_start_token_id=12,
                     vision_end_token_id=13, tie_word_embeddings=True),
                QWEN_PRE, None, SPM, True),
    "qwen3vlmoe": ("Qwen3VLMoeForConditionalGeneration", "qwen3_vl_moe",
                   # Qwen3MoeModel reads only a BPE tokenizer.json whose pre-tokenizer it
                   # recognizes: qwen3moe's (SmolLM2's, 49152 tokens). Tied at width 16, the
                   # embedding is the first draw, the same bytes as the text fixtures'
                   # (cohere, qwen2moe, olmoe: stored once by share_tensors.py). Two layers,
                   # three experts, two used; the experts are stored in the hub layout
                   # (TRANSPOSE below).
                   dict(text_config=qwen_text("qwen3_vl_moe_text", head_dim=8, num_experts=3,
                                              num_hidden_layers=2, vocab_size=BPE_VOCAB,
                                              num_experts_per_tok=2, moe_intermediate_size=12,
                                              rope_parameters={
                                                  "rope_type": "default",
                                                  "mrope_section": [1, 1, 2],
                                                  "mrope_interleaved": True,
                                                  "rope_theta": 10000.0}),
                        vision_config=dict(depth=1, hidden_size=8, intermediate_size=12,
                                           num_heads=2, out_hidden_size=16, patch_size=7,
                                           spatial_merge_size=2, temporal_patch_size=2,
                                           num_position_embeddings=16,
                                           deepstack_visual_indexes=[0]),
                        image_token_id=10, video_token_id=11, vision_start_token_id=12,
                        vision_end_token_id=13, tie_word_embeddings=True),
                   QWEN_PRE, None, BPE, True),
    # Qwen3.5 (dense and MoE): the Qwen3-VL tower without deepstack mergers before a
    # Qwen3.5 text model (linear-attention and full-attention layers, qwen35's sizes). The
    # text half reads the BPE tokenizer: tied at width 4, the embedding is the first draw,
    # the same bytes as the qwen35 fixture's (stored once by share_tensors.py). The MoE
    # experts stay in transformers' fused layout, as in the qwen35moe fixture.
    "qwen35-vl": ("Qwen3_5ForConditionalGeneration", "qwen3_5",
                  dict(text_config=dict(QWEN35_TEXT, model_type="qwen3_5_text",
                                        intermediate_size=32, mtp_num_hidden_layers=1),
                       vision_config=dict(depth=2, hidden_size=8, intermediate_size=12,
                                          num_heads=2, out_hidden_size=4, patch_size=7,
                                          spatial_merge_size=2, temporal_patch_size=2,
                                          num_position_embeddings=16),
                       image_token_id=10, video_token_id=11, vision_start_token_id=12,
                       vision_end_token_id=13, tie_word_embeddings=True),
                  QWEN_PRE, None, BPE, True),
    "qwen35moe-vl": ("Qwen3_5MoeForConditionalGeneration", "qwen3_5_moe",
                     dict(text_config=dict(QWEN35_TEXT, model_type="qwen3_5_moe_text",
                                           num_experts=3, num_experts_per_tok=2,
                                           moe_intermediate_size=12,
                                           shared_expert_intermediate_size=8,
                                           mtp_num_hidden_layers=1),
                          vision_config=dict(depth=1, hidden_size=8, intermediate_size=12,
                                             num_heads=2, out_hidden_size=4, patch_size=7,
                                             spatial_merge_size=2, temporal_patch_size=2,
                                             num_position_embeddings=16, hidden_act="gelu"),
                          image_token_id=10, video_token_id=11, vision_start_token_id=12,
                          vision_end_token_id=13, tie_word_embeddings=True),
                     QWEN_PRE, None, BPE, True),
    # EXAONE 4.5: a Qwen2.5-VL style tower with grouped-query attention (its fused qkv is
    # kept whole) under `model.visual.`, and an EXAONE 4 text model (exaone4's widths and BPE
    # tokenizer; the tied embedding, drawn first, is the BPE text fixtures' bytes) with one
    # next-token-prediction layer as the released checkpoints name it (top-level `mtp.`).
    "exaone45-vl": ("Exaone4_5_ForConditionalGeneration", "exaone4_5",
                    dict(text_config=dict(model_type="exaone4", hidden_size=16,
                                          intermediate_size=40, num_hidden_layers=2,
                                          num_attention_heads=2, num_key_value_heads=1,
                                          vocab_size=BPE_VOCAB, max_position_embeddings=4096,
                                          rms_norm_eps=1e-5, sliding_window=256,
                                          sliding_window_pattern=2, tie_word_embeddings=True,
                                          num_nextn_predict_layers=1,
                                          rope_parameters={"rope_type": "default",
                                                           "rope_theta": 10000.0}),
                         vision_config=dict(depth=3, hidden_size=8, intermediate_size=12,
                                            num_heads=2, num_key_value_heads=1,
                                            out_hidden_size=16, patch_size=7,
                                            spatial_merge_size=2, temporal_patch_size=2,
                                            window_size=28, fullatt_block_indexes=[2]),
                         image_token_id=10, video_token_id=11, tie_word_embeddings=True),
                    {**QWEN_PRE, "min_pixels": 3136, "max_pixels": 12845056}, None,
                    [("tokenizer.json", "../../tokenizers/smollm"),
                     ("tokenizer_config.json", "../../tokenizers/shared/4ec77d44f62efeb3"),
                     ("special_tokens_map.json", "../../tokenizers/shared/2b7379f3ae813529")],
                    True),
    # Qwen4-Exp (Qwen3.8-Flash-Next): the Qwen3-VL tower (no deepstack mergers) before a
    # Qwen4-Exp text model (the qwen4exp fixture's sizes: hyper-connections, the QSA indexer,
    # the PLE module with its table in two shards). The embedding is the first draw at width
    # 4, the same bytes as the qwen35 fixture's.
    "qwen4exp-vl": ("Qwen4ExpForConditionalGeneration", "qwen4_exp",
                    dict(text_config=dict(QWEN35_TEXT, model_type="qwen4_exp_text",
                                          num_hidden_layers=3,
                                          layer_types=["linear_attention", "linear_attention",
                                                       "full_attention"],
                                          num_experts=4, num_experts_per_tok=2,
                                          moe_intermediate_size=8,
                                          shared_expert_intermediate_size=8, hc_count=2,
                                          hc_lowrank=4, ple_layer_ids=[2], ple_embed_dim=8,
                                          ple_conv_kernel_size=3, ngram_size=3,
                                          heads_per_ngram=2, ngram_vocab_size_base=10,
                                          make_ngram_vocab_size_divisible_by=8,
                                          split_ngram_parts=2, indexer_n_heads=2,
                                          indexer_kv_heads=1, indexer_head_dim=8,
                                          indexer_budget=8, indexer_compress_ratio=4,
                                          eos_token_id=[2, 3]),
                         vision_config=dict(depth=1, hidden_size=8, intermediate_size=12,
                                            num_heads=2, out_hidden_size=4, patch_size=7,
                                            spatial_merge_size=2, temporal_patch_size=2,
                                            num_position_embeddings=16),
                         image_token_id=10, video_token_id=11, vision_start_token_id=12,
                         vision_end_token_id=13, tie_word_embeddings=True),
                    QWEN_PRE, None, BPE_STORED, True),
    # GLM-4.1V / GLM-4.5V / GLM-OCR: the GLM-4V tower (RMS-normed blocks, fused qkv, SwiGLU
    # FFN, a post-conv norm, learned position embeddings, a strided-conv downsample and the
    # SwiGLU merger). The text halves take the glm4 / glm4moe fixtures' widths, vocabularies
    # and tokenizers (their embeddings, the first draws, are those fixtures' bytes); the
    # dense ones use M-RoPE (the reference regroups q/k rows for it).
    "glm4v": ("Glm4vForConditionalGeneration", "glm4v",
              dict(text_config=dict(model_type="glm4v_text", hidden_size=16,
                                    intermediate_size=40, num_hidden_layers=2,
                                    num_attention_heads=2, num_key_value_heads=1,
                                    vocab_size=BPE_VOCAB + 1, max_position_embeddings=4096,
                                    rms_norm_eps=1e-5, tie_word_embeddings=True,
                                    rope_parameters={"rope_type": "default",
                                                     "rope_theta": 10000.0,
                                                     "partial_rotary_factor": 0.5,
                                                     "mrope_section": [1, 1, 0]}),
                   vision_config=dict(depth=2, hidden_size=8, intermediate_size=12,
                                      num_heads=2, out_hidden_size=16, image_size=28,
                                      patch_size=7, spatial_merge_size=2,
                                      temporal_patch_size=2, hidden_act="silu",
                                      rms_norm_eps=1e-6),
                   image_token_id=10, video_token_id=11, image_start_token_id=12,
                   image_end_token_id=13, video_start_token_id=14, video_end_token_id=15,
                   tie_word_embeddings=True),
              QWEN_PRE, "glm4", [("tokenizer.json", "../../tokenizers/smollm-glm"),
                                 "tokenizer_config.json", "special_tokens_map.json"], True),
    "glm4vmoe": ("Glm4vMoeForConditionalGeneration", "glm4v_moe",
                 dict(text_config=dict(model_type="glm4v_moe_text", hidden_size=4,
                                       head_dim=16, intermediate_size=40,
                                       num_hidden_layers=2, num_attention_heads=2,
                                       num_key_value_heads=1, vocab_size=BPE_VOCAB + 3,
                                       max_position_embeddings=4096, attention_bias=True,
                                       moe_intermediate_size=24, n_routed_experts=4,
                                       n_shared_experts=1, num_experts_per_tok=2,
                                       first_k_dense_replace=1, n_group=1, topk_group=1,
                                       routed_scaling_factor=2.5, norm_topk_prob=True,
                                       rope_parameters={"rope_type": "default",
                                                        "rope_theta": 10000.0,
                                                        "partial_rotary_factor": 0.5,
                                                        "mrope_section": [2, 1, 1]}),
                      vision_config=dict(depth=1, hidden_size=8, intermediate_size=12,
                                         num_heads=2, out_hidden_size=4, image_size=28,
                                         patch_size=7, spatial_merge_size=2,
                                         temporal_patch_size=2, hidden_act="gelu"),
                      image_token_id=10, video_token_id=11, image_start_token_id=12,
                      image_end_token_id=13, video_start_token_id=14, video_end_token_id=15),
                 QWEN_PRE, "glm4moe", [("tokenizer.json", "../../tokenizers/smollm-glm45"),
                                       "tokenizer_config.json", "special_tokens_map.json"],
                 True),
    "glmocr": ("GlmOcrForConditionalGeneration", "glm_ocr",
               dict(text_config=dict(model_type="glm_ocr_text", hidden_size=16,
                                     intermediate_size=40, num_hidden_layers=2,
                                     num_attention_heads=2, num_key_value_heads=1,
                                     vocab_size=BPE_VOCAB + 1, max_position_embeddings=4096,
                                     rms_norm_eps=1e-5, tie_word_embeddings=True,
                                     num_nextn_predict_layers=1,
                                     rope_parameters={"rope_type": "default",
                                                      "rope_theta": 10000.0,
                                                      "partial_rotary_factor": 0.5,
                                                      "mrope_section": [1, 1, 0]}),
                    vision_config=dict(depth=2, hidden_size=8, intermediate_size=12,
                                       num_heads=2, out_hidden_size=16, image_size=28,
                                       patch_size=7, spatial_merge_size=2,
                                       temporal_patch_size=2, hidden_act="silu",
                                       attention_bias=True),
                    image_token_id=10, video_token_id=11, image_start_token_id=12,
                    image_end_token_id=13, video_start_token_id=14, video_end_token_id=15,
                    tie_word_embeddings=True),
               QWEN_PRE, "glm4", [("tokenizer.json", "../../tokenizers/smollm-glm"),
                                  "special_tokens_map.json"], True),
    # GLM-5.3-Flash: the GLM-4V tower with per-head q/k norms and no post-conv norm or
    # position embeddings, a SwiGLU clamp; the preprocessor's token budget (written as
    # pixels). Projector only (no tokenizer; the text model, drawn as small as transformers
    # allows, is converted from make_fixtures.py's glm5next-text fixture).
    "glm5next": ("Glm5NextForConditionalGeneration", "glm5_next",
                 dict(text_config=dict(model_type="glm5_next_text", vocab_size=64,
                                       hidden_size=16, intermediate_size=24,
                                       moe_intermediate_size=8, num_hidden_layers=1,
                                       num_attention_heads=2, num_key_value_heads=2,
                                       n_routed_experts=2, num_experts_per_tok=1,
                                       kv_lora_rank=8, q_lora_rank=8, qk_rope_head_dim=0,
                                       v_head_dim=8, qk_nope_head_dim=8, index_topk=4,
                                       index_kpool=2, index_head_dim=8, index_n_heads=2,
                                       linear_head_dim=8, linear_num_heads=2, hc_mult=2,
                                       pad_token_id=0, max_position_embeddings=256),
                      vision_config=dict(depth=1, hidden_size=8, intermediate_size=12,
                                         num_heads=2, out_hidden_size=16, image_size=28,
                                         patch_size=7, spatial_merge_size=2,
                                         temporal_patch_size=2, projection_intermediate_size=20,
                                         swiglu_limit=7.0),
                      image_token_id=10, video_token_id=11, image_start_token_id=12,
                      image_end_token_id=13, video_start_token_id=14, video_end_token_id=15),
                 {**QWEN_PRE, "patch_size": 7, "merge_size": 2, "min_image_tokens": 4,
                  "max_image_tokens": 1024},
                 None, [], False),
    # Qwen3-ASR (the transformers layout, Qwen/Qwen3-ASR-0.6B-hf): a Qwen3 text model after
    # the Qwen3-ASR audio encoder. The text half only (TEXT_ONLY): the projector's audio
    # position table is computed with torch's sin / cos, which ggufkit does not reproduce.
    "qwen3asr": ("Qwen3ASRForConditionalGeneration", "qwen3_asr",
                 dict(text_config=qwen_text("qwen3", head_dim=8),
                      audio_config=dict(d_model=16, encoder_layers=1,
                                        encoder_attention_heads=2, encoder_ffn_dim=24,
                                        num_mel_bins=8, n_window=4, output_dim=16,
                                        downsample_hidden_size=8),
                      audio_token_id=10, timestamp_token_id=11, pad_token_id=2,
                      eos_token_id=[2, 3], tie_word_embeddings=True),
                 {"feature_size": 8, "sampling_rate": 16000}, None,
                 # internlm3's tokenizer config: the SentencePiece vocabulary with an added
                 # `<|im_end|>`, which the class makes the BOS and EOS token.
                 SPM[:2] + [("tokenizer_config.json", "../internlm3"),
                            ("special_tokens_map.json", "../internlm3")], True),
    # Qwen3-Omni-MoE's thinker (no talker / code2wav: enable_audio_output false): the
    # Qwen3-VL-MoE text model (two layers, three experts) with the Qwen3-VL tower and the
    # Qwen3-Omni audio encoder. The text half only (TEXT_ONLY, as qwen3asr). Its vocabulary
    # is qwen3moe's BPE (`<|im_end|>` is id 2); the tied width-16 embedding is drawn first
    # (DRAW_FIRST): qwen3vlmoe's bytes, stored once.
    "qwen3omni": ("Qwen3OmniMoeForConditionalGeneration", "qwen3_omni_moe",
                  dict(thinker_config=dict(
                           text_config=dict(hidden_size=16, intermediate_size=24,
                                            num_hidden_layers=2, num_attention_heads=2,
                                            num_key_value_heads=1, head_dim=8,
                                            vocab_size=BPE_VOCAB, max_position_embeddings=256,
                                            num_experts=3, num_experts_per_tok=2,
                                            moe_intermediate_size=12, decoder_sparse_step=1,
                                            tie_word_embeddings=True,
                                            rope_parameters={"rope_type": "default",
                                                             "mrope_section": [1, 1, 2],
                                                             "mrope_interleaved": True,
                                                             "rope_theta": 10000.0}),
                           vision_config=dict(depth=1, hidden_size=8, intermediate_size=12,
                                              num_heads=2, out_hidden_size=16, patch_size=7,
                                              spatial_merge_size=2, temporal_patch_size=2,
                                              num_position_embeddings=16,
                                              deepstack_visual_indexes=[0]),
                           audio_config=dict(d_model=16, encoder_layers=1,
                                             encoder_attention_heads=2, encoder_ffn_dim=24,
                                             num_mel_bins=8, n_window=4, output_dim=16,
                                             downsample_hidden_size=8),
                           tie_word_embeddings=True),
                       enable_audio_output=False),
                  QWEN_PRE, None, BPE, True),
    # Qwen2.5-Omni's thinker: the text half only (ggufkit has no projector converter for
    # it, TEXT_ONLY), no talker / token2wav (enable_audio_output false); built as
    # Qwen2_5OmniForConditionalGeneration, saved under the hub's class name.
    "qwen25omni": ("Qwen2_5OmniModel", "qwen2_5_omni",
                   dict(thinker_config=dict(
                            text_config=qwen_text("qwen2_5_omni_text", rope_parameters={
                                "rope_type": "default", "mrope_section": [1, 1, 2],
                                "rope_theta": 10000.0}),
                            vision_config=dict(depth=3, hidden_size=8, intermediate_size=12,
                                               num_heads=2, out_hidden_size=16, patch_size=7,
                                               spatial_merge_size=2, temporal_patch_size=2,
                                               window_size=28, fullatt_block_indexes=[2]),
                            audio_config=dict(d_model=16, encoder_layers=1,
                                              encoder_attention_heads=2, encoder_ffn_dim=24,
                                              num_mel_bins=8, max_source_positions=8,
                                              n_window=4, output_dim=16)),
                        enable_audio_output=False),
                   QWEN_PRE, None, SPM, True),
    "qwen2audio": ("Qwen2AudioForConditionalGeneration", "qwen2_audio",
                   dict(text_config=qwen_text("qwen2"),
                        audio_config=dict(model_type="qwen2_audio_encoder", d_model=16,
                                          encoder_layers=3, encoder_attention_heads=2,
                                          encoder_ffn_dim=24, num_mel_bins=8,
                                          max_source_positions=8),
                        audio_token_index=10, tie_word_embeddings=True),
                   {"feature_size": 8, "sampling_rate": 16000}, None, SPM, True),
    # InternVL (remote code: InternVLChatModel, not in transformers). Built by hand
    # (HAND_BUILT): config.json in the hub layout (OpenGVLab/InternVL3-1B), tensors named as
    # its checkpoint; the text half is Qwen2 with the qwen2 fixture's tokenizer.
    "internvl3": ("InternVLChatModel", "internvl_chat", None, IMAGENET_PRE, "qwen2",
                  ["tokenizer.model", "tokenizer.json", "tokenizer_config.json",
                   "special_tokens_map.json"], True),
    # Ultravox (remote code: UltravoxModel). Built by hand (HAND_BUILT) in the hub layout
    # (fixie-ai/ultravox-v0_5-llama-3_2-1b): a Whisper encoder and the stacking projector,
    # no text weights (the text model is loaded from `text_model_id`) and no tokenizer: the
    # text variants record the reference's refusal.
    "ultravox": ("UltravoxModel", "ultravox", None,
                 {"feature_extractor_type": "WhisperFeatureExtractor", "feature_size": 8,
                  "sampling_rate": 16000}, None, [], True),
    # Gemma 4 (Gemma4ForConditionalGeneration): the gemma4 text fixture's model (its config
    # and tokenizer) with the Gemma 4 vision tower (patch embedder with a 2-D position table,
    # two blocks with q/k norms, clipped linears and the standardization scale and bias) and
    # the conformer audio tower (two-layer subsampling convolution, two blocks, clipped
    # linears); the clip bounds are drawn finite (CLIP_BOUNDS).
    "gemma4-vl": ("Gemma4ForConditionalGeneration", "gemma4",
                  dict(text_config=dict(mf.GEMMA4),
                       vision_config=dict(hidden_size=16, intermediate_size=24,
                                          num_hidden_layers=2, num_attention_heads=2,
                                          num_key_value_heads=2, head_dim=8, patch_size=2,
                                          pooling_kernel_size=2, position_embedding_size=8,
                                          use_clipped_linears=True, standardize=True),
                       audio_config=dict(hidden_size=16, num_hidden_layers=2,
                                         num_attention_heads=2, subsampling_conv_channels=[4, 4],
                                         conv_kernel_size=3, output_proj_dims=8)),
                  PRE, "gemma4", [("tokenizer.json", "../../tokenizers/gemma4"),
                                  "tokenizer_config.json", "special_tokens_map.json"], True),
    # Gemma 4 without an audio tower (no audio_config, no audio tensors): a vision-only file.
    # Other sizes (width 24, three heads and blocks, 3 px patches pooled by 3), no clipped
    # linears or standardization, CLIP's image mean and std; a small text model (no
    # per-layer embeddings), projector only.
    "gemma4-vision": ("Gemma4ForConditionalGeneration", "gemma4",
                      dict(text_config=dict(mf.GEMMA4_TEXT, hidden_size_per_layer_input=0,
                                            vocab_size_per_layer_input=0),
                           vision_config=dict(hidden_size=24, intermediate_size=40,
                                              num_hidden_layers=3, num_attention_heads=3,
                                              num_key_value_heads=3, head_dim=8,
                                              patch_size=3, pooling_kernel_size=3,
                                              position_embedding_size=12)),
                      CLIP_PRE, None, [], False),
    # Gemma 3n (Gemma3nForConditionalGeneration): built by hand (HAND_BUILT; transformers
    # needs timm for the MobileNetV5 tower): the audio tower and both embedders as
    # transformers builds them, the vision tower in the hub checkpoints' timm layout (stem,
    # an edge-residual stage, a stage with an inverted-residual and an attention block, the
    # multi-scale fusion adapter). The reference cannot map the audio subsampling norms
    # (`subsample_conv_projection.conv_{i}.norm`) of that layout and refuses every such
    # checkpoint; the fixture leaves them out, so that the rest is compared. The text model
    # is the gemma3n text fixture's config under `model.language_model.`, with its tokenizer.
    "gemma3n-vl": ("Gemma3nForConditionalGeneration", "gemma3n", None,
                   {"image_seq_length": 4, "size": {"height": 16, "width": 16}}, "gemma3n",
                   [("tokenizer.model", "../gemma3"), ("tokenizer.json", "../gemma3"),
                    "tokenizer_config.json", "special_tokens_map.json"], True),
    # The same checkpoint in transformers' layout (with the subsampling norms), without text
    # weights: the reference refuses its projector, every variant.
    "gemma3n-vl-hf": ("Gemma3nForConditionalGeneration", "gemma3n", None,
                      {"image_seq_length": 4, "size": {"height": 16, "width": 16}}, None, [],
                      False),
    # Gemma 4 Unified: the gemma4unified text fixture's text model (config edit: CONFIG_EDITS)
    # with the transformer-less embedders at other sizes: 3 px patches pooled by 2 (a 6 x 6
    # patch, 108 pixel values reordered to CHW), a 5 x 5 position table, 12-wide audio.
    "gemma4unified-vl": ("Gemma4UnifiedForConditionalGeneration", "gemma4_unified",
                         dict(text_config=dict(mf.GEMMA4_TEXT, final_logit_softcapping=30.0),
                              vision_config=dict(patch_size=3, pooling_kernel_size=2,
                                                 mm_embed_dim=16, mm_posemb_size=5,
                                                 output_proj_dims=16),
                              audio_config=dict(audio_embed_dim=12)),
                         PRE, "gemma4", [("tokenizer.json", "../../tokenizers/gemma4"),
                                         "tokenizer_config.json", "special_tokens_map.json"],
                         True),
    # Voxtral (VoxtralForConditionalGeneration): a Whisper encoder (three blocks: `conv1` /
    # `conv2` and the projector's `linear_1` / `linear_2` map through the block table) whose
    # FFN is four times its width, as the released model's (the projector reads four stacked
    # frames), and a Llama text model on the shared SentencePiece vocabulary (text variants).
    "voxtral": ("VoxtralForConditionalGeneration", "voxtral",
                dict(text_config=llama_text(vocab_size=SPM_VOCAB, head_dim=8,
                                            tie_word_embeddings=True),
                     audio_config=dict(hidden_size=16, num_hidden_layers=3,
                                       num_attention_heads=2, intermediate_size=64,
                                       num_mel_bins=8, max_source_positions=8)),
                {"feature_size": 8, "sampling_rate": 16000}, None, SPM_STORED, True),
    # Audio Flamingo 3 (AudioFlamingo3ForConditionalGeneration): the Whisper encoder (three
    # blocks, for the projector's `linear_1` / `linear_2`), a two-layer projector with biases
    # and a small Qwen2 text model (projector only).
    "audioflamingo3": ("AudioFlamingo3ForConditionalGeneration", "audioflamingo3",
                       dict(text_config=qwen_text("qwen2"),
                            audio_config=dict(hidden_size=16, num_hidden_layers=3,
                                              num_attention_heads=2, intermediate_size=24,
                                              num_mel_bins=8, max_source_positions=8)),
                       {"feature_size": 8, "sampling_rate": 16000}, None, SPM_STORED, True),
    # MERaLiON-2 (remote code) and GLM-ASR (remote code): built by hand (HAND_BUILT) in their
    # hub layouts, projector only (no text weights, no tokenizer).
    "meralion2": ("MERaLiON2ForConditionalGeneration", "meralion2", None,
                  {"feature_extractor_type": "WhisperFeatureExtractor", "feature_size": 8,
                   "sampling_rate": 16000}, None, [], False),
    "glmasr": ("GlmasrModel", "glmasr", None,
               {"feature_extractor_type": "WhisperFeatureExtractor", "feature_size": 8,
                "sampling_rate": 16000}, None, [], False),
    # Sarashina2-Vision (remote code): built by hand (HAND_BUILT) from the qwen2vl fixture's
    # vision tower, projector only.
    "sarashina2-vl": ("Sarashina2VisionForCausalLM", "sarashina2_vision", None, QWEN_PRE, None,
                      [], False),
    # Ling 3.0 VL (remote code: BailingMoeV3VLForConditionalGeneration): built by hand
    # (HAND_BUILT) from the qwen3vl fixture's vision tower under `model.visual.` with a
    # norm-only merger (no fc layers, no deepstack), the top-level projector MLP
    # linear_proj.0 / linear_proj.2 and a Ling 3 text_config; projector only.
    "ling3vl": ("BailingMoeV3VLForConditionalGeneration", "bailing_moe_v3_vl", None, QWEN_PRE,
                None, [], False),
    # Llama 4 (Llama4ForConditionalGeneration): the Llama 4 vision tower (patch 14 on
    # 28 px: a 5-row position table with the class embedding) and its pixel-shuffle adapter
    # `vision_adapter.mlp.fc1` / `fc2`, which map through the block table (three blocks).
    # Projector only: the llama4-vl text fixture covers the text half (its one-block tower
    # is not a valid projector input: the reference cannot map fc1 / fc2 with one block).
    "llama4-vision": ("Llama4ForConditionalGeneration", "llama4",
                      dict(text_config=dict(model_type="llama4_text", hidden_size=16,
                                            intermediate_size=24, intermediate_size_mlp=40,
                                            num_hidden_layers=1, num_attention_heads=2,
                                            num_key_value_heads=1, head_dim=8,
                                            num_local_experts=2, vocab_size=64,
                                            max_position_embeddings=256),
                           vision_config=dict(hidden_size=16, intermediate_size=24,
                                              num_hidden_layers=3, num_attention_heads=2,
                                              image_size=28, patch_size=14,
                                              projector_input_dim=16, projector_output_dim=16,
                                              vision_output_dim=16, pixel_shuffle_ratio=0.5),
                           image_token_index=60, boi_token_index=61, eoi_token_index=62),
                      PRE, None, [], False),
    # LFM2-VL (Lfm2VlForConditionalGeneration): a SigLIP2 tower without its head, whose
    # linear patch embedding the reference reshapes as 16 x 16 x 3 patches (patch 16 here too),
    # three blocks (`multi_modal_projector.linear_1` / `linear_2` map through the block table),
    # the pixel-unshuffle projector with its layer norm. Projector only (the reference has no
    # text class for it), text half as small as transformers allows.
    "lfm2vl": ("Lfm2VlForConditionalGeneration", "lfm2_vl",
               dict(text_config=dict(model_type="lfm2", hidden_size=16, intermediate_size=24,
                                     num_hidden_layers=2, num_attention_heads=2,
                                     num_key_value_heads=1, vocab_size=64,
                                     layer_types=["conv", "full_attention"]),
                    vision_config=dict(model_type="siglip2_vision_model", hidden_size=16,
                                       intermediate_size=24, num_hidden_layers=3,
                                       num_attention_heads=2, num_patches=16, patch_size=16,
                                       vision_use_head=False),
                    projector_hidden_size=20, downsample_factor=2, image_token_id=60),
               PRE, None, [], False),
    # LightOnOCR (LightOnOCRForConditionalGeneration, built as transformers'
    # LightOnOcrForConditionalGeneration, BUILD_CLASS): a Pixtral tower of three blocks
    # (`linear_1` / `linear_2` map through the block table) under `model.vision_encoder.`
    # and the Mistral 3 style projector (`model.vision_projection.`: norm, patch merger, two
    # linears). Projector only (the reference has no text class for it).
    "lightonocr": ("LightOnOCRForConditionalGeneration", "lighton_ocr",
                   dict(text_config=qwen_text("qwen3", head_dim=8, vocab_size=64),
                        vision_config=pixtral(), spatial_merge_size=2, image_token_id=60),
                   PRE, None, [], False),
    # Kimi-K2.5 (remote code in the hub layout, moonshotai/Kimi-K2.5; HAND_BUILT): the
    # MoonViT3d tower (fused qkv with bias, norm0 / norm1, mlp.fc0 / fc1, a 2-D position
    # table) and the patch-merger projector `mm_projector.{pre_norm, proj.0, proj.2}`. The
    # vision config spells the hub's `vt_*` keys; AutoConfig's Kimi_K25VisionConfig adds its
    # defaults (hidden 1152, 27 layers, 16 heads), which the reference writes. Projector
    # only: no text weights (the kimik25 text fixture covers the text half).
    "kimik25-vl": ("KimiK25ForConditionalGeneration", "kimi_k25", None,
                   {"media_proc_cfg": {**PRE, "in_patch_limit": 1000, "patch_size": 7,
                                       "merge_kernel_size": 2}}, None, [], False),
    # Kimi-VL (remote code, moonshotai/Kimi-VL-A3B-Instruct; HAND_BUILT): the MoonViT tower
    # (three blocks: the projector's `linear_1` / `linear_2` map through the block table) and
    # `multi_modal_projector.{pre_norm, linear_1, linear_2}`. Projector only.
    "kimivl": ("KimiVLForConditionalGeneration", "kimi_vl", None,
               {**PRE, "patch_size": 7, "in_token_limit": 256, "merge_kernel_size": [2, 2]},
               None, [], False),
    # Granite 4 Vision (Granite4VisionForConditionalGeneration; HAND_BUILT in the layout
    # transformers saves, with the hub's `vision_model.` level of the SigLIP tower): four
    # blocks of width 16 (a QFormer of width 16 transformers cannot build: its heads are
    # width // 64), two layerwise (deepstack) and two spatial window-QFormer projectors of
    # one QFormer layer each, ordered by their text layer, and `model.image_newline`.
    # Projector only (no text weights).
    "granite4v": ("Granite4VisionForConditionalGeneration", "granite4_vision", None, PRE,
                  None, [], False),
    # Youtu-VL (YoutuVLForConditionalGeneration, remote code in the hub layout of
    # tencent/Youtu-VL-4B-Instruct; HAND_BUILT): a SigLIP2 tower under `siglip2.vision_model.`
    # (linear patch embedding; its position table, which the reference cannot map, is
    # dropped), three blocks (the merger's `mlp.0` / `mlp.2` map through the block table), the
    # merger `merger.{ln_q, mlp.0, mlp.2}`, and two of the text model's tensors the class
    # filters out. Projector only.
    "youtuvl": ("YoutuVLForConditionalGeneration", "youtu_vl", None, QWEN_PRE, None, [],
                False),
    # HunyuanOCR (HunYuanVLForConditionalGeneration; HAND_BUILT in the hub layout of
    # tencent/HunyuanOCR, which transformers renames on load): the ViT under `vit.` (its
    # position table with the class row first), three blocks (the perceiver's `proj.0` /
    # `proj.2` convolutions map through the block table), the perceiver's norms, MLP and
    # learned rows. Projector only.
    "hunyuanvl": ("HunYuanVLForConditionalGeneration", "hunyuan_vl", None,
                  {**PRE, "min_pixels": 784, "max_pixels": 3136}, None, [], False),
    # PaddleOCR-VL's projector (vision_config.architectures PaddleOCRVisionModel; HAND_BUILT
    # in the hub layout of PaddlePaddle/PaddleOCR-VL, which transformers renames on load):
    # the SigLIP tower under `visual.vision_model.` (with the packing position table the
    # class drops), three blocks (`mlp_AR.linear_1` / `linear_2` map through the block
    # table), the projector `mlp_AR.{pre_norm, linear_1, linear_2}` and one text tensor.
    # Projector only.
    "paddleocr-vl": ("PaddleOCRVLForConditionalGeneration", "paddleocr_vl", None,
                     {**PRE, "min_pixels": 784, "max_pixels": 3000}, None, [], False),
    # CogVLM (remote code, THUDM/cogvlm-chat-hf; HAND_BUILT): the EVA2-CLIP tower under
    # `model.vision.` (fused qkv with bias, a bare class-embedding parameter, a position
    # table of (image / patch)^2 + 1 rows), the GLU projector `model.vision.linear_proj.*`
    # and the boi / eoi rows; the text half is Llama with visual-expert attention and MLPs
    # (dropped by the reference's text filter) and the shared SentencePiece vocabulary. The
    # hub config has no num_key_value_heads, which the reference's Llama conversion
    # requires: the fixture names it (the refusal without it is a test of its own).
    "cogvlm": ("CogVLMForCausalLM", "cogvlm", None, CLIP_PRE, None, SPM_NO_CONFIG, True),
    # Janus-Pro (JanusForConditionalGeneration): the SigLIP-style tower (two blocks, q/k/v
    # with `projection_layer` as the output, an `mlp_ratio` instead of intermediate_size),
    # the aligner `fc1` / `hidden_layers.0`, the image-generation heads both converters drop,
    # and a Llama text model with the shared SentencePiece vocabulary. The VQ-VAE
    # (`model.vqmodel.`, 300 KB at its smallest) is left out of the checkpoint (DROP_PREFIX):
    # both converters skip it by its prefix.
    "janus": ("JanusForConditionalGeneration", "janus",
              dict(text_config=llama_text(vocab_size=SPM_VOCAB),
                   vision_config=dict(hidden_size=16, num_hidden_layers=2,
                                      num_attention_heads=2, image_size=28, patch_size=14,
                                      mlp_ratio=1.5, projection_dim=16),
                   vq_config=dict(embed_dim=4, num_embeddings=8, base_channels=32,
                                  channel_multiplier=[1], num_res_blocks=1, latent_channels=4,
                                  projection_dim=16, num_hidden_layers=1, num_patches=2,
                                  image_token_embed_dim=16)),
              PRE, None, SPM_NO_CONFIG, True),
    # MiniCPM-V 4.6 (MiniCPMV4_6ForConditionalGeneration): a SigLIP tower of three blocks
    # with the window-attention ViT merger inserted after block 1 (`vision_tower.vit_merger`),
    # the final downsampling MLP (`model.merger.mlp.0`), and the Qwen3.5 text model of the
    # qwen35-vl fixture in the config (its weights left out, NO_TEXT_WEIGHTS, but for the
    # MTP block, which the projector drops) with the SmolLM2 BPE vocabulary;
    # `scale_resolution` in the preprocessor config becomes the image size. Projector only:
    # make_fixtures.py's minicpmv46-text covers the text half (its block_count counts the
    # config's MTP layer, whose tensors the class drops: a file llama.cpp cannot load).
    "minicpmv46": ("MiniCPMV4_6ForConditionalGeneration", "minicpmv4_6",
                   dict(text_config=dict(QWEN35_TEXT, model_type="qwen3_5_text",
                                         intermediate_size=32, mtp_num_hidden_layers=1),
                        vision_config=dict(hidden_size=16, intermediate_size=24,
                                           num_hidden_layers=3, num_attention_heads=2,
                                           image_size=28, patch_size=7, insert_layer_id=1),
                        insert_layer_id=1, image_token_id=10, video_token_id=11,
                        tie_word_embeddings=True),
                   {**QWEN_PRE, "scale_resolution": 28, "downsample_mode": "16x"}, None,
                   BPE_STORED, False),
}


# The clipped linears' bounds (Gemma 4's `input_min` ... `output_max` buffers, infinite when
# transformers builds them): drawn finite after the parameters, minima negative.
CLIP_BOUNDS = {"gemma4-vl"}


# InternVL3 in the hub layout: the InternViT tower (`vision_model.`, fused qkv with bias,
# layer scales ls1 / ls2, class and position embeddings as bare parameters; q/k norms as the
# 6B tower has them, `qk_normalization`), the pixel-shuffle MLP projector `mlp1.{0,1,3}`
# (LayerNorm, Linear, GELU, Linear) and the Qwen2 text model under `language_model.`. The
# tower has four blocks: `mlp1.3` maps through the block table (`mm.model.mlp.{bid}`).
INTERNVL_VIT = dict(hidden=16, layers=4, heads=2, ffn=32, image=28, patch=7)
INTERNVL_LLM = dict(hidden=16, layers=1, heads=2, kv_heads=1, ffn=24, vocab=1024)


def internvl_config() -> dict:
    v, t = INTERNVL_VIT, INTERNVL_LLM
    llm = {
        "_name_or_path": "./pretrained/Qwen2.5-0.5B-Instruct",
        "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0,
        "bos_token_id": 1001, "eos_token_id": 1002, "hidden_act": "silu",
        "hidden_size": t["hidden"], "initializer_range": 0.02,
        "intermediate_size": t["ffn"], "max_position_embeddings": 256,
        "max_window_layers": 21, "model_type": "qwen2",
        "num_attention_heads": t["heads"], "num_hidden_layers": t["layers"],
        "num_key_value_heads": t["kv_heads"], "rms_norm_eps": 1e-06,
        "rope_scaling": None, "rope_theta": 1000000.0, "sliding_window": None,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16",
        "transformers_version": "4.37.2", "use_bfloat16": True, "use_cache": False,
        "use_sliding_window": False, "vocab_size": t["vocab"],
    }
    vision = {
        "architectures": ["InternVisionModel"], "attention_dropout": 0.0,
        "drop_path_rate": 0.0, "dropout": 0.0, "hidden_act": "gelu",
        "hidden_size": v["hidden"], "image_size": v["image"], "initializer_factor": 0.1,
        "initializer_range": 1e-10, "intermediate_size": v["ffn"], "layer_norm_eps": 1e-06,
        "model_type": "intern_vit_6b", "norm_type": "layer_norm",
        "num_attention_heads": v["heads"], "num_channels": 3,
        "num_hidden_layers": v["layers"], "patch_size": v["patch"], "qk_normalization": True,
        "qkv_bias": True, "torch_dtype": "bfloat16", "transformers_version": "4.37.2",
        "use_bfloat16": True, "use_flash_attn": False,
    }
    return {
        "architectures": ["InternVLChatModel"],
        "auto_map": {"AutoConfig": "configuration_internvl_chat.InternVLChatConfig",
                     "AutoModel": "modeling_internvl_chat.InternVLChatModel",
                     "AutoModelForCausalLM": "modeling_internvl_chat.InternVLChatModel"},
        "downsample_ratio": 0.5, "dynamic_image_size": True, "force_image_size": v["image"],
        "hidden_size": t["hidden"], "image_fold": None, "llm_config": llm,
        "max_dynamic_patch": 12, "min_dynamic_patch": 1, "model_type": "internvl_chat",
        "pad2square": False, "ps_version": "v2", "select_layer": -1, "system_message": None,
        "template": "internvl2_5", "tie_word_embeddings": False, "torch_dtype": "bfloat16",
        "transformers_version": None, "use_backbone_lora": 0, "use_llm_lora": 0,
        "use_thumbnail": True, "vision_config": vision,
    }


def internvl_tensors() -> dict[str, tuple[tuple[int, ...], bool]]:
    """name -> (shape, is a norm scale)."""
    v, t = INTERNVL_VIT, INTERNVL_LLM
    c, f = v["hidden"], v["ffn"]
    n_pos = (v["image"] // v["patch"]) ** 2 + 1
    out: dict[str, tuple[tuple[int, ...], bool]] = {
        "vision_model.embeddings.class_embedding": ((1, 1, c), False),
        "vision_model.embeddings.patch_embedding.weight": ((c, 3, v["patch"], v["patch"]), False),
        "vision_model.embeddings.patch_embedding.bias": ((c,), False),
        "vision_model.embeddings.position_embedding": ((1, n_pos, c), False),
    }
    for i in range(v["layers"]):
        p = f"vision_model.encoder.layers.{i}."
        out.update({
            p + "attn.qkv.weight": ((3 * c, c), False), p + "attn.qkv.bias": ((3 * c,), False),
            p + "attn.q_norm.weight": ((c,), True), p + "attn.k_norm.weight": ((c,), True),
            p + "attn.proj.weight": ((c, c), False), p + "attn.proj.bias": ((c,), False),
            p + "ls1": ((c,), False), p + "ls2": ((c,), False),
            p + "mlp.fc1.weight": ((f, c), False), p + "mlp.fc1.bias": ((f,), False),
            p + "mlp.fc2.weight": ((c, f), False), p + "mlp.fc2.bias": ((c,), False),
            p + "norm1.weight": ((c,), True), p + "norm1.bias": ((c,), False),
            p + "norm2.weight": ((c,), True), p + "norm2.bias": ((c,), False),
        })
    h, kv = t["hidden"], t["hidden"] // t["heads"] * t["kv_heads"]
    out.update({
        "mlp1.0.weight": ((4 * c,), True), "mlp1.0.bias": ((4 * c,), False),
        "mlp1.1.weight": ((h, 4 * c), False), "mlp1.1.bias": ((h,), False),
        "mlp1.3.weight": ((h, h), False), "mlp1.3.bias": ((h,), False),
        "language_model.model.embed_tokens.weight": ((t["vocab"], h), False),
        "language_model.model.norm.weight": ((h,), True),
        "language_model.lm_head.weight": ((t["vocab"], h), False),
    })
    for i in range(t["layers"]):
        p = f"language_model.model.layers.{i}."
        out.update({
            p + "input_layernorm.weight": ((h,), True),
            p + "post_attention_layernorm.weight": ((h,), True),
            p + "self_attn.q_proj.weight": ((h, h), False),
            p + "self_attn.q_proj.bias": ((h,), False),
            p + "self_attn.k_proj.weight": ((kv, h), False),
            p + "self_attn.k_proj.bias": ((kv,), False),
            p + "self_attn.v_proj.weight": ((kv, h), False),
            p + "self_attn.v_proj.bias": ((kv,), False),
            p + "self_attn.o_proj.weight": ((h, h), False),
            p + "mlp.gate_proj.weight": ((t["ffn"], h), False),
            p + "mlp.up_proj.weight": ((t["ffn"], h), False),
            p + "mlp.down_proj.weight": ((h, t["ffn"]), False),
        })
    return out


# Ultravox v0.5: a Whisper encoder (three blocks: `conv1` / `conv2` and the projector's
# `linear_1` / `linear_2` map through the block table), frames stacked 8 at a time, the
# projector RMSNorm (ln_pre) -> Linear -> SwiGLU -> RMSNorm (ln_mid, `projector_ln_mid`) ->
# Linear, no biases.
ULTRAVOX = dict(d=16, layers=3, heads=2, ffn=24, mel=8, positions=8, stack=8, hidden=64,
                text_hidden=16)


def ultravox_config() -> dict:
    import transformers

    u = ULTRAVOX
    audio = transformers.WhisperConfig(
        d_model=u["d"], encoder_layers=u["layers"], encoder_attention_heads=u["heads"],
        encoder_ffn_dim=u["ffn"], decoder_layers=1, decoder_attention_heads=u["heads"],
        decoder_ffn_dim=u["ffn"], num_mel_bins=u["mel"], max_source_positions=u["positions"],
        vocab_size=64).to_dict()
    audio["_name_or_path"] = "openai/whisper-large-v3-turbo"
    audio.pop("transformers_version", None)
    text = transformers.LlamaConfig(
        hidden_size=u["text_hidden"], intermediate_size=24, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, vocab_size=1024,
        max_position_embeddings=256).to_dict()
    text["_name_or_path"] = "meta-llama/Llama-3.2-1B-Instruct"
    text["architectures"] = ["LlamaForCausalLM"]
    text.pop("transformers_version", None)
    return {
        "architectures": ["UltravoxModel"], "audio_config": audio,
        "audio_model_id": "openai/whisper-large-v3-turbo", "audio_token_index": 1000,
        "auto_map": {"AutoConfig": "ultravox_config.UltravoxConfig",
                     "AutoModel": "ultravox_model.UltravoxModel",
                     "AutoProcessor": "ultravox_processing.UltravoxProcessor"},
        "hidden_size": u["hidden"], "ignore_index": -100, "initializer_range": 0.02,
        "model_type": "ultravox", "norm_init": 0.4, "pad_token_id": 1002,
        "projector_act": "swiglu", "projector_ln_mid": True, "stack_factor": u["stack"],
        "text_config": text, "text_model_id": "meta-llama/Llama-3.2-1B-Instruct",
        "torch_dtype": "bfloat16", "transformers_version": "4.47.0", "vocab_size": 1024,
    }


def ultravox_tensors() -> dict[str, tuple[tuple[int, ...], bool]]:
    """name -> (shape, is a norm scale)."""
    u = ULTRAVOX
    d, f = u["d"], u["ffn"]
    out: dict[str, tuple[tuple[int, ...], bool]] = {
        "audio_tower.conv1.weight": ((d, u["mel"], 3), False),
        "audio_tower.conv1.bias": ((d,), False),
        "audio_tower.conv2.weight": ((d, d, 3), False),
        "audio_tower.conv2.bias": ((d,), False),
        "audio_tower.embed_positions.weight": ((u["positions"], d), False),
        "audio_tower.layer_norm.weight": ((d,), True),
        "audio_tower.layer_norm.bias": ((d,), False),
        "multi_modal_projector.ln_pre.weight": ((d * u["stack"],), True),
        "multi_modal_projector.linear_1.weight": ((u["hidden"], d * u["stack"]), False),
        "multi_modal_projector.ln_mid.weight": ((u["hidden"] // 2,), True),
        "multi_modal_projector.linear_2.weight": ((u["text_hidden"], u["hidden"] // 2), False),
    }
    for i in range(u["layers"]):
        p = f"audio_tower.layers.{i}."
        out.update({
            p + "self_attn.k_proj.weight": ((d, d), False),
            p + "self_attn.v_proj.weight": ((d, d), False),
            p + "self_attn.v_proj.bias": ((d,), False),
            p + "self_attn.q_proj.weight": ((d, d), False),
            p + "self_attn.q_proj.bias": ((d,), False),
            p + "self_attn.out_proj.weight": ((d, d), False),
            p + "self_attn.out_proj.bias": ((d,), False),
            p + "self_attn_layer_norm.weight": ((d,), True),
            p + "self_attn_layer_norm.bias": ((d,), False),
            p + "fc1.weight": ((f, d), False), p + "fc1.bias": ((f,), False),
            p + "fc2.weight": ((d, f), False), p + "fc2.bias": ((d,), False),
            p + "final_layer_norm.weight": ((d,), True),
            p + "final_layer_norm.bias": ((d,), False),
        })
    return out


def whisper_tensors(prefix: str, d: int, layers: int, ffn: int, mel: int, positions: int,
                    final_norm: bool) -> dict[str, tuple[tuple[int, ...], bool]]:
    """A Whisper encoder's tensors under `prefix` (name -> (shape, is a norm scale))."""
    out: dict[str, tuple[tuple[int, ...], bool]] = {
        prefix + "conv1.weight": ((d, mel, 3), False), prefix + "conv1.bias": ((d,), False),
        prefix + "conv2.weight": ((d, d, 3), False), prefix + "conv2.bias": ((d,), False),
        prefix + "embed_positions.weight": ((positions, d), False),
    }
    if final_norm:
        out[prefix + "layer_norm.weight"] = ((d,), True)
        out[prefix + "layer_norm.bias"] = ((d,), False)
    for i in range(layers):
        p = f"{prefix}layers.{i}."
        out.update({
            p + "self_attn.k_proj.weight": ((d, d), False),
            p + "self_attn.v_proj.weight": ((d, d), False),
            p + "self_attn.v_proj.bias": ((d,), False),
            p + "self_attn.q_proj.weight": ((d, d), False),
            p + "self_attn.q_proj.bias": ((d,), False),
            p + "self_attn.out_proj.weight": ((d, d), False),
            p + "self_attn.out_proj.bias": ((d,), False),
            p + "self_attn_layer_norm.weight": ((d,), True),
            p + "self_attn_layer_norm.bias": ((d,), False),
            p + "fc1.weight": ((ffn, d), False), p + "fc1.bias": ((ffn,), False),
            p + "fc2.weight": ((d, ffn), False), p + "fc2.bias": ((d,), False),
            p + "final_layer_norm.weight": ((d,), True),
            p + "final_layer_norm.bias": ((d,), False),
        })
    return out


def whisper_config(w: dict, name: str) -> dict:
    """A Whisper config dict of the sizes in `w`, as a hub checkpoint's sub-config."""
    import transformers

    cfg = transformers.WhisperConfig(
        d_model=w["d"], encoder_layers=w["layers"], encoder_attention_heads=w["heads"],
        encoder_ffn_dim=w["ffn"], decoder_layers=1, decoder_attention_heads=w["heads"],
        decoder_ffn_dim=w["ffn"], num_mel_bins=w["mel"], max_source_positions=w["positions"],
        vocab_size=64).to_dict()
    cfg["_name_or_path"] = name
    cfg.pop("transformers_version", None)
    return cfg


# MERaLiON-2 (remote code: MERaLiON2ForConditionalGeneration), in the hub layout of
# MERaLiON/MERaLiON-2-3B: the Whisper encoder under `speech_encoder.` (config `speech_config`),
# `ln_speech`, the gated adapter `speech_audio_adapter.{mlp_adapter.0, gate_proj, pool_proj,
# out_proj}` over `speech_mlp_scale_factor` stacked frames (3 here, 15 in the release: the
# adapter's input is that many times the width, its inner width five times the width), and a
# Gemma 2 text config (no text weights: the reference has no text class for it). Width 8 and
# three blocks (`conv1` / `conv2` map through the block table).
MERALION = dict(d=8, layers=3, heads=2, ffn=12, mel=8, positions=8, scale=3, text_hidden=16)


def meralion_config() -> dict:
    import transformers

    m = MERALION
    text = transformers.Gemma2Config(
        hidden_size=m["text_hidden"], intermediate_size=24, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, head_dim=8, vocab_size=1024).to_dict()
    text["_name_or_path"] = "google/gemma-2-2b-it"
    text["architectures"] = ["Gemma2ForCausalLM"]
    text.pop("transformers_version", None)
    return {
        "architectures": ["MERaLiON2ForConditionalGeneration"],
        "auto_map": {"AutoConfig": "configuration_meralion2.MERaLiON2Config",
                     "AutoModelForSpeechSeq2Seq":
                         "modeling_meralion2.MERaLiON2ForConditionalGeneration"},
        "model_type": "meralion2", "speech_config": whisper_config(m, "openai/whisper-large-v3"),
        "speech_mlp_scale_factor": m["scale"], "speech_token_index": 1000,
        "text_config": text, "torch_dtype": "bfloat16", "transformers_version": "4.50.1",
    }


def meralion_tensors() -> dict[str, tuple[tuple[int, ...], bool]]:
    m = MERALION
    d, inner = m["d"], 5 * m["d"]
    out = whisper_tensors("speech_encoder.", d, m["layers"], m["ffn"], m["mel"],
                          m["positions"], True)
    a = "speech_audio_adapter."
    out.update({
        "ln_speech.weight": ((d,), True), "ln_speech.bias": ((d,), False),
        a + "mlp_adapter.0.weight": ((inner, d * m["scale"]), False),
        a + "mlp_adapter.0.bias": ((inner,), False),
        a + "gate_proj.weight": ((inner, inner), False), a + "gate_proj.bias": ((inner,), False),
        a + "pool_proj.weight": ((inner, inner), False), a + "pool_proj.bias": ((inner,), False),
        a + "out_proj.weight": ((m["text_hidden"], inner), False),
        a + "out_proj.bias": ((m["text_hidden"],), False),
    })
    return out


# GLM-ASR (remote code: GlmasrModel), in the hub layout of zai-org/GLM-ASR-Nano-2512: the
# Whisper encoder under `audio_encoder.whisper.` (config `whisper_config`, no final norm of
# its own), `audio_encoder.layer_norm`, the adapter `audio_encoder.adapting.{0,2}` over
# `merge_factor` stacked frames, the audio begin / end embeddings
# `audio_encoder.audio_bos_eos_token` and a Llama `lm_config` (no text weights: projector
# only). Width 8, three blocks (`conv1` / `conv2` map through the block table).
GLMASR = dict(d=8, layers=3, heads=2, ffn=12, mel=8, positions=8, merge=4, text_hidden=16)


def glmasr_config() -> dict:
    import transformers

    g = GLMASR
    lm = transformers.LlamaConfig(
        hidden_size=g["text_hidden"], intermediate_size=24, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, vocab_size=1024,
        max_position_embeddings=256).to_dict()
    lm["architectures"] = ["LlamaForCausalLM"]
    lm.pop("transformers_version", None)
    return {
        "adapter_type": "mlp", "architectures": ["GlmasrModel"],
        "auto_map": {"AutoConfig": "configuration_glmasr.GlmasrConfig",
                     "AutoModelForCausalLM": "modeling_glmasr.GlmasrModel"},
        "lm_config": lm, "max_whisper_length": 1500, "merge_factor": g["merge"],
        "mlp_adapter_act": "gelu", "model_type": "glmasr", "torch_dtype": "bfloat16",
        "transformers_version": "4.51.3", "use_rope": True,
        "whisper_config": whisper_config(g, "openai/whisper-large-v3"),
    }


def glmasr_tensors() -> dict[str, tuple[tuple[int, ...], bool]]:
    g = GLMASR
    d, t = g["d"], g["text_hidden"]
    out = whisper_tensors("audio_encoder.whisper.", d, g["layers"], g["ffn"], g["mel"],
                          g["positions"], False)
    out.update({
        "audio_encoder.layer_norm.weight": ((d,), True),
        "audio_encoder.layer_norm.bias": ((d,), False),
        "audio_encoder.adapting.0.weight": ((2 * t, d * g["merge"]), False),
        "audio_encoder.adapting.0.bias": ((2 * t,), False),
        "audio_encoder.adapting.2.weight": ((t, 2 * t), False),
        "audio_encoder.adapting.2.bias": ((t,), False),
        "audio_encoder.audio_bos_eos_token.weight": ((2, t), False),
    })
    return out


def build_sarashina2(out: Path, seed: int) -> None:
    """Sarashina2-Vision (remote code: Sarashina2VisionForCausalLM) in the hub layout of
    sbintuitions/sarashina2.2-vision-3b: a Qwen2-VL vision tower under `visual.` (the qwen2vl
    fixture's config and tensors, the same bytes, stored once), the `norm.` the text half
    drops (drawn), a Llama `text_config` and no text weights (projector only)."""
    import numpy as np
    import torch
    from safetensors.torch import load_file, save_file
    from fixture_io import materialize

    base = materialize(TESTDATA / "hf" / "qwen2vl", out.parent / "qwen2vl-base")
    cfg = json.loads((base / "config.json").read_text())
    tensors = {k: v for k, v in load_file(str(base / "model.safetensors")).items()
               if k.startswith("visual.")}
    shutil.rmtree(base)
    text = dict(llama_text(vocab_size=SPM_VOCAB), architectures=["LlamaForCausalLM"])
    rng = np.random.default_rng(seed)
    norm = 1.0 + 0.05 * rng.standard_normal((text["hidden_size"],))
    tensors["norm.weight"] = torch.from_numpy(norm.astype(np.float32)).to(torch.bfloat16)
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    config = {
        "architectures": ["Sarashina2VisionForCausalLM"],
        "auto_map": {"AutoConfig": "configuration_sarashina2_vision.Sarashina2VisionConfig",
                     "AutoModelForCausalLM":
                         "modeling_sarashina2_vision.Sarashina2VisionForCausalLM"},
        "image_token_index": 14, "model_type": "sarashina2_vision", "text_config": text,
        "torch_dtype": "bfloat16", "transformers_version": "4.52.4",
        "vision_config": cfg["vision_config"],
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")


def build_hand(out: Path, seed: int, spec: dict, config: dict) -> None:
    """Draws `spec`'s tensors as build() does (sorted names), saves them as bf16 and writes
    config.json."""
    import numpy as np
    import torch
    from safetensors.torch import save_file

    rng = np.random.default_rng(seed)
    tensors = {}
    for name in sorted(spec):
        shape, is_norm = spec[name]
        v = 1.0 + 0.05 * rng.standard_normal(shape) if is_norm \
            else 0.02 * rng.standard_normal(shape)
        tensors[name] = torch.from_numpy(v.astype(np.float32)).to(torch.bfloat16)
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")


def gemma3n_config():
    import transformers

    cfg = transformers.Gemma3nConfig(
        text_config=dict(mf.GEMMA3N),
        vision_config=dict(hidden_size=16, vocab_size=8, vocab_offset=1000),
        audio_config=dict(hidden_size=16, input_feat_size=8, conf_num_attention_heads=2,
                          conf_num_hidden_layers=2, sscp_conv_channel_size=[4, 4],
                          conf_conv_kernel_size=3, vocab_size=8, vocab_offset=1008))
    cfg.architectures = ["Gemma3nForConditionalGeneration"]
    return cfg


# Gemma 3n's MobileNetV5 tower in the hub layout (8 channels, 16 out of the fusion adapter):
# name under `model.vision_tower.timm_model.` -> shape.
GEMMA3N_VISION = {
    "conv_stem.conv.weight": (8, 3, 3, 3), "conv_stem.conv.bias": (8,),
    "conv_stem.bn.weight": (8,),
    "blocks.0.0.conv_exp.weight": (16, 8, 3, 3), "blocks.0.0.bn1.weight": (16,),
    "blocks.0.0.conv_pwl.weight": (8, 16, 1, 1), "blocks.0.0.bn2.weight": (8,),
    "blocks.1.0.dw_start.conv.weight": (8, 1, 3, 3), "blocks.1.0.dw_start.bn.weight": (8,),
    "blocks.1.0.pw_exp.conv.weight": (16, 8, 1, 1), "blocks.1.0.pw_exp.bn.weight": (16,),
    "blocks.1.0.dw_mid.conv.weight": (16, 1, 3, 3), "blocks.1.0.dw_mid.bn.weight": (16,),
    "blocks.1.0.pw_proj.conv.weight": (8, 16, 1, 1), "blocks.1.0.pw_proj.bn.weight": (8,),
    "blocks.1.0.layer_scale.gamma": (8,),
    "blocks.1.1.norm.weight": (8,), "blocks.1.1.attn.query.proj.weight": (8, 8, 1, 1),
    "blocks.1.1.attn.key.down_conv.weight": (8, 1, 3, 3), "blocks.1.1.attn.key.norm.weight": (8,),
    "blocks.1.1.attn.key.proj.weight": (4, 8, 1, 1),
    "blocks.1.1.attn.value.down_conv.weight": (8, 1, 3, 3),
    "blocks.1.1.attn.value.norm.weight": (8,), "blocks.1.1.attn.value.proj.weight": (4, 8, 1, 1),
    "blocks.1.1.attn.output.proj.weight": (8, 8, 1, 1), "blocks.1.1.layer_scale.gamma": (8,),
    "msfa.ffn.pw_exp.conv.weight": (16, 16, 1, 1), "msfa.ffn.pw_exp.bn.weight": (16,),
    "msfa.ffn.pw_proj.conv.weight": (16, 16, 1, 1), "msfa.ffn.pw_proj.bn.weight": (16,),
    "msfa.norm.weight": (16,),
}


def gemma3n_tensors(cfg, norms: bool) -> dict:
    """The text model (without `norms`), the audio tower and the embedders' parameters as
    transformers names them (the subsampling norms only with `norms`, see FIXTURES), then the
    vision tower's."""
    from transformers.models.gemma3n import modeling_gemma3n as g

    spec = {}
    text = [] if norms else [("model.language_model.", g.Gemma3nTextModel(cfg.text_config))]
    for prefix, mod in text + [
        ("model.audio_tower.", g.Gemma3nAudioEncoder(cfg.audio_config)),
        ("model.embed_audio.", g.Gemma3nMultimodalEmbedder(cfg.audio_config, cfg.text_config)),
        ("model.embed_vision.", g.Gemma3nMultimodalEmbedder(cfg.vision_config,
                                                            cfg.text_config)),
    ]:
        for n, p in mod.named_parameters():
            if ".norm." in n and "subsample_conv_projection" in n and not norms:
                continue
            is_norm = "norm" in n and p.ndim == 1 and n.endswith("weight")
            spec[prefix + n] = (tuple(p.shape), is_norm)
    for n, shape in GEMMA3N_VISION.items():
        is_norm = ("norm" in n or ".bn" in n) and len(shape) == 1 and n.endswith("weight")
        spec["model.vision_tower.timm_model." + n] = (shape, is_norm)
    return spec


def build_gemma3n(out: Path, seed: int, norms: bool = False) -> None:
    cfg = gemma3n_config()
    build_hand(out, seed, gemma3n_tensors(cfg, norms), cfg.to_dict())


# MoonViT (Kimi-VL, Kimi-K2.5) in the hub layout: width 16, two heads (head size 8, as the
# reference's K2.5 q/k regrouping needs a multiple of 4), a 4 x 4 position table, patch 7.
MOONVIT = dict(hidden=16, heads=2, ffn=24, patch=7, pos=4, merge=2, text_hidden=16)


def moonvit_tensors(layers: int, projector: dict[str, str]) -> dict:
    """The MoonViT tower's tensors (`vision_tower.`) and the patch-merger projector named by
    `projector` (pre_norm, the first and the second linear): name -> (shape, is a norm)."""
    m = MOONVIT
    d, f, merged = m["hidden"], m["ffn"], m["hidden"] * m["merge"] ** 2
    out = {
        "vision_tower.patch_embed.proj.weight": ((d, 3, m["patch"], m["patch"]), False),
        "vision_tower.patch_embed.proj.bias": ((d,), False),
        "vision_tower.patch_embed.pos_emb.weight": ((m["pos"], m["pos"], d), False),
        "vision_tower.encoder.final_layernorm.weight": ((d,), True),
        "vision_tower.encoder.final_layernorm.bias": ((d,), False),
        projector["norm"] + ".weight": ((d,), True),
        projector["norm"] + ".bias": ((d,), False),
        projector["fc1"] + ".weight": ((merged, merged), False),
        projector["fc1"] + ".bias": ((merged,), False),
        projector["fc2"] + ".weight": ((m["text_hidden"], merged), False),
        projector["fc2"] + ".bias": ((m["text_hidden"],), False),
    }
    for i in range(layers):
        p = f"vision_tower.encoder.blocks.{i}."
        out.update({
            p + "norm0.weight": ((d,), True), p + "norm0.bias": ((d,), False),
            p + "norm1.weight": ((d,), True), p + "norm1.bias": ((d,), False),
            p + "wqkv.weight": ((3 * d, d), False), p + "wqkv.bias": ((3 * d,), False),
            p + "wo.weight": ((d, d), False), p + "wo.bias": ((d,), False),
            p + "mlp.fc0.weight": ((f, d), False), p + "mlp.fc0.bias": ((f,), False),
            p + "mlp.fc1.weight": ((d, f), False), p + "mlp.fc1.bias": ((d,), False),
        })
    return out


def kimi_text() -> dict:
    """A DeepSeek-V3 text config of the released layout at width 16 (no weights stored)."""
    return dict(model_type="deepseek_v3", hidden_size=MOONVIT["text_hidden"],
                intermediate_size=24, moe_intermediate_size=8, num_hidden_layers=1,
                num_attention_heads=2, num_key_value_heads=2, n_routed_experts=4,
                n_shared_experts=1, num_experts_per_tok=2, kv_lora_rank=8, q_lora_rank=8,
                qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=8, first_k_dense_replace=1,
                vocab_size=1000, max_position_embeddings=256, rms_norm_eps=1e-5,
                architectures=["DeepseekV3ForCausalLM"])


def kimik25_config() -> dict:
    m = MOONVIT
    return {
        "architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25",
        "auto_map": {"AutoConfig": "configuration_kimi_k25.KimiK25Config",
                     "AutoModel": "modeling_kimi_k25.KimiK25ForConditionalGeneration"},
        "text_config": dict(kimi_text(), model_type="kimi_k2"),
        "vision_config": {
            "init_pos_emb_height": m["pos"], "init_pos_emb_width": m["pos"],
            "init_pos_emb_time": 4, "merge_kernel_size": [m["merge"], m["merge"]],
            "merge_type": "sd2_tpool", "mm_hidden_size": m["hidden"],
            "mm_projector_type": "patchmerger", "patch_size": m["patch"],
            "pos_emb_type": "divided_fixed", "projector_hidden_act": "gelu",
            "projector_ln_eps": 1e-5, "text_hidden_size": m["text_hidden"],
            "video_attn_type": "spatial_temporal", "vt_hidden_size": m["hidden"],
            "vt_intermediate_size": m["ffn"], "vt_num_attention_heads": m["heads"],
            "vt_num_hidden_layers": 2, "num_attention_heads": m["heads"]},
        "media_placeholder_token_id": 163605, "pad_token_id": 163839,
        "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    }


def kimivl_config() -> dict:
    m = MOONVIT
    return {
        "architectures": ["KimiVLForConditionalGeneration"], "model_type": "kimi_vl",
        "auto_map": {"AutoConfig": "configuration_kimi_vl.KimiVLConfig",
                     "AutoModel": "modeling_kimi_vl.KimiVLForConditionalGeneration"},
        "text_config": kimi_text(),
        "vision_config": {
            "model_type": "moonvit", "patch_size": m["patch"], "init_pos_emb_height": m["pos"],
            "init_pos_emb_width": m["pos"], "num_attention_heads": m["heads"],
            "num_hidden_layers": 3, "hidden_size": m["hidden"], "intermediate_size": m["ffn"],
            "merge_kernel_size": [m["merge"], m["merge"]]},
        "ignore_index": -100, "media_placeholder_token_id": 163605, "pad_token_id": 0,
        "vocab_size": 1000, "torch_dtype": "bfloat16",
    }


GRANITE4V = dict(hidden=16, layers=4, heads=2, ffn=24, image=28, patch=7, text_hidden=16,
                 qformer_ffn=24, window=2, query=1, layerwise=2, spatial=2)


def granite4v_config() -> dict:
    import transformers

    g = GRANITE4V
    cfg = transformers.AutoConfig.for_model(
        "granite4_vision",
        text_config=dict(hidden_size=g["text_hidden"], intermediate_size=24,
                         num_hidden_layers=4, num_attention_heads=2, num_key_value_heads=1,
                         vocab_size=64, architectures=["GraniteForCausalLM"]),
        vision_config=dict(model_type="siglip_vision_model", hidden_size=g["hidden"],
                           intermediate_size=g["ffn"], num_hidden_layers=g["layers"],
                           num_attention_heads=g["heads"], image_size=g["image"],
                           patch_size=g["patch"], vision_use_head=False),
        qformer_config=dict(num_hidden_layers=1, intermediate_size=g["qformer_ffn"],
                            cross_attention_frequency=1, use_qformer_text_input=False),
        downsample_rate=f"{g['query']}/{g['window']}",
        # sorted as pairs, then each normalized and all ordered by the text layer
        deepstack_layer_map=[[-1, 3], [1, 0]], spatial_vision_layer=-2,
        spatial_target_layers=[1, 2], image_grid_pinpoints=[[56, 28], [28, 56]],
        image_token_index=60)
    d = cfg.to_dict()
    d["architectures"] = ["Granite4VisionForConditionalGeneration"]
    for k in ("transformers_version", "_name_or_path"):
        d.pop(k, None)
    return d


def granite4v_tensors() -> dict[str, tuple[tuple[int, ...], bool]]:
    g = GRANITE4V
    h, f, t = g["hidden"], g["ffn"], g["text_hidden"]
    v = "model.vision_tower.vision_model."
    out = {
        "model.image_newline": ((t,), False),
        v + "embeddings.patch_embedding.weight": ((h, 3, g["patch"], g["patch"]), False),
        v + "embeddings.patch_embedding.bias": ((h,), False),
        v + "embeddings.position_embedding.weight": (((g["image"] // g["patch"]) ** 2, h), False),
        v + "post_layernorm.weight": ((h,), True),
        v + "post_layernorm.bias": ((h,), False),
    }
    for i in range(g["layers"]):
        b = f"{v}encoder.layers.{i}."
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            out[b + f"self_attn.{n}.weight"] = ((h, h), False)
            out[b + f"self_attn.{n}.bias"] = ((h,), False)
        for n in ("layer_norm1", "layer_norm2"):
            out[b + f"{n}.weight"] = ((h,), True)
            out[b + f"{n}.bias"] = ((h,), False)
        out[b + "mlp.fc1.weight"] = ((f, h), False)
        out[b + "mlp.fc1.bias"] = ((f,), False)
        out[b + "mlp.fc2.weight"] = ((h, f), False)
        out[b + "mlp.fc2.bias"] = ((h,), False)
    projectors = [f"model.layerwise_projectors.{i}." for i in range(g["layerwise"])] \
        + [f"model.spatial_projectors.{i}." for i in range(g["spatial"])]
    for p in projectors:
        out[p + "query"] = ((1, g["query"] ** 2, h), False)
        out[p + "image_positions"] = ((1, g["window"] ** 2, h), False)
        out[p + "norm.weight"] = ((h,), True)
        out[p + "norm.bias"] = ((h,), False)
        out[p + "out_linear.weight"] = ((t, h), False)
        out[p + "out_linear.bias"] = ((t,), False)
        out[p + "qformer.layernorm.weight"] = ((h,), True)
        out[p + "qformer.layernorm.bias"] = ((h,), False)
        q = p + "qformer.encoder.layer.0."
        for a in ("attention", "crossattention"):
            for n in ("query", "key", "value"):
                out[q + f"{a}.attention.{n}.weight"] = ((h, h), False)
                out[q + f"{a}.attention.{n}.bias"] = ((h,), False)
            out[q + f"{a}.output.dense.weight"] = ((h, h), False)
            out[q + f"{a}.output.dense.bias"] = ((h,), False)
            out[q + f"{a}.output.LayerNorm.weight"] = ((h,), True)
            out[q + f"{a}.output.LayerNorm.bias"] = ((h,), False)
        out[q + "intermediate_query.dense.weight"] = ((g["qformer_ffn"], h), False)
        out[q + "intermediate_query.dense.bias"] = ((g["qformer_ffn"],), False)
        out[q + "output_query.dense.weight"] = ((h, g["qformer_ffn"]), False)
        out[q + "output_query.dense.bias"] = ((h,), False)
        out[q + "output_query.LayerNorm.weight"] = ((h,), True)
        out[q + "output_query.LayerNorm.bias"] = ((h,), False)
    return out


YOUTUVL = dict(hidden=16, layers=3, heads=2, ffn=24, patch=7, positions=16, merge=2,
               text_hidden=16)


def youtuvl_config() -> dict:
    y = YOUTUVL
    return {
        "architectures": ["YoutuVLForConditionalGeneration"], "model_type": "youtu_vl",
        "auto_map": {"AutoConfig": "configuration_youtu_vl.YoutuVLConfig",
                     "AutoModelForCausalLM": "modeling_youtu_vl.YoutuVLForConditionalGeneration"},
        "hidden_size": y["text_hidden"], "intermediate_size": 24, "num_hidden_layers": 1,
        "num_attention_heads": 2, "num_key_value_heads": 2, "kv_lora_rank": 8,
        "q_lora_rank": 8, "qk_nope_head_dim": 8, "qk_rope_head_dim": 8, "v_head_dim": 8,
        "vocab_size": 64, "max_position_embeddings": 256, "rms_norm_eps": 1e-6,
        "tie_word_embeddings": True, "torch_dtype": "bfloat16",
        "vision_config": {
            "model_type": "siglip2_vision_model", "hidden_size": y["hidden"],
            "intermediate_size": y["ffn"], "num_hidden_layers": y["layers"],
            "num_attention_heads": y["heads"], "patch_size": y["patch"],
            "num_patches": y["positions"], "hidden_act": "gelu_pytorch_tanh",
            "layer_norm_eps": 1e-6, "spatial_merge_size": y["merge"], "window_size": 14,
            "fullatt_block_indexes": [0, 2],
        },
    }


def youtuvl_tensors() -> dict[str, tuple[tuple[int, ...], bool]]:
    y = YOUTUVL
    h, f, t, p = y["hidden"], y["ffn"], y["text_hidden"], y["patch"]
    v = "siglip2.vision_model."
    out = {
        v + "embeddings.patch_embedding.weight": ((h, 3 * p * p), False),
        v + "embeddings.patch_embedding.bias": ((h,), False),
        v + "embeddings.position_embedding.weight": ((y["positions"], h), False),
        v + "post_layernorm.weight": ((h,), True),
        v + "post_layernorm.bias": ((h,), False),
        "merger.ln_q.weight": ((h,), True),
        "merger.ln_q.bias": ((h,), False),
        "merger.mlp.0.weight": ((h * y["merge"] ** 2, h * y["merge"] ** 2), False),
        "merger.mlp.0.bias": ((h * y["merge"] ** 2,), False),
        "merger.mlp.2.weight": ((t, h * y["merge"] ** 2), False),
        "merger.mlp.2.bias": ((t,), False),
        # the text model's, filtered out by the class
        "model.norm.weight": ((t,), True),
        "lm_head.weight": ((4, t), False),
    }
    for i in range(y["layers"]):
        b = f"{v}encoder.layers.{i}."
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            out[b + f"self_attn.{n}.weight"] = ((h, h), False)
            out[b + f"self_attn.{n}.bias"] = ((h,), False)
        for n in ("layer_norm1", "layer_norm2"):
            out[b + f"{n}.weight"] = ((h,), True)
            out[b + f"{n}.bias"] = ((h,), False)
        out[b + "mlp.fc1.weight"] = ((f, h), False)
        out[b + "mlp.fc1.bias"] = ((f,), False)
        out[b + "mlp.fc2.weight"] = ((h, f), False)
        out[b + "mlp.fc2.bias"] = ((h,), False)
    return out


HUNYUANVL = dict(hidden=16, layers=3, heads=2, ffn=24, patch=7, max_image=28, merge=2,
                 text_hidden=16)


def hunyuanvl_config() -> dict:
    import transformers

    y = HUNYUANVL
    cfg = transformers.AutoConfig.for_model(
        "hunyuan_vl",
        text_config=dict(hidden_size=y["text_hidden"], intermediate_size=24,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                         head_dim=8, vocab_size=64),
        vision_config=dict(hidden_size=y["hidden"], intermediate_size=y["ffn"],
                           num_hidden_layers=y["layers"], num_attention_heads=y["heads"],
                           num_key_value_heads=y["heads"], patch_size=y["patch"],
                           out_hidden_size=y["text_hidden"], text_hidden_size=y["text_hidden"],
                           max_image_size=y["max_image"], min_image_size=y["max_image"],
                           spatial_merge_size=y["merge"], rms_norm_eps=1e-6))
    d = cfg.to_dict()
    d["architectures"] = ["HunYuanVLForConditionalGeneration"]
    for k in ("transformers_version", "_name_or_path"):
        d.pop(k, None)
    return d


def hunyuanvl_tensors() -> dict[str, tuple[tuple[int, ...], bool]]:
    y = HUNYUANVL
    h, f, t, p = y["hidden"], y["ffn"], y["text_hidden"], y["patch"]
    n_pos = (y["max_image"] // p) ** 2 + 1
    out = {
        "vit.embeddings.patch_embedding.weight": ((h, 3, p, p), False),
        "vit.embeddings.patch_embedding.bias": ((h,), False),
        "vit.embeddings.position_embedding.weight": ((n_pos, h), False),
        "vit.perceive.before_rms.weight": ((h,), True),
        "vit.perceive.proj.0.weight": ((2 * h, h, y["merge"], y["merge"]), False),
        "vit.perceive.proj.0.bias": ((2 * h,), False),
        "vit.perceive.proj.2.weight": ((4 * h, 2 * h, 1, 1), False),
        "vit.perceive.proj.2.bias": ((4 * h,), False),
        "vit.perceive.mlp.weight": ((t, 4 * h), False),
        "vit.perceive.mlp.bias": ((t,), False),
        "vit.perceive.after_rms.weight": ((t,), True),
        "vit.perceive.image_newline": ((4 * h,), False),
        "vit.perceive.image_begin": ((t,), False),
        "vit.perceive.image_end": ((t,), False),
        "vit.perceive.image_sep": ((t,), False),
        # the text model's, left out by the class
        "model.norm.weight": ((t,), True),
    }
    for i in range(y["layers"]):
        b = f"vit.layers.{i}."
        for n in ("q_proj", "k_proj", "v_proj", "o_proj"):
            out[b + f"self_attn.{n}.weight"] = ((h, h), False)
            out[b + f"self_attn.{n}.bias"] = ((h,), False)
        for n in ("input_layernorm", "post_attention_layernorm"):
            out[b + f"{n}.weight"] = ((h,), True)
            out[b + f"{n}.bias"] = ((h,), False)
        out[b + "mlp.dense_h_to_4h.weight"] = ((f, h), False)
        out[b + "mlp.dense_h_to_4h.bias"] = ((f,), False)
        out[b + "mlp.dense_4h_to_h.weight"] = ((h, f), False)
        out[b + "mlp.dense_4h_to_h.bias"] = ((h,), False)
    return out


PADDLEOCR = dict(hidden=16, layers=3, heads=2, ffn=24, patch=7, positions=16, merge=2,
                 text_hidden=16)


def paddleocr_config() -> dict:
    import transformers

    y = PADDLEOCR
    cfg = transformers.AutoConfig.for_model(
        "paddleocr_vl",
        text_config=dict(hidden_size=y["text_hidden"], intermediate_size=24,
                         num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                         head_dim=8, vocab_size=64),
        vision_config=dict(hidden_size=y["hidden"], intermediate_size=y["ffn"],
                           num_hidden_layers=y["layers"], num_attention_heads=y["heads"],
                           patch_size=y["patch"], image_size=28,
                           spatial_merge_size=y["merge"],
                           architectures=["PaddleOCRVisionModel"]))
    d = cfg.to_dict()
    d["architectures"] = ["PaddleOCRVLForConditionalGeneration"]
    for k in ("transformers_version", "_name_or_path"):
        d.pop(k, None)
    return d


def paddleocr_tensors() -> dict[str, tuple[tuple[int, ...], bool]]:
    y = PADDLEOCR
    h, f, t, p, m = y["hidden"], y["ffn"], y["text_hidden"], y["patch"], y["merge"]
    v = "visual.vision_model."
    out = {
        v + "embeddings.patch_embedding.weight": ((h, 3, p, p), False),
        v + "embeddings.patch_embedding.bias": ((h,), False),
        v + "embeddings.position_embedding.weight": ((y["positions"], h), False),
        v + "embeddings.packing_position_embedding.weight": ((8, h), False),
        v + "post_layernorm.weight": ((h,), True),
        v + "post_layernorm.bias": ((h,), False),
        "mlp_AR.pre_norm.weight": ((h,), True),
        "mlp_AR.pre_norm.bias": ((h,), False),
        "mlp_AR.linear_1.weight": ((h * m * m, h * m * m), False),
        "mlp_AR.linear_1.bias": ((h * m * m,), False),
        "mlp_AR.linear_2.weight": ((t, h * m * m), False),
        "mlp_AR.linear_2.bias": ((t,), False),
        # the text model's, left out by the class
        "model.norm.weight": ((t,), True),
    }
    for i in range(y["layers"]):
        b = f"{v}encoder.layers.{i}."
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            out[b + f"self_attn.{n}.weight"] = ((h, h), False)
            out[b + f"self_attn.{n}.bias"] = ((h,), False)
        for n in ("layer_norm1", "layer_norm2"):
            out[b + f"{n}.weight"] = ((h,), True)
            out[b + f"{n}.bias"] = ((h,), False)
        out[b + "mlp.fc1.weight"] = ((f, h), False)
        out[b + "mlp.fc1.bias"] = ((f,), False)
        out[b + "mlp.fc2.weight"] = ((h, f), False)
        out[b + "mlp.fc2.bias"] = ((h,), False)
# CogVLM in the hub layout: text width 16 (two heads), two layers, vocabulary 1000 (tied:
# no lm_head); EVA2-CLIP tower width 16, two heads, two blocks, image 28, patch 14.
COGVLM = dict(hidden=16, layers=2, heads=2, ffn=24, vhidden=16, vlayers=2, vheads=2, vffn=24,
              image=28, patch=14)


def cogvlm_config() -> dict:
    c = COGVLM
    return {
        "architectures": ["CogVLMForCausalLM"],
        "auto_map": {"AutoConfig": "configuration_cogvlm.CogVLMConfig",
                     "AutoModelForCausalLM": "modeling_cogvlm.CogVLMForCausalLM"},
        "bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 0, "hidden_act": "silu",
        "hidden_size": c["hidden"], "initializer_range": 0.02, "intermediate_size": c["ffn"],
        "max_position_embeddings": 2048, "num_attention_heads": c["heads"],
        "num_key_value_heads": c["heads"], "num_hidden_layers": c["layers"],
        "rms_norm_eps": 1e-05, "template_version": "chat", "tie_word_embeddings": True,
        "torch_dtype": "bfloat16", "transformers_version": "4.35.0", "use_cache": True,
        "vocab_size": SPM_VOCAB,
        "vision_config": {
            "dropout_prob": 0.0, "hidden_act": "gelu", "hidden_size": c["vhidden"],
            "image_size": c["image"], "in_channels": 3, "intermediate_size": c["vffn"],
            "layer_norm_eps": 1e-06, "num_heads": c["vheads"],
            "num_hidden_layers": c["vlayers"],
            "num_positions": (c["image"] // c["patch"]) ** 2 + 1, "patch_size": c["patch"]},
    }


def cogvlm_tensors() -> dict:
    """CogVLM's parameters as its checkpoint names them: name -> (shape, is a norm)."""
    c = COGVLM
    h, f, vh, vf = c["hidden"], c["ffn"], c["vhidden"], c["vffn"]
    out = {"model.embed_tokens.weight": ((SPM_VOCAB, h), False),
           "model.norm.weight": ((h,), True)}
    for i in range(c["layers"]):
        p = f"model.layers.{i}."
        out.update({
            p + "input_layernorm.weight": ((h,), True),
            p + "post_attention_layernorm.weight": ((h,), True),
            p + "self_attn.language_expert_query_key_value.weight": ((3 * h, h), False),
            p + "self_attn.language_expert_dense.weight": ((h, h), False),
            p + "self_attn.vision_expert_query_key_value.weight": ((3 * h, h), False),
            p + "self_attn.vision_expert_query_key_value.bias": ((3 * h,), False),
            p + "self_attn.vision_expert_dense.weight": ((h, h), False),
        })
        for e in ("language_mlp", "vision_mlp"):
            out.update({p + f"mlp.{e}.gate_proj.weight": ((f, h), False),
                        p + f"mlp.{e}.up_proj.weight": ((f, h), False),
                        p + f"mlp.{e}.down_proj.weight": ((h, f), False)})
    v = "model.vision."
    n_pos = (c["image"] // c["patch"]) ** 2 + 1
    out.update({
        v + "boi": ((1, 1, h), False), v + "eoi": ((1, 1, h), False),
        v + "patch_embedding.cls_embedding": ((1, vh), False),
        v + "patch_embedding.proj.weight": ((vh, 3, c["patch"], c["patch"]), False),
        v + "patch_embedding.proj.bias": ((vh,), False),
        v + "patch_embedding.position_embedding.weight": ((n_pos, vh), False),
        v + "linear_proj.linear_proj.weight": ((h, vh), False),
        v + "linear_proj.norm1.weight": ((h,), True), v + "linear_proj.norm1.bias": ((h,), False),
        v + "linear_proj.dense_h_to_4h.weight": ((f, h), False),
        v + "linear_proj.gate_proj.weight": ((f, h), False),
        v + "linear_proj.dense_4h_to_h.weight": ((h, f), False),
    })
    for i in range(c["vlayers"]):
        p = f"{v}transformer.layers.{i}."
        for n, shape in (("input_layernorm", (vh,)), ("post_attention_layernorm", (vh,)),
                         ("attention.query_key_value", (3 * vh, vh)),
                         ("attention.dense", (vh, vh)), ("mlp.fc1", (vf, vh)),
                         ("mlp.fc2", (vh, vf))):
            out[p + n + ".weight"] = (shape, "layernorm" in n)
            out[p + n + ".bias"] = ((shape[0],), False)
    return out
def build_ling3vl(out: Path, seed: int) -> None:
    """Ling 3.0 VL (remote code) in the layout its converter reads: the qwen3vl fixture's
    tower (the same bytes, stored once) under `model.visual.` without its merger fc layers,
    deepstack mergers and patch bias, `linear_proj.0` / `linear_proj.2` with biases (drawn)
    and text weights left out (projector only)."""
    import numpy as np
    import torch
    from safetensors.torch import load_file, save_file
    from fixture_io import materialize

    base = materialize(TESTDATA / "hf" / "qwen3vl", out.parent / "qwen3vl-base")
    cfg = json.loads((base / "config.json").read_text())
    drop = ("visual.merger.linear_fc", "visual.deepstack_merger_list.",
            "visual.patch_embed.proj.bias")
    tower = {k.removeprefix("model."): v
             for k, v in load_file(str(base / "model.safetensors")).items()}
    tensors = {"model." + k: v for k, v in tower.items()
               if k.startswith("visual.") and not k.startswith(drop)}
    shutil.rmtree(base)
    vision = {k: v for k, v in cfg["vision_config"].items()
              if k not in ("deepstack_visual_indexes", "model_type")}
    merged = vision["hidden_size"] * vision["spatial_merge_size"] ** 2
    vision.update(out_hidden_size=merged, disable_merger_proj=True)
    text = dict(hidden_size=16, intermediate_size=40, num_hidden_layers=2,
                num_attention_heads=2, head_dim=8, vocab_size=64, rms_norm_eps=1e-5,
                layer_group_size=2, first_k_dense_replace=1, moe_intermediate_size=8,
                moe_shared_expert_intermediate_size=8, num_experts=2, num_experts_per_tok=1,
                kv_lora_rank=8, qk_nope_head_dim=4, qk_rope_head_dim=4, v_head_dim=4,
                short_conv_kernel_size=4, no_kda_lora=True, kda_safe_gate=True,
                kda_lower_bound=-5.0, gated_attention_proj_granularity_type="head_wise",
                mrope_section=[1, 1, 0])
    rng = np.random.default_rng(seed)
    e = text["hidden_size"]
    for name, shape in [("linear_proj.0.weight", (e, merged)), ("linear_proj.0.bias", (e,)),
                        ("linear_proj.2.weight", (e, e)), ("linear_proj.2.bias", (e,))]:
        v = 0.02 * rng.standard_normal(shape)
        tensors[name] = torch.from_numpy(v.astype(np.float32)).to(torch.bfloat16)
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    config = {
        "architectures": ["BailingMoeV3VLForConditionalGeneration"],
        "model_type": "bailing_moe_v3_vl", "text_config": text, "vision_config": vision,
        "torch_dtype": "bfloat16",
    }
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")


# Fixtures of remote-code classes, written without transformers: name -> builder.
HAND_BUILT = {
    "internvl3": lambda out, seed: build_hand(out, seed, internvl_tensors(), internvl_config()),
    "ultravox": lambda out, seed: build_hand(out, seed, ultravox_tensors(), ultravox_config()),
    "meralion2": lambda out, seed: build_hand(out, seed, meralion_tensors(), meralion_config()),
    "glmasr": lambda out, seed: build_hand(out, seed, glmasr_tensors(), glmasr_config()),
    "sarashina2-vl": build_sarashina2,
    "gemma3n-vl": build_gemma3n,
    "gemma3n-vl-hf": lambda out, seed: build_gemma3n(out, seed, norms=True),
    "kimik25-vl": lambda out, seed: build_hand(out, seed, moonvit_tensors(2, {
        "norm": "mm_projector.pre_norm", "fc1": "mm_projector.proj.0",
        "fc2": "mm_projector.proj.2"}), kimik25_config()),
    "kimivl": lambda out, seed: build_hand(out, seed, moonvit_tensors(3, {
        "norm": "multi_modal_projector.pre_norm", "fc1": "multi_modal_projector.linear_1",
        "fc2": "multi_modal_projector.linear_2"}), kimivl_config()),
    "granite4v": lambda out, seed: build_hand(out, seed, granite4v_tensors(),
                                              granite4v_config()),
    "youtuvl": lambda out, seed: build_hand(out, seed, youtuvl_tensors(), youtuvl_config()),
    "hunyuanvl": lambda out, seed: build_hand(out, seed, hunyuanvl_tensors(),
                                              hunyuanvl_config()),
    "paddleocr-vl": lambda out, seed: build_hand(out, seed, paddleocr_tensors(),
                                                 paddleocr_config()),
    "cogvlm": lambda out, seed: build_hand(out, seed, cogvlm_tensors(), cogvlm_config()),
    "ling3vl": build_ling3vl,
}


# Step3-VL-10B (StepVLForConditionalGeneration, remote code in the hub layout of
# stepfun-ai/Step3-VL-10B; HAND_BUILT): the PE-style tower under `vision_model.` (a conv1
# patch embedding, a bare positional table, ln_pre, resblocks with a fused in_proj, c_fc /
# c_proj and the ls_1 / ls_2 layer scales), the two convolution downsamplers
# `vision_model.vit_downsampler{1,2}`, the linear projector `vit_large_projector`, and a
# Qwen3 text model (`model.`, `lm_head`) with the shared SentencePiece vocabulary. The
# reference asserts from config.json alone that the tower is Step3-VL-10B's
# (understand_projector_stride 2, image_size 728, width 1536, 47 layers): the config claims
# those values while the tensors stay tiny (two blocks of width 8).
STEPVL = dict(hidden=8, layers=2, ffn=12, patch=7, positions=16, text_hidden=16)


def step_vision_tensors() -> dict[str, tuple[tuple[int, ...], bool]]:
    s = STEPVL
    h, f, p, t = s["hidden"], s["ffn"], s["patch"], s["text_hidden"]
    v = "vision_model."
    out = {
        v + "conv1.weight": ((h, 3, p, p), False),
        v + "positional_embedding": ((s["positions"], h), False),
        v + "ln_pre.weight": ((h,), True), v + "ln_pre.bias": ((h,), False),
        v + "vit_downsampler1.weight": ((2 * h, h, 3, 3), False),
        v + "vit_downsampler1.bias": ((2 * h,), False),
        v + "vit_downsampler2.weight": ((4 * h, 2 * h, 3, 3), False),
        v + "vit_downsampler2.bias": ((4 * h,), False),
        "vit_large_projector.weight": ((t, 4 * h), False),
    }
    for i in range(s["layers"]):
        b = f"{v}transformer.resblocks.{i}."
        out.update({
            b + "ln_1.weight": ((h,), True), b + "ln_1.bias": ((h,), False),
            b + "ln_2.weight": ((h,), True), b + "ln_2.bias": ((h,), False),
            b + "attn.in_proj_weight": ((3 * h, h), False),
            b + "attn.in_proj_bias": ((3 * h,), False),
            b + "attn.out_proj.weight": ((h, h), False), b + "attn.out_proj.bias": ((h,), False),
            b + "mlp.c_fc.weight": ((f, h), False), b + "mlp.c_fc.bias": ((f,), False),
            b + "mlp.c_proj.weight": ((h, f), False), b + "mlp.c_proj.bias": ((h,), False),
            b + "ls_1.gamma": ((h,), False), b + "ls_2.gamma": ((h,), False),
        })
    return out


def step_vision_config() -> dict:
    # the published tower's sizes, which the reference asserts (the tensors stay tiny)
    return {"hidden_size": 1536, "num_hidden_layers": 47, "num_attention_heads": 16,
            "image_size": 728, "patch_size": 14, "layer_norm_eps": 1e-5,
            "hidden_act": "quick_gelu", "output_hidden_size": 1536}


def stepvl_config() -> dict:
    t = STEPVL["text_hidden"]
    return {
        "architectures": ["StepVLForConditionalGeneration"], "model_type": "step_vl",
        "auto_map": {"AutoConfig": "configuration_step_vl.StepRoboticsConfig",
                     "AutoModelForCausalLM": "modeling_step_vl.StepVLForConditionalGeneration"},
        "understand_projector_stride": 2, "projector_bias": False, "image_token_id": 10,
        "torch_dtype": "bfloat16",
        "vision_config": step_vision_config(),
        "text_config": {
            "model_type": "qwen3", "hidden_size": t,
            "intermediate_size": 24, "num_hidden_layers": 1, "num_attention_heads": 2,
            "num_key_value_heads": 1, "head_dim": 8, "vocab_size": SPM_VOCAB,
            "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
            "tie_word_embeddings": False, "hidden_act": "silu",
            "bos_token_id": 1, "eos_token_id": 2,
        },
    }


def stepvl_tensors() -> dict[str, tuple[tuple[int, ...], bool]]:
    t, ff = STEPVL["text_hidden"], 24
    out = step_vision_tensors()
    out.update({"model.embed_tokens.weight": ((SPM_VOCAB, t), False),
                "model.norm.weight": ((t,), True), "lm_head.weight": ((SPM_VOCAB, t), False)})
    b = "model.layers.0."
    out.update({
        b + "input_layernorm.weight": ((t,), True),
        b + "post_attention_layernorm.weight": ((t,), True),
        b + "self_attn.q_proj.weight": ((16, t), False),
        b + "self_attn.k_proj.weight": ((8, t), False),
        b + "self_attn.v_proj.weight": ((8, t), False),
        b + "self_attn.o_proj.weight": ((t, 16), False),
        b + "self_attn.q_norm.weight": ((8,), True), b + "self_attn.k_norm.weight": ((8,), True),
        b + "mlp.gate_proj.weight": ((ff, t), False), b + "mlp.up_proj.weight": ((ff, t), False),
        b + "mlp.down_proj.weight": ((t, ff), False),
    })
    return out


FIXTURES["stepvl"] = ("StepVLForConditionalGeneration", "step_vl", None, None, None,
                      SPM_STORED, True)
HAND_BUILT["stepvl"] = lambda out, seed: build_hand(out, seed, stepvl_tensors(),
                                                    stepvl_config())


# Step 3.7 (Step3p7ForConditionalGeneration, in the hub layout of stepfun-ai/Step-3.7-Flash;
# HAND_BUILT): the step35 fixture's text model (its tensors and config as `text_config`, its
# MTP layer left out) and the stepvl fixture's tower and projector, both copied from testdata
# (share_tensors.py stores them once). The tower config uses the legacy spellings width /
# layers / heads and an intermediate_size. The config has no model_type, so the reference
# reads it as written: the text half converts as Step 3.5. With the hub's model_type
# `step3p7` (the composite variants) AutoConfig builds the text config as transformers'
# step3p5 class, whose dict lacks num_attention_groups, so the reference's text conversion
# fails, and the tower as Step3p7VisionConfig (defaults, intermediate_size replaced by
# int(width * mlp_ratio)).
STEP35_TOKENIZER = [("tokenizer.json", "../../tokenizers/smollm"),
                    ("special_tokens_map.json", "../../tokenizers/shared/2b7379f3ae813529"),
                    ("tokenizer_config.json", "../../tokenizers/shared/4ec77d44f62efeb3")]


def build_step3p7(out: Path, seed: int, model_type: str | None) -> None:
    from safetensors.torch import load_file, save_file

    del seed  # every tensor is another fixture's
    text = json.loads((TESTDATA / "hf" / "step35" / "config.json").read_text())
    text.pop("architectures")
    vision = {"width": 1536, "layers": 47, "heads": 16, "image_size": 728, "patch_size": 14,
              "intermediate_size": 4096, "layer_norm_eps": 1e-5, "hidden_act": "quick_gelu",
              "ls_init_value": 0.1}
    config = {"architectures": ["Step3p7ForConditionalGeneration"],
              "understand_projector_stride": 2, "projector_bias": False,
              "image_token_id": 10, "torch_dtype": "bfloat16",
              "text_config": text, "vision_config": vision}
    if model_type is not None:
        config["model_type"] = model_type
    # without step35's MTP layer, whose shared head repeats the embedding's bytes (one file
    # would hold them twice)
    text["num_nextn_predict_layers"] = 0
    mtp = f"model.layers.{text['num_hidden_layers']}."
    tensors = {k: v for k, v in
               load_file(str(TESTDATA / "hf" / "step35" / "model.safetensors")).items()
               if not k.startswith(mtp)}
    tower = load_file(str(TESTDATA / "hf" / "stepvl" / "model.safetensors"))
    tensors.update({k: v for k, v in tower.items() if not k.startswith(("model.", "lm_head."))})
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")


FIXTURES["step3p7"] = ("Step3p7ForConditionalGeneration", None, None, None, None,
                       STEP35_TOKENIZER, True)
HAND_BUILT["step3p7"] = lambda out, seed: build_step3p7(out, seed, None)


# DeepSeek-V4-Flash-Vision (remote code, deepseek-ai/DeepSeek-V4-Flash-Vision-Exp; HAND_BUILT):
# the text config (the deepseek4 fixture's) with the tower's sizes as `vision_*` keys at the
# root, a native-resolution ViT (`vision.`: a linear patch embedding, blocks with a fused
# `wqkv`, RMS norms and a fused SwiGLU `mlp.w1`; three blocks: the aligner's `w{bid}` map
# through the block table), the aligner MLP over 3x3 merged patches (`aligner.w1` / `w2`) and four sentinel embeddings. No preprocessor_config.json (the class
# has the normalisation's defaults). Projector only: the deepseek4 fixture covers the text half.
FIXTURES["deepseek4-vl"] = ("DeepseekV4ForCausalLM", "deepseek_v4", None, None, None, [], False)


def deepseek4v_tensors(dim: int = 16, inter: int = 24, layers: int = 3, patch: int = 7,
                       merge: int = 3, text: int = 8) -> dict:
    out = {"vision.patch_embed.proj.weight": ((dim, 3 * patch * patch), False),
           "vision.norm.weight": ((dim,), True),
           "aligner.w1.weight": ((text, dim * merge * merge), False),
           "aligner.w1.bias": ((text,), False),
           "aligner.w2.weight": ((text, text), False), "aligner.w2.bias": ((text,), False),
           "image_newline": ((text,), False), "image_start": ((text,), False),
           "image_end": ((text,), False), "image_pad": ((text,), False)}
    for i in range(layers):
        p = f"vision.blocks.{i}."
        out.update({p + "norm1.weight": ((dim,), True), p + "norm2.weight": ((dim,), True),
                    p + "attn.wqkv.weight": ((3 * dim, dim), False),
                    p + "attn.wo.weight": ((dim, dim), False),
                    p + "mlp.w1.weight": ((2 * inter, dim), False),
                    p + "mlp.w2.weight": ((dim, inter), False)})
    return out


def deepseek4v_config() -> dict:
    cfg = json.loads((TESTDATA / "hf" / "deepseek4" / "config.json").read_text())
    cfg.update(vision_n_layers=3, vision_dim=16, vision_n_heads=2, vision_inter_dim=24,
               vision_patch_size=7, vision_downsample_ratio=3, vision_min_pixels=3136,
               vision_max_n_token=384, vision_max_wh_ratio=8, vision_rope_theta=10000.0)
    return cfg


HAND_BUILT["deepseek4-vl"] = lambda out, seed: build_hand(out, seed, deepseek4v_tensors(),
                                                          deepseek4v_config())


# MiniMax-M3's projector (MiniMaxM3SparseForConditionalGeneration, minimax_m3_vl; HAND_BUILT in
# the hub layout of MiniMaxAI/MiniMax-M3, which transformers renames on load): the ViT under
# `vision_tower.vision_model.` (a Conv3d patch embedding without bias, `pre_layrnorm`, CLIP-style
# blocks whose q/k rows the reference regroups per head: its head size must be 80, so the tower
# is 80 wide with one head), `multi_modal_projector.linear_1` / `linear_2` (three blocks: they
# map through the block table) and the 2x2 merge MLP `patch_merge_mlp.linear_1` / `linear_2`;
# the spatial merge size under `img_token_compression_config`. The text config is the
# minimax-m3 fixture's; no text tensors. Projector only.
FIXTURES["minimax-m3-vl"] = ("MiniMaxM3SparseForConditionalGeneration", "minimax_m3_vl", None,
                             PRE, None, [], False)
MINIMAXM3V = dict(hidden=80, layers=3, heads=1, ffn=16, patch=2, temporal=2, proj=16, merge=2)


def minimax_m3_vl_config() -> dict:
    y = MINIMAXM3V
    text = json.loads((TESTDATA / "hf" / "minimax-m3" / "config.json").read_text())
    text.pop("architectures", None)
    text["model_type"] = "minimax_m3_vl_text"
    return {
        "architectures": ["MiniMaxM3SparseForConditionalGeneration"],
        "model_type": "minimax_m3_vl",
        "text_config": text,
        "vision_config": {
            "model_type": "minimax_m3_vl_vision", "hidden_size": y["hidden"],
            "intermediate_size": y["ffn"], "num_hidden_layers": y["layers"],
            "num_attention_heads": y["heads"], "image_size": 28, "patch_size": y["patch"],
            "temporal_patch_size": y["temporal"], "layer_norm_eps": 1e-6,
            "img_token_compression_config": {"spatial_merge_size": y["merge"]}},
        "projector_hidden_size": y["proj"],
        "image_token_index": 7, "video_token_index": 8,
    }


def minimax_m3_vl_tensors() -> dict[str, tuple[tuple[int, ...], bool]]:
    y = MINIMAXM3V
    h, f, p, t = y["hidden"], y["ffn"], y["patch"], 16
    v = "vision_tower.vision_model."
    out = {
        v + "embeddings.patch_embedding.weight": ((h, 3, y["temporal"], p, p), False),
        v + "pre_layrnorm.weight": ((h,), True), v + "pre_layrnorm.bias": ((h,), False),
        "multi_modal_projector.linear_1.weight": ((y["proj"], h), False),
        "multi_modal_projector.linear_1.bias": ((y["proj"],), False),
        "multi_modal_projector.linear_2.weight": ((t, y["proj"]), False),
        "multi_modal_projector.linear_2.bias": ((t,), False),
        "patch_merge_mlp.linear_1.weight": ((y["proj"], t * y["merge"] ** 2), False),
        "patch_merge_mlp.linear_1.bias": ((y["proj"],), False),
        "patch_merge_mlp.linear_2.weight": ((t, y["proj"]), False),
        "patch_merge_mlp.linear_2.bias": ((t,), False),
        # the text model's, dropped by the class
        "language_model.model.norm.weight": ((t,), True),
    }
    for i in range(y["layers"]):
        b = f"{v}encoder.layers.{i}."
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            out[b + f"self_attn.{n}.weight"] = ((h, h), False)
            out[b + f"self_attn.{n}.bias"] = ((h,), False)
        for n in ("layer_norm1", "layer_norm2"):
            out[b + f"{n}.weight"] = ((h,), True)
            out[b + f"{n}.bias"] = ((h,), False)
        out[b + "mlp.fc1.weight"] = ((f, h), False)
        out[b + "mlp.fc1.bias"] = ((f,), False)
        out[b + "mlp.fc2.weight"] = ((h, f), False)
        out[b + "mlp.fc2.bias"] = ((h,), False)
    return out


HAND_BUILT["minimax-m3-vl"] = lambda out, seed: build_hand(out, seed, minimax_m3_vl_tensors(),
                                                           minimax_m3_vl_config())
# DeepSeek-OCR (remote code, deepseek-ai/DeepSeek-OCR; HAND_BUILT): the deepseekocr text
# fixture's config with a small vision config in the hub's spelling (`width` naming the SAM
# and CLIP sub-configs), a SAM tower (`model.sam_model.`: patch embedding, a 4-D position
# table, two blocks with relative-position tables, the neck convolutions and `net_2` /
# `net_3`), a CLIP tower of four blocks (`model.vision_model.`: class row, patch embedding,
# position table, `pre_layrnorm`, fused `qkv_proj`; the config names four blocks, for the
# SAM neck's `neck.0..3`, which map through the block table, and the checkpoint holds the
# first two, as the reference reads names, not counts), the linear projector (32-wide rows:
# Q8_0) and the two learned rows, plus two text tensors the class filters out. Projector only (the deepseekocr fixture
# covers the text half). DeepSeek-OCR-2 (`deepseekocr2-vl`) has the SAM tower and a Qwen2
# encoder (`model.qwen2_model.`: two layers with grouped-query attention, its final norm
# and the two learned query tables) instead of CLIP; its config leaves the encoder's sizes
# out (the class's defaults stand in) as the published config does.
FIXTURES["deepseekocr-vl"] = ("DeepseekOCRForCausalLM", "deepseek_vl_v2", None, PRE, None,
                              [], False)
FIXTURES["deepseekocr2-vl"] = ("DeepseekOCR2ForCausalLM", "deepseek_vl_v2", None, PRE, None,
                               [], False)

OCR_SAM = dict(width=16, layers=2, heads=2, rel=7, neck=4, patch=4, grid=4)


def ocr_sam_tensors(text: int = 8) -> dict:
    s = OCR_SAM
    w, n = s["width"], s["neck"]
    hd = w // s["heads"]
    pre = "model.sam_model."
    out = {pre + "patch_embed.proj.weight": ((w, 3, s["patch"], s["patch"]), False),
           pre + "patch_embed.proj.bias": ((w,), False),
           pre + "pos_embed": ((1, s["grid"], s["grid"], w), False),
           pre + "neck.0.weight": ((n, w, 1, 1), False),
           pre + "neck.1.weight": ((n,), True), pre + "neck.1.bias": ((n,), False),
           pre + "neck.2.weight": ((n, n, 3, 3), False),
           pre + "neck.3.weight": ((n,), True), pre + "neck.3.bias": ((n,), False),
           pre + "net_2.weight": ((2 * n, n, 3, 3), False),
           pre + "net_3.weight": ((4 * n, 2 * n, 3, 3), False),
           "model.view_seperator": ((text,), False),
           # the text model's, left out by the class
           "model.norm.weight": ((text,), True),
           "model.layers.0.input_layernorm.weight": ((text,), True)}
    for i in range(s["layers"]):
        b = f"{pre}blocks.{i}."
        for nm in ("norm1", "norm2"):
            out[b + nm + ".weight"] = ((w,), True)
            out[b + nm + ".bias"] = ((w,), False)
        out.update({b + "attn.qkv.weight": ((3 * w, w), False), b + "attn.qkv.bias": ((3 * w,), False),
                    b + "attn.proj.weight": ((w, w), False), b + "attn.proj.bias": ((w,), False),
                    b + "attn.rel_pos_h": ((s["rel"], hd), False),
                    b + "attn.rel_pos_w": ((s["rel"], hd), False),
                    b + "mlp.lin1.weight": ((4 * w, w), False), b + "mlp.lin1.bias": ((4 * w,), False),
                    b + "mlp.lin2.weight": ((w, 4 * w), False), b + "mlp.lin2.bias": ((w,), False)})
    return out


OCR_CLIP = dict(width=16, layers=4, stored=2, heads=2, ffn=16, patch=4, image=16)


def deepseekocr_tensors(text: int = 8) -> dict:
    c = OCR_CLIP
    w, f = c["width"], c["ffn"]
    v = "model.vision_model."
    n_pos = (c["image"] // c["patch"]) ** 2 + 1
    out = ocr_sam_tensors(text)
    out.update({v + "embeddings.class_embedding": ((w,), False),
                v + "embeddings.patch_embedding.weight": ((w, 3, c["patch"], c["patch"]), False),
                v + "embeddings.position_embedding.weight": ((n_pos, w), False),
                v + "pre_layrnorm.weight": ((w,), True), v + "pre_layrnorm.bias": ((w,), False),
                "model.projector.layers.weight": ((text, 2 * w), False),
                "model.projector.layers.bias": ((text,), False),
                "model.image_newline": ((text,), False)})
    for i in range(c["stored"]):
        b = f"{v}transformer.layers.{i}."
        for nm, shape in (("self_attn.qkv_proj", (3 * w, w)), ("self_attn.out_proj", (w, w)),
                          ("mlp.fc1", (f, w)), ("mlp.fc2", (w, f))):
            out[b + nm + ".weight"] = (shape, False)
            out[b + nm + ".bias"] = ((shape[0],), False)
        for nm in ("layer_norm1", "layer_norm2"):
            out[b + nm + ".weight"] = ((w,), True)
            out[b + nm + ".bias"] = ((w,), False)
    return out


def deepseekocr_config(cls: str, width: dict, **vision) -> dict:
    cfg = json.loads((TESTDATA / "hf" / "deepseekocr" / "config.json").read_text())
    cfg["architectures"] = [cls]
    s = OCR_SAM
    sam = dict(downsample_channels=[2 * s["neck"], 4 * s["neck"]], global_attn_indexes=[1],
               heads=s["heads"], layers=s["layers"], width=s["width"])
    cfg["vision_config"] = dict(image_size=64, mlp_ratio=3.7362, model_type="vision",
                                width={**width, "sam_vit_b": sam}, **vision)
    cfg["projector_config"]["input_dim"] = 2 * OCR_CLIP["width"]
    return cfg


HAND_BUILT["deepseekocr-vl"] = lambda out, seed: build_hand(
    out, seed, deepseekocr_tensors(),
    deepseekocr_config("DeepseekOCRForCausalLM", {"clip-l-14-224": dict(
        heads=OCR_CLIP["heads"], image_size=OCR_CLIP["image"], layers=OCR_CLIP["layers"],
        patch_size=OCR_CLIP["patch"], width=OCR_CLIP["width"])}, model_name="deeplip_b_l"))

OCR2_QWEN = dict(dim=16, layers=2, heads=2, kv=1, ffn=24, queries=4)


def deepseekocr2_tensors(text: int = 8) -> dict:
    q = OCR2_QWEN
    d, f = q["dim"], q["ffn"]
    hd = d // q["heads"]
    out = ocr_sam_tensors(text)
    m = "model.qwen2_model."
    out.update({m + "model.model.norm.weight": ((d,), True),
                m + "query_768.weight": ((q["queries"], d), False),
                m + "query_1024.weight": ((q["queries"], d), False),
                "model.projector.layers.weight": ((text, d), False),
                "model.projector.layers.bias": ((text,), False)})
    for i in range(q["layers"]):
        b = f"{m}model.model.layers.{i}."
        for nm, rows in (("q_proj", d), ("k_proj", q["kv"] * hd), ("v_proj", q["kv"] * hd)):
            out[b + f"self_attn.{nm}.weight"] = ((rows, d), False)
            out[b + f"self_attn.{nm}.bias"] = ((rows,), False)
        out.update({b + "self_attn.o_proj.weight": ((d, d), False),
                    b + "mlp.gate_proj.weight": ((f, d), False),
                    b + "mlp.up_proj.weight": ((f, d), False),
                    b + "mlp.down_proj.weight": ((d, f), False),
                    b + "input_layernorm.weight": ((d,), True),
                    b + "post_attention_layernorm.weight": ((d,), True)})
    return out


HAND_BUILT["deepseekocr2-vl"] = lambda out, seed: build_hand(
    out, seed, deepseekocr2_tensors(),
    deepseekocr_config("DeepseekOCR2ForCausalLM", {"qwen2-0-5b": dict(dim=OCR2_QWEN["dim"])},
                       model_name="deepencoderv2"))
# dots.ocr's projector (DotsOCRForCausalLM, remote code in the hub layout of
# rednote-hilab/dots.ocr; HAND_BUILT): the `dots_vit` tower under `vision_tower.` (a Conv2d
# patchifier with bias and an RMS norm, blocks with a fused bias-free `qkv`, RMS `norm1` /
# `norm2` and a SwiGLU `fc1` / `fc3` / `fc2`, the `post_trunk_norm`), the patch merger
# (`merger.ln_q`, a LayerNorm, and `merger.mlp.0` / `mlp.2`: three blocks, so they map through
# the block table) and two of the text model's tensors the class filters out. The config is
# the dotsocr text fixture's with this tower. Projector only: the dotsocr fixture covers the
# text half.
FIXTURES["dotsocr-vl"] = ("DotsOCRForCausalLM", "dots_ocr", None,
                          {**QWEN_PRE, "min_pixels": 3136, "max_pixels": 11289600,
                           "patch_size": 7, "merge_size": 2, "temporal_patch_size": 1},
                          None, [], False)
DOTSOCR_VIT = dict(embed=16, layers=3, heads=2, ffn=24, patch=7, merge=2, text_hidden=16)


def dotsocr_vl_config(vit: dict = DOTSOCR_VIT) -> dict:
    cfg = json.loads((TESTDATA / "hf" / "dotsocr" / "config.json").read_text())
    cfg["hidden_size"] = vit["text_hidden"]
    cfg["vision_config"] = {
        "model_type": "dots_vit", "embed_dim": vit["embed"], "hidden_size": vit["embed"],
        "intermediate_size": vit["ffn"], "num_hidden_layers": vit["layers"],
        "num_attention_heads": vit["heads"], "num_channels": 3, "patch_size": vit["patch"],
        "temporal_patch_size": 1, "rms_norm_eps": 1e-5, "spatial_merge_size": vit["merge"],
        "post_norm": True, "use_bias": False, "is_causal": False,
    }
    return cfg


def dotsocr_vl_tensors(vit: dict = DOTSOCR_VIT) -> dict:
    e, f, p, t = vit["embed"], vit["ffn"], vit["patch"], vit["text_hidden"]
    m = e * vit["merge"] ** 2
    v = "vision_tower."
    out = {
        v + "patch_embed.patchifier.proj.weight": ((e, 3, p, p), False),
        v + "patch_embed.patchifier.proj.bias": ((e,), False),
        v + "patch_embed.patchifier.norm.weight": ((e,), True),
        v + "post_trunk_norm.weight": ((e,), True),
        v + "merger.ln_q.weight": ((e,), True),
        v + "merger.ln_q.bias": ((e,), False),
        v + "merger.mlp.0.weight": ((m, m), False),
        v + "merger.mlp.0.bias": ((m,), False),
        v + "merger.mlp.2.weight": ((t, m), False),
        v + "merger.mlp.2.bias": ((t,), False),
        # the text model's, filtered out by the class
        "model.norm.weight": ((t,), True),
        "model.embed_tokens.weight": ((4, t), False),
    }
    for i in range(vit["layers"]):
        b = f"{v}blocks.{i}."
        out.update({b + "norm1.weight": ((e,), True), b + "norm2.weight": ((e,), True),
                    b + "attn.qkv.weight": ((3 * e, e), False),
                    b + "attn.proj.weight": ((e, e), False),
                    b + "mlp.fc1.weight": ((f, e), False), b + "mlp.fc3.weight": ((f, e), False),
                    b + "mlp.fc2.weight": ((e, f), False)})
    return out


HAND_BUILT["dotsocr-vl"] = lambda out, seed: build_hand(out, seed, dotsocr_vl_tensors(),
                                                        dotsocr_vl_config())


# Phi-4-reasoning-vision (Phi4ForCausalLMV, remote code in the hub layout of
# microsoft/Phi-4-reasoning-vision-15B; HAND_BUILT): a Phi-3 text model whose config has the
# `model_type` phi4-siglip, which AutoConfig does not know (the reference reads config.json as
# written, and the tokenizer step builds a generic config from it), with the SigLIP2 NaFlex
# tower under `model.vision_tower.vision_tower.vision_model.` (a linear patch embedding over
# (ky, kx, c) patches, a 4x4 position table, three blocks, the post-LayerNorm and an attention
# pooling head, both dropped with the last block) and the mlp2x_gelu projector
# `model.mm_projector.{0,2}`. The image processor gives the patch size and the patch-count
# bounds (the config repeats the bounds at its root). Text half and projector: the text
# model's embedding is tied and drawn first (the BPE fixtures of width 8 store it once).
PHI4V = dict(text_hidden=8, ffn=16, layers=2, heads=2, kv_heads=1, vit=16, vit_ffn=24,
             vit_layers=3, vit_heads=2, patch=4, grid=4)
PHI4V_PRE = {"image_processor_type": "Siglip2ImageProcessorNoUpscale", "patch_size": 4,
             "min_num_patches": 64, "max_num_patches": 900, "image_mean": [0.5, 0.5, 0.5],
             "image_std": [0.5, 0.5, 0.5], "do_normalize": True, "do_rescale": True,
             "do_resize": True, "resample": 2, "rescale_factor": 1 / 255}
FIXTURES["phi4v"] = ("Phi4ForCausalLMV", "phi4-siglip", None, PHI4V_PRE, None, BPE_STORED,
                     True)


def phi4v_config(d: dict = PHI4V) -> dict:
    return {
        "architectures": ["Phi4ForCausalLMV"], "model_type": "phi4-siglip",
        "auto_map": {"AutoConfig": "configuration_phi4_visionr.Phi4VisionR",
                     "AutoModelForCausalLM": "modeling_phi4_visionr.Phi4ForCausalLMV"},
        "attention_bias": False, "attention_dropout": 0.0, "bos_token_id": 1,
        "embd_pdrop": 0.0, "eos_token_id": 2, "hidden_act": "silu",
        "hidden_size": d["text_hidden"], "initializer_range": 0.02,
        "intermediate_size": d["ffn"], "max_position_embeddings": 4096,
        "min_num_patches": 64, "max_num_patches": 900, "mm_hidden_size": d["vit"],
        "mm_projector_type": "mlp2x_gelu", "mm_vision_tower": "google/siglip2-so400m-patch16-naflex",
        "num_attention_heads": d["heads"], "num_hidden_layers": d["layers"],
        "num_key_value_heads": d["kv_heads"], "original_max_position_embeddings": 4096,
        "pad_token_id": 0, "resid_pdrop": 0.0, "rms_norm_eps": 1e-05, "rope_scaling": None,
        "rope_theta": 250000.0, "sliding_window": None, "tie_word_embeddings": True,
        "torch_dtype": "bfloat16", "use_cache": True, "vocab_size": BPE_VOCAB,
        "vision_config": {
            "model_type": "siglip2_vision_model", "hidden_size": d["vit"],
            "intermediate_size": d["vit_ffn"], "num_hidden_layers": d["vit_layers"],
            "num_attention_heads": d["vit_heads"], "num_channels": 3, "num_patches": d["grid"] ** 2,
            "patch_size": d["patch"], "hidden_act": "gelu_pytorch_tanh", "layer_norm_eps": 1e-6,
            "attention_dropout": 0.0, "vision_use_head": True,
        },
    }


def phi4v_tensors(d: dict = PHI4V) -> dict:
    e, f, t, i = d["vit"], d["vit_ffn"], d["text_hidden"], d["ffn"]
    hd = t // d["heads"]
    qkv = (d["heads"] + 2 * d["kv_heads"]) * hd
    v = "model.vision_tower.vision_tower.vision_model."
    out = {
        "model.embed_tokens.weight": ((BPE_VOCAB, t), False),
        "model.norm.weight": ((t,), True),
        v + "embeddings.patch_embedding.weight": ((e, 3 * d["patch"] ** 2), False),
        v + "embeddings.patch_embedding.bias": ((e,), False),
        v + "embeddings.position_embedding.weight": ((d["grid"] ** 2, e), False),
        v + "post_layernorm.weight": ((e,), True),
        v + "post_layernorm.bias": ((e,), False),
        v + "head.probe": ((1, 1, e), False),
        v + "head.layernorm.weight": ((e,), True),
        v + "head.mlp.fc1.weight": ((f, e), False),
        "model.mm_projector.0.weight": ((t, e), False),
        "model.mm_projector.0.bias": ((t,), False),
        "model.mm_projector.2.weight": ((t, t), False),
        "model.mm_projector.2.bias": ((t,), False),
    }
    for b in range(d["layers"]):
        p = f"model.layers.{b}."
        out.update({p + "input_layernorm.weight": ((t,), True),
                    p + "post_attention_layernorm.weight": ((t,), True),
                    p + "self_attn.qkv_proj.weight": ((qkv, t), False),
                    p + "self_attn.o_proj.weight": ((t, t), False),
                    p + "mlp.gate_up_proj.weight": ((2 * i, t), False),
                    p + "mlp.down_proj.weight": ((t, i), False)})
    for b in range(d["vit_layers"]):
        p = f"{v}encoder.layers.{b}."
        for n in ("layer_norm1", "layer_norm2"):
            out.update({p + n + ".weight": ((e,), True), p + n + ".bias": ((e,), False)})
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            out.update({p + "self_attn." + n + ".weight": ((e, e), False),
                        p + "self_attn." + n + ".bias": ((e,), False)})
        out.update({p + "mlp.fc1.weight": ((f, e), False), p + "mlp.fc1.bias": ((f,), False),
                    p + "mlp.fc2.weight": ((e, f), False), p + "mlp.fc2.bias": ((e,), False)})
    return out


HAND_BUILT["phi4v"] = lambda out, seed: build_hand(out, seed, phi4v_tensors(), phi4v_config())


# Nemotron Nano VL V2 (NemotronH_Nano_VL_V2, remote code in the hub layout of
# nvidia/NVIDIA-Nemotron-Nano-12B-v2-VL-BF16; HAND_BUILT): the RADIO tower under
# `vision_model.radio_model.model.` (the patch generator's `cls_token.token`, its linear
# `embedder` and bare `pos_embed`, timm blocks with a fused `qkv`), the `input_conditioner` and
# `video_embedder` the class drops, the `mlp1.{0,1,3}` projector (an RMS norm and two linears)
# and one text tensor (`language_model.`, dropped). `vision_config.architectures` names
# `RADIOModel`, the class the reference picks. The reference takes the tower's sizes as
# RADIO v2.5-h's (width 1280, 32 blocks, 16 heads) whatever the config says, so the patch
# embedding and the position table are 1280 wide while the blocks stay 32 wide: the embedding
# is reshaped to [1280, 3, p, p] (patch 1 here) and the 3 x 3 position table is resized to
# force_image_size / patch = 4 per side (bilinear, align_corners). Projector only: the text half
# is converted as `llm_config.architectures` names it (Nemotron-H, the nemotronh fixture's
# family), and this `llm_config` is a stub. `nemotron-omni` adds the Parakeet sound tower and projector of
# Nemotron-3-Nano-Omni (`sound_config`, `sound_encoder.`, `sound_projection.`).
RADIO = dict(width=32, ffn=64, layers=2, cls=3, grid=3, patch=1, image=4, proj=48,
             text_hidden=32)


def nemotron_vl_config(r: dict = RADIO) -> dict:
    return {
        "architectures": ["NemotronH_Nano_VL_V2"], "model_type": "NemotronH_Nano_VL_V2",
        "auto_map": {"AutoConfig": "configuration.NemotronH_Nano_VL_V2_Config",
                     "AutoModel": "modeling.NemotronH_Nano_VL_V2"},
        "force_image_size": r["image"], "downsample_ratio": 0.5, "patch_size": r["patch"],
        "template": "nemotron_h", "ps_version": "v2", "image_tag_type": "internvl",
        "projector_hidden_size": r["proj"], "vit_hidden_size": 1280,
        "img_context_token_id": 18, "torch_dtype": "bfloat16",
        "vision_config": {
            "architectures": ["RADIOModel"], "model_type": "radio",
            "auto_map": {"AutoConfig": "radio_model.RADIOConfig",
                         "AutoModel": "radio_model.RADIOModel"},
            "version": "radio_v2.5-h", "patch_size": r["patch"], "max_resolution": 2048,
            "preferred_resolution": [512, 512], "torch_dtype": "bfloat16",
        },
        "llm_config": {
            "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h",
            "hidden_size": r["text_hidden"], "num_hidden_layers": 2,
            "hybrid_override_pattern": "M*", "vocab_size": 4,
        },
    }


def nemotron_vl_tensors(r: dict = RADIO) -> dict:
    w, f, p, t = r["width"], r["ffn"], r["patch"], r["text_hidden"]
    v = "vision_model.radio_model."
    g = v + "model.patch_generator."
    out = {
        v + "input_conditioner.norm_mean": ((3, 1, 1), False),
        v + "input_conditioner.norm_std": ((3, 1, 1), True),
        g + "cls_token.token": ((r["cls"], w), False),
        g + "embedder.weight": ((1280, 3 * p * p), False),
        g + "pos_embed": ((1, r["grid"] ** 2, 1280), False),
        g + "video_embedder.weight": ((w, 6 * p * p), False),
        "mlp1.0.weight": ((4 * w,), True),
        "mlp1.1.weight": ((r["proj"], 4 * w), False),
        "mlp1.3.weight": ((t, r["proj"]), False),
        "language_model.backbone.embeddings.weight": ((4, t), False),
    }
    for i in range(r["layers"]):
        b = f"{v}model.blocks.{i}."
        out.update({b + "norm1.weight": ((w,), True), b + "norm1.bias": ((w,), False),
                    b + "norm2.weight": ((w,), True), b + "norm2.bias": ((w,), False),
                    b + "attn.qkv.weight": ((3 * w, w), False),
                    b + "attn.qkv.bias": ((3 * w,), False),
                    b + "attn.proj.weight": ((w, w), False), b + "attn.proj.bias": ((w,), False),
                    b + "mlp.fc1.weight": ((f, w), False), b + "mlp.fc1.bias": ((f,), False),
                    b + "mlp.fc2.weight": ((w, f), False), b + "mlp.fc2.bias": ((w,), False)})
    return out


FIXTURES["nemotron-vl"] = ("NemotronH_Nano_VL_V2", "NemotronH_Nano_VL_V2", None, None, None,
                           [], False)
HAND_BUILT["nemotron-vl"] = lambda out, seed: build_hand(out, seed, nemotron_vl_tensors(),
                                                         nemotron_vl_config())


# Nemotron-3-Nano-Omni's projector file (NemotronH_Nano_VL_V2 with a `sound_config`; HAND_BUILT):
# the nemotron-vl fixture's checkpoint (named through shared-files.txt) and a second shard,
# `model-sound.safetensors` (both in model.safetensors.index.json), with the Parakeet encoder in transformers' layout under `sound_encoder.encoder.` (the
# depthwise-separable subsampling convolutions `subsampling.layers.{0,2,3,5,6}` and `linear`,
# two conformer blocks with relative-position attention, `bias_u` / `bias_v`, the convolution
# module and its batch norm with `num_batches_tracked`), the NeMo featurizer's mel filters and
# window, and the `sound_projection` RMS norm and two linears, drawn after it.
PARAKEET = dict(hidden=16, heads=2, layers=2, ffn=24, channels=4, mels=8, kernel=3, n_fft=16)


def parakeet_tensors(a: dict = PARAKEET, text_hidden: int = RADIO["text_hidden"]) -> dict:
    h, c, k = a["hidden"], a["channels"], a["kernel"]
    e = "sound_encoder.encoder."
    out = {
        e + "feature_extractor.featurizer.fb": ((1, a["mels"], a["n_fft"] // 2 + 1), False),
        e + "feature_extractor.featurizer.window": ((a["n_fft"],), False),
        e + "subsampling.linear.weight": ((h, c * (a["mels"] // 8)), False),
        e + "subsampling.linear.bias": ((h,), False),
        "sound_projection.norm.weight": ((h,), True),
        "sound_projection.linear1.weight": ((2 * h, h), False),
        "sound_projection.linear2.weight": ((text_hidden, 2 * h), False),
    }
    for i, shape in ((0, (c, 1, 3, 3)), (2, (c, 1, 3, 3)), (3, (c, c, 1, 1)),
                     (5, (c, 1, 3, 3)), (6, (c, c, 1, 1))):
        out[e + f"subsampling.layers.{i}.weight"] = (shape, False)
        out[e + f"subsampling.layers.{i}.bias"] = ((c,), False)
    for i in range(a["layers"]):
        b = f"{e}layers.{i}."
        for ff in ("feed_forward1", "feed_forward2"):
            out.update({b + f"{ff}.linear1.weight": ((a["ffn"], h), False),
                        b + f"{ff}.linear1.bias": ((a["ffn"],), False),
                        b + f"{ff}.linear2.weight": ((h, a["ffn"]), False),
                        b + f"{ff}.linear2.bias": ((h,), False)})
        for nm in ("q_proj", "k_proj", "v_proj", "o_proj"):
            out[b + f"self_attn.{nm}.weight"] = ((h, h), False)
            out[b + f"self_attn.{nm}.bias"] = ((h,), False)
        out.update({
            b + "self_attn.bias_u": ((a["heads"], h // a["heads"]), False),
            b + "self_attn.bias_v": ((a["heads"], h // a["heads"]), False),
            b + "self_attn.relative_k_proj.weight": ((h, h), False),
            b + "conv.pointwise_conv1.weight": ((2 * h, h, 1), False),
            b + "conv.pointwise_conv1.bias": ((2 * h,), False),
            b + "conv.depthwise_conv.weight": ((h, 1, k), False),
            b + "conv.depthwise_conv.bias": ((h,), False),
            b + "conv.norm.weight": ((h,), True), b + "conv.norm.bias": ((h,), False),
            b + "conv.norm.running_mean": ((h,), False),
            b + "conv.norm.running_var": ((h,), True),
            b + "conv.pointwise_conv2.weight": ((h, h, 1), False),
            b + "conv.pointwise_conv2.bias": ((h,), False),
        })
        for nm in ("norm_feed_forward1", "norm_self_att", "norm_conv", "norm_feed_forward2",
                   "norm_out"):
            out[b + f"{nm}.weight"] = ((h,), True)
            out[b + f"{nm}.bias"] = ((h,), False)
    return out


def nemotron_omni_config(a: dict = PARAKEET) -> dict:
    cfg = nemotron_vl_config()
    cfg["sound_context_token_id"] = 27
    cfg["sound_config"] = {
        "model_type": "parakeet", "hidden_size": a["hidden"], "num_attention_heads": a["heads"],
        "num_hidden_layers": a["layers"], "intermediate_size": a["ffn"],
        "conv_kernel_size": a["kernel"], "subsampling_conv_channels": a["channels"],
        "subsampling_conv_kernel_size": 3, "subsampling_conv_stride": 2,
        "subsampling_factor": 8, "num_mel_bins": a["mels"], "sampling_rate": 16000,
        "projection_hidden_size": 2 * a["hidden"],
    }
    return cfg


def build_nemotron_omni(out: Path, seed: int) -> None:
    import torch
    from safetensors.torch import load_file, save_file

    build_hand(out, seed, parakeet_tensors(), nemotron_omni_config())
    tensors = load_file(str(out / "model.safetensors"))
    (out / "model.safetensors").unlink()  # the nemotron-vl checkpoint, through shared-files.txt
    for i in range(PARAKEET["layers"]):
        name = f"sound_encoder.encoder.layers.{i}.conv.norm.num_batches_tracked"
        tensors[name] = torch.tensor(7, dtype=torch.int64)
    save_file(tensors, str(out / "model-sound.safetensors"), metadata={"format": "pt"})
    vision = load_file(str(TESTDATA / "hf" / "nemotron-vl" / "model.safetensors"))
    weight_map = {**{n: "model.safetensors" for n in vision},
                  **{n: "model-sound.safetensors" for n in tensors}}
    (out / "model.safetensors.index.json").write_text(json.dumps(
        {"metadata": {}, "weight_map": dict(sorted(weight_map.items()))}, indent=2) + "\n")


FIXTURES["nemotron-omni"] = ("NemotronH_Nano_VL_V2", "NemotronH_Nano_VL_V2", None, None, None,
                             [("model.safetensors", "../nemotron-vl")], False)
HAND_BUILT["nemotron-omni"] = build_nemotron_omni


# Granite Speech (GraniteSpeechForConditionalGeneration, built by transformers and re-saved in
# the hub layout of ibm-granite/granite-speech-3.3-2b, RENAME: `encoder.`, `projector.`,
# `language_model.model.`): a Conformer encoder of one block whose width (15) and so its
# batch norm's channel count is odd, with drawn running statistics (BUFFER_DRAWS: the
# reference folds them into the norm's weight and bias), a one-layer QFormer projector of
# width 16 (its FFN 32 wide: Q8_0 rows) and a one-layer Granite text model (hidden 8, tied,
# the shared SentencePiece vocabulary) whose class the text config names, as the hub's does. Granite Speech Plus is a composite
# variant of this checkpoint (make_composite_variants.py: its class and model types, the
# encoder's `cat_hidden_layers`, the QFormer's input width they imply), which the reference
# checks from the config alone.
GRANITE_SPEECH_TEXT = dict(model_type="granite", hidden_size=8, intermediate_size=24,
                           num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=1,
                           vocab_size=SPM_VOCAB, max_position_embeddings=256,
                           tie_word_embeddings=True, embedding_multiplier=12.0,
                           attention_multiplier=0.0078125, residual_multiplier=0.22,
                           logits_scaling=8.0, architectures=["GraniteForCausalLM"])
GRANITE_SPEECH_ENCODER = dict(input_dim=10, num_layers=1, hidden_dim=15, feedforward_mult=2,
                              num_heads=3, dim_head=4, output_dim=7, context_size=8,
                              max_pos_emb=16, conv_kernel_size=3, conv_expansion_factor=1)
FIXTURES["granitespeech"] = (
    "GraniteSpeechForConditionalGeneration", "granite_speech",
    dict(text_config=GRANITE_SPEECH_TEXT, encoder_config=GRANITE_SPEECH_ENCODER,
         projector_config=dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                               intermediate_size=32, encoder_hidden_size=15,
                               cross_attention_frequency=1),
         window_size=4, downsample_rate=2, has_lora_adapter=False, audio_token_index=5),
    {"sampling_rate": 16000}, None, SPM_STORED, True)


# MiMo-V2.5's projector (MiMoV2ForCausalLM, remote code in the hub layout of
# XiaomiMiMo/MiMo-V2.5; HAND_BUILT): a vision tower and an audio encoder in one file. The
# vision tower under `visual.` (a Conv3D patch embedding, blocks with a fused GQA `qkv` with
# bias, attention sinks, RMS `norm1` / `norm2` and a SwiGLU MLP with biases, the merger's
# `ln_q` and `mlp.0` / `mlp.2`); the LLM-side audio connector (`speech_embeddings.{i}`, one
# table per audio channel, stacked by the class; `audio_encoder.input_local_transformer` and
# `audio_encoder.projection`) and two text tensors the class filters out. The audio encoder
# itself is a model of its own in `audio_tokenizer/` (its config.json and one
# model.safetensors): a Whisper-style encoder, the downsampling convolution and norm, three
# RVQ codebooks of unequal sizes (float32, so stored after the bf16 tensors: the class reads
# them in file order) with their EMA buffers, and a decoder tensor the class skips.
# Projector only: the mimo2 fixture covers the text half.
MIMO_PRE = {**QWEN_PRE, "min_pixels": 3136, "max_pixels": 12845056, "patch_size": 7,
            "merge_size": 2, "temporal_patch_size": 2}
FIXTURES["mimo-vl"] = ("MiMoV2ForCausalLM", "mimo_v2", None, MIMO_PRE, None, [], False)
MIMO = dict(text=16, v_hidden=16, v_layers=3, v_heads=2, v_kv=1, v_hd=8, v_ffn=24, patch=7,
            merge=2, channels=3, code_vocab=9, local_layers=2, group=2, a_hidden=16, a_ffn=24,
            a_heads=2, a_layers=2, mels=8, codebooks=(8, 6, 8))


def mimo_vl_config(m: dict = MIMO) -> dict:
    return {
        "architectures": ["MiMoV2ForCausalLM"], "model_type": "mimo_v2",
        "hidden_size": m["text"], "num_hidden_layers": 3, "vocab_size": 49152,
        "vision_config": {
            "depth": m["v_layers"], "hidden_size": m["v_hidden"],
            "intermediate_size": m["v_ffn"], "num_heads": m["v_heads"],
            "num_key_value_heads": m["v_kv"], "qk_channels": m["v_hd"],
            "patch_size": m["patch"], "spatial_merge_size": m["merge"],
            "temporal_patch_size": 2, "in_chans": 3, "out_hidden_size": m["text"],
            "fullatt_block_indexes": [2], "vit_window_attn_types": [0, 1, -1],
            "visual_token_window_size": 64, "use_sink": True, "hidden_act": "silu",
        },
        "audio_config": {
            "audio_channels": m["channels"], "input_local_layers": m["local_layers"],
            "group_size": m["group"], "input_local_dim": m["a_hidden"],
        },
    }


def mimo_vl_tensors(m: dict = MIMO) -> dict:
    e, f, hd, t = m["v_hidden"], m["v_ffn"], m["v_hd"], m["text"]
    qkv = (m["v_heads"] + 2 * m["v_kv"]) * hd
    mm = e * m["merge"] ** 2
    out = {
        "visual.patch_embed.proj.weight": ((e, 3, 2, m["patch"], m["patch"]), False),
        "visual.merger.ln_q.weight": ((e,), True),
        "visual.merger.mlp.0.weight": ((mm, mm), False),
        "visual.merger.mlp.0.bias": ((mm,), False),
        "visual.merger.mlp.2.weight": ((t, mm), False),
        "visual.merger.mlp.2.bias": ((t,), False),
        "audio_encoder.input_local_transformer.norm.weight": ((m["a_hidden"],), True),
        "audio_encoder.projection.mlp.0.weight": ((t, m["a_hidden"] * m["group"]), False),
        "audio_encoder.projection.mlp.2.weight": ((t, t), False),
        # the text model's, filtered out by the class
        "model.norm.weight": ((t,), True),
        "model.embed_tokens.weight": ((4, t), False),
    }
    for i in range(m["channels"]):
        out[f"speech_embeddings.{i}.weight"] = ((m["code_vocab"], m["a_hidden"]), False)
    for i in range(m["v_layers"]):
        b = f"visual.blocks.{i}."
        out.update({b + "norm1.weight": ((e,), True), b + "norm2.weight": ((e,), True),
                    b + "attn.qkv.weight": ((qkv, e), False), b + "attn.qkv.bias": ((qkv,), False),
                    b + "attn.proj.weight": ((e, m["v_heads"] * hd), False),
                    b + "attn.proj.bias": ((e,), False),
                    b + "attn.sinks": ((m["v_heads"],), False)})
        for nm, shape in (("gate_proj", (f, e)), ("up_proj", (f, e)), ("down_proj", (e, f))):
            out[b + f"mlp.{nm}.weight"] = (shape, False)
            out[b + f"mlp.{nm}.bias"] = ((shape[0],), False)
    a = m["a_hidden"]
    for i in range(m["local_layers"]):
        b = f"audio_encoder.input_local_transformer.layers.{i}."
        for nm in ("q_proj", "k_proj", "v_proj"):
            out[b + f"self_attn.{nm}.weight"] = ((a, a), False)
            out[b + f"self_attn.{nm}.bias"] = ((a,), False)
        out.update({b + "self_attn.o_proj.weight": ((a, a), False),
                    b + "mlp.gate_proj.weight": ((m["a_ffn"], a), False),
                    b + "mlp.up_proj.weight": ((m["a_ffn"], a), False),
                    b + "mlp.down_proj.weight": ((a, m["a_ffn"]), False),
                    b + "input_layernorm.weight": ((a,), True),
                    b + "post_attention_layernorm.weight": ((a,), True)})
    return out


def mimo_audio_tokenizer_config(m: dict = MIMO) -> dict:
    return {
        "model_type": "mimo_audio_tokenizer", "d_model": m["a_hidden"],
        "encoder_ffn_dim": m["a_ffn"], "encoder_attention_heads": m["a_heads"],
        "encoder_layers": m["a_layers"], "n_mels": m["mels"], "hybrid_attention": True,
        "swa_per_block": 2, "encoder_attn_window_size": [4, 4],
        "codebook_size": list(m["codebooks"]), "num_quantizers": len(m["codebooks"]),
        "decoder_layers": 1, "sampling_rate": 24000, "hop_length": 240,
    }


def mimo_audio_tokenizer_tensors(m: dict = MIMO) -> dict:
    """name -> (shape, is_norm, float32): the encoder in bf16, the codebooks' tensors in
    float32 (as the published tokenizer stores its RVQ buffers)."""
    d, f, mel = m["a_hidden"], m["a_ffn"], m["mels"]
    out = {
        "encoder.conv1.weight": ((d, mel, 3), False, False),
        "encoder.conv1.bias": ((d,), False, False),
        "encoder.conv2.weight": ((d, d, 3), False, False),
        "encoder.conv2.bias": ((d,), False, False),
        "encoder.layer_norm.weight": ((d,), True, False),
        "encoder.layer_norm.bias": ((d,), False, False),
        "encoder.down_sample_layer.0.weight": ((d, d, 2), False, False),
        "encoder.down_sample_norm.weight": ((d,), True, False),
        "encoder.down_sample_norm.bias": ((d,), False, False),
        "decoder.fc.weight": ((4, d), False, False),
    }
    for i in range(m["a_layers"]):
        b = f"encoder.layers.{i}."
        for nm in ("q_proj", "k_proj", "v_proj", "out_proj"):
            out[b + f"self_attn.{nm}.weight"] = ((d, d), False, False)
            if nm != "k_proj":
                out[b + f"self_attn.{nm}.bias"] = ((d,), False, False)
        for nm in ("self_attn_layer_norm", "final_layer_norm"):
            out[b + f"{nm}.weight"] = ((d,), True, False)
            out[b + f"{nm}.bias"] = ((d,), False, False)
        # the last block's fc2 bias in float32: stored before the bf16 tensors, so file
        # order is not name order
        out.update({b + "fc1.weight": ((f, d), False, False), b + "fc1.bias": ((f,), False, False),
                    b + "fc2.weight": ((d, f), False, False),
                    b + "fc2.bias": ((d,), False, i == m["a_layers"] - 1)})
    for i, n in enumerate(m["codebooks"]):
        b = f"encoder.quantizer.vq.layers.{i}._codebook."
        out.update({b + "embed": ((n, d), False, True), b + "embed_avg": ((n, d), False, True),
                    b + "cluster_size": ((n,), False, True), b + "inited": ((1,), False, True)})
    return out


def build_mimo_vl(out: Path, seed: int, m: dict = MIMO) -> None:
    """The main checkpoint as build_hand draws it, then audio_tokenizer/ (its tensors drawn
    the same way after the main ones, bf16 or float32 as the table says)."""
    import numpy as np
    import torch
    from safetensors.torch import save_file

    build_hand(out, seed, mimo_vl_tensors(m), mimo_vl_config(m))
    rng = np.random.default_rng(seed + 1)
    spec = mimo_audio_tokenizer_tensors(m)
    tensors = {}
    for name in sorted(spec):
        shape, is_norm, f32 = spec[name]
        v = 1.0 + 0.05 * rng.standard_normal(shape) if is_norm \
            else 0.02 * rng.standard_normal(shape)
        t = torch.from_numpy(v.astype(np.float32))
        tensors[name] = t if f32 else t.to(torch.bfloat16)
    sub = out / "audio_tokenizer"
    sub.mkdir()
    save_file(tensors, str(sub / "model.safetensors"), metadata={"format": "pt"})
    (sub / "config.json").write_text(json.dumps(mimo_audio_tokenizer_config(m), indent=2) + "\n")


HAND_BUILT["mimo-vl"] = build_mimo_vl


def build(name: str, out: Path, seed: int) -> None:
    import numpy as np
    import torch
    import transformers

    cls_name, model_type, kw, pre, _, _, _ = FIXTURES[name]
    if name in HAND_BUILT:
        HAND_BUILT[name](out, seed)
        if pre is not None:  # None: the published checkpoint ships none
            (out / "preprocessor_config.json").write_text(json.dumps(pre, indent=2) + "\n")
        return
    config = transformers.AutoConfig.for_model(model_type, **json.loads(json.dumps(kw)))
    config.architectures = [cls_name]
    torch.manual_seed(seed)
    model = getattr(transformers, BUILD_CLASS.get(name, cls_name))(config)
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        params = dict(model.named_parameters())
        first = [n for n in DRAW_FIRST.get(name, []) if n in params]
        for pname in first + sorted(n for n in params if n not in first):
            p = params[pname]
            shape = tuple(p.shape)
            is_norm = ("norm" in pname or "ln_" in pname or "layernorm" in pname.lower()) \
                and p.ndim == 1 and pname.endswith("weight")
            v = 1.0 + 0.05 * rng.standard_normal(shape) if is_norm \
                else 0.02 * rng.standard_normal(shape)
            p.copy_(torch.from_numpy(v.astype(np.float32)))
        if name in BUFFER_DRAWS:
            for bname, b in sorted(model.named_buffers()):
                v = BUFFER_DRAWS[name](bname, tuple(b.shape), rng)
                if v is not None:
                    b.copy_(torch.from_numpy(v.astype(np.float32)))
        if name in CLIP_BOUNDS:
            for bname, b in sorted(model.named_buffers()):
                last = bname.rsplit(".", 1)[-1]
                if last in ("input_min", "input_max", "output_min", "output_max"):
                    x = 1.0 + abs(rng.standard_normal())
                    b.fill_(-x if last.endswith("min") else x)
    model = model.to(torch.bfloat16)
    model.save_pretrained(out)
    if name in BUILD_CLASS:
        # save_pretrained names the class it saved
        cfg = json.loads((out / "config.json").read_text())
        cfg["architectures"] = [cls_name]
        (out / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    if name in CONFIG_EDITS:
        cfg = json.loads((out / "config.json").read_text())
        CONFIG_EDITS[name](cfg)
        (out / "config.json").write_text(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
    (out / "preprocessor_config.json").write_text(json.dumps(pre, indent=2) + "\n")
    for f, content in OWN_FILES.get(name, {}).items():
        (out / f).write_text(json.dumps(content, indent=2) + "\n")
    for f in ("generation_config.json",):
        (out / f).unlink(missing_ok=True)
    if name in EXTRA_TENSORS:
        mf.add_tensors(out / "model.safetensors", EXTRA_TENSORS[name], kw, seed + 1)
    if name in DROP:
        from safetensors.torch import load_file, save_file
        st = out / "model.safetensors"
        tensors = {k: v for k, v in load_file(str(st)).items() if k not in DROP[name]}
        save_file(tensors, str(st), metadata={"format": "pt"})
    if name in DROP_PREFIX:
        from safetensors.torch import load_file, save_file
        st = out / "model.safetensors"
        tensors = {k: v for k, v in load_file(str(st)).items()
                   if not k.startswith(tuple(DROP_PREFIX[name]))}
        save_file(tensors, str(st), metadata={"format": "pt"})
    if name in NO_TEXT_WEIGHTS:
        from safetensors.torch import load_file, save_file
        st = out / "model.safetensors"
        tensors = {k: v for k, v in load_file(str(st)).items()
                   if "language_model." not in k and not k.startswith("lm_head.")}
        save_file(tensors, str(st), metadata={"format": "pt"})
    if name in TRANSPOSE:
        from safetensors.torch import load_file, save_file
        st = out / "model.safetensors"
        tensors = {k: v.transpose(1, 2).contiguous()
                   if any(k.endswith(s) for s in TRANSPOSE[name]) else v
                   for k, v in load_file(str(st)).items()}
        save_file(tensors, str(st), metadata={"format": "pt"})
    if name in RENAME:
        from safetensors.torch import load_file, save_file
        st = out / "model.safetensors"
        tensors = load_file(str(st))
        renamed = {}
        for k, v in tensors.items():
            for old, new in RENAME[name]:
                if k.startswith(old):
                    k = new + k[len(old):]
                    break
            renamed[k] = v
        save_file(renamed, str(st), metadata={"format": "pt"})


# LFM2-Audio (Lfm2AudioForConditionalGeneration, remote code in the hub layout of
# LiquidAI/LFM2-Audio-1.5B; HAND_BUILT): the FastConformer encoder under `conformer.` (config
# `encoder`: the depthwise-striding subsampling `pre_encode.conv.{0,2,3,5,6}` and
# `pre_encode.out`, blocks with two half-step FFNs, relative-position attention with its
# `linear_pos` and `pos_bias_u` / `pos_bias_v`, and the convolution module whose batch norm
# has drawn running statistics and a step counter), the adapter `audio_adapter.model.{0,1,3}`,
# the audio-output embedding `audio_embedding.*` (kept by the class), and tensors it drops:
# the LFM2 text model (`lfm.`, config `lfm`), the depthformer, its linear and embeddings,
# the codebook offsets and the loss weights. Width 5 (one head: odd channel counts),
# four blocks (the adapter's `model.3` and the subsampling convolutions map through the
# block table: the release's `conv.5` / `conv.6` need seven, so the fixture has the first
# stage only, `conv.{0,2,3}`, and `pre_encode.out` reads its 4 channels x 8 mel bins).
# Projector only.
LFM2A = dict(d=5, layers=4, heads=1, ff=10, kernel=3, channels=4, mel=16, text=16)


def lfm2audio_config() -> dict:
    a = LFM2A
    return {
        "architectures": ["Lfm2AudioForConditionalGeneration"],
        "codebooks": 2, "audio_vocab_size": 6, "interleaved_n_text": 6,
        "interleaved_n_audio": 12, "adapter_hidden_dims": [a["text"]],
        "adapter_use_layer_norm": True,
        "encoder": {"feat_in": a["mel"], "feat_out": -1, "n_layers": a["layers"],
                    "d_model": a["d"], "subsampling": "dw_striding", "subsampling_factor": 8,
                    "subsampling_conv_channels": a["channels"], "ff_expansion_factor": 2,
                    "self_attention_model": "rel_pos", "n_heads": a["heads"],
                    "att_context_size": [-1, -1], "xscaling": False, "untie_biases": True,
                    "pos_emb_max_len": 5000, "conv_kernel_size": a["kernel"],
                    "conv_norm_type": "batch_norm"},
        "lfm": {"architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2",
                "hidden_size": a["text"], "intermediate_size": 24, "num_hidden_layers": 2,
                "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 64,
                "layer_types": ["conv", "full_attention"]},
        "depthformer": {"layers": 1, "dim": 8, "num_heads": 2, "num_kv_heads": 1, "tie": True},
    }


def lfm2audio_tensors() -> dict[str, tuple[tuple[int, ...], bool]]:
    a = LFM2A
    d, f, c, t = a["d"], a["ff"], a["channels"], a["text"]
    out = {
        "conformer.pre_encode.conv.0.weight": ((c, 1, 3, 3), False),
        "conformer.pre_encode.conv.0.bias": ((c,), False),
        "conformer.pre_encode.conv.2.weight": ((c, 1, 3, 3), False),
        "conformer.pre_encode.conv.2.bias": ((c,), False),
        "conformer.pre_encode.conv.3.weight": ((c, c, 1, 1), False),
        "conformer.pre_encode.conv.3.bias": ((c,), False),
        "conformer.pre_encode.out.weight": ((d, c * a["mel"] // 2), False),
        "conformer.pre_encode.out.bias": ((d,), False),
        "audio_adapter.model.0.weight": ((d,), True),
        "audio_adapter.model.0.bias": ((d,), False),
        "audio_adapter.model.1.weight": ((t, d), False),
        "audio_adapter.model.1.bias": ((t,), False),
        "audio_adapter.model.3.weight": ((t, t), False),
        "audio_adapter.model.3.bias": ((t,), False),
        "audio_embedding.embedding.weight": ((12, t), False),
        "audio_embedding.embedding_norm.weight": ((t,), True),
        "audio_embedding.to_logits.weight": ((12, t), False),
        # dropped by the class
        "lfm.embedding_norm.weight": ((t,), True),
        "lfm.embed_tokens.weight": ((4, t), False),
        "depthformer.layers.0.operator_norm.weight": ((8,), True),
        "depth_linear.weight": ((16, t), False),
        "depth_embeddings.0.embedding.weight": ((6, 8), False),
        "audio_loss_weight": ((2,), False),
    }
    for i in range(a["layers"]):
        b = f"conformer.layers.{i}."
        for n in ("norm_feed_forward1", "norm_conv", "norm_self_att", "norm_feed_forward2",
                  "norm_out"):
            out[b + n + ".weight"] = ((d,), True)
            out[b + n + ".bias"] = ((d,), False)
        for ffn in ("feed_forward1", "feed_forward2"):
            out[b + ffn + ".linear1.weight"] = ((f, d), False)
            out[b + ffn + ".linear1.bias"] = ((f,), False)
            out[b + ffn + ".linear2.weight"] = ((d, f), False)
            out[b + ffn + ".linear2.bias"] = ((d,), False)
        for n in ("linear_q", "linear_k", "linear_v", "linear_out"):
            out[b + f"self_attn.{n}.weight"] = ((d, d), False)
            out[b + f"self_attn.{n}.bias"] = ((d,), False)
        out[b + "self_attn.linear_pos.weight"] = ((d, d), False)
        out[b + "self_attn.pos_bias_u"] = ((a["heads"], d // a["heads"]), False)
        out[b + "self_attn.pos_bias_v"] = ((a["heads"], d // a["heads"]), False)
        out[b + "conv.pointwise_conv1.weight"] = ((2 * d, d, 1), False)
        out[b + "conv.pointwise_conv1.bias"] = ((2 * d,), False)
        out[b + "conv.depthwise_conv.weight"] = ((d, 1, a["kernel"]), False)
        out[b + "conv.depthwise_conv.bias"] = ((d,), False)
        out[b + "conv.batch_norm.weight"] = ((d,), True)
        out[b + "conv.batch_norm.bias"] = ((d,), False)
        out[b + "conv.batch_norm.running_mean"] = ((d,), False)
        out[b + "conv.batch_norm.running_var"] = ((d,), False)
        out[b + "conv.pointwise_conv2.weight"] = ((d, d, 1), False)
        out[b + "conv.pointwise_conv2.bias"] = ((d,), False)
    return out


def build_lfm2audio(out: Path, seed: int) -> None:
    """The hand-drawn checkpoint, its batch norms' running statistics redrawn as a trained
    model has them (BUFFER_DRAWS' values: variances positive) and their step counters added
    (int64 scalars, which the class waits for too)."""
    import numpy as np
    import torch
    from safetensors.torch import load_file, save_file

    build_hand(out, seed, lfm2audio_tensors(), lfm2audio_config())
    st = out / "model.safetensors"
    tensors = load_file(str(st))
    rng = np.random.default_rng(seed + 1)
    for name in sorted(tensors):
        v = _batch_norm_stats(name, tuple(tensors[name].shape), rng)
        if v is not None:
            tensors[name] = torch.from_numpy(v.astype(np.float32)).to(torch.bfloat16)
        if name.endswith(".running_var"):
            counter = name.replace(".running_var", ".num_batches_tracked")
            tensors[counter] = torch.tensor(1000 + len(counter), dtype=torch.int64)
    save_file(tensors, str(st), metadata={"format": "pt"})


FIXTURES["lfm2audio"] = ("Lfm2AudioForConditionalGeneration", None, None,
                         {"sampling_rate": 16000}, None, [], False)
HAND_BUILT["lfm2audio"] = build_lfm2audio


GRANITE_SPEECH_HUB = [("model.encoder.", "encoder."), ("model.projector.", "projector."),
                      ("model.language_model.", "language_model.model."),
                      ("lm_head.", "language_model.lm_head.")]


def _batch_norm_stats(name: str, shape: tuple, rng):
    """A batch norm's running statistics, drawn (transformers builds them as zeros and
    ones): means N(0, 0.1), variances in [0.25, 1.25)."""
    import numpy as np
    if name.endswith(".running_mean"):
        return 0.1 * rng.standard_normal(shape)
    if name.endswith(".running_var"):
        return 0.25 + rng.random(shape)
    return None


# Buffers drawn after the parameters, in sorted order: name -> fn(buffer name, shape, rng)
# giving the values (None: left as built).
BUFFER_DRAWS = {"granitespeech": _batch_norm_stats}


# transformers 5 saves a SigLIP / CLIP tower without the `vision_model.` level its hub
# checkpoints have (google/gemma-3-4b-it: `vision_tower.vision_model.encoder...`), and the
# reference maps only the hub spelling: the checkpoint is written in the hub layout.
RENAME = {
    "gemma3-vl": [("vision_tower.", "vision_tower.vision_model.")],
    # LiquidAI/LFM2-VL-450M's SigLIP2 tower
    "lfm2vl": [("model.vision_tower.", "model.vision_tower.vision_model.")],
    # ibm-granite/granite-speech-3.3-2b's names (transformers renames them on load)
    "granitespeech": GRANITE_SPEECH_HUB,
}


# Parameters drawn before the others (then the rest in sorted order): a text embedding
# drawn first has the same bytes as the text fixtures' of its shape, stored once.
DRAW_FIRST = {
    "qwen3omni": ["thinker.model.language_model.embed_tokens.weight"],
    "exaone45-vl": ["model.language_model.embed_tokens.weight"],
}


# config.json edits after saving, as make_fixtures.py's (name -> function of the config).
CONFIG_EDITS = {"gemma4unified-vl": mf.CONFIG_EDITS["gemma4unified"]}


# Projector-only fixtures saved without their text weights (the projector conversion never
# reads them), for the size budget.
NO_TEXT_WEIGHTS = {"llama4-vision", "lfm2vl", "lightonocr", "minicpmv46"}


# Fixtures built with another transformers class than the one config.json names.
BUILD_CLASS = {"qwen25omni": "Qwen2_5OmniForConditionalGeneration",
               "lightonocr": "LightOnOcrForConditionalGeneration"}

# Fixtures whose projector ggufkit does not convert: the text variants only.
TEXT_ONLY = {"qwen25omni", "qwen3asr", "qwen3omni"}


# transformers 5 keeps Qwen3-VL-MoE's experts as `gate_up_proj` [n_expert, 2 * n_ff, n_embd]
# and `down_proj` [n_expert, n_embd, n_ff] and saves them so; the hub checkpoints
# (Qwen/Qwen3-VL-30B-A3B-Instruct) and the reference have them input-major
# ([n_expert, n_embd, 2 * n_ff], [n_expert, n_ff, n_embd]; transformers transposes them on
# load): the checkpoint is written in the hub layout.
TRANSPOSE = {
    "qwen3vlmoe": ["mlp.experts.gate_up_proj", "mlp.experts.down_proj"],
}


def _mtp_qwen35(kw: dict, saved: dict) -> dict:
    """Qwen3.5's next-token-prediction block as the released composite checkpoints name it
    (top-level `mtp.`; transformers does not build it): mtp.fc, the two pre-fc norms,
    mtp.norm and a decoder layer shaped like the text model's last (full-attention) one."""
    t = kw["text_config"]
    e, n = t["hidden_size"], t["num_hidden_layers"]
    last = f"model.language_model.layers.{n - 1}."
    out = {"mtp.layers.0." + k[len(last):]: tuple(v.shape)
           for k, v in saved.items() if k.startswith(last)}
    out.update({"mtp.fc.weight": (e, 2 * e), "mtp.pre_fc_norm_embedding.weight": (e,),
                "mtp.pre_fc_norm_hidden.weight": (e,), "mtp.norm.weight": (e,)})
    return out


def _nextn_glm(kw: dict, saved: dict) -> dict:
    """GLM-OCR's next-token-prediction layer as its checkpoint names it (transformers does
    not build it): a decoder layer after the last one (its shapes) plus eh_proj, enorm, hnorm
    and shared_head.norm."""
    t = kw["text_config"]
    e, n = t["hidden_size"], t["num_hidden_layers"]
    last, p = f"model.language_model.layers.{n - 1}.", f"model.language_model.layers.{n}."
    out = {p + k[len(last):]: tuple(v.shape) for k, v in saved.items() if k.startswith(last)}
    out.update({p + "eh_proj.weight": (e, 2 * e), p + "enorm.weight": (e,),
                p + "hnorm.weight": (e,), p + "shared_head.norm.weight": (e,)})
    return out


# Tensors transformers does not build, drawn like the others (seed + 1) and added to the
# saved checkpoint: name -> shapes(config kwargs, saved tensors).
EXTRA_TENSORS = {
    "qwen35-vl": _mtp_qwen35,
    "qwen35moe-vl": _mtp_qwen35,
    "glmocr": _nextn_glm,
    "minicpmv46": _mtp_qwen35,
    "exaone45-vl": _mtp_qwen35,
}


# Checkpoint tensors left out by prefix after saving (parts both converters skip by name):
# name -> prefixes.
DROP_PREFIX = {
    "janus": ["model.vqmodel."],
}


# Qwen2-Audio saves its tied LM head anyway: dropped (the checkpoint stays valid, the text
# half is written without `output.weight`, and the fixture 32 KB smaller).
DROP = {
    "qwen2audio": ["language_model.lm_head.weight"],
}


# Fixtures whose text half the reference refuses only because its test tokenizer's chkhsh is
# not in its table: transformers builds a composite Qwen3.5 config's tokenizer as
# Qwen3_5Tokenizer (its model types distrust the hub's tokenizer_class), whose pre-tokenizer
# over the small test vocabulary hashes to no known value, while a released checkpoint's
# vocabulary hashes to `qwen35`. For these fixtures the reference's get_vocab_base_pre is
# wrapped to name such a tokenizer as ggufkit's structure rule does (`qwen35-split`), so the
# text variants record everything else the reference writes. name -> pre-tokenizer name.
PRE_FALLBACK = {
    "qwen35-vl": "qwen35",
    "minicpmv46": "qwen35",
    "qwen35moe-vl": "qwen35",
    "qwen4exp-vl": "qwen35",
}


@contextlib.contextmanager
def pre_fallback(llama: Path, pre: str | None):
    """While active, an unrecognized BPE pre-tokenizer is named `pre` instead of refused."""
    if pre is None:
        yield
        return
    mf._reference(llama)
    from conversion.base import TextModel

    original = TextModel.get_vocab_base_pre

    def named(self, tokenizer):
        try:
            return original(self, tokenizer)
        except NotImplementedError:
            return pre

    TextModel.get_vocab_base_pre = named
    try:
        yield
    finally:
        TextModel.get_vocab_base_pre = original


def add_tokenizer(name: str, out: Path) -> list[str]:
    """Copies the tokenizer files into the work dir; returns shared-files.txt lines."""
    _, _, _, _, src, files, _ = FIXTURES[name]
    lines = []
    for f in files:
        # a file name (taken from fixture `src`) or (file name, directory relative to
        # testdata/hf/<name>)
        f, rel = (f, f"../{src}") if isinstance(f, str) else f
        # normpath: the fixture's own directory may not exist yet
        shutil.copyfile(os.path.normpath(TESTDATA / "hf" / name / rel / f), out / f)
        lines.append(f"{f} = {rel}/{f}")
    return lines


def run(name: str, model_dir: Path, llama: Path, quantize: Path | None, work: Path) -> None:
    golden = TESTDATA / "golden" / name
    if golden.exists():
        shutil.rmtree(golden)
    golden.mkdir(parents=True)
    status: dict = {}
    variants = []
    commands = [
        "# llama.cpp commit 0c1e57098bba43ac29e6e3b677cdceebdd22334f (0c1e570)",
        f"# environment: PYTHONPATH=<llama.cpp>/gguf-py, transformers "
        f"{__import__('transformers').__version__}, torch {__import__('torch').__version__}",
        "# generated by conformance/make_mmproj_fixtures.py",
    ]
    if name in PRE_FALLBACK:
        commands.append(f"# text variants: an unknown chkhsh is named {PRE_FALLBACK[name]!r} "
                        "(get_vocab_base_pre wrapped, see PRE_FALLBACK)")
    outputs: dict[str, Path] = {}
    text = FIXTURES[name][6]
    # bf16 is what auto gives for these bf16 checkpoints (the `mmproj-auto` manifest).
    runs = [] if name in TEXT_ONLY else \
        [("mmproj", t) for t in ["f32", "f16", "q8_0", "auto", "default-name"]]
    if text:
        runs = runs[:4] + [("convert", t) for t in ["f32", "f16", "bf16", "q8_0", "auto"]] \
            + runs[4:]
    for kind, t in runs:
        v = f"{kind}-{t}"
        out = work / f"{name}-{v}.gguf"
        args = [str(model_dir)] + (["--mmproj"] if kind == "mmproj" else [])
        if t == "default-name":
            before = set(model_dir.iterdir())
        else:
            args += ["--outtype", t, "--outfile", str(out)]
        t0 = time.time()
        with pre_fallback(llama, PRE_FALLBACK.get(name)):
            rc, err = mf.convert_in_process(llama, args, work)
        st = {"ok": rc == 0, "returncode": rc, "seconds": round(time.time() - t0, 2)}
        shown = " ".join(["<testdata>/hf/" + name] + args[1:]).replace(str(work), "<work>")
        commands.append(f"[{v}] (cd <work> && python <llama.cpp>/convert_hf_to_gguf.py {shown})")
        entry = {"variant": v, "tool": "convert_hf_to_gguf.py",
                 "args": ["{model_dir}"] + args[1:], "ok": rc == 0, "manifests": []}
        if t == "default-name" and rc == 0:
            new = sorted(set(model_dir.iterdir()) - before)
            assert len(new) == 1, new
            out = work / f"{name}-{v}.gguf"
            shutil.move(str(new[0]), out)
            st["file_name"] = new[0].name
            entry["args"] = ["{model_dir}", "--mmproj"]
        if rc != 0:
            st["error_tail"] = err.strip().splitlines()[-6:]
            commands.append("    -> FAILED rc=%d: %s" % (rc, " | ".join(st["error_tail"])))
            print(err[-3000:], file=sys.stderr)
        else:
            st["sha256"] = mf.sha256(out)
            outputs[v] = out
            same = [k for k, o in outputs.items() if k != v and mf.sha256(o) == st["sha256"]]
            if same:
                st["identical_to"] = same
                commands.append(f"    -> byte-identical to {same[0]} (manifest not duplicated)")
            else:
                mf.manifest(llama, out, golden / f"{v}.json")
                entry["manifests"] = [f"{v}.json"]
        status[v] = st
        variants.append(entry)
    if text and quantize is not None and "convert-f32" in outputs:
        v = "quant-Q4_K_M"
        out = work / f"{name}-{v}.gguf"
        t0 = time.time()
        p = subprocess.run([str(quantize), str(outputs["convert-f32"]), str(out), "Q4_K_M"],
                           cwd=work, capture_output=True, text=True)
        st = {"ok": p.returncode == 0, "returncode": p.returncode,
              "seconds": round(time.time() - t0, 2)}
        commands.append(f"[{v}] (cd <work> && llama-quantize <work>/{name}-convert-f32.gguf "
                        f"<work>/{name}-{v}.gguf Q4_K_M)")
        entry = {"variant": v, "tool": "llama-quantize",
                 "args": ["{variant:convert-f32}", "{out}", "Q4_K_M"],
                 "ok": p.returncode == 0, "manifests": []}
        if p.returncode == 0:
            st["sha256"] = mf.sha256(out)
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
        "placeholders": {"{model_dir}": "the HF model directory (its basename matters)",
                         "{variant:NAME}": "the GGUF file produced by variant NAME",
                         "{out}": "the output file"},
        "variants": variants,
    }, indent=1) + "\n")
    (golden / "commands.txt").write_text("\n".join(commands) + "\n")


def store(name: str, model_dir: Path, shared: list[str]) -> None:
    """Copies the fixture into testdata/hf/<name>; a file byte-identical to the same file of
    a fixture stored before it (Idefics3's checkpoint is SmolVLM's) is referenced instead."""
    dest = TESTDATA / "hf" / name
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    names = {line.split(" = ")[0] for line in shared}
    earlier = list(FIXTURES)[:list(FIXTURES).index(name)]
    for f in sorted(model_dir.iterdir()):
        if f.name in names or f.suffix == ".gguf":
            continue
        if f.is_dir():  # a model of its own in a sub-directory (MiMo's audio tokenizer)
            shutil.copytree(f, dest / f.name)
            continue
        same = [o for o in earlier if (TESTDATA / "hf" / o / f.name).is_file()
                and mf.sha256(TESTDATA / "hf" / o / f.name) == mf.sha256(f)]
        if same and f.stat().st_size > 4096:
            shared.append(f"{f.name} = ../{same[0]}/{f.name}")
            continue
        shutil.copyfile(f, dest / f.name)
    if shared:
        (dest / "shared-files.txt").write_text("\n".join(shared) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llama-cpp", type=Path, required=True)
    ap.add_argument("--quantize", type=Path)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--work", type=Path, default=Path("/tmp/ggufkit-mmproj-fixtures"))
    ap.add_argument("--seed", type=int, default=13)
    a = ap.parse_args()
    golden_pack.restore()  # the golden files are read and written loose; share_tensors.py packs them
    quantize = a.quantize if a.quantize and a.quantize.is_file() else None
    for name in a.only or list(FIXTURES):
        print(f"== {name}", file=sys.stderr)
        work = a.work / name
        if work.exists():
            shutil.rmtree(work)
        model_dir = work / name
        model_dir.mkdir(parents=True)
        build(name, model_dir, a.seed)
        shared = add_tokenizer(name, model_dir)
        run(name, model_dir, a.llama_cpp, quantize, work)
        store(name, model_dir, shared)
    return 0


if __name__ == "__main__":
    sys.exit(main())
