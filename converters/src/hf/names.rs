//! HF tensor name → GGUF tensor name (gguf-py's `tensor_mapping.py`).
//!
//! [`TABLE`] lists, for each GGUF tensor ([`Tensor`]), every HF spelling of it, with `{bid}`
//! standing for the block number; each architecture lists which GGUF tensors it has
//! (`Arch::tensors`, gguf-py's `MODEL_TENSORS`), and its [`TensorMap`] holds the spellings
//! of those tensors only. Where one HF spelling names different tensors in different
//! architectures, the later row of [`TABLE`] wins among the tensors an architecture has, and
//! an architecture may override a spelling (`Arch::tensor_overrides`). A lookup tries the
//! full name, then the name without a trailing `.weight` / `.bias`, re-appending that suffix
//! to the GGUF name. GGUF names map to themselves, so a name that is already mapped (stacked
//! experts, GPT-2's double mapping) passes through.

use std::collections::HashMap;

/// A GGUF tensor (gguf-py's `MODEL_TENSOR`); [`Tensor::gguf`] is its base name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tensor {
    /// `token_embd`.
    TokenEmbd,
    /// `token_types`.
    TokenTypes,
    /// `token_embd_norm`.
    TokenEmbdNorm,
    /// `position_embd`.
    PosEmbd,
    /// `output`.
    Output,
    /// `output_norm`.
    OutputNorm,
    /// `cls`.
    Cls,
    /// `cls.output`.
    ClsOut,
    /// `cls.norm`.
    ClsNorm,
    /// `blk.{bid}.attn_norm`.
    AttnNorm,
    /// `blk.{bid}.attn_norm_2`.
    AttnNorm2,
    /// `blk.{bid}.attn_qkv`.
    AttnQkv,
    /// `blk.{bid}.attn_q`.
    AttnQ,
    /// `blk.{bid}.attn_k`.
    AttnK,
    /// `blk.{bid}.attn_v`.
    AttnV,
    /// `blk.{bid}.attn_output`.
    AttnOut,
    /// `blk.{bid}.attn_output_norm`.
    AttnOutNorm,
    /// `blk.{bid}.attn_q_norm`.
    AttnQNorm,
    /// `blk.{bid}.attn_k_norm`.
    AttnKNorm,
    /// `blk.{bid}.ffn_norm`.
    FfnNorm,
    /// `blk.{bid}.post_attention_norm`.
    AttnPostNorm,
    /// `blk.{bid}.post_ffw_norm`.
    FfnPostNorm,
    /// `blk.{bid}.ffn_gate_inp`.
    FfnGateInp,
    /// `blk.{bid}.ffn_gate_inp_shexp`.
    FfnGateInpShexp,
    /// `blk.{bid}.ffn_gate`.
    FfnGate,
    /// `blk.{bid}.ffn_up`.
    FfnUp,
    /// `blk.{bid}.ffn_down`.
    FfnDown,
    /// `blk.{bid}.ffn_gate_exps`.
    FfnGateExp,
    /// `blk.{bid}.ffn_up_exps`.
    FfnUpExp,
    /// `blk.{bid}.ffn_down_exps`.
    FfnDownExp,
    /// `blk.{bid}.ffn_gate_shexp`.
    FfnGateShexp,
    /// `blk.{bid}.ffn_up_shexp`.
    FfnUpShexp,
    /// `blk.{bid}.ffn_down_shexp`.
    FfnDownShexp,
    /// `blk.{bid}.exp_probs_b` (the expert selection bias).
    FfnExpProbsB,
    /// `blk.{bid}.layer_output_norm`.
    LayerOutNorm,
    // MLA attention, next-token-prediction layers and attention sinks (issue #14).
    /// `blk.{bid}.attn_q_a` (MLA's query down-projection).
    AttnQA,
    /// `blk.{bid}.attn_q_b` (MLA's query up-projection).
    AttnQB,
    /// `blk.{bid}.attn_kv_a_mqa` (MLA's shared key/value down-projection with the rope key).
    AttnKvAMqa,
    /// `blk.{bid}.attn_kv_b` (MLA's key/value up-projection, unsplit).
    AttnKvB,
    /// `blk.{bid}.attn_k_b` (the key part of `attn_kv_b`, per head, transposed).
    AttnKB,
    /// `blk.{bid}.attn_v_b` (the value part of `attn_kv_b`, per head).
    AttnVB,
    /// `blk.{bid}.attn_q_a_norm`.
    AttnQANorm,
    /// `blk.{bid}.attn_kv_a_norm`.
    AttnKvANorm,
    /// `blk.{bid}.nextn.eh_proj`.
    NextnEhProj,
    /// `blk.{bid}.nextn.embed_tokens`.
    NextnEmbedTokens,
    /// `blk.{bid}.nextn.enorm`.
    NextnEnorm,
    /// `blk.{bid}.nextn.hnorm`.
    NextnHnorm,
    /// `blk.{bid}.nextn.shared_head_head`.
    NextnSharedHeadHead,
    /// `blk.{bid}.nextn.shared_head_norm`.
    NextnSharedHeadNorm,
    /// `blk.{bid}.attn_sinks`.
    AttnSinks,
    // State-space mixers (Mamba, Mamba-2, the hybrids).
    /// `blk.{bid}.ssm_in`.
    SsmIn,
    /// `blk.{bid}.ssm_conv1d`.
    SsmConv1d,
    /// `blk.{bid}.ssm_x`.
    SsmX,
    /// `blk.{bid}.ssm_dt`.
    SsmDt,
    /// `blk.{bid}.ssm_dt_norm`.
    SsmDtNorm,
    /// `blk.{bid}.ssm_a`.
    SsmA,
    /// `blk.{bid}.ssm_b_norm`.
    SsmBNorm,
    /// `blk.{bid}.ssm_c_norm`.
    SsmCNorm,
    /// `blk.{bid}.ssm_d`.
    SsmD,
    /// `blk.{bid}.ssm_norm`.
    SsmNorm,
    /// `blk.{bid}.ssm_out`.
    SsmOut,
    // LFM2's short convolution.
    /// `blk.{bid}.shortconv.conv`.
    ShortConv,
    /// `blk.{bid}.shortconv.in_proj`.
    ShortConvIn,
    /// `blk.{bid}.shortconv.out_proj`.
    ShortConvOut,
    // Gated delta-net (Qwen3-Next, Qwen3.5).
    /// `blk.{bid}.attn_gate` (the output gate of linear attention).
    AttnGate,
    /// `blk.{bid}.ssm_ba` (Qwen3-Next's fused beta/alpha projection).
    SsmBetaAlpha,
    /// `blk.{bid}.ssm_beta`.
    SsmBeta,
    /// `blk.{bid}.ssm_alpha`.
    SsmAlpha,
    /// `blk.{bid}.ffn_latent_down` (Nemotron 3 Super's expert latent projection).
    FfnLatentDown,
    /// `blk.{bid}.ffn_latent_up`.
    FfnLatentUp,
    // Gemma 3n: per-layer embeddings, AltUp, LAuReL.
    /// `per_layer_token_embd` (Gemma 3n's per-layer token embeddings).
    PerLayerTokenEmbd,
    /// `per_layer_model_proj`.
    PerLayerModelProj,
    /// `per_layer_proj_norm`.
    PerLayerProjNorm,
    /// `altup_proj` (the stacked AltUp input projections).
    AltupProj,
    /// `altup_unembd_proj`.
    AltupUnembdProj,
    /// `blk.{bid}.inp_gate`.
    PerLayerInpGate,
    /// `blk.{bid}.proj`.
    PerLayerProj,
    /// `blk.{bid}.post_norm`.
    PerLayerPostNorm,
    /// `blk.{bid}.altup_correct_coef`.
    AltupCorrectCoef,
    /// `blk.{bid}.altup_correct_scale`.
    AltupCorrectScale,
    /// `blk.{bid}.altup_predict_coef`.
    AltupPredictCoef,
    /// `blk.{bid}.altup_router`.
    AltupRouter,
    /// `blk.{bid}.altup_router_norm`.
    AltupRouterNorm,
    /// `blk.{bid}.laurel_l`.
    LaurelL,
    /// `blk.{bid}.laurel_r`.
    LaurelR,
    /// `blk.{bid}.laurel_post_norm`.
    LaurelPostNorm,
    /// `blk.{bid}.ffn_norm` as gguf-py's `FFN_PRE_NORM` (Falcon-H1): its one spelling
    /// includes `.weight`, so the GGUF name has no suffix.
    FfnPreNorm,
    // T5's encoder and decoder (issue #14).
    /// `dec.blk.{bid}.attn_norm`.
    DecAttnNorm,
    /// `dec.blk.{bid}.attn_q`.
    DecAttnQ,
    /// `dec.blk.{bid}.attn_k`.
    DecAttnK,
    /// `dec.blk.{bid}.attn_v`.
    DecAttnV,
    /// `dec.blk.{bid}.attn_o`.
    DecAttnOut,
    /// `dec.blk.{bid}.attn_rel_b`.
    DecAttnRelB,
    /// `dec.blk.{bid}.cross_attn_norm`.
    DecCrossAttnNorm,
    /// `dec.blk.{bid}.cross_attn_q`.
    DecCrossAttnQ,
    /// `dec.blk.{bid}.cross_attn_k`.
    DecCrossAttnK,
    /// `dec.blk.{bid}.cross_attn_v`.
    DecCrossAttnV,
    /// `dec.blk.{bid}.cross_attn_o`.
    DecCrossAttnOut,
    /// `dec.blk.{bid}.cross_attn_rel_b`.
    DecCrossAttnRelB,
    /// `dec.blk.{bid}.ffn_norm`.
    DecFfnNorm,
    /// `dec.blk.{bid}.ffn_gate`.
    DecFfnGate,
    /// `dec.blk.{bid}.ffn_up`.
    DecFfnUp,
    /// `dec.blk.{bid}.ffn_down`.
    DecFfnDown,
    /// `dec.output_norm`.
    DecOutputNorm,
    /// `enc.blk.{bid}.attn_norm`.
    EncAttnNorm,
    /// `enc.blk.{bid}.attn_q`.
    EncAttnQ,
    /// `enc.blk.{bid}.attn_k`.
    EncAttnK,
    /// `enc.blk.{bid}.attn_v`.
    EncAttnV,
    /// `enc.blk.{bid}.attn_o`.
    EncAttnOut,
    /// `enc.blk.{bid}.attn_rel_b`.
    EncAttnRelB,
    /// `enc.blk.{bid}.ffn_norm`.
    EncFfnNorm,
    /// `enc.blk.{bid}.ffn_gate`.
    EncFfnGate,
    /// `enc.blk.{bid}.ffn_up`.
    EncFfnUp,
    /// `enc.blk.{bid}.ffn_down`.
    EncFfnDown,
    /// `enc.output_norm`.
    EncOutputNorm,
    /// `blk.{bid}.indexer.k_norm` (DeepSeek sparse attention's indexer key norm).
    IndexerKNorm,
    /// `blk.{bid}.indexer.proj` (the indexer's per-head weights).
    IndexerProj,
    /// `blk.{bid}.indexer.attn_k` (the indexer's key projection).
    IndexerAttnK,
    /// `blk.{bid}.indexer.attn_q_b` (the indexer's query up-projection).
    IndexerAttnQB,
    // Gemma 4.
    /// `blk.{bid}.ffn_gate_up_exps`: the experts' gate and up projections in one tensor.
    FfnGateUpExp,
    /// `blk.{bid}.pre_ffw_norm_2`.
    FfnPreNorm2,
    /// `blk.{bid}.post_ffw_norm_1`.
    FfnPostNorm1,
    /// `blk.{bid}.post_ffw_norm_2`.
    FfnPostNorm2,
    /// `blk.{bid}.layer_output_scale`.
    LayerOutScale,
    /// `nextn.pre_projection`: a draft head's projection of its input.
    NextnProjPre,
    /// `nextn.post_projection`: a draft head's projection to the target model's width.
    NextnProjPost,
}

