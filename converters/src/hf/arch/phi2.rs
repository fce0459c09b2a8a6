//! `PhiForCausalLM` (arch `phi2`, `Phi2Model` in `conversion/phi.py`).
//!
//! Phi-1/1.5/2: separate q/k/v projections with biases, `dense` output, a GELU MLP
//! (`fc1`, `fc2`), a final LayerNorm and a biased LM head. Its own hparam list: FFN length
//! `4 * n_embd`, KV heads = heads, partial rotary dimensions, and `add_bos_token = false`
//! (a tokenizer key written with the hparams, so it keeps that position).

use ggufkit::gguf::Value;
use serde_json::Value as Json;

use super::{keep, no_extra, Arch, Rules};
use crate::hf::params::Params;
use crate::hf::tokenizer::VocabKind;
use crate::ConvertError;

/// The Phi-2 class.
pub const PHI2: Arch = Arch {
    hf_names: &["PhiForCausalLM"],
    gguf: "phi2",
    vocab: VocabKind::Gpt2,
    tensors: &[TENSORS],
    filter: keep,
    rules: Rules::NONE,
    params,
    extra: no_extra,
};

const TENSORS: &[(&str, &str)] = &[
    ("model.embed_tokens", "token_embd"),
    ("transformer.embd.wte", "token_embd"),
    ("model.final_layernorm", "output_norm"),
    ("lm_head.ln", "output_norm"),
    ("lm_head", "output"),
    ("lm_head.linear", "output"),
    ("model.layers.{bid}.input_layernorm", "blk.{bid}.attn_norm"),
    ("transformer.h.{bid}.ln", "blk.{bid}.attn_norm"),
    ("transformer.h.{bid}.mixer.Wqkv", "blk.{bid}.attn_qkv"),
    ("model.layers.{bid}.self_attn.q_proj", "blk.{bid}.attn_q"),
    ("model.layers.{bid}.self_attn.k_proj", "blk.{bid}.attn_k"),
    ("model.layers.{bid}.self_attn.v_proj", "blk.{bid}.attn_v"),
    (
        "model.layers.{bid}.self_attn.dense",
        "blk.{bid}.attn_output",
    ),
    (
        "transformer.h.{bid}.mixer.out_proj",
        "blk.{bid}.attn_output",
    ),
    ("model.layers.{bid}.mlp.fc1", "blk.{bid}.ffn_up"),
    ("transformer.h.{bid}.mlp.fc1", "blk.{bid}.ffn_up"),
    ("model.layers.{bid}.mlp.fc2", "blk.{bid}.ffn_down"),
    ("transformer.h.{bid}.mlp.fc2", "blk.{bid}.ffn_down"),
];

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
        "context_length",
        &["n_positions", "max_position_embeddings"],
    )?;
    p.u32("embedding_length", n_embd)?;
    p.u32("feed_forward_length", n_embd.saturating_mul(4))?;
    let n = p.block_count()?;
    p.u32("block_count", n)?;
    p.u32("attention.head_count", n_head)?;
    p.u32("attention.head_count_kv", n_head)?;
    let eps = hp.req_f64(&["layer_norm_epsilon", "layer_norm_eps"])?;
    p.f32("attention.layer_norm_epsilon", eps);
    p.u32(
        "rope.dimension_count",
        (pct * n_embd as f64).trunc() as u64 / n_head,
    )?;
    p.file_type();
    p.md.set("tokenizer.ggml.add_bos_token", Value::Bool(false));
    Ok(())
}
