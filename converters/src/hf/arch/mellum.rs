//! `MellumForCausalLM` (arch `mellum`, `MellumModel` in `conversion/mellum.py`).
//!
//! Llama attention with q/k norms and no q/k permutation; each block's FFN is a routed MoE
//! (`mlp.gate`, per-expert `down/gate/up_proj` of the hub checkpoints stacked in that
//! order). The hparams are the generic block, then the expert FFN size when given, and,
//! unless `use_sliding_window` is false, the sliding window and its per-layer pattern from
//! `layer_types`. The vocabulary is GPT-2 BPE. transformers' `MellumConfig` fills the
//! config: its defaults, `num_experts` stored as `num_local_experts` and `num_mtp_layers`
//! as `num_nextn_predict_layers`, full-attention layer types, sparse MLP layer types and
//! per-layer-type rope dicts when absent; it refuses more than one MTP layer (AutoConfig
//! then fails and the reference reads config.json as written).

use ggufkit::gguf::keys::{attention, llm};
use serde_json::{json, Map, Value as Json};

use super::{keep, no_extra, Arch, Experts, HeadDim, Hooks, ModelType, Rules};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// Mellum's tensors (gguf-py's `mellum` list): no dense FFN.
const MELLUM_TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::OutputNorm,
    Tensor::Output,
    Tensor::AttnNorm,
    Tensor::AttnQ,
    Tensor::AttnQNorm,
    Tensor::AttnK,
    Tensor::AttnKNorm,
    Tensor::AttnV,
    Tensor::AttnOut,
    Tensor::FfnNorm,
    Tensor::FfnGateInp,
    Tensor::FfnGateExp,
    Tensor::FfnDownExp,
    Tensor::FfnUpExp,
];

/// Mellum's per-expert `down_proj` / `gate_proj` / `up_proj`.
const MELLUM_EXPERTS: Experts = Experts {
    marker: "experts",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// The Mellum class.
pub const MELLUM: Arch = Arch {
    hf_names: &["MellumForCausalLM"],
    model_types: &[ModelType {
        name: "mellum",
        hf_classes: &["MellumForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 98304,
            "hidden_size" => 2304,
            "intermediate_size" => 7168,
            "num_hidden_layers" => 28,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 4,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-6,
            "tie_word_embeddings" => false,
            "sliding_window" => 1024,
            "moe_intermediate_size" => 896,
            "num_experts_per_tok" => 8,
            "num_local_experts" => 64,
            "norm_topk_prob" => true,
            "head_dim" => 128,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(post_init),
    }],
    composites: &[],
    gguf: "mellum",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[MELLUM_TENSORS],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[MELLUM_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `MellumConfig`'s attribute map and `__post_init__` (see the module doc); `false` when
/// the class refuses the config (more than one MTP layer).
fn post_init(cfg: &mut Map<String, Json>) -> bool {
    for (alias, attr) in [
        ("num_experts", "num_local_experts"),
        ("num_mtp_layers", "num_nextn_predict_layers"),
    ] {
        if let Some(v) = cfg.remove(alias) {
            cfg.insert(attr.into(), v);
        }
    }
    if cfg
        .get("num_nextn_predict_layers")
        .and_then(Json::as_u64)
        .is_some_and(|n| n > 1)
    {
        return false;
    }
    let n = cfg
        .get("num_hidden_layers")
        .and_then(Json::as_u64)
        .unwrap_or(28)
        .min(crate::hf::config::MAX_BLOCK_COUNT);
    let n = usize::try_from(n).unwrap_or(0);
    let absent = |cfg: &Map<String, Json>, k: &str| cfg.get(k).is_none_or(Json::is_null);
    if absent(cfg, "layer_types") {
        cfg.insert("layer_types".into(), json!(vec!["full_attention"; n]));
    }
    if absent(cfg, "mlp_layer_types") {
        cfg.insert("mlp_layer_types".into(), json!(vec!["sparse"; n]));
    }
    if absent(cfg, "rope_parameters") {
        cfg.insert(
            "rope_parameters".into(),
            json!({
                "full_attention": {"rope_type": "default", "rope_theta": 500000.0},
                "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
            }),
        );
    }
    true
}

/// `MellumModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    if let Some(ff) = hp.find_u64(&["moe_intermediate_size"])? {
        p.u32(llm::EXPERT_FEED_FORWARD_LENGTH, ff)?;
    }
    let use_sliding = match hp.find(&["use_sliding_window"]) {
        None | Some(Json::Null) | Some(Json::Bool(true)) => true,
        Some(_) => false,
    };
    if use_sliding && hp.find_u64(&["sliding_window"])?.is_some() {
        p.req_u32(attention::SLIDING_WINDOW, &["sliding_window"])?;
        let types = match hp.find(&["layer_types"]) {
            Some(Json::Array(a)) => a,
            Some(v) => {
                return Err(ConvertError::BadHparam {
                    path: hp.path.clone(),
                    keys: vec!["layer_types".into()],
                    expected: "a list of layer types".into(),
                    found: v.to_string(),
                })
            }
            None => return Err(hp.missing(&["layer_types"])),
        };
        let pattern = types
            .iter()
            .map(|t| t.as_str() == Some("sliding_attention"))
            .collect();
        p.bools(attention::SLIDING_WINDOW_PATTERN, pattern);
    }
    Ok(())
}
