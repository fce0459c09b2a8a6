//! Gemma 4 (`Gemma4Model` of `conversion/gemma.py`, a `Gemma3Model` subclass): the text
//! model of `Gemma4ForConditionalGeneration` (its vision and audio towers are filtered out,
//! as every text model filters them) and `Gemma4ForCausalLM`.
//!
//! What it changes from Gemma 3:
//! * no norm shift (Gemma 4's RMSNorm multiplies by `w`); `embed_tokens` is still cut to the
//!   real vocabulary (the per-layer embedding is not);
//! * its own vocabulary: tokenizer.json's byte-fallback BPE read as `LlamaHfVocab` reads it,
//!   written as tokenizer model `gemma4` with the merges; the chat parser's tokens
//!   ([`VISIBLE_TOKENS`]) are USER_DEFINED so that they are always rendered; BOS is added
//!   and no space prefix;
//! * sliding-window and full-attention layers have their own head sizes (`head_dim` and the
//!   full layers' `head_dim` in `per_layer_config`, which transformers builds from
//!   `global_head_dim`), KV head counts (a per-layer list when the full layers have their
//!   own) and rotary sizes; the full layers use "proportional" rope, whose unrotated
//!   dimensions are written as frequency factors of 1e30 in a generated `rope_freqs`;
//! * the last `num_kv_shared_layers` layers reuse an earlier layer's KV cache (they have no
//!   k/v tensors) and, with `use_double_wide_mlp`, twice the FFN width (a per-layer list);
//! * a per-layer input embedding (`hidden_size_per_layer_input`, 0 when absent);
//! * the MoE variant: the experts' gate and up projections stay fused (`ffn_gate_up_exps`),
//!   the router's input scale and per-expert output scale become `ffn_gate_inp.scale` and
//!   `ffn_down_exps.scale`, and a second FFN norm pair sits beside the dense MLP;
//! * names ending in `layer_scalar` / `per_dim_scale`, and expert tensors without a
//!   suffix, get `.weight`.
//!
//! NVFP4 checkpoints (the reference folds `router.per_expert_scale` into each expert's
//! second-level scale) are not read here: the HF reader has no NVFP4 path.

use ggufkit::gguf::keys::tokenizer::{ADD_BOS, ADD_SPACE_PREFIX};
use ggufkit::gguf::keys::{attention, layered, llm, rope};
use serde_json::{json, Map, Value as Json};

use super::{Arch, Extra, HeadDim, Hooks, ModelType, Modified, Rules, TextType};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The chat parser's tokens, written as USER_DEFINED whatever the tokenizer says.
pub const VISIBLE_TOKENS: &[&str] = &[
    "<|channel>",
    "<channel|>",
    "<|tool_call>",
    "<tool_call|>",
    "<|tool_response>",
    "<tool_response|>",
    "<|\"|>",
];

/// The GGUF tensors of arch `gemma4` (gguf-py's `MODEL_TENSORS`; `ffn_norm` is its
/// `FFN_PRE_NORM`).
pub const TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::Output,
    Tensor::OutputNorm,
    Tensor::AttnQkv,
    Tensor::AttnQ,
    Tensor::AttnQNorm,
    Tensor::AttnK,
    Tensor::AttnKNorm,
    Tensor::AttnV,
    Tensor::AttnOut,
    Tensor::FfnGate,
    Tensor::FfnDown,
    Tensor::FfnUp,
    Tensor::FfnGateUpExp,
    Tensor::FfnGateExp,
    Tensor::FfnUpExp,
    Tensor::FfnDownExp,
    Tensor::AttnNorm,
    Tensor::AttnPostNorm,
    Tensor::FfnGateInp,
    Tensor::FfnNorm,
    Tensor::FfnPreNorm2,
    Tensor::FfnPostNorm,
    Tensor::FfnPostNorm1,
    Tensor::FfnPostNorm2,
    Tensor::LayerOutScale,
    Tensor::PerLayerTokenEmbd,
    Tensor::PerLayerModelProj,
    Tensor::PerLayerInpGate,
    Tensor::PerLayerProj,
    Tensor::PerLayerProjNorm,
    Tensor::PerLayerPostNorm,
];

