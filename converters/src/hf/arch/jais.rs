//! `JAISLMHeadModel` (arch `jais`, `JaisModel(TextModel)` in `conversion/jais.py`). The
//! checkpoints ship remote code, so the config is read as config.json gives it.
//!
//! GPT-2's tensor names with a SwiGLU FFN (`c_fc` is the up projection, `c_fc2` the gate)
//! and ALiBi positions. The class requires `activation_function` "swiglu" and
//! `position_embedding_type` "alibi", scales the token embedding by the muP embeddings scale
//! and the LM head by the output width scale, and writes an ALiBi bias maximum of 8 (a
//! checkpoint with precomputed slopes is refused, as the reference refuses it).
//! The vocabulary is GPT-2 BPE.

use ggufkit::gguf::keys::{self, attention, llm};
use ggufkit::gguf::Value;
use serde_json::Value as Json;

use super::{Arch, Extra, Hooks, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The Jais class.
pub const JAIS: Arch = Arch {
    hf_names: &["JAISLMHeadModel"],
    model_types: &[],
    composites: &[],
    gguf: "jais",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnDown,
        Tensor::FfnGate,
        Tensor::FfnUp,
    ]],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        transpose: &[
            ".c_attn.weight",
            ".c_proj.weight",
            ".c_fc.weight",
            ".c_fc2.weight",
        ],
        hook: Some(modify),
        ..Rules::NONE
    },
    params,
    extra,
    hooks: Hooks::NONE,
};

/// The ALiBi bias maximum the class writes.
const MAX_ALIBI_BIAS: f32 = 8.0;

/// The attention-mask buffers (`*.attn.bias`) are not weights.
fn filter(name: &str) -> Option<String> {
    if name.ends_with(".attn.bias") {
        return None;
    }
    Some(name.to_string())
}

/// A number the class multiplies with.
fn number(hp: &Hparams, key: &str) -> Result<f64, ConvertError> {
    let v = hp.get(key).ok_or_else(|| hp.missing(&[key]))?;
    v.as_f64().ok_or_else(|| ConvertError::BadHparam {
        path: hp.path.clone(),
        keys: vec![key.into()],
        expected: "a number".into(),
        found: v.to_string(),
    })
}

/// A required string hparam with exactly this value (the class's `assert`).
fn require_str(hp: &Hparams, key: &str, want: &str) -> Result<(), ConvertError> {
    match hp.get(key) {
        None => Err(hp.missing(&[key])),
        Some(Json::String(s)) if s == want => Ok(()),
        Some(v) => Err(ConvertError::BadHparam {
            path: hp.path.clone(),
            keys: vec![key.into()],
            expected: format!("\"{want}\" (the only value the class converts)"),
            found: v.to_string(),
        }),
    }
}

/// The class's constructor checks and its two scales: (embeddings scale, width scale).
/// `mup_embeddings_scale` wins over `embeddings_scale`; `mup_output_alpha` (which then
/// needs `mup_width_scale`) times `mup_width_scale` wins over `width_scale`; a config with
/// neither spelling of a scale is refused.
fn scales(hp: &Hparams) -> Result<(f64, f64), ConvertError> {
    require_str(hp, "activation_function", "swiglu")?;
    require_str(hp, "position_embedding_type", "alibi")?;
    let embeddings = if hp.get("mup_embeddings_scale").is_some() {
        number(hp, "mup_embeddings_scale")?
    } else if hp.get("embeddings_scale").is_some() {
        number(hp, "embeddings_scale")?
    } else {
        return Err(hp.missing(&["mup_embeddings_scale", "embeddings_scale"]));
    };
    let width = if hp.get("mup_output_alpha").is_some() {
        if hp.get("mup_width_scale").is_none() {
            return Err(hp.missing(&["mup_width_scale"]));
        }
        number(hp, "mup_output_alpha")? * number(hp, "mup_width_scale")?
    } else if hp.get("width_scale").is_some() {
        number(hp, "width_scale")?
    } else {
        return Err(hp.missing(&["mup_output_alpha", "width_scale"]));
    };
    Ok((embeddings, width))
}

