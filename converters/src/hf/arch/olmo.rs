//! OLMo, OLMo 2 / OLMo 3 and OLMoE (`conversion/olmo.py`).
//!
//! OLMo (arch `olmo`) has non-parametric layer norms: no norm tensors, a fixed
//! `layer_norm_epsilon` of 1e-5, an optional `clamp_kqv`, and Llama's rotary permutation of
//! the q/k weights (not biases). OLMo 2 (`olmo2`) puts its norms after attention and FFN,
//! adds q/k norms and, for OLMo 3, a sliding-window layout. OLMoE (`olmoe`) stacks
//! per-expert `down/gate/up_proj` like Qwen-MoE and fixes the RMS epsilon at 1e-5.

use super::qwen::QWEN_EXPERTS;
use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, QkPermute, Rules};
use crate::hf::names::{Tensor, MOE_DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;
use ggufkit::gguf::keys::attention;
use serde_json::{json, Map, Value as Json};

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
    hooks: Hooks::NONE,
};

/// `Olmo2ForCausalLM` and `Olmo3ForCausalLM` (arch `olmo2`): OLMo 3 adds a sliding-window
/// layout and a per-layer-type rope dict (its full-attention theta is `rope.freq_base`, its
/// sliding one `rope.freq_base_swa`).
pub const OLMO2: Arch = Arch {
    hf_names: &["Olmo2ForCausalLM", "Olmo3ForCausalLM"],
    model_types: &[
        ModelType {
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
        },
        ModelType {
            name: "olmo3",
            hf_classes: &["Olmo3ForCausalLM"],
            defaults: defaults! {
                "vocab_size" => 50304,
                "hidden_size" => 4096,
                "intermediate_size" => 11008,
                "num_hidden_layers" => 32,
                "num_attention_heads" => 32,
                "max_position_embeddings" => 2048,
                "rms_norm_eps" => 1e-5,
                "sliding_window" => 4096,
            },
            head_dim: HeadDim::Keep,
            kv_heads_key: Some("num_key_value_heads"),
            prepare: Some(olmo3_prepare),
        },
    ],
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
    hooks: Hooks::NONE,
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
        prepare: Some(super::num_local_experts_alias),
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
    hooks: Hooks::NONE,
};

/// Olmo3Config's `__post_init__`: the default layer types (every fourth layer global) and
/// the per-layer-type rope dict. A v4 `rope_theta` goes to the full-attention dict only (the
/// sliding one gets the class default 500000), `rope_scaling` is merged into the
/// full-attention dict, and each dict is standardized (type, partial rotary factor, the
/// original context of scaled types). `false` when transformers would raise.
fn olmo3_prepare(cfg: &mut Map<String, Json>) -> bool {
    const DEFAULT_THETA: f64 = 500000.0;
    if cfg.get("layer_types").is_none_or(Json::is_null) {
        let Some(n) = cfg
            .get("num_hidden_layers")
            .map_or(Some(32), crate::hf::config::json_u64)
        else {
            return false;
        };
        let types: Vec<Json> = (0..n.min(crate::hf::config::MAX_BLOCK_COUNT))
            .map(|i| {
                json!(if (i + 1) % 4 != 0 {
                    "sliding_attention"
                } else {
                    "full_attention"
                })
            })
            .collect();
        cfg.insert("layer_types".into(), Json::Array(types));
    }
    let rope_scaling = cfg.remove("rope_scaling");
    let file_theta = cfg.remove("rope_theta");
    let mut rp = match cfg.get("rope_parameters") {
        Some(Json::Object(m)) => m.clone(),
        None | Some(Json::Null) => {
            let mut m = Map::new();
            m.insert("sliding_attention".into(), json!({"rope_type": "default"}));
            m.insert("full_attention".into(), json!({"rope_type": "default"}));
            m
        }
        Some(_) => return false,
    };
    match rope_scaling {
        None | Some(Json::Null) => {}
        Some(Json::Object(rs)) => match rp.get_mut("full_attention") {
            Some(Json::Object(full)) => full.extend(rs),
            _ => return false,
        },
        Some(_) => return false,
    }
    let theta = file_theta.unwrap_or(json!(DEFAULT_THETA));
    for (key, theta) in [
        ("full_attention", theta),
        ("sliding_attention", json!(DEFAULT_THETA)),
    ] {
        let d = rp.entry(key).or_insert(Json::Null);
        if d.is_null() {
            *d = json!({"rope_type": "default"});
        }
        let Json::Object(d) = d else { return false };
        d.entry("rope_theta").or_insert(theta);
    }
    let partial = cfg.get("partial_rotary_factor").cloned();
    let max_pos = cfg
        .get("max_position_embeddings")
        .cloned()
        .unwrap_or(json!(2048));
    for d in rp.values_mut() {
        let Json::Object(d) = d else { continue };
        let ty = d.get("type").cloned().unwrap_or(json!("default"));
        let ty = d.entry("rope_type").or_insert(ty).clone();
        if let Some(p) = partial.clone().filter(|p| !p.is_null()) {
            d.entry("partial_rotary_factor").or_insert(p);
        }
        if matches!(ty.as_str(), Some("llama3" | "yarn" | "longrope")) {
            d.entry("original_max_position_embeddings")
                .or_insert(max_pos.clone());
        }
    }
    cfg.insert("rope_parameters".into(), Json::Object(rp));
    true
}

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
    let sw = crate::hf::config::json_u64(&sw)
        .ok_or_else(|| ConvertError::wrong_type(&p.hp.path, "sliding_window", "an integer", sw))?;
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::hf::config::from_json;

    /// Olmo3Config: default layer types, a v4 `rope_theta` for the global layers only.
    #[test]
    fn olmo3_config_defaults() {
        let hp = from_json(
            json!({"architectures": ["Olmo3ForCausalLM"], "model_type": "olmo3",
                "num_hidden_layers": 5, "rope_theta": 1234.0}),
            "config.json".into(),
        )
        .unwrap();
        let types: Vec<&str> = hp.map["layer_types"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert_eq!(types[3], "full_attention");
        assert_eq!(types.iter().filter(|t| **t == "full_attention").count(), 1);
        assert_eq!(hp.rope["full_attention"]["rope_theta"], json!(1234.0));
        assert_eq!(hp.rope["sliding_attention"]["rope_theta"], json!(500000.0));
        assert_eq!(hp.map["sliding_window"], json!(4096));
    }
}
