//! `Glm4ForCausalLM` and the text model of `Glm4vForConditionalGeneration` (arch `glm4`,
//! `Glm4Model` in `conversion/glm.py`).
//!
//! GLM-4-0414: fused `gate_up_proj` kept as `ffn_up`, four norms per block, q/k/v biases,
//! the generic hparams plus rotary dimensions `head_dim * partial_rotary_factor` (default
//! 0.5). The vocabulary is GPT-2 BPE with GLM's special tokens. With M-RoPE (a
//! `mrope_section` in the rope parameters, GLM-4.1V) the q/k rows (weights and biases) of
//! each head are regrouped into NeoX order over the rotary part: the even rows, then the
//! odd ones, then the rows past the rotary dimension. Multi-token-prediction layers are
//! refused.

use ggufkit::gguf::keys::{mla, rope};
use serde_json::Value as Json;

use super::{keep, no_extra, Arch, Extra, HeadDim, Hooks, ModelType, Modified, Rules, TextType};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The GLM-4 class.
pub const GLM4: Arch = Arch {
    hf_names: &["Glm4ForCausalLM", "Glm4vForConditionalGeneration"],
    model_types: &[
        ModelType {
            name: "glm4",
            hf_classes: &["Glm4ForCausalLM"],
            defaults: defaults! {
                "vocab_size" => 151552,
                "hidden_size" => 4096,
                "intermediate_size" => 13696,
                "num_hidden_layers" => 40,
                "num_attention_heads" => 32,
                "num_key_value_heads" => 2,
                "head_dim" => 128,
                "max_position_embeddings" => 131072,
                "rms_norm_eps" => 1.5625e-07,
                "rope_theta" => 10000.0,
                "partial_rotary_factor" => 0.5,
                "attention_bias" => true,
            },
            head_dim: HeadDim::Keep,
            kv_heads_key: None,
            prepare: None,
        },
        // `Glm4vTextConfig`: no head_dim, attention_bias or rotary keys of its own.
        ModelType {
            name: "glm4v_text",
            hf_classes: &["Glm4vForConditionalGeneration"],
            defaults: defaults! {
                "vocab_size" => 151552,
                "hidden_size" => 4096,
                "intermediate_size" => 13696,
                "num_hidden_layers" => 40,
                "num_attention_heads" => 32,
                "num_key_value_heads" => 2,
                "max_position_embeddings" => 32768,
                "rms_norm_eps" => 1e-5,
                "rope_theta" => 10000.0,
            },
            head_dim: HeadDim::Keep,
            kv_heads_key: Some("num_key_value_heads"),
            prepare: None,
        },
    ],
    composites: &[("glm4v", TextType::Fixed("glm4v_text"))],
    gguf: "glm4",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[GLM4_TENSORS],
    tensor_overrides: GLM4_OVERRIDES,
    filter: keep,
    rules: Rules {
        hook: Some(mrope_neox),
        ..Rules::NONE
    },
    params,
    extra: refuse_unsupported,
    hooks: Hooks::NONE,
};

/// GLM-4's decoder tensors.
const GLM4_TENSORS: &[Tensor] = &[
    Tensor::TokenEmbd,
    Tensor::Output,
    Tensor::OutputNorm,
    Tensor::AttnNorm,
    Tensor::AttnQ,
    Tensor::AttnK,
    Tensor::AttnV,
    Tensor::AttnOut,
    Tensor::FfnNorm,
    Tensor::AttnPostNorm,
    Tensor::FfnPostNorm,
    Tensor::FfnUp,
    Tensor::FfnDown,
];

/// GLM-4's `post_attention_layernorm` is the FFN's pre-norm.
const GLM4_OVERRIDES: &[(Tensor, &[&str])] = &[(
    Tensor::FfnNorm,
    &["model.layers.{bid}.post_attention_layernorm"],
)];

/// The next-token-prediction block's own tensors (written under `blk.N.nextn.`).
const NEXTN_TENSORS: &[Tensor] = &[
    Tensor::NextnEhProj,
    Tensor::NextnEmbedTokens,
    Tensor::NextnEnorm,
    Tensor::NextnHnorm,
    Tensor::NextnSharedHeadHead,
    Tensor::NextnSharedHeadNorm,
];