/// `Gemma4TextConfig`: the class defaults the converter reads, and its `__post_init__`.
pub const TEXT_CONFIG: ModelType = ModelType {
    name: "gemma4_text",
    hf_classes: &["Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"],
    defaults: defaults! {
        "vocab_size" => 262144,
        "hidden_size" => 2304,
        "intermediate_size" => 9216,
        "num_hidden_layers" => 30,
        "num_attention_heads" => 8,
        "num_key_value_heads" => 4,
        "head_dim" => 256,
        "max_position_embeddings" => 131072,
        "rms_norm_eps" => 1e-6,
        "sliding_window" => 512,
        "final_logit_softcapping" => (serde_json::Value::Null),
        "use_bidirectional_attention" => (serde_json::Value::Null),
        "vocab_size_per_layer_input" => 262144,
        "hidden_size_per_layer_input" => 256,
        "attention_k_eq_v" => false,
        "num_kv_shared_layers" => 0,
        "enable_moe_block" => false,
        "use_double_wide_mlp" => false,
        "num_experts" => (serde_json::Value::Null),
        "top_k_experts" => (serde_json::Value::Null),
        "moe_intermediate_size" => (serde_json::Value::Null),
        "tie_word_embeddings" => true,
    },
    head_dim: HeadDim::Keep,
    kv_heads_key: None,
    prepare: Some(post_init),
};

/// `Gemma4UnifiedTextConfig`: Gemma 4's text config without per-layer embeddings or experts
/// (so without `moe_intermediate_size`, which the converter looks up: as the reference, a
/// config that does not name it is refused), a longer context and window, and vision tokens
/// attending bidirectionally.
pub const UNIFIED_TEXT_CONFIG: ModelType = ModelType {
    name: "gemma4_unified_text",
    hf_classes: &["Gemma4UnifiedForConditionalGeneration"],
    defaults: defaults! {
        "vocab_size" => 262144,
        "hidden_size" => 2304,
        "intermediate_size" => 9216,
        "num_hidden_layers" => 30,
        "num_attention_heads" => 8,
        "num_key_value_heads" => 4,
        "head_dim" => 256,
        "max_position_embeddings" => 262144,
        "rms_norm_eps" => 1e-6,
        "sliding_window" => 1024,
        "final_logit_softcapping" => (serde_json::Value::Null),
        "use_bidirectional_attention" => "vision",
        "attention_k_eq_v" => false,
        "num_kv_shared_layers" => 0,
        "use_double_wide_mlp" => false,
        "tie_word_embeddings" => true,
    },
    head_dim: HeadDim::Keep,
    kv_heads_key: None,
    prepare: Some(unified_post_init),
};

/// `Gemma4ForCausalLM`, `Gemma4ForConditionalGeneration` (arch `gemma4`).
pub const GEMMA4: Arch = Arch {
    hf_names: &["Gemma4ForCausalLM", "Gemma4ForConditionalGeneration"],
    model_types: &[TEXT_CONFIG],
    composites: &[("gemma4", TextType::Fixed("gemma4_text"))],
    gguf: "gemma4",
    vocab: VocabKind::Own(set_vocab),
    // The token list is the tokenizer's, never padded to `vocab_size`.
    vocab_quirks: VocabQuirks {
        pads_to_vocab_size: false,
        ..VocabQuirks::NONE
    },
    tensors: &[TENSORS],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        slice_embeddings: true,
        hook: Some(router_scales),
        ..Rules::NONE
    },
    params: gemma4_params,
    extra: rope_freqs,
    hooks: Hooks::NONE,
};

/// `Gemma4UnifiedForConditionalGeneration` (arch `gemma4`, `Gemma4UnifiedModel`): Gemma 4's
/// text model, plus the token ids generation_config.json's `suppress_tokens` lists.
pub const GEMMA4_UNIFIED: Arch = Arch {
    hf_names: &["Gemma4UnifiedForConditionalGeneration"],
    model_types: &[UNIFIED_TEXT_CONFIG],
    composites: &[("gemma4_unified", TextType::Fixed("gemma4_unified_text"))],
    params: unified_params,
    ..GEMMA4
};

/// The number of layers a config asks for, as the class reads it (its default when absent);
/// `None` when it is not a count.
fn layer_count(cfg: &Map<String, Json>) -> Option<u64> {
    match cfg.get("num_hidden_layers") {
        None => Some(30),
        Some(v) => json_u64(v).map(|n| n.min(crate::hf::config::MAX_BLOCK_COUNT)),
    }
}

