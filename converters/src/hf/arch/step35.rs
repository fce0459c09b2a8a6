//! `Step3p5ForCausalLM` (arch `step35`, `Step35Model` in `conversion/step3.py`): StepFun's
//! Step 3.5 text model.
//!
//! Full and sliding-window attention layers by `layer_types`, the sliding ones with their own
//! head and KV head counts (`attention_other_setting`), both written per block; partial rope
//! on the full layers only (`partial_rotary_factors` must be 0.5 there and 1.0 on the sliding
//! ones, as the reference asserts); `rope_theta` may be a list (the full layers' base, then
//! the sliding layers'). A head-wise attention gate (`g_proj`), q/k norms, and zero-centred
//! norms (every `*norm.weight` gets 1 added). Dense blocks before the first layer of
//! `moe_layers_enum`, then routed experts stored already stacked (`moe.{gate,up,down}_proj`)
//! with the router's selection bias and a shared expert; optional per-layer SwiGLU clamps of
//! both. A Llama 3 rope (`rope_type: "llama3"`) adds `rope_freqs`, sized for the full layers'
//! rotary width and padded with ones to half the head width.
//!
//! The checkpoint appends its `num_nextn_predict_layers` next-token-prediction layers as
//! blocks `num_hidden_layers + i` (their shared head under `transformer.shared_head`), counted
//! in the block count and the per-layer lists (padded as full-attention layers without
//! clamps), unless `--no-mtp`; `--mtp` keeps them with the embedding, the final norm and the
//! head. GPT-2 BPE vocabulary.
//!
//! The reference reads the hub's hparam spellings (`num_attention_groups`, `moe_num_experts`,
//! `moe_top_k`) from config.json as written. transformers 5 registers `model_type: "step3p5"`
//! (its Step 3.7 text config), whose dict stores them under other names, so a config naming
//! that type is refused as the reference fails on it; so is one whose `layer_types` the
//! tokenizer loader's generic config rejects. `Step3p7ForConditionalGeneration`'s text half is
//! this class, read from its `text_config`: under the composite `model_type: "step3p7"` the
//! text config is that same transformers class, so it is refused the same way; a config
//! without a `model_type` converts.

use ggufkit::gguf::keys::{attention, compressed, llm, mla};
use serde_json::{Map, Value as Json};

use super::{glm4moe, Arch, Extra, Hooks, ModelType, Modified, MtpExport, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::hf::torch_math::torch_pow_f32;
use crate::hf::Mtp;
use crate::ConvertError;

/// gguf-py's `step35` tensor list.
const STEP35_TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::OutputNorm,
    Tensor::Output,
    Tensor::AttnNorm,
    Tensor::AttnQkv,
    Tensor::AttnQ,
    Tensor::AttnQNorm,
    Tensor::AttnK,
    Tensor::AttnKNorm,
    Tensor::AttnV,
    Tensor::AttnGate,
    Tensor::AttnOut,
    Tensor::FfnNorm,
    Tensor::FfnGate,
    Tensor::FfnDown,
    Tensor::FfnUp,
    Tensor::FfnGateInp,
    Tensor::FfnGateExp,
    Tensor::FfnDownExp,
    Tensor::FfnUpExp,
    Tensor::FfnUpShexp,
    Tensor::FfnGateShexp,
    Tensor::FfnDownShexp,
    Tensor::FfnExpProbsB,
    Tensor::NextnEhProj,
    Tensor::NextnEmbedTokens,
    Tensor::NextnEnorm,
    Tensor::NextnHnorm,
    Tensor::NextnSharedHeadHead,
    Tensor::NextnSharedHeadNorm,
];

/// Step 3.5.
pub const STEP35: Arch = Arch {
    // Step 3.7's text model is this class too (its tower and projector are dropped).
    hf_names: &["Step3p5ForCausalLM", "Step3p7ForConditionalGeneration"],
    model_types: &[ModelType {
        name: "step3p5",
        hf_classes: &["Step3p5ForCausalLM"],
        defaults: &[],
        head_dim: super::HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(attribute_map),
    }],
    // transformers' Step3p7Config builds its text config as the `step3p5` class, whose dict
    // the reference then reads without `num_attention_groups`.
    composites: &[("step3p7", super::TextType::Fixed("step3p5"))],
    gguf: "step35",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[STEP35_TENSORS],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        norm_shift: true,
        nextn_blocks: true,
        rename: Some(rename_mtp),
        hook: Some(squeeze),
        mtp_export: Some(MtpExport {
            raw_names: false,
            is_mtp: glm4moe::is_past_main_layers,
            shared: glm4moe::GLM_MTP_SHARED,
        }),
        ..Rules::NONE
    },
    params,
    extra: rope_freqs,
    hooks: Hooks {
        adjust: Some(rope_theta_list),
        ..Hooks::NONE
    },
};