/// GLM-OCR (`GlmOcrForConditionalGeneration`'s text model, `GlmOCRModel`): GLM-4 with M-RoPE
/// and its next-token-prediction layers kept: the block count is `num_hidden_layers +
/// num_nextn_predict_layers` and `nextn_predict_layers` is written when the config has it.
pub const GLMOCR: Arch = Arch {
    hf_names: &["GlmOcrForConditionalGeneration"],
    model_types: &[ModelType {
        name: "glm_ocr_text",
        hf_classes: &["GlmOcrForConditionalGeneration"],
        defaults: defaults! {
            "vocab_size" => 59392,
            "hidden_size" => 1024,
            "intermediate_size" => 4096,
            "num_hidden_layers" => 16,
            "num_attention_heads" => 16,
            "num_key_value_heads" => 8,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[("glm_ocr", TextType::Fixed("glm_ocr_text"))],
    gguf: "glm4",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[GLM4_TENSORS, NEXTN_TENSORS],
    tensor_overrides: GLM4_OVERRIDES,
    filter: keep,
    rules: Rules {
        hook: Some(mrope_neox),
        nextn_blocks: true,
        ..Rules::NONE
    },
    params: ocr_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

fn ocr_params(p: &mut Params) -> Result<(), ConvertError> {
    params(p)?;
    if let Some(n) = p.hp.find_u64(&["num_nextn_predict_layers"])? {
        p.u32(mla::NEXTN_PREDICT_LAYERS, n)?;
    }
    Ok(())
}

fn partial_rotary_factor(hp: &Hparams) -> f64 {
    hp.rope
        .get("partial_rotary_factor")
        .and_then(Json::as_f64)
        .unwrap_or(0.5)
}

fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    let head_dim = head_dim(hp)?;
    p.u32(
        rope::DIMENSION_COUNT,
        (head_dim as f64 * partial_rotary_factor(hp)) as u64,
    )
}

/// The head size of the q/k rows: `head_dim`, else `hidden_size / num_attention_heads`.
fn head_dim(hp: &Hparams) -> Result<u64, ConvertError> {
    if let Some(d) = hp.find_u64(&["head_dim"])? {
        return Ok(d);
    }
    let heads = hp.req_u64(&["num_attention_heads"])?;
    if heads == 0 {
        return Err(hp.missing(&["num_attention_heads"]));
    }
    Ok(hp.req_u64(&["hidden_size"])? / heads)
}

/// With M-RoPE, each head's rotary rows of `q_proj` / `k_proj` (weight and bias) in NeoX
/// order: llama.cpp's M-RoPE kernel rotates NeoX-style pairs, the checkpoint's are adjacent.
fn mrope_neox(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if !hp.rope.contains_key("mrope_section") {
        return Ok(Modified::Pass(name, expr));
    }
    let kv = if name.ends_with("q_proj.weight") || name.ends_with("q_proj.bias") {
        false
    } else if name.ends_with("k_proj.weight") || name.ends_with("k_proj.bias") {
        true
    } else {
        return Ok(Modified::Pass(name, expr));
    };
    let n_head = hp.req_u64(&["num_attention_heads"])?;
    let n_kv = if kv {
        hp.req_u64(&["num_key_value_heads"])?
    } else {
        n_head
    };
    let hd = head_dim(hp)?;
    let bad = |problem: String| ConvertError::Tensor {
        name: name.clone(),
        problem,
    };
    let rows = expr.shape().first().copied().unwrap_or(0);
    if hd == 0 || rows % hd != 0 {
        return Err(bad(format!(
            "{rows} rows are not whole heads of {hd} (the M-RoPE q/k regrouping)"
        )));
    }
    let heads = rows / hd;
    if heads != n_head && heads != n_kv {
        return Err(bad(format!(
            "{heads} heads of {hd} rows, expected {n_head} or {n_kv} (the M-RoPE q/k regrouping)"
        )));
    }
    let rot = (hd as f64 * partial_rotary_factor(hp)) as u64;
    if !rot.is_multiple_of(2) {
        return Err(bad(format!(
            "rotary dimension {rot} of a {hd}-row head is not even (the M-RoPE q/k regrouping)"
        )));
    }
    // A rotary dimension past the head covers the whole head.
    let rot = rot.min(hd);
    let mut map = Vec::with_capacity(rows as usize);
    for h in 0..heads {
        let base = h * hd;
        map.extend((0..rot).step_by(2).map(|r| base + r));
        map.extend((1..rot).step_by(2).map(|r| base + r));
        map.extend((rot..hd).map(|r| base + r));
    }
    let expr = expr.gather_rows(&name, map)?;
    Ok(Modified::Pass(name, expr))
}

fn refuse_unsupported(hp: &Hparams) -> Result<Extra, ConvertError> {
    if hp
        .get("num_nextn_predict_layers")
        .and_then(Json::as_u64)
        .is_some_and(|n| n > 0)
    {
        return Err(ConvertError::UnsupportedFeature {
            arch: hp.arch.clone(),
            feature: "multi-token-prediction layers (num_nextn_predict_layers) are not supported"
                .into(),
        });
    }
    Ok(Extra::default())
}

/// `Glm4Model.set_vocab`: GPT-2 BPE with eos/unk/bos = `<|endoftext|>` and eot = `<|user|>`
/// when the special-token files do not set them.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    b.gpt2_with_added_specials(|find| {
        let (eot, eos) = (find("<|user|>")?, find("<|endoftext|>")?);
        Ok(vec![("eos", eos), ("eot", eot), ("unk", eos), ("bos", eos)])
    })
}