/// `Gemma4TextConfig.__post_init__` (the values `to_dict()` then shows): bidirectional
/// attention over everything makes the model non-causal and rounds the sliding window down
/// to even; the default layer types (every sixth layer global) and the last layer forced
/// to full attention; the default rope dicts; and `per_layer_config`, unless given, built
/// from `global_head_dim` (default 512) and, when keys equal values,
/// `num_global_key_value_heads` for every full-attention layer (both keys are consumed).
/// `false` (AutoConfig raises) when the layer count is not a count.
fn post_init(cfg: &mut Map<String, Json>) -> bool {
    post_init_with(cfg, 512, TEXT_CONFIG.defaults)
}

/// `Gemma4UnifiedTextConfig.__post_init__`: [`post_init`]'s with its own default window.
fn unified_post_init(cfg: &mut Map<String, Json>) -> bool {
    post_init_with(cfg, 1024, UNIFIED_TEXT_CONFIG.defaults)
}

/// The shared `__post_init__` of the Gemma 4 text configs (`default_window`: the class's
/// `sliding_window` default, `defaults`: its field defaults).
fn post_init_with(
    cfg: &mut Map<String, Json>,
    default_window: u64,
    defaults: &[super::ConfigDefault],
) -> bool {
    let Some(n) = layer_count(cfg) else {
        return false;
    };
    if cfg
        .get("use_bidirectional_attention")
        .and_then(Json::as_str)
        == Some("all")
    {
        cfg.insert("is_causal".into(), Json::Bool(false));
        let sw = match cfg.get("sliding_window") {
            None => Some(default_window),
            Some(v) => json_u64(v),
        };
        if let Some(sw) = sw {
            // `sw // 2 + 1` in the config, `(that - 1) * 2` in `to_dict()`.
            cfg.insert("sliding_window".into(), json!(sw / 2 * 2));
        }
    }
    if cfg.get("layer_types").is_none_or(Json::is_null) {
        let types = (0..n)
            .map(|i| {
                json!(if (i + 1) % 6 != 0 {
                    "sliding_attention"
                } else {
                    "full_attention"
                })
            })
            .collect();
        cfg.insert("layer_types".into(), Json::Array(types));
    }
    if let Some(Json::Array(types)) = cfg.get_mut("layer_types") {
        if let Some(last) = types.last_mut() {
            if last.as_str() != Some("full_attention") {
                *last = json!("full_attention");
            }
        }
    }
    if cfg.get("rope_parameters").is_none_or(Json::is_null) {
        cfg.insert(
            "rope_parameters".into(),
            json!({
                "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                "full_attention": {
                    "rope_type": "proportional",
                    "partial_rotary_factor": 0.25,
                    "rope_theta": 1000000.0,
                },
            }),
        );
    }
    let global_head_dim = cfg.remove("global_head_dim").unwrap_or(json!(512));
    let global_kv_heads = cfg.remove("num_global_key_value_heads");
    if !cfg.contains_key("per_layer_config") {
        let mut overrides = Map::new();
        overrides.insert("head_dim".into(), global_head_dim);
        let k_eq_v = cfg
            .get("attention_k_eq_v")
            .is_some_and(crate::hf::tokenizer::json_truthy);
        if let Some(kv) = global_kv_heads.filter(|v| k_eq_v && !v.is_null()) {
            overrides.insert("num_key_value_heads".into(), kv);
        }
        let mut per_layer = Map::new();
        if let Some(Json::Array(types)) = cfg.get("layer_types") {
            for (i, t) in types.iter().enumerate() {
                if t.as_str() == Some("full_attention") {
                    per_layer.insert(i.to_string(), Json::Object(overrides.clone()));
                }
            }
        }
        cfg.insert("per_layer_config".into(), Json::Object(per_layer));
    }
    keep_overrides_only(cfg, defaults);
    true
}

