//! HF tensor name → GGUF tensor name for projector files (gguf-py's `tensor_mapping.py`,
//! the `MODEL_ARCH.MMPROJ` rows).
//!
//! [`TABLE`] lists, for each projector tensor ([`VTensor`]), every HF spelling of it that a
//! supported family uses, with `{bid}` standing for the block number. Unlike text
//! architectures, every projector family maps through the whole table (gguf-py builds the
//! MMPROJ map from all of `MODEL_TENSORS[MMPROJ]`); a spelling with `{bid}` exists for the
//! blocks `0..n` of the vision (or audio) config's block count only, which is why a
//! Pixtral projector's `linear_1` / `linear_2` (rows of `mm.{bid}`) need as many tower
//! blocks. A lookup tries the full name, then the name without `.weight` / `.bias`.

use crate::hf::names::TensorMap;

/// A projector-file tensor (gguf-py's `MODEL_TENSOR.V_*` / `A_*`); [`VTensor::gguf`] is
/// its base name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum VTensor {
    /// `mm.{bid}`: the numbered layers of an MLP projector.
    Mmproj,
    /// `mm.model.fc`: Idefics3's pixel-shuffle projection.
    MmprojFc,
    /// `mm.model.mlp.{bid}`: the numbered layers of InternVL's MLP projector.
    MmprojMlp,
    /// `v.class_embd`.
    EncEmbdCls,
    /// `v.patch_embd`.
    EncEmbdPatch,
    /// `v.position_embd`.
    EncEmbdPos,
    /// `v.blk.{bid}.attn_qkv`.
    EncAttnQkv,
    /// `v.blk.{bid}.attn_q`.
    EncAttnQ,
    /// `v.blk.{bid}.attn_k`.
    EncAttnK,
    /// `v.blk.{bid}.attn_v`.
    EncAttnV,
    /// `v.blk.{bid}.attn_q_norm`.
    EncAttnQNorm,
    /// `v.blk.{bid}.attn_k_norm`.
    EncAttnKNorm,
    /// `v.blk.{bid}.ln1`.
    EncInputNorm,
    /// `v.blk.{bid}.attn_out`.
    EncAttnO,
    /// `v.blk.{bid}.ln2`.
    EncPostAttnNorm,
    /// `v.blk.{bid}.ffn_up`.
    EncFfnUp,
    /// `v.blk.{bid}.ffn_gate`.
    EncFfnGate,
    /// `v.blk.{bid}.ffn_down`.
    EncFfnDown,
    /// `v.blk.{bid}.ls1`: the layer scale of the attention branch.
    LayerScale1,
    /// `v.blk.{bid}.ls2`: the layer scale of the FFN branch.
    LayerScale2,
    /// `v.pre_ln`.
    PreNorm,
    /// `v.post_ln`.
    PostNorm,
    /// `mm.input_projection`.
    MmInpProj,
    /// `mm.input_norm`.
    MmInpNorm,
    /// `mm.soft_emb_norm`.
    MmSoftEmbNorm,
    /// `v.token_embd.img_break`.
    TokEmbdImgBreak,
    /// `mm.patch_merger`.
    MmPatchMerger,
    /// `v.deepstack.{bid}.norm`.
    DsNorm,
    /// `v.deepstack.{bid}.fc1`.
    DsFc1,
    /// `v.deepstack.{bid}.fc2`.
    DsFc2,
    /// `v.norm_embd`: the norm after the patch embedding (GLM-4V).
    EncEmbdNorm,
    /// `mm.post_norm`: the norm after the merger's projection (GLM-4V).
    MmPostNorm,
    /// `mm.up`: the merger's SwiGLU up projection (GLM-4V).
    MmUp,
    /// `mm.down`: the merger's down projection (GLM-4V).
    MmDown,
    /// `mm.gate`: the merger's SwiGLU gate (GLM-4V).
    MmGate,
    /// `a.conv1d.{bid}`.
    AEncConv1d,
    /// `a.position_embd`.
    AEncEmbdPos,
    /// `a.post_ln`.
    APostNorm,
    /// `a.blk.{bid}.attn_q`.
    AEncAttnQ,
    /// `a.blk.{bid}.attn_k`.
    AEncAttnK,
    /// `a.blk.{bid}.attn_v`.
    AEncAttnV,
    /// `a.blk.{bid}.ln1`.
    AEncInputNorm,
    /// `a.blk.{bid}.attn_out`.
    AEncOutput,
    /// `a.blk.{bid}.ln2`.
    AEncOutputNorm,
    /// `a.blk.{bid}.ffn_up`.
    AEncFfnUp,
    /// `a.blk.{bid}.ffn_down`.
    AEncFfnDown,
    /// `mm.a.fc`: Qwen2-Audio's linear projector.
    AMmprojFc,
    /// `mm.a.mlp.{bid}`: the numbered layers of an audio MLP projector (Ultravox).
    AMmproj,
    /// `mm.a.norm_pre`: the norm before an audio projector (Ultravox).
    AMmNormPre,
    /// `mm.a.norm_mid`: the norm inside an audio projector (Ultravox).
    AMmNormMid,
}