impl Tensor {
    /// The GGUF base name (no `.weight` / `.bias`), `{bid}` for the block.
    pub const fn gguf(self) -> &'static str {
        match self {
            T::TokenEmbd => "token_embd",
            T::TokenTypes => "token_types",
            T::TokenEmbdNorm => "token_embd_norm",
            T::PosEmbd => "position_embd",
            T::Output => "output",
            T::OutputNorm => "output_norm",
            T::Cls => "cls",
            T::ClsOut => "cls.output",
            T::ClsNorm => "cls.norm",
            T::AttnNorm => "blk.{bid}.attn_norm",
            T::AttnNorm2 => "blk.{bid}.attn_norm_2",
            T::AttnQkv => "blk.{bid}.attn_qkv",
            T::AttnQ => "blk.{bid}.attn_q",
            T::AttnK => "blk.{bid}.attn_k",
            T::AttnV => "blk.{bid}.attn_v",
            T::AttnOut => "blk.{bid}.attn_output",
            T::AttnOutNorm => "blk.{bid}.attn_output_norm",
            T::AttnQNorm => "blk.{bid}.attn_q_norm",
            T::AttnKNorm => "blk.{bid}.attn_k_norm",
            T::FfnNorm => "blk.{bid}.ffn_norm",
            T::AttnPostNorm => "blk.{bid}.post_attention_norm",
            T::FfnPostNorm => "blk.{bid}.post_ffw_norm",
            T::FfnGateInp => "blk.{bid}.ffn_gate_inp",
            T::FfnGateInpShexp => "blk.{bid}.ffn_gate_inp_shexp",
            T::FfnGate => "blk.{bid}.ffn_gate",
            T::FfnUp => "blk.{bid}.ffn_up",
            T::FfnDown => "blk.{bid}.ffn_down",
            T::FfnGateExp => "blk.{bid}.ffn_gate_exps",
            T::FfnUpExp => "blk.{bid}.ffn_up_exps",
            T::FfnDownExp => "blk.{bid}.ffn_down_exps",
            T::FfnGateShexp => "blk.{bid}.ffn_gate_shexp",
            T::FfnUpShexp => "blk.{bid}.ffn_up_shexp",
            T::FfnDownShexp => "blk.{bid}.ffn_down_shexp",
            T::FfnExpProbsB => "blk.{bid}.exp_probs_b",
            T::LayerOutNorm => "blk.{bid}.layer_output_norm",
            T::AttnQA => "blk.{bid}.attn_q_a",
            T::AttnQB => "blk.{bid}.attn_q_b",
            T::AttnKvAMqa => "blk.{bid}.attn_kv_a_mqa",
            T::AttnKvB => "blk.{bid}.attn_kv_b",
            T::AttnKB => "blk.{bid}.attn_k_b",
            T::AttnVB => "blk.{bid}.attn_v_b",
            T::AttnQANorm => "blk.{bid}.attn_q_a_norm",
            T::AttnKvANorm => "blk.{bid}.attn_kv_a_norm",
            T::NextnEhProj => "blk.{bid}.nextn.eh_proj",
            T::NextnEmbedTokens => "blk.{bid}.nextn.embed_tokens",
            T::NextnEnorm => "blk.{bid}.nextn.enorm",
            T::NextnHnorm => "blk.{bid}.nextn.hnorm",
            T::NextnSharedHeadHead => "blk.{bid}.nextn.shared_head_head",
            T::NextnSharedHeadNorm => "blk.{bid}.nextn.shared_head_norm",
            T::AttnSinks => "blk.{bid}.attn_sinks",
            T::SsmIn => "blk.{bid}.ssm_in",
            T::SsmConv1d => "blk.{bid}.ssm_conv1d",
            T::SsmX => "blk.{bid}.ssm_x",
            T::SsmDt => "blk.{bid}.ssm_dt",
            T::SsmDtNorm => "blk.{bid}.ssm_dt_norm",
            T::SsmA => "blk.{bid}.ssm_a",
            T::SsmBNorm => "blk.{bid}.ssm_b_norm",
            T::SsmCNorm => "blk.{bid}.ssm_c_norm",
            T::SsmD => "blk.{bid}.ssm_d",
            T::SsmNorm => "blk.{bid}.ssm_norm",
            T::SsmOut => "blk.{bid}.ssm_out",
            T::ShortConv => "blk.{bid}.shortconv.conv",
            T::ShortConvIn => "blk.{bid}.shortconv.in_proj",
            T::ShortConvOut => "blk.{bid}.shortconv.out_proj",
            T::FfnPreNorm => "blk.{bid}.ffn_norm",
            T::AttnGate => "blk.{bid}.attn_gate",
            T::SsmBetaAlpha => "blk.{bid}.ssm_ba",
            T::SsmBeta => "blk.{bid}.ssm_beta",
            T::SsmAlpha => "blk.{bid}.ssm_alpha",
            T::FfnLatentDown => "blk.{bid}.ffn_latent_down",
            T::FfnLatentUp => "blk.{bid}.ffn_latent_up",
            T::DecAttnNorm => "dec.blk.{bid}.attn_norm",
            T::DecAttnQ => "dec.blk.{bid}.attn_q",
            T::DecAttnK => "dec.blk.{bid}.attn_k",
            T::DecAttnV => "dec.blk.{bid}.attn_v",
            T::DecAttnOut => "dec.blk.{bid}.attn_o",
            T::DecAttnRelB => "dec.blk.{bid}.attn_rel_b",
            T::DecCrossAttnNorm => "dec.blk.{bid}.cross_attn_norm",
            T::DecCrossAttnQ => "dec.blk.{bid}.cross_attn_q",
            T::DecCrossAttnK => "dec.blk.{bid}.cross_attn_k",
            T::DecCrossAttnV => "dec.blk.{bid}.cross_attn_v",
            T::DecCrossAttnOut => "dec.blk.{bid}.cross_attn_o",
            T::DecCrossAttnRelB => "dec.blk.{bid}.cross_attn_rel_b",
            T::DecFfnNorm => "dec.blk.{bid}.ffn_norm",
            T::DecFfnGate => "dec.blk.{bid}.ffn_gate",
            T::DecFfnUp => "dec.blk.{bid}.ffn_up",
            T::DecFfnDown => "dec.blk.{bid}.ffn_down",
            T::DecOutputNorm => "dec.output_norm",
            T::EncAttnNorm => "enc.blk.{bid}.attn_norm",
            T::EncAttnQ => "enc.blk.{bid}.attn_q",
            T::EncAttnK => "enc.blk.{bid}.attn_k",
            T::EncAttnV => "enc.blk.{bid}.attn_v",
            T::EncAttnOut => "enc.blk.{bid}.attn_o",
            T::EncAttnRelB => "enc.blk.{bid}.attn_rel_b",
            T::EncFfnNorm => "enc.blk.{bid}.ffn_norm",
            T::EncFfnGate => "enc.blk.{bid}.ffn_gate",
            T::EncFfnUp => "enc.blk.{bid}.ffn_up",
            T::EncFfnDown => "enc.blk.{bid}.ffn_down",
            T::EncOutputNorm => "enc.output_norm",
            T::PerLayerTokenEmbd => "per_layer_token_embd",
            T::PerLayerModelProj => "per_layer_model_proj",
            T::PerLayerProjNorm => "per_layer_proj_norm",
            T::AltupProj => "altup_proj",
            T::AltupUnembdProj => "altup_unembd_proj",
            T::PerLayerInpGate => "blk.{bid}.inp_gate",
            T::PerLayerProj => "blk.{bid}.proj",
            T::PerLayerPostNorm => "blk.{bid}.post_norm",
            T::AltupCorrectCoef => "blk.{bid}.altup_correct_coef",
            T::AltupCorrectScale => "blk.{bid}.altup_correct_scale",
            T::AltupPredictCoef => "blk.{bid}.altup_predict_coef",
            T::AltupRouter => "blk.{bid}.altup_router",
            T::AltupRouterNorm => "blk.{bid}.altup_router_norm",
            T::LaurelL => "blk.{bid}.laurel_l",
            T::LaurelR => "blk.{bid}.laurel_r",
            T::LaurelPostNorm => "blk.{bid}.laurel_post_norm",
            T::IndexerKNorm => "blk.{bid}.indexer.k_norm",
            T::IndexerProj => "blk.{bid}.indexer.proj",
            T::IndexerAttnK => "blk.{bid}.indexer.attn_k",
            T::IndexerAttnQB => "blk.{bid}.indexer.attn_q_b",
            T::FfnGateUpExp => "blk.{bid}.ffn_gate_up_exps",
            T::FfnPreNorm2 => "blk.{bid}.pre_ffw_norm_2",
            T::FfnPostNorm1 => "blk.{bid}.post_ffw_norm_1",
            T::FfnPostNorm2 => "blk.{bid}.post_ffw_norm_2",
            T::LayerOutScale => "blk.{bid}.layer_output_scale",
            T::NextnProjPre => "nextn.pre_projection",
            T::NextnProjPost => "nextn.post_projection",
        }
    }
}