/// transformers keeps in `per_layer_config` only what differs from the config itself: a
/// layer's value equal to the config's (or its class default) is dropped, and so is a layer
/// left with nothing (a full layer whose head size is `head_dim` then has none, and the
/// reference refuses the model).
fn keep_overrides_only(cfg: &mut Map<String, Json>, defaults: &[super::ConfigDefault]) {
    let base = |cfg: &Map<String, Json>, key: &str| {
        cfg.get(key)
            .cloned()
            .or_else(|| defaults.iter().find(|(k, _)| *k == key).map(|(_, v)| v()))
    };
    let same = |a: &Json, b: &Json| match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    };
    let Some(Json::Object(per_layer)) = cfg.get("per_layer_config").cloned() else {
        return;
    };
    let mut kept = Map::new();
    for (idx, layer) in per_layer {
        let Json::Object(layer) = layer else {
            kept.insert(idx, layer);
            continue;
        };
        let layer: Map<String, Json> = layer
            .into_iter()
            .filter(|(k, v)| !base(cfg, k).is_some_and(|b| same(&b, v)))
            .collect();
        if !layer.is_empty() {
            kept.insert(idx, Json::Object(layer));
        }
    }
    cfg.insert("per_layer_config".into(), Json::Object(kept));
}

/// `Gemma4Model.set_vocab`.
pub(super) fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    // `LlamaHfVocab` loads the tokenizer through AutoTokenizer, which builds the config
    // again and lets its validation error through (the reference's own config loading falls
    // back to config.json instead): a value the config class's field cannot hold is refused.
    match b.hparams().get("use_bidirectional_attention") {
        None | Some(Json::Null) => {}
        Some(Json::String(s)) if s == "all" || s == "vision" => {}
        Some(v) => {
            return Err(ConvertError::format(
                b.dir().config_path(),
                None,
                format!(
                    "use_bidirectional_attention: expected \"all\", \"vision\" or null, \
                     found {v} (transformers refuses this config when it loads the tokenizer)"
                ),
            ))
        }
    }
    let path = b.llama_hf_as("gemma4", VISIBLE_TOKENS)?;
    b.set_bool(ADD_SPACE_PREFIX, false);
    b.set_bool(ADD_BOS, true);
    Ok((path, None))
}

/// `filter_tensors`: `…per_dim_scale` and `…layer_scalar` get `.weight`, and so does an
/// expert tensor without a weight or scale suffix (the fused `experts.gate_up_proj`).
pub fn filter(name: &str) -> Option<String> {
    let mut name = name.to_string();
    if name.ends_with("per_dim_scale") || name.ends_with("layer_scalar") {
        name.push_str(".weight");
    }
    const KEPT: [&str; 4] = [
        ".weight",
        ".weight_scale",
        ".weight_scale_2",
        ".input_scale",
    ];
    if name.contains(".experts.") && !KEPT.iter().any(|s| name.ends_with(s)) {
        name.push_str(".weight");
    }
    Some(name)
}

/// `modify_tensors`: the router's input scale is `ffn_gate_inp.scale` and its per-expert
/// scale `ffn_down_exps.scale` of the tensor's block; everything else goes on to Gemma 3's
/// rules.
fn router_scales(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let target = if name.ends_with("router.scale") {
        "ffn_gate_inp"
    } else if name.contains(".per_expert_scale") {
        "ffn_down_exps"
    } else {
        return Ok(Modified::Pass(name, expr));
    };
    let bid = block_id(&name).ok_or_else(|| ConvertError::Tensor {
        name: name.clone(),
        problem: "a router scale outside a numbered layer".into(),
    })?;
    Ok(Modified::Named(vec![(
        format!("blk.{bid}.{target}.scale"),
        expr,
    )]))
}

/// A Python list index (`list[i]`, negative from the end), `None` when out of range.
fn py_index(i: i64, len: usize) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let i = if i < 0 { i + len } else { i };
    (0..len).contains(&i).then_some(i as usize)
}

/// The value of `key` for full-attention layers: the hparam `direct` when present and not
/// null, else `key` of the first `per_layer_config` entry (in the config's order) whose
/// layer index is below the layer count and names a full-attention layer (possibly null).
fn full_layer_value(hp: &Hparams, direct: &str, key: &str) -> Result<Option<Json>, ConvertError> {
    if let Some(v) = hp.get(direct).filter(|v| !v.is_null()) {
        return Ok(Some(v.clone()));
    }
    let Some(per_layer) = hp.get("per_layer_config").filter(|v| !v.is_null()) else {
        return Ok(None);
    };
    let bad =
        |what: String| ConvertError::format(&hp.path, None, format!("per_layer_config: {what}"));
    let Json::Object(per_layer) = per_layer else {
        return Err(bad(format!("expected a mapping, found {per_layer}")));
    };
    let types: &[Json] = match hp.get("layer_types") {
        Some(Json::Array(a)) => a,
        _ => &[],
    };
    for (idx, layer) in per_layer {
        let i: i64 = idx
            .trim()
            .parse()
            .map_err(|_| bad(format!("layer index {idx:?} is not an integer")))?;
        if i >= types.len() as i64 {
            continue;
        }
        let t = py_index(i, types.len())
            .ok_or_else(|| bad(format!("layer index {i} is out of range")))?;
        if types[t].as_str() != Some("full_attention") {
            continue;
        }
        let Json::Object(layer) = layer else {
            return Err(bad(format!(
                "layer {idx}: expected a mapping, found {layer}"
            )));
        };
        if let Some(v) = layer.get(key) {
            return Ok(Some(v.clone()));
        }
    }
    Ok(None)
}

