#!/usr/bin/env python3
"""Composite-config variants of the vision-language and audio fixtures, converted by the
reference.

The reference picks the class for a composite checkpoint's text half from
`text_config.architectures[0]` when that key is present (else `architectures[0]`), and for
`--mmproj` from `vision_config.architectures[0]` (else `architectures[0]`); it never reads
`audio_config.architectures`. Published checkpoints spell these sub-config keys or leave
them out, so for every fixture of make_mmproj_fixtures.py (those with a `--mmproj` golden)
this script writes config variants with and without them:

* `text-arch-absent`: `text_config.architectures` removed (fixtures that have it);
* `text-arch-top`: `text_config.architectures` set to the top-level class;
* `text-arch-hub`: `text_config.architectures` set as published checkpoints of the family set
  it (`HUB_TEXT_CLASS`: SmolVLM's and Idefics3's `VLlama3ForCausalLM`), where it is absent;
* `vision-arch-top`: `vision_config.architectures` set to the top-level class;
* `audio-arch-other`: `audio_config.architectures` set to a class nobody registers (ignored);
* `text-config-absent`, `vision-config-absent`, `audio-config-absent`: that sub-config
  removed, the others kept (a config with only some of them; the class's defaults or the
  top-level keys stand in for it, or the reference refuses), where the fixture has it and
  no family variant already removes it;
* the family variants of `FAMILY_VARIANTS` (a key without a dot is a top-level key): Gemma
  4's optional audio tower, its config defaults and the keys its projector reads.

Each variant is the fixture's config.json with the patch applied, converted with
`convert_hf_to_gguf.py --outtype f32` (text half) and `--mmproj --outtype f32` in a directory
named as the fixture (general.name comes from it), with make_mmproj_fixtures.py's
pre-tokenizer fallback for the fixtures it applies it to. `testdata/golden/composite-variants.json`
records per fixture and variant the patch and, per output, the file's sha256 or the
reference's error; converters/tests/suite/convert/mmproj_golden.rs applies the same patches and compares.

Usage (the reference's venv; --only to limit the fixtures):
    make_composite_variants.py --llama-cpp DIR [--only FIXTURE ...]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_pack  # noqa: E402
import make_fixtures as mf  # noqa: E402
import make_mmproj_fixtures as mm  # noqa: E402
from fixture_io import materialize  # noqa: E402

GOLDEN = mf.TESTDATA / "golden" / "composite-variants.json"
# The text class published checkpoints name in `text_config.architectures`, by model type.
HUB_TEXT_CLASS = {"smolvlm": "VLlama3ForCausalLM", "idefics3": "VLlama3ForCausalLM"}
# A class no converter registers, for the audio sub-config the reference does not read.
UNREGISTERED = "NoSuchAudioEncoder"
SUB_CONFIGS = ("text_config", "vision_config", "audio_config")
# The SAM sizes of the DeepSeek-OCR fixtures' vision configs.
OCR_SAM = {"downsample_channels": [8, 16], "global_attn_indexes": [1], "heads": 2, "layers": 2,
           "width": 16}


# Variants of one fixture's config the reference reads differently: fixture -> name -> patch.
FAMILY_VARIANTS = {
    "gemma4-vl": {
        # no audio tower: a vision-only file (the checkpoint's audio tensors are still
        # written, as the reference does)
        "audio-absent": {"set": {}, "remove": ["audio_config"]},
        "audio-null": {"set": {"audio_config": None}, "remove": []},
        # the reference asserts a vision tower
        "vision-absent": {"set": {}, "remove": ["vision_config"]},
        # AutoConfig's defaults for every size
        "audio-defaults": {"set": {"audio_config": {}}, "remove": []},
        "vision-defaults": {"set": {"vision_config": {}}, "remove": []},
        "mel-bins-eps": {"set": {"audio_config.input_feat_size": 80,
                                 "audio_config.layer_norm_eps": 1e-5,
                                 "vision_config.layer_norm_eps": 1e-5}, "remove": []},
    },
    "gemma3n-vl": {
        # AutoConfig's defaults for every size
        "audio-defaults": {"set": {"audio_config": {}}, "remove": []},
        "vision-defaults": {"set": {"vision_config": {}}, "remove": []},
        # the sizes the class reads when the config names them
        "ffn-heads": {"set": {"vision_config.intermediate_size": 24,
                              "vision_config.num_attention_heads": 4,
                              "audio_config.intermediate_size": 40}, "remove": []},
        "audio-absent": {"set": {}, "remove": ["audio_config"]},
    },
    "kimik25-vl": {
        # GLM-5.2-Vision: Kimi-K2.5's tower and projector under its own class
        "glm5v": {"set": {"architectures": ["Glm5vForConditionalGeneration"]}, "remove": []},
    },
    "exaone45-vl": {
        # the hub's spelling of the text config's type (read as exaone4)
        "text-type-hub": {"set": {"text_config.model_type": "exaone4_5_text"}, "remove": []},
        # two MTP blocks sharing the checkpoint's one layer; none; a null count
        "mtp-shared": {"set": {"text_config.num_nextn_predict_layers": 2,
                               "text_config.mtp_share_layers": True}, "remove": []},
        "mtp-two-unshared": {"set": {"text_config.num_nextn_predict_layers": 2}, "remove": []},
        "mtp-none": {"set": {"text_config.num_nextn_predict_layers": 0}, "remove": []},
        "mtp-null": {"set": {"text_config.num_nextn_predict_layers": None}, "remove": []},
        # the sliding-window layout from the period, as a string, or none at all
        "window-period": {"set": {"text_config.sliding_window_pattern": 3},
                          "remove": ["text_config.layer_types"]},
        "window-string": {"set": {"text_config.sliding_window_pattern": "LLG"},
                          "remove": ["text_config.layer_types"]},
        "window-none": {"set": {"text_config.sliding_window": None},
                        "remove": ["text_config.layer_types"]},
        "rope-llama3": {"set": {"text_config.rope_parameters": {
            "rope_type": "llama3", "rope_theta": 10000.0, "factor": 8.0,
            "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 64}}, "remove": []},
        # the tower's window attention: unevenly spaced full blocks (refused), none listed
        "wa-uneven": {"set": {"vision_config.fullatt_block_indexes": [0, 2]}, "remove": []},
        "wa-empty": {"set": {"vision_config.fullatt_block_indexes": []}, "remove": []},
        "wa-null": {"set": {"vision_config.fullatt_block_indexes": None,
                            "vision_config.window_size": None}, "remove": []},
        # AutoConfig's defaults for the window and the KV heads; the norm epsilons
        "vision-kv-window-defaults": {"set": {}, "remove": ["vision_config.window_size",
                                                            "vision_config.num_key_value_heads"]},
        "vision-eps": {"set": {"vision_config.rms_norm_eps": 1e-5}, "remove": []},
        "top-eps": {"set": {"rms_norm_eps": 1e-4}, "remove": []},
        "vision-defaults": {"set": {"vision_config": {}}, "remove": []},
    },
    "minimax-m3-vl": {
        # the transformers-registered class name of the family
        "vl-class": {"set": {"architectures": ["MiniMaxM3VLForConditionalGeneration"]},
                     "remove": []},
        # the merge size: its default, another value, as a float
        "merge-absent": {"set": {}, "remove": ["vision_config.img_token_compression_config"]},
        "merge-3": {"set": {"vision_config.img_token_compression_config":
                            {"spatial_merge_size": 3}}, "remove": []},
        "merge-float": {"set": {"vision_config.img_token_compression_config":
                                {"spatial_merge_size": 2.0}}, "remove": []},
        "merge-key-absent": {"set": {"vision_config.img_token_compression_config": {}},
                             "remove": []},
        # AutoConfig's defaults for the epsilon and the image size
        "eps-image-defaults": {"set": {}, "remove": ["vision_config.layer_norm_eps",
                                                     "vision_config.image_size"]},
        # heads of 40: the class asserts 80
        "heads-2": {"set": {"vision_config.num_attention_heads": 2}, "remove": []},
        # every size from AutoConfig's defaults (16 heads of 5: refused)
        "vision-defaults": {"set": {"vision_config": {}}, "remove": []},
    },
    "deepseekocr-vl": {
        # Unlimited-OCR: DeepSeek-OCR's projector with up to 32 tiles
        "unlimited": {"set": {"architectures": ["UnlimitedOCRForCausalLM"]}, "remove": []},
        # a CLIP grid of 16 patches per side: a scale factor of 1 is written (4: none)
        "clip-224": {"set": {"vision_config.width": {
            "clip-l-14-224": {"heads": 2, "image_size": 224, "layers": 4, "patch_size": 14,
                              "width": 16}, "sam_vit_b": OCR_SAM}}, "remove": []},
        "clip-896": {"set": {"vision_config.width": {
            "clip-l-14-224": {"heads": 2, "image_size": 896, "layers": 4, "patch_size": 14,
                              "width": 16}, "sam_vit_b": OCR_SAM}}, "remove": []},
        # a block key before `layers` wins; the window and epsilon the class reads
        "block-key": {"set": {"vision_config.num_hidden_layers": 6}, "remove": []},
        "window-eps": {"set": {"vision_config.window_size": 7,
                               "vision_config.layer_norm_eps": 1e-5}, "remove": []},
        # no CLIP sizes (the width stays the towers' table) or no SAM sizes: refused
        "no-clip": {"set": {"vision_config.width": {"sam_vit_b": OCR_SAM}}, "remove": []},
        "no-sam": {"set": {"vision_config.width": {
            "clip-l-14-224": {"heads": 2, "image_size": 28, "layers": 4, "patch_size": 14,
                              "width": 16}}}, "remove": []},
        # CLIP sizes without heads: no FFN width (refused)
        "clip-no-heads": {"set": {"vision_config.width": {
            "clip-l-14-224": {"image_size": 16, "layers": 4, "patch_size": 4, "width": 16},
            "sam_vit_b": OCR_SAM}}, "remove": []},
    },
    "deepseekocr2-vl": {
        # the Qwen2 encoder's sizes named (the defaults replaced), an image of 32 patches
        # per side (scale factor 2)
        "sizes": {"set": {"vision_config.patch_size": 8, "vision_config.intermediate_size": 64,
                          "vision_config.num_attention_heads": 4, "vision_config.layers": 5,
                          "vision_config.image_size": 256}, "remove": []},
        "null-sizes": {"set": {"vision_config.patch_size": None,
                               "vision_config.num_attention_heads": None,
                               "vision_config.layers": None}, "remove": []},
        # `heads` gives the FFN width (four times it); the head count stays the default
        "heads": {"set": {"vision_config.heads": 4}, "remove": []},
        # three blocks: the SAM neck's layers 3 cannot be mapped (refused)
        "three-blocks": {"set": {"vision_config.layers": 3}, "remove": []},
        # CLIP sizes too (the width becomes an integer) or no Qwen2 width: refused
        "with-clip": {"set": {"vision_config.width": {
            "clip-l-14-224": {"heads": 2, "image_size": 28, "layers": 4, "patch_size": 14,
                              "width": 16}, "qwen2-0-5b": {"dim": 16}, "sam_vit_b": OCR_SAM}},
                      "remove": []},
        "no-qwen2": {"set": {"vision_config.width": {"sam_vit_b": OCR_SAM}}, "remove": []},
    },
    "gemma4unified-vl": {
        # the patch size named outright (the pooling would give another)
        "model-patch-size": {"set": {"vision_config.model_patch_size": 6,
                                     "vision_config.pooling_kernel_size": 5}, "remove": []},
        # the reference asserts both embedders
        "audio-absent": {"set": {}, "remove": ["audio_config"]},
        # the default 16 px patches pooled by 3 do not fit the checkpoint's 6 x 6 patch
        "vision-defaults": {"set": {"vision_config": {}}, "remove": []},
        "mel-bins": {"set": {"audio_config.input_feat_size": 64}, "remove": []},
    },
    "stepvl": {
        # the tower's legacy spellings; the feed-forward size from a ratio or given; the
        # epsilon; the published tower's values the reference asserts, one at a time off
        "legacy-spellings": {"set": {"vision_config.width": 1536, "vision_config.layers": 47},
                             "remove": ["vision_config.hidden_size",
                                        "vision_config.num_hidden_layers"]},
        "mlp-ratio": {"set": {"vision_config.mlp_ratio": 4.3}, "remove": []},
        "ffn-given": {"set": {"vision_config.intermediate_size": 4096}, "remove": []},
        "ffn-zero": {"set": {"vision_config.intermediate_size": 0}, "remove": []},
        "eps": {"set": {"vision_config.layer_norm_eps": 1e-6}, "remove": []},
        "stride-absent": {"set": {}, "remove": ["understand_projector_stride"]},
        "stride-3": {"set": {"understand_projector_stride": 3}, "remove": []},
        "image-448": {"set": {"vision_config.image_size": 448}, "remove": []},
        "width-absent": {"set": {}, "remove": ["vision_config.hidden_size"]},
        "layers-48": {"set": {"vision_config.num_hidden_layers": 48}, "remove": []},
    },
    "step3p7": {
        # the hub's model_type: transformers' Step3p7Config (text half refused), its vision
        # config class's defaults, the ratio it derives the feed-forward size from, the
        # attribute spellings, a tower other than the published one
        "hub-model-type": {"set": {"model_type": "step3p7"}, "remove": []},
        "typed-vision-defaults": {"set": {"model_type": "step3p7", "vision_config": {}},
                                  "remove": []},
        "typed-vision-absent": {"set": {"model_type": "step3p7"}, "remove": ["vision_config"]},
        "typed-mlp-ratio": {"set": {"model_type": "step3p7", "vision_config.mlp_ratio": 4.3},
                            "remove": []},
        "typed-attribute-spellings": {"set": {"model_type": "step3p7",
                                              "vision_config.hidden_size": 1536,
                                              "vision_config.num_hidden_layers": 47},
                                      "remove": ["vision_config.width", "vision_config.layers"]},
        "typed-layers-46": {"set": {"model_type": "step3p7", "vision_config.layers": 46},
                            "remove": []},
        "typed-eps": {"set": {"model_type": "step3p7", "vision_config.layer_norm_eps": 1e-6},
                      "remove": []},
        # read as written: the file's feed-forward size or none, no image size
        "ffn-absent": {"set": {}, "remove": ["vision_config.intermediate_size"]},
        "mlp-ratio": {"set": {"vision_config.mlp_ratio": 4.3},
                      "remove": ["vision_config.intermediate_size"]},
        "image-absent": {"set": {}, "remove": ["vision_config.image_size"]},
    },
}


# dots.ocr's projector reads the tower's norm epsilon and merge size (both required) and
# nothing else beyond the base keys.
FAMILY_VARIANTS["dotsocr-vl"] = {
    "eps-merge": {"set": {"vision_config.rms_norm_eps": 1e-6,
                          "vision_config.spatial_merge_size": 4}, "remove": []},
    "eps-absent": {"set": {}, "remove": ["vision_config.rms_norm_eps"]},
    "merge-absent": {"set": {}, "remove": ["vision_config.spatial_merge_size"]},
    # the tower's own spellings of the sizes the base class reads
    "hidden-absent": {"set": {}, "remove": ["vision_config.hidden_size"]},
}

# Phi-4-reasoning-vision: a Phi-3 text half whose config AutoConfig does not know (read as
# written; the GPT-2 tokenizer step builds a generic config from it, which fails on
# transformers 4's scaled rope_scaling), or that says `phi3` (Phi3Config, which rejects
# another rope); the keys Phi-3 reads without defaults; the tower's block count (one block
# fewer is written: at least two, and the checkpoint's must match), its patch size (the image
# processor's wins) and epsilon.
_PHI4V_LONG = {"long_factor": [1.0, 1.5], "short_factor": [1.0, 1.125]}
FAMILY_VARIANTS["phi4v"] = {
    "rope-v4-longrope": {"set": {"rope_scaling": {"type": "longrope", **_PHI4V_LONG},
                                 "original_max_position_embeddings": 1024}, "remove": []},
    "rope-v4-su": {"set": {"rope_scaling": {"type": "su", **_PHI4V_LONG},
                           "original_max_position_embeddings": 1024}, "remove": []},
    "rope-v4-yarn": {"set": {"rope_scaling": {"type": "yarn", "factor": 2.0,
                                              "original_max_position_embeddings": 2048}},
                     "remove": []},
    "rope-v4-llama3": {"set": {"rope_scaling": {
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
        "original_max_position_embeddings": 1024}}, "remove": []},
    "rope-v4-linear": {"set": {"rope_scaling": {"type": "linear", "factor": 2.0}}, "remove": []},
    "rope-v5-longrope": {"set": {"rope_parameters": {
        "rope_type": "longrope", "rope_theta": 250000.0, "original_max_position_embeddings": 1024,
        **_PHI4V_LONG}}, "remove": ["rope_scaling"]},
    "rope-v4-yarn-factors": {"set": {"rope_scaling": {"type": "yarn", **_PHI4V_LONG},
                                     "original_max_position_embeddings": 1024}, "remove": []},
    "type-phi3": {"set": {"model_type": "phi3"}, "remove": []},
    "type-phi3-v4-longrope": {"set": {"model_type": "phi3",
                                      "rope_scaling": {"type": "longrope", **_PHI4V_LONG},
                                      "original_max_position_embeddings": 1024}, "remove": []},
    "type-phi3-v4-yarn": {"set": {"model_type": "phi3",
                                  "rope_scaling": {"type": "yarn", "factor": 2.0}},
                          "remove": []},
    "type-phi3-v4-dynamic": {"set": {"model_type": "phi3",
                                     "rope_scaling": {"type": "dynamic", "factor": 2.0}},
                             "remove": []},
    "type-absent": {"set": {}, "remove": ["model_type"]},
    "type-absent-v4-yarn": {"set": {"rope_scaling": {"type": "yarn", "factor": 2.0}},
                            "remove": ["model_type"]},
    "swa-333": {"set": {"sliding_window": 333}, "remove": []},
    "partial-rotary": {"set": {"partial_rotary_factor": 0.5}, "remove": []},
    "ctx-absent": {"set": {}, "remove": ["max_position_embeddings"]},
    "orig-ctx-absent": {"set": {}, "remove": ["original_max_position_embeddings"]},
    "kv-absent": {"set": {}, "remove": ["num_key_value_heads"]},
    "theta-absent": {"set": {}, "remove": ["rope_theta"]},
    "vision-layers-1": {"set": {"vision_config.num_hidden_layers": 1}, "remove": []},
    "vision-layers-2": {"set": {"vision_config.num_hidden_layers": 2}, "remove": []},
    "vision-layers-absent": {"set": {}, "remove": ["vision_config.num_hidden_layers"]},
    "vision-layers-depth": {"set": {"vision_config.depth": 3},
                            "remove": ["vision_config.num_hidden_layers"]},
    "vision-layers-float": {"set": {"vision_config.num_hidden_layers": 3.0}, "remove": []},
    "vision-patch-other": {"set": {"vision_config.patch_size": 8}, "remove": []},
    "vision-eps": {"set": {"vision_config.layer_norm_eps": 1e-5}, "remove": []},
    "vision-eps-absent": {"set": {}, "remove": ["vision_config.layer_norm_eps"]},
    "vision-sizes": {"set": {"vision_config.intermediate_size": 20,
                             "vision_config.num_attention_heads": 4,
                             "vision_config.hidden_size": 12}, "remove": []},
    "bounds-in-config-other": {"set": {"min_num_patches": 16, "max_num_patches": 100},
                               "remove": []},
    # the tower config as written, whatever its model_type names (no class fills it in)
    "vision-type-siglip-ffn-absent": {"set": {"vision_config.model_type": "siglip_vision_model"},
                                      "remove": ["vision_config.intermediate_size"]},
}

# Nemotron Nano VL V2's projector reads force_image_size (the image size, and the grid the
# 3 x 3 position table is resized to: image / patch per side), the tower's patch size (the
# patch embedder is reshaped to [1280, 3, p, p]), downsample_ratio (the scale factor),
# whichever block-count key the tower config spells first (the class adds
# num_hidden_layers = 32), and sound_config (the Parakeet tower: its mel bins, subsampling
# factor and convolution kernel are required). The image size's default, 512, would resize
# the table to 512 x 512 at width 1280 (335 M values): not a variant.
FAMILY_VARIANTS["nemotron-vl"] = {
    "image-grid": {"set": {"force_image_size": 3}, "remove": []},
    "image-up": {"set": {"force_image_size": 7}, "remove": []},
    "image-down": {"set": {"force_image_size": 2}, "remove": []},
    "image-one": {"set": {"force_image_size": 1}, "remove": []},
    "image-zero": {"set": {"force_image_size": 0}, "remove": []},
    "image-null": {"set": {"force_image_size": None}, "remove": []},
    "image-float": {"set": {"force_image_size": 4.0}, "remove": []},
    "patch-2": {"set": {"vision_config.patch_size": 2}, "remove": []},
    "patch-absent": {"set": {}, "remove": ["vision_config.patch_size"]},
    "ratio-absent": {"set": {}, "remove": ["downsample_ratio"]},
    "ratio-third": {"set": {"downsample_ratio": 0.3}, "remove": []},
    "ratio-null": {"set": {"downsample_ratio": None}, "remove": []},
    "tower-sizes": {"set": {"vision_config.hidden_size": 64, "vision_config.image_size": 9,
                            "vision_config.num_attention_heads": 2}, "remove": []},
    "tower-n-layers": {"set": {"vision_config.n_layers": 5}, "remove": []},
    "tower-n-layers-1": {"set": {"vision_config.n_layers": 1}, "remove": []},
    "sound-null": {"set": {"sound_config": None}, "remove": []},
    "audio-config-ignored": {"set": {"audio_config": {"hidden_size": 8}}, "remove": []},
}
FAMILY_VARIANTS["nemotron-omni"] = {
    "sound-absent": {"set": {}, "remove": ["sound_config"]},
    "sound-mel-absent": {"set": {}, "remove": ["sound_config.num_mel_bins"]},
    "sound-subsampling-absent": {"set": {}, "remove": ["sound_config.subsampling_factor"]},
    "sound-kernel-absent": {"set": {}, "remove": ["sound_config.conv_kernel_size"]},
    "sound-sizes": {"set": {"sound_config.num_mel_bins": 80, "sound_config.subsampling_factor": 4,
                            "sound_config.conv_kernel_size": 31,
                            "sound_config.num_hidden_layers": 24}, "remove": []},
    "sound-list": {"set": {"sound_config": [1]}, "remove": []},
    "image-down": {"set": {"force_image_size": 2}, "remove": []},
}


# Granite Speech's projector reads the encoder config's sizes under its own names, the
# root's window and rate and the QFormer's heads, each with AutoConfig's defaults when
# absent; Plus also the concatenated layers, checked against the QFormer's input width.
GRANITE_SPEECH_VARIANTS = {
    "encoder-absent": {"set": {}, "remove": ["encoder_config"]},
    "encoder-defaults": {"set": {"encoder_config": {}}, "remove": []},
    "encoder-sizes": {"set": {"encoder_config.feedforward_mult": 3,
                              "encoder_config.context_size": 5,
                              "encoder_config.conv_kernel_size": 7,
                              "encoder_config.max_pos_emb": 20,
                              "encoder_config.input_dim": 12}, "remove": []},
    "encoder-layers-3": {"set": {"encoder_config.num_layers": 3}, "remove": []},
    "encoder-layers-0": {"set": {"encoder_config.num_layers": 0}, "remove": []},
    "encoder-heads-absent": {"set": {}, "remove": ["encoder_config.num_heads"]},
    "window-rate-absent": {"set": {}, "remove": ["window_size", "downsample_rate"]},
    "window-rate": {"set": {"window_size": 6, "downsample_rate": 3}, "remove": []},
    "projector-absent": {"set": {}, "remove": ["projector_config"]},
    "projector-heads": {"set": {"projector_config.num_attention_heads": 4}, "remove": []},
}
FAMILY_VARIANTS["granitespeech"] = GRANITE_SPEECH_VARIANTS
PLUS = {"architectures": ["GraniteSpeechPlusForConditionalGeneration"],
        "model_type": "granite_speech_plus",
        "encoder_config.model_type": "granite_speech_plus_encoder"}
FAMILY_VARIANTS["granitespeech"].update({
    # Granite Speech Plus: its class over this checkpoint, the layers it concatenates and
    # the QFormer input width they imply (checked from the config: the tensors stay as they
    # are), its defaults, and its refusals
    "plus": {"set": {**PLUS, "encoder_config.cat_hidden_layers": [0],
                     "projector_config.encoder_hidden_size": 30}, "remove": []},
    "plus-two-layers": {"set": {**PLUS, "encoder_config.cat_hidden_layers": [1, 0],
                                "projector_config.encoder_hidden_size": 45}, "remove": []},
    "plus-no-layers": {"set": PLUS, "remove": ["encoder_config.cat_hidden_layers"]},
    "plus-empty-layers": {"set": {**PLUS, "encoder_config.cat_hidden_layers": []},
                          "remove": []},
    "plus-width-mismatch": {"set": {**PLUS, "encoder_config.cat_hidden_layers": [0, 1],
                                    "projector_config.encoder_hidden_size": 30}, "remove": []},
    "plus-width-default": {"set": {**PLUS, "encoder_config.cat_hidden_layers": [0]},
                           "remove": ["projector_config.encoder_hidden_size"]},
    "plus-encoder-defaults": {"set": {"architectures": PLUS["architectures"],
                                      "model_type": PLUS["model_type"], "encoder_config": {}},
                              "remove": []},
})

# LFM2-Audio's projector reads the encoder config's width, heads, block count and mel bins
# (no defaults: config.json is read as it is) and the text model's width from `lfm`.
FAMILY_VARIANTS["lfm2audio"] = {
    "encoder-absent": {"set": {}, "remove": ["encoder"]},
    "heads-absent": {"set": {}, "remove": ["encoder.n_heads"]},
    "width-absent": {"set": {}, "remove": ["encoder.d_model"]},
    "mel-bins-absent": {"set": {}, "remove": ["encoder.feat_in"]},
    "sizes": {"set": {"encoder.feat_in": 80, "encoder.n_heads": 2, "encoder.d_model": 12},
              "remove": []},
    "layers-9": {"set": {"encoder.n_layers": 9}, "remove": []},
    "layers-3": {"set": {"encoder.n_layers": 3}, "remove": []},
    "layers-spelled": {"set": {"encoder.num_hidden_layers": 8}, "remove": []},
    "text-absent": {"set": {}, "remove": ["lfm"]},
    "text-width": {"set": {"lfm.hidden_size": 24}, "remove": []},
}


# MiMo-V2.5's projector reads the vision config's sizes with their defaults (image 560, 32
# heads, 28 blocks, 8 KV heads), its epsilon, window kinds and window (required: the
# default -1 is no UINT32), the merge size and heads (required), the top-level audio
# config's connector sizes and channel count (a count below the checkpoint's leaves the
# rest out, one above it writes no code embedding), and its audio encoder's own
# config.json in `audio_tokenizer/` (`files`: a patch of another JSON file of the fixture).
def _mimo_tok(set_: dict, remove: list | None = None) -> dict:
    return {"set": {}, "remove": [],
            "files": {"audio_tokenizer/config.json": {"set": set_, "remove": remove or []}}}


FAMILY_VARIANTS["mimo-vl"] = {
    "image-448": {"set": {"vision_config.image_size": 448}, "remove": []},
    "depth-absent": {"set": {}, "remove": ["vision_config.depth"]},
    "heads-absent": {"set": {}, "remove": ["vision_config.num_heads"]},
    "kv-defaults": {"set": {}, "remove": ["vision_config.num_key_value_heads",
                                          "vision_config.qk_channels"]},
    "eps": {"set": {"vision_config.rms_norm_eps": 1e-5}, "remove": []},
    "wa-absent": {"set": {}, "remove": ["vision_config.vit_window_attn_types"]},
    "window-absent": {"set": {}, "remove": ["vision_config.visual_token_window_size"]},
    "merge-absent": {"set": {}, "remove": ["vision_config.spatial_merge_size"]},
    "channels-2": {"set": {"audio_config.audio_channels": 2}, "remove": []},
    "channels-4": {"set": {"audio_config.audio_channels": 4}, "remove": []},
    "channels-absent": {"set": {}, "remove": ["audio_config.audio_channels"]},
    "local-3-group-4": {"set": {"audio_config.input_local_layers": 3,
                                "audio_config.group_size": 4}, "remove": []},
    "local-absent": {"set": {}, "remove": ["audio_config.input_local_layers"]},
    "tok-eps": _mimo_tok({"layer_norm_eps": 1e-6}),
    "tok-full-attention": _mimo_tok({"hybrid_attention": False}),
    "tok-swa-3": _mimo_tok({"swa_per_block": 3, "encoder_layers": 5}),
    "tok-swa-absent": _mimo_tok({}, ["swa_per_block"]),
    "tok-window": _mimo_tok({"encoder_attn_window_size": [7, 2]}),
    "tok-layers-key": _mimo_tok({"num_hidden_layers": 4}),
    "tok-layers-absent": _mimo_tok({}, ["encoder_layers"]),
    "tok-mels-absent": _mimo_tok({}, ["n_mels"]),
    "tok-d-model-absent": _mimo_tok({}, ["d_model"]),
    "tok-hidden-size": _mimo_tok({"hidden_size": 99}),
}


def variants(cfg: dict) -> dict[str, dict]:
    """Variant name -> patch: {"set": {dotted key: value}, "remove": [dotted key]}."""
    top = (cfg.get("architectures") or [None])[0]
    out: dict[str, dict] = {}
    text = cfg.get("text_config")
    if isinstance(text, dict):
        if "architectures" in text:
            out["text-arch-absent"] = {"set": {}, "remove": ["text_config.architectures"]}
        hub = HUB_TEXT_CLASS.get(cfg.get("model_type"))
        if hub is not None and "architectures" not in text:
            out["text-arch-hub"] = {"set": {"text_config.architectures": [hub]}, "remove": []}
        if top is not None:
            out["text-arch-top"] = {"set": {"text_config.architectures": [top]}, "remove": []}
    if isinstance(cfg.get("vision_config"), dict) and top is not None:
        out["vision-arch-top"] = {"set": {"vision_config.architectures": [top]}, "remove": []}
    if isinstance(cfg.get("audio_config"), dict):
        out["audio-arch-other"] = {"set": {"audio_config.architectures": [UNREGISTERED]},
                                   "remove": []}
    for sub in SUB_CONFIGS:
        if isinstance(cfg.get(sub), dict):
            out[f"{sub.split('_')[0]}-config-absent"] = {"set": {}, "remove": [sub]}
    return out


def family_variants(name: str) -> dict[str, dict]:
    return FAMILY_VARIANTS.get(name, {})


def all_variants(name: str, cfg: dict) -> dict[str, dict]:
    """The generic variants of `cfg` and the family's, without a generic removal of a
    sub-config that a family variant already removes."""
    fam = family_variants(name)
    removed = {k for p in fam.values() for k in p["remove"] if "." not in k}
    generic = {n: p for n, p in variants(cfg).items()
               if not (n.endswith("-config-absent") and set(p["remove"]) <= removed)}
    return {**generic, **fam}


def apply(cfg: dict, patch: dict) -> dict:
    cfg = json.loads(json.dumps(cfg))
    for key in patch["remove"]:
        if "." not in key:
            cfg.pop(key, None)
            continue
        outer, inner = key.split(".")
        cfg[outer].pop(inner, None)
    for key, value in patch["set"].items():
        if "." not in key:
            cfg[key] = value
            continue
        outer, inner = key.split(".")
        cfg[outer][inner] = value
    return cfg


def convert(llama: Path, model_dir: Path, mmproj: bool, work: Path) -> dict:
    out = work / ("mmproj.gguf" if mmproj else "text.gguf")
    args = [str(model_dir), *(["--mmproj"] if mmproj else []), "--outtype", "f32",
            "--outfile", str(out)]
    # The fixture's tokenizer is named as make_mmproj_fixtures.py names it (PRE_FALLBACK).
    with mm.pre_fallback(llama, mm.PRE_FALLBACK.get(model_dir.name)):
        rc, err = mf.convert_in_process(llama, args, work)
    if rc != 0 or not out.is_file():
        return {"ok": False, "error": (err.strip().splitlines() or [""])[-1][-300:]}
    rec = {"ok": True, "sha256": hashlib.sha256(out.read_bytes()).hexdigest()}
    out.unlink()
    return rec


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--llama-cpp", type=Path, required=True)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--work", type=Path, default=Path("/tmp/ggufkit-composite-variants"))
    ap.add_argument("--keep", action="store_true",
                    help="convert only the variants the record lacks (or whose patch changed)")
    a = ap.parse_args()
    golden_pack.restore()  # the golden files are read and written loose; share_tensors.py packs them
    fixtures = sorted(p.parent.name for p in (mf.TESTDATA / "golden").glob("*/status.json")
                      if "mmproj-f32" in json.loads(p.read_text()))
    record = json.loads(GOLDEN.read_text()) if GOLDEN.is_file() else {}
    for name in a.only or fixtures:
        print(f"== {name}", file=sys.stderr)
        work = a.work / name
        if work.exists():
            shutil.rmtree(work)
        work.mkdir(parents=True)
        model_dir = materialize(mf.TESTDATA / "hf" / name, work / name)
        cfg_path = model_dir / "config.json"
        base = json.loads(cfg_path.read_text())
        old = record.get(name, {}) if a.keep else {}
        record[name] = {}
        for vname, patch in all_variants(name, base).items():
            if vname in old and old[vname]["patch"] == patch:
                record[name][vname] = old[vname]
                continue
            cfg_path.write_text(json.dumps(apply(base, patch), indent=2) + "\n")
            # other JSON files of the fixture the patch changes, restored afterwards
            others = {f: (model_dir / f).read_text() for f in patch.get("files", {})}
            for f, fpatch in patch.get("files", {}).items():
                (model_dir / f).write_text(
                    json.dumps(apply(json.loads(others[f]), fpatch), indent=2) + "\n")
            record[name][vname] = {
                "patch": patch,
                "text-f32": convert(a.llama_cpp, model_dir, False, work),
                "mmproj-f32": convert(a.llama_cpp, model_dir, True, work),
            }
            for f, text in others.items():
                (model_dir / f).write_text(text)
            print(f"   {vname}: text {record[name][vname]['text-f32']['ok']}, "
                  f"mmproj {record[name][vname]['mmproj-f32']['ok']}", file=sys.stderr)
        cfg_path.write_text(json.dumps(base, indent=2) + "\n")
    GOLDEN.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
