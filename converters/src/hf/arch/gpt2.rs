//! `GPT2LMHeadModel` (arch `gpt2`, `conversion/gpt2.py`).
//!
//! Conv1D weights (`c_attn`, `c_proj`, `c_fc`) are stored `[in, out]` and are transposed;
//! the hparams are GPT-2's own short list.

use super::{keep, no_extra, Arch, Rules};
use crate::hf::params::Params;
use crate::hf::tokenizer::VocabKind;
use crate::ConvertError;

/// The GPT-2 class.
pub const GPT2: Arch = Arch {
    hf_names: &["GPT2LMHeadModel"],
    gguf: "gpt2",
    vocab: VocabKind::Gpt2,
    tensors: &[TENSORS],
    filter: keep,
    rules: Rules {
        transpose: &[".c_attn.weight", ".c_proj.weight", ".c_fc.weight"],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
};

const TENSORS: &[(&str, &str)] = &[
    ("transformer.wte", "token_embd"),
    ("wte", "token_embd"),
    ("transformer.wpe", "position_embd"),
    ("wpe", "position_embd"),
    ("transformer.ln_f", "output_norm"),
    ("ln_f", "output_norm"),
    ("lm_head", "output"),
    ("transformer.h.{bid}.ln_1", "blk.{bid}.attn_norm"),
    ("h.{bid}.ln_1", "blk.{bid}.attn_norm"),
    ("transformer.h.{bid}.attn.c_attn", "blk.{bid}.attn_qkv"),
    ("h.{bid}.attn.c_attn", "blk.{bid}.attn_qkv"),
    ("transformer.h.{bid}.attn.c_proj", "blk.{bid}.attn_output"),
    ("h.{bid}.attn.c_proj", "blk.{bid}.attn_output"),
    ("transformer.h.{bid}.ln_2", "blk.{bid}.ffn_norm"),
    ("h.{bid}.ln_2", "blk.{bid}.ffn_norm"),
    ("transformer.h.{bid}.mlp.c_fc", "blk.{bid}.ffn_up"),
    ("h.{bid}.mlp.c_fc", "blk.{bid}.ffn_up"),
    ("transformer.h.{bid}.mlp.c_proj", "blk.{bid}.ffn_down"),
    ("h.{bid}.mlp.c_proj", "blk.{bid}.ffn_down"),
];

fn params(p: &mut Params) -> Result<(), ConvertError> {
    let n = p.block_count()?;
    p.u32("block_count", n)?;
    p.req_u32("context_length", &["n_ctx"])?;
    let n_embd = p.hp.req_u64(&["n_embd"])?;
    p.u32("embedding_length", n_embd)?;
    p.u32("feed_forward_length", 4 * n_embd)?;
    p.req_u32("attention.head_count", &["n_head"])?;
    let eps = p.hp.req_f64(&["layer_norm_epsilon"])?;
    p.f32("attention.layer_norm_epsilon", eps);
    p.file_type();
    Ok(())
}
