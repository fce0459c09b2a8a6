//! Qwen2 / Qwen3 (dense) and Qwen2-MoE / Qwen3-MoE (`conversion/qwen.py`).
//!
//! Llama names without the rotary permutation (Qwen uses NeoX rope); Qwen3 adds q/k norms;
//! the MoE classes stack per-expert `down/gate/up_proj` (in that order) into
//! `ffn_*_exps`, accept already fused 3-D expert tensors, and add the expert FFN sizes.

use ggufkit::gguf::keys::llm;
use serde_json::Value as Json;

use super::{keep, no_extra, Arch, Experts, Extra, HeadDim, Hooks, ModelType, Rules, TextType};
use crate::hf::config::Hparams;
use crate::hf::names::{Tensor, DECODER, MOE_DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// `Qwen2ForCausalLM` (arch `qwen2`).
pub const QWEN2: Arch = Arch {
    // Qwen2-Audio's and Audio Flamingo 3's text models are Qwen2s (their Whisper towers are
    // dropped).
    hf_names: &[
        "Qwen2ForCausalLM",
        "Qwen2Model",
        "Qwen2AudioForConditionalGeneration",
        "AudioFlamingo3ForConditionalGeneration",
    ],
    model_types: &[ModelType {
        name: "qwen2",
        hf_classes: &["Qwen2ForCausalLM", "Qwen2Model"],
        defaults: defaults! {
            "vocab_size" => 151936,
            "hidden_size" => 4096,
            "intermediate_size" => 22016,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 32,
            "max_position_embeddings" => 32768,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 10000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[
        ("qwen2_audio", TextType::Named("qwen2")),
        ("audioflamingo3", TextType::Named("qwen2")),
    ],
    gguf: "qwen2",
    vocab: VocabKind::Qwen2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        headless_arch: Some("Qwen2Model"),
        ..Rules::NONE
    },
    params: dense_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `Qwen3ForCausalLM` (arch `qwen3`).
pub const QWEN3: Arch = Arch {
    // Step3-VL-10B's text model is a Qwen3 (its tower and projector are dropped).
    hf_names: &[
        "Qwen3ForCausalLM",
        "Qwen3Model",
        "StepVLForConditionalGeneration",
    ],
    model_types: &[ModelType {
        name: "qwen3",
        hf_classes: &["Qwen3ForCausalLM", "Qwen3Model"],
        defaults: defaults! {
            "vocab_size" => 151936,
            "hidden_size" => 4096,
            "intermediate_size" => 22016,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 32,
            "head_dim" => 128,
            "max_position_embeddings" => 32768,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 10000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "qwen3",
    vocab: VocabKind::Qwen2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, &[Tensor::AttnQNorm, Tensor::AttnKNorm]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules::NONE,
    params: dense_params,
    extra: refuse_reranker,
    hooks: Hooks::NONE,
};

/// `Qwen2MoeForCausalLM` (arch `qwen2moe`).
pub const QWEN2MOE: Arch = Arch {
    hf_names: &["Qwen2MoeForCausalLM"],
    model_types: &[ModelType {
        name: "qwen2_moe",
        hf_classes: &["Qwen2MoeForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 151936,
            "hidden_size" => 2048,
            "intermediate_size" => 5632,
            "num_hidden_layers" => 24,
            "num_attention_heads" => 16,
            "num_key_value_heads" => 16,
            "max_position_embeddings" => 32768,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 10000.0,
            "num_experts_per_tok" => 4,
            "num_experts" => 60,
            "moe_intermediate_size" => 1408,
            "shared_expert_intermediate_size" => 5632,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "qwen2moe",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        MOE_DECODER,
        &[
            Tensor::FfnGateInpShexp,
            Tensor::FfnGateShexp,
            Tensor::FfnUpShexp,
            Tensor::FfnDownShexp,
        ],
    ],
    tensor_overrides: &[],
    filter: keep,
    rules: MOE_RULES,
    params: moe_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `Qwen3MoeForCausalLM` (arch `qwen3moe`).
pub const QWEN3MOE: Arch = Arch {
    hf_names: &["Qwen3MoeForCausalLM"],
    model_types: &[ModelType {
        name: "qwen3_moe",
        hf_classes: &["Qwen3MoeForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 151936,
            "hidden_size" => 2048,
            "intermediate_size" => 6144,
            "num_hidden_layers" => 24,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 4,
            "max_position_embeddings" => 32768,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 10000.0,
            "num_experts_per_tok" => 8,
            "num_local_experts" => 128,
            "moe_intermediate_size" => 768,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(super::num_experts_alias),
    }],
    composites: &[],
    gguf: "qwen3moe",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[MOE_DECODER, &[Tensor::AttnQNorm, Tensor::AttnKNorm]],
    tensor_overrides: &[],
    filter: keep,
    rules: MOE_RULES,
    params: moe_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

const MOE_RULES: Rules = Rules {
    fused_experts: true,
    experts: &[QWEN_EXPERTS],
    ..Rules::NONE
};

/// Per-expert `down/gate/up_proj` under `mlp.experts.{xid}` (Qwen-MoE, OLMoE).
pub const QWEN_EXPERTS: Experts = Experts {
    marker: "experts",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

fn dense_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.pooling()
}

/// `Qwen2MoeModel.set_gguf_parameters`: the generic block and the expert FFN sizes.
pub(super) fn moe_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.opt_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["moe_intermediate_size"])?;
    p.opt_u32(
        llm::EXPERT_SHARED_FEED_FORWARD_LENGTH,
        &["shared_expert_intermediate_size"],
    )
}

/// Qwen3 rerankers need a classifier head built from the LM head's "yes"/"no" rows and a
/// rerank chat template (which needs the tokenizer); refuse them rather than write a plain
/// Qwen3 model.
fn refuse_reranker(hp: &Hparams) -> Result<Extra, ConvertError> {
    let dir = hp.path.parent().unwrap_or(std::path::Path::new("."));
    let readme = std::fs::read_to_string(dir.join("README.md"))
        .unwrap_or_default()
        .to_lowercase();
    let hints = [
        crate::hf::metadata::dir_name(dir),
        hp.get("_name_or_path")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string(),
        hp.get("model_type")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string(),
        hp.raw["architectures"][0]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    ];
    let is_reranker = readme.contains("# qwen3-reranker")
        || readme.contains("# qwen3-vl-reranker")
        || hints.iter().any(|h| {
            let h = h.to_lowercase();
            h.contains("qwen3-reranker") || h.contains("qwen3-vl-reranker")
        })
        || hints[3].to_lowercase().contains("sequenceclassification");
    if is_reranker {
        return Err(ConvertError::Unsupported(
            "Qwen3 reranker models are not supported yet".into(),
        ));
    }
    Ok(Extra::default())
}
