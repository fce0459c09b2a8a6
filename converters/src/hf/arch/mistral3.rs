//! `Ministral3ForCausalLM` and the text model of `Mistral3ForConditionalGeneration` (arch
//! `mistral3`, `Mistral3Model` in `conversion/mistral3.py`).
//!
//! A Llama model under another name: Llama's vocabulary path, q/k permutation, hparams and
//! Llama-3 `rope_freqs`. When the (text) config is a Ministral 3 one (`model_type
//! "ministral3"`), its rope must be yarn and two more KVs come from the rope dict:
//! `rope.scaling.yarn_log_multiplier` (`mscale_all_dim`) and `attention.temperature_scale`
//! (`llama_4_scaling_beta`). A Mistral 4 text config (`model_type "mistral4"`, a
//! DeepSeek-V2-style MoE) is a different converter and is refused.

use ggufkit::gguf::keys::extra as keys;
use serde_json::{json, Map, Value as Json};

use super::{llama, Arch, HeadDim, Hooks, ModelType, QkPermute, Rules};
use crate::hf::names::DECODER;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The Mistral 3 class.
pub const MISTRAL3: Arch = Arch {
    hf_names: &["Mistral3ForConditionalGeneration", "Ministral3ForCausalLM"],
    model_types: &[ModelType {
        name: "ministral3",
        hf_classes: &["Ministral3ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 131072,
            "hidden_size" => 4096,
            "intermediate_size" => 14336,
            "num_hidden_layers" => 34,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 8,
            "head_dim" => 128,
            "max_position_embeddings" => 262144,
            "rms_norm_eps" => 1e-5,
            "sliding_window" => Json::Null,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(default_rope),
    }],
    composites: &[],
    gguf: "mistral3",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: llama::filter,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        ..Rules::NONE
    },
    params,
    extra: llama::rope_freqs,
    hooks: Hooks::NONE,
};

/// Ministral3Config's default rope (yarn, factor 16), when the file gives neither
/// `rope_parameters` nor a v4 `rope_scaling`.
fn default_rope(cfg: &mut Map<String, Json>) -> bool {
    let absent = |k: &str| cfg.get(k).is_none_or(Json::is_null);
    if absent("rope_parameters") && absent("rope_scaling") {
        let max_pos = cfg
            .get("max_position_embeddings")
            .cloned()
            .unwrap_or(json!(262144));
        cfg.insert(
            "rope_parameters".into(),
            json!({
                "type": "yarn",
                "rope_type": "yarn",
                "rope_theta": 1000000.0,
                "factor": 16.0,
                "original_max_position_embeddings": 16384,
                "max_position_embeddings": max_pos,
                "beta_fast": 32.0,
                "beta_slow": 1.0,
                "mscale_all_dim": 1.0,
                "mscale": 1.0,
                "llama_4_scaling_beta": 0.1,
            }),
        );
    }
    true
}

fn unsupported(feature: String) -> ConvertError {
    ConvertError::UnsupportedFeature {
        arch: "Mistral3ForConditionalGeneration / Ministral3ForCausalLM".into(),
        feature,
    }
}

/// Llama's hparams, then Ministral 3's yarn extras.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let model_type = p.hp.get("model_type").and_then(Json::as_str);
    if model_type == Some("mistral4") {
        return Err(unsupported(
            "a Mistral 4 text model (model_type \"mistral4\", converted as DeepSeek-V2 MoE) is \
             not supported"
                .into(),
        ));
    }
    let ministral3 = model_type == Some("ministral3");
    llama::params(p)?;
    if !ministral3 {
        return Ok(());
    }
    let hp = p.hp;
    let rope = &hp.rope;
    if rope.is_empty() {
        return Err(unsupported("ministral3 must have 'rope_parameters'".into()));
    }
    if rope.get("rope_type").and_then(Json::as_str) != Some("yarn") {
        return Err(unsupported(format!(
            "ministral3 rope_type must be 'yarn', found {}",
            rope.get("rope_type").unwrap_or(&Json::Null)
        )));
    }
    let num = |k: &str| -> Result<f64, ConvertError> {
        match rope.get(k) {
            Some(v) => v.as_f64().ok_or_else(|| {
                ConvertError::wrong_type(&hp.path, format!("rope_parameters.{k}"), "a number", v)
            }),
            None => Err(hp.missing(&[&format!("rope_parameters.{k}")])),
        }
    };
    let log_mul = num("mscale_all_dim")?;
    let beta = num("llama_4_scaling_beta")?;
    p.f32(keys::ROPE_SCALING_YARN_LOG_MUL, log_mul);
    p.f32(keys::ATTN_TEMPERATURE_SCALE, beta);
    Ok(())
}
