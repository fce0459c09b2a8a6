//! `BloomForCausalLM`, `BloomModel` (arch `bloom`, `BloomModel(TextModel)` in
//! `conversion/bloom.py`).
//!
//! ALiBi attention (no rope), an embedding layernorm, a GELU FFN four times the hidden
//! size. Every `transformer.` in a tensor name is dropped; the fused `query_key_value`
//! stores each head's q, k and v rows together and is regrouped into all q rows, then all
//! k, then all v (GPT-2's layout), weight and bias alike. The hparams are written by the
//! class itself: the context length is `seq_length`, else the hidden size.

use ggufkit::gguf::keys::{attention, llm};

use super::{gptneox, keep, no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The BLOOM classes.
pub const BLOOM: Arch = Arch {
    hf_names: &["BloomForCausalLM", "BloomModel"],
    model_types: &[ModelType {
        name: "bloom",
        hf_classes: &["BloomForCausalLM", "BloomModel"],
        defaults: defaults! {
            "vocab_size" => 250880,
            "hidden_size" => 64,
            "n_layer" => 2,
            "n_head" => 8,
            "layer_norm_epsilon" => 1e-5,
            "bos_token_id" => 1,
            "eos_token_id" => 2,
            "apply_residual_connection_post_layernorm" => false,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "bloom",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::TokenEmbdNorm,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnDown,
        Tensor::FfnUp,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(modify),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `n_head` (else `num_attention_heads`) and `hidden_size` (else `n_embed`).
fn heads_and_width(hp: &Hparams) -> Result<(u64, u64), ConvertError> {
    let n_head = hp
        .find_u64(&["n_head"])?
        .or(hp.find_u64(&["num_attention_heads"])?)
        .ok_or_else(|| hp.missing(&["n_head", "num_attention_heads"]))?;
    let n_embd = hp
        .find_u64(&["hidden_size"])?
        .or(hp.find_u64(&["n_embed"])?)
        .ok_or_else(|| hp.missing(&["hidden_size", "n_embed"]))?;
    Ok((n_head, n_embd))
}

/// Whether `name` starts with `h.<digits>.self_attention.query_key_value.<suffix>`.
fn is_qkv(name: &str, suffix: &str) -> bool {
    name.strip_prefix("h.")
        .and_then(|r| r.split_once('.'))
        .is_some_and(|(n, rest)| {
            !n.is_empty()
                && n.chars().all(|c| c.is_ascii_digit())
                && rest.starts_with(&format!("self_attention.query_key_value.{suffix}"))
        })
}

/// `BloomModel.modify_tensors`.
fn modify(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let (n_head, n_embd) = heads_and_width(hp)?;
    let name = name.replace("transformer.", "");
    let weight = is_qkv(&name, "weight");
    if !weight && !is_qkv(&name, "bias") {
        return Ok(Modified::Pass(name, expr));
    }
    let s = expr.shape();
    let fits = n_head > 0
        && n_embd % n_head == 0
        && if weight {
            s == [3 * n_embd, n_embd]
        } else {
            s == [3 * n_embd]
        };
    if !fits {
        return Err(ConvertError::Tensor {
            name,
            problem: format!(
                "shape {s:?} is not the fused q/k/v of {n_head} heads and {n_embd} features"
            ),
        });
    }
    let expr = expr.gather_rows(&name, gptneox::qkv_rows(n_head, n_embd / n_head))?;
    Ok(Modified::Pass(name, expr))
}

/// `BloomModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let (n_head, n_embd) = heads_and_width(p.hp)?;
    let ctx = match p.hp.get("seq_length") {
        None => n_embd,
        Some(_) => p.hp.req_u64(&["seq_length"])?,
    };
    p.u32(llm::CONTEXT_LENGTH, ctx)?;
    p.u32(llm::EMBEDDING_LENGTH, n_embd)?;
    let ff = n_embd
        .checked_mul(4)
        .ok_or_else(|| ConvertError::NotACount {
            key: "hidden_size".into(),
            value: n_embd.to_string(),
        })?;
    p.u32(llm::FEED_FORWARD_LENGTH, ff)?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.u32(attention::HEAD_COUNT, n_head)?;
    p.u32(attention::HEAD_COUNT_KV, n_head)?;
    let eps = p.hp.req_f64(&["layer_norm_epsilon"])?;
    p.f32(attention::LAYERNORM_EPS, eps);
    p.file_type();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::is_qkv;

    /// Only block `query_key_value` tensors are regrouped (after `transformer.` is gone).
    #[test]
    fn bloom_qkv_names() {
        assert!(is_qkv(
            "h.3.self_attention.query_key_value.weight",
            "weight"
        ));
        assert!(is_qkv("h.3.self_attention.query_key_value.bias", "bias"));
        assert!(!is_qkv("h.3.self_attention.dense.weight", "weight"));
        assert!(!is_qkv(
            "h.x.self_attention.query_key_value.weight",
            "weight"
        ));
    }
}
