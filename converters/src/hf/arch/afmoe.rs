//! `AfmoeForCausalLM` (arch `afmoe`, `AfmoeModel` in `conversion/afmoe.py`).
//!
//! Arcee's Trinity MoE: a Llama subclass whose tensors skip Llama's own step (no q/k
//! permutation). `num_dense_layers` dense blocks, then routed experts (per-expert
//! `gate/up/down_proj` stacked in that order) with shared experts, the router
//! `mlp.router.gate` and its selection bias `mlp.expert_bias`; a gated attention
//! (`self_attn.gate_proj`) with q/k norms; post-attention, pre- and post-MLP norms. The
//! routing rules, the expert sizes and the sliding window are KVs after Llama's block; the
//! layer pattern is not written. Llama's vocabulary path. A Llama-3 rope is refused: the
//! architecture has no `rope_freqs` tensor.

use ggufkit::gguf::keys::{attention, llm, mla};

use super::llama;
use super::{Arch, Experts, HeadDim, Hooks, ModelType, Rules};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// Arcee AFMoE.
pub const AFMOE: Arch = Arch {
    hf_names: &["AfmoeForCausalLM"],
    model_types: &[ModelType {
        name: "afmoe",
        hf_classes: &["AfmoeForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 200192,
            "hidden_size" => 2048,
            "intermediate_size" => 6144,
            "moe_intermediate_size" => 1408,
            "num_hidden_layers" => 32,
            "num_dense_layers" => 1,
            "num_attention_heads" => 16,
            "num_key_value_heads" => (serde_json::Value::Null),
            "head_dim" => 128,
            "max_position_embeddings" => 16384,
            "rms_norm_eps" => 1e-5,
            "tie_word_embeddings" => false,
            "num_experts" => 64,
            "num_experts_per_tok" => 6,
            "num_shared_experts" => 2,
            "route_scale" => 1.0,
            "global_attn_every_n_layers" => 4,
            "sliding_window" => 1024,
            "rope_theta" => 10000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "afmoe",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnPostNorm,
        Tensor::AttnQkv,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::AttnQNorm,
        Tensor::AttnKNorm,
        Tensor::AttnGate,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
        Tensor::FfnGateInp,
        Tensor::FfnGateExp,
        Tensor::FfnDownExp,
        Tensor::FfnUpExp,
        Tensor::FfnGateShexp,
        Tensor::FfnUpShexp,
        Tensor::FfnDownShexp,
        Tensor::FfnPreNorm,
        Tensor::FfnPostNorm,
        Tensor::FfnExpProbsB,
    ]],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        experts: &[AFMOE_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: llama::no_rope_freqs,
    hooks: Hooks::NONE,
};

/// Per-expert `gate/up/down_proj` under `mlp.experts.{xid}`, stacked in that order.
const AFMOE_EXPERTS: Experts = Experts {
    marker: "mlp.experts",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["gate_proj", "up_proj", "down_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// `AfmoeModel.filter_tensors`: the selection bias `….expert_bias` is named as a bias
/// (`….expert_bias.bias`), then Llama's filter.
fn filter(name: &str) -> Option<String> {
    llama::filter(&name.replace(".expert_bias", ".expert_bias.bias"))
}

/// `AfmoeModel.set_gguf_parameters`: Llama's block, then each MoE and attention hparam the
/// config has.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    llama::params(p)?;
    let hp = p.hp;
    if let Some(n) = hp.find_u64(&["num_shared_experts"])? {
        p.u32(llm::EXPERT_SHARED_COUNT, n)?;
    }
    if let Some(n) = hp.find_u64(&["moe_intermediate_size"])? {
        p.u32(llm::EXPERT_FEED_FORWARD_LENGTH, n)?;
    }
    if let Some(n) = hp.find_u64(&["num_dense_layers"])? {
        p.u32(llm::LEADING_DENSE_BLOCK_COUNT, n)?;
    }
    if let Some(b) = hp.find_bool(&["route_norm"])? {
        p.bool(mla::EXPERT_WEIGHTS_NORM, b);
    }
    if let Some(s) = hp.find_f64(&["route_scale"])? {
        p.f32(mla::EXPERT_WEIGHTS_SCALE, s);
    }
    if let Some(w) = hp.find_u64(&["sliding_window"])? {
        p.u32(attention::SLIDING_WINDOW, w)?;
    }
    Ok(())
}
