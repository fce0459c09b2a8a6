//! `IQuestCoderForCausalLM` (`LlamaModel`, arch `llama`).
//!
//! The reference converts it as Llama (every rule of [`super::llama::LLAMA`]); only its
//! transformers config class differs: `IQuestCoderConfig`'s defaults (`head_dim` 128 unless
//! given or null, then `hidden_size / num_attention_heads`), and its validation, which makes
//! AutoConfig fail, so that the reference reads config.json as written, when the hidden size
//! is not a multiple of the head count, when `clip_qkv` is set or `use_sliding_window` is true.

use serde_json::{Map, Value as Json};

use super::deepseek2::truthy;
use super::{llama, Arch, HeadDim, ModelType};

/// The IQuest-Coder class: Llama's rules under its own HF name and config class.
pub const IQUESTCODER: Arch = Arch {
    hf_names: &["IQuestCoderForCausalLM"],
    model_types: &[ModelType {
        name: "iquestcoder",
        hf_classes: &["IQuestCoderForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 76800,
            "hidden_size" => 5120,
            "intermediate_size" => 27648,
            "num_hidden_layers" => 80,
            "num_attention_heads" => 40,
            "num_key_value_heads" => 8,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-5,
            "bos_token_id" => 1,
            "eos_token_id" => 2,
            "tie_word_embeddings" => false,
            "rope_theta" => 10000.0,
            "head_dim" => 128,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(validate),
    }],
    composites: &[],
    ..llama::LLAMA
};

/// `IQuestCoderConfig.validate_architecture`: `false` (AutoConfig raises) when the hidden
/// size is not a multiple of the head count (the class defaults standing in for absent
/// keys), when `clip_qkv` is set, or when `use_sliding_window` is true.
fn validate(cfg: &mut Map<String, Json>) -> bool {
    let int = |k: &str, d: u64| match cfg.get(k) {
        None => Some(d),
        Some(v) => v.as_u64(),
    };
    let divides = match (int("hidden_size", 5120), int("num_attention_heads", 40)) {
        (Some(h), Some(n)) => n != 0 && h.is_multiple_of(n),
        _ => true,
    };
    divides
        && cfg.get("clip_qkv").is_none_or(Json::is_null)
        && !truthy(cfg.get("use_sliding_window"))
}

#[cfg(test)]
mod tests {
    use super::validate;
    use serde_json::{json, Map, Value as Json};

    fn cfg(v: Json) -> Map<String, Json> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn autoconfig_refuses_what_the_class_validates() {
        assert!(validate(&mut cfg(json!({}))));
        assert!(validate(&mut cfg(
            json!({"hidden_size": 64, "num_attention_heads": 4})
        )));
        assert!(!validate(&mut cfg(
            json!({"hidden_size": 66, "num_attention_heads": 4})
        )));
        assert!(!validate(&mut cfg(json!({"hidden_size": 5001}))));
        assert!(!validate(&mut cfg(json!({"clip_qkv": 8.0}))));
        assert!(validate(&mut cfg(json!({"clip_qkv": null}))));
        assert!(!validate(&mut cfg(json!({"use_sliding_window": true}))));
    }
}
