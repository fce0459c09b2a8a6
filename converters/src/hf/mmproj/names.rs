//! HF tensor name → GGUF tensor name for projector files (gguf-py's `tensor_mapping.py`,
//! the `MODEL_ARCH.MMPROJ` rows).
//!
//! [`TABLE`] lists, for each projector tensor ([`VTensor`]), every HF spelling of it that a
//! supported family uses, with `{bid}` standing for the block number, and the projector
//! types (`clip.projector_type`) of the families that use it. Unlike text
//! architectures, every projector family maps through the whole table (gguf-py builds the
//! MMPROJ map from all of `MODEL_TENSORS[MMPROJ]`); a spelling with `{bid}` exists for the
//! blocks `0..n` of the vision (or audio) config's block count only, which is why a
//! Pixtral projector's `linear_1` / `linear_2` (rows of `mm.{bid}`) need as many tower
//! blocks. A lookup tries the full name, then the name without `.weight` / `.bias`.

use crate::hf::names::{tensor_table, Spelling, TensorMap};

/// One projector tensor and every HF spelling of it, each with the projector families
/// (`clip.projector_type`) that use it.
#[derive(Debug)]
pub struct VRow {
    /// The projector tensor.
    pub tensor: VTensor,
    /// Its HF spellings, each with the projector types of the families that use it.
    pub spellings: &'static [Spelling],
}