/// transformers 5's config class for `model_type: "step3p5"` (`Step3p7TextConfig`) stores the
/// hub's spellings under its `attribute_map` names, which its dict shows instead; the
/// reference then finds no `num_attention_groups` and fails.
pub(super) fn attribute_map(cfg: &mut Map<String, Json>) -> bool {
    for (alias, attr) in [
        ("num_local_experts", "n_routed_experts"),
        ("num_attention_groups", "num_key_value_heads"),
        ("moe_num_experts", "n_routed_experts"),
        ("moe_top_k", "num_experts_per_tok"),
        ("share_expert_dims", "share_expert_dim"),
        ("num_mtp_layers", "num_nextn_predict_layers"),
    ] {
        if let Some(v) = cfg.remove(alias) {
            cfg.insert(attr.into(), v);
        }
    }
    true
}

/// `Step35Model.filter_tensors`' first rename: the router's selection bias gets a `.bias`
/// suffix.
fn filter(name: &str) -> Option<String> {
    if name.ends_with(".moe.router_bias") {
        return Some(format!("{name}.bias"));
    }
    Some(name.to_string())
}

/// `Step35Model.filter_tensors`' rename of a next-token-prediction layer's shared head:
/// `transformer.` is dropped and `shared_head.output` becomes `shared_head.head`.
fn rename_mtp(hp: &Hparams, name: &str) -> String {
    if !glm4moe::is_past_main_layers(hp, name).unwrap_or(false) {
        return name.to_string();
    }
    name.replace(".transformer.", ".")
        .replace("shared_head.output", "shared_head.head")
}

/// The tensors `Step35Model.modify_tensors` squeezes (every dimension of size 1 removed).
const SQUEEZED: &[&str] = &[
    ".self_attn.g_proj.weight",
    ".moe.gate.weight",
    ".moe.up_proj.weight",
    ".moe.gate_proj.weight",
    ".moe.down_proj.weight",
];

/// `Step35Model.modify_tensors`' squeeze of the gate and expert tensors (the norm shift is
/// the shared rule).
fn squeeze(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if SQUEEZED.iter().any(|s| name.ends_with(s)) {
        let expr = expr.squeeze(&name)?;
        return Ok(Modified::Pass(name, expr));
    }
    Ok(Modified::Pass(name, expr))
}

/// The start of `Step35Model.set_gguf_parameters`: a list `rope_theta` is the full layers'
/// base then the sliding layers' (`local_rope_theta`), mirrored into the rope dict.
fn rope_theta_list(hp: &mut Hparams) -> Result<(), ConvertError> {
    let Some(Json::Array(list)) = hp.get("rope_theta").cloned() else {
        return Ok(());
    };
    let num = |i: usize| -> Result<f64, ConvertError> {
        match list.get(i) {
            Some(v) => v.as_f64().ok_or_else(|| {
                ConvertError::wrong_type(&hp.path, "rope_theta", "a list of numbers", v)
            }),
            None => Err(ConvertError::out_of_range(
                &hp.path,
                "rope_theta",
                Json::Array(list.clone()),
                "a list of at least two values (full, then sliding layers)",
            )),
        }
    };
    let (full, local) = (num(0)?, num(1)?);
    hp.map.insert("rope_theta".into(), Json::from(full));
    hp.map.insert("local_rope_theta".into(), Json::from(local));
    hp.rope.insert("rope_theta".into(), Json::from(full));
    hp.rope.insert(
        "sliding_attention".into(),
        serde_json::json!({ "rope_theta": local }),
    );
    Ok(())
}

/// The next-token-prediction layers counted: none under `--no-mtp`.
fn nextn_layers(hp: &Hparams) -> Result<u64, ConvertError> {
    if hp.mtp == Mtp::Drop {
        return Ok(0);
    }
    Ok(hp.find_u64(&["num_nextn_predict_layers"])?.unwrap_or(0))
}

