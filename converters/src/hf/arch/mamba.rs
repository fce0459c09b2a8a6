//! Mamba and Mamba-2 (`conversion/mamba.py`): state-space models without attention.
//!
//! Both classes read config.json as written (no transformers defaults) and write their own
//! hparam block: a fixed context length of 2^20, zero FFN and head counts, and the `ssm.*`
//! sizes. Tensors: `A_log` becomes `A = -exp(A_log)` (`ssm_a`), the depthwise
//! `conv1d.weight` `[d_inner, 1, d_conv]` is squeezed to `[d_inner, d_conv]`; Mamba-2 also
//! gives `A` and `D` a trailing dimension of 1, renames `dt_bias` to `dt_proj.bias` and
//! reshapes its gated norm to `[n_groups, d_inner / n_groups]`. Mamba drops an `lm_head`
//! equal to the embedding. The vocabulary is padded to `pad_vocab_size_multiple`.

use ggufkit::gguf::keys::{attention, llm, ssm};

use super::{keep, no_extra, Arch, Hooks, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{PadMultiple, VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// Neither class loads its config through AutoConfig.
fn as_written(_: &mut serde_json::Map<String, serde_json::Value>) -> bool {
    false
}

/// `MambaForCausalLM`, `MambaLMHeadModel`, `FalconMambaForCausalLM` (arch `mamba`).
pub const MAMBA: Arch = Arch {
    hf_names: &[
        "MambaForCausalLM",
        "MambaLMHeadModel",
        "FalconMambaForCausalLM",
    ],
    model_types: &[
        ModelType {
            name: "mamba",
            hf_classes: &["MambaForCausalLM", "MambaLMHeadModel"],
            defaults: &[],
            head_dim: super::HeadDim::Keep,
            kv_heads_key: None,
            prepare: Some(as_written),
        },
        ModelType {
            name: "falcon_mamba",
            hf_classes: &["FalconMambaForCausalLM"],
            defaults: &[],
            head_dim: super::HeadDim::Keep,
            kv_heads_key: None,
            prepare: Some(as_written),
        },
    ],
    composites: &[],
    gguf: "mamba",
    vocab: VocabKind::Own(mamba_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::SsmIn,
        Tensor::SsmConv1d,
        Tensor::SsmX,
        Tensor::SsmDt,
        Tensor::SsmA,
        Tensor::SsmD,
        Tensor::SsmOut,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(mamba_hook),
        omit_tied_output: true,
        ..Rules::NONE
    },
    params: mamba_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `Mamba2ForCausalLM` (arch `mamba2`).
pub const MAMBA2: Arch = Arch {
    hf_names: &["Mamba2ForCausalLM"],
    model_types: &[ModelType {
        name: "mamba2",
        hf_classes: &["Mamba2ForCausalLM"],
        defaults: &[],
        head_dim: super::HeadDim::Keep,
        kv_heads_key: None,
        prepare: Some(as_written),
    }],
    composites: &[],
    gguf: "mamba2",
    vocab: VocabKind::Own(mamba2_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[MAMBA2_TENSORS],
    tensor_overrides: &[],
    filter: mamba2_filter,
    rules: Rules {
        hook: Some(mamba2_hook),
        ..Rules::NONE
    },
    params: mamba2_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The tensors of a Mamba-2 model.
pub const MAMBA2_TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::OutputNorm,
    Tensor::Output,
    Tensor::AttnNorm,
    Tensor::SsmIn,
    Tensor::SsmConv1d,
    Tensor::SsmDt,
    Tensor::SsmA,
    Tensor::SsmD,
    Tensor::SsmNorm,
    Tensor::SsmOut,
];

/// Python's `x or default` for an optional count: absent, null and 0 give `default`.
pub fn or_u64(v: Option<u64>, default: u64) -> u64 {
    v.filter(|x| *x != 0).unwrap_or(default)
}

fn refuse(hp: &Hparams, what: String) -> ConvertError {
    ConvertError::format(&hp.path, None, what)
}

/// `MambaModel.set_gguf_parameters`.
fn mamba_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let d_model = hp.req_u64(&["hidden_size", "d_model"])?;
    let d_conv = or_u64(hp.find_u64(&["conv_kernel", "d_conv"])?, 4);
    let twice = d_model
        .checked_mul(2)
        .ok_or_else(|| refuse(hp, format!("hidden size {d_model} is too large")))?;
    let d_inner = or_u64(hp.find_u64(&["intermediate_size", "d_inner"])?, twice);
    let d_state = or_u64(hp.find_u64(&["state_size", "d_state"])?, 16);
    let dt_rank = or_u64(
        hp.find_u64(&["time_step_rank", "dt_rank"])?,
        d_model.div_ceil(16),
    );
    let eps = hp
        .find_f64(&["layer_norm_epsilon", "rms_norm_eps"])?
        .filter(|x| *x != 0.0)
        .unwrap_or(1e-5);
    let falcon = hp.get("model_type").and_then(|v| v.as_str()) == Some("falcon_mamba");
    if d_inner != twice {
        return Err(refuse(
            hp,
            format!("Mamba needs an inner size of 2 * hidden_size ({twice}), found {d_inner}"),
        ));
    }
    p.u32(llm::CONTEXT_LENGTH, 1 << 20)?;
    p.u32(llm::EMBEDDING_LENGTH, d_model)?;
    p.u32(llm::FEED_FORWARD_LENGTH, 0)?;
    p.u32(attention::HEAD_COUNT, 0)?;
    p.u32(llm::BLOCK_COUNT, hp.block_count()?)?;
    p.u32(ssm::CONV_KERNEL, d_conv)?;
    p.u32(ssm::INNER_SIZE, d_inner)?;
    p.u32(ssm::STATE_SIZE, d_state)?;
    p.u32(ssm::TIME_STEP_RANK, dt_rank)?;
    p.f32(attention::LAYERNORM_RMS_EPS, eps);
    p.bool(ssm::DT_B_C_RMS, falcon);
    p.file_type();
    Ok(())
}

/// `MambaModel.modify_tensors`: `A = -exp(A_log)`, the conv1d weight squeezed.
fn mamba_hook(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let mut expr = expr;
    if name.ends_with(".A_log") {
        expr = expr.neg_exp();
    }
    if name.ends_with("conv1d.weight") {
        expr = expr.squeeze(&name)?;
    }
    Ok(Modified::Pass(name, expr))
}

/// Mamba-2's sizes (`Mamba2Model.__init__`): `(d_model, expand, d_inner, n_group)`.
pub fn mamba2_sizes(hp: &Hparams) -> Result<(u64, u64, u64, u64), ConvertError> {
    let d_model = hp.req_u64(&["hidden_size", "d_model", "dim"])?;
    let expand = or_u64(hp.find_u64(&["mamba_expand", "expand"])?, 2);
    let full = expand.checked_mul(d_model).ok_or_else(|| {
        refuse(
            hp,
            format!("expand {expand} * hidden size {d_model} overflows"),
        )
    })?;
    let d_inner = or_u64(
        hp.find_u64(&["mamba_d_ssm", "intermediate_size", "d_inner"])?,
        full,
    );
    let n_group = or_u64(hp.find_u64(&["n_groups"])?, 1);
    Ok((d_model, expand, d_inner, n_group))
}

/// The keys `Mamba2Model.set_gguf_parameters` writes, which the models built on it (Falcon-H1)
/// write first too.
pub(super) struct Mamba2Keys {
    pub d_model: u64,
    pub d_inner: u64,
    pub d_state: u64,
    pub d_conv: u64,
    pub n_group: u64,
    /// Non-zero (the time-step rank is `d_inner / head_dim`).
    pub head_dim: u64,
    pub eps: f64,
}

impl Mamba2Keys {
    pub(super) fn write(self, p: &mut Params) -> Result<(), ConvertError> {
        let Mamba2Keys {
            d_model,
            d_inner,
            d_state,
            d_conv,
            n_group,
            head_dim,
            eps,
        } = self;
        p.u32(llm::CONTEXT_LENGTH, 1 << 20)?;
        p.u32(llm::EMBEDDING_LENGTH, d_model)?;
        p.u32(llm::FEED_FORWARD_LENGTH, 0)?;
        p.u32(attention::HEAD_COUNT, 0)?;
        p.u32(llm::BLOCK_COUNT, p.hp.block_count()?)?;
        p.u32(ssm::CONV_KERNEL, d_conv)?;
        p.u32(ssm::INNER_SIZE, d_inner)?;
        p.u32(ssm::STATE_SIZE, d_state)?;
        p.u32(ssm::TIME_STEP_RANK, d_inner / head_dim)?;
        p.u32(ssm::GROUP_COUNT, n_group)?;
        p.f32(attention::LAYERNORM_RMS_EPS, eps);
        p.file_type();
        Ok(())
    }
}

/// `Mamba2Model.set_gguf_parameters`.
fn mamba2_params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let (d_model, expand, d_inner, n_group) = mamba2_sizes(hp)?;
    let d_conv = or_u64(hp.find_u64(&["conv_kernel", "d_conv"])?, 4);
    let d_state = or_u64(hp.find_u64(&["state_size", "d_state"])?, 128);
    let head_dim = or_u64(hp.find_u64(&["mamba_d_head", "head_dim"])?, 64);
    let eps = hp
        .find_f64(&["layer_norm_epsilon", "rms_norm_eps"])?
        .filter(|x| *x != 0.0)
        .unwrap_or(1e-5);
    if Some(d_inner) != expand.checked_mul(d_model) || !d_inner.is_multiple_of(head_dim) {
        return Err(refuse(
            hp,
            format!(
                "Mamba-2 needs an inner size of expand * hidden_size ({expand} * {d_model}) \
                 divisible by the head size {head_dim}, found {d_inner}"
            ),
        ));
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
    Ok(())
}

/// `Mamba2Model.filter_tensors`: Mamba-Codestral's `model.` prefix goes, `dt_bias` is the
/// `dt_proj` bias.
pub fn mamba2_filter(name: &str) -> Option<String> {
    let mut name = name.to_string();
    if name.starts_with("model.backbone") || name.starts_with("model.lm_head") {
        name = name["model.".len()..].to_string();
    }
    if let Some(base) = name.strip_suffix(".dt_bias") {
        name = format!("{base}.dt_proj.bias");
    }
    Some(name)
}

/// `Mamba2Model.modify_tensors` for one SSM layer's tensor (used by the hybrids too):
/// conv1d squeezed, `A` and `D` given a trailing 1, the gated norm grouped, `A = -exp`.
pub fn mamba2_tensor(
    hp: &Hparams,
    d_inner: u64,
    n_group: u64,
    name: &str,
    expr: Expr,
) -> Result<Expr, ConvertError> {
    let mut expr = expr;
    if name.ends_with("conv1d.weight") {
        expr = expr.squeeze(name)?;
    } else if name.ends_with(".A_log") || name.ends_with(".D") {
        let mut shape = expr.shape().to_vec();
        shape.push(1);
        expr = expr.reshape(name, shape)?;
    } else if name.ends_with("mixer.norm.weight") || name.ends_with("mamba.norm.weight") {
        if n_group == 0 {
            return Err(refuse(hp, "n_groups is 0".into()));
        }
        expr = expr.reshape(name, vec![n_group, d_inner / n_group])?;
    }
    if name.ends_with(".A_log") {
        expr = expr.neg_exp();
    }
    Ok(expr)
}

fn mamba2_hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let (_, _, d_inner, n_group) = mamba2_sizes(hp)?;
    let expr = mamba2_tensor(hp, d_inner, n_group, &name, expr)?;
    Ok(Modified::Pass(name, expr))
}

/// `MambaModel.set_vocab`: `vocab_size` padded to `pad_vocab_size_multiple` (default 8),
/// then GPT-2 BPE from tokenizer.json, else SentencePiece.
fn mamba_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    b.padded(PadMultiple::Default(8), false)
}

/// `Mamba2Model.set_vocab`: `vocab_size` padded to `pad_vocab_size_multiple` (default 16),
/// then SentencePiece, else GPT-2 BPE.
fn mamba2_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    b.padded(PadMultiple::Default(16), true)
}
