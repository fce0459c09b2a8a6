//! `TalkieForCausalLM` (arch `talkie`, `TalkieModel` in `conversion/talkie.py`).
//!
//! Talkie (the HF port of the 1930s-corpus model, remote code) normalises with a weightless
//! `F.rms_norm` (no eps given: float32's machine epsilon is written as the RMS eps) and
//! scales with learned gains instead: per block `attn_gain.a_g` and `mlp_gain.a_g` become the
//! `.scale` of `attn_output` / `ffn_down`, `attn.head_gain.head_g` (one per head, given a
//! trailing unit dimension) is the q norm, `embed_skip.a_g` the layer output scale, and the
//! head's `lm_head_gain.w_g` is not a tensor but the logit scale. The q and k weights carry an
//! inverse rotary sign: within each head of `head_dim` rows, the second half is negated.
//! Tensor names are the port's (`model.embed`, `model.blocks.{bid}.attn.attn_query`, …, with
//! `.weight` added to the gains). GPT-2 BPE vocabulary.

use ggufkit::gguf::keys::{arch_key, attention, llm};
use ggufkit::gguf::Value;

use super::{Arch, Extra, Hooks, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::safetensors;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The head gain's name: read as the logit scale, not written.
const LOGIT_GAIN: &str = "lm_head_gain.w_g";

/// Talkie.
pub const TALKIE: Arch = Arch {
    hf_names: &["TalkieForCausalLM"],
    // Remote code only: AutoConfig cannot type the config, which is read as written.
    model_types: &[],
    composites: &[],
    gguf: "talkie",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::Output,
        Tensor::AttnQ,
        Tensor::AttnQNorm,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
        Tensor::LayerOutScale,
    ]],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        hook: Some(modify),
        ..Rules::NONE
    },
    params,
    extra,
    hooks: Hooks::NONE,
};

/// The block number and the rest of a `model.blocks.{bid}.…` name.
fn block_suffix(name: &str) -> Option<(u64, &str)> {
    let rest = name.strip_prefix("model.blocks.")?;
    let (bid, suffix) = rest.split_once('.')?;
    if bid.is_empty() || !bid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((bid.parse().ok()?, suffix))
}

/// `TalkieModel.modify_tensors`.
fn modify(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name == LOGIT_GAIN {
        return Ok(Modified::Drop);
    }
    let Some((bid, suffix)) = block_suffix(&name) else {
        return Ok(Modified::Pass(with_weight(name), expr));
    };
    match suffix {
        "attn_gain.a_g" => {
            return Ok(Modified::Named(vec![(
                format!("blk.{bid}.attn_output.scale"),
                expr,
            )]))
        }
        "mlp_gain.a_g" => {
            return Ok(Modified::Named(vec![(
                format!("blk.{bid}.ffn_down.scale"),
                expr,
            )]))
        }
        "attn.attn_query.weight" | "attn.attn_key.weight" => {
            let head_dim = hp.req_u64(&["head_dim"])?;
            let rows = expr.shape().first().copied().unwrap_or(0);
            if head_dim == 0 || rows % head_dim != 0 {
                return Err(ConvertError::Tensor {
                    name,
                    problem: format!("{rows} rows are not whole heads of head_dim {head_dim}"),
                });
            }
            let signs = (0..rows)
                .map(|r| {
                    if r % head_dim < head_dim / 2 {
                        1.0
                    } else {
                        -1.0
                    }
                })
                .collect();
            let expr = expr.mul_rows(&name, signs)?;
            return Ok(Modified::Pass(name, expr));
        }
        "attn.head_gain.head_g" => {
            let mut shape = expr.shape().to_vec();
            shape.push(1);
            let expr = expr.reshape(&name, shape)?;
            return Ok(Modified::Pass(with_weight(name), expr));
        }
        _ => {}
    }
    Ok(Modified::Pass(with_weight(name), expr))
}

/// The name with `.weight` appended unless it has it.
fn with_weight(name: String) -> String {
    if name.ends_with(".weight") {
        name
    } else {
        format!("{name}.weight")
    }
}

/// The logit scale, the head gain's one value, set while the tensors are processed.
fn extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    let mut out = Extra::default();
    let dir = hp.path.parent().unwrap_or(std::path::Path::new("."));
    let shards = safetensors::index_dir(dir)?;
    for t in shards.tensors {
        if t.name != LOGIT_GAIN {
            continue;
        }
        if t.n_elements() != 1 {
            return Err(ConvertError::Tensor {
                name: t.name.clone(),
                problem: format!(
                    "the head gain must have one element, found shape {:?}",
                    t.shape
                ),
            });
        }
        let name = t.name.clone();
        let v = Expr::read(t).eval_f32().map_err(|e| ConvertError::Tensor {
            name,
            problem: e.to_string(),
        })?;
        out.early_kvs
            .push((arch_key(TALKIE.gguf, llm::LOGIT_SCALE), Value::F32(v[0])));
    }
    Ok(out)
}

/// `TalkieModel.set_gguf_parameters`: the generic block, then float32's epsilon as the RMS
/// norm eps.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.f32(attention::LAYERNORM_RMS_EPS, f64::from(f32::EPSILON));
    Ok(())
}