/// `_pad`: a per-layer list cut or padded to the block count.
fn pad<T: Clone>(mut v: Vec<T>, n: usize, default: T) -> Vec<T> {
    v.resize(n, default);
    v
}

/// A list hparam (absent, null or empty: no entries).
fn list<'a>(hp: &'a Hparams, key: &str) -> Result<&'a [Json], ConvertError> {
    match hp.get(key) {
        None | Some(Json::Null) => Ok(&[]),
        Some(Json::Array(a)) => Ok(a),
        Some(v) => Err(ConvertError::wrong_type(&hp.path, key, "a list", v)),
    }
}

/// `layer_types` padded with full attention to the block count: `true` for a sliding layer.
fn sliding_layers(hp: &Hparams, n: usize) -> Result<Vec<bool>, ConvertError> {
    let kinds = list(hp, "layer_types")?;
    let sliding = kinds
        .iter()
        .take(n)
        .map(|v| {
            v.as_str()
                .map(|s| s == "sliding_attention")
                .ok_or_else(|| ConvertError::wrong_type(&hp.path, "layer_types", "strings", v))
        })
        .collect::<Result<Vec<bool>, ConvertError>>()?;
    Ok(pad(sliding, n, false))
}

/// The reference's assert: `partial_rotary_factors` (padded with 0.5) is 1.0 on the sliding
/// layers and 0.5 on the others.
fn check_rotary_factors(hp: &Hparams, sliding: &[bool]) -> Result<(), ConvertError> {
    let given = list(hp, "partial_rotary_factors")?;
    let factors = given
        .iter()
        .take(sliding.len())
        .map(|v| {
            v.as_f64().ok_or_else(|| {
                ConvertError::wrong_type(&hp.path, "partial_rotary_factors", "numbers", v)
            })
        })
        .collect::<Result<Vec<f64>, ConvertError>>()?;
    let factors = pad(factors, sliding.len(), 0.5);
    let expected = sliding.iter().map(|s| if *s { 1.0 } else { 0.5 });
    if factors.iter().copied().eq(expected) {
        return Ok(());
    }
    Err(ConvertError::out_of_range(
        &hp.path,
        "partial_rotary_factors",
        Json::Array(given.to_vec()),
        "1.0 on the sliding_attention layers and 0.5 on the others (padded with 0.5 to the \
         block count), as the reference asserts",
    ))
}

/// A head count as an INT32 array value.
fn head_count(hp: &Hparams, key: &str, v: &Json) -> Result<i32, ConvertError> {
    json_u64(v)
        .and_then(|n| i32::try_from(n).ok())
        .ok_or_else(|| ConvertError::wrong_type(&hp.path, key, "a head count (INT32)", v))
}

/// The per-block head and KV head counts (the sliding layers' from `attention_other_setting`).
fn head_counts(hp: &Hparams, sliding: &[bool]) -> Result<(Vec<i32>, Vec<i32>), ConvertError> {
    let base = hp
        .get("num_attention_heads")
        .ok_or_else(|| hp.missing(&["num_attention_heads"]))?;
    let kv_base = hp
        .get("num_attention_groups")
        .ok_or_else(|| hp.missing(&["num_attention_groups"]))?;
    let other = match hp.get("attention_other_setting") {
        None | Some(Json::Null) => Map::new(),
        Some(Json::Object(m)) => m.clone(),
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &hp.path,
                "attention_other_setting",
                "an object",
                v,
            ))
        }
    };
    let swa = other.get("num_attention_heads").unwrap_or(base);
    let kv_swa = other.get("num_attention_groups").unwrap_or(kv_base);
    let (h, hs) = (
        head_count(hp, "num_attention_heads", base)?,
        head_count(hp, "attention_other_setting.num_attention_heads", swa)?,
    );
    let (k, ks) = (
        head_count(hp, "num_attention_groups", kv_base)?,
        head_count(hp, "attention_other_setting.num_attention_groups", kv_swa)?,
    );
    let heads = sliding.iter().map(|s| if *s { hs } else { h }).collect();
    let kv = sliding.iter().map(|s| if *s { ks } else { k }).collect();
    Ok((heads, kv))
}

