//! `FalconForCausalLM` (arch `falcon`, `conversion/falcon.py`).
//!
//! The fused `query_key_value` weight holds `n_head_kv` groups of (the group's query heads,
//! one key head, one value head); it is regrouped into all query heads, then all key heads,
//! then all value heads ("jploski" layout, written as `tensor_data_layout`). The context
//! length is always 2048 and the FFN length `4 * hidden_size`.

use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;
use ggufkit::gguf::keys::{attention, llm};
use serde_json::{Map, Value as Json};

/// The Falcon class.
pub const FALCON: Arch = Arch {
    hf_names: &["FalconForCausalLM", "RWForCausalLM"],
    model_types: &[ModelType {
        name: "falcon",
        hf_classes: &["FalconForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 65024,
            "hidden_size" => 4544,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 71,
            "layer_norm_epsilon" => 1e-5,
            "max_position_embeddings" => 2048,
            "rope_theta" => 10000.0,
            "new_decoder_architecture" => false,
            "multi_query" => true,
            "parallel_attn" => true,
            "bias" => false,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_kv_heads"),
        prepare: Some(n_embed),
    }],
    composites: &[],
    gguf: "falcon",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::Output,
        Tensor::OutputNorm,
        Tensor::AttnNorm,
        Tensor::AttnNorm2,
        Tensor::AttnQkv,
        Tensor::AttnOut,
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

/// FalconConfig takes the old `n_embed` as `hidden_size` (and drops it).
fn n_embed(cfg: &mut Map<String, Json>) -> bool {
    if let Some(n) = cfg.remove("n_embed").filter(|n| !n.is_null()) {
        cfg.insert("hidden_size".into(), n);
    }
    true
}

fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    if hp.get("model_type").and_then(Json::as_str) == Some("falcon") && hp.get("head_dim").is_some()
    {
        // FalconConfig's head_dim is a read-only property: transformers cannot load the
        // config (the reference fails in AutoTokenizer), so neither do we.
        return Err(ConvertError::UnsupportedFeature {
            arch: "FalconForCausalLM".into(),
            feature: "config.json sets head_dim, which FalconConfig derives from hidden_size \
                      and num_attention_heads (transformers refuses to load such a config)"
                .into(),
        });
    }
    let n_head = match hp.find_u64(&["num_attention_heads"])? {
        Some(n) => n,
        None => hp.req_u64(&["n_head"])?,
    };
    let n_head_kv = match hp.find_u64(&["num_kv_heads"])? {
        Some(n) => n,
        None => hp.find_u64(&["n_head_kv"])?.unwrap_or(1),
    };
    p.u32(llm::CONTEXT_LENGTH, 2048)?;
    p.string(llm::TENSOR_DATA_LAYOUT, "jploski");
    let hidden = hp.req_u64(&["hidden_size"])?;
    p.u32(llm::EMBEDDING_LENGTH, hidden)?;
    p.u32(llm::FEED_FORWARD_LENGTH, hidden.saturating_mul(4))?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.u32(attention::HEAD_COUNT, n_head)?;
    p.u32(attention::HEAD_COUNT_KV, n_head_kv)?;
    let eps = hp.req_f64(&["layer_norm_epsilon"])?;
    p.f32(attention::LAYERNORM_EPS, eps);
    p.file_type();
    Ok(())
}

/// Row order of the regrouped fused q/k/v: query heads, then key heads, then value heads.
pub fn qkv_rows(n_head: u64, n_head_kv: u64, head_dim: u64) -> Vec<u64> {
    let per_group = n_head / n_head_kv + 2;
    let row = |g: u64, slot: u64, d: u64| (g * per_group + slot) * head_dim + d;
    let mut map = Vec::with_capacity(((n_head + 2 * n_head_kv) * head_dim) as usize);
    for g in 0..n_head_kv {
        for slot in 0..per_group - 2 {
            map.extend((0..head_dim).map(|d| row(g, slot, d)));
        }
    }
    for slot in [per_group - 2, per_group - 1] {
        for g in 0..n_head_kv {
            map.extend((0..head_dim).map(|d| row(g, slot, d)));
        }
    }
    map
}

fn regroup_qkv(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if !name.contains("query_key_value") {
        return Ok(Modified::Pass(name, expr));
    }
    let n_head = hp.req_u64(&["num_attention_heads", "n_head"])?;
    let n_head_kv = match hp.find_u64(&["num_kv_heads", "n_head_kv"])? {
        Some(0) | None => 1,
        Some(n) => n,
    };
    let hidden = hp.req_u64(&["hidden_size"])?;
    let s = expr.shape().to_vec();
    let bad = |problem: String| ConvertError::Tensor {
        name: name.clone(),
        problem,
    };
    if n_head == 0 || n_head % n_head_kv != 0 || hidden % n_head != 0 {
        return Err(bad(format!(
            "{n_head} heads in {n_head_kv} KV groups of a {hidden}-wide model cannot be regrouped"
        )));
    }
    let head_dim = hidden / n_head;
    // `view(n_head_kv, n_head / n_head_kv + 2, head_dim, head_dim * n_head)`.
    let rows = n_head_kv * (n_head / n_head_kv + 2) * head_dim;
    if s != [rows, head_dim * n_head] {
        return Err(bad(format!(
            "shape {s:?} is not the fused q/k/v [{rows}, {}] of {n_head} heads in {n_head_kv} KV groups",
            head_dim * n_head
        )));
    }
    let expr = expr.gather_rows(&name, qkv_rows(n_head, n_head_kv, head_dim))?;
    Ok(Modified::Pass(name, expr))
}

#[cfg(test)]
mod tests {
    use super::qkv_rows;

    #[test]
    fn groups_become_query_then_key_then_value_heads() {
        // 4 query heads in 2 KV groups, head size 1: rows are [q q k v | q q k v].
        assert_eq!(qkv_rows(4, 2, 1), [0, 1, 4, 5, 2, 6, 3, 7]);
        // Multi-query (one group), head size 2.
        assert_eq!(qkv_rows(2, 1, 2), [0, 1, 2, 3, 4, 5, 6, 7]);
    }
}
