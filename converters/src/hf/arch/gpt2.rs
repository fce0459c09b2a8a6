//! `GPT2LMHeadModel` (arch `gpt2`, `conversion/gpt2.py`).
//!
//! Conv1D weights (`c_attn`, `c_proj`, `c_fc`) are stored `[in, out]` and are transposed;
//! the hparams are GPT-2's own short list.

use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Rules};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;
use ggufkit::gguf::keys::{attention, llm};

/// The GPT-2 class.
pub const GPT2: Arch = Arch {
    hf_names: &["GPT2LMHeadModel"],
    model_types: &[ModelType {
        name: "gpt2",
        hf_classes: &["GPT2LMHeadModel"],
        defaults: defaults! {
            "vocab_size" => 50257,
            "n_positions" => 1024,
            "n_embd" => 768,
            "n_layer" => 12,
            "n_head" => 12,
            "layer_norm_epsilon" => 1e-5,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "gpt2",
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
    rules: Rules {
        transpose: &[".c_attn.weight", ".c_proj.weight", ".c_fc.weight"],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

fn params(p: &mut Params) -> Result<(), ConvertError> {
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.req_u32(llm::CONTEXT_LENGTH, &["n_ctx"])?;
    let n_embd = p.hp.req_u64(&["n_embd"])?;
    p.u32(llm::EMBEDDING_LENGTH, n_embd)?;
    p.u32(llm::FEED_FORWARD_LENGTH, 4 * n_embd)?;
    p.req_u32(attention::HEAD_COUNT, &["n_head"])?;
    let eps = p.hp.req_f64(&["layer_norm_epsilon"])?;
    p.f32(attention::LAYERNORM_EPS, eps);
    p.file_type();
    Ok(())
}
