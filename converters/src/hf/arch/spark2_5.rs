//! `Spark2_5ForCausalLM` (arch `spark2_5`, `Spark2_5Model` in `conversion/spark2_5.py`).
//!
//! Remote code (no transformers config class: the config is read as written). A Llama
//! layout with the fused `q_k_v_proj` written whole as `attn_qkv` and a head-wise attention
//! output gate `g_proj` (one row per head, checked), no q/k permutation. The class refuses
//! configs other than its own: `layer_types` one per block, each sliding or full;
//! head-wise sigmoid gates; GELU. The hparams are the generic block, then `vocab_size`, the
//! sliding window and its per-layer pattern, and the rope dimensions of full and sliding
//! layers, `int(head_dim * partial_rotary_factor)` from each layer type's rope dict. The
//! vocabulary is GPT-2 BPE.

use ggufkit::gguf::keys::{attention, llm, rope};
use serde_json::{Map, Value as Json};

use super::{keep, no_extra, Arch, Hooks, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The Spark 2.5 class.
pub const SPARK2_5: Arch = Arch {
    hf_names: &["Spark2_5ForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "spark2_5",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, &[Tensor::AttnQkv, Tensor::AttnGate]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(fused_qkv_and_gate),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The class's refusal of a config it was not written for.
fn refuse(hp: &Hparams, why: String) -> ConvertError {
    ConvertError::UnsupportedFeature {
        arch: hp.arch.clone(),
        feature: why,
    }
}

/// `Spark2_5Model.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    let types = match hp.find(&["layer_types"]) {
        Some(Json::Array(a)) => a,
        Some(v) => {
            return Err(ConvertError::BadHparam {
                path: hp.path.clone(),
                keys: vec!["layer_types".into()],
                expected: "a list of layer types".into(),
                found: v.to_string(),
            })
        }
        None => return Err(hp.missing(&["layer_types"])),
    };
    let blocks = p.block_count()?;
    if types.len() as u64 != blocks {
        return Err(refuse(
            hp,
            format!("{} layer_types for {blocks} blocks", types.len()),
        ));
    }
    let mut sliding = Vec::with_capacity(types.len());
    for t in types {
        match t.as_str() {
            Some("sliding_attention") => sliding.push(true),
            Some("full_attention") => sliding.push(false),
            _ => return Err(refuse(hp, format!("unsupported layer type {t}"))),
        }
    }
    let sigmoid = hp.find(&["gate_attn_act_mode"]).and_then(Json::as_str) == Some("sigmoid");
    let headwise = hp.find(&["headwise_attn_output_gate"]) == Some(&Json::Bool(true));
    if !sigmoid || !headwise {
        return Err(refuse(
            hp,
            "the conversion requires head-wise sigmoid attention gates".into(),
        ));
    }
    if hp.find(&["hidden_act"]).and_then(Json::as_str) != Some("gelu") {
        return Err(refuse(
            hp,
            "the conversion requires GELU (hidden_act)".into(),
        ));
    }
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    p.req_u32(attention::SLIDING_WINDOW, &["sliding_window"])?;
    p.bools(attention::SLIDING_WINDOW_PATTERN, sliding);
    let head_dim = hp.req_u64(&["head_dim"])?;
    let full = rotary_dims(hp, "full_attention", head_dim)?;
    let swa = rotary_dims(hp, "sliding_attention", head_dim)?;
    p.u32(rope::DIMENSION_COUNT, full)?;
    p.u32(rope::DIMENSION_COUNT_SWA, swa)
}

/// `int(head_dim * float(rope_parameters[layer_type]["partial_rotary_factor"]))`.
fn rotary_dims(hp: &Hparams, layer_type: &str, head_dim: u64) -> Result<u64, ConvertError> {
    let key = format!("rope_parameters.{layer_type}.partial_rotary_factor");
    let dict: Option<&Map<String, Json>> = hp.rope.get(layer_type).and_then(Json::as_object);
    let factor = dict
        .and_then(|d| d.get("partial_rotary_factor"))
        .ok_or_else(|| hp.missing(&[key.as_str()]))?;
    let f = match factor {
        Json::Number(n) => n.as_f64(),
        Json::String(s) => s.trim().parse::<f64>().ok(),
        Json::Bool(b) => Some(f64::from(u8::from(*b))),
        _ => None,
    };
    let dims = f
        .map(|f| head_dim as f64 * f)
        .filter(|d| d.is_finite() && *d >= 0.0);
    dims.map(|d| d.trunc() as u64)
        .ok_or_else(|| ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec![key],
            expected: "a non-negative number".into(),
            found: factor.to_string(),
        })
}

/// `Spark2_5Model.modify_tensors`: `q_k_v_proj` is `attn_qkv` as it is; `g_proj` must have
/// one row per attention head.
fn fused_qkv_and_gate(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name.ends_with(".self_attn.q_k_v_proj.weight") {
        let bid = block_id(&name).ok_or_else(|| ConvertError::Tensor {
            name: name.clone(),
            problem: "a fused QKV tensor without a block number".into(),
        })?;
        return Ok(Modified::Out(vec![(
            format!("blk.{bid}.attn_qkv.weight"),
            expr,
        )]));
    }
    if name.ends_with(".self_attn.g_proj.weight") {
        let heads = hp.req_u64(&["num_attention_heads"])?;
        let rows = expr.shape().first().copied().unwrap_or(0);
        if rows != heads {
            return Err(ConvertError::Tensor {
                name,
                problem: format!("an attention gate of {rows} rows for {heads} heads"),
            });
        }
    }
    Ok(Modified::Pass(name, expr))
}
