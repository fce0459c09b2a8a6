//! `BailingMoeV3ForCausalLM` and the text model of `BailingMoeV3VLForConditionalGeneration`
//! (arch `bailingmoe3`, `BailingMoeV3Model` / `BailingMoeV3VLModel` in
//! `conversion/bailingmoe3.py`).
//!
//! Ling 3.0 (inclusionAI's remote code, read as written) is a hybrid of two attentions:
//!
//! - a block is full (MLA) attention when it is the last of a group of `layer_group_size`
//!   blocks, when it lies in the incomplete last group, or when it is a next-token-prediction
//!   block (past `num_hidden_layers`); every other block is KDA linear attention;
//! - KDA blocks: q/k/v projections with short depthwise convolutions (`q/k/v_conv1d`,
//!   reshaped to `[1, d_inner, 1, kernel]`), a full-rank forget gate `f_proj` (`ssm_f_a`),
//!   `b_proj` (`ssm_beta`), `A_log` written as `exp(A_log)` in one column (`ssm_a`),
//!   `dt_bias` (`ssm_dt.bias`), the output gate `g_proj` (`ssm_g_a`) and norm `o_norm`;
//! - MLA blocks: `q_proj` (or `q_a_proj` / `q_a_layernorm` / `q_b_proj` with a q LoRA rank),
//!   `kv_a_proj_with_mqa`, `kv_a_layernorm`, `kv_b_proj` split per attention head into
//!   `attn_k_b` (transposed) and `attn_v_b` (the whole tensor is not written), the output
//!   `dense`, and the head-wise output gate `g_proj` (`attn_gate`);
//! - `first_k_dense_replace` dense FFN blocks, then routed experts (per-expert
//!   `down/gate/up_proj`, stacked in that order) with shared experts, the router `mlp.gate`
//!   and its selection bias `mlp.gate.expert_bias`;
//! - next-token-prediction blocks (`num_nextn_predict_layers`) are kept, numbered after the
//!   config's (`eh_proj`, `enorm`, `hnorm`, `final_layernorm` as the layer output norm), and
//!   exported on request (`--mtp` / `--no-mtp`).
//!
//! The class refuses KDA LoRA projections (`no_kda_lora` false), unbounded KDA gates
//! (`kda_safe_gate` false) and attention gates other than `head_wise`. The KV-head count is a
//! per-block list (1 for full attention, 0 for KDA). The VL class merges `text_config` into
//! the root, drops the projector (`linear_proj.*`) and requires an `mrope_section` whose three
//! sections count the rope pairs of `qk_rope_head_dim`. GPT-2 BPE vocabulary.

use ggufkit::gguf::keys::{attention, compressed, kda, llm, mla, rope, ssm};
use serde_json::Value as Json;

use super::glm4moe::is_past_main_layers;
use super::{keep, no_extra, Arch, Experts, Hooks, Modified, MtpExport, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor};
use crate::hf::params::Params;
use crate::hf::tokenizer::{json_truthy, VocabKind, VocabQuirks};
use crate::ConvertError;

/// The VL class's name (its own filter and rope sections).
const VL_CLASS: &str = "BailingMoeV3VLForConditionalGeneration";

/// Ling 3.0 (KDA + MLA hybrid MoE).
pub const BAILINGMOE3: Arch = Arch {
    hf_names: &["BailingMoeV3ForCausalLM"],
    // Remote code only: AutoConfig cannot type the config, which is read as written.
    model_types: &[],
    composites: &[],
    gguf: "bailingmoe3",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQ,
        Tensor::AttnQA,
        Tensor::AttnQB,
        Tensor::AttnQANorm,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::AttnGate,
        Tensor::AttnKvAMqa,
        Tensor::AttnKvB,
        Tensor::AttnKB,
        Tensor::AttnVB,
        Tensor::AttnKvANorm,
        Tensor::FfnNorm,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
        Tensor::FfnGateInp,
        Tensor::FfnGateExp,
        Tensor::FfnDownExp,
        Tensor::FfnUpExp,
        Tensor::FfnGateShexp,
        Tensor::FfnDownShexp,
        Tensor::FfnUpShexp,
        Tensor::FfnExpProbsB,
        Tensor::SsmConv1dQ,
        Tensor::SsmConv1dK,
        Tensor::SsmConv1dV,
        Tensor::SsmFA,
        Tensor::SsmBeta,
        Tensor::SsmA,
        Tensor::SsmGA,
        Tensor::SsmDt,
        Tensor::SsmNorm,
        Tensor::NextnEhProj,
        Tensor::NextnEnorm,
        Tensor::NextnHnorm,
        Tensor::LayerOutNorm,
    ]],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        experts: &[EXPERTS],
        hook: Some(modify),
        nextn_blocks: true,
        mtp_export: Some(MtpExport {
            raw_names: false,
            is_mtp: is_past_main_layers,
            shared: MTP_SHARED,
        }),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks {
        adjust: Some(one_kv_head),
        ..Hooks::NONE
    },
};

