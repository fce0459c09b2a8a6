//! StarCoder 2 and GPT-BigCode (`conversion/starcoder.py`).
//!
//! `Starcoder2ForCausalLM` (arch `starcoder2`) is the generic text model: the generic
//! hparams (LayerNorm epsilon from `norm_epsilon`), biases on every projection, a
//! non-gated MLP (`c_fc`, `c_proj`). `GPTBigCodeForCausalLM` (arch `starcoder`) is GPT-2
//! shaped with multi-query attention (one KV head) and learned positions.

use super::{keep, no_extra, Arch, Rules, LLAMA_LIKE};
use crate::hf::params::Params;
use crate::hf::tokenizer::VocabKind;
use crate::ConvertError;

/// `Starcoder2ForCausalLM` (arch `starcoder2`).
pub const STARCODER2: Arch = Arch {
    hf_names: &["Starcoder2ForCausalLM"],
    gguf: "starcoder2",
    vocab: VocabKind::Gpt2,
    tensors: &[LLAMA_LIKE, STARCODER2_MLP],
    filter: keep,
    rules: Rules::NONE,
    params: starcoder2_params,
    extra: no_extra,
};

/// `GPTBigCodeForCausalLM` (arch `starcoder`).
pub const STARCODER: Arch = Arch {
    hf_names: &["GPTBigCodeForCausalLM"],
    gguf: "starcoder",
    vocab: VocabKind::Gpt2,
    tensors: &[BIGCODE],
    filter: keep,
    rules: Rules::NONE,
    params: starcoder_params,
    extra: no_extra,
};

const STARCODER2_MLP: &[(&str, &str)] = &[
    ("model.layers.{bid}.mlp.c_fc", "blk.{bid}.ffn_up"),
    ("model.layers.{bid}.mlp.c_proj", "blk.{bid}.ffn_down"),
];

const BIGCODE: &[(&str, &str)] = &[
    ("transformer.wte", "token_embd"),
    ("transformer.wpe", "position_embd"),
    ("transformer.ln_f", "output_norm"),
    ("lm_head", "output"),
    ("transformer.h.{bid}.ln_1", "blk.{bid}.attn_norm"),
    ("transformer.h.{bid}.attn.c_attn", "blk.{bid}.attn_qkv"),
    ("transformer.h.{bid}.attn.c_proj", "blk.{bid}.attn_output"),
    ("transformer.h.{bid}.ln_2", "blk.{bid}.ffn_norm"),
    ("transformer.h.{bid}.mlp.c_fc", "blk.{bid}.ffn_up"),
    ("transformer.h.{bid}.mlp.c_proj", "blk.{bid}.ffn_down"),
];

fn starcoder2_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()
}

fn starcoder_params(p: &mut Params) -> Result<(), ConvertError> {
    p.req_u32("context_length", &["n_positions"])?;
    let n_embd = p.hp.req_u64(&["n_embd"])?;
    p.u32("embedding_length", n_embd)?;
    p.u32("feed_forward_length", n_embd.saturating_mul(4))?;
    let n = p.block_count()?;
    p.u32("block_count", n)?;
    p.req_u32("attention.head_count", &["n_head"])?;
    p.u32("attention.head_count_kv", 1)?;
    let eps = p.hp.req_f64(&["layer_norm_epsilon"])?;
    p.f32("attention.layer_norm_epsilon", eps);
    p.file_type();
    Ok(())
}
