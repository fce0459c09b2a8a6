//! Gemma 4 DSpark drafts (`Gemma4DSparkModel`; arch `dflash`), converted with
//! `--target-model-dir`.
//!
//! A DFlash draft ([`super::dflash`]) whose layers are Gemma 4's full-attention layers:
//! one projection shared by keys and values (`attention_k_eq_v`, required), the
//! `global_head_dim` / `num_global_key_value_heads` sizes, post-attention and
//! pre-/post-feed-forward norms and a per-layer output scalar, GELU (tanh) feed-forward,
//! and "default" or "proportional" rope (Gemma 4's defaults when the config has no
//! `rope_parameters`; a "proportional" rope writes its unrotated dimensions as frequency
//! factors of 1e30 in a generated `rope_freqs`). The class refuses what its runtime does not
//! implement: another layer type, activation, attention bias, MoE, a reduced draft
//! vocabulary, a non-vanilla Markov head, a logit soft cap, a missing output head unless
//! tied, a missing mask token or target layer list, a non-positive sliding window.
//!
//! Beyond DFlash's keys it writes Gemma's (head sizes, `sqrt(hidden_size)` embedding scale,
//! an attention scale of 1, the activation), `sample_from_anchor` (the config's, else true)
//! and `has_confidence_head`; the mask token may be given at the config root.

use ggufkit::gguf::keys::{attention, draft, llm, rope, tokenizer};
use ggufkit::gguf::Value;
use serde_json::{json, Map, Value as Json};

use super::{dflash, dspark, Arch, Entry, Extra, Hooks, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::VocabKind;
use crate::ConvertError;

/// The Gemma 4 DSpark draft (the reference's `Gemma4DSparkModel`, a DFlash subclass).
pub const GEMMA4_DSPARK: Arch = Arch {
    hf_names: &["Gemma4DSparkModel"],
    model_types: &[],
    composites: &[],
    gguf: "dflash",
    // The target class's own path, as DFlash's.
    vocab: VocabKind::Qwen2,
    vocab_quirks: super::dflash::FROM_TARGET_CLASS,
    tensors: &[
        DECODER,
        &[
            Tensor::AttnQNorm,
            Tensor::AttnKNorm,
            Tensor::FfnPostNorm,
            Tensor::LayerOutScale,
        ],
    ],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(hook),
        mtp: Some(whole_list),
        ..Rules::NONE
    },
    params,
    extra,
    hooks: Hooks {
        adjust: Some(adjust),
        vocab_tail: Some(mask_token),
        ..Hooks::NONE
    },
};

/// A Gemma 4 head size above this is refused: one frequency factor is generated per pair.
const MAX_HEAD_DIM: u64 = 1 << 16;

/// A refusal of a configuration the class does not support.
fn unsupported(hp: &Hparams, feature: &str) -> ConvertError {
    ConvertError::UnsupportedFeature {
        arch: hp.arch.clone(),
        feature: format!("Gemma4 DSpark {feature}"),
    }
}

/// `Gemma4DSparkModel.filter_tensors`: the `model.` prefix, `.weight` on the layer
/// scalars, the confidence head's other spelling, then DFlash's.
fn filter(name: &str) -> Option<String> {
    let mut name = if name.starts_with("model.") {
        name.to_string()
    } else {
        format!("model.{name}")
    };
    if name.ends_with(".layer_scalar") {
        name.push_str(".weight");
    }
    let name = name.replace("model.confidence_proj.", "model.confidence_head.proj.");
    dflash::filter(&name)
}

/// Python's truthiness of an optional value (absent: false).
fn truthy(v: Option<&Json>) -> bool {
    v.is_some_and(dflash::truthy)
}

/// `Gemma4DSparkModel.__init__`: the configuration checks and the full-attention rope
/// parameters (Gemma 4's defaults when the config has none), which every later step reads.
fn adjust(hp: &mut Hparams) -> Result<(), ConvertError> {
    if !truthy(hp.get("attention_k_eq_v")) {
        return Err(unsupported(hp, "currently requires attention_k_eq_v"));
    }
    let n = hp.block_count()?;
    let uniform = match hp.get("layer_types").and_then(Json::as_array) {
        Some(types) => types.len() as u64 == n && types.iter().all(|t| t == "full_attention"),
        None => false,
    };
    if !uniform {
        return Err(unsupported(
            hp,
            "currently requires uniform full_attention layer types",
        ));
    }
    let act = hp.get("hidden_activation");
    if act.is_some_and(|a| a != "gelu_pytorch_tanh") {
        return Err(unsupported(
            hp,
            "currently requires hidden_activation=gelu_pytorch_tanh",
        ));
    }
    if truthy(hp.get("attention_bias")) || truthy(hp.get("enable_moe_block")) {
        return Err(unsupported(hp, "attention bias and MoE are not supported"));
    }
    let vocab = hp.req_u64(&["vocab_size"])?;
    let draft_vocab = match hp.get("draft_vocab_size") {
        Some(v) if dflash::truthy(v) => json_u64(v),
        _ => Some(vocab),
    };
    if draft_vocab != Some(vocab) {
        return Err(unsupported(
            hp,
            "currently requires a full draft vocabulary",
        ));
    }
    let cfg = dflash::dflash_config(hp);
    let markov = cfg
        .get("markov_head_type")
        .or_else(|| hp.get("markov_head_type"));
    if markov.is_some_and(|m| m != "vanilla") {
        return Err(unsupported(hp, "currently requires a vanilla Markov head"));
    }
    // A config's own rope parameters as the base class completed them from the root's
    // keys (`hp.rope`), else Gemma 4's defaults.
    let rope = match hp.get("rope_parameters").filter(|r| dflash::truthy(r)) {
        Some(_) => Json::Object(hp.rope.clone()),
        None => json!({"full_attention": {
            "rope_type": "proportional", "partial_rotary_factor": 0.25, "rope_theta": 1000000.0,
        }}),
    };
    let full = rope.get("full_attention").cloned().unwrap_or(rope);
    let Json::Object(full) = full else {
        return Err(ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec!["rope_parameters.full_attention".into()],
            expected: "an object".into(),
            found: full.to_string(),
        });
    };
    let rope_type = full.get("rope_type").and_then(Json::as_str);
    if !matches!(rope_type, Some("default" | "proportional")) {
        return Err(unsupported(hp, "requires default or proportional RoPE"));
    }
    hp.rope = full;
    Ok(())
}