/// Ling 3.0 VL's text model: the text class with the projector dropped and M-RoPE sections.
pub const BAILINGMOE3_VL: Arch = Arch {
    hf_names: &[VL_CLASS],
    filter: vl_filter,
    params: vl_params,
    ..BAILINGMOE3
};

/// Per-expert `down/gate/up_proj` under `mlp.experts.{xid}`, stacked in that order.
const EXPERTS: Experts = Experts {
    marker: "mlp.experts",
    count_keys: &["num_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.mlp.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// The tensors `--mtp` keeps besides the next-token-prediction blocks.
const MTP_SHARED: &[&str] = &[
    "model.word_embeddings.weight",
    "model.norm.weight",
    "lm_head.weight",
];

/// `filter_tensors`: the selection bias `….expert_bias` is named as a bias.
fn filter(name: &str) -> Option<String> {
    if name.ends_with(".expert_bias") {
        return Some(format!("{name}.bias"));
    }
    keep(name)
}

/// The VL class's `filter_tensors`: the projector (`linear_proj.*`) is not text.
fn vl_filter(name: &str) -> Option<String> {
    if name.starts_with("linear_proj") {
        return None;
    }
    filter(name)
}

/// `set_gguf_parameters` sets `num_key_value_heads` to 1 before the generic block, which
/// writes it (the per-block list then replaces the value in place).
fn one_kv_head(hp: &mut Hparams) -> Result<(), ConvertError> {
    hp.map.insert("num_key_value_heads".into(), Json::from(1));
    Ok(())
}

/// `is_full_attention`: MLA for the last block of each group, the incomplete last group and
/// the blocks past `num_hidden_layers`.
fn is_full_attention(hp: &Hparams, bid: u64) -> Result<bool, ConvertError> {
    let n_layer = hp.req_u64(&["num_hidden_layers"])?;
    let group = hp.req_u64(&["layer_group_size"])?;
    if group == 0 {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "layer_group_size",
            0,
            "at least 1",
        ));
    }
    Ok(bid >= n_layer || (bid + 1).is_multiple_of(group) || bid >= n_layer / group * group)
}

/// `modify_tensors` before the expert stacking: the KDA tensors' shapes and names, the
/// attention gates and the `kv_b_proj` split.
fn modify(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let mut expr = expr;
    let conv = [".q_conv1d.weight", ".k_conv1d.weight", ".v_conv1d.weight"];
    let rank = expr.shape().len();
    if conv.iter().any(|s| name.ends_with(s)) && (rank == 2 || rank == 3) {
        let shape = expr.shape();
        let (d_inner, d_conv) = (shape[0], shape[rank - 1]);
        expr = expr.reshape(&name, vec![1, d_inner, 1, d_conv])?;
    }
    if name.ends_with(".A_log") {
        // exp(A_log) as torch computes it: -(-exp(x)) is exact.
        let n = expr.shape().iter().product();
        expr = expr.neg_exp().mul_scalar(-1.0).reshape(&name, vec![n, 1])?;
    }
    if let Some(base) = name.strip_suffix(".dt_bias") {
        return Ok(Modified::Pass(format!("{base}.dt_proj.bias"), expr));
    }
    if name.ends_with(".attention.f_proj.weight") || name.ends_with(".attention.g_proj.weight") {
        return gate(hp, name, expr);
    }
    if name.ends_with(".attention.kv_b_proj.weight") {
        return split_kv_b(hp, name, expr);
    }
    Ok(Modified::Pass(name, expr))
}

/// The block number of a per-block tensor.
fn bid_of(name: &str) -> Result<u64, ConvertError> {
    block_id(name).ok_or_else(|| ConvertError::Tensor {
        name: name.to_string(),
        problem: "a per-block attention tensor outside a numbered layer".into(),
    })
}

