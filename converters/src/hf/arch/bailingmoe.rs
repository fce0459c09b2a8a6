//! `BailingMoeForCausalLM` (arch `bailingmoe`, `BailingMoeModel` in `conversion/bailingmoe.py`).
//!
//! Ling 1.0 (inclusionAI's remote code, read as written: transformers has no config class):
//!
//! - the fused `attention.query_key_value.weight` is split into q, k and v (`num_attention_heads`
//!   and `num_key_value_heads` heads of `head_dim`, else `hidden_size / num_attention_heads`),
//!   q and k with Llama's rotary permutation (k by the KV head count); a fused bias stays whole
//!   (`attn_qkv.bias`), as `attention.dense` is the attention output;
//! - every block's experts (per-expert `down/gate/up_proj` under `mlp.experts.{xid}`, stacked
//!   in that order) with shared experts and the router `mlp.gate`; there is no dense FFN
//!   tensor in the architecture, so a checkpoint with `first_k_dense_replace` dense blocks
//!   is refused as the reference refuses it (no name for `mlp.gate_proj`);
//! - `norm_head` divides an untied LM head by its column norms (`torch.norm(p=2, dim=0) +
//!   1e-7`): torch sums those norms in an order that depends on its thread count, so no
//!   converter reproduces it bit for bit, and such a head is refused (a tied head is not
//!   touched by the class and converts);
//! - the generic hparams, the rope dimension count (`head_dim`), the dense-block count, the
//!   vocabulary size, the expert FFN size, an expert weight scale of 1, the shared-expert
//!   count and `norm_topk_prob`. GPT-2 BPE vocabulary.

use ggufkit::gguf::keys::{llm, mla, rope};

use super::{Arch, Experts, Hooks, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor};
use crate::hf::params::Params;
use crate::hf::tokenizer::{json_truthy, VocabKind, VocabQuirks};
use crate::ConvertError;

/// Ling 1.0 (MoE).
pub const BAILINGMOE: Arch = Arch {
    hf_names: &["BailingMoeForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "bailingmoe",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::FfnGateInp,
        Tensor::FfnNorm,
        Tensor::FfnGateExp,
        Tensor::FfnDownExp,
        Tensor::FfnUpExp,
        Tensor::FfnGateShexp,
        Tensor::FfnDownShexp,
        Tensor::FfnUpShexp,
    ]],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        experts: &[EXPERTS],
        hook: Some(modify),
        ..Rules::NONE
    },
    params,
    extra: super::no_extra,
    hooks: Hooks::NONE,
};

/// Per-expert `down/gate/up_proj` under `mlp.experts.{xid}`, stacked in that order.
const EXPERTS: Experts = Experts {
    marker: "mlp.experts",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// The fused attention input.
const QKV_SUFFIX: &str = "query_key_value.weight";

/// The LM head, which `norm_head` normalises.
const HEAD: &str = "lm_head.weight";

/// `head_dim`, else `hidden_size / num_attention_heads` (floor division).
fn head_dim(hp: &Hparams) -> Result<u64, ConvertError> {
    match hp.get("head_dim") {
        Some(v) if !v.is_null() => hp.req_u64(&["head_dim"]),
        _ => {
            let heads = hp.req_u64(&["num_attention_heads"])?;
            hp.req_u64(&["hidden_size"])?
                .checked_div(heads)
                .ok_or_else(|| hp.missing(&["num_attention_heads"]))
        }
    }
}

/// `BailingMoeModel.modify_tensors` before the expert stacking: the q/k/v split and the
/// `norm_head` refusal.
fn modify(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name == HEAD && hp.get("norm_head").is_some_and(json_truthy) {
        return Err(ConvertError::UnsupportedFeature {
            arch: hp.arch.clone(),
            feature: format!(
                "{HEAD} with norm_head: the reference divides the head by its column norms, \
                 which torch sums in an order that depends on its thread count, so the \
                 result cannot be reproduced bit for bit"
            ),
        });
    }
    if !name.ends_with(QKV_SUFFIX) {
        return Ok(Modified::Pass(name, expr));
    }
    split_qkv(hp, name, expr)
}

/// The fused `query_key_value.weight` as q, k (both permuted) and v.
fn split_qkv(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let bid = block_id(&name).ok_or_else(|| ConvertError::Tensor {
        name: name.clone(),
        problem: "a fused query_key_value outside a numbered layer".into(),
    })?;
    let n_head = hp.req_u64(&["num_attention_heads"])?;
    let n_kv = hp.req_u64(&["num_key_value_heads"])?;
    let hd = head_dim(hp)?;
    let (q_rows, kv_rows) = (n_head.saturating_mul(hd), n_kv.saturating_mul(hd));
    let rows = expr.shape().first().copied().unwrap_or(0);
    if q_rows.checked_add(kv_rows.saturating_mul(2)) != Some(rows) {
        return Err(ConvertError::Tensor {
            name,
            problem: format!(
                "{rows} rows cannot be split into q, k and v of {q_rows}, {kv_rows} and \
                 {kv_rows} rows"
            ),
        });
    }
    let q = expr.clone().narrow(&name, 0, 0, q_rows)?;
    let k = expr.clone().narrow(&name, 0, q_rows, kv_rows)?;
    let v = expr.narrow(&name, 0, q_rows + kv_rows, kv_rows)?;
    Ok(Modified::Out(vec![
        (
            format!("blk.{bid}.attn_q.weight"),
            q.permute_heads(&name, n_head)?,
        ),
        (
            format!("blk.{bid}.attn_k.weight"),
            k.permute_heads(&name, n_kv)?,
        ),
        (format!("blk.{bid}.attn_v.weight"), v),
    ]))
}

/// `BailingMoeModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    p.u32(rope::DIMENSION_COUNT, head_dim(hp)?)?;
    p.u32(
        llm::LEADING_DENSE_BLOCK_COUNT,
        hp.req_u64(&["first_k_dense_replace"])?,
    )?;
    p.u32(llm::VOCAB_SIZE, hp.req_u64(&["vocab_size"])?)?;
    p.u32(
        llm::EXPERT_FEED_FORWARD_LENGTH,
        hp.req_u64(&["moe_intermediate_size"])?,
    )?;
    p.f32(mla::EXPERT_WEIGHTS_SCALE, 1.0);
    p.u32(
        llm::EXPERT_SHARED_COUNT,
        hp.req_u64(&["num_shared_experts"])?,
    )?;
    p.bool(mla::EXPERT_WEIGHTS_NORM, hp.req_bool(&["norm_topk_prob"])?);
    Ok(())
}
