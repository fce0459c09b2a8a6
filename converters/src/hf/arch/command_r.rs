//! Command-R and Command-R7B (`conversion/command_r.py`).
//!
//! `CohereForCausalLM` (arch `command-r`): context length from `model_max_length` when the
//! config has it, `logit_scale`, rope scaling type forced to `none`; optional per-head q/k
//! norms. `Cohere2ForCausalLM` (arch `cohere2`): adds the sliding window, `vocab_size`,
//! partial rotary dimensions from `rotary_pct`, and drops bias tensors (which must be zero).
//! Both have tied embeddings only (no `output` tensor).

use super::{no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;
use ggufkit::gguf::keys::{attention, llm};

/// `CohereForCausalLM` (arch `command-r`).
pub const COMMAND_R: Arch = Arch {
    hf_names: &["CohereForCausalLM"],
    model_types: &[ModelType {
        name: "cohere",
        hf_classes: &["CohereForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 256000,
            "hidden_size" => 8192,
            "intermediate_size" => 22528,
            "logit_scale" => 0.0625,
            "num_hidden_layers" => 40,
            "num_attention_heads" => 64,
            "max_position_embeddings" => 8192,
            "layer_norm_eps" => 1e-5,
            "rope_theta" => 500000.0,
            "use_qk_norm" => false,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "command-r",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::AttnNorm,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::AttnQNorm,
        Tensor::AttnKNorm,
        Tensor::FfnGate,
        Tensor::FfnUp,
        Tensor::FfnDown,
    ]],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules::NONE,
    params: command_r_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `Cohere2ForCausalLM` (arch `cohere2`).
pub const COHERE2: Arch = Arch {
    hf_names: &["Cohere2ForCausalLM"],
    model_types: &[ModelType {
        name: "cohere2",
        hf_classes: &["Cohere2ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 256000,
            "hidden_size" => 8192,
            "intermediate_size" => 22528,
            "logit_scale" => 0.0625,
            "num_hidden_layers" => 40,
            "num_attention_heads" => 64,
            "max_position_embeddings" => 8192,
            "layer_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
            "sliding_window" => 4096,
        },
        head_dim: HeadDim::Derive,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "cohere2",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::AttnNorm,
        Tensor::AttnQ,
        Tensor::AttnK,
        Tensor::AttnV,
        Tensor::AttnOut,
        Tensor::FfnGate,
        Tensor::FfnUp,
        Tensor::FfnDown,
    ]],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        hook: Some(drop_zero_bias),
        ..Rules::NONE
    },
    params: cohere2_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

fn logit_scale(p: &mut Params) -> Result<(), ConvertError> {
    let v = p.hp.req_f64(&["logit_scale"])?;
    p.f32(llm::LOGIT_SCALE, v);
    Ok(())
}

fn command_r_params(p: &mut Params) -> Result<(), ConvertError> {
    // `hparams["max_position_embeddings"] = find_hparam(["model_max_length",
    // "max_position_embeddings"])`: the trained context of Command-R / Aya.
    let mut hp: Hparams = p.hp.clone();
    let ctx = hp
        .find(&["model_max_length", "max_position_embeddings"])
        .cloned()
        .ok_or_else(|| hp.missing(&["model_max_length", "max_position_embeddings"]))?;
    hp.map.insert("max_position_embeddings".into(), ctx);
    let mut q = p.with_hparams(&hp);
    q.generic()?;
    logit_scale(&mut q)?;
    q.rope_scaling_none();
    Ok(())
}

fn cohere2_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    logit_scale(p)?;
    p.req_u32(attention::SLIDING_WINDOW, &["sliding_window"])?;
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    let hp = p.hp;
    let pct = hp.req_f64(&["rotary_pct"])?;
    p.partial_rope_dims(pct)?;
    p.rope_scaling_none();
    Ok(())
}

/// Cohere2's biases are all zero and llama.cpp's runtime has no place for them.
fn drop_zero_bias(_: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if !name.ends_with(".bias") {
        return Ok(Modified::Pass(name, expr));
    }
    let values = expr.eval_f32().map_err(|e| ConvertError::Tensor {
        name: name.clone(),
        problem: e.to_string(),
    })?;
    if values.iter().any(|v| *v != 0.0) {
        return Err(ConvertError::Tensor {
            name,
            problem: "Cohere2 bias tensors must be zero (llama.cpp has no bias here)".into(),
        });
    }
    Ok(Modified::Drop)
}