use Tensor as T;

/// The tensors of a Llama-style decoder (embeddings, output, and per block the attention and
/// the gated feed-forward with their norms), which most architectures have; an
/// architecture lists this group plus its own tensors.
pub const DECODER: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::Output,
    Tensor::OutputNorm,
    Tensor::AttnNorm,
    Tensor::AttnQ,
    Tensor::AttnK,
    Tensor::AttnV,
    Tensor::AttnOut,
    Tensor::FfnNorm,
    Tensor::FfnGate,
    Tensor::FfnUp,
    Tensor::FfnDown,
];

/// The tensors of a decoder whose FFN is always the routed experts: no dense FFN (gguf-py's
/// lists for `qwen2moe`, `qwen3moe`, `olmoe`, `granitemoe`, so a dense layer's
/// `mlp.gate_proj` cannot be mapped there and the reference refuses the checkpoint), and a
/// fused `attn_qkv` spelling.
pub const MOE_DECODER: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::Output,
    Tensor::OutputNorm,
    Tensor::AttnNorm,
    Tensor::AttnQkv,
    Tensor::AttnQ,
    Tensor::AttnK,
    Tensor::AttnV,
    Tensor::AttnOut,
    Tensor::FfnNorm,
    Tensor::FfnGateInp,
    Tensor::FfnGateExp,
    Tensor::FfnUpExp,
    Tensor::FfnDownExp,
];