/// The full-attention layers' head size (`global_head_dim`, else `per_layer_config`'s);
/// refused when there is none, as the reference asserts.
fn head_dim_full(hp: &Hparams) -> Result<u64, ConvertError> {
    let v = full_layer_value(hp, "global_head_dim", "head_dim")?
        .filter(|v| !v.is_null())
        .ok_or_else(|| {
            ConvertError::format(
                &hp.path,
                None,
                "the full-attention layers' head size is not given (global_head_dim, or \
                 head_dim of a full-attention layer in per_layer_config)",
            )
        })?;
    json_u64(&v).ok_or_else(|| {
        ConvertError::format(
            &hp.path,
            None,
            format!("the full-attention layers' head size {v} is not a count"),
        )
    })
}

/// `Gemma4Model.set_gguf_parameters`: Gemma 3's KVs, then the KV sharing, per-layer input
/// size, sliding-window pattern, the two layer kinds' head sizes, the expert FFN width, the
/// per-layer FFN widths of a double-wide MLP, the per-layer KV head counts and the two
/// rotary sizes.
pub(super) fn gemma4_params(p: &mut Params) -> Result<(), ConvertError> {
    super::gemma::gemma3_params(p)?;
    let hp = p.hp;
    let n_shared = hp.req_u64(&["num_kv_shared_layers"])?;
    p.u32(layered::SHARED_KV_LAYERS, n_shared)?;
    let per_layer = hp.find_u64(&["hidden_size_per_layer_input"])?.unwrap_or(0);
    p.u32(layered::EMBEDDING_LENGTH_PER_LAYER_INPUT, per_layer)?;
    let swa = p
        .layer_types_pattern()?
        .ok_or_else(|| hp.missing(&["layer_types"]))?;
    p.bools(attention::SLIDING_WINDOW_PATTERN, swa.clone());
    let hd_full = head_dim_full(hp)?;
    let hd_swa = hp.req_u64(&["head_dim"])?;
    p.u32(attention::KEY_LENGTH, hd_full)?;
    p.u32(attention::VALUE_LENGTH, hd_full)?;
    p.u32(layered::KEY_LENGTH_SWA, hd_swa)?;
    p.u32(layered::VALUE_LENGTH_SWA, hd_swa)?;
    let expert_keys = ["expert_intermediate_size", "moe_intermediate_size"];
    if hp.find(&expert_keys).is_none() {
        return Err(hp.missing(&expert_keys));
    }
    if let Some(n) = hp.find_u64(&expert_keys)? {
        p.u32(llm::EXPERT_FEED_FORWARD_LENGTH, n)?;
    }
    let n_layers = hp.block_count()?;
    if hp
        .get("use_double_wide_mlp")
        .is_some_and(crate::hf::tokenizer::json_truthy)
    {
        let n_ff = hp.req_u64(&["intermediate_size"])?;
        let first_shared = i128::from(n_layers) - i128::from(n_shared);
        let widths = (0..n_layers)
            .map(|il| {
                let w = if i128::from(il) < first_shared {
                    n_ff
                } else {
                    n_ff.saturating_mul(2)
                };
                i32::try_from(w).map_err(|_| {
                    ConvertError::out_of_range(
                        &hp.path,
                        "intermediate_size (doubled)",
                        w,
                        "a width that fits an INT32",
                    )
                })
            })
            .collect::<Result<Vec<i32>, _>>()?;
        p.i32s(llm::FEED_FORWARD_LENGTH, widths);
    }
    let kv_full = full_layer_value(hp, "num_global_key_value_heads", "num_key_value_heads")?;
    let kv_swa = hp.get("num_key_value_heads");
    if let (Some(full), Some(swa_kv)) = (
        kv_full.filter(|v| !v.is_null()),
        kv_swa.filter(|v| !v.is_null()),
    ) {
        let count = |v: &Json| {
            v.as_i64()
                .and_then(|x| i32::try_from(x).ok())
                .ok_or_else(|| {
                    ConvertError::format(
                        &hp.path,
                        None,
                        format!("a KV head count {v} is not an integer"),
                    )
                })
        };
        let (full, swa_kv) = (count(&full)?, count(swa_kv)?);
        let heads = swa.iter().map(|s| if *s { swa_kv } else { full }).collect();
        p.i32s(attention::HEAD_COUNT_KV, heads);
    }
    let factor = match hp.rope.get("partial_rotary_factor") {
        None => 1.0,
        Some(v) => v.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "partial_rotary_factor", "a number", v)
        })?,
    };
    p.u32(rope::DIMENSION_COUNT, hd_full)?;
    let n_rot_swa = (hd_swa as f64 * factor) as i64;
    let n_rot_swa = u64::try_from(n_rot_swa).map_err(|_| {
        ConvertError::out_of_range(
            &hp.path,
            "the sliding-window rotary size (head_dim * partial_rotary_factor)",
            n_rot_swa,
            "not negative",
        )
    })?;
    p.u32(layered::ROPE_DIMENSION_COUNT_SWA, n_rot_swa)
}

