//! Falcon-H1 (`conversion/falcon_h1.py`, a Mamba-2 subclass, arch `falcon-h1`): every layer
//! has a Mamba-2 mixer and attention side by side, then a SwiGLU FFN.
//!
//! The config is read as written; Mamba hparams are also looked up with a `mamba_` prefix.
//! Mamba-2's hparam block comes first (inner size `mamba_d_ssm`), then the attention and FFN
//! sizes override its zeros. The muP multipliers are folded into the weights as torch
//! computes them (f32 products): `mlp_multipliers` into gate/down, the attention in/out
//! and key multipliers into q/k/v/o, the SSM in/out multipliers into the mixer projections
//! (and `ssm_multipliers` per z/x/B/C/dt block of `in_proj` rows), `lm_head_multiplier` and
//! `embedding_multiplier` into the head and the embedding.

use ggufkit::gguf::keys::{attention, llm, rope};
use serde_json::Value as Json;

use super::mamba::{mamba2_filter, mamba2_tensor, or_u64, Mamba2Keys};
use super::{no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::{json_u64, Hparams};
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// `FalconH1ForCausalLM` (arch `falcon-h1`).
pub const FALCON_H1: Arch = Arch {
    hf_names: &["FalconH1ForCausalLM"],
    model_types: &[ModelType {
        name: "falcon_h1",
        hf_classes: &["FalconH1ForCausalLM"],
        defaults: &[],
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        // Mamba2Model reads config.json itself.
        prepare: Some(|_| false),
    }],
    composites: &[],
    gguf: "falcon-h1",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::SsmIn,
        Tensor::SsmConv1d,
        Tensor::SsmDt,
        Tensor::SsmA,
        Tensor::SsmD,
        Tensor::SsmNorm,
        Tensor::SsmOut,
        Tensor::FfnPreNorm,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
        Tensor::OutputNorm,
        Tensor::Output,
    ]],
    tensor_overrides: &[],
    filter: mamba2_filter,
    rules: Rules {
        hook: Some(hook),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The class's `find_hparam`: the plain keys, then each with a `mamba_` prefix.
fn find<'a>(hp: &'a Hparams, keys: &[&str]) -> Option<&'a Json> {
    hp.find(keys).or_else(|| {
        let prefixed: Vec<String> = keys.iter().map(|k| format!("mamba_{k}")).collect();
        let refs: Vec<&str> = prefixed.iter().map(String::as_str).collect();
        hp.find(&refs)
    })
}

fn bad(hp: &Hparams, key: &str, v: Option<&Json>) -> ConvertError {
    ConvertError::format(
        &hp.path,
        None,
        match v {
            None => format!("missing {key}"),
            Some(v) => format!("{key}: unexpected value {v}"),
        },
    )
}

fn req(hp: &Hparams, keys: &[&str]) -> Result<u64, ConvertError> {
    let v = find(hp, keys);
    v.and_then(json_u64).ok_or_else(|| bad(hp, keys[0], v))
}

fn opt(hp: &Hparams, keys: &[&str]) -> Result<Option<u64>, ConvertError> {
    match find(hp, keys) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => json_u64(v)
            .map(Some)
            .ok_or_else(|| bad(hp, keys[0], Some(v))),
    }
}

/// A multiplier (a number; absent or null is refused, as `tensor * None` fails).
fn mult(hp: &Hparams, key: &str) -> Result<f64, ConvertError> {
    let v = find(hp, &[key]);
    v.and_then(Json::as_f64).ok_or_else(|| bad(hp, key, v))
}

/// Element `i` of a list of multipliers.
fn mult_at(hp: &Hparams, key: &str, i: usize) -> Result<f64, ConvertError> {
    let v = find(hp, &[key]);
    v.and_then(|l| l.get(i))
        .and_then(Json::as_f64)
        .ok_or_else(|| bad(hp, key, v))
}

/// `(d_inner, n_group)`: `mamba_d_ssm` and `n_groups`.
fn sizes(hp: &Hparams) -> Result<(u64, u64), ConvertError> {
    Ok((req(hp, &["mamba_d_ssm"])?, req(hp, &["n_groups"])?))
}

