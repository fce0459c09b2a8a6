//! LFM2 (`conversion/lfm2.py`'s `LFM2Model`): Liquid's hybrid of short gated convolutions
//! and grouped-query attention (arch `lfm2`).
//!
//! The generic hparams with `num_key_value_heads` per layer (0 on `conv` layers), then the
//! vocabulary size, the convolution cache length, the RMS epsilon (`norm_eps`) and the FFN
//! size as the model computes it (two thirds of `block_ff_dim`, times
//! `block_ffn_dim_multiplier`, rounded up to `block_multiple_of`). The depthwise
//! `conv.conv` weight `[d, 1, L]` loses its middle dimension; it stays F32.

use ggufkit::gguf::keys::{attention, llm, shortconv};
use serde_json::{Map, Value as Json};

use super::{no_extra, Arch, Experts, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// `Lfm2ForCausalLM` (arch `lfm2`).
pub const LFM2: Arch = Arch {
    hf_names: &["Lfm2ForCausalLM", "LFM2ForCausalLM"],
    model_types: &[ModelType {
        name: "lfm2",
        hf_classes: &["Lfm2ForCausalLM", "LFM2ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 65536,
            "hidden_size" => 2560,
            "intermediate_size" => 12288,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 8,
            "max_position_embeddings" => 128000,
            "norm_eps" => 1e-5,
            "conv_L_cache" => 3,
            "block_multiple_of" => 256,
            "block_ffn_dim_multiplier" => 1.0,
            "block_auto_adjust_ff_dim" => true,
            "rope_theta" => 1000000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(layer_types),
    }],
    composites: &[],
    gguf: "lfm2",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[LFM2_TENSORS, &[Tensor::Output]],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(hook),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `Lfm2MoeForCausalLM` (arch `lfm2moe`): LFM2 with routed experts after
/// `num_dense_layers` dense layers, a sigmoid router with an expert bias, and no `lm_head`.
pub const LFM2MOE: Arch = Arch {
    hf_names: &["Lfm2MoeForCausalLM"],
    model_types: &[ModelType {
        name: "lfm2_moe",
        hf_classes: &["Lfm2MoeForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 65536,
            "hidden_size" => 2048,
            "intermediate_size" => 7168,
            "moe_intermediate_size" => 1792,
            "num_hidden_layers" => 32,
            "max_position_embeddings" => 128000,
            "norm_eps" => 1e-5,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 8,
            "conv_L_cache" => 3,
            "num_dense_layers" => 2,
            "num_experts_per_tok" => 4,
            "num_experts" => 32,
            "rope_theta" => 1000000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "lfm2moe",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        LFM2_TENSORS,
        &[
            Tensor::FfnGateInp,
            Tensor::FfnGateExp,
            Tensor::FfnDownExp,
            Tensor::FfnUpExp,
            Tensor::FfnExpProbsB,
        ],
    ],
    tensor_overrides: &[],
    filter: moe_filter,
    rules: Rules {
        hook: Some(hook),
        experts: &[LFM2_EXPERTS],
        ..Rules::NONE
    },
    params: moe_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The tensors of LFM2's embedding, short-convolution, attention and dense blocks.
pub(super) const LFM2_TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::TokenEmbdNorm,
    Tensor::ShortConv,
    Tensor::ShortConvIn,
    Tensor::ShortConvOut,
    Tensor::FfnGate,
    Tensor::FfnDown,
    Tensor::FfnUp,
    Tensor::FfnNorm,
    Tensor::AttnNorm,
    Tensor::AttnQNorm,
    Tensor::AttnKNorm,
    Tensor::AttnQkv,
    Tensor::AttnQ,
    Tensor::AttnK,
    Tensor::AttnV,
    Tensor::AttnOut,
];

/// LFM2-MoE's per-expert `w1`/`w2`/`w3`.
const LFM2_EXPERTS: Experts = Experts {
    marker: "experts",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["w1", "w2", "w3"],
    expert_name: "model.layers.{bid}.feed_forward.experts.{xid}.{w}.weight",
    merged_name: "layers.{bid}.feed_forward.experts.{w}.weight",
};

/// `LFM2MoeModel.filter_tensors`: the expert bias is named as a bias.
fn moe_filter(name: &str) -> Option<String> {
    match name.strip_suffix(".expert_bias") {
        Some(base) => Some(format!("{base}.expert_bias.bias")),
        None => Some(name.to_string()),
    }
}

/// `LFM2MoeModel.set_gguf_parameters`.
fn moe_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = kv_per_layer(p.hp, |t| t == "full_attention")?;
    let mut q = p.with_hparams(&hp);
    q.generic()?;
    q.req_u32(llm::EXPERT_FEED_FORWARD_LENGTH, &["moe_intermediate_size"])?;
    q.req_u32(llm::LEADING_DENSE_BLOCK_COUNT, &["num_dense_layers"])?;
    // ExpertGatingFuncType.SIGMOID
    q.u32(llm::EXPERT_GATING_FUNC, 2)?;
    q.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    q.req_u32(shortconv::L_CACHE, &["conv_L_cache"])
}

/// `Lfm2Config`: `layer_types` from `full_attn_idxs` (every layer when absent) when the
/// file has none.
fn layer_types(cfg: &mut Map<String, Json>) -> bool {
    if cfg.get("layer_types").is_some_and(|v| !v.is_null()) {
        return true;
    }
    let n = cfg
        .get("num_hidden_layers")
        .and_then(json_u64)
        .unwrap_or(32)
        .min(crate::hf::config::MAX_BLOCK_COUNT);
    let idxs: Option<Vec<u64>> = match cfg.get("full_attn_idxs") {
        Some(Json::Array(a)) => Some(a.iter().filter_map(json_u64).collect()),
        _ => None,
    };
    let types: Vec<Json> = (0..n)
        .map(|i| {
            let full = idxs.as_ref().is_none_or(|v| v.contains(&i));
            Json::from(if full { "full_attention" } else { "conv" })
        })
        .collect();
    cfg.insert("layer_types".into(), Json::Array(types));
    true
}

/// Audio tensors (LFM2-Audio) go; the audio model's `lfm.` prefix is the text model's
/// `model.`.
pub(super) fn filter(name: &str) -> Option<String> {
    const AUDIO: &[&str] = &[
        "audio",
        "codebook",
        "conformer",
        "depth_embedding",
        "depthformer",
        "depth_linear",
    ];
    if AUDIO.iter().any(|p| name.contains(p)) {
        return None;
    }
    Some(name.replace("lfm.", "model."))
}

/// `squeeze(1)`: the middle dimension of `conv.conv` weights goes when it is 1.
pub fn squeeze_conv(name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let s = expr.shape().to_vec();
    if name.contains("conv.conv") && s.len() > 1 && s[1] == 1 {
        let mut shape = s;
        shape.remove(1);
        let expr = expr.reshape(&name, shape)?;
        return Ok(Modified::Pass(name, expr));
    }
    Ok(Modified::Pass(name, expr))
}

pub(super) fn hook(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    squeeze_conv(name, expr)
}

/// The hparams with `num_key_value_heads` as a list over `layer_types`: the count where
/// `is_kv(layer type)`, else 0.
pub fn kv_per_layer(hp: &Hparams, is_kv: fn(&str) -> bool) -> Result<Hparams, ConvertError> {
    let kv = hp
        .get("num_key_value_heads")
        .cloned()
        .ok_or_else(|| hp.missing(&["num_key_value_heads"]))?;
    let types = match hp.get("layer_types") {
        Some(Json::Array(a)) => a.clone(),
        _ => return Err(hp.missing(&["layer_types"])),
    };
    let per_layer: Vec<Json> = types
        .iter()
        .map(|t| {
            if is_kv(t.as_str().unwrap_or_default()) {
                kv.clone()
            } else {
                Json::from(0)
            }
        })
        .collect();
    let mut out = hp.clone();
    out.map
        .insert("num_key_value_heads".into(), Json::Array(per_layer));
    Ok(out)
}

pub(super) fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = kv_per_layer(p.hp, |t| t != "conv")?;
    let mut q = p.with_hparams(&hp);
    q.generic()?;
    q.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    q.req_u32(shortconv::L_CACHE, &["conv_L_cache"])?;
    let eps = hp.req_f64(&["norm_eps"])?;
    q.f32(attention::LAYERNORM_RMS_EPS, eps);
    let ff = ff_dim(&hp)?;
    q.u32(llm::FEED_FORWARD_LENGTH, ff)
}

/// `_add_feed_forward_length`: the FFN size the model builds.
fn ff_dim(hp: &Hparams) -> Result<u64, ConvertError> {
    let ff = hp.req_u64(&["block_ff_dim", "intermediate_size"])?;
    let auto = match hp.get("block_auto_adjust_ff_dim") {
        Some(Json::Bool(b)) => *b,
        Some(v) => super::granite::truthy(v),
        None => return Err(hp.missing(&["block_auto_adjust_ff_dim"])),
    };
    let mult = hp
        .get("block_ffn_dim_multiplier")
        .ok_or_else(|| hp.missing(&["block_ffn_dim_multiplier"]))?;
    let multiple_of = hp.req_u64(&["block_multiple_of"])?;
    if !auto {
        return Ok(ff);
    }
    // Python: int(2 * ff / 3), int(multiplier * ff), then rounded up to `multiple_of`.
    let mut ff = (2.0 * ff as f64 / 3.0) as u64;
    if !mult.is_null() {
        let m = mult.as_f64().ok_or_else(|| {
            ConvertError::format(&hp.path, None, format!("block_ffn_dim_multiplier: {mult}"))
        })?;
        ff = (m * ff as f64) as u64;
    }
    if multiple_of == 0 {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "block_multiple_of",
            0,
            "at least 1 (the FFN size is rounded up to a multiple of it)",
        ));
    }
    ff.div_ceil(multiple_of)
        .checked_mul(multiple_of)
        .ok_or_else(|| {
            ConvertError::out_of_range(
                &hp.path,
                "block_ff_dim rounded up to block_multiple_of",
                format!("{ff} to a multiple of {multiple_of}"),
                "a size that fits 64 bits",
            )
        })
}