/// `Gemma4UnifiedModel.set_gguf_parameters`: Gemma 4's KVs, then `suppress_tokens` of
/// generation_config.json when it has the key (null: nothing).
fn unified_params(p: &mut Params) -> Result<(), ConvertError> {
    gemma4_params(p)?;
    let Some(gen) = p.generation_config()? else {
        return Ok(());
    };
    let path = p.generation_config_path();
    let ids = match gen.get("suppress_tokens") {
        None | Some(Json::Null) => return Ok(()),
        Some(Json::Array(ids)) => ids,
        Some(v) => {
            return Err(ConvertError::wrong_type(
                &path,
                "suppress_tokens",
                "a list of token ids",
                v,
            ))
        }
    };
    let ids = ids
        .iter()
        .map(|v| v.as_i64().and_then(|i| i32::try_from(i).ok()))
        .collect::<Option<Vec<i32>>>()
        .ok_or_else(|| {
            ConvertError::format(&path, None, "suppress_tokens: a token id is not an INT32")
        })?;
    if !ids.is_empty() {
        p.md.set(
            ggufkit::gguf::keys::tokenizer::SUPPRESS_TOKENS,
            ggufkit::gguf::Value::Array(ggufkit::gguf::ArrayValue::I32(ids)),
        );
    }
    Ok(())
}

/// Head sizes above this are refused: one frequency factor is generated per pair.
const MAX_HEAD_DIM: u64 = 1 << 16;