/// `FalconH1Model.set_gguf_parameters` (Mamba-2's block first).
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let (d_inner, n_group) = sizes(hp)?;
    let d_model = req(hp, &["hidden_size", "d_model", "dim"])?;
    let d_conv = or_u64(opt(hp, &["conv_kernel", "d_conv"])?, 4);
    let d_state = or_u64(opt(hp, &["state_size", "d_state"])?, 128);
    let head_dim = or_u64(opt(hp, &["mamba_d_head", "head_dim"])?, 64);
    let eps = find(hp, &["layer_norm_epsilon", "rms_norm_eps"])
        .and_then(Json::as_f64)
        .filter(|x| *x != 0.0)
        .unwrap_or(1e-5);
    if head_dim == 0 {
        return Err(bad(hp, "mamba_d_head", Some(&Json::from(0))));
    }
    Mamba2Keys {
        d_model,
        d_inner,
        d_state,
        d_conv,
        n_group,
        head_dim,
        eps,
    }
    .write(p)?;
    // FalconH1Model's own.
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    p.u32(llm::BLOCK_COUNT, hp.block_count()?)?;
    let ctx = match hp.get("max_position_embeddings") {
        None => 0,
        Some(v) => json_u64(v).ok_or_else(|| bad(hp, "max_position_embeddings", Some(v)))?,
    };
    p.u32(llm::CONTEXT_LENGTH, ctx)?;
    p.req_u32(llm::FEED_FORWARD_LENGTH, &["intermediate_size"])?;
    p.req_u32(attention::HEAD_COUNT, &["num_attention_heads"])?;
    let kv = hp
        .get("num_key_value_heads")
        .cloned()
        .ok_or_else(|| hp.missing(&["num_key_value_heads"]))?;
    p.u32_or_list(attention::HEAD_COUNT_KV, &kv)?;
    p.req_u32(attention::KEY_LENGTH, &["head_dim"])?;
    p.req_u32(attention::VALUE_LENGTH, &["head_dim"])?;
    let act = hp.get("hidden_act");
    if !matches!(act, None | Some(Json::Null)) && act.and_then(Json::as_str) != Some("silu") {
        return Err(ConvertError::UnsupportedFeature {
            arch: hp.arch.clone(),
            feature: "a hidden_act other than silu".into(),
        });
    }
    let d_head = req(hp, &["d_head"])?;
    if d_head == 0 || !d_inner.is_multiple_of(d_head) {
        return Err(ConvertError::format(
            &hp.path,
            None,
            format!("SSM inner size {d_inner} is not a multiple of the head size {d_head}"),
        ));
    }
    let theta = hp
        .rope
        .get("rope_theta")
        .and_then(Json::as_f64)
        .ok_or_else(|| hp.missing(&["rope_theta"]))?;
    p.f32(rope::FREQ_BASE, theta);
    Ok(())
}

/// `FalconH1Model.modify_tensors`: Mamba-2's step, then the multipliers.
fn hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let (d_inner, n_group) = sizes(hp)?;
    let expr = mamba2_tensor(hp, d_inner, n_group, &name, expr)?;
    let has = |s: &str| name.contains(s);
    let expr = if has("down_proj") {
        expr.mul_scalar(mult_at(hp, "mlp_multipliers", 1)?)
    } else if has("gate_proj") {
        expr.mul_scalar(mult_at(hp, "mlp_multipliers", 0)?)
    } else if has("k_proj") {
        expr.mul_scalar(mult(hp, "key_multiplier")?)
            .mul_scalar(mult(hp, "attention_in_multiplier")?)
    } else if has("q_proj") || has("v_proj") {
        expr.mul_scalar(mult(hp, "attention_in_multiplier")?)
    } else if has("o_proj") {
        expr.mul_scalar(mult(hp, "attention_out_multiplier")?)
    } else if has("out_proj") {
        expr.mul_scalar(mult(hp, "ssm_out_multiplier")?)
    } else if has("in_proj") {
        let expr = expr.mul_scalar(mult(hp, "ssm_in_multiplier")?);
        let inner = hp.req_u64(&["mamba_d_ssm"])?;
        let gs = hp
            .req_u64(&["mamba_n_groups"])?
            .checked_mul(hp.req_u64(&["mamba_d_state"])?)
            .ok_or_else(|| bad(hp, "mamba_d_state", None))?;
        let rows = expr.shape().first().copied().unwrap_or(0);
        let bounds = [
            inner,
            inner.saturating_mul(2),
            inner.saturating_mul(2).saturating_add(gs),
            inner.saturating_mul(2).saturating_add(gs.saturating_mul(2)),
        ];
        let mut factors = Vec::new();
        for r in 0..rows {
            let block = bounds.iter().take_while(|b| r >= **b).count();
            factors.push(mult_at(hp, "ssm_multipliers", block)? as f32);
        }
        expr.mul_rows(&name, factors)?
    } else if has("lm_head") {
        expr.mul_scalar(mult(hp, "lm_head_multiplier")?)
    } else if has("embed_tokens") {
        expr.mul_scalar(mult(hp, "embedding_multiplier")?)
    } else {
        expr
    };
    Ok(Modified::Pass(name, expr))
}
