//! StarCoder 2 and GPT-BigCode (`conversion/starcoder.py`).
//!
//! `Starcoder2ForCausalLM` (arch `starcoder2`) is the generic text model: the generic
//! hparams (LayerNorm epsilon from `norm_epsilon`), biases on every projection, a
//! non-gated MLP (`c_fc`, `c_proj`). `GPTBigCodeForCausalLM` (arch `starcoder`) is GPT-2
//! shaped with multi-query attention (one KV head) and learned positions.

use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Rules};
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;
use ggufkit::gguf::keys::{attention, llm};

/// `Starcoder2ForCausalLM` (arch `starcoder2`).
pub const STARCODER2: Arch = Arch {
    hf_names: &["Starcoder2ForCausalLM"],
    model_types: &[ModelType {
        name: "starcoder2",
        hf_classes: &["Starcoder2ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 49152,
            "hidden_size" => 3072,
            "intermediate_size" => 12288,
            "num_hidden_layers" => 30,
            "num_attention_heads" => 24,
            "num_key_value_heads" => 2,
            "max_position_embeddings" => 4096,
            "norm_epsilon" => 1e-5,
            "rope_theta" => 10000.0,
            "sliding_window" => serde_json::Value::Null,
            "use_bias" => true,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "starcoder2",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules::NONE,
    params: starcoder2_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `GPTBigCodeForCausalLM` (arch `starcoder`).
pub const STARCODER: Arch = Arch {
    hf_names: &["GPTBigCodeForCausalLM"],
    // GPTBigCodeConfig's defaults (a config without `n_positions` gets 1024).
    model_types: &[ModelType {
        name: "gpt_bigcode",
        hf_classes: &["GPTBigCodeForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 50257,
            "n_positions" => 1024,
            "n_embd" => 768,
            "n_layer" => 12,
            "n_head" => 12,
            "layer_norm_epsilon" => 1e-5,
            "multi_query" => true,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "starcoder",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::PosEmbd,
        Tensor::Output,
        Tensor::OutputNorm,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnUp,
        Tensor::FfnDown,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules::NONE,
    params: starcoder_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

fn starcoder2_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()
}

fn starcoder_params(p: &mut Params) -> Result<(), ConvertError> {
    p.req_u32(llm::CONTEXT_LENGTH, &["n_positions"])?;
    let n_embd = p.hp.req_u64(&["n_embd"])?;
    p.u32(llm::EMBEDDING_LENGTH, n_embd)?;
    p.u32(llm::FEED_FORWARD_LENGTH, n_embd.saturating_mul(4))?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.req_u32(attention::HEAD_COUNT, &["n_head"])?;
    p.u32(attention::HEAD_COUNT_KV, 1)?;
    let eps = p.hp.req_f64(&["layer_norm_epsilon"])?;
    p.f32(attention::LAYERNORM_EPS, eps);
    p.file_type();
    Ok(())
}