/// Every GGUF tensor with its HF spellings (without `.weight` / `.bias`). Order matters only
/// where a spelling appears twice: `post_attention_layernorm` is `ffn_norm` in Llama-style
/// blocks, but `post_attention_norm` in an architecture that has both (Gemma 2/3, Seed-OSS).
pub static TABLE: &[(Tensor, &[&str])] = &[
    (
        T::TokenEmbd,
        &[
            "model.embed_tokens",
            "embeddings.word_embeddings",
            "tok_embeddings",
            "transformer.word_embeddings",
            "transformer.wte",
            "wte",
            "gpt_neox.embed_in",
            "transformer.embd.wte",
            "embed_tokens",
            "embeddings.tok_embeddings",
            "backbone.embedding",
            "backbone.embeddings",
            "shared",
            "model.word_embeddings",
        ],
    ),
    (T::TokenTypes, &["embeddings.token_type_embeddings"]),
    (
        T::TokenEmbdNorm,
        &[
            "embeddings.LayerNorm",
            "embeddings.norm",
            "emb_ln",
            "model.embedding_norm",
        ],
    ),
    (
        T::PosEmbd,
        &["embeddings.position_embeddings", "transformer.wpe", "wpe"],
    ),
    (T::Output, &["lm_head", "embed_out", "lm_head.linear"]),
    (
        T::OutputNorm,
        &[
            "model.norm",
            "norm",
            "transformer.ln_f",
            "ln_f",
            "gpt_neox.final_layer_norm",
            "model.final_layernorm",
            "lm_head.ln",
            "final_norm",
            "backbone.norm_f",
        ],
    ),
    (T::Cls, &["classifier", "classifier.dense", "head.dense"]),
    (T::ClsOut, &["classifier.out_proj"]),
    (T::ClsNorm, &["head.norm"]),
    (
        T::AttnNorm,
        &[
            "model.layers.{bid}.input_layernorm",
            "layers.{bid}.attention_norm",
            "transformer.h.{bid}.input_layernorm",
            "transformer.h.{bid}.ln_mlp",
            "transformer.h.{bid}.ln_1",
            "h.{bid}.ln_1",
            "gpt_neox.layers.{bid}.input_layernorm",
            "transformer.h.{bid}.ln",
            "model.layers.{bid}.attention_layernorm",
            "layers.{bid}.input_layernorm",
            "layers.{bid}.attn_norm",
            "backbone.layers.{bid}.norm",
            "model.layers.{bid}.operator_norm",
        ],
    ),
    (T::AttnNorm2, &["transformer.h.{bid}.ln_attn"]),
    (
        T::AttnQkv,
        &[
            "transformer.h.{bid}.self_attention.query_key_value",
            "transformer.h.{bid}.attn.c_attn",
            "h.{bid}.attn.c_attn",
            "gpt_neox.layers.{bid}.attention.query_key_value",
            "transformer.h.{bid}.mixer.Wqkv",
            "model.layers.{bid}.self_attn.qkv_proj",
            "layers.{bid}.attn.Wqkv",
            "encoder.layers.{bid}.attn.Wqkv",
            "model.layers.{bid}.linear_attn.in_proj_qkv",
            "model.layers.{bid}.attention.query_key_value",
        ],
    ),
    (
        T::AttnQ,
        &[
            "model.layers.{bid}.self_attn.q_proj",
            "encoder.layer.{bid}.attention.self.query",
            "layers.{bid}.attention.wq",
            "layers.{bid}.self_attn.q_proj",
            "backbone.layers.{bid}.mixer.q_proj",
        ],
    ),
    (
        T::AttnK,
        &[
            "model.layers.{bid}.self_attn.k_proj",
            "encoder.layer.{bid}.attention.self.key",
            "layers.{bid}.attention.wk",
            "layers.{bid}.self_attn.k_proj",
            "backbone.layers.{bid}.mixer.k_proj",
        ],
    ),
    (
        T::AttnV,
        &[
            "model.layers.{bid}.self_attn.v_proj",
            "encoder.layer.{bid}.attention.self.value",
            "layers.{bid}.attention.wv",
            "layers.{bid}.self_attn.v_proj",
            "backbone.layers.{bid}.mixer.v_proj",
        ],
    ),
    (
        T::AttnOut,
        &[
            "model.layers.{bid}.self_attn.o_proj",
            "encoder.layer.{bid}.attention.output.dense",
            "layers.{bid}.attention.wo",
            "transformer.h.{bid}.self_attention.dense",
            "transformer.h.{bid}.attn.c_proj",
            "h.{bid}.attn.c_proj",
            "gpt_neox.layers.{bid}.attention.dense",
            "model.layers.{bid}.self_attn.dense",
            "transformer.h.{bid}.mixer.out_proj",
            "layers.{bid}.self_attn.o_proj",
            "layers.{bid}.attn.Wo",
            "encoder.layers.{bid}.attn.out_proj",
            "model.layers.{bid}.self_attn.out_proj",
            "backbone.layers.{bid}.mixer.o_proj",
            "model.layers.{bid}.attention.dense",
        ],
    ),
    (
        T::AttnOutNorm,
        &[
            "encoder.layer.{bid}.attention.output.LayerNorm",
            "encoder.layers.{bid}.norm1",
        ],
    ),
    (
        T::AttnQNorm,
        &[
            "model.layers.{bid}.self_attn.q_norm",
            "model.layers.{bid}.self_attn.q_layernorm",
            "layers.{bid}.self_attn.q_norm",
            "model.layers.{bid}.self_attn.query_layernorm",
            "model.layers.{bid}.attention.query_layernorm",
        ],
    ),
    (
        T::AttnKNorm,
        &[
            "model.layers.{bid}.self_attn.k_norm",
            "model.layers.{bid}.self_attn.k_layernorm",
            "layers.{bid}.self_attn.k_norm",
            "model.layers.{bid}.self_attn.key_layernorm",
            "model.layers.{bid}.attention.key_layernorm",
        ],
    ),
    (
        T::FfnNorm,
        &[
            "model.layers.{bid}.post_attention_layernorm",
            "layers.{bid}.ffn_norm",
            "model.layers.{bid}.pre_feedforward_layernorm",
            "transformer.h.{bid}.ln_2",
            "h.{bid}.ln_2",
            "gpt_neox.layers.{bid}.post_attention_layernorm",
            "model.layers.{bid}.feedforward_layernorm",
            "layers.{bid}.mlp_norm",
            "layers.{bid}.pre_feedforward_layernorm",
            // qwen3-embedding; also a base-model checkpoint whose `language_model.` level
            // the generic filter drops (Qwen2VLModel). `post_attention_norm` where an
            // architecture has both (the row below wins).
            "layers.{bid}.post_attention_layernorm",
            "model.layers.{bid}.ffn_norm",
            "model.layers.{bid}.pre_ff_layernorm",
        ],
    ),
    (
        T::AttnPostNorm,
        &[
            "model.layers.{bid}.post_attention_layernorm",
            "model.layers.{bid}.post_self_attn_layernorm",
            "layers.{bid}.post_attention_layernorm",
        ],
    ),
    (
        T::FfnPostNorm,
        &[
            "model.layers.{bid}.post_feedforward_layernorm",
            "model.layers.{bid}.post_mlp_layernorm",
            "layers.{bid}.post_feedforward_layernorm",
        ],
    ),
    (
        T::FfnGateInp,
        &[
            "model.layers.{bid}.block_sparse_moe.router.layer",
            "model.layers.{bid}.block_sparse_moe.gate",
            "model.layers.{bid}.mlp.gate",
            "model.layers.{bid}.feed_forward.router",
            "model.layers.{bid}.mlp.router",
            "model.layers.{bid}.feed_forward.gate",
            "backbone.layers.{bid}.mixer.gate",
            "layers.{bid}.gate",
            "model.layers.{bid}.router.proj",
            "model.layers.{bid}.mlp.router.gate",
        ],
    ),
    (
        T::FfnGateInpShexp,
        &["model.layers.{bid}.mlp.shared_expert_gate"],
    ),
    (
        T::FfnGate,
        &[
            "model.layers.{bid}.mlp.gate_proj",
            "layers.{bid}.feed_forward.w1",
            "model.layers.{bid}.feed_forward.gate_proj",
            "layers.{bid}.mlp.gate_proj",
            "encoder.layers.{bid}.mlp.fc12",
            "model.layers.{bid}.feed_forward.w1",
        ],
    ),
    (
        T::FfnUp,
        &[
            "model.layers.{bid}.mlp.up_proj",
            "encoder.layer.{bid}.intermediate.dense",
            "layers.{bid}.feed_forward.w3",
            "transformer.h.{bid}.mlp.dense_h_to_4h",
            "model.layers.{bid}.mlp.gate_up_proj",
            "transformer.h.{bid}.mlp.c_fc",
            "h.{bid}.mlp.c_fc",
            "gpt_neox.layers.{bid}.mlp.dense_h_to_4h",
            "model.layers.{bid}.mlp.fc1",
            "transformer.h.{bid}.mlp.fc1",
            "model.layers.{bid}.mlp.c_fc",
            "model.layers.{bid}.feed_forward.up_proj",
            "layers.{bid}.mlp.up_proj",
            "layers.{bid}.mlp.Wi",
            "encoder.layers.{bid}.mlp.fc11",
            "model.layers.{bid}.feed_forward.w3",
            "backbone.layers.{bid}.mixer.up_proj",
        ],
    ),
    (
        T::FfnDown,
        &[
            "model.layers.{bid}.mlp.down_proj",
            "encoder.layer.{bid}.output.dense",
            "layers.{bid}.feed_forward.w2",
            "transformer.h.{bid}.mlp.dense_4h_to_h",
            "transformer.h.{bid}.mlp.c_proj",
            "h.{bid}.mlp.c_proj",
            "gpt_neox.layers.{bid}.mlp.dense_4h_to_h",
            "model.layers.{bid}.mlp.fc2",
            "transformer.h.{bid}.mlp.fc2",
            "model.layers.{bid}.mlp.c_proj",
            "model.layers.{bid}.feed_forward.down_proj",
            "layers.{bid}.mlp.down_proj",
            "layers.{bid}.mlp.Wo",
            "encoder.layers.{bid}.mlp.fc2",
            "model.layers.{bid}.feed_forward.w2",
            "backbone.layers.{bid}.mixer.down_proj",
        ],
    ),
    (
        T::FfnGateExp,
        &[
            "layers.{bid}.feed_forward.experts.w1",
            "model.layers.{bid}.mlp.experts.gate_proj",
            "model.layers.{bid}.block_sparse_moe.experts.w1",
            "model.layers.{bid}.feed_forward.experts.gate_proj",
        ],
    ),
    (
        T::FfnUpExp,
        &[
            "layers.{bid}.feed_forward.experts.w3",
            "model.layers.{bid}.mlp.experts.up_proj",
            "model.layers.{bid}.block_sparse_moe.experts.w3",
            "model.layers.{bid}.feed_forward.experts.up_proj",
        ],
    ),
    (
        T::FfnDownExp,
        &[
            "model.layers.{bid}.block_sparse_moe.output_linear",
            "layers.{bid}.feed_forward.experts.w2",
            "model.layers.{bid}.mlp.experts.down_proj",
            "model.layers.{bid}.block_sparse_moe.experts.w2",
            "model.layers.{bid}.feed_forward.experts.down_proj",
            "model.layers.{bid}.experts.down_proj",
        ],
    ),
    (
        T::FfnGateShexp,
        &[
            "model.layers.{bid}.mlp.shared_expert.gate_proj",
            "model.layers.{bid}.mlp.shared_experts.gate_proj",
            "model.layers.{bid}.feed_forward.shared_expert.gate_proj",
            "layers.{bid}.shared_experts.w1",
        ],
    ),
    (
        T::FfnUpShexp,
        &[
            "model.layers.{bid}.mlp.shared_expert.up_proj",
            "model.layers.{bid}.mlp.shared_experts.up_proj",
            "model.layers.{bid}.feed_forward.shared_expert.up_proj",
            "backbone.layers.{bid}.mixer.shared_experts.up_proj",
            "layers.{bid}.shared_experts.w3",
        ],
    ),
    (
        T::FfnDownShexp,
        &[
            "model.layers.{bid}.shared_mlp.output_linear",
            "model.layers.{bid}.mlp.shared_expert.down_proj",
            "model.layers.{bid}.mlp.shared_experts.down_proj",
            "model.layers.{bid}.feed_forward.shared_expert.down_proj",
            "backbone.layers.{bid}.mixer.shared_experts.down_proj",
            "layers.{bid}.shared_experts.w2",
        ],
    ),
    (
        T::FfnExpProbsB,
        &[
            "model.layers.{bid}.mlp.gate.e_score_correction",
            "model.layers.{bid}.mlp.moe_statics.e_score_correction",
            "model.layers.{bid}.mlp.moe_statics.e_score_correction",
            "model.layers.{bid}.feed_forward.expert_bias",
            "backbone.layers.{bid}.mixer.gate.e_score_correction",
            "model.layers.{bid}.block_sparse_moe.e_score_correction",
            "model.layers.{bid}.mlp.expert_bias",
            "model.layers.{bid}.mlp.e_score_correction",
            "model.layers.{bid}.mlp.gate.expert_bias",
            "model.layers.{bid}.mlp.experts.e_score_correction",
        ],
    ),
    (
        T::LayerOutNorm,
        &[
            "encoder.layer.{bid}.output.LayerNorm",
            "encoder.layers.{bid}.norm2",
            "model.layers.{bid}.final_layernorm",
        ],
    ),
    // MLA attention, next-token-prediction layers and attention sinks (issue #14).
    // `layers.{bid}.attention.*`: Mistral Large 3's native names.
    (
        T::AttnQA,
        &[
            "model.layers.{bid}.self_attn.q_a_proj",
            "layers.{bid}.attention.wq_a",
        ],
    ),
    (
        T::AttnQB,
        &[
            "model.layers.{bid}.self_attn.q_b_proj",
            "layers.{bid}.attention.wq_b",
        ],
    ),
    (
        T::AttnKvAMqa,
        &[
            "model.layers.{bid}.self_attn.kv_a_proj_with_mqa",
            "layers.{bid}.attention.wkv_a_with_mqa",
        ],
    ),
    (T::AttnKvB, &["model.layers.{bid}.self_attn.kv_b_proj"]),
    (
        T::AttnKB,
        &[
            "model.layers.{bid}.self_attn.k_b_proj",
            "layers.{bid}.attention.k_b_proj",
        ],
    ),
    (
        T::AttnVB,
        &[
            "model.layers.{bid}.self_attn.v_b_proj",
            "layers.{bid}.attention.v_b_proj",
        ],
    ),
    (
        T::AttnQANorm,
        &[
            "model.layers.{bid}.self_attn.q_a_layernorm",
            "layers.{bid}.attention.q_a_norm",
        ],
    ),
    (
        T::AttnKvANorm,
        &[
            "model.layers.{bid}.self_attn.kv_a_layernorm",
            "layers.{bid}.attention.kv_a_norm",
        ],
    ),
    (T::NextnEhProj, &["model.layers.{bid}.eh_proj"]),
    (T::NextnEmbedTokens, &["model.layers.{bid}.embed_tokens"]),
    (T::NextnEnorm, &["model.layers.{bid}.enorm"]),
    (T::NextnHnorm, &["model.layers.{bid}.hnorm"]),
    (
        T::NextnSharedHeadHead,
        &["model.layers.{bid}.shared_head.head"],
    ),
    (
        T::NextnSharedHeadNorm,
        &["model.layers.{bid}.shared_head.norm"],
    ),
    (T::AttnSinks, &["model.layers.{bid}.self_attn.sinks"]),
    // State-space mixers.
    (
        T::SsmIn,
        &[
            "model.layers.{bid}.in_proj",
            "backbone.layers.{bid}.mixer.in_proj",
            "model.layers.{bid}.mamba.in_proj",
            "model.layers.{bid}.linear_attn.in_proj_qkvz",
        ],
    ),
    (
        T::SsmConv1d,
        &[
            "model.layers.{bid}.conv1d",
            "backbone.layers.{bid}.mixer.conv1d",
            "model.layers.{bid}.mamba.conv1d",
            "model.layers.{bid}.linear_attn.conv1d",
        ],
    ),
    (
        T::SsmX,
        &[
            "model.layers.{bid}.x_proj",
            "backbone.layers.{bid}.mixer.x_proj",
            "model.layers.{bid}.mamba.x_proj",
        ],
    ),
    (
        T::SsmDt,
        &[
            "model.layers.{bid}.dt_proj",
            "backbone.layers.{bid}.mixer.dt_proj",
            "model.layers.{bid}.mamba.dt_proj",
            "model.layers.{bid}.linear_attn.dt_proj",
            "backbone.layers.{bid}.mixer.dt",
        ],
    ),
    (T::SsmDtNorm, &["model.layers.{bid}.mamba.dt_layernorm"]),
    (
        T::SsmA,
        &[
            "model.layers.{bid}.A_log",
            "backbone.layers.{bid}.mixer.A_log",
            "model.layers.{bid}.mamba.A_log",
            "model.layers.{bid}.linear_attn.A_log",
        ],
    ),
    (
        T::SsmBNorm,
        &[
            "model.layers.{bid}.mamba.b_layernorm",
            "model.layers.{bid}.mamba.B_layernorm",
        ],
    ),
    (
        T::SsmCNorm,
        &[
            "model.layers.{bid}.mamba.c_layernorm",
            "model.layers.{bid}.mamba.C_layernorm",
        ],
    ),
    (
        T::SsmD,
        &[
            "model.layers.{bid}.D",
            "backbone.layers.{bid}.mixer.D",
            "model.layers.{bid}.mamba.D",
        ],
    ),
    (
        T::SsmNorm,
        &[
            "model.layers.{bid}.mamba.norm",
            "backbone.layers.{bid}.mixer.norm",
            "model.layers.{bid}.linear_attn.norm",
        ],
    ),
    (
        T::SsmOut,
        &[
            "model.layers.{bid}.out_proj",
            "backbone.layers.{bid}.mixer.out_proj",
            "model.layers.{bid}.mamba.out_proj",
            "model.layers.{bid}.linear_attn.out_proj",
        ],
    ),
    (
        T::AttnGate,
        &[
            "model.layers.{bid}.linear_attn.in_proj_z",
            "model.layers.{bid}.self_attn.gate_proj",
            "model.layers.{bid}.self_attn.g_proj",
        ],
    ),
    (
        T::SsmBetaAlpha,
        &["model.layers.{bid}.linear_attn.in_proj_ba"],
    ),
    (T::SsmBeta, &["model.layers.{bid}.linear_attn.in_proj_b"]),
    (T::SsmAlpha, &["model.layers.{bid}.linear_attn.in_proj_a"]),
    (
        T::FfnLatentDown,
        &["backbone.layers.{bid}.mixer.fc1_latent_proj"],
    ),
    (
        T::FfnLatentUp,
        &["backbone.layers.{bid}.mixer.fc2_latent_proj"],
    ),
    // LFM2's short convolution.
    (T::ShortConv, &["model.layers.{bid}.conv.conv"]),
    (T::ShortConvIn, &["model.layers.{bid}.conv.in_proj"]),
    (T::ShortConvOut, &["model.layers.{bid}.conv.out_proj"]),
    (
        T::FfnPreNorm,
        &[
            "model.layers.{bid}.pre_ff_layernorm.weight",
            "model.layers.{bid}.pre_mlp_layernorm",
        ],
    ),
    // T5 (gguf-py's `DEC_*` / `ENC_*`).
    (T::DecAttnNorm, &["decoder.block.{bid}.layer.0.layer_norm"]),
    (
        T::DecAttnQ,
        &["decoder.block.{bid}.layer.0.SelfAttention.q"],
    ),
    (
        T::DecAttnK,
        &["decoder.block.{bid}.layer.0.SelfAttention.k"],
    ),
    (
        T::DecAttnV,
        &["decoder.block.{bid}.layer.0.SelfAttention.v"],
    ),
    (
        T::DecAttnOut,
        &["decoder.block.{bid}.layer.0.SelfAttention.o"],
    ),
    (
        T::DecAttnRelB,
        &["decoder.block.{bid}.layer.0.SelfAttention.relative_attention_bias"],
    ),
    (
        T::DecCrossAttnNorm,
        &["decoder.block.{bid}.layer.1.layer_norm"],
    ),
    (
        T::DecCrossAttnQ,
        &["decoder.block.{bid}.layer.1.EncDecAttention.q"],
    ),
    (
        T::DecCrossAttnK,
        &["decoder.block.{bid}.layer.1.EncDecAttention.k"],
    ),
    (
        T::DecCrossAttnV,
        &["decoder.block.{bid}.layer.1.EncDecAttention.v"],
    ),
    (
        T::DecCrossAttnOut,
        &["decoder.block.{bid}.layer.1.EncDecAttention.o"],
    ),
    (
        T::DecCrossAttnRelB,
        &["decoder.block.{bid}.layer.1.EncDecAttention.relative_attention_bias"],
    ),
    (T::DecFfnNorm, &["decoder.block.{bid}.layer.2.layer_norm"]),
    (
        T::DecFfnGate,
        &["decoder.block.{bid}.layer.2.DenseReluDense.wi_0"],
    ),
    (
        T::DecFfnUp,
        &[
            "decoder.block.{bid}.layer.2.DenseReluDense.wi",
            "decoder.block.{bid}.layer.2.DenseReluDense.wi_1",
        ],
    ),
    (
        T::DecFfnDown,
        &["decoder.block.{bid}.layer.2.DenseReluDense.wo"],
    ),
    (T::DecOutputNorm, &["decoder.final_layer_norm"]),
    (T::EncAttnNorm, &["encoder.block.{bid}.layer.0.layer_norm"]),
    (
        T::EncAttnQ,
        &["encoder.block.{bid}.layer.0.SelfAttention.q"],
    ),
    (
        T::EncAttnK,
        &["encoder.block.{bid}.layer.0.SelfAttention.k"],
    ),
    (
        T::EncAttnV,
        &["encoder.block.{bid}.layer.0.SelfAttention.v"],
    ),
    (
        T::EncAttnOut,
        &["encoder.block.{bid}.layer.0.SelfAttention.o"],
    ),
    (
        T::EncAttnRelB,
        &["encoder.block.{bid}.layer.0.SelfAttention.relative_attention_bias"],
    ),
    (T::EncFfnNorm, &["encoder.block.{bid}.layer.1.layer_norm"]),
    (
        T::EncFfnGate,
        &["encoder.block.{bid}.layer.1.DenseReluDense.wi_0"],
    ),
    (
        T::EncFfnUp,
        &[
            "encoder.block.{bid}.layer.1.DenseReluDense.wi",
            "encoder.block.{bid}.layer.1.DenseReluDense.wi_1",
        ],
    ),
    (
        T::EncFfnDown,
        &["encoder.block.{bid}.layer.1.DenseReluDense.wo"],
    ),
    (T::EncOutputNorm, &["encoder.final_layer_norm"]),
    // Gemma 3n.
    (T::PerLayerTokenEmbd, &["model.embed_tokens_per_layer"]),
    (T::PerLayerModelProj, &["model.per_layer_model_projection"]),
    (T::PerLayerProjNorm, &["model.per_layer_projection_norm"]),
    (T::AltupProj, &["model.altup_projections"]),
    (T::AltupUnembdProj, &["model.altup_unembed_projections"]),
    (
        T::PerLayerInpGate,
        &["model.layers.{bid}.per_layer_input_gate"],
    ),
    (
        T::PerLayerProj,
        &["model.layers.{bid}.per_layer_projection"],
    ),
    (
        T::PerLayerPostNorm,
        &["model.layers.{bid}.post_per_layer_input_norm"],
    ),
    (
        T::AltupCorrectCoef,
        &["model.layers.{bid}.altup.correction_coefs"],
    ),
    (
        T::AltupCorrectScale,
        &["model.layers.{bid}.altup.correct_output_scale"],
    ),
    (
        T::AltupPredictCoef,
        &["model.layers.{bid}.altup.prediction_coefs"],
    ),
    (
        T::AltupRouter,
        &["model.layers.{bid}.altup.modality_router"],
    ),
    (
        T::AltupRouterNorm,
        &["model.layers.{bid}.altup.router_norm"],
    ),
    (T::LaurelL, &["model.layers.{bid}.laurel.linear_left"]),
    (T::LaurelR, &["model.layers.{bid}.laurel.linear_right"]),
    (
        T::LaurelPostNorm,
        &["model.layers.{bid}.laurel.post_laurel_norm"],
    ),
    (
        T::IndexerKNorm,
        &[
            "model.layers.{bid}.self_attn.indexer.k_norm",
            "model.layers.{bid}.self_attn.index_k_norm",
        ],
    ),
    (
        T::IndexerProj,
        &["model.layers.{bid}.self_attn.indexer.weights_proj"],
    ),
    (
        T::IndexerAttnK,
        &["model.layers.{bid}.self_attn.indexer.wk"],
    ),
    (
        T::IndexerAttnQB,
        &["model.layers.{bid}.self_attn.indexer.wq_b"],
    ),
    // Gemma 4: the fused experts and their router, the second FFN's norms, the layer scalar.
    (
        T::FfnGateUpExp,
        &[
            "model.layers.{bid}.mlp.experts.gate_up_proj",
            "model.layers.{bid}.experts.gate_up_proj",
        ],
    ),
    (
        T::FfnPreNorm2,
        &["model.layers.{bid}.pre_feedforward_layernorm_2"],
    ),
    (
        T::FfnPostNorm1,
        &["model.layers.{bid}.post_feedforward_layernorm_1"],
    ),
    (
        T::FfnPostNorm2,
        &["model.layers.{bid}.post_feedforward_layernorm_2"],
    ),
    (T::LayerOutScale, &["model.layers.{bid}.layer_scalar"]),
    // Gemma 4's assistant (draft head).
    (T::NextnProjPre, &["pre_projection"]),
    (T::NextnProjPost, &["post_projection"]),
];