/// `f_proj` (KDA only: `ssm_f_a`) and `g_proj` (`attn_gate` on full-attention blocks,
/// `ssm_g_a` on KDA blocks).
fn gate(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let bid = bid_of(&name)?;
    let full = is_full_attention(hp, bid)?;
    let gguf = if name.ends_with(".f_proj.weight") {
        if full {
            return Err(ConvertError::Tensor {
                name,
                problem: format!("an f_proj on full-attention layer {bid}"),
            });
        }
        Tensor::SsmFA
    } else if full {
        Tensor::AttnGate
    } else {
        Tensor::SsmGA
    };
    let out = format!("{}.weight", gguf.gguf().replace("{bid}", &bid.to_string()));
    Ok(Modified::Out(vec![(out, expr)]))
}

/// `kv_b_proj` `[n_head * (nope + v), rank]` → `attn_k_b` `[n_head, rank, nope]` and
/// `attn_v_b` `[n_head, v, rank]`, per attention head.
fn split_kv_b(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let bid = bid_of(&name)?;
    let n_head = hp.req_u64(&["num_attention_heads"])?;
    let v_dim = hp.req_u64(&["v_head_dim"])?;
    let nope = hp.req_u64(&["qk_nope_head_dim"])?;
    let shape = expr.shape().to_vec();
    let per_head = v_dim.checked_add(nope);
    let rows = per_head.and_then(|p| p.checked_mul(n_head));
    if shape.len() != 2 || rows != Some(shape[0]) {
        return Err(ConvertError::Tensor {
            name,
            problem: format!(
                "shape {shape:?} is not [num_attention_heads {n_head} * (v_head_dim {v_dim} + \
                 qk_nope_head_dim {nope}), kv_lora_rank]"
            ),
        });
    }
    let kv = expr.reshape(&name, vec![n_head, per_head.unwrap_or(0), shape[1]])?;
    let k = kv
        .clone()
        .narrow(&name, 1, 0, nope)?
        .transpose_last2(&name)?;
    let v = kv.narrow(&name, 1, nope, v_dim)?;
    Ok(Modified::Out(vec![
        (format!("blk.{bid}.attn_k_b.weight"), k),
        (format!("blk.{bid}.attn_v_b.weight"), v),
    ]))
}

/// The class's refusals (`set_gguf_parameters`' first checks).
fn refuse_unsupported(hp: &Hparams) -> Result<(), ConvertError> {
    let truthy = |k: &str| hp.get(k).is_some_and(json_truthy);
    let refuse = |feature: &str| ConvertError::UnsupportedFeature {
        arch: hp.arch.clone(),
        feature: feature.to_string(),
    };
    if !truthy("no_kda_lora") {
        return Err(refuse(
            "KDA LoRA projections (no_kda_lora is not true): the reference refuses them",
        ));
    }
    if !truthy("kda_safe_gate") {
        return Err(refuse(
            "non-safe KDA gates (kda_safe_gate is not true): the reference refuses them",
        ));
    }
    let granularity = hp.get("gated_attention_proj_granularity_type");
    if granularity.and_then(Json::as_str) != Some("head_wise") {
        return Err(refuse(
            "attention gates other than head-wise (gated_attention_proj_granularity_type): \
             the reference requires head_wise",
        ));
    }
    Ok(())
}

/// `BailingMoeV3Model.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    refuse_unsupported(p.hp)?;
    p.generic()?;
    let hp = p.hp;
    let blocks = p.block_count()?;
    let kv_heads = (0..blocks)
        .map(|il| is_full_attention(hp, il).map(i32::from))
        .collect::<Result<Vec<i32>, _>>()?;
    p.i32s(attention::HEAD_COUNT_KV, kv_heads);
    p.u32(llm::VOCAB_SIZE, hp.req_u64(&["vocab_size"])?)?;
    p.u32(ssm::CONV_KERNEL, hp.req_u64(&["short_conv_kernel_size"])?)?;
    p.u32(kda::HEAD_DIM, hp.req_u64(&["head_dim"])?)?;
    p.bool(kda::SAFE_GATE, true);
    p.f32(kda::GATE_LOWER_BOUND, hp.req_f64(&["kda_lower_bound"])?);
    mla_params(p)?;
    moe_params(p)?;
    for (key, suffix) in [
        ("expert_swiglu_limit_list", llm::SWIGLU_CLAMP_EXP),
        (
            "share_expert_swiglu_limit_list",
            compressed::SWIGLU_CLAMP_SHEXP,
        ),
    ] {
        if let Some(values) = clamp_limits(hp, key, blocks)? {
            p.f32s(suffix, values);
        }
    }
    if hp.mtp != crate::hf::Mtp::Drop {
        if let Some(n) = hp
            .find_u64(&["num_nextn_predict_layers"])?
            .filter(|&n| n > 0)
        {
            p.u32(mla::NEXTN_PREDICT_LAYERS, n)?;
        }
    }
    Ok(())
}