/// The dense blocks before the first routed-expert layer of `moe_layers_enum` (a
/// comma-separated string; any other value: none).
fn leading_dense(hp: &Hparams) -> Result<u64, ConvertError> {
    let Some(Json::String(s)) = hp.get("moe_layers_enum") else {
        return Ok(0);
    };
    if s.trim().is_empty() {
        return Ok(0);
    }
    let layers = s
        .trim()
        .split(',')
        .map(|i| i.trim().parse::<i64>())
        .collect::<Result<Vec<i64>, _>>()
        .map_err(|_| {
            ConvertError::wrong_type(
                &hp.path,
                "moe_layers_enum",
                "comma-separated layer numbers",
                Json::String(s.clone()),
            )
        })?;
    Ok(layers.into_iter().min().map_or(0, |m| m.max(0) as u64))
}

/// An optional per-layer clamp list: nulls are 0, padded with 0 to the block count.
fn clamps(hp: &Hparams, key: &str, n: usize) -> Result<Option<Vec<f32>>, ConvertError> {
    let Some(Json::Array(a)) = hp.get(key) else {
        return match hp.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(v) => Err(ConvertError::wrong_type(&hp.path, key, "a list", v)),
        };
    };
    let values = a
        .iter()
        .map(|v| match v {
            Json::Null => Ok(0.0),
            v => v
                .as_f64()
                .map(|f| f as f32)
                .ok_or_else(|| ConvertError::wrong_type(&hp.path, key, "numbers or nulls", v)),
        })
        .collect::<Result<Vec<f32>, ConvertError>>()?;
    Ok(Some(pad(values, n, 0.0)))
}

/// `Step35Model.set_gguf_parameters` (after the list `rope_theta`, see [`rope_theta_list`]).
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    crate::hf::generic_config::check_layer_lists(hp)?;
    p.generic()?;
    let n = usize::try_from(p.block_count()?).unwrap_or(usize::MAX);
    let sliding = sliding_layers(hp, n)?;
    check_rotary_factors(hp, &sliding)?;
    let (heads, kv) = head_counts(hp, &sliding)?;
    p.i32s(attention::HEAD_COUNT, heads);
    p.i32s(attention::HEAD_COUNT_KV, kv);
    p.req_u32(attention::SLIDING_WINDOW, &["sliding_window"])?;
    p.bools(attention::SLIDING_WINDOW_PATTERN, sliding);
    p.req_u32(attention::VALUE_LENGTH, &["head_dim"])?;
    p.req_u32(llm::EXPERT_COUNT, &["moe_num_experts"])?;
    p.req_u32(llm::EXPERT_USED_COUNT, &["moe_top_k"])?;
    p.req_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["moe_intermediate_size"])?;
    p.req_u32(
        llm::EXPERT_SHARED_FEED_FORWARD_LENGTH,
        &["share_expert_dim"],
    )?;
    p.opt_f32(mla::EXPERT_WEIGHTS_SCALE, &["moe_router_scaling_factor"])?;
    if let Some(b) = hp.find_bool(&["norm_expert_weight"])? {
        p.bool(mla::EXPERT_WEIGHTS_NORM, b);
    }
    p.u32(llm::LEADING_DENSE_BLOCK_COUNT, leading_dense(hp)?)?;
    let every = match hp.get("moe_every_n_layer") {
        None => 1,
        Some(v) => v
            .as_f64()
            .filter(|f| (0.0..4294967296.0).contains(&f.trunc()))
            .map(|f| f.trunc() as u64)
            .ok_or_else(|| {
                ConvertError::wrong_type(&hp.path, "moe_every_n_layer", "a layer count", v)
            })?,
    };
    p.u32(llm::MOE_EVERY_N_LAYERS, every)?;
    let eps = match hp.get("rms_norm_eps") {
        None => 1e-5,
        Some(v) => v
            .as_f64()
            .ok_or_else(|| ConvertError::wrong_type(&hp.path, "rms_norm_eps", "a number", v))?,
    };
    p.f32(attention::LAYERNORM_RMS_EPS, eps);
    if let Some(v) = clamps(hp, "swiglu_limits", n)? {
        p.f32s(llm::SWIGLU_CLAMP_EXP, v);
    }
    if let Some(v) = clamps(hp, "swiglu_limits_shared", n)? {
        p.f32s(compressed::SWIGLU_CLAMP_SHEXP, v);
    }
    let nextn = nextn_layers(hp)?;
    if nextn > 0 {
        p.u32(mla::NEXTN_PREDICT_LAYERS, nextn)?;
    }
    Ok(())
}

