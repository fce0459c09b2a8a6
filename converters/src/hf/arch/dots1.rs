//! `Dots1ForCausalLM` (arch `dots1`, `Dots1Model` in `conversion/dots1.py`).
//!
//! dots.llm1: a Qwen2-MoE decoder with DeepSeek-style routing. `first_k_dense_replace`
//! dense blocks come first, then routed experts (per-expert `down/gate/up_proj` stacked in
//! that order, or already fused 3-D tensors) with shared experts (`mlp.shared_experts.*`,
//! mapped as they are, never stacked) and the expert selection bias; q/k norms. The expert
//! count is `n_routed_experts`; the routing rules (leading dense blocks, shared expert count,
//! routed scaling, top-k normalisation) are KVs. GPT-2 BPE vocabulary.

use ggufkit::gguf::keys::{llm, mla};

use super::qwen::moe_params;
use super::{keep, no_extra, Arch, Experts, HeadDim, Hooks, ModelType, Rules};
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// dots.llm1.
pub const DOTS1: Arch = Arch {
    hf_names: &["Dots1ForCausalLM"],
    model_types: &[ModelType {
        name: "dots1",
        hf_classes: &["Dots1ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 152064,
            "hidden_size" => 4608,
            "intermediate_size" => 10944,
            "moe_intermediate_size" => 1408,
            "num_hidden_layers" => 62,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 32,
            "n_shared_experts" => (serde_json::Value::Null),
            "n_routed_experts" => (serde_json::Value::Null),
            "n_group" => 1,
            "topk_group" => 1,
            "num_experts_per_tok" => (serde_json::Value::Null),
            "first_k_dense_replace" => 0,
            "norm_topk_prob" => false,
            "max_position_embeddings" => 2048,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 10000.0,
            "routed_scaling_factor" => 1.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(experts_from_routed),
    }],
    composites: &[],
    gguf: "dots1",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        DECODER,
        &[
            Tensor::AttnQkv,
            Tensor::AttnQNorm,
            Tensor::AttnKNorm,
            Tensor::FfnExpProbsB,
            Tensor::FfnGateInp,
            Tensor::FfnGateExp,
            Tensor::FfnUpExp,
            Tensor::FfnDownExp,
            Tensor::FfnGateShexp,
            Tensor::FfnUpShexp,
            Tensor::FfnDownShexp,
        ],
    ],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        fused_experts: true,
        experts: &[DOTS1_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// Routed experts under `mlp.experts.{xid}`; the shared ones (`mlp.shared_experts`) are not
/// matched, so they keep their own names.
const DOTS1_EXPERTS: Experts = Experts {
    marker: "mlp.experts.",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// The converter's constructor: `num_experts` is `n_routed_experts` (null when the config
/// has none), whatever the file says.
fn experts_from_routed(cfg: &mut serde_json::Map<String, serde_json::Value>) -> bool {
    let routed = cfg
        .get("n_routed_experts")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    cfg.insert("num_experts".into(), routed);
    true
}

/// `Dots1Model.set_gguf_parameters`: Qwen2-MoE's block, then the routing rules.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    moe_params(p)?;
    let hp = p.hp;
    p.u32(
        llm::LEADING_DENSE_BLOCK_COUNT,
        hp.req_u64(&["first_k_dense_replace"])?,
    )?;
    p.u32(llm::EXPERT_SHARED_COUNT, hp.req_u64(&["n_shared_experts"])?)?;
    p.f32(
        mla::EXPERT_WEIGHTS_SCALE,
        hp.req_f64(&["routed_scaling_factor"])?,
    );
    p.bool(mla::EXPERT_WEIGHTS_NORM, hp.req_bool(&["norm_topk_prob"])?);
    Ok(())
}
