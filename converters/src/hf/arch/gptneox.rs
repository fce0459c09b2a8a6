//! `GPTNeoXForCausalLM` (arch `gptneox`, `conversion/gptneox.py`).
//!
//! The fused `query_key_value` weight and bias are stored per head as `[q, k, v]` blocks;
//! they are regrouped into all q rows, then all k rows, then all v rows. Its own hparam
//! list (no `general.file_type`): rotary dimensions from `rotary_pct`, parallel residual.

use ggufkit::gguf::keys::{attention, llm};
use serde_json::{Map, Value as Json};

use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The GPT-NeoX class.
pub const GPTNEOX: Arch = Arch {
    hf_names: &["GPTNeoXForCausalLM"],
    model_types: &[ModelType {
        name: "gpt_neox",
        hf_classes: &["GPTNeoXForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 50432,
            "hidden_size" => 6144,
            "num_hidden_layers" => 44,
            "num_attention_heads" => 64,
            "intermediate_size" => 24576,
            "max_position_embeddings" => 2048,
            "layer_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
            "partial_rotary_factor" => 0.25,
            "use_parallel_residual" => true,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(pop_rotary_keys),
    }],
    composites: &[],
    gguf: "gptneox",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
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
        hook: Some(regroup_qkv),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    p.req_u32(llm::CONTEXT_LENGTH, &["max_position_embeddings"])?;
    let hidden = hp.req_u64(&["hidden_size"])?;
    p.u32(llm::EMBEDDING_LENGTH, hidden)?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.req_u32(llm::FEED_FORWARD_LENGTH, &["intermediate_size"])?;
    let pct = hp.req_f64(&["rotary_pct"])?;
    p.partial_rope_dims(pct)?;
    p.req_u32(attention::HEAD_COUNT, &["num_attention_heads"])?;
    p.parallel_residual()?;
    let eps = hp.req_f64(&["layer_norm_eps"])?;
    p.f32(attention::LAYERNORM_EPS, eps);
    Ok(())
}

/// `rotary_pct` as the reference reads it in the environment it pins (transformers 4.57.6,
/// see conformance/README.md "GPT-NeoX"): GPTNeoXConfig keeps `rotary_pct` (default 0.25)
/// and derives `partial_rotary_factor` and `rope_theta` from `rotary_pct` /
/// `rotary_emb_base`. (transformers 5 folds `rotary_pct` into `rope_parameters` and the
/// reference then fails on `hparams["rotary_pct"]` for every GPT-NeoX.) A config saved by
/// transformers 5 has no `rotary_pct`, only a `partial_rotary_factor` (top level or in
/// `rope_parameters`): that factor is the model's, so it is taken as `rotary_pct` rather than
/// 4.57's default.
fn pop_rotary_keys(cfg: &mut Map<String, Json>) -> bool {
    if !cfg.contains_key("rotary_pct") {
        let v5 = cfg
            .get("partial_rotary_factor")
            .or_else(|| cfg.get("rope_parameters")?.get("partial_rotary_factor"))
            .filter(|v| v.is_number())
            .cloned();
        cfg.insert("rotary_pct".into(), v5.unwrap_or(Json::from(0.25)));
    }
    if let Some(t) = cfg.get("rotary_emb_base").cloned() {
        cfg.insert("rope_theta".into(), t);
    }
    true
}

/// Is `name` `gpt_neox.layers.<digits>.attention.query_key_value.<suffix>`?
fn is_qkv(name: &str, suffix: &str) -> bool {
    name.strip_prefix("gpt_neox.layers.")
        .and_then(|r| r.split_once('.'))
        .is_some_and(|(n, rest)| {
            !n.is_empty()
                && n.chars().all(|c| c.is_ascii_digit())
                && rest.starts_with(&format!("attention.query_key_value.{suffix}"))
        })
}

/// Row order of `reshape(n_head, 3, head_dim, …)` split into q, k, v and concatenated.
pub(super) fn qkv_rows(n_head: u64, head_dim: u64) -> Vec<u64> {
    let mut map = Vec::with_capacity((3 * n_head * head_dim) as usize);
    for part in 0..3 {
        for h in 0..n_head {
            for d in 0..head_dim {
                map.push((h * 3 + part) * head_dim + d);
            }
        }
    }
    map
}

fn regroup_qkv(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let weight = is_qkv(&name, "weight");
    if !weight && !is_qkv(&name, "bias") {
        return Ok(Modified::Pass(name, expr));
    }
    let n_head = hp
        .find_u64(&["n_head"])?
        .or(hp.find_u64(&["num_attention_heads"])?)
        .ok_or_else(|| hp.missing(&["n_head", "num_attention_heads"]))?;
    let n_embd = hp
        .find_u64(&["hidden_size"])?
        .or(hp.find_u64(&["n_embed"])?)
        .ok_or_else(|| hp.missing(&["hidden_size", "n_embed"]))?;
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
    let map = qkv_rows(n_head, n_embd / n_head);
    let expr = expr.gather_rows(&name, map)?;
    Ok(Modified::Pass(name, expr))
}

#[cfg(test)]
mod tests {
    use super::{is_qkv, qkv_rows};

    #[test]
    fn per_head_qkv_blocks_are_regrouped() {
        // 2 heads of size 2, rows stored as [q0 k0 v0 q1 k1 v1].
        assert_eq!(qkv_rows(2, 2), [0, 1, 6, 7, 2, 3, 8, 9, 4, 5, 10, 11]);
        assert!(is_qkv(
            "gpt_neox.layers.12.attention.query_key_value.weight",
            "weight"
        ));
        assert!(is_qkv(
            "gpt_neox.layers.0.attention.query_key_value.bias",
            "bias"
        ));
        assert!(!is_qkv(
            "gpt_neox.layers.x.attention.query_key_value.weight",
            "weight"
        ));
    }
}
