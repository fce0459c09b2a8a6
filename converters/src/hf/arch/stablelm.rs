//! `StableLmForCausalLM` (arch `stablelm`, `conversion/stablelm.py`).
//!
//! Its own hparam list: partial rotary dimensions from the rope `partial_rotary_factor`,
//! `use_parallel_residual` (true when absent), LayerNorm epsilon. Optional q/k/v biases;
//! StableLM 2 12B's per-head q/k layer norms (`q_layernorm.norms.{h}`) are stacked into one
//! `[n_head, head_dim]` norm per layer.

use serde_json::Value as Json;

use super::{keep, no_extra, Arch, Experts, Rules, LLAMA_LIKE};
use crate::hf::params::Params;
use crate::hf::tokenizer::VocabKind;
use crate::ConvertError;

/// The StableLM class.
pub const STABLELM: Arch = Arch {
    hf_names: &["StableLmForCausalLM", "StableLMEpochForCausalLM"],
    gguf: "stablelm",
    vocab: VocabKind::Gpt2,
    tensors: &[LLAMA_LIKE, QK_NORM],
    filter: keep,
    rules: Rules {
        experts: &[
            Experts {
                marker: "q_layernorm.norms",
                count_keys: &["num_attention_heads"],
                parts: &["q_layernorm"],
                expert_name: "model.layers.{bid}.self_attn.{w}.norms.{xid}.weight",
                merged_name: "model.layers.{bid}.self_attn.{w}.weight",
            },
            Experts {
                marker: "k_layernorm.norms",
                count_keys: &["num_key_value_heads"],
                parts: &["k_layernorm"],
                expert_name: "model.layers.{bid}.self_attn.{w}.norms.{xid}.weight",
                merged_name: "model.layers.{bid}.self_attn.{w}.weight",
            },
        ],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
};

const QK_NORM: &[(&str, &str)] = &[
    (
        "model.layers.{bid}.self_attn.q_layernorm",
        "blk.{bid}.attn_q_norm",
    ),
    (
        "model.layers.{bid}.self_attn.k_layernorm",
        "blk.{bid}.attn_k_norm",
    ),
];

fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    p.req_u32("context_length", &["max_position_embeddings"])?;
    let hidden = hp.req_u64(&["hidden_size"])?;
    p.u32("embedding_length", hidden)?;
    let n = p.block_count()?;
    p.u32("block_count", n)?;
    p.req_u32("feed_forward_length", &["intermediate_size"])?;
    let pct = hp
        .rope
        .get("partial_rotary_factor")
        .and_then(Json::as_f64)
        .ok_or_else(|| hp.missing(&["partial_rotary_factor"]))?;
    let heads = hp.req_u64(&["num_attention_heads"])?;
    if heads == 0 {
        return Err(hp.missing(&["num_attention_heads"]));
    }
    p.u32("rope.dimension_count", (pct * (hidden / heads) as f64) as u64)?;
    p.u32("attention.head_count", heads)?;
    p.req_u32("attention.head_count_kv", &["num_key_value_heads"])?;
    let parallel = match hp.get("use_parallel_residual") {
        None => true,
        Some(Json::Bool(b)) => *b,
        Some(v) => {
            return Err(ConvertError::format(
                &hp.path,
                None,
                format!("use_parallel_residual: expected a boolean, found {v}"),
            ))
        }
    };
    p.bool("use_parallel_residual", parallel);
    let eps = hp.req_f64(&["layer_norm_eps", "norm_eps"])?;
    p.f32("attention.layer_norm_epsilon", eps);
    p.file_type();
    Ok(())
}
