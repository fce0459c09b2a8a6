//! `Exaone4ForCausalLM` (arch `exaone4`, `Exaone4Model` in `conversion/exaone.py`).
//!
//! Norms after attention and FFN (no pre-norms), q/k norms, the generic hparams plus
//! `vocab_size`, the sliding window with its per-layer pattern (from `layer_types`, else
//! from `sliding_window_pattern` as an "LLLG" string or a period), and Llama-3 rope factors
//! (default factor 16).

use serde_json::Value as Json;

use super::qwen::QK_NORM;
use super::{keep, llama, Arch, Extra, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::params::Params;
use crate::hf::tokenizer::VocabKind;
use crate::ConvertError;

/// The EXAONE 4 class.
pub const EXAONE4: Arch = Arch {
    hf_names: &["Exaone4ForCausalLM"],
    gguf: "exaone4",
    vocab: VocabKind::Gpt2,
    tensors: &[TENSORS, QK_NORM],
    filter: keep,
    rules: Rules::NONE,
    params,
    extra,
};

const TENSORS: &[(&str, &str)] = &[
    ("model.embed_tokens", "token_embd"),
    ("model.norm", "output_norm"),
    ("lm_head", "output"),
    ("model.layers.{bid}.self_attn.q_proj", "blk.{bid}.attn_q"),
    ("model.layers.{bid}.self_attn.k_proj", "blk.{bid}.attn_k"),
    ("model.layers.{bid}.self_attn.v_proj", "blk.{bid}.attn_v"),
    (
        "model.layers.{bid}.self_attn.o_proj",
        "blk.{bid}.attn_output",
    ),
    (
        "model.layers.{bid}.post_attention_layernorm",
        "blk.{bid}.post_attention_norm",
    ),
    (
        "model.layers.{bid}.post_feedforward_layernorm",
        "blk.{bid}.post_ffw_norm",
    ),
    ("model.layers.{bid}.mlp.gate_proj", "blk.{bid}.ffn_gate"),
    ("model.layers.{bid}.mlp.up_proj", "blk.{bid}.ffn_up"),
    ("model.layers.{bid}.mlp.down_proj", "blk.{bid}.ffn_down"),
];

fn extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    llama::llama3_rope_freqs(hp, 16.0)
}

fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.req_u32("vocab_size", &["vocab_size"])?;
    let hp = p.hp;
    let sw = match hp.get("sliding_window") {
        None | Some(Json::Null) => return Ok(()),
        Some(v) => json_u64(v).ok_or_else(|| {
            ConvertError::format(
                &hp.path,
                None,
                format!("sliding_window: not an integer: {v}"),
            )
        })?,
    };
    p.u32("attention.sliding_window", sw)?;
    if let Some(pattern) = p.layer_types_pattern()? {
        p.bools("attention.sliding_window_pattern", pattern);
        return Ok(());
    }
    let n_layers = hp.req_u64(&["num_hidden_layers"])?;
    let pattern: Vec<bool> = match hp.get("sliding_window_pattern") {
        // "LLLG": local where the letter is L, repeating.
        Some(Json::String(s)) if !s.is_empty() => {
            let c: Vec<char> = s.chars().collect();
            (0..n_layers)
                .map(|i| c[(i % c.len() as u64) as usize] == 'L')
                .collect()
        }
        Some(Json::Number(n)) => match n.as_u64() {
            Some(0) => {
                return Err(ConvertError::format(
                    &hp.path,
                    None,
                    "sliding_window_pattern 0 divides by zero",
                ))
            }
            Some(k) => (0..n_layers).map(|i| (i + 1) % k != 0).collect(),
            None => Vec::new(),
        },
        _ => Vec::new(),
    };
    if pattern.len() as u64 == n_layers {
        p.bools("attention.sliding_window_pattern", pattern);
    }
    Ok(())
}