/// Largest rotary width a rope table is built for (real head sizes are ≤ 512).
const MAX_ROPE_DIM: u64 = 1 << 16;

/// `Step35Model.generate_extra_tensors`: with a Llama 3 rope (on the full layers), one factor
/// per rotary pair of the full layers, then ones to half the head width.
fn rope_freqs(hp: &Hparams) -> Result<Extra, ConvertError> {
    let rp = hp.rope_full();
    let is_llama3 = rp
        .get("rope_type")
        .and_then(Json::as_str)
        .is_some_and(|t| t.eq_ignore_ascii_case("llama3"));
    if !is_llama3 {
        return Ok(Extra::default());
    }
    let base = match hp.get("rope_theta") {
        None => Some(10000.0),
        Some(Json::Array(a)) => a.first().and_then(Json::as_f64),
        Some(v) => v.as_f64(),
    }
    .ok_or_else(|| hp.missing(&["rope_theta"]))?;
    let storage = match hp.get("head_dim").filter(|v| !v.is_null()) {
        Some(_) => hp.req_u64(&["head_dim"])?,
        None => {
            let heads = hp.req_u64(&["num_attention_heads"])?;
            hp.req_u64(&["hidden_size"])?
                .checked_div(heads)
                .ok_or_else(|| hp.missing(&["num_attention_heads"]))?
        }
    };
    if storage > MAX_ROPE_DIM {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "head_dim",
            storage,
            format!("at most {MAX_ROPE_DIM}"),
        ));
    }
    let factor = full_layer_factor(hp)?;
    let rotary = (storage as f64 * factor).trunc().max(0.0);
    if rotary > MAX_ROPE_DIM as f64 {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "head_dim * partial_rotary_factors",
            rotary,
            format!("at most {MAX_ROPE_DIM}"),
        ));
    }
    let rotary = rotary as u64;
    let num = |k: &str, d: f64| rp.get(k).and_then(Json::as_f64).unwrap_or(d);
    let mut values = llama3_factors_f64(
        base,
        rotary,
        num("factor", 8.0),
        num("low_freq_factor", 1.0),
        num("high_freq_factor", 4.0),
        num("original_max_position_embeddings", 8192.0).trunc(),
    );
    let half = (storage / 2) as usize;
    if values.len() < half {
        values.resize(half, 1.0);
    }
    let n = values.len() as u64;
    Ok(Extra {
        tensors: vec![("rope_freqs.weight".into(), Expr::constant(values, vec![n]))],
        early_kvs: Vec::new(),
    })
}

/// The rotary factor of the first full-attention layer (within the block count); the
/// reference fails without one.
fn full_layer_factor(hp: &Hparams) -> Result<f64, ConvertError> {
    let n = usize::try_from(hp.block_count()?).unwrap_or(usize::MAX);
    let kinds = list(hp, "layer_types")?;
    let factors = list(hp, "partial_rotary_factors")?;
    let found = kinds
        .iter()
        .take(n)
        .zip(factors.iter().take(n))
        .find(|(k, _)| k.as_str() == Some("full_attention"));
    match found {
        Some((_, f)) => f.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "partial_rotary_factors", "numbers", f)
        }),
        None => Err(ConvertError::UnsupportedFeature {
            arch: hp.arch.clone(),
            feature: "rope_type \"llama3\" without a full_attention layer in layer_types and \
                      partial_rotary_factors (the reference fails on it)"
                .into(),
        }),
    }
}

