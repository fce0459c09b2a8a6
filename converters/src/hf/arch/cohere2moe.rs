//! `Cohere2MoeForCausalLM` (arch `cohere2moe`, `Cohere2MoeModel` in `conversion/command_r.py`).
//!
//! Cohere2's parallel block (one input norm, sliding and full attention layers) with routed
//! experts: the leading dense blocks (from `mlp_layer_types`, which the config class derives
//! from `first_k_dense_replace` and drops that key), then per-expert `down/gate/up_proj`
//! stacked in that order, a router `mlp.gate`, shared experts of the expert FFN size combined
//! by averaging (any other combination is refused, as by the reference). Bias tensors must be
//! all zeros and are not written (a non-zero one is refused). Next-token-prediction blocks
//! (`num_nextn_predict_layers`, numbered after the config's) are kept. The rotary dimensions
//! are `head_dim`, the rope unscaled. GPT-2 BPE vocabulary.

use ggufkit::gguf::keys::{attention, llm, mla, rope};
use serde_json::{Map, Value as Json};

use super::{keep, no_extra, Arch, Experts, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// Cohere2 MoE.
pub const COHERE2MOE: Arch = Arch {
    hf_names: &["Cohere2MoeForCausalLM"],
    model_types: &[ModelType {
        name: "cohere2_moe",
        hf_classes: &["Cohere2MoeForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 256000,
            "hidden_size" => 8192,
            "intermediate_size" => 22528,
            "logit_scale" => 0.0625,
            "num_hidden_layers" => 40,
            "num_attention_heads" => 64,
            "num_key_value_heads" => (Json::Null),
            "head_dim" => 128,
            "max_position_embeddings" => 8192,
            "layer_norm_eps" => 1e-5,
            "pad_token_id" => 0,
            "bos_token_id" => 5,
            "eos_token_id" => 255001,
            "tie_word_embeddings" => true,
            "rope_theta" => 10000.0,
            "sliding_window" => 4096,
            "num_experts_per_tok" => 2,
            "num_experts" => 8,
            "num_shared_experts" => 0,
            "shared_expert_combination_strategy" => "average",
            "expert_selection_fn" => "softmax",
            "prefix_dense_sliding_window_pattern" => 1,
            "norm_topk_prob" => true,
            "prefix_dense_intermediate_size" => (Json::Null),
            "rms_norm_eps" => (Json::Null),
            "sliding_window_pattern" => 4,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(derive_layer_types),
    }],
    composites: &[],
    gguf: "cohere2moe",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
        Tensor::FfnGateInp,
        Tensor::FfnGateExp,
        Tensor::FfnDownExp,
        Tensor::FfnUpExp,
        Tensor::FfnGateShexp,
        Tensor::FfnDownShexp,
        Tensor::FfnUpShexp,
        Tensor::NextnEhProj,
        Tensor::NextnEmbedTokens,
        Tensor::NextnEnorm,
        Tensor::NextnHnorm,
        Tensor::NextnSharedHeadHead,
        Tensor::NextnSharedHeadNorm,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(drop_zero_biases),
        experts: &[COHERE2MOE_EXPERTS],
        nextn_blocks: true,
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// Per-expert `down/gate/up_proj` under `mlp.experts.{xid}`, stacked in that order.
const COHERE2MOE_EXPERTS: Experts = Experts {
    marker: "mlp.experts.",
    count_keys: &["num_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// `Cohere2MoeConfig.__post_init__`: without `layer_types`, the first
/// `first_k_dense_replace` layers follow `prefix_dense_sliding_window_pattern` and the others
/// `sliding_window_pattern` (full attention every that many layers); without
/// `mlp_layer_types`, those first layers are dense and the others sparse. The class consumes
/// `first_k_dense_replace` (it is not an attribute). False (AutoConfig raises: config.json is
/// read as written) for a zero or non-integer pattern.
fn derive_layer_types(cfg: &mut Map<String, Json>) -> bool {
    let count = |cfg: &Map<String, Json>, k: &str, default: u64| match cfg.get(k) {
        None => Some(default),
        Some(v) => v.as_u64(),
    };
    let Some(n) = count(cfg, "num_hidden_layers", 40) else {
        return false;
    };
    let n = n.min(crate::hf::config::MAX_BLOCK_COUNT);
    let Some(first_dense) = count(cfg, "first_k_dense_replace", 0) else {
        return false;
    };
    let first_dense = first_dense.min(n);
    if cfg.get("layer_types").is_none_or(Json::is_null) {
        let (Some(prefix), Some(rest)) = (
            count(cfg, "prefix_dense_sliding_window_pattern", 1),
            count(cfg, "sliding_window_pattern", 4),
        ) else {
            return false;
        };
        if (first_dense > 0 && prefix == 0) || (n > first_dense && rest == 0) {
            return false;
        }
        let kind = |i: u64, k: u64| {
            Json::from(if !(i + 1).is_multiple_of(k) {
                "sliding_attention"
            } else {
                "full_attention"
            })
        };
        let types: Vec<Json> = (0..first_dense)
            .map(|i| kind(i, prefix))
            .chain((0..n - first_dense).map(|i| kind(i, rest)))
            .collect();
        cfg.insert("layer_types".into(), Json::Array(types));
    }
    if cfg.get("mlp_layer_types").is_none_or(Json::is_null) {
        let types: Vec<Json> = (0..n)
            .map(|i| Json::from(if i < first_dense { "dense" } else { "sparse" }))
            .collect();
        cfg.insert("mlp_layer_types".into(), Json::Array(types));
    }
    cfg.remove("first_k_dense_replace");
    true
}

/// `Cohere2MoeModel.modify_tensors`' bias rule: a `.bias` tensor is not written, and one with
/// a non-zero value (NaN included) is refused.
fn drop_zero_biases(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if !name.ends_with(".bias") {
        return Ok(Modified::Pass(name, expr));
    }
    let values = expr.eval_f32().map_err(|e| ConvertError::Tensor {
        name: name.clone(),
        problem: e.to_string(),
    })?;
    if values.iter().any(|v| *v != 0.0) {
        return Err(ConvertError::Tensor {
            name,
            problem: "bias tensor is not zero (Cohere2 MoE has no biases)".into(),
        });
    }
    Ok(Modified::Drop)
}

/// `Cohere2MoeModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let expert_ff = hp.req_u64(&["intermediate_size"])?;
    let mut dense_lead = hp.find_u64(&["first_k_dense_replace"])?.unwrap_or(0);
    match hp.get("mlp_layer_types") {
        None | Some(Json::Null) => {}
        Some(Json::Array(types)) => {
            dense_lead = types
                .iter()
                .position(|t| t.as_str() != Some("dense"))
                .unwrap_or(types.len()) as u64;
        }
        Some(v) => return Err(bad(hp, "mlp_layer_types", v)),
    }
    p.generic()?;
    p.f32(llm::LOGIT_SCALE, hp.req_f64(&["logit_scale"])?);
    p.u32(attention::SLIDING_WINDOW, hp.req_u64(&["sliding_window"])?)?;
    let pattern = p
        .layer_types_pattern()?
        .ok_or_else(|| hp.missing(&["layer_types"]))?;
    p.bools(attention::SLIDING_WINDOW_PATTERN, pattern);
    p.u32(llm::VOCAB_SIZE, hp.req_u64(&["vocab_size"])?)?;
    p.u32(llm::EXPERT_FEED_FORWARD_LENGTH, expert_ff)?;
    p.u32(llm::LEADING_DENSE_BLOCK_COUNT, dense_lead)?;
    p.bool(
        mla::EXPERT_WEIGHTS_NORM,
        hp.find_bool(&["norm_topk_prob"])?.unwrap_or(false),
    );
    let shared = hp.find_u64(&["num_shared_experts"])?.unwrap_or(0);
    if shared > 0 {
        let strategy = match hp.get("shared_expert_combination_strategy") {
            None => "average",
            Some(v) => v.as_str().unwrap_or_default(),
        };
        if strategy != "average" {
            return Err(ConvertError::Unsupported(format!(
                "Cohere2 MoE only supports the average shared expert combination, not {:?}",
                hp.get("shared_expert_combination_strategy")
            )));
        }
        p.u32(llm::EXPERT_SHARED_COUNT, shared)?;
        p.u32(
            llm::EXPERT_SHARED_FEED_FORWARD_LENGTH,
            expert_ff.saturating_mul(shared),
        )?;
    }
    let nextn = hp.find_u64(&["num_nextn_predict_layers"])?.unwrap_or(0);
    if nextn > 0 && hp.mtp != crate::hf::Mtp::Drop {
        p.u32(mla::NEXTN_PREDICT_LAYERS, nextn)?;
    }
    p.u32(rope::DIMENSION_COUNT, hp.req_u64(&["head_dim"])?)?;
    p.rope_scaling_none();
    Ok(())
}

fn bad(hp: &Hparams, key: &str, v: &Json) -> ConvertError {
    ConvertError::format(&hp.path, None, format!("{key}: unexpected value {v}"))
}