impl VTensor {
    /// The GGUF base name (`{bid}` for the block).
    pub const fn gguf(self) -> &'static str {
        use VTensor::*;
        match self {
            Mmproj => "mm.{bid}",
            MmprojFc => "mm.model.fc",
            MmprojMlp => "mm.model.mlp.{bid}",
            EncEmbdCls => "v.class_embd",
            EncEmbdPatch => "v.patch_embd",
            EncEmbdPos => "v.position_embd",
            EncAttnQkv => "v.blk.{bid}.attn_qkv",
            EncAttnQ => "v.blk.{bid}.attn_q",
            EncAttnK => "v.blk.{bid}.attn_k",
            EncAttnV => "v.blk.{bid}.attn_v",
            EncAttnQNorm => "v.blk.{bid}.attn_q_norm",
            EncAttnKNorm => "v.blk.{bid}.attn_k_norm",
            EncInputNorm => "v.blk.{bid}.ln1",
            EncAttnO => "v.blk.{bid}.attn_out",
            EncPostAttnNorm => "v.blk.{bid}.ln2",
            EncFfnUp => "v.blk.{bid}.ffn_up",
            EncFfnGate => "v.blk.{bid}.ffn_gate",
            EncFfnDown => "v.blk.{bid}.ffn_down",
            LayerScale1 => "v.blk.{bid}.ls1",
            LayerScale2 => "v.blk.{bid}.ls2",
            PreNorm => "v.pre_ln",
            PostNorm => "v.post_ln",
            MmInpProj => "mm.input_projection",
            MmInpNorm => "mm.input_norm",
            MmSoftEmbNorm => "mm.soft_emb_norm",
            TokEmbdImgBreak => "v.token_embd.img_break",
            MmPatchMerger => "mm.patch_merger",
            DsNorm => "v.deepstack.{bid}.norm",
            DsFc1 => "v.deepstack.{bid}.fc1",
            DsFc2 => "v.deepstack.{bid}.fc2",
            EncEmbdNorm => "v.norm_embd",
            MmPostNorm => "mm.post_norm",
            MmUp => "mm.up",
            MmDown => "mm.down",
            MmGate => "mm.gate",
            AEncConv1d => "a.conv1d.{bid}",
            AEncEmbdPos => "a.position_embd",
            APostNorm => "a.post_ln",
            AEncAttnQ => "a.blk.{bid}.attn_q",
            AEncAttnK => "a.blk.{bid}.attn_k",
            AEncAttnV => "a.blk.{bid}.attn_v",
            AEncInputNorm => "a.blk.{bid}.ln1",
            AEncOutput => "a.blk.{bid}.attn_out",
            AEncOutputNorm => "a.blk.{bid}.ln2",
            AEncFfnUp => "a.blk.{bid}.ffn_up",
            AEncFfnDown => "a.blk.{bid}.ffn_down",
            AMmprojFc => "mm.a.fc",
            AMmproj => "mm.a.mlp.{bid}",
            AMmNormPre => "mm.a.norm_pre",
            AMmNormMid => "mm.a.norm_mid",
        }
    }
}