/// The MLA sizes: the q and KV LoRA ranks, the rope, key and value lengths.
fn mla_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let kv_rank = hp.req_u64(&["kv_lora_rank"])?;
    let nope = hp.req_u64(&["qk_nope_head_dim"])?;
    let rope_dim = hp.req_u64(&["qk_rope_head_dim"])?;
    if let Some(q_rank) = hp.find_u64(&["q_lora_rank"])? {
        p.u32(mla::Q_LORA_RANK, q_rank)?;
    }
    p.u32(mla::KV_LORA_RANK, kv_rank)?;
    p.u32(rope::DIMENSION_COUNT, rope_dim)?;
    p.u32(attention::KEY_LENGTH, kv_rank.saturating_add(rope_dim))?;
    p.u32(mla::KEY_LENGTH_MLA, nope.saturating_add(rope_dim))?;
    p.u32(mla::VALUE_LENGTH_MLA, hp.req_u64(&["v_head_dim"])?)
}

/// The expert sizes and routing.
fn moe_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    p.u32(
        llm::EXPERT_FEED_FORWARD_LENGTH,
        hp.req_u64(&["moe_intermediate_size"])?,
    )?;
    p.u32(
        llm::EXPERT_SHARED_FEED_FORWARD_LENGTH,
        hp.req_u64(&["moe_shared_expert_intermediate_size"])?,
    )?;
    let shared = match hp.get("num_shared_experts") {
        None => 1,
        Some(_) => hp.req_u64(&["num_shared_experts"])?,
    };
    p.u32(llm::EXPERT_SHARED_COUNT, shared)?;
    p.u32(
        llm::LEADING_DENSE_BLOCK_COUNT,
        hp.req_u64(&["first_k_dense_replace"])?,
    )?;
    p.f32(
        mla::EXPERT_WEIGHTS_SCALE,
        hp.req_f64(&["routed_scaling_factor"])?,
    );
    p.bool(mla::EXPERT_WEIGHTS_NORM, hp.req_bool(&["norm_topk_prob"])?);
    Ok(())
}

/// A per-layer SwiGLU clamp list: cut to the block count, nulls as 0, padded with 0;
/// `None` when the config has no list (absent or null).
fn clamp_limits(hp: &Hparams, key: &str, blocks: u64) -> Result<Option<Vec<f32>>, ConvertError> {
    let items = match hp.get(key) {
        None | Some(Json::Null) => return Ok(None),
        Some(Json::Array(items)) => items,
        Some(v) => return Err(ConvertError::wrong_type(&hp.path, key, "a list", v)),
    };
    let blocks = usize::try_from(blocks).unwrap_or(usize::MAX);
    let mut values = Vec::with_capacity(blocks.min(items.len()));
    for v in items.iter().take(blocks) {
        let x = match v {
            Json::Null => 0.0,
            v => v.as_f64().ok_or_else(|| {
                ConvertError::wrong_type(&hp.path, key, "a list of numbers or nulls", v)
            })?,
        };
        values.push(x as f32);
    }
    values.resize(blocks.max(values.len()), 0.0);
    Ok(Some(values))
}

/// `BailingMoeV3VLModel.set_gguf_parameters`: the text parameters, then the M-RoPE sections
/// (three, padded with a zero), which must count the rope pairs.
fn vl_params(p: &mut Params) -> Result<(), ConvertError> {
    params(p)?;
    let hp = p.hp;
    let raw = match hp.get("mrope_section") {
        None | Some(Json::Null) => return Err(hp.missing(&["mrope_section"])),
        Some(v) => v,
    };
    let sections = raw
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .take(3)
                .map(|x| x.as_i64().and_then(|i| i32::try_from(i).ok()))
                .collect::<Option<Vec<i32>>>()
        })
        .ok_or_else(|| {
            ConvertError::wrong_type(&hp.path, "mrope_section", "a list of integers", raw)
        })?;
    let rope_dim = hp.req_u64(&["qk_rope_head_dim"])?;
    let pairs: i64 = sections.iter().map(|&s| i64::from(s)).sum();
    if u64::try_from(pairs.saturating_mul(2)).ok() != Some(rope_dim) {
        return Err(ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec!["mrope_section".into()],
            expected: format!(
                "three sections that count rope pairs and sum to qk_rope_head_dim / 2 = {}",
                rope_dim / 2
            ),
            found: format!("{sections:?}"),
        });
    }
    let mut sections = sections;
    sections.push(0);
    p.i32s(rope::DIMENSION_SECTIONS, sections);
    Ok(())
}
