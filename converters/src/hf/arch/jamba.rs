//! Jamba (`conversion/jamba.py`): Mamba layers with dt/B/C norms, attention every
//! `attn_layer_period` layers from `attn_layer_offset`, and MoE FFNs every
//! `expert_layer_period` layers from `expert_layer_offset` (arch `jamba`).
//!
//! Its own hparam block (no generic one, no rope): the KV-head count per layer (0 off the
//! attention layers), the Mamba sizes and the expert counts. Tensors: Mini-Jamba's `.moe.`
//! is `.feed_forward.`; a single expert `experts.0.` on a dense layer is the dense FFN; the
//! experts are stacked (down, gate, up) under Qwen-MoE's names; conv1d is squeezed and
//! `A = -exp(A_log)`.

use ggufkit::gguf::keys::{attention, llm, ssm};
use serde_json::{Map, Value as Json};

use super::mamba::or_u64;
use super::{no_extra, Arch, Experts, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::{block_id, Tensor};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// `JambaForCausalLM` (arch `jamba`).
pub const JAMBA: Arch = Arch {
    hf_names: &["JambaForCausalLM"],
    model_types: &[ModelType {
        name: "jamba",
        hf_classes: &["JambaForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 65536,
            "hidden_size" => 4096,
            "intermediate_size" => 14336,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 8,
            "max_position_embeddings" => 262144,
            "rms_norm_eps" => 1e-6,
            "num_experts_per_tok" => 2,
            "num_experts" => 16,
            "expert_layer_period" => 2,
            "expert_layer_offset" => 1,
            "attn_layer_period" => 8,
            "attn_layer_offset" => 4,
            "mamba_d_state" => 16,
            "mamba_d_conv" => 4,
            "mamba_expand" => 2,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(dt_rank),
    }],
    composites: &[],
    gguf: "jamba",
    vocab: VocabKind::Own(set_vocab),
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
        Tensor::SsmIn,
        Tensor::SsmConv1d,
        Tensor::SsmX,
        Tensor::SsmDt,
        Tensor::SsmDtNorm,
        Tensor::SsmA,
        Tensor::SsmBNorm,
        Tensor::SsmCNorm,
        Tensor::SsmD,
        Tensor::SsmOut,
        Tensor::FfnGateInp,
        Tensor::FfnNorm,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
        Tensor::FfnGateExp,
        Tensor::FfnDownExp,
        Tensor::FfnUpExp,
    ]],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        hook: Some(hook),
        experts: &[JAMBA_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// Jamba's per-expert projections, stacked under Qwen-MoE's merged names.
const JAMBA_EXPERTS: Experts = Experts {
    marker: ".feed_forward.experts.",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["down_proj", "gate_proj", "up_proj"],
    expert_name: "model.layers.{bid}.feed_forward.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.mlp.experts.{w}.weight",
};

/// `JambaConfig`: `mamba_dt_rank` "auto" (the default) is `ceil(hidden_size / 16)`.
fn dt_rank(cfg: &mut Map<String, Json>) -> bool {
    let auto = match cfg.get("mamba_dt_rank") {
        None => true,
        Some(v) => v.as_str() == Some("auto"),
    };
    if auto {
        let hidden = cfg.get("hidden_size").and_then(json_u64).unwrap_or(4096);
        cfg.insert("mamba_dt_rank".into(), Json::from(hidden.div_ceil(16)));
    }
    true
}

fn count(hp: &Hparams, key: &str) -> Result<u64, ConvertError> {
    hp.req_u64(&[key])
}

/// `JambaModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let d_model = hp.req_u64(&["hidden_size", "mamba_d_model"])?;
    let d_conv = or_u64(hp.find_u64(&["mamba_d_conv"])?, 4);
    let expand = count(hp, "mamba_expand")?;
    let d_inner = expand.checked_mul(d_model).ok_or_else(|| {
        ConvertError::out_of_range(
            &hp.path,
            "mamba_expand * hidden_size (the SSM inner size)",
            format!("{expand} * {d_model}"),
            "a product that fits 64 bits",
        )
    })?;
    let d_state = or_u64(hp.find_u64(&["mamba_d_state"])?, 16);
    let dt_rank = or_u64(hp.find_u64(&["mamba_dt_rank"])?, d_model.div_ceil(16));
    let eps = hp
        .find_f64(&["layer_norm_epsilon", "rms_norm_eps"])?
        .filter(|x| *x != 0.0)
        .unwrap_or(1e-6);
    let n_kv = count(hp, "num_key_value_heads")?;
    let offset = count(hp, "attn_layer_offset")?;
    let period = count(hp, "attn_layer_period")?;
    if period == 0 {
        return Err(ConvertError::out_of_range(
            &hp.path,
            "attn_layer_period",
            0,
            "at least 1 (the layer index is taken modulo it)",
        ));
    }
    let n = hp.block_count()?;
    let kv: Vec<Json> = (0..n)
        .map(|i| {
            let attn = i >= offset && (i - offset).is_multiple_of(period);
            Json::from(if attn { n_kv } else { 0 })
        })
        .collect();
    p.u32(llm::BLOCK_COUNT, n)?;
    p.req_u32(llm::CONTEXT_LENGTH, &["max_position_embeddings", "n_ctx"])?;
    p.u32(llm::EMBEDDING_LENGTH, d_model)?;
    p.req_u32(llm::FEED_FORWARD_LENGTH, &["intermediate_size"])?;
    p.req_u32(attention::HEAD_COUNT, &["num_attention_heads"])?;
    p.u32_or_list(attention::HEAD_COUNT_KV, &Json::Array(kv))?;
    p.u32(ssm::CONV_KERNEL, d_conv)?;
    p.u32(ssm::INNER_SIZE, d_inner)?;
    p.u32(ssm::STATE_SIZE, d_state)?;
    p.u32(ssm::TIME_STEP_RANK, dt_rank)?;
    p.f32(attention::LAYERNORM_RMS_EPS, eps);
    p.req_u32(llm::EXPERT_COUNT, &["num_local_experts", "num_experts"])?;
    p.req_u32(
        llm::EXPERT_USED_COUNT,
        &["num_experts_per_tok", "num_experts_per_token"],
    )?;
    p.file_type();
    Ok(())
}

/// `JambaModel.modify_tensors` (the experts are stacked by the generic rule).
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let mut name = name.replace(".moe.", ".feed_forward.");
    if let Some(bid) = block_id(&name) {
        let offset = count(hp, "expert_layer_offset")?;
        let period = count(hp, "expert_layer_period")?;
        let moe = bid >= offset && period != 0 && (bid - offset).is_multiple_of(period);
        if !moe {
            name = name.replace(".experts.0.", ".");
        }
    }
    if name.contains(".feed_forward.experts.") {
        return Ok(Modified::Pass(name, expr));
    }
    let mut expr = expr;
    if name.ends_with("conv1d.weight") {
        expr = expr.squeeze(&name)?;
    }
    if name.ends_with(".A_log") {
        expr = expr.neg_exp();
    }
    Ok(Modified::Pass(name, expr))
}

/// `JambaModel.set_vocab`: SentencePiece, else the byte-fallback HF path with
/// `add_space_prefix` false.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    match b.spm_model()? {
        Some(model) => Ok((b.sentencepiece(model)?, None)),
        None => {
            let path = b.llama_hf()?;
            b.set_bool(ggufkit::gguf::keys::tokenizer::ADD_SPACE_PREFIX, false);
            Ok((path, None))
        }
    }
}