use VTensor as V;

/// Every HF spelling of each projector tensor, one row per tensor.
pub static TABLE: &[(VTensor, &[&str])] = &[
    (
        V::Mmproj,
        &[
            "multi_modal_projector.linear_{bid}",
            "visual.merger.mlp.{bid}", // Qwen2-VL
        ],
    ),
    (
        V::MmprojFc,
        &[
            "model.connector.modality_projection.proj", // SmolVLM, Idefics3
            "visual.merger.proj",                       // GLM-4V
        ],
    ),
    (V::MmprojMlp, &["mlp1.{bid}"]), // InternVL
    (
        V::EncEmbdCls,
        &[
            "vision_tower.vision_model.embeddings.class_embedding", // InternVL
            "model.vision_tower.embeddings.cls_token",              // Intern-S1
        ],
    ),
    (
        V::EncEmbdPatch,
        &[
            "vision_tower.vision_model.embeddings.patch_embedding", // SigLIP
            "model.vision_model.embeddings.patch_embedding",        // SmolVLM
            "vision_tower.patch_conv",                              // Pixtral
            "visual.patch_embed.proj",                              // Qwen-VL
            "model.vision_tower.embeddings.patch_embeddings.projection", // Intern-S1
        ],
    ),
    (
        V::EncEmbdPos,
        &[
            "vision_tower.vision_model.embeddings.position_embedding",
            "model.vision_model.embeddings.position_embedding",
            "visual.pos_embed",                                  // Qwen3-VL
            "model.vision_tower.embeddings.position_embeddings", // Intern-S1
            "visual.embeddings.position_embedding",              // GLM-4V
        ],
    ),
    (V::EncAttnQkv, &["visual.blocks.{bid}.attn.qkv"]),
    (
        V::EncAttnQ,
        &[
            "vision_tower.vision_model.encoder.layers.{bid}.self_attn.q_proj",
            "model.vision_model.encoder.layers.{bid}.self_attn.q_proj",
            "vision_tower.transformer.layers.{bid}.attention.q_proj",
            "visual.blocks.{bid}.attn.q",
            "model.vision_tower.encoder.layer.{bid}.attention.q_proj", // Intern-S1
        ],
    ),
    (
        V::EncAttnK,
        &[
            "vision_tower.vision_model.encoder.layers.{bid}.self_attn.k_proj",
            "model.vision_model.encoder.layers.{bid}.self_attn.k_proj",
            "vision_tower.transformer.layers.{bid}.attention.k_proj",
            "visual.blocks.{bid}.attn.k",
            "model.vision_tower.encoder.layer.{bid}.attention.k_proj", // Intern-S1
        ],
    ),
    (
        V::EncAttnV,
        &[
            "vision_tower.vision_model.encoder.layers.{bid}.self_attn.v_proj",
            "model.vision_model.encoder.layers.{bid}.self_attn.v_proj",
            "vision_tower.transformer.layers.{bid}.attention.v_proj",
            "visual.blocks.{bid}.attn.v",
            "model.vision_tower.encoder.layer.{bid}.attention.v_proj", // Intern-S1
        ],
    ),
    (
        V::EncAttnQNorm,
        &[
            "vision_tower.vision_model.encoder.layers.{bid}.attn.q_norm", // InternVL
            "model.vision_tower.encoder.layer.{bid}.attention.q_norm",    // Intern-S1
            "visual.blocks.{bid}.attn.q_norm",                            // GLM-OCR
        ],
    ),
    (
        V::EncAttnKNorm,
        &[
            "vision_tower.vision_model.encoder.layers.{bid}.attn.k_norm", // InternVL
            "model.vision_tower.encoder.layer.{bid}.attention.k_norm",    // Intern-S1
            "visual.blocks.{bid}.attn.k_norm",                            // GLM-OCR
        ],
    ),
    (
        V::EncInputNorm,
        &[
            "vision_tower.vision_model.encoder.layers.{bid}.layer_norm1",
            "model.vision_model.encoder.layers.{bid}.layer_norm1",
            "vision_tower.transformer.layers.{bid}.attention_norm",
            "visual.blocks.{bid}.norm1",
            "vision_tower.vision_model.encoder.layers.{bid}.norm1", // InternVL
            "model.vision_tower.encoder.layer.{bid}.layernorm_before", // Intern-S1
        ],
    ),
    (
        V::EncAttnO,
        &[
            "vision_tower.vision_model.encoder.layers.{bid}.self_attn.out_proj",
            "model.vision_model.encoder.layers.{bid}.self_attn.out_proj",
            "vision_tower.transformer.layers.{bid}.attention.o_proj",
            "visual.blocks.{bid}.attn.proj",
            "vision_tower.vision_model.encoder.layers.{bid}.attn.proj", // InternVL
            "model.vision_tower.encoder.layer.{bid}.attention.projection_layer", // Intern-S1
        ],
    ),
    (
        V::EncPostAttnNorm,
        &[
            "vision_tower.vision_model.encoder.layers.{bid}.layer_norm2",
            "model.vision_model.encoder.layers.{bid}.layer_norm2",
            "vision_tower.transformer.layers.{bid}.ffn_norm",
            "visual.blocks.{bid}.norm2",
            "vision_tower.vision_model.encoder.layers.{bid}.norm2", // InternVL
            "model.vision_tower.encoder.layer.{bid}.layernorm_after", // Intern-S1
        ],
    ),
    (
        V::EncFfnUp,
        &[
            "vision_tower.vision_model.encoder.layers.{bid}.mlp.fc1",
            "model.vision_model.encoder.layers.{bid}.mlp.fc1",
            "vision_tower.transformer.layers.{bid}.feed_forward.up_proj",
            "visual.blocks.{bid}.mlp.fc1",
            "visual.blocks.{bid}.mlp.up_proj",
            "visual.blocks.{bid}.mlp.linear_fc1",
            "model.vision_tower.encoder.layer.{bid}.mlp.fc1", // Intern-S1
        ],
    ),
    (
        V::EncFfnGate,
        &[
            "vision_tower.transformer.layers.{bid}.feed_forward.gate_proj",
            "visual.blocks.{bid}.mlp.gate_proj",
        ],
    ),
    (
        V::EncFfnDown,
        &[
            "vision_tower.vision_model.encoder.layers.{bid}.mlp.fc2",
            "model.vision_model.encoder.layers.{bid}.mlp.fc2",
            "vision_tower.transformer.layers.{bid}.feed_forward.down_proj",
            "visual.blocks.{bid}.mlp.fc2",
            "visual.blocks.{bid}.mlp.down_proj",
            "visual.blocks.{bid}.mlp.linear_fc2",
            "model.vision_tower.encoder.layer.{bid}.mlp.fc2", // Intern-S1
        ],
    ),
    (
        V::LayerScale1,
        &[
            "vision_tower.vision_model.encoder.layers.{bid}.ls1", // InternVL
            "model.vision_tower.encoder.layer.{bid}.lambda_1",    // Intern-S1
        ],
    ),
    (
        V::LayerScale2,
        &[
            "vision_tower.vision_model.encoder.layers.{bid}.ls2", // InternVL
            "model.vision_tower.encoder.layer.{bid}.lambda_2",    // Intern-S1
        ],
    ),
    (V::PreNorm, &["vision_tower.ln_pre"]),
    (
        V::PostNorm,
        &[
            "vision_tower.vision_model.post_layernorm",
            "model.vision_model.post_layernorm",
            "visual.merger.ln_q",
            "visual.post_layernorm", // GLM-4V
        ],
    ),
    (V::MmInpProj, &["multi_modal_projector.mm_input_projection"]),
    (V::MmInpNorm, &["multi_modal_projector.norm"]),
    (
        V::MmSoftEmbNorm,
        &["multi_modal_projector.mm_soft_emb_norm"],
    ),
    (V::TokEmbdImgBreak, &[]), // written under its GGUF name
    (
        V::MmPatchMerger,
        &[
            "multi_modal_projector.patch_merger.merging_layer",
            "visual.downsample", // GLM-4V
        ],
    ),
    (V::DsNorm, &[]),                                  // written under its GGUF name
    (V::DsFc1, &[]),                                   // written under its GGUF name
    (V::DsFc2, &[]),                                   // written under its GGUF name
    (V::EncEmbdNorm, &["visual.post_conv_layernorm"]), // GLM-4V
    (V::MmPostNorm, &["visual.merger.post_projection_norm"]), // GLM-4V
    (V::MmUp, &["visual.merger.up_proj"]),             // GLM-4V
    (V::MmDown, &["visual.merger.down_proj"]),         // GLM-4V
    (V::MmGate, &["visual.merger.gate_proj"]),         // GLM-4V
    (V::AEncConv1d, &["audio_tower.conv{bid}"]),
    (V::AEncEmbdPos, &["audio_tower.embed_positions"]),
    (V::APostNorm, &["audio_tower.layer_norm"]),
    (V::AEncAttnQ, &["audio_tower.layers.{bid}.self_attn.q_proj"]),
    (V::AEncAttnK, &["audio_tower.layers.{bid}.self_attn.k_proj"]),
    (V::AEncAttnV, &["audio_tower.layers.{bid}.self_attn.v_proj"]),
    (
        V::AEncInputNorm,
        &["audio_tower.layers.{bid}.self_attn_layer_norm"],
    ),
    (
        V::AEncOutput,
        &["audio_tower.layers.{bid}.self_attn.out_proj"],
    ),
    (
        V::AEncOutputNorm,
        &["audio_tower.layers.{bid}.final_layer_norm"],
    ),
    (V::AEncFfnUp, &["audio_tower.layers.{bid}.fc1"]),
    (V::AEncFfnDown, &["audio_tower.layers.{bid}.fc2"]),
    (V::AMmprojFc, &["audio.multi_modal_projector.linear"]), // Qwen2-Audio
    (V::AMmproj, &["audio.multi_modal_projector.linear_{bid}"]), // Ultravox
    (V::AMmNormPre, &["audio.multi_modal_projector.ln_pre"]), // Ultravox
    (V::AMmNormMid, &["audio.multi_modal_projector.ln_mid"]), // Ultravox
];

/// The projector name map for `n_blocks` tower blocks (GGUF names map to themselves).
pub struct ProjectorMap {
    map: TensorMap,
}

impl ProjectorMap {
    /// Every row of [`TABLE`], later rows winning, expanded for blocks `0..n_blocks`.
    pub fn new(n_blocks: u64) -> ProjectorMap {
        let mut map = TensorMap::empty();
        for (t, spellings) in TABLE {
            map.add(t.gguf(), t.gguf(), n_blocks);
            for hf in spellings.iter() {
                map.add(t.gguf(), hf, n_blocks);
            }
        }
        ProjectorMap { map }
    }

    /// The GGUF name of `name`, if the table knows it.
    pub fn get(&self, name: &str) -> Option<String> {
        self.map.get(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_tensor_has_one_row_and_gguf_names_are_projector_names() {
        let mut seen = std::collections::HashSet::new();
        for (t, _) in TABLE {
            assert!(seen.insert(*t), "{t:?} has two rows");
            let g = t.gguf();
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
}