/// The expanded name table of one architecture and block count.
pub struct TensorMap {
    map: HashMap<String, String>,
}

impl TensorMap {
    /// The spellings of `tensors` (GGUF names included) in [`TABLE`] order, then
    /// `overrides` (later entries win), expanded for blocks `0..n_blocks`.
    pub fn new(groups: &[&[Tensor]], overrides: &[(Tensor, &[&str])], n_blocks: u64) -> TensorMap {
        let mut map = TensorMap::empty();
        let has = |t: &Tensor| groups.iter().any(|g| g.contains(t));
        for t in groups.iter().flat_map(|g| g.iter()) {
            map.add(t.gguf(), t.gguf(), n_blocks);
        }
        let rows = TABLE.iter().filter(|(t, _)| has(t));
        for (t, spellings) in rows.chain(overrides) {
            for hf in spellings.iter() {
                map.add(t.gguf(), hf, n_blocks);
            }
        }
        map
    }

    /// A map with no names.
    pub(crate) fn empty() -> TensorMap {
        TensorMap {
            map: HashMap::new(),
        }
    }

    /// Maps the HF spelling `hf` to `gguf` (a later call for the same spelling wins), each
    /// `{bid}` expanded for blocks `0..n_blocks`.
    pub(crate) fn add(&mut self, gguf: &str, hf: &str, n_blocks: u64) {
        if gguf.contains("{bid}") || hf.contains("{bid}") {
            for bid in 0..n_blocks {
                let b = bid.to_string();
                self.map
                    .insert(hf.replace("{bid}", &b), gguf.replace("{bid}", &b));
            }
        } else {
            self.map.insert(hf.to_string(), gguf.to_string());
        }
    }