/// Llama 3's rope factors as this class computes them: the frequencies with torch in f32
/// (`1 / base ** (arange(0, dim, 2) / dim)`), then each factor in Python floats from the f32
/// frequency, stored as f32.
fn llama3_factors_f64(base: f64, dim: u64, factor: f64, low: f64, high: f64, ctx: f64) -> Vec<f32> {
    if dim == 0 {
        return Vec::new();
    }
    let exponents: Vec<f32> = (0..dim).step_by(2).map(|k| k as f32 / dim as f32).collect();
    let (low_wl, high_wl) = (ctx / low, ctx / high);
    torch_pow_f32(base as f32, &exponents)
        .into_iter()
        .map(|p| {
            let freq = f64::from(1.0f32 / p);
            let wavelen = 2.0 * std::f64::consts::PI / freq;
            let f = if wavelen < high_wl {
                1.0
            } else if wavelen > low_wl {
                factor
            } else {
                let smooth = (ctx / wavelen - low) / (high - low);
                1.0 / ((1.0 - smooth) / factor + smooth)
            };
            f as f32
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;

    fn hp(cfg: Json) -> Hparams {
        crate::hf::config::from_json(cfg, PathBuf::from("config.json")).unwrap()
    }

    #[test]
    fn mtp_shared_heads_are_renamed() {
        let h = hp(json!({"architectures": ["Step3p5ForCausalLM"], "num_hidden_layers": 3}));
        assert_eq!(
            rename_mtp(&h, "model.layers.3.transformer.shared_head.output.weight"),
            "model.layers.3.shared_head.head.weight"
        );
        assert_eq!(
            rename_mtp(&h, "model.layers.2.transformer.shared_head.output.weight"),
            "model.layers.2.transformer.shared_head.output.weight"
        );
        assert_eq!(
            filter("model.layers.1.moe.router_bias").unwrap(),
            "model.layers.1.moe.router_bias.bias"
        );
    }

    #[test]
    fn the_rope_theta_list_is_full_then_sliding() {
        let mut h = hp(json!({"architectures": ["Step3p5ForCausalLM"],
                              "rope_theta": [5e6, 1e4, 1e4]}));
        rope_theta_list(&mut h).unwrap();
        assert_eq!(h.get("rope_theta"), Some(&json!(5e6)));
        assert_eq!(h.rope["sliding_attention"], json!({"rope_theta": 1e4}));
        let mut short = hp(json!({"architectures": ["Step3p5ForCausalLM"], "rope_theta": [1.0]}));
        assert!(matches!(
            rope_theta_list(&mut short),
            Err(ConvertError::OutOfRange { .. })
        ));
    }

    #[test]
    fn rotary_factors_must_follow_the_layer_kinds() {
        let h = hp(json!({"architectures": ["Step3p5ForCausalLM"],
                          "layer_types": ["full_attention", "sliding_attention"],
                          "partial_rotary_factors": [0.5, 0.5]}));
        let sliding = sliding_layers(&h, 3).unwrap();
        assert_eq!(sliding, [false, true, false]);
        assert!(matches!(
            check_rotary_factors(&h, &sliding),
            Err(ConvertError::OutOfRange { .. })
        ));
    }

    #[test]
    fn the_config_class_spellings_are_refused() {
        let h = hp(
            json!({"architectures": ["Step3p5ForCausalLM"], "model_type": "step3p5",
                          "num_attention_heads": 2, "num_attention_groups": 1,
                          "moe_num_experts": 4}),
        );
        assert_eq!(h.get("n_routed_experts"), Some(&json!(4)));
        assert!(matches!(
            head_counts(&h, &[false]),
            Err(ConvertError::MissingHparam { .. })
        ));
    }

    #[test]
    fn layer_lists_the_generic_config_rejects_are_refused() {
        let h = hp(
            json!({"architectures": ["Step3p5ForCausalLM"], "num_hidden_layers": 2,
                          "layer_types": ["full_attention", "sliding_attention",
                                          "full_attention"]}),
        );
        assert!(matches!(
            crate::hf::generic_config::check_layer_lists(&h),
            Err(ConvertError::OutOfRange { .. })
        ));
        let ok = hp(
            json!({"architectures": ["Step3p5ForCausalLM"], "num_hidden_layers": 2,
                           "layer_types": ["full_attention", "sliding_attention"]}),
        );
        assert!(crate::hf::generic_config::check_layer_lists(&ok).is_ok());
    }

    #[test]
    fn leading_dense_blocks_come_from_the_first_moe_layer() {
        let h = hp(json!({"architectures": ["Step3p5ForCausalLM"], "moe_layers_enum": " 4, 3,5"}));
        assert_eq!(leading_dense(&h).unwrap(), 3);
        let bad = hp(json!({"architectures": ["Step3p5ForCausalLM"], "moe_layers_enum": "1,,2"}));
        assert!(leading_dense(&bad).is_err());
        let list = hp(json!({"architectures": ["Step3p5ForCausalLM"], "moe_layers_enum": [3]}));
        assert_eq!(leading_dense(&list).unwrap(), 0);
    }

    #[test]
    fn llama3_factors_pad_to_half_the_head() {
        let v = llama3_factors_f64(10000.0, 4, 8.0, 1.0, 4.0, 8192.0);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0], 1.0);
    }
}