tensor_table! {
    /// A projector-file tensor (gguf-py's `MODEL_TENSOR.V_*` / `A_*`); [`VTensor::gguf`]
    /// is its base name.
    enum VTensor;
    /// Every HF spelling of each projector tensor, one row per tensor, later rows
    /// winning where a spelling appears twice.
    static TABLE: [VRow];
    /// `mm.{bid}`: the numbered layers of an MLP projector.
    Mmproj = "mm.{bid}" {
        "multi_modal_projector.linear_{bid}": ["pixtral", "kimivl", "lfm2", "lightonocr", "minimax_m3"],
        "visual.merger.mlp.{bid}": ["qwen2vl_merger", "exaone4_5", "mimovl"],
        "mm_projector.proj.linear_{bid}": ["kimik25"],
        "merger.mlp.{bid}": ["youtuvl"],
        "vit.perceive.proj.{bid}": ["hunyuanvl"],
        "mlp_AR.linear_{bid}": ["paddleocr"],
        "aligner.w{bid}": ["deepseek4v"],
        "vision_tower.merger.mlp.{bid}": ["dots_ocr"],
    }
    /// `mm.model.fc`: Idefics3's pixel-shuffle projection.
    MmprojFc = "mm.model.fc" {
        "model.connector.modality_projection.proj": ["idefics3"],
        "visual.merger.proj": ["glm4v", "glm5v"],
        "vit.perceive.mlp": ["hunyuanvl"],
        "model.vision.linear_proj.linear_proj": ["cogvlm"],
        "model.projector.layers": ["deepseekocr", "deepseekocr2"],
    }
    /// `mm.merger.fc1`: MiniMax-M3's patch-merge MLP, first layer.
    MmMergerFc1 = "mm.merger.fc1" {
        "patch_merge_mlp.linear_1": ["minimax_m3"],
    }
    /// `mm.merger.fc2`: MiniMax-M3's patch-merge MLP, second layer.
    MmMergerFc2 = "mm.merger.fc2" {
        "patch_merge_mlp.linear_2": ["minimax_m3"],
    }
    /// `mm.model.mlp.{bid}`: the numbered layers of InternVL's MLP projector.
    MmprojMlp = "mm.model.mlp.{bid}" {
        "mlp1.{bid}": ["internvl", "nemotron_v2_vl"],
        "vision_model.vision_adapter.mlp.fc{bid}": ["llama4"],
    }
    /// `v.class_embd`.
    EncEmbdCls = "v.class_embd" {
        "vision_tower.vision_model.embeddings.class_embedding": ["internvl"],
        "model.vision_tower.embeddings.cls_token": ["internvl"],
        "vision_model.class_embedding": ["llama4"],
        "model.vision.patch_embedding.cls_embedding": ["cogvlm"],
        "model.vision_model.embeddings.class_embedding": ["deepseekocr"],
        "vision_model.radio_model.model.patch_generator.cls_token.token": ["nemotron_v2_vl"],
    }
    /// `v.patch_embd`.
    EncEmbdPatch = "v.patch_embd" {
        "vision_tower.vision_model.embeddings.patch_embedding": ["gemma3", "internvl", "lfm2", "phi4"],
        "model.vision_model.embeddings.patch_embedding": ["idefics3", "paddleocr", "janus_pro", "deepseekocr"],
        "vision_tower.patch_conv": ["pixtral", "lightonocr"],
        "visual.patch_embed.proj": ["qwen2vl_merger", "qwen3vl_merger", "exaone4_5"],
        "model.vision_tower.embeddings.patch_embeddings.projection": ["internvl"],
        "model.vision_tower.patch_embedder.input_proj": ["gemma4v"],
        "model.vision_embedder.patch_dense": ["gemma4uv"],
        "vision_tower.patch_embed.proj": ["kimivl", "kimik25"],
        "vision_model.patch_embedding.linear": ["llama4"],
        "model.vision_tower.vision_model.embeddings.patch_embedding": ["granite4_vision"],
        "siglip2.vision_model.embeddings.patch_embedding": ["youtuvl"],
        "vit.embeddings.patch_embedding": ["hunyuanvl"],
        "vision.patch_embed.proj": ["deepseek4v"],
        "model.vision.patch_embedding.proj": ["cogvlm"],
        "model.vision_tower.embeddings.patch_embedding": ["minicpmv4_6"],
        "vision_model.conv1": ["step3vl"],
        "vision_tower.patch_embed.patchifier.proj": ["dots_ocr"],
        "vision_model.radio_model.model.patch_generator.embedder": ["nemotron_v2_vl"],
    }
    /// `v.position_embd`.
    EncEmbdPos = "v.position_embd" {
        "vision_tower.vision_model.embeddings.position_embedding": ["gemma3", "internvl", "lfm2", "phi4"],
        "model.vision_model.embeddings.position_embedding": ["idefics3", "paddleocr", "janus_pro", "deepseekocr"],
        "visual.pos_embed": ["qwen3vl_merger", "ling3vl"],
        "model.vision_tower.embeddings.position_embeddings": ["internvl"],
        "visual.embeddings.position_embedding": ["glm4v"],
        "model.vision_tower.patch_embedder.position_embedding_table": ["gemma4v"],
        "model.vision_embedder.pos_embedding": ["gemma4uv"],
        "vision_tower.patch_embed.pos_emb": ["kimivl", "kimik25"],
        "vision_model.positional_embedding_vlm": ["llama4"],
        "model.vision_tower.vision_model.embeddings.position_embedding": ["granite4_vision"],
        "vit.embeddings.position_embedding": ["hunyuanvl"],
        "model.vision.patch_embedding.position_embedding": ["cogvlm"],
        "model.vision_tower.embeddings.position_embedding": ["minicpmv4_6"],
        "vision_model.positional_embedding": ["step3vl"],
        "vision_model.radio_model.model.patch_generator.pos_embed": ["nemotron_v2_vl"],
    }
    /// `v.blk.{bid}.attn_qkv`.
    EncAttnQkv = "v.blk.{bid}.attn_qkv" {
        "visual.blocks.{bid}.attn.qkv": ["glm4v", "glm5v", "qwen3vl_merger", "ling3vl", "exaone4_5", "mimovl"],
        "vision_tower.encoder.blocks.{bid}.wqkv": ["kimik25"],
        "vision.blocks.{bid}.attn.wqkv": ["deepseek4v"],
        "model.vision.transformer.layers.{bid}.attention.query_key_value": ["cogvlm"],
        "vision_model.transformer.resblocks.{bid}.attn.in_proj": ["step3vl"],
        "model.vision_model.transformer.layers.{bid}.self_attn.qkv_proj": ["deepseekocr"],
        "vision_tower.blocks.{bid}.attn.qkv": ["dots_ocr"],
        "vision_model.radio_model.model.blocks.{bid}.attn.qkv": ["nemotron_v2_vl"],
    }
    /// `v.blk.{bid}.attn_q`.
    EncAttnQ = "v.blk.{bid}.attn_q" {
        "vision_tower.vision_model.encoder.layers.{bid}.self_attn.q_proj": ["gemma3", "internvl", "lfm2", "minimax_m3", "phi4"],
        "model.vision_model.encoder.layers.{bid}.self_attn.q_proj": ["idefics3", "paddleocr", "janus_pro"],
        "vision_tower.transformer.layers.{bid}.attention.q_proj": ["pixtral", "lightonocr"],
        "visual.blocks.{bid}.attn.q": ["qwen2vl_merger"],
        "model.vision_tower.encoder.layer.{bid}.attention.q_proj": ["internvl"],
        "vision_model.model.layers.{bid}.self_attn.q_proj": ["gemma4v", "llama4"],
        "vision_model.model.layers.{bid}.self_attn.q_proj.linear": ["gemma4v"],
        "vision_tower.encoder.blocks.{bid}.wq": ["kimivl"],
        "model.vision_tower.vision_model.encoder.layers.{bid}.self_attn.q_proj": ["granite4_vision"],
        "siglip2.vision_model.encoder.layers.{bid}.self_attn.q_proj": ["youtuvl"],
        "vit.layers.{bid}.self_attn.q_proj": ["hunyuanvl"],
        "model.vision_tower.encoder.layers.{bid}.self_attn.q_proj": ["minicpmv4_6"],
        "model.qwen2_model.model.model.layers.{bid}.self_attn.q_proj": ["deepseekocr2"],
    }
    /// `v.blk.{bid}.attn_k`.
    EncAttnK = "v.blk.{bid}.attn_k" {
        "vision_tower.vision_model.encoder.layers.{bid}.self_attn.k_proj": ["gemma3", "internvl", "lfm2", "minimax_m3", "phi4"],
        "model.vision_model.encoder.layers.{bid}.self_attn.k_proj": ["idefics3", "paddleocr", "janus_pro"],
        "vision_tower.transformer.layers.{bid}.attention.k_proj": ["pixtral", "lightonocr"],
        "visual.blocks.{bid}.attn.k": ["qwen2vl_merger"],
        "model.vision_tower.encoder.layer.{bid}.attention.k_proj": ["internvl"],
        "vision_model.model.layers.{bid}.self_attn.k_proj": ["gemma4v", "llama4"],
        "vision_model.model.layers.{bid}.self_attn.k_proj.linear": ["gemma4v"],
        "vision_tower.encoder.blocks.{bid}.wk": ["kimivl"],
        "model.vision_tower.vision_model.encoder.layers.{bid}.self_attn.k_proj": ["granite4_vision"],
        "siglip2.vision_model.encoder.layers.{bid}.self_attn.k_proj": ["youtuvl"],
        "vit.layers.{bid}.self_attn.k_proj": ["hunyuanvl"],
        "model.vision_tower.encoder.layers.{bid}.self_attn.k_proj": ["minicpmv4_6"],
        "model.qwen2_model.model.model.layers.{bid}.self_attn.k_proj": ["deepseekocr2"],
    }
    /// `v.blk.{bid}.attn_v`.
    EncAttnV = "v.blk.{bid}.attn_v" {
        "vision_tower.vision_model.encoder.layers.{bid}.self_attn.v_proj": ["gemma3", "internvl", "lfm2", "minimax_m3", "phi4"],
        "model.vision_model.encoder.layers.{bid}.self_attn.v_proj": ["idefics3", "paddleocr", "janus_pro"],
        "vision_tower.transformer.layers.{bid}.attention.v_proj": ["pixtral", "lightonocr"],
        "visual.blocks.{bid}.attn.v": ["qwen2vl_merger"],
        "model.vision_tower.encoder.layer.{bid}.attention.v_proj": ["internvl"],
        "vision_model.model.layers.{bid}.self_attn.v_proj": ["gemma4v", "llama4"],
        "vision_model.model.layers.{bid}.self_attn.v_proj.linear": ["gemma4v"],
        "vision_tower.encoder.blocks.{bid}.wv": ["kimivl"],
        "model.vision_tower.vision_model.encoder.layers.{bid}.self_attn.v_proj": ["granite4_vision"],
        "siglip2.vision_model.encoder.layers.{bid}.self_attn.v_proj": ["youtuvl"],
        "vit.layers.{bid}.self_attn.v_proj": ["hunyuanvl"],
        "model.vision_tower.encoder.layers.{bid}.self_attn.v_proj": ["minicpmv4_6"],
        "model.qwen2_model.model.model.layers.{bid}.self_attn.v_proj": ["deepseekocr2"],
    }
    /// `v.blk.{bid}.attn_q_norm`.
    EncAttnQNorm = "v.blk.{bid}.attn_q_norm" {
        "vision_tower.vision_model.encoder.layers.{bid}.attn.q_norm": ["internvl"],
        "model.vision_tower.encoder.layer.{bid}.attention.q_norm": ["internvl"],
        "visual.blocks.{bid}.attn.q_norm": ["glm4v", "glm5v"],
        "vision_model.model.layers.{bid}.self_attn.q_norm": ["gemma4v"],
    }
    /// `v.blk.{bid}.attn_k_norm`.
    EncAttnKNorm = "v.blk.{bid}.attn_k_norm" {
        "vision_tower.vision_model.encoder.layers.{bid}.attn.k_norm": ["internvl"],
        "model.vision_tower.encoder.layer.{bid}.attention.k_norm": ["internvl"],
        "visual.blocks.{bid}.attn.k_norm": ["glm4v", "glm5v"],
        "vision_model.model.layers.{bid}.self_attn.k_norm": ["gemma4v"],
    }
    /// `v.blk.{bid}.ln1`.
    EncInputNorm = "v.blk.{bid}.ln1" {
        "vision_tower.vision_model.encoder.layers.{bid}.layer_norm1": ["gemma3", "lfm2", "minimax_m3", "phi4"],
        "model.vision_model.encoder.layers.{bid}.layer_norm1": ["idefics3", "paddleocr", "janus_pro"],
        "vision_tower.transformer.layers.{bid}.attention_norm": ["pixtral", "lightonocr"],
        "visual.blocks.{bid}.norm1": ["glm4v", "glm5v", "qwen2vl_merger", "qwen3vl_merger", "ling3vl", "exaone4_5", "mimovl"],
        "vision_tower.vision_model.encoder.layers.{bid}.norm1": ["internvl"],
        "model.vision_tower.encoder.layer.{bid}.layernorm_before": ["internvl"],
        "vision_model.model.layers.{bid}.input_layernorm": ["gemma4v", "llama4"],
        "vision_tower.encoder.blocks.{bid}.norm0": ["kimivl", "kimik25"],
        "model.vision_tower.vision_model.encoder.layers.{bid}.layer_norm1": ["granite4_vision"],
        "siglip2.vision_model.encoder.layers.{bid}.layer_norm1": ["youtuvl"],
        "vit.layers.{bid}.input_layernorm": ["hunyuanvl"],
        "vision.blocks.{bid}.norm1": ["deepseek4v"],
        "model.vision.transformer.layers.{bid}.input_layernorm": ["cogvlm"],
        "model.vision_tower.encoder.layers.{bid}.layer_norm1": ["minicpmv4_6"],
        "vision_model.transformer.resblocks.{bid}.ln_1": ["step3vl"],
        "model.vision_model.transformer.layers.{bid}.layer_norm1": ["deepseekocr"],
        "model.qwen2_model.model.model.layers.{bid}.input_layernorm": ["deepseekocr2"],
        "vision_tower.blocks.{bid}.norm1": ["dots_ocr"],
        "vision_model.radio_model.model.blocks.{bid}.norm1": ["nemotron_v2_vl"],
    }
    /// `v.blk.{bid}.attn_out`.
    EncAttnO = "v.blk.{bid}.attn_out" {
        "vision_tower.vision_model.encoder.layers.{bid}.self_attn.out_proj": ["gemma3", "lfm2", "minimax_m3", "phi4"],
        "model.vision_model.encoder.layers.{bid}.self_attn.out_proj": ["idefics3", "paddleocr"],
        "vision_tower.transformer.layers.{bid}.attention.o_proj": ["pixtral", "lightonocr"],
        "visual.blocks.{bid}.attn.proj": ["glm4v", "glm5v", "qwen2vl_merger", "qwen3vl_merger", "ling3vl", "exaone4_5", "mimovl"],
        "vision_tower.vision_model.encoder.layers.{bid}.attn.proj": ["internvl"],
        "model.vision_tower.encoder.layer.{bid}.attention.projection_layer": ["internvl"],
        "vision_model.model.layers.{bid}.self_attn.o_proj": ["gemma4v", "llama4"],
        "vision_model.model.layers.{bid}.self_attn.o_proj.linear": ["gemma4v"],
        "vision_tower.encoder.blocks.{bid}.wo": ["kimivl", "kimik25"],
        "model.vision_tower.vision_model.encoder.layers.{bid}.self_attn.out_proj": ["granite4_vision"],
        "siglip2.vision_model.encoder.layers.{bid}.self_attn.out_proj": ["youtuvl"],
        "vit.layers.{bid}.self_attn.o_proj": ["hunyuanvl"],
        "vision.blocks.{bid}.attn.wo": ["deepseek4v"],
        "model.vision.transformer.layers.{bid}.attention.dense": ["cogvlm"],
        "model.vision_model.encoder.layers.{bid}.self_attn.projection_layer": ["janus_pro"],
        "model.vision_tower.encoder.layers.{bid}.self_attn.out_proj": ["minicpmv4_6"],
        "vision_model.transformer.resblocks.{bid}.attn.out_proj": ["step3vl"],
        "model.vision_model.transformer.layers.{bid}.self_attn.out_proj": ["deepseekocr"],
        "model.qwen2_model.model.model.layers.{bid}.self_attn.o_proj": ["deepseekocr2"],
        "vision_tower.blocks.{bid}.attn.proj": ["dots_ocr"],
        "vision_model.radio_model.model.blocks.{bid}.attn.proj": ["nemotron_v2_vl"],
    }
    /// `v.blk.{bid}.ln2`.
    EncPostAttnNorm = "v.blk.{bid}.ln2" {
        "vision_tower.vision_model.encoder.layers.{bid}.layer_norm2": ["gemma3", "lfm2", "minimax_m3", "phi4"],
        "model.vision_model.encoder.layers.{bid}.layer_norm2": ["idefics3", "paddleocr", "janus_pro"],
        "vision_tower.transformer.layers.{bid}.ffn_norm": ["pixtral", "lightonocr"],
        "visual.blocks.{bid}.norm2": ["glm4v", "glm5v", "qwen2vl_merger", "qwen3vl_merger", "ling3vl", "exaone4_5", "mimovl"],
        "vision_tower.vision_model.encoder.layers.{bid}.norm2": ["internvl"],
        "model.vision_tower.encoder.layer.{bid}.layernorm_after": ["internvl"],
        "vision_model.model.layers.{bid}.pre_feedforward_layernorm": ["gemma4v"],
        "vision_tower.encoder.blocks.{bid}.norm1": ["kimivl", "kimik25"],
        "model.vision_tower.vision_model.encoder.layers.{bid}.layer_norm2": ["granite4_vision"],
        "siglip2.vision_model.encoder.layers.{bid}.layer_norm2": ["youtuvl"],
        "vit.layers.{bid}.post_attention_layernorm": ["hunyuanvl"],
        "vision.blocks.{bid}.norm2": ["deepseek4v"],
        "model.vision.transformer.layers.{bid}.post_attention_layernorm": ["cogvlm"],
        "model.vision_tower.encoder.layers.{bid}.layer_norm2": ["minicpmv4_6"],
        "vision_model.transformer.resblocks.{bid}.ln_2": ["step3vl"],
        "model.vision_model.transformer.layers.{bid}.layer_norm2": ["deepseekocr"],
        "model.qwen2_model.model.model.layers.{bid}.post_attention_layernorm": ["deepseekocr2"],
        "vision_tower.blocks.{bid}.norm2": ["dots_ocr"],
        "vision_model.radio_model.model.blocks.{bid}.norm2": ["nemotron_v2_vl"],
    }
    /// `v.blk.{bid}.ffn_up`.
    EncFfnUp = "v.blk.{bid}.ffn_up" {
        "vision_tower.vision_model.encoder.layers.{bid}.mlp.fc1": ["gemma3", "internvl", "lfm2", "minimax_m3", "phi4"],
        "model.vision_model.encoder.layers.{bid}.mlp.fc1": ["idefics3", "paddleocr", "janus_pro"],
        "vision_tower.transformer.layers.{bid}.feed_forward.up_proj": ["pixtral", "lightonocr"],
        "visual.blocks.{bid}.mlp.fc1": ["qwen2vl_merger"],
        "visual.blocks.{bid}.mlp.up_proj": ["glm4v", "glm5v", "qwen2vl_merger", "exaone4_5", "dots_ocr", "mimovl"],
        "visual.blocks.{bid}.mlp.linear_fc1": ["qwen3vl_merger", "ling3vl"],
        "model.vision_tower.encoder.layer.{bid}.mlp.fc1": ["internvl"],
        "vision_model.model.layers.{bid}.mlp.up_proj": ["gemma4v"],
        "vision_tower.encoder.blocks.{bid}.mlp.fc0": ["kimivl", "kimik25"],
        "vision_model.model.layers.{bid}.mlp.fc1": ["llama4"],
        "model.vision_tower.vision_model.encoder.layers.{bid}.mlp.fc1": ["granite4_vision"],
        "siglip2.vision_model.encoder.layers.{bid}.mlp.fc1": ["youtuvl"],
        "vit.layers.{bid}.mlp.dense_h_to_4h": ["hunyuanvl"],
        "vision.blocks.{bid}.mlp.w1_up": ["deepseek4v"],
        "model.vision.transformer.layers.{bid}.mlp.fc1": ["cogvlm"],
        "model.vision_tower.encoder.layers.{bid}.mlp.fc1": ["minicpmv4_6"],
        "vision_model.transformer.resblocks.{bid}.mlp.c_fc": ["step3vl"],
        "model.vision_model.transformer.layers.{bid}.mlp.fc1": ["deepseekocr"],
        "model.qwen2_model.model.model.layers.{bid}.mlp.up_proj": ["deepseekocr2"],
        "vision_model.radio_model.model.blocks.{bid}.mlp.fc1": ["nemotron_v2_vl"],
    }
    /// `v.blk.{bid}.ffn_gate`.
    EncFfnGate = "v.blk.{bid}.ffn_gate" {
        "vision_tower.transformer.layers.{bid}.feed_forward.gate_proj": ["pixtral", "lightonocr"],
        "visual.blocks.{bid}.mlp.gate_proj": ["glm4v", "glm5v", "qwen2vl_merger", "exaone4_5", "dots_ocr", "mimovl"],
        "vision_model.model.layers.{bid}.mlp.gate_proj": ["gemma4v"],
        "vision.blocks.{bid}.mlp.w1_gate": ["deepseek4v"],
        "model.qwen2_model.model.model.layers.{bid}.mlp.gate_proj": ["deepseekocr2"],
    }
    /// `v.blk.{bid}.ffn_down`.
    EncFfnDown = "v.blk.{bid}.ffn_down" {
        "vision_tower.vision_model.encoder.layers.{bid}.mlp.fc2": ["gemma3", "internvl", "lfm2", "minimax_m3", "phi4"],
        "model.vision_model.encoder.layers.{bid}.mlp.fc2": ["idefics3", "paddleocr", "janus_pro"],
        "vision_tower.transformer.layers.{bid}.feed_forward.down_proj": ["pixtral", "lightonocr"],
        "visual.blocks.{bid}.mlp.fc2": ["qwen2vl_merger"],
        "visual.blocks.{bid}.mlp.down_proj": ["glm4v", "glm5v", "qwen2vl_merger", "exaone4_5", "dots_ocr", "mimovl"],
        "visual.blocks.{bid}.mlp.linear_fc2": ["qwen3vl_merger", "ling3vl"],
        "model.vision_tower.encoder.layer.{bid}.mlp.fc2": ["internvl"],
        "vision_model.model.layers.{bid}.mlp.down_proj": ["gemma4v"],
        "vision_tower.encoder.blocks.{bid}.mlp.fc1": ["kimivl", "kimik25"],
        "vision_model.model.layers.{bid}.mlp.fc2": ["llama4"],
        "model.vision_tower.vision_model.encoder.layers.{bid}.mlp.fc2": ["granite4_vision"],
        "siglip2.vision_model.encoder.layers.{bid}.mlp.fc2": ["youtuvl"],
        "vit.layers.{bid}.mlp.dense_4h_to_h": ["hunyuanvl"],
        "vision.blocks.{bid}.mlp.w2": ["deepseek4v"],
        "model.vision.transformer.layers.{bid}.mlp.fc2": ["cogvlm"],
        "model.vision_tower.encoder.layers.{bid}.mlp.fc2": ["minicpmv4_6"],
        "vision_model.transformer.resblocks.{bid}.mlp.c_proj": ["step3vl"],
        "model.vision_model.transformer.layers.{bid}.mlp.fc2": ["deepseekocr"],
        "model.qwen2_model.model.model.layers.{bid}.mlp.down_proj": ["deepseekocr2"],
        "vision_model.radio_model.model.blocks.{bid}.mlp.fc2": ["nemotron_v2_vl"],
    }
    /// `v.blk.{bid}.ls1`: the layer scale of the attention branch.
    LayerScale1 = "v.blk.{bid}.ls1" {
        "vision_tower.vision_model.encoder.layers.{bid}.ls1": ["internvl"],
        "model.vision_tower.encoder.layer.{bid}.lambda_1": ["internvl"],
        "vision_model.transformer.resblocks.{bid}.ls_1": ["step3vl"],
    }
    /// `v.blk.{bid}.ls2`: the layer scale of the FFN branch.
    LayerScale2 = "v.blk.{bid}.ls2" {
        "vision_tower.vision_model.encoder.layers.{bid}.ls2": ["internvl"],
        "model.vision_tower.encoder.layer.{bid}.lambda_2": ["internvl"],
        "vision_model.transformer.resblocks.{bid}.ls_2": ["step3vl"],
    }
    /// `v.pre_ln`.
    PreNorm = "v.pre_ln" {
        "vision_tower.ln_pre": ["pixtral", "lightonocr"],
        "vision_model.layernorm_pre": ["llama4"],
        "vision_tower.vision_model.pre_layrnorm": ["minimax_m3"],
        "vision_model.ln_pre": ["step3vl"],
        "model.vision_model.pre_layrnorm": ["deepseekocr"],
        "vision_tower.patch_embed.patchifier.norm": ["dots_ocr"],
    }
    /// `v.post_ln`.
    PostNorm = "v.post_ln" {
        "vision_tower.vision_model.post_layernorm": ["gemma3", "lfm2"],
        "model.vision_model.post_layernorm": ["idefics3", "paddleocr", "janus_pro"],
        "visual.merger.ln_q": ["qwen2vl_merger", "exaone4_5", "mimovl"],
        "visual.post_layernorm": ["glm4v", "glm5v"],
        "vision_tower.encoder.final_layernorm": ["kimivl", "kimik25"],
        "vision_model.layernorm_post": ["llama4"],
        "model.vision_tower.vision_model.post_layernorm": ["granite4_vision"],
        "siglip2.vision_model.post_layernorm": ["youtuvl"],
        "vision.norm": ["deepseek4v"],
        "model.vision_tower.post_layernorm": ["minicpmv4_6"],
        "model.qwen2_model.model.model.norm": ["deepseekocr2"],
    }
    /// `mm.input_projection`.
    MmInpProj = "mm.input_projection" {
        "multi_modal_projector.mm_input_projection": ["gemma3"],
        "model.embed_vision.embedding_projection": ["gemma4v", "gemma4uv", "gemma3nv"],
    }
    /// `mm.input_norm`.
    MmInpNorm = "mm.input_norm" {
        "multi_modal_projector.norm": ["pixtral", "lightonocr"],
        "multi_modal_projector.pre_norm": ["kimivl"],
        "mm_projector.pre_norm": ["kimik25"],
        "multi_modal_projector.layer_norm": ["lfm2"],
        "merger.ln_q": ["youtuvl"],
        "mlp_AR.pre_norm": ["paddleocr"],
        "model.merger.mlp.0.pre_norm": ["minicpmv4_6"],
        "vision_tower.merger.ln_q": ["dots_ocr"],
    }
    /// `mm.soft_emb_norm`.
    MmSoftEmbNorm = "mm.soft_emb_norm" {
        "multi_modal_projector.mm_soft_emb_norm": ["gemma3"],
        "model.embed_vision.soft_embedding_norm": ["gemma3nv"],
    }
    /// `v.token_embd.img_break`.
    TokEmbdImgBreak = "v.token_embd.img_break" {
    }
    /// `mm.patch_merger`.
    MmPatchMerger = "mm.patch_merger" {
        "multi_modal_projector.patch_merger.merging_layer": ["pixtral", "lightonocr"],
        "visual.downsample": ["glm4v", "glm5v"],
    }
    /// `v.deepstack.{bid}.norm`.
    DsNorm = "v.deepstack.{bid}.norm" {
    }
    /// `v.deepstack.{bid}.fc1`.
    DsFc1 = "v.deepstack.{bid}.fc1" {
    }
    /// `v.deepstack.{bid}.fc2`.
    DsFc2 = "v.deepstack.{bid}.fc2" {
    }
    /// `v.norm_embd`: the norm after the patch embedding (GLM-4V).
    EncEmbdNorm = "v.norm_embd" {
        "visual.post_conv_layernorm": ["glm4v"],
    }
    /// `mm.post_norm`: the norm after the merger's projection (GLM-4V).
    MmPostNorm = "mm.post_norm" {
        "visual.merger.post_projection_norm": ["glm4v", "glm5v"],
        "vit.perceive.after_rms": ["hunyuanvl"],
        "vision_tower.post_trunk_norm": ["dots_ocr"],
    }
    /// `mm.up`: the merger's SwiGLU up projection (GLM-4V).
    MmUp = "mm.up" {
        "visual.merger.up_proj": ["glm4v", "glm5v"],
        "model.vision.linear_proj.dense_h_to_4h": ["cogvlm"],
        "model.merger.mlp.0.linear_1": ["minicpmv4_6"],
    }
    /// `mm.down`: the merger's down projection (GLM-4V).
    MmDown = "mm.down" {
        "visual.merger.down_proj": ["glm4v", "glm5v"],
        "model.vision.linear_proj.dense_4h_to_h": ["cogvlm"],
        "model.merger.mlp.0.linear_2": ["minicpmv4_6"],
    }
    /// `mm.gate`: the merger's SwiGLU gate (GLM-4V).
    MmGate = "mm.gate" {
        "visual.merger.gate_proj": ["glm4v", "glm5v"],
        "model.vision.linear_proj.gate_proj": ["cogvlm"],
    }
    /// `a.conv1d.{bid}`.
    AEncConv1d = "a.conv1d.{bid}" {
        "audio_tower.conv{bid}": ["qwen2a", "ultravox", "voxtral", "musicflamingo", "meralion", "glma"],
        "conformer.subsample_conv_projection.layer{bid}.conv": ["gemma4v"],
        "model.audio_tower.subsample_conv_projection.conv_{bid}.conv": ["gemma3nv"],
        "sound_encoder.encoder.subsampling.layers.{bid}": ["nemotron_v2_vl"],
        "conformer.pre_encode.conv.{bid}": ["lfm2a"],
        "encoder.conv{bid}": ["mimovl"],
    }
    /// `a.position_embd`.
    AEncEmbdPos = "a.position_embd" {
        "audio_tower.embed_positions": ["qwen2a", "ultravox", "voxtral", "musicflamingo", "meralion", "glma"],
        "audio_embedding.embedding": ["lfm2a"],
    }
    /// `a.post_ln`.
    APostNorm = "a.post_ln" {
        "audio_tower.layer_norm": ["qwen2a", "ultravox", "voxtral", "musicflamingo", "meralion"],
        "encoder.layer_norm": ["mimovl"],
    }
    /// `a.blk.{bid}.attn_q`.
    AEncAttnQ = "a.blk.{bid}.attn_q" {
        "audio_tower.layers.{bid}.self_attn.q_proj": ["qwen2a", "ultravox", "voxtral", "musicflamingo", "meralion", "glma"],
        "conformer.layers.{bid}.self_attn.q_proj": ["gemma4v"],
        "conformer.layers.{bid}.attention.attn.q_proj": ["gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.self_attn.q_proj": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.attn.to_q": ["granite_speech"],
        "conformer.layers.{bid}.self_attn.linear_q": ["lfm2a"],
        "encoder.layers.{bid}.self_attn.q_proj": ["mimovl"],
    }
    /// `a.blk.{bid}.attn_k`.
    AEncAttnK = "a.blk.{bid}.attn_k" {
        "audio_tower.layers.{bid}.self_attn.k_proj": ["qwen2a", "ultravox", "voxtral", "musicflamingo", "meralion", "glma"],
        "conformer.layers.{bid}.self_attn.k_proj": ["gemma4v"],
        "conformer.layers.{bid}.attention.attn.k_proj": ["gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.self_attn.k_proj": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.attn.to_k": ["granite_speech"],
        "conformer.layers.{bid}.self_attn.linear_k": ["lfm2a"],
        "encoder.layers.{bid}.self_attn.k_proj": ["mimovl"],
    }
    /// `a.blk.{bid}.attn_v`.
    AEncAttnV = "a.blk.{bid}.attn_v" {
        "audio_tower.layers.{bid}.self_attn.v_proj": ["qwen2a", "ultravox", "voxtral", "musicflamingo", "meralion", "glma"],
        "conformer.layers.{bid}.self_attn.v_proj": ["gemma4v"],
        "conformer.layers.{bid}.attention.attn.v_proj": ["gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.self_attn.v_proj": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.attn.to_v": ["granite_speech"],
        "conformer.layers.{bid}.self_attn.linear_v": ["lfm2a"],
        "encoder.layers.{bid}.self_attn.v_proj": ["mimovl"],
    }
    /// `a.blk.{bid}.ln1`.
    AEncInputNorm = "a.blk.{bid}.ln1" {
        "audio_tower.layers.{bid}.self_attn_layer_norm": ["qwen2a", "ultravox", "voxtral", "musicflamingo", "meralion", "glma"],
        "conformer.layers.{bid}.attention.pre_attn_norm": ["gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.norm_self_att": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.attn.pre_norm": ["granite_speech"],
        "conformer.layers.{bid}.norm_self_att": ["lfm2a"],
        "encoder.layers.{bid}.self_attn_layer_norm": ["mimovl"],
    }
    /// `a.blk.{bid}.attn_out`.
    AEncOutput = "a.blk.{bid}.attn_out" {
        "audio_tower.layers.{bid}.self_attn.out_proj": ["qwen2a", "ultravox", "voxtral", "musicflamingo", "meralion", "glma"],
        "conformer.layers.{bid}.self_attn.post": ["gemma4v"],
        "conformer.layers.{bid}.attention.post": ["gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.self_attn.o_proj": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.attn.to_out": ["granite_speech"],
        "conformer.layers.{bid}.self_attn.linear_out": ["lfm2a"],
        "encoder.layers.{bid}.self_attn.out_proj": ["mimovl"],
    }
    /// `a.blk.{bid}.ln2`.
    AEncOutputNorm = "a.blk.{bid}.ln2" {
        "audio_tower.layers.{bid}.final_layer_norm": ["qwen2a", "ultravox", "voxtral", "musicflamingo", "meralion", "glma"],
        "conformer.layers.{bid}.norm_out": ["gemma4v", "lfm2a"],
        "conformer.layers.{bid}.attention.post_norm": ["gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.norm_out": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.post_norm": ["granite_speech"],
        "encoder.layers.{bid}.final_layer_norm": ["mimovl"],
    }
    /// `a.blk.{bid}.ffn_up`.
    AEncFfnUp = "a.blk.{bid}.ffn_up" {
        "audio_tower.layers.{bid}.fc1": ["qwen2a", "ultravox", "voxtral", "musicflamingo", "meralion", "glma"],
        "conformer.layers.{bid}.feed_forward1.ffw_layer_1": ["gemma4v"],
        "conformer.layers.{bid}.ffw_layer_start.ffw_layer_1": ["gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.feed_forward1.linear1": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.ff1.up_proj": ["granite_speech"],
        "conformer.layers.{bid}.feed_forward1.linear1": ["lfm2a"],
        "encoder.layers.{bid}.fc1": ["mimovl"],
    }
    /// `a.blk.{bid}.ffn_down`.
    AEncFfnDown = "a.blk.{bid}.ffn_down" {
        "audio_tower.layers.{bid}.fc2": ["qwen2a", "ultravox", "voxtral", "musicflamingo", "meralion", "glma"],
        "conformer.layers.{bid}.feed_forward1.ffw_layer_2": ["gemma4v"],
        "conformer.layers.{bid}.ffw_layer_start.ffw_layer_2": ["gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.feed_forward1.linear2": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.ff1.down_proj": ["granite_speech"],
        "conformer.layers.{bid}.feed_forward1.linear2": ["lfm2a"],
        "encoder.layers.{bid}.fc2": ["mimovl"],
    }
    /// `mm.a.fc`: Qwen2-Audio's linear projector.
    AMmprojFc = "mm.a.fc" {
        "audio.multi_modal_projector.linear": ["qwen2a"],
    }
    /// `mm.a.mlp.{bid}`: the numbered layers of an audio MLP projector (Ultravox).
    AMmproj = "mm.a.mlp.{bid}" {
        "audio.multi_modal_projector.linear_{bid}": ["ultravox", "voxtral", "musicflamingo", "glma"],
        "sound_projection.linear{bid}": ["nemotron_v2_vl"],
        "audio_adapter.model.{bid}": ["lfm2a"],
    }
    /// `mm.a.norm_pre`: the norm before an audio projector (Ultravox).
    AMmNormPre = "mm.a.norm_pre" {
        "audio.multi_modal_projector.ln_pre": ["ultravox", "glma"],
        "sound_projection.norm": ["nemotron_v2_vl"],
    }
    /// `mm.a.norm_mid`: the norm inside an audio projector (Ultravox).
    AMmNormMid = "mm.a.norm_mid" {
        "audio.multi_modal_projector.ln_mid": ["ultravox"],
    }
    /// `v.blk.{bid}.attn_sinks`: per-head attention sinks (MiMo-VL).
    EncAttnSinks = "v.blk.{bid}.attn_sinks" {
        "visual.blocks.{bid}.attn.sinks": ["mimovl"],
    }
    /// `a.downsample.conv`: the audio encoder's downsampling convolution after its blocks
    /// (MiMo's audio tokenizer).
    AEncDownsampleConv = "a.downsample.conv" {
        "encoder.down_sample_layer.0": ["mimovl"],
    }
    /// `a.downsample.norm`: the norm after that convolution (MiMo's audio tokenizer).
    AEncDownsampleNorm = "a.downsample.norm" {
        "encoder.down_sample_norm": ["mimovl"],
    }
    /// `mm.a.local_blk.{bid}.attn_q`: the query of a block of the LLM-side audio connector
    /// (MiMo's input local transformer).
    AMmLocalAttnQ = "mm.a.local_blk.{bid}.attn_q" {
        "audio_encoder.input_local_transformer.layers.{bid}.self_attn.q_proj": ["mimovl"],
    }
    /// `mm.a.local_blk.{bid}.attn_k`: the key of a block of the LLM-side audio connector
    /// (MiMo's input local transformer).
    AMmLocalAttnK = "mm.a.local_blk.{bid}.attn_k" {
        "audio_encoder.input_local_transformer.layers.{bid}.self_attn.k_proj": ["mimovl"],
    }
    /// `mm.a.local_blk.{bid}.attn_v`: the value of a block of the LLM-side audio connector
    /// (MiMo's input local transformer).
    AMmLocalAttnV = "mm.a.local_blk.{bid}.attn_v" {
        "audio_encoder.input_local_transformer.layers.{bid}.self_attn.v_proj": ["mimovl"],
    }
    /// `mm.a.local_blk.{bid}.attn_out`: the attention output of a block of the LLM-side audio connector
    /// (MiMo's input local transformer).
    AMmLocalAttnOut = "mm.a.local_blk.{bid}.attn_out" {
        "audio_encoder.input_local_transformer.layers.{bid}.self_attn.o_proj": ["mimovl"],
    }
    /// `mm.a.local_blk.{bid}.ffn_gate`: the FFN gate of a block of the LLM-side audio connector
    /// (MiMo's input local transformer).
    AMmLocalFfnGate = "mm.a.local_blk.{bid}.ffn_gate" {
        "audio_encoder.input_local_transformer.layers.{bid}.mlp.gate_proj": ["mimovl"],
    }
    /// `mm.a.local_blk.{bid}.ffn_up`: the FFN up of a block of the LLM-side audio connector
    /// (MiMo's input local transformer).
    AMmLocalFfnUp = "mm.a.local_blk.{bid}.ffn_up" {
        "audio_encoder.input_local_transformer.layers.{bid}.mlp.up_proj": ["mimovl"],
    }
    /// `mm.a.local_blk.{bid}.ffn_down`: the FFN down of a block of the LLM-side audio connector
    /// (MiMo's input local transformer).
    AMmLocalFfnDown = "mm.a.local_blk.{bid}.ffn_down" {
        "audio_encoder.input_local_transformer.layers.{bid}.mlp.down_proj": ["mimovl"],
    }
    /// `mm.a.local_blk.{bid}.ln1`: the attention norm of a block of the LLM-side audio connector
    /// (MiMo's input local transformer).
    AMmLocalLn1 = "mm.a.local_blk.{bid}.ln1" {
        "audio_encoder.input_local_transformer.layers.{bid}.input_layernorm": ["mimovl"],
    }
    /// `mm.a.local_blk.{bid}.ln2`: the FFN norm of a block of the LLM-side audio connector
    /// (MiMo's input local transformer).
    AMmLocalLn2 = "mm.a.local_blk.{bid}.ln2" {
        "audio_encoder.input_local_transformer.layers.{bid}.post_attention_layernorm": ["mimovl"],
    }
    /// `mm.a.local_norm`: the final norm of MiMo's input local transformer.
    AMmLocalNorm = "mm.a.local_norm" {
        "audio_encoder.input_local_transformer.norm": ["mimovl"],
    }
    /// `v.patch_norm.{bid}`: the norms around a patch embedder (Gemma 4 Unified).
    EncEmbdPatchNorm = "v.patch_norm.{bid}" {
        "model.vision_embedder.patch_ln{bid}": ["gemma4uv"],
    }
    /// `v.blk.{bid}.attn_post_norm`: the norm after a block's attention.
    EncAttnPostNorm = "v.blk.{bid}.attn_post_norm" {
        "vision_model.model.layers.{bid}.post_attention_layernorm": ["gemma4v", "llama4"],
    }
    /// `v.blk.{bid}.ffn_post_norm`: the norm after a block's FFN.
    EncFfnPostNorm = "v.blk.{bid}.ffn_post_norm" {
        "vision_model.model.layers.{bid}.post_feedforward_layernorm": ["gemma4v"],
    }
    /// `v.blk.{bid}.out_scale`: a block's output scale.
    LayerOutScale = "v.blk.{bid}.out_scale" {
        "vision_model.model.layers.{bid}.layer_scalar": ["gemma4v"],
    }
    /// `v.std_bias`: the bias of the tower's output standardization.
    StdBias = "v.std_bias" {
        "model.vision_tower.std_bias": ["gemma4v"],
    }
    /// `v.std_scale`: the scale of the tower's output standardization.
    StdScale = "v.std_scale" {
        "model.vision_tower.std_scale": ["gemma4v"],
    }
    /// `a.conv1d.{bid}.norm`: the norm after a subsampling convolution.
    AEncConv1dNorm = "a.conv1d.{bid}.norm" {
        "conformer.subsample_conv_projection.layer{bid}.norm": ["gemma4v"],
    }
    /// `a.input_projection`: the projection after the subsampling convolutions.
    AEncInpProj = "a.input_projection" {
        "conformer.subsample_conv_projection.input_proj_linear": ["gemma4v"],
        "encoder.input_linear": ["granite_speech"],
    }
    /// `a.blk.{bid}.attn_k_rel`: the relative-position key projection.
    AEncAttnKRel = "a.blk.{bid}.attn_k_rel" {
        "conformer.layers.{bid}.self_attn.relative_k_proj": ["gemma4v"],
    }
    /// `a.blk.{bid}.attn_post_norm`.
    AEncAttnPostNorm = "a.blk.{bid}.attn_post_norm" {
        "conformer.layers.{bid}.norm_post_attn": ["gemma4v"],
    }
    /// `a.blk.{bid}.attn_pre_norm`.
    AEncAttnPreNorm = "a.blk.{bid}.attn_pre_norm" {
        "conformer.layers.{bid}.norm_pre_attn": ["gemma4v"],
    }
    /// `a.blk.{bid}.per_dim_scale`: the per-dimension query scale.
    AEncPerDimScale = "a.blk.{bid}.per_dim_scale" {
        "conformer.layers.{bid}.self_attn.per_dim_scale": ["gemma4v", "gemma3nv"],
        "conformer.layers.{bid}.attention.attn.per_dim_scale": ["gemma4v", "gemma3nv"],
    }
    /// `a.blk.{bid}.per_dim_k_scale`: the per-dimension key scale.
    APerDimKScale = "a.blk.{bid}.per_dim_k_scale" {
        "conformer.layers.{bid}.attention.attn.per_dim_key_scale": ["gemma4v"],
    }
    /// `a.blk.{bid}.ffn_norm`: the norm before the first (half-step) FFN.
    AEncFfnNorm = "a.blk.{bid}.ffn_norm" {
        "conformer.layers.{bid}.feed_forward1.pre_layer_norm": ["gemma4v"],
        "conformer.layers.{bid}.ffw_layer_start.pre_layer_norm": ["gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.norm_feed_forward1": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.ff1.pre_norm": ["granite_speech"],
        "conformer.layers.{bid}.norm_feed_forward1": ["lfm2a"],
    }
    /// `a.blk.{bid}.ffn_post_norm`: the norm after the first FFN.
    AEncFfnPostNorm = "a.blk.{bid}.ffn_post_norm" {
        "conformer.layers.{bid}.feed_forward1.post_layer_norm": ["gemma4v"],
        "conformer.layers.{bid}.ffw_layer_start.post_layer_norm": ["gemma3nv"],
    }
    /// `a.blk.{bid}.ffn_up_1`: the second FFN's up projection.
    AEncFfnUp1 = "a.blk.{bid}.ffn_up_1" {
        "conformer.layers.{bid}.feed_forward2.ffw_layer_1": ["gemma4v"],
        "conformer.layers.{bid}.ffw_layer_end.ffw_layer_1": ["gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.feed_forward2.linear1": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.ff2.up_proj": ["granite_speech"],
        "conformer.layers.{bid}.feed_forward2.linear1": ["lfm2a"],
    }
    /// `a.blk.{bid}.ffn_down_1`: the second FFN's down projection.
    AEncFfnDown1 = "a.blk.{bid}.ffn_down_1" {
        "conformer.layers.{bid}.feed_forward2.ffw_layer_2": ["gemma4v"],
        "conformer.layers.{bid}.ffw_layer_end.ffw_layer_2": ["gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.feed_forward2.linear2": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.ff2.down_proj": ["granite_speech"],
        "conformer.layers.{bid}.feed_forward2.linear2": ["lfm2a"],
    }
    /// `a.blk.{bid}.ffn_norm_1`: the norm before the second FFN.
    AEncFfnNorm1 = "a.blk.{bid}.ffn_norm_1" {
        "conformer.layers.{bid}.feed_forward2.pre_layer_norm": ["gemma4v"],
        "conformer.layers.{bid}.ffw_layer_end.pre_layer_norm": ["gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.norm_feed_forward2": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.ff2.pre_norm": ["granite_speech"],
        "conformer.layers.{bid}.norm_feed_forward2": ["lfm2a"],
    }
    /// `a.blk.{bid}.ffn_post_norm_1`: the norm after the second FFN.
    AEncFfnPostNorm1 = "a.blk.{bid}.ffn_post_norm_1" {
        "conformer.layers.{bid}.feed_forward2.post_layer_norm": ["gemma4v"],
        "conformer.layers.{bid}.ffw_layer_end.post_layer_norm": ["gemma3nv"],
    }
    /// `a.blk.{bid}.conv_dw`: the light convolution's depthwise kernel.
    AEncConvDw = "a.blk.{bid}.conv_dw" {
        "conformer.layers.{bid}.lconv1d.depthwise_conv1d": ["gemma4v", "gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.conv.depthwise_conv": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.conv.depth_conv.conv": ["granite_speech"],
        "conformer.layers.{bid}.conv.depthwise_conv": ["lfm2a"],
    }
    /// `a.blk.{bid}.conv_norm`: the norm before the light convolution.
    AEncConvNorm = "a.blk.{bid}.conv_norm" {
        "conformer.layers.{bid}.lconv1d.pre_layer_norm": ["gemma4v", "gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.conv.norm": ["nemotron_v2_vl"],
        "conformer.layers.{bid}.conv.batch_norm": ["lfm2a"],
    }
    /// `a.blk.{bid}.conv_pw1`: the light convolution's first pointwise projection.
    AEncConvPw1 = "a.blk.{bid}.conv_pw1" {
        "conformer.layers.{bid}.lconv1d.linear_start": ["gemma4v", "gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.conv.pointwise_conv1": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.conv.up_conv": ["granite_speech"],
        "conformer.layers.{bid}.conv.pointwise_conv1": ["lfm2a"],
    }
    /// `a.blk.{bid}.conv_pw2`: the light convolution's second pointwise projection.
    AEncConvPw2 = "a.blk.{bid}.conv_pw2" {
        "conformer.layers.{bid}.lconv1d.linear_end": ["gemma4v", "gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.conv.pointwise_conv2": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.conv.down_conv": ["granite_speech"],
        "conformer.layers.{bid}.conv.pointwise_conv2": ["lfm2a"],
    }
    /// `a.blk.{bid}.norm_conv`: the norm after the depthwise convolution.
    AEncNormConv = "a.blk.{bid}.norm_conv" {
        "conformer.layers.{bid}.lconv1d.conv_norm": ["gemma4v", "gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.norm_conv": ["nemotron_v2_vl"],
        "encoder.layers.{bid}.conv.norm": ["granite_speech"],
        "conformer.layers.{bid}.norm_conv": ["lfm2a"],
    }
    /// `a.pre_encode.out`: the conformer's output projection.
    AEncOut = "a.pre_encode.out" {
        "conformer.output_proj": ["gemma4v"],
        "model.audio_tower.subsample_conv_projection.input_proj_linear": ["gemma3nv"],
        "sound_encoder.encoder.subsampling.linear": ["nemotron_v2_vl"],
        "conformer.pre_encode.out": ["lfm2a"],
    }
    /// `mm.a.input_projection`: the audio embedder's projection to the text width.
    AMmInpProj = "mm.a.input_projection" {
        "model.embed_audio.embedding_projection": ["gemma4v", "gemma4uv", "gemma3nv"],
    }
    /// `a.blk.{bid}.layer_pre_norm`: the norm at a conformer block's end.
    AEncLayerPreNorm = "a.blk.{bid}.layer_pre_norm" {
        "conformer.layers.{bid}.norm": ["gemma3nv"],
    }
    /// `a.blk.{bid}.linear_pos`: the relative position projection.
    AEncLinearPos = "a.blk.{bid}.linear_pos" {
        "conformer.layers.{bid}.attention.attn.relative_position_embedding.pos_proj": ["gemma3nv"],
        "sound_encoder.encoder.layers.{bid}.self_attn.relative_k_proj": ["nemotron_v2_vl"],
        "conformer.layers.{bid}.self_attn.linear_pos": ["lfm2a"],
    }
    /// `a.blk.{bid}.ffn_scale`: the first FFN's output scale.
    AEncFfnScale = "a.blk.{bid}.ffn_scale" {
        "conformer.layers.{bid}.ffw_layer_start.post_layer_scale": ["gemma3nv"],
    }
    /// `a.blk.{bid}.ffn_scale_1`: the second FFN's output scale.
    AEncFfnScale1 = "a.blk.{bid}.ffn_scale_1" {
        "conformer.layers.{bid}.ffw_layer_end.post_layer_scale": ["gemma3nv"],
    }
    /// `a.blk.{bid}.conv_norm_var`: the depthwise convolution's batch norm: its running
    /// variance (Parakeet), or the whole norm folded into a scale and a shift.
    AEncConvNormVar = "a.blk.{bid}.conv_norm_var" {
        "encoder.layers.{bid}.conv.batch_norm": ["granite_speech"],
        "sound_encoder.encoder.layers.{bid}.conv.norm.running_var": ["nemotron_v2_vl"],
    }
    /// `a.blk.{bid}.pos_bias_u`: the relative-position attention's content bias.
    AEncPosBiasU = "a.blk.{bid}.pos_bias_u" {
        "conformer.layers.{bid}.self_attn.pos_bias_u": ["lfm2a"],
        "sound_encoder.encoder.layers.{bid}.self_attn.bias_u": ["nemotron_v2_vl"],
    }
    /// `a.blk.{bid}.pos_bias_v`: the relative-position attention's position bias.
    AEncPosBiasV = "a.blk.{bid}.pos_bias_v" {
        "conformer.layers.{bid}.self_attn.pos_bias_v": ["lfm2a"],
        "sound_encoder.encoder.layers.{bid}.self_attn.bias_v": ["nemotron_v2_vl"],
    }
    /// `a.position_embd_norm`: the norm of the audio-output embedding.
    AEncEmbdNorm = "a.position_embd_norm" {
        "audio_embedding.embedding_norm": ["lfm2a"],
    }
    /// `a.embd_to_logits`: the audio-output embedding's projection to logits.
    AEncEmbdToLogits = "a.embd_to_logits" {
        "audio_embedding.to_logits": ["lfm2a"],
    }
    /// `a.blk.{bid}.attn_rel_pos_emb`: the attention's relative position embedding table.
    AEncAttnRelPosEmb = "a.blk.{bid}.attn_rel_pos_emb" {
        "encoder.layers.{bid}.attn.rel_pos_emb.weight": ["granite_speech"],
    }
    /// `a.enc_ctc_out`: the encoder's CTC output projection.
    ACtcOut = "a.enc_ctc_out" {
        "encoder.out": ["granite_speech"],
    }
    /// `a.enc_ctc_out_mid`: the projection of the CTC output back into the encoder, at its middle.
    ACtcOutMid = "a.enc_ctc_out_mid" {
        "encoder.out_mid": ["granite_speech"],
    }
    /// `a.proj_query`: the audio window-QFormer projector's learned queries.
    AQfProjQuery = "a.proj_query" {
        "projector.query": ["granite_speech"],
    }
    /// `a.proj_norm`: the audio QFormer's input norm.
    AQfProjNorm = "a.proj_norm" {
        "projector.qformer.layernorm": ["granite_speech"],
    }
    /// `a.proj_linear`: the audio QFormer projector's output linear.
    AQfProjLinear = "a.proj_linear" {
        "projector.linear": ["granite_speech"],
    }
    /// `a.proj_blk.{bid}.self_attn_q`: the self-attention query of the audio QFormer's layer `{bid}`.
    AQfSelfAttnQ = "a.proj_blk.{bid}.self_attn_q" {
        "projector.qformer.encoder.layer.{bid}.attention.attention.query": ["granite_speech"],
    }
    /// `a.proj_blk.{bid}.self_attn_k`: the self-attention key of the audio QFormer's layer `{bid}`.
    AQfSelfAttnK = "a.proj_blk.{bid}.self_attn_k" {
        "projector.qformer.encoder.layer.{bid}.attention.attention.key": ["granite_speech"],
    }
    /// `a.proj_blk.{bid}.self_attn_v`: the self-attention value of the audio QFormer's layer `{bid}`.
    AQfSelfAttnV = "a.proj_blk.{bid}.self_attn_v" {
        "projector.qformer.encoder.layer.{bid}.attention.attention.value": ["granite_speech"],
    }
    /// `a.proj_blk.{bid}.self_attn_out`: the self-attention output of the audio QFormer's layer `{bid}`.
    AQfSelfAttnO = "a.proj_blk.{bid}.self_attn_out" {
        "projector.qformer.encoder.layer.{bid}.attention.output.dense": ["granite_speech"],
    }
    /// `a.proj_blk.{bid}.self_attn_norm`: the self-attention norm of the audio QFormer's layer `{bid}`.
    AQfSelfAttnNorm = "a.proj_blk.{bid}.self_attn_norm" {
        "projector.qformer.encoder.layer.{bid}.attention.output.LayerNorm": ["granite_speech"],
    }
    /// `a.proj_blk.{bid}.cross_attn_q`: the cross-attention query of the audio QFormer's layer `{bid}`.
    AQfCrossAttnQ = "a.proj_blk.{bid}.cross_attn_q" {
        "projector.qformer.encoder.layer.{bid}.crossattention.attention.query": ["granite_speech"],
    }
    /// `a.proj_blk.{bid}.cross_attn_k`: the cross-attention key of the audio QFormer's layer `{bid}`.
    AQfCrossAttnK = "a.proj_blk.{bid}.cross_attn_k" {
        "projector.qformer.encoder.layer.{bid}.crossattention.attention.key": ["granite_speech"],
    }
    /// `a.proj_blk.{bid}.cross_attn_v`: the cross-attention value of the audio QFormer's layer `{bid}`.
    AQfCrossAttnV = "a.proj_blk.{bid}.cross_attn_v" {
        "projector.qformer.encoder.layer.{bid}.crossattention.attention.value": ["granite_speech"],
    }
    /// `a.proj_blk.{bid}.cross_attn_out`: the cross-attention output of the audio QFormer's layer `{bid}`.
    AQfCrossAttnO = "a.proj_blk.{bid}.cross_attn_out" {
        "projector.qformer.encoder.layer.{bid}.crossattention.output.dense": ["granite_speech"],
    }
    /// `a.proj_blk.{bid}.cross_attn_norm`: the cross-attention norm of the audio QFormer's layer `{bid}`.
    AQfCrossAttnNorm = "a.proj_blk.{bid}.cross_attn_norm" {
        "projector.qformer.encoder.layer.{bid}.crossattention.output.LayerNorm": ["granite_speech"],
    }
    /// `a.proj_blk.{bid}.ffn_up`: the FFN up of the audio QFormer's layer `{bid}`.
    AQfFfnUp = "a.proj_blk.{bid}.ffn_up" {
        "projector.qformer.encoder.layer.{bid}.intermediate_query.dense": ["granite_speech"],
    }
    /// `a.proj_blk.{bid}.ffn_down`: the FFN down of the audio QFormer's layer `{bid}`.
    AQfFfnDown = "a.proj_blk.{bid}.ffn_down" {
        "projector.qformer.encoder.layer.{bid}.output_query.dense": ["granite_speech"],
    }
    /// `a.proj_blk.{bid}.ffn_norm`: the FFN norm of the audio QFormer's layer `{bid}`.
    AQfFfnNorm = "a.proj_blk.{bid}.ffn_norm" {
        "projector.qformer.encoder.layer.{bid}.output_query.LayerNorm": ["granite_speech"],
    }
    /// `mm.embedding`: the vision embedder's token embedding.
    MmEmbedding = "mm.embedding" {
        "model.embed_vision.embedding": ["gemma3nv"],
    }
    /// `mm.hard_emb_norm`: the vision embedder's norm of embedded tokens.
    MmHardEmbNorm = "mm.hard_emb_norm" {
        "model.embed_vision.hard_embedding_norm": ["gemma3nv"],
    }
    /// `mm.a.embedding`: the audio embedder's token embedding.
    AMmEmbedding = "mm.a.embedding" {
        "model.embed_audio.embedding": ["gemma3nv"],
    }
    /// `mm.a.hard_emb_norm`: the audio embedder's norm of embedded tokens.
    AMmHardEmbNorm = "mm.a.hard_emb_norm" {
        "model.embed_audio.hard_embedding_norm": ["gemma3nv"],
    }
    /// `mm.a.soft_emb_norm`: the audio embedder's norm of soft tokens.
    AMmSoftEmbNorm = "mm.a.soft_emb_norm" {
        "model.embed_audio.soft_embedding_norm": ["gemma3nv"],
    }
    /// `v.conv_stem.conv`: the MobileNet stem's convolution.
    ConvStem = "v.conv_stem.conv" {
        "model.vision_tower.timm_model.conv_stem.conv": ["gemma3nv"],
    }
    /// `v.conv_stem.bn`: the MobileNet stem's norm.
    ConvStemNorm = "v.conv_stem.bn" {
        "model.vision_tower.timm_model.conv_stem.bn": ["gemma3nv"],
    }
    /// `v.msfa.ffn.pw_exp.conv`: the multi-scale fusion adapter's expansion.
    MsfaFfnExpConv = "v.msfa.ffn.pw_exp.conv" {
        "model.vision_tower.timm_model.msfa.ffn.pw_exp.conv": ["gemma3nv"],
    }
    /// `v.msfa.ffn.pw_exp.bn`: its norm.
    MsfaFfnExpNorm = "v.msfa.ffn.pw_exp.bn" {
        "model.vision_tower.timm_model.msfa.ffn.pw_exp.bn": ["gemma3nv"],
    }
    /// `v.msfa.ffn.pw_proj.conv`: the multi-scale fusion adapter's projection.
    MsfaFfnProjConv = "v.msfa.ffn.pw_proj.conv" {
        "model.vision_tower.timm_model.msfa.ffn.pw_proj.conv": ["gemma3nv"],
    }
    /// `v.msfa.ffn.pw_proj.bn`: its norm.
    MsfaFfnProjNorm = "v.msfa.ffn.pw_proj.bn" {
        "model.vision_tower.timm_model.msfa.ffn.pw_proj.bn": ["gemma3nv"],
    }
    /// `v.msfa.norm`: the multi-scale fusion adapter's output norm.
    MsfaNorm = "v.msfa.norm" {
        "model.vision_tower.timm_model.msfa.norm": ["gemma3nv"],
    }
    /// `v.boi`: the embedding placed before a media sequence (GLM-ASR's audio begin row).
    TokBoi = "v.boi" {
        "model.vision.boi": ["glma", "cogvlm"],
    }
    /// `v.eoi`: the embedding placed after a media sequence (GLM-ASR's audio end row).
    TokEoi = "v.eoi" {
        "model.vision.eoi": ["glma", "cogvlm"],
    }
    /// `mm.post_fc_norm`: the norm after the projector's first linear (CogVLM).
    MmPostFcNorm = "mm.post_fc_norm" {
        "model.vision.linear_proj.norm1": ["cogvlm"],
    }
    /// `v.vit_merger.ln1`: the ViT merger's layer norm (MiniCPM-V 4.6).
    MergerLn1 = "v.vit_merger.ln1" {
        "model.vision_tower.vit_merger.layer_norm1": ["minicpmv4_6"],
    }
    /// `v.vit_merger.attn_q`: the ViT merger's query (MiniCPM-V 4.6).
    MergerAttnQ = "v.vit_merger.attn_q" {
        "model.vision_tower.vit_merger.self_attn.q_proj": ["minicpmv4_6"],
    }
    /// `v.vit_merger.attn_k`: the ViT merger's key (MiniCPM-V 4.6).
    MergerAttnK = "v.vit_merger.attn_k" {
        "model.vision_tower.vit_merger.self_attn.k_proj": ["minicpmv4_6"],
    }
    /// `v.vit_merger.attn_v`: the ViT merger's value (MiniCPM-V 4.6).
    MergerAttnV = "v.vit_merger.attn_v" {
        "model.vision_tower.vit_merger.self_attn.v_proj": ["minicpmv4_6"],
    }
    /// `v.vit_merger.attn_out`: the ViT merger's attention output (MiniCPM-V 4.6).
    MergerAttnO = "v.vit_merger.attn_out" {
        "model.vision_tower.vit_merger.self_attn.out_proj": ["minicpmv4_6"],
    }
    /// `v.vit_merger.ds_ln`: the norm before the ViT merger's downsampling MLP (MiniCPM-V 4.6).
    MergerDsLn = "v.vit_merger.ds_ln" {
        "model.vision_tower.vit_merger.pre_norm": ["minicpmv4_6"],
    }
    /// `v.vit_merger.ds_ffn_up`: the ViT merger's downsampling MLP, first linear (MiniCPM-V 4.6).
    MergerDsUp = "v.vit_merger.ds_ffn_up" {
        "model.vision_tower.vit_merger.linear_1": ["minicpmv4_6"],
    }
    /// `v.vit_merger.ds_ffn_down`: the ViT merger's downsampling MLP, second linear (MiniCPM-V 4.6).
    MergerDsDown = "v.vit_merger.ds_ffn_down" {
        "model.vision_tower.vit_merger.linear_2": ["minicpmv4_6"],
    }
    /// `v.image_newline`: the learned row after each image row.
    EncEmbdImgnl = "v.image_newline" {
        "model.image_newline": ["granite4_vision", "deepseekocr", "deepseekocr2"],
        "vit.perceive.image_newline": ["hunyuanvl"],
        "image_newline": ["deepseek4v"],
    }
    /// `v.proj_blk.{bid}.img_pos`: a window-QFormer projector's image positions.
    MultiProjImgPos = "v.proj_blk.{bid}.img_pos" {
        "model.layerwise_projectors.{bid}.image_positions": ["granite4_vision"],
        "model.spatial_projectors.{bid}.image_positions": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.query`: a window-QFormer projector's queries.
    MultiProjQuery = "v.proj_blk.{bid}.query" {
        "model.layerwise_projectors.{bid}.query": ["granite4_vision"],
        "model.spatial_projectors.{bid}.query": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.linear`: a window-QFormer projector's output linear.
    MultiProjLinear = "v.proj_blk.{bid}.linear" {
        "model.layerwise_projectors.{bid}.out_linear": ["granite4_vision"],
        "model.spatial_projectors.{bid}.out_linear": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.norm`: a window-QFormer projector's input norm.
    MultiProjNorm = "v.proj_blk.{bid}.norm" {
        "model.layerwise_projectors.{bid}.norm": ["granite4_vision"],
        "model.spatial_projectors.{bid}.norm": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.post_norm`: a window-QFormer projector's QFormer output norm.
    MultiProjPostNorm = "v.proj_blk.{bid}.post_norm" {
        "model.layerwise_projectors.{bid}.qformer.layernorm": ["granite4_vision"],
        "model.spatial_projectors.{bid}.qformer.layernorm": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.self_attn_q`: the QFormer self-attention query of projector `{bid}` (its QFormer layer number replaced by the projector's).
    QfSelfAttnQ = "v.proj_blk.{bid}.self_attn_q" {
        "model.layerwise_projectors.qformer.encoder.layer.{bid}.attention.attention.query": ["granite4_vision"],
        "model.spatial_projectors.qformer.encoder.layer.{bid}.attention.attention.query": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.self_attn_k`: the QFormer self-attention key of projector `{bid}` (its QFormer layer number replaced by the projector's).
    QfSelfAttnK = "v.proj_blk.{bid}.self_attn_k" {
        "model.layerwise_projectors.qformer.encoder.layer.{bid}.attention.attention.key": ["granite4_vision"],
        "model.spatial_projectors.qformer.encoder.layer.{bid}.attention.attention.key": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.self_attn_v`: the QFormer self-attention value of projector `{bid}` (its QFormer layer number replaced by the projector's).
    QfSelfAttnV = "v.proj_blk.{bid}.self_attn_v" {
        "model.layerwise_projectors.qformer.encoder.layer.{bid}.attention.attention.value": ["granite4_vision"],
        "model.spatial_projectors.qformer.encoder.layer.{bid}.attention.attention.value": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.self_attn_out`: the QFormer self-attention output of projector `{bid}` (its QFormer layer number replaced by the projector's).
    QfSelfAttnO = "v.proj_blk.{bid}.self_attn_out" {
        "model.layerwise_projectors.qformer.encoder.layer.{bid}.attention.output.dense": ["granite4_vision"],
        "model.spatial_projectors.qformer.encoder.layer.{bid}.attention.output.dense": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.self_attn_norm`: the QFormer self-attention norm of projector `{bid}` (its QFormer layer number replaced by the projector's).
    QfSelfAttnNorm = "v.proj_blk.{bid}.self_attn_norm" {
        "model.layerwise_projectors.qformer.encoder.layer.{bid}.attention.output.LayerNorm": ["granite4_vision"],
        "model.spatial_projectors.qformer.encoder.layer.{bid}.attention.output.LayerNorm": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.cross_attn_q`: the QFormer cross-attention query of projector `{bid}` (its QFormer layer number replaced by the projector's).
    QfCrossAttnQ = "v.proj_blk.{bid}.cross_attn_q" {
        "model.layerwise_projectors.qformer.encoder.layer.{bid}.crossattention.attention.query": ["granite4_vision"],
        "model.spatial_projectors.qformer.encoder.layer.{bid}.crossattention.attention.query": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.cross_attn_k`: the QFormer cross-attention key of projector `{bid}` (its QFormer layer number replaced by the projector's).
    QfCrossAttnK = "v.proj_blk.{bid}.cross_attn_k" {
        "model.layerwise_projectors.qformer.encoder.layer.{bid}.crossattention.attention.key": ["granite4_vision"],
        "model.spatial_projectors.qformer.encoder.layer.{bid}.crossattention.attention.key": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.cross_attn_v`: the QFormer cross-attention value of projector `{bid}` (its QFormer layer number replaced by the projector's).
    QfCrossAttnV = "v.proj_blk.{bid}.cross_attn_v" {
        "model.layerwise_projectors.qformer.encoder.layer.{bid}.crossattention.attention.value": ["granite4_vision"],
        "model.spatial_projectors.qformer.encoder.layer.{bid}.crossattention.attention.value": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.cross_attn_out`: the QFormer cross-attention output of projector `{bid}` (its QFormer layer number replaced by the projector's).
    QfCrossAttnO = "v.proj_blk.{bid}.cross_attn_out" {
        "model.layerwise_projectors.qformer.encoder.layer.{bid}.crossattention.output.dense": ["granite4_vision"],
        "model.spatial_projectors.qformer.encoder.layer.{bid}.crossattention.output.dense": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.cross_attn_norm`: the QFormer cross-attention norm of projector `{bid}` (its QFormer layer number replaced by the projector's).
    QfCrossAttnNorm = "v.proj_blk.{bid}.cross_attn_norm" {
        "model.layerwise_projectors.qformer.encoder.layer.{bid}.crossattention.output.LayerNorm": ["granite4_vision"],
        "model.spatial_projectors.qformer.encoder.layer.{bid}.crossattention.output.LayerNorm": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.ffn_up`: the QFormer FFN up of projector `{bid}` (its QFormer layer number replaced by the projector's).
    QfFfnUp = "v.proj_blk.{bid}.ffn_up" {
        "model.layerwise_projectors.qformer.encoder.layer.{bid}.intermediate_query.dense": ["granite4_vision"],
        "model.spatial_projectors.qformer.encoder.layer.{bid}.intermediate_query.dense": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.ffn_down`: the QFormer FFN down of projector `{bid}` (its QFormer layer number replaced by the projector's).
    QfFfnDown = "v.proj_blk.{bid}.ffn_down" {
        "model.layerwise_projectors.qformer.encoder.layer.{bid}.output_query.dense": ["granite4_vision"],
        "model.spatial_projectors.qformer.encoder.layer.{bid}.output_query.dense": ["granite4_vision"],
    }
    /// `v.proj_blk.{bid}.ffn_norm`: the QFormer FFN norm of projector `{bid}` (its QFormer layer number replaced by the projector's).
    QfFfnNorm = "v.proj_blk.{bid}.ffn_norm" {
        "model.layerwise_projectors.qformer.encoder.layer.{bid}.output_query.LayerNorm": ["granite4_vision"],
        "model.spatial_projectors.qformer.encoder.layer.{bid}.output_query.LayerNorm": ["granite4_vision"],
    }
    /// `v.view_seperator`: the learned row between image views (spelled as gguf-py does).
    EncEmbdVsep = "v.view_seperator" {
        "vit.perceive.image_sep": ["hunyuanvl"],
        "model.view_seperator": ["deepseekocr", "deepseekocr2"],
    }
    /// `mm.pre_norm`: the projector's input norm.
    MmPreNorm = "mm.pre_norm" {
        "vit.perceive.before_rms": ["hunyuanvl"],
    }
    /// `mm.image_begin`: the learned row before an image.
    TokImgBegin = "mm.image_begin" {
        "vit.perceive.image_begin": ["hunyuanvl"],
    }
    /// `mm.image_end`: the learned row after an image.
    TokImgEnd = "mm.image_end" {
        "vit.perceive.image_end": ["hunyuanvl"],
    }
    /// `v.token_embd.img_start`: the embedding placed before an image's tokens.
    TokEmbdImgStart = "v.token_embd.img_start" {
        "image_start": ["deepseek4v"],
    }
    /// `v.token_embd.img_end`: the embedding placed after them.
    TokEmbdImgEnd = "v.token_embd.img_end" {
        "image_end": ["deepseek4v"],
    }
    /// `v.token_embd.img_pad`: the embedding that pads an image's token block.
    TokEmbdImgPad = "v.token_embd.img_pad" {
        "image_pad": ["deepseek4v"],
    }
    /// `v.sam.pos_embd`: the SAM tower's position table (DeepSeek-OCR).
    SamPosEmbd = "v.sam.pos_embd" {
        "model.sam_model.pos_embed": ["deepseekocr", "deepseekocr2"],
    }
    /// `v.sam.patch_embd`: the SAM tower's patch embedding (DeepSeek-OCR).
    SamPatchEmbd = "v.sam.patch_embd" {
        "model.sam_model.patch_embed.proj": ["deepseekocr", "deepseekocr2"],
    }
    /// `v.sam.blk.{bid}.pre_ln`: the norm before a SAM block's attention (DeepSeek-OCR).
    SamPreNorm = "v.sam.blk.{bid}.pre_ln" {
        "model.sam_model.blocks.{bid}.norm1": ["deepseekocr", "deepseekocr2"],
    }
    /// `v.sam.blk.{bid}.post_ln`: the norm before a SAM block's MLP (DeepSeek-OCR).
    SamPostNorm = "v.sam.blk.{bid}.post_ln" {
        "model.sam_model.blocks.{bid}.norm2": ["deepseekocr", "deepseekocr2"],
    }
    /// `v.sam.blk.{bid}.attn.pos_h`: a SAM block's relative positions along the height (DeepSeek-OCR).
    SamAttnPosH = "v.sam.blk.{bid}.attn.pos_h" {
        "model.sam_model.blocks.{bid}.attn.rel_pos_h": ["deepseekocr", "deepseekocr2"],
    }
    /// `v.sam.blk.{bid}.attn.pos_w`: a SAM block's relative positions along the width (DeepSeek-OCR).
    SamAttnPosW = "v.sam.blk.{bid}.attn.pos_w" {
        "model.sam_model.blocks.{bid}.attn.rel_pos_w": ["deepseekocr", "deepseekocr2"],
    }
    /// `v.sam.blk.{bid}.attn.qkv`: a SAM block's fused q/k/v (DeepSeek-OCR).
    SamAttnQkv = "v.sam.blk.{bid}.attn.qkv" {
        "model.sam_model.blocks.{bid}.attn.qkv": ["deepseekocr", "deepseekocr2"],
    }
    /// `v.sam.blk.{bid}.attn.out`: a SAM block's attention output (DeepSeek-OCR).
    SamAttnOut = "v.sam.blk.{bid}.attn.out" {
        "model.sam_model.blocks.{bid}.attn.proj": ["deepseekocr", "deepseekocr2"],
    }
    /// `v.sam.blk.{bid}.mlp.lin1`: a SAM block's first MLP linear (DeepSeek-OCR).
    SamMlpLin1 = "v.sam.blk.{bid}.mlp.lin1" {
        "model.sam_model.blocks.{bid}.mlp.lin1": ["deepseekocr", "deepseekocr2"],
    }
    /// `v.sam.blk.{bid}.mlp.lin2`: a SAM block's second MLP linear (DeepSeek-OCR).
    SamMlpLin2 = "v.sam.blk.{bid}.mlp.lin2" {
        "model.sam_model.blocks.{bid}.mlp.lin2": ["deepseekocr", "deepseekocr2"],
    }
    /// `v.sam.neck.{bid}`: the SAM neck's layers (convolutions and norms) (DeepSeek-OCR).
    SamNeck = "v.sam.neck.{bid}" {
        "model.sam_model.neck.{bid}": ["deepseekocr", "deepseekocr2"],
    }
    /// `v.sam.net_2`: the SAM tower's first downsampling convolution (DeepSeek-OCR).
    SamNet2 = "v.sam.net_2" {
        "model.sam_model.net_2": ["deepseekocr", "deepseekocr2"],
    }
    /// `v.sam.net_3`: the SAM tower's second downsampling convolution (DeepSeek-OCR).
    SamNet3 = "v.sam.net_3" {
        "model.sam_model.net_3": ["deepseekocr", "deepseekocr2"],
    }
    /// `v.resample_query_768`: the Qwen2 encoder's learned queries for one view size (DeepSeek-OCR-2).
    ResmplQuery768 = "v.resample_query_768" {
        "model.qwen2_model.query_768": ["deepseekocr2"],
    }
    /// `v.resample_query_1024`: the Qwen2 encoder's learned queries for one view size (DeepSeek-OCR-2).
    ResmplQuery1024 = "v.resample_query_1024" {
        "model.qwen2_model.query_1024": ["deepseekocr2"],
    }
    /// `a.blk.{bid}.conv_norm_mean`: the convolution module's batch-norm running mean.
    AEncConvNormMean = "a.blk.{bid}.conv_norm_mean" {
        "sound_encoder.encoder.layers.{bid}.conv.norm.running_mean": ["nemotron_v2_vl"],
    }
    /// `a.mel_filters`: the feature extractor's mel filter bank.
    AEncMelFilters = "a.mel_filters" {
        "sound_encoder.encoder.feature_extractor.featurizer.fb": ["nemotron_v2_vl"],
    }
    /// `a.window`: the feature extractor's STFT window.
    AEncWindow = "a.window" {
        "sound_encoder.encoder.feature_extractor.featurizer.window": ["nemotron_v2_vl"],
    }
}

/// The projector name map for `n_blocks` tower blocks (GGUF names map to themselves).
pub struct ProjectorMap {
    map: TensorMap,
}

impl ProjectorMap {
    /// Every row of [`TABLE`], later rows winning, expanded for blocks `0..n_blocks`.
    pub fn new(n_blocks: u64) -> ProjectorMap {
        let mut map = TensorMap::empty();
        for row in TABLE {
            let gguf = row.tensor.gguf();
            map.add(gguf, gguf, n_blocks);
            for s in row.spellings {
                map.add(gguf, s.hf, n_blocks);
            }
        }
        ProjectorMap { map }
    }

    /// The GGUF name of `name`, if the table knows it.
    pub fn get(&self, name: &str) -> Option<String> {
        self.map.get(name)
    }

    /// [`ProjectorMap::get`] with other suffixes tried (gguf-py's `try_suffixes`).
    pub fn get_with(&self, name: &str, suffixes: &[&str]) -> Option<String> {
        self.map.get_with(name, suffixes)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn each_tensor_has_one_row_and_gguf_names_are_projector_names() {
        let mut seen = std::collections::HashSet::new();
        for row in TABLE {
            assert!(seen.insert(row.tensor), "{:?} has two rows", row.tensor);
            let g = row.tensor.gguf();
            assert!(
                g.starts_with("v.") || g.starts_with("mm.") || g.starts_with("a."),
                "{g}"
            );
        }
    }

    #[test]
    fn blocks_bound_the_numbered_spellings() {
        let m = ProjectorMap::new(3);
        assert_eq!(
            m.get("multi_modal_projector.linear_2.weight").unwrap(),
            "mm.2.weight"
        );
        assert!(ProjectorMap::new(1)
            .get("multi_modal_projector.linear_1.bias")
            .is_none());
        assert_eq!(
            m.get("vision_tower.vision_model.encoder.layers.1.mlp.fc1.bias")
                .unwrap(),
            "v.blk.1.ffn_up.bias"
        );
        assert_eq!(m.get("v.post_ln.weight").unwrap(), "v.post_ln.weight");
    }

    /// Each spelling is written once and names the projector families that use it: each a
    /// supported projector type, each once, and the map resolves the spelling to its row.
    #[test]
    fn every_spelling_is_written_once_and_used_by_a_projector_family() {
        let types: HashSet<&str> = super::super::ALL.iter().map(|p| p.projector_type).collect();
        let m = ProjectorMap::new(2);
        let mut spellings = HashSet::new();
        for row in TABLE {
            for s in row.spellings {
                assert!(spellings.insert(s.hf), "{} written twice", s.hf);
                let mut families = HashSet::new();
                for f in s.used_by {
                    assert!(types.contains(f), "{}: {f} is no projector type", s.hf);
                    assert!(families.insert(f), "{}: {f} twice", s.hf);
                }
                let name = s.hf.replace("{bid}", "0");
                assert_eq!(
                    m.get(&name),
                    Some(row.tensor.gguf().replace("{bid}", "0")),
                    "{}",
                    s.hf
                );
            }
        }
        assert!(spellings.len() > 100, "only {} spellings", spellings.len());
    }
}
