//! `PhiForCausalLM` (arch `phi2`, `Phi2Model` in `conversion/phi.py`).
//!
//! Phi-1/1.5/2: separate q/k/v projections with biases, `dense` output, a GELU MLP
//! (`fc1`, `fc2`), a final LayerNorm and a biased LM head. Its own hparam list: FFN length
//! `4 * n_embd`, KV heads = heads, partial rotary dimensions, and `add_bos_token = false`
//! (a tokenizer key written with the hparams, so it keeps that position).

use ggufkit::gguf::keys::{attention, llm, rope, tokenizer};
use ggufkit::gguf::Value;
use serde_json::Value as Json;

use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Rules};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The Phi-2 class.
pub const PHI2: Arch = Arch {
    hf_names: &["PhiForCausalLM"],
    model_types: &[ModelType {
        name: "phi",
        hf_classes: &["PhiForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 51200,
            "hidden_size" => 2048,
            "intermediate_size" => 8192,
            "num_hidden_layers" => 24,
            "num_attention_heads" => 32,
            "max_position_embeddings" => 2048,
            "layer_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
            "partial_rotary_factor" => 0.5,
            "qk_layernorm" => false,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "phi2",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::Output,
        Tensor::OutputNorm,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::FfnUp,
        Tensor::FfnDown,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules::NONE,
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let pct = hp
        .rope
        .get("partial_rotary_factor")
        .and_then(Json::as_f64)
        .ok_or_else(|| hp.missing(&["partial_rotary_factor"]))?;
    let n_embd = hp.req_u64(&["hidden_size", "n_embd"])?;
    let n_head = hp.req_u64(&["num_attention_heads", "n_head"])?;
    if n_head == 0 {
        return Err(hp.missing(&["num_attention_heads"]));
    }
    p.req_u32(
        llm::CONTEXT_LENGTH,
        &["n_positions", "max_position_embeddings"],
    )?;
    p.u32(llm::EMBEDDING_LENGTH, n_embd)?;
    p.u32(llm::FEED_FORWARD_LENGTH, n_embd.saturating_mul(4))?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.u32(attention::HEAD_COUNT, n_head)?;
    p.u32(attention::HEAD_COUNT_KV, n_head)?;
    let eps = hp.req_f64(&["layer_norm_epsilon", "layer_norm_eps"])?;
    p.f32(attention::LAYERNORM_EPS, eps);
    p.u32(
        rope::DIMENSION_COUNT,
        (pct * n_embd as f64).trunc() as u64 / n_head,
    )?;
    p.file_type();
    p.md.set(tokenizer::ADD_BOS, Value::Bool(false));
    Ok(())
}