/// `generate_extra_tensors`: the full-attention layers' "proportional" rope as frequency
/// factors, 1 for the `head_dim · partial_rotary_factor / 2` rotated pairs and 1e30 for the
/// others of the `head_dim / 2`. The full layers' rope must be "proportional".
pub(super) fn rope_freqs(hp: &Hparams) -> Result<Extra, ConvertError> {
    let bad = |what: String| ConvertError::format(&hp.path, None, what);
    let full = hp
        .get("rope_parameters")
        .and_then(|r| r.get("full_attention"))
        .ok_or_else(|| hp.missing(&["rope_parameters.full_attention"]))?;
    let rope_type = full.get("rope_type");
    if rope_type.and_then(Json::as_str) != Some("proportional") {
        return Err(ConvertError::Unsupported(format!(
            "gemma4: the full-attention layers' rope_type must be \"proportional\", found {}",
            rope_type.map_or("nothing".to_string(), Json::to_string)
        )));
    }
    let hd = head_dim_full(hp)?;
    if hd > MAX_HEAD_DIM {
        return Err(bad(format!(
            "the full-attention head size {hd} is larger than {MAX_HEAD_DIM}"
        )));
    }
    let factor = full
        .get("partial_rotary_factor")
        .ok_or_else(|| hp.missing(&["rope_parameters.full_attention.partial_rotary_factor"]))?;
    let factor = factor.as_f64().ok_or_else(|| {
        bad(format!(
            "full_attention partial_rotary_factor: expected a number, found {factor}"
        ))
    })?;
    let n_rot = (hd as f64 * factor / 2.0) as i64;
    let n_unrot = (hd as f64 / 2.0) as i64 - n_rot;
    let n_rot = n_rot.clamp(0, hd as i64) as usize;
    let n_unrot = n_unrot.clamp(0, hd as i64) as usize;
    let mut values = vec![1.0f32; n_rot];
    values.resize(n_rot + n_unrot, 1e30f32);
    let n = values.len() as u64;
    Ok(Extra {
        tensors: vec![("rope_freqs.weight".into(), Expr::constant(values, vec![n]))],
        early_kvs: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn post_init_builds_per_layer_config() {
        let mut cfg = Map::new();
        cfg.insert("num_hidden_layers".into(), json!(7));
        cfg.insert("global_head_dim".into(), json!(64));
        cfg.insert("num_global_key_value_heads".into(), json!(1));
        cfg.insert("attention_k_eq_v".into(), json!(true));
        assert!(post_init(&mut cfg));
        assert_eq!(cfg["layer_types"][5], json!("full_attention"));
        assert_eq!(cfg["layer_types"][4], json!("sliding_attention"));
        // The last layer is forced to full attention.
        assert_eq!(cfg["layer_types"][6], json!("full_attention"));
        let plc = cfg["per_layer_config"].as_object().unwrap();
        assert_eq!(plc.len(), 2);
        assert_eq!(plc["5"], json!({"head_dim": 64, "num_key_value_heads": 1}));
        assert!(!cfg.contains_key("global_head_dim"));
        assert_eq!(
            cfg["rope_parameters"]["full_attention"]["rope_type"],
            json!("proportional")
        );
    }

    #[test]
    fn per_layer_config_keeps_only_overrides() {
        let mut cfg = Map::new();
        cfg.insert("num_hidden_layers".into(), json!(2));
        cfg.insert("head_dim".into(), json!(16));
        cfg.insert("num_key_value_heads".into(), json!(2));
        cfg.insert("attention_k_eq_v".into(), json!(true));
        cfg.insert("global_head_dim".into(), json!(32));
        cfg.insert("num_global_key_value_heads".into(), json!(2));
        assert!(post_init(&mut cfg));
        assert_eq!(cfg["per_layer_config"], json!({"1": {"head_dim": 32}}));
        // A given per_layer_config is reduced alike (4 is the class's KV head default).
        let mut cfg = Map::new();
        cfg.insert("num_hidden_layers".into(), json!(2));
        cfg.insert("head_dim".into(), json!(16));
        cfg.insert(
            "per_layer_config".into(),
            json!({"1": {"head_dim": 16, "num_key_value_heads": 4}}),
        );
        assert!(post_init(&mut cfg));
        assert_eq!(cfg["per_layer_config"], json!({}));
    }

    #[test]
    fn post_init_bidirectional_rounds_the_window() {
        let mut cfg = Map::new();
        cfg.insert("use_bidirectional_attention".into(), json!("all"));
        cfg.insert("sliding_window".into(), json!(513));
        assert!(post_init(&mut cfg));
        assert_eq!(cfg["sliding_window"], json!(512));
        assert_eq!(cfg["is_causal"], json!(false));
        let mut bad = Map::new();
        bad.insert("num_hidden_layers".into(), json!("many"));
        assert!(!post_init(&mut bad));
    }

    #[test]
    fn router_scales_are_named_in_their_block() {
        let e = Expr::constant(vec![1.0; 3], vec![3]);
        let hp = crate::hf::config::from_json(
            json!({"architectures": ["Gemma4ForCausalLM"]}),
            "config.json".into(),
        )
        .unwrap();
        let Modified::Named(v) =
            router_scales(&hp, "model.layers.4.router.per_expert_scale".into(), e).unwrap()
        else {
            panic!("not named")
        };
        assert_eq!(v[0].0, "blk.4.ffn_down_exps.scale");
        assert_eq!(
            filter("model.layers.0.experts.gate_up_proj").unwrap(),
            "model.layers.0.experts.gate_up_proj.weight"
        );
        assert_eq!(
            filter("model.layers.0.layer_scalar").unwrap(),
            "model.layers.0.layer_scalar.weight"
        );
    }
}