    /// The GGUF name of `name`, if the table knows it.
    pub fn get(&self, name: &str) -> Option<String> {
        if let Some(g) = self.map.get(name) {
            return Some(g.clone());
        }
        for suffix in [".weight", ".bias"] {
            if let Some(base) = name.strip_suffix(suffix) {
                if let Some(g) = self.map.get(base) {
                    return Some(format!("{g}{suffix}"));
                }
            }
        }
        None
    }
}

/// The block id of a tensor name: its first dot-separated part made only of digits.
pub fn block_id(name: &str) -> Option<u64> {
    name.split('.')
        .find(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
        .and_then(|p| p.parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_with_and_without_suffix() {
        let m = TensorMap::new(&[&[T::TokenEmbd, T::AttnQ]], &[], 2);
        assert_eq!(
            m.get("model.embed_tokens.weight").unwrap(),
            "token_embd.weight"
        );
        assert_eq!(
            m.get("model.layers.1.self_attn.q_proj.bias").unwrap(),
            "blk.1.attn_q.bias"
        );
        assert_eq!(m.get("blk.1.attn_q.weight").unwrap(), "blk.1.attn_q.weight");
        assert!(m.get("model.layers.2.self_attn.q_proj.weight").is_none());
        assert!(m.get("model.layers.0.self_attn.k_proj.weight").is_none());
        assert_eq!(block_id("model.layers.12.mlp"), Some(12));
        assert_eq!(block_id("lm_head.weight"), None);
    }

    #[test]
    fn later_rows_and_overrides_win() {
        let hf = "model.layers.0.post_attention_layernorm.weight";
        let llama = TensorMap::new(&[&[T::FfnNorm]], &[], 1);
        assert_eq!(llama.get(hf).unwrap(), "blk.0.ffn_norm.weight");
        let gemma2 = TensorMap::new(&[&[T::FfnNorm, T::AttnPostNorm]], &[], 1);
        assert_eq!(gemma2.get(hf).unwrap(), "blk.0.post_attention_norm.weight");
        let glm4 = TensorMap::new(
            &[&[T::FfnNorm, T::AttnPostNorm]],
            &[(T::FfnNorm, &["model.layers.{bid}.post_attention_layernorm"])],
            1,
        );
        assert_eq!(glm4.get(hf).unwrap(), "blk.0.ffn_norm.weight");
    }

    #[test]
    fn each_tensor_has_one_row() {
        let mut seen = std::collections::HashSet::new();
        for (t, _) in TABLE {
            assert!(seen.insert(*t), "{t:?} has two rows");
        }
    }
}
