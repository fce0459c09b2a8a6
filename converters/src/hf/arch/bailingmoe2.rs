//! `BailingMoeV2ForCausalLM` (arch `bailingmoe2`, `BailingMoeV2Model` in
//! `conversion/bailingmoe.py`).
//!
//! Ling 2.0 (inclusionAI's remote code): a fused `attention.query_key_value` with q/k norms
//! (`query_layernorm` / `key_layernorm`) and partial rotary (`head_dim *
//! partial_rotary_factor`, default one half), `first_k_dense_replace` dense blocks, then
//! routed experts (per-expert `down/gate/up_proj` stacked in that order) with shared experts,
//! the router `mlp.gate` and its selection bias `mlp.gate.expert_bias`. Next-token-prediction
//! blocks (`num_nextn_predict_layers`, numbered after the config's, with `final_layernorm` as
//! the layer output norm) are kept, and their count is written whenever the config has the
//! key. GPT-2 BPE vocabulary.

use ggufkit::gguf::keys::{llm, mla, rope};

use super::{Arch, Experts, Hooks, Rules};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// Ling 2.0 (MoE).
pub const BAILINGMOE2: Arch = Arch {
    hf_names: &["BailingMoeV2ForCausalLM"],
    // Remote code only: AutoConfig cannot type the config, which is read as written.
    model_types: &[],
    composites: &[],
    gguf: "bailingmoe2",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQNorm,
        Tensor::AttnKNorm,
        Tensor::AttnQkv,
        Tensor::AttnOut,
        Tensor::FfnGateInp,
        Tensor::FfnExpProbsB,
        Tensor::FfnNorm,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
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
        Tensor::LayerOutNorm,
    ]],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        experts: &[BAILING_EXPERTS],
        nextn_blocks: true,
        ..Rules::NONE
    },
    params,
    extra: super::no_extra,
    hooks: Hooks::NONE,
};

/// Per-expert `down/gate/up_proj` under `mlp.experts.{xid}`, stacked in that order.
const BAILING_EXPERTS: Experts = Experts {
    marker: "mlp.experts",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// `BailingMoeV2Model.filter_tensors`: the selection bias `….expert_bias` is named as a bias.
pub(super) fn filter(name: &str) -> Option<String> {
    Some(name.replace(".expert_bias", ".expert_bias.bias"))
}

/// `BailingMoeV2Model.set_gguf_parameters`.
pub(super) fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    let head_dim = match hp.find_u64(&["head_dim"])? {
        Some(d) => d,
        None => {
            let heads = hp.req_u64(&["num_attention_heads"])?;
            hp.req_u64(&["hidden_size"])?
                .checked_div(heads)
                .ok_or_else(|| hp.missing(&["num_attention_heads"]))?
        }
    };
    let factor = match hp.rope.get("partial_rotary_factor") {
        None => 0.5,
        Some(v) => v.as_f64().ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "partial_rotary_factor", "a number", v)
        })?,
    };
    p.u32(rope::DIMENSION_COUNT, (head_dim as f64 * factor) as u64)?;
    p.u32(
        llm::LEADING_DENSE_BLOCK_COUNT,
        hp.req_u64(&["first_k_dense_replace"])?,
    )?;
    p.u32(llm::VOCAB_SIZE, hp.req_u64(&["vocab_size"])?)?;
    let moe_ff = hp.req_u64(&["moe_intermediate_size"])?;
    p.u32(llm::EXPERT_FEED_FORWARD_LENGTH, moe_ff)?;
    let shared_ff = match hp.get("moe_shared_expert_intermediate_size") {
        Some(_) => hp.req_u64(&["moe_shared_expert_intermediate_size"])?,
        None => moe_ff.saturating_mul(hp.req_u64(&["num_shared_experts"])?),
    };
    p.u32(llm::EXPERT_SHARED_FEED_FORWARD_LENGTH, shared_ff)?;
    p.f32(
        mla::EXPERT_WEIGHTS_SCALE,
        hp.req_f64(&["routed_scaling_factor"])?,
    );
    p.u32(
        llm::EXPERT_SHARED_COUNT,
        hp.req_u64(&["num_shared_experts"])?,
    )?;
    p.bool(mla::EXPERT_WEIGHTS_NORM, hp.req_bool(&["norm_topk_prob"])?);
    if let Some(n) = hp.find_u64(&["num_nextn_predict_layers"])? {
        p.u32(mla::NEXTN_PREDICT_LAYERS, n)?;
    }
    Ok(())
}