/// The checks on the filtered checkpoint's names: an output head unless tied, and whether
/// it has a confidence head.
fn whole_list(hp: &mut Hparams, entries: Vec<Entry>) -> Result<Vec<Entry>, ConvertError> {
    let has_head = entries.iter().any(|e| e.name == "model.lm_head.weight");
    if !has_head && hp.get("tie_word_embeddings") != Some(&Json::Bool(true)) {
        return Err(unsupported(
            hp,
            "requires lm_head.weight unless tie_word_embeddings is true",
        ));
    }
    dspark::confidence_head(hp, entries)
}

/// `Gemma4DSparkModel.modify_tensors`: the norms DFlash's table gives Qwen's meaning are
/// named as Gemma's (by their GGUF names: the shared table keeps the Qwen meaning of the
/// raw spelling for the other DFlash drafts), then DFlash's rules.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if let Some(bid) = block_id(&name) {
        let tensor = if name.ends_with(".post_attention_layernorm.weight") {
            Some(Tensor::AttnPostNorm)
        } else if name.ends_with(".pre_feedforward_layernorm.weight") {
            Some(Tensor::FfnNorm)
        } else {
            None
        };
        if let Some(t) = tensor {
            let gguf = t.gguf().replace("{bid}", &bid.to_string());
            return Ok(Modified::Named(vec![(format!("{gguf}.weight"), expr)]));
        }
    }
    dflash::hook(hp, name, expr)
}

/// `Gemma4DSparkModel.set_gguf_parameters`: DFlash's keys, then Gemma's sizes and scales,
/// the anchor and confidence-head flags, and the checks on the target layers, the soft cap
/// and the sliding window.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    dflash::params(p)?;
    let hp = p.hp;
    let head_dim = hp.req_u64(&["global_head_dim"])?;
    p.u32(
        attention::HEAD_COUNT_KV,
        hp.req_u64(&["num_global_key_value_heads"])?,
    )?;
    p.u32(attention::KEY_LENGTH, head_dim)?;
    p.u32(attention::VALUE_LENGTH, head_dim)?;
    p.u32(rope::DIMENSION_COUNT, head_dim)?;
    let hidden = hp.req_u64(&["hidden_size"])?;
    p.f32(llm::EMBEDDING_SCALE, (hidden as f64).powf(0.5));
    p.f32(attention::SCALE, 1.0);
    p.string(llm::HIDDEN_ACTIVATION, "gelu_pytorch_tanh");
    let anchor = hp.get("sample_from_anchor").is_none_or(dflash::truthy);
    p.bool(draft::SAMPLE_FROM_ANCHOR, anchor);
    let cfg = dflash::dflash_config(hp);
    let layers = cfg
        .get("target_layer_ids")
        .or_else(|| hp.get("target_layer_ids"));
    if !truthy(layers) {
        return Err(unsupported(hp, "requires target_layer_ids"));
    }
    let confidence = hp.get("has_confidence_head") == Some(&Json::Bool(true));
    p.bool(draft::HAS_CONFIDENCE_HEAD, confidence);
    if truthy(hp.get("final_logit_softcapping")) {
        return Err(unsupported(hp, "logit softcapping is not supported"));
    }
    if truthy(cfg.get("use_swa")) {
        swa_window(hp, &cfg)?;
    }
    Ok(())
}

/// Under `use_swa`, `dflash_config.swa_window_size` must be a positive number.
fn swa_window(hp: &Hparams, cfg: &Map<String, Json>) -> Result<(), ConvertError> {
    let key = "dflash_config.swa_window_size";
    let window = cfg
        .get("swa_window_size")
        .ok_or_else(|| hp.missing(&[key]))?;
    match window.as_f64() {
        Some(w) if w > 0.0 => Ok(()),
        Some(_) => Err(unsupported(hp, "swa_window_size must be positive")),
        None => Err(ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec![key.into()],
            expected: "a number".into(),
            found: window.to_string(),
        }),
    }
}

