//! Gemma 4's assistant, the draft head for multi-token prediction (`Gemma4AssistantModel` of
//! `conversion/gemma.py`, a `Gemma4Model` subclass): `Gemma4AssistantForCausalLM` and
//! `Gemma4UnifiedAssistantForCausalLM`, written as arch `gemma4-assistant`.
//!
//! It is a Gemma 4 text model ([`super::gemma4`]'s vocabulary, tensor rules, hparams and
//! `rope_freqs`) whose layers all reuse the target model's KV cache (no k/v tensors), with
//! projections from and to the target model's width (`pre_projection`, `post_projection`).
//! What it adds:
//! * the masked embedder of ordered-embedding assistants (`masked_embedding.*`) is skipped;
//! * after Gemma 4's KVs, the target model's width (`backbone_hidden_size`) and the number of
//!   next-token-prediction layers (all of its layers).
//!
//! Its config classes (`Gemma4AssistantConfig`, `Gemma4UnifiedAssistantConfig`) type the text
//! half as Gemma 4's (Unified) text config, default `backbone_hidden_size` (1536 / 3840), and
//! make every layer share the KV cache when `num_kv_shared_layers` is 0 or absent.

use ggufkit::gguf::keys::{layered, mla};
use serde_json::Value as Json;

use super::gemma4::{self, gemma4_params};
use super::{Arch, Hooks, TextType};
use crate::hf::config::Hparams;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::ConvertError;

/// The GGUF tensors of arch `gemma4-assistant` (gguf-py's `MODEL_TENSORS`; `ffn_norm` is
/// its `FFN_PRE_NORM`). The masked embedder's are listed there but never written.
pub const TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::OutputNorm,
    Tensor::NextnProjPre,
    Tensor::NextnProjPost,
    Tensor::AttnQ,
    Tensor::AttnQNorm,
    Tensor::AttnOut,
    Tensor::FfnGate,
    Tensor::FfnDown,
    Tensor::FfnUp,
    Tensor::AttnNorm,
    Tensor::AttnPostNorm,
    Tensor::FfnNorm,
    Tensor::FfnPostNorm,
    Tensor::LayerOutScale,
];

/// The assistant config classes: `model_type` and its `backbone_hidden_size` default.
const CONFIGS: &[(&str, u64)] = &[
    ("gemma4_assistant", 1536),
    ("gemma4_unified_assistant", 3840),
];

/// `Gemma4AssistantForCausalLM`, `Gemma4UnifiedAssistantForCausalLM` (arch
/// `gemma4-assistant`).
pub const GEMMA4_ASSISTANT: Arch = Arch {
    hf_names: &[
        "Gemma4AssistantForCausalLM",
        "Gemma4UnifiedAssistantForCausalLM",
    ],
    model_types: &[],
    composites: &[
        ("gemma4_assistant", TextType::Named("gemma4_text")),
        (
            "gemma4_unified_assistant",
            TextType::Named("gemma4_unified_text"),
        ),
    ],
    gguf: "gemma4-assistant",
    tensors: &[TENSORS],
    filter,
    params: assistant_params,
    hooks: Hooks::NONE,
    ..gemma4::GEMMA4
};

/// `filter_tensors`: the masked embedder is skipped, then Gemma 4's renames.
fn filter(name: &str) -> Option<String> {
    if name.contains("masked_embedding") {
        return None;
    }
    gemma4::filter(name)
}

/// The `backbone_hidden_size` default of the config class AutoConfig built, if it built one
/// of the assistant classes (config.json's `model_type`).
fn class_default(hp: &Hparams) -> Option<u64> {
    let mt = hp.raw.get("model_type").and_then(Json::as_str)?;
    CONFIGS.iter().find(|(m, _)| *m == mt).map(|(_, d)| *d)
}

/// `Gemma4AssistantModel.set_gguf_parameters`: Gemma 4's KVs (with every layer sharing the
/// KV cache when the config class says so), then the target model's width and the
/// next-token-prediction layer count.
fn assistant_params(p: &mut Params) -> Result<(), ConvertError> {
    let default = class_default(p.hp);
    let mut hp = p.hp.clone();
    if default.is_some() {
        // The class's `__post_init__`: no shared-layer count means all layers share.
        let shared = hp.find_u64(&["num_kv_shared_layers"])?.unwrap_or(0);
        if shared == 0 {
            let n = hp.req_u64(&["num_hidden_layers"])?;
            hp.map.insert("num_kv_shared_layers".into(), Json::from(n));
        }
        if let Some(d) = default {
            hp.map
                .entry("backbone_hidden_size")
                .or_insert_with(|| Json::from(d));
        }
    }
    if class_default(p.hp) == Some(1536) {
        validate_architecture(&hp)?;
    }
    let mut q = p.with_hparams(&hp);
    gemma4_params(&mut q)?;
    q.req_u32(layered::EMBEDDING_LENGTH_OUT, &["backbone_hidden_size"])?;
    let n = q.block_count()?;
    q.u32(mla::NEXTN_PREDICT_LAYERS, n)
}

/// `Gemma4AssistantConfig.validate_architecture`: no per-layer inputs, experts or
/// double-wide MLP, and every layer sharing the KV cache. transformers raises when it builds
/// such a config, and the reference's tokenizer loading builds it again and lets the error
/// through: the model is refused.
fn validate_architecture(hp: &Hparams) -> Result<(), ConvertError> {
    let problem = |what: String| {
        Err(ConvertError::format(
            &hp.path,
            None,
            format!("{what} (Gemma4AssistantConfig refuses this config)"),
        ))
    };
    let is_zero = |k: &str| hp.get(k).and_then(Json::as_f64) == Some(0.0);
    for k in ["hidden_size_per_layer_input"] {
        if !is_zero(k) {
            return problem(format!("{k} must be 0, got {}", show(hp.get(k))));
        }
    }
    for k in ["enable_moe_block", "use_double_wide_mlp"] {
        if hp.get(k) != Some(&Json::Bool(false)) {
            return problem(format!("{k} must be False, got {}", show(hp.get(k))));
        }
    }
    if !is_zero("vocab_size_per_layer_input") {
        let v = show(hp.get("vocab_size_per_layer_input"));
        return problem(format!("vocab_size_per_layer_input must be 0, got {v}"));
    }
    let shared = hp.get("num_kv_shared_layers");
    let layers = hp.get("num_hidden_layers");
    let equal = match (shared.and_then(Json::as_f64), layers.and_then(Json::as_f64)) {
        (Some(a), Some(b)) => a == b,
        _ => shared == layers,
    };
    if !equal {
        return problem(format!(
            "all layers of a Gemma 4 assistant must share the KV cache: \
             num_kv_shared_layers {} is not num_hidden_layers {}",
            show(shared),
            show(layers)
        ));
    }
    Ok(())
}

/// A config value as a message shows it (absent: None).
fn show(v: Option<&Json>) -> String {
    v.map_or("None".to_string(), Json::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_masked_embedder_is_skipped() {
        assert_eq!(filter("masked_embedding.centroids.weight"), None);
        assert_eq!(filter("masked_embedding.token_ordering"), None);
        assert_eq!(
            filter("model.layers.1.layer_scalar").as_deref(),
            Some("model.layers.1.layer_scalar.weight")
        );
    }
}
