//! `Ernie4_5ForCausalLM` (arch `ernie4_5`, `Ernie4_5Model` in `conversion/ernie.py`).
//!
//! The generic text model with a SentencePiece vocabulary (and `add_space_prefix` from
//! tokenizer_config.json when it has the key); Paddle checkpoints' `ernie.` prefix becomes
//! `model.`, their fused `qkv_proj` is split into q/k/v and `up_gate_proj` into gate (first
//! half) and up.

use super::{no_extra, Arch, HeadDim, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::DECODER;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The ERNIE 4.5 (dense) class.
pub const ERNIE4_5: Arch = Arch {
    hf_names: &["Ernie4_5ForCausalLM", "Ernie4_5_ForCausalLM"],
    model_types: &[ModelType {
        name: "ernie4_5",
        hf_classes: &["Ernie4_5ForCausalLM", "Ernie4_5_ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 103424,
            "hidden_size" => 1024,
            "intermediate_size" => 3072,
            "num_hidden_layers" => 18,
            "num_attention_heads" => 16,
            "num_key_value_heads" => 2,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 500000.0,
            "use_bias" => false,
            "head_dim" => 128,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "ernie4_5",
    vocab: VocabKind::Ernie,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(split_fused),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
};

fn filter(name: &str) -> Option<String> {
    Some(name.replace("ernie.", "model."))
}

fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()
}

fn split_fused(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name.contains("qkv_proj") {
        let heads = hp.req_u64(&["num_attention_heads"])?;
        let kv = hp.req_u64(&["num_key_value_heads"])?;
        let head_dim = match hp.find_u64(&["head_dim"])? {
            Some(d) => d,
            None if heads > 0 => hp.req_u64(&["hidden_size"])? / heads,
            None => return Err(hp.missing(&["num_attention_heads"])),
        };
        let (q, k) = (heads * head_dim, kv * head_dim);
        let rows = expr.shape().first().copied().unwrap_or(0);
        if rows != q + 2 * k {
            return Err(ConvertError::Tensor {
                name,
                problem: format!("{rows} rows cannot be split into q {q}, k {k}, v {k}"),
            });
        }
        let out = vec![
            (
                name.replace("qkv_proj.weight", "q_proj.weight"),
                expr.clone().narrow(&name, 0, 0, q)?,
            ),
            (
                name.replace("qkv_proj.weight", "k_proj.weight"),
                expr.clone().narrow(&name, 0, q, k)?,
            ),
            (
                name.replace("qkv_proj.weight", "v_proj.weight"),
                expr.narrow(&name, 0, q + k, k)?,
            ),
        ];
        return Ok(Modified::Out(out));
    }
    if name.contains("up_gate_proj") {
        let rows = expr.shape().first().copied().unwrap_or(0);
        let half = rows / 2;
        let out = vec![
            (
                name.replace("up_gate_proj.weight", "gate_proj.weight"),
                expr.clone().narrow(&name, 0, 0, half)?,
            ),
            (
                name.replace("up_gate_proj.weight", "up_proj.weight"),
                expr.narrow(&name, 0, half, half)?,
            ),
        ];
        return Ok(Modified::Out(out));
    }
    Ok(Modified::Pass(name, expr))
}
