//! Gemma, Gemma 2 and Gemma 3 (`conversion/gemma.py`).
//!
//! Every tensor whose HF name ends with `norm.weight` gets +1 (Gemma's RMSNorm multiplies
//! by `1 + w`). Gemma 1/2 drop `lm_head.weight` and write their own hparam list; Gemma 3
//! writes the generic block and then overwrites (in place) or appends its own values, and
//! cuts `embed_tokens` to the real vocabulary.

use ggufkit::gguf::keys::{attention, llm, rope, tokenizer};
use serde_json::Value as Json;

use super::{no_extra, Arch, HeadDim, Hooks, ModelType, Rules, TextType};
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// `GemmaForCausalLM` (arch `gemma`).
pub const GEMMA: Arch = Arch {
    hf_names: &["GemmaForCausalLM"],
    model_types: &[ModelType {
        name: "gemma",
        hf_classes: &["GemmaForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 256000,
            "hidden_size" => 3072,
            "intermediate_size" => 24576,
            "num_hidden_layers" => 28,
            "num_attention_heads" => 16,
            "num_key_value_heads" => 16,
            "head_dim" => 256,
            "max_position_embeddings" => 8192,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 10000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "gemma",
    vocab: VocabKind::Own(gemma_set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: drop_lm_head,
    rules: Rules {
        norm_shift: true,
        ..Rules::NONE
    },
    params: gemma_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// Gemma's fill-in-the-middle tokens and `eot`, at the ids `GemmaModel.set_vocab` gives them.
const FIXED_SPECIALS: [(&str, i128); 5] = [
    ("prefix", 67),
    ("suffix", 69),
    ("middle", 68),
    ("fsep", 70),
    ("eot", 107),
];

/// `GemmaModel.set_vocab`: the SentencePiece vocabulary (`tokenizer.model` required), a
/// second special vocabulary of the fixed tokens, and no space prefix.
fn gemma_set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let model = b.require_spm_model("Gemma needs tokenizer.model")?;
    let path = b.sentencepiece(model)?;
    let types = FIXED_SPECIALS.map(|(t, _)| t);
    b.fixed_special_tokens(&types, &FIXED_SPECIALS)?;
    b.set_bool(tokenizer::ADD_SPACE_PREFIX, false);
    Ok((path, None))
}

/// `Gemma2ForCausalLM` (arch `gemma2`).
pub const GEMMA2: Arch = Arch {
    hf_names: &["Gemma2ForCausalLM"],
    model_types: &[ModelType {
        name: "gemma2",
        hf_classes: &["Gemma2ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 256000,
            "hidden_size" => 2304,
            "intermediate_size" => 9216,
            "num_hidden_layers" => 26,
            "num_attention_heads" => 8,
            "num_key_value_heads" => 4,
            "head_dim" => 256,
            "max_position_embeddings" => 8192,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 10000.0,
            "sliding_window" => 4096,
            "final_logit_softcapping" => 30.0,
            "attn_logit_softcapping" => 50.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "gemma2",
    vocab: VocabKind::Gemma,
    vocab_quirks: VocabQuirks {
        requires_spm: true,
        ..VocabQuirks::NONE
    },
    tensors: &[DECODER, &[Tensor::AttnPostNorm, Tensor::FfnPostNorm]],
    tensor_overrides: &[],
    filter: drop_lm_head,
    rules: Rules {
        norm_shift: true,
        ..Rules::NONE
    },
    params: gemma2_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `Gemma3ForCausalLM` and the text part of `Gemma3ForConditionalGeneration` (arch `gemma3`).
pub const GEMMA3: Arch = Arch {
    hf_names: &["Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"],
    model_types: &[ModelType {
        name: "gemma3_text",
        hf_classes: &["Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"],
        defaults: defaults! {
            "vocab_size" => 262208,
            "hidden_size" => 2304,
            "intermediate_size" => 9216,
            "num_hidden_layers" => 26,
            "num_attention_heads" => 8,
            "num_key_value_heads" => 4,
            "head_dim" => 256,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 1e6,
            "rope_local_base_freq" => 10000.0,
            "sliding_window" => 4096,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[("gemma3", TextType::Fixed("gemma3_text"))],
    gguf: "gemma3",
    vocab: VocabKind::Gemma,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        DECODER,
        &[
            Tensor::AttnQNorm,
            Tensor::AttnKNorm,
            Tensor::AttnPostNorm,
            Tensor::FfnPostNorm,
        ],
    ],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        norm_shift: true,
        slice_embeddings: true,
        ..Rules::NONE
    },
    params: gemma3_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `Gemma3TextModel`, EmbeddingGemma (arch `gemma-embedding`, `EmbeddingGemma(Gemma3Model)`):
/// Gemma 3's rules on a headless checkpoint (tensor names without `model.`), the sliding
/// window as config.json writes it (Gemma3TextConfig changes it for bidirectional
/// attention) and the sentence-transformers pooling type. Its Dense modules are read only
/// under the reference's `--sentence-transformers-dense-modules`, which is not offered
/// here: as in the reference's default, they are not converted.
pub const EMBEDDING_GEMMA: Arch = Arch {
    hf_names: &["Gemma3TextModel"],
    model_types: &[],
    composites: &[],
    gguf: "gemma-embedding",
    vocab: VocabKind::Gemma,
    vocab_quirks: VocabQuirks::NONE,
    tensors: GEMMA3.tensors,
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        norm_shift: true,
        slice_embeddings: true,
        ..Rules::NONE
    },
    params: embedding_gemma_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

fn embedding_gemma_params(p: &mut Params) -> Result<(), ConvertError> {
    gemma3_params(p)?;
    let raw = p.hp.raw.get("sliding_window").cloned();
    let sw = match raw {
        None | Some(Json::Null) => return Err(p.hp.missing(&["sliding_window"])),
        Some(v) => crate::hf::config::json_u64(&v).ok_or_else(|| {
            ConvertError::wrong_type(&p.hp.path, "sliding_window", "an integer", v)
        })?,
    };
    p.u32(attention::SLIDING_WINDOW, sw)?;
    p.pooling()
}

fn drop_lm_head(name: &str) -> Option<String> {
    (name != "lm_head.weight").then(|| name.to_string())
}

/// The explicit list Gemma 1 and 2 write instead of the generic block.
fn gemma_common(p: &mut Params) -> Result<(), ConvertError> {
    p.req_u32(llm::CONTEXT_LENGTH, &["max_position_embeddings"])?;
    p.req_u32(llm::EMBEDDING_LENGTH, &["hidden_size"])?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.req_u32(llm::FEED_FORWARD_LENGTH, &["intermediate_size"])?;
    p.req_u32(attention::HEAD_COUNT, &["num_attention_heads"])?;
    p.req_u32(
        attention::HEAD_COUNT_KV,
        &["num_key_value_heads", "num_attention_heads"],
    )?;
    let eps = p.hp.req_f64(&["rms_norm_eps"])?;
    p.f32(attention::LAYERNORM_RMS_EPS, eps);
    p.req_u32(attention::KEY_LENGTH, &["head_dim"])?;
    p.req_u32(attention::VALUE_LENGTH, &["head_dim"])?;
    p.file_type();
    Ok(())
}

fn gemma_params(p: &mut Params) -> Result<(), ConvertError> {
    gemma_common(p)
}

fn gemma2_params(p: &mut Params) -> Result<(), ConvertError> {
    gemma_common(p)?;
    let a = p.hp.req_f64(&["attn_logit_softcapping"])?;
    p.f32(llm::ATTN_LOGIT_SOFTCAPPING, a);
    let f = p.hp.req_f64(&["final_logit_softcapping"])?;
    p.f32(llm::FINAL_LOGIT_SOFTCAPPING, f);
    p.req_u32(attention::SLIDING_WINDOW, &["sliding_window"])
}

pub(super) fn gemma3_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    let u = |k: &str, d: u64| -> Result<u64, ConvertError> { Ok(hp.find_u64(&[k])?.unwrap_or(d)) };
    p.u32(llm::CONTEXT_LENGTH, u("max_position_embeddings", 131072)?)?;
    p.u32(attention::HEAD_COUNT, u("num_attention_heads", 8)?)?;
    let eps = hp.find_f64(&["rms_norm_eps"])?.unwrap_or(1e-6);
    p.f32(attention::LAYERNORM_RMS_EPS, eps);
    let hd = u("head_dim", 256)?;
    p.u32(attention::KEY_LENGTH, hd)?;
    p.u32(attention::VALUE_LENGTH, hd)?;
    let theta = hp
        .rope_full()
        .get("rope_theta")
        .and_then(Json::as_f64)
        .unwrap_or(1_000_000.0);
    p.f32(rope::FREQ_BASE, theta);
    if hp
        .get("attn_logit_softcapping")
        .is_some_and(|v| !v.is_null())
    {
        return Err(ConvertError::Unsupported(
            "gemma3: attn_logit_softcapping must be null".into(),
        ));
    }
    if let Some(f) = hp.find_f64(&["final_logit_softcapping"])? {
        if f != 0.0 {
            p.f32(llm::FINAL_LOGIT_SOFTCAPPING, f);
        }
    }
    if hp.get("sliding_window_pattern") != Some(&Json::from(1)) {
        p.req_u32(attention::SLIDING_WINDOW, &["sliding_window"])?;
    }
    p.u32(attention::HEAD_COUNT_KV, u("num_key_value_heads", 4)?)
}
