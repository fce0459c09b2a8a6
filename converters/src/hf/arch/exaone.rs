//! `ExaoneForCausalLM` (arch `exaone`, `ExaoneModel(TextModel)` in `conversion/exaone.py`).
//!
//! EXAONE 3's remote-code layout (`transformer.h.{bid}.attn.attention.*`, `mlp.c_fc_0` /
//! `c_fc_1` / `c_proj`): the generic hparams, then the rotary dimensions from
//! `partial_rotary_factor` (default 1), and Llama-3 rope factors (default factor 8) when
//! the rope type is `llama3`. The class asserts `activation_function == "silu"`: transformers
//! 5 has an `exaone` config class whose `to_dict()` keeps that key only as `hidden_act`
//! (an attribute alias), so every checkpoint AutoConfig reads is refused by the reference,
//! and here, for the missing key; a config AutoConfig cannot read is converted as written.

use serde_json::{Map, Value as Json};

use super::{keep, llama, Arch, Extra, HeadDim, Hooks, ModelType, Rules};
use crate::hf::config::Hparams;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The EXAONE 3 class.
pub const EXAONE: Arch = Arch {
    hf_names: &["ExaoneForCausalLM"],
    model_types: &[ModelType {
        name: "exaone",
        hf_classes: &["ExaoneForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 102400,
            "hidden_size" => 4096,
            "intermediate_size" => 14336,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 8,
            "hidden_act" => "silu",
            "max_position_embeddings" => 4096,
            "rms_norm_eps" => 1e-5,
            "pad_token_id" => 0,
            "bos_token_id" => 1,
            "eos_token_id" => 361,
            "rope_theta" => 500000.0,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(aliases),
    }],
    composites: &[],
    gguf: "exaone",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules::NONE,
    params,
    extra,
    hooks: Hooks::NONE,
};

/// ExaoneConfig's attribute aliases: `to_dict()` writes each value under the attribute's
/// own name only.
fn aliases(cfg: &mut Map<String, Json>) -> bool {
    for (alias, attr) in [
        ("num_layers", "num_hidden_layers"),
        ("layer_norm_epsilon", "rms_norm_eps"),
        ("activation_function", "hidden_act"),
    ] {
        if let Some(v) = cfg.remove(alias) {
            cfg.insert(attr.into(), v);
        }
    }
    true
}

/// `ExaoneModel.generate_extra_tensors`: Llama-3 rope factors (default factor 8).
fn extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    llama::llama3_rope_freqs(hp, 8.0)
}

/// `ExaoneModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    match hp.get("activation_function") {
        None => return Err(hp.missing(&["activation_function"])),
        Some(Json::String(s)) if s == "silu" => {}
        Some(v) => {
            return Err(ConvertError::UnsupportedFeature {
                arch: hp.arch.clone(),
                feature: format!("activation_function {v}: the class requires \"silu\""),
            })
        }
    }
    let pct = match hp.rope_full().get("partial_rotary_factor") {
        None | Some(Json::Null) => 1.0,
        Some(v) => v.as_f64().ok_or_else(|| ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec!["partial_rotary_factor".into()],
            expected: "a number".into(),
            found: v.to_string(),
        })?,
    };
    p.partial_rope_dims(pct)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::hf::config::from_json;

    /// AutoConfig's view keeps `activation_function` only as `hidden_act`.
    #[test]
    fn exaone_aliases_hide_the_activation_key() {
        let hp = from_json(
            json!({"architectures": ["ExaoneForCausalLM"], "model_type": "exaone",
                "activation_function": "silu", "num_layers": 3, "layer_norm_epsilon": 1e-6}),
            "config.json".into(),
        )
        .unwrap();
        assert!(hp.get("activation_function").is_none());
        assert_eq!(hp.map["hidden_act"], json!("silu"));
        assert_eq!(hp.map["num_hidden_layers"], json!(3));
        assert_eq!(hp.map["rms_norm_eps"], json!(1e-6));
        let raw = from_json(
            json!({"architectures": ["ExaoneForCausalLM"], "activation_function": "silu"}),
            "config.json".into(),
        )
        .unwrap();
        assert_eq!(raw.map["activation_function"], json!("silu"));
    }
}