/// `set_vocab`'s mask token: `dflash_config`'s (written by DFlash's step), else the
/// config root's; one of them is required.
fn mask_token(hp: &Hparams) -> Result<Vec<(String, Value)>, ConvertError> {
    let mut kvs = dflash::mask_token(hp)?;
    let cfg = dflash::dflash_config(hp);
    let in_cfg = cfg.contains_key("mask_token_id");
    let id = if in_cfg {
        cfg.get("mask_token_id")
    } else {
        hp.get("mask_token_id")
    };
    let Some(id) = id.filter(|v| !v.is_null()) else {
        return Err(unsupported(hp, "requires mask_token_id"));
    };
    if !in_cfg {
        let id = json_u64(id)
            .and_then(|x| u32::try_from(x).ok())
            .ok_or_else(|| ConvertError::BadHparam {
                path: hp.path.clone(),
                keys: vec!["mask_token_id".into()],
                expected: "a 32-bit token id".into(),
                found: id.to_string(),
            })?;
        kvs.push((tokenizer::MASK_ID.to_string(), Value::U32(id)));
    }
    Ok(kvs)
}

/// `generate_extra_tensors`: under "proportional" rope, frequency factors of 1 for the
/// `global_head_dim · partial_rotary_factor / 2` rotated pairs and 1e30 for the others of
/// the `global_head_dim / 2`; the rotated dimensions must be a positive even count.
fn extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    if hp.rope.get("rope_type").and_then(Json::as_str) != Some("proportional") {
        return Ok(Extra::default());
    }
    let head_dim = hp.req_u64(&["global_head_dim"])?;
    if head_dim > MAX_HEAD_DIM {
        return Err(ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec!["global_head_dim".into()],
            expected: format!("at most {MAX_HEAD_DIM}"),
            found: head_dim.to_string(),
        });
    }
    let fraction = match hp.rope.get("partial_rotary_factor") {
        None => 0.25,
        Some(Json::Bool(b)) => f64::from(u8::from(*b)),
        Some(v) => v
            .as_f64()
            .ok_or_else(|| unsupported(hp, "partial_rotary_factor must be numeric"))?,
    };
    let rotated = head_dim as f64 * fraction;
    let n_rot = (rotated / 2.0) as i64;
    if !(fraction > 0.0 && fraction <= 1.0) || rotated != 2.0 * n_rot as f64 {
        return Err(unsupported(
            hp,
            "rotary dimension count must be positive and even",
        ));
    }
    let n_rot = n_rot as usize;
    let half = (head_dim / 2) as usize;
    let mut values = vec![1.0f32; n_rot];
    values.resize(half.max(n_rot), 1e30_f64 as f32);
    let n = values.len() as u64;
    Ok(Extra {
        tensors: vec![("rope_freqs.weight".into(), Expr::constant(values, vec![n]))],
        early_kvs: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hparams(extra: Json) -> Hparams {
        let mut cfg = json!({
            "architectures": ["Gemma4DSparkModel"], "attention_k_eq_v": true,
            "num_hidden_layers": 2, "layer_types": ["full_attention", "full_attention"],
            "vocab_size": 10, "global_head_dim": 32,
        });
        for (k, v) in extra.as_object().unwrap() {
            cfg[k] = v.clone();
        }
        crate::hf::config::from_json(cfg, "config.json".into()).unwrap()
    }

    #[test]
    fn the_default_rope_is_proportional_with_a_quarter_rotated() {
        let mut hp = hparams(json!({}));
        adjust(&mut hp).unwrap();
        let extra = extra(&hp).unwrap();
        let (name, expr) = &extra.tensors[0];
        assert_eq!(name, "rope_freqs.weight");
        assert_eq!(expr.shape(), &[16]);
    }

    #[test]
    fn unsupported_configurations_are_refused() {
        for cfg in [
            json!({"attention_k_eq_v": false}),
            json!({"layer_types": ["full_attention", "sliding_attention"]}),
            json!({"hidden_activation": "silu"}),
            json!({"enable_moe_block": true}),
            json!({"draft_vocab_size": 5}),
            json!({"markov_head_type": "gated"}),
            json!({"rope_parameters": {"rope_type": "yarn"}}),
        ] {
            let mut hp = hparams(cfg.clone());
            assert!(
                matches!(
                    adjust(&mut hp),
                    Err(ConvertError::UnsupportedFeature { .. })
                ),
                "{cfg}"
            );
        }
    }

    #[test]
    fn an_odd_rotated_count_is_refused() {
        let mut hp = hparams(json!({"rope_parameters": {"full_attention": {
            "rope_type": "proportional", "partial_rotary_factor": 0.1}}}));
        adjust(&mut hp).unwrap();
        assert!(matches!(
            extra(&hp),
            Err(ConvertError::UnsupportedFeature { .. })
        ));
    }
}
