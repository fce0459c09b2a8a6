//! OLMo, OLMo 2 / OLMo 3 and OLMoE (`conversion/olmo.py`).
//!
//! OLMo (arch `olmo`) has non-parametric layer norms: no norm tensors, a fixed
//! `layer_norm_epsilon` of 1e-5, an optional `clamp_kqv`, and Llama's rotary permutation of
//! the q/k weights (not biases). OLMo 2 (`olmo2`) puts its norms after attention and FFN,
//! adds q/k norms and, for OLMo 3, a sliding-window layout. OLMoE (`olmoe`) stacks
//! per-expert `down/gate/up_proj` like Qwen-MoE and fixes the RMS epsilon at 1e-5.

use super::qwen::QWEN_EXPERTS;
use super::{keep, no_extra, Arch, HeadDim, ModelType, QkPermute, Rules};
use crate::hf::names::{Tensor, MOE_DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;
use ggufkit::gguf::keys::attention;

/// `OlmoForCausalLM` (arch `olmo`).
pub const OLMO: Arch = Arch {
    hf_names: &["OlmoForCausalLM", "OLMoForCausalLM"],
    model_types: &[ModelType {
        name: "olmo",
        hf_classes: &["OlmoForCausalLM", "OLMoForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 50304,
            "hidden_size" => 4096,
            "intermediate_size" => 11008,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "max_position_embeddings" => 2048,
            "rope_theta" => 10000.0,
            "clip_qkv" => serde_json::Value::Null,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "olmo",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::Output,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::FfnGate,
        Tensor::FfnUp,
        Tensor::FfnDown,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        permute_qk: QkPermute::Weights,
        ..Rules::NONE
    },
    params: olmo_params,
    extra: no_extra,
};

/// `Olmo2ForCausalLM` (arch `olmo2`; OLMo 3 and its sliding layout are handled the same way by the reference, but its per-layer-type rope dict is not supported here).
pub const OLMO2: Arch = Arch {
    hf_names: &["Olmo2ForCausalLM"],
    model_types: &[ModelType {
        name: "olmo2",
        hf_classes: &["Olmo2ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 50304,
            "hidden_size" => 4096,
            "intermediate_size" => 11008,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "max_position_embeddings" => 2048,
            "rope_theta" => 10000.0,
            "rms_norm_eps" => 1e-5,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "olmo2",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::Output,
        Tensor::OutputNorm,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::AttnQNorm,
        Tensor::AttnKNorm,
        Tensor::AttnPostNorm,
        Tensor::FfnPostNorm,
        Tensor::FfnGate,
        Tensor::FfnUp,
        Tensor::FfnDown,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules::NONE,
    params: olmo2_params,
    extra: no_extra,
};

/// `OlmoeForCausalLM` (arch `olmoe`).
pub const OLMOE: Arch = Arch {
    hf_names: &["OlmoeForCausalLM"],
    model_types: &[ModelType {
        name: "olmoe",
        hf_classes: &["OlmoeForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 50304,
            "hidden_size" => 2048,
            "intermediate_size" => 2048,
            "num_hidden_layers" => 16,
            "num_attention_heads" => 16,
            "max_position_embeddings" => 4096,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
            "clip_qkv" => serde_json::Value::Null,
            "num_experts_per_tok" => 8,
            "num_experts" => 64,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "olmoe",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[MOE_DECODER, &[Tensor::AttnQNorm, Tensor::AttnKNorm]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[QWEN_EXPERTS],
        ..Rules::NONE
    },
    params: olmoe_params,
    extra: no_extra,
};

fn olmo_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.f32(attention::LAYERNORM_EPS, 1e-5);
    p.opt_f32(attention::CLAMP_KQV, &["clip_qkv"])
}

fn olmo2_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let Some(sw) = p.hp.get("sliding_window").cloned() else {
        return Ok(());
    };
    let sw = crate::hf::config::json_u64(&sw).ok_or_else(|| {
        ConvertError::format(
            &p.hp.path,
            None,
            format!("sliding_window: expected an integer, found {sw}"),
        )
    })?;
    p.u32(attention::SLIDING_WINDOW, sw)?;
    let pattern = match p.layer_types_pattern()? {
        Some(v) => v,
        // OLMo 3: every fourth layer is global.
        None => (0..p.hp.req_u64(&["num_hidden_layers"])?)
            .map(|i| (i + 1) % 4 != 0)
            .collect(),
    };
    p.bools(attention::SLIDING_WINDOW_PATTERN, pattern);
    Ok(())
}

fn olmoe_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.f32(attention::LAYERNORM_RMS_EPS, 1e-5);
    Ok(())
}