/// `JaisModel.modify_tensors`: the embedding and the LM head are scaled (the transposes are
/// the shared rule's). The class derives the bias maximum from the first precomputed ALiBi
/// slope by reading its value while the tensors are still lazy, which fails for every
/// checkpoint that has slopes: such a checkpoint is refused here too.
fn modify(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name.ends_with("relative_pe.slopes") {
        return Err(ConvertError::Tensor {
            name,
            problem: "precomputed ALiBi slopes are not converted: the reference converter \
                      cannot read their values and refuses such checkpoints"
                .into(),
        });
    }
    let (embeddings, width) = scales(hp)?;
    if name == "transformer.wte.weight" {
        return Ok(Modified::Out(vec![(name, expr.mul_scalar(embeddings))]));
    }
    if name == "lm_head.weight" {
        return Ok(Modified::Out(vec![(name, expr.mul_scalar(width))]));
    }
    Ok(Modified::Pass(name, expr))
}

/// The class's constructor checks (it runs first), then `attention.max_alibi_bias`, which
/// `prepare_tensors` writes after the tensors: the class's default of 8, since a checkpoint
/// with slopes is refused.
fn extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    scales(hp)?;
    let mut out = Extra::default();
    out.early_kvs.push((
        keys::arch_key(JAIS.gguf, attention::MAX_ALIBI_BIAS),
        Value::F32(MAX_ALIBI_BIAS),
    ));
    Ok(out)
}

/// `JaisModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.req_u32(llm::CONTEXT_LENGTH, &["n_positions"])?;
    p.req_u32(llm::EMBEDDING_LENGTH, &["n_embd"])?;
    p.req_u32(llm::FEED_FORWARD_LENGTH, &["n_inner"])?;
    p.req_u32(attention::HEAD_COUNT, &["n_head"])?;
    let eps = p.hp.req_f64(&["layer_norm_epsilon"])?;
    p.f32(attention::LAYERNORM_EPS, eps);
    p.file_type();
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::{modify, scales};
    use crate::hf::config::from_json;
    use crate::hf::expr::Expr;
    use crate::ConvertError;

    fn config(extra: serde_json::Value) -> crate::hf::config::Hparams {
        let mut cfg = json!({
            "architectures": ["JAISLMHeadModel"],
            "activation_function": "swiglu",
            "position_embedding_type": "alibi",
            "n_head": 4,
        });
        for (k, v) in extra.as_object().unwrap() {
            cfg[k] = v.clone();
        }
        from_json(cfg, PathBuf::from("config.json")).unwrap()
    }

    /// The muP spellings win over the plain ones; a missing scale or another activation
    /// is refused as the class's assertions refuse it.
    #[test]
    fn jais_scales() {
        let hp = config(json!({"mup_embeddings_scale": 2.0, "embeddings_scale": 3.0,
                               "mup_output_alpha": 0.5, "mup_width_scale": 0.25,
                               "width_scale": 7.0}));
        assert_eq!(scales(&hp).unwrap(), (2.0, 0.125));
        let hp = config(json!({"embeddings_scale": 3.0, "width_scale": 7.0}));
        assert_eq!(scales(&hp).unwrap(), (3.0, 7.0));
        let hp = config(json!({"embeddings_scale": 3.0, "mup_output_alpha": 0.5}));
        assert!(matches!(
            scales(&hp),
            Err(ConvertError::MissingHparam { .. })
        ));
        let hp = config(json!({"width_scale": 7.0}));
        assert!(matches!(
            scales(&hp),
            Err(ConvertError::MissingHparam { .. })
        ));
        let hp = config(json!({"embeddings_scale": 3.0, "width_scale": 7.0,
                               "activation_function": "gelu"}));
        assert!(matches!(scales(&hp), Err(ConvertError::BadHparam { .. })));
    }

    /// A checkpoint with precomputed ALiBi slopes is refused, naming the tensor.
    #[test]
    fn jais_refuses_slopes() {
        let hp = config(json!({"embeddings_scale": 3.0, "width_scale": 7.0}));
        let slopes = Expr::constant(vec![0.5, 0.25], vec![2, 1, 1]);
        match modify(&hp, "transformer.relative_pe.slopes".into(), slopes) {
            Err(ConvertError::Tensor { name, .. }) => {
                assert_eq!(name, "transformer.relative_pe.slopes")
            }
            _ => panic!("slopes must be refused"),
        }
    }
}
