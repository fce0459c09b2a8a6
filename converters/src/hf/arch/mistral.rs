//! Mistral's native format (`params.json` + `consolidated*.safetensors`, converted with
//! `--mistral-format`): `MistralModel` in the reference's `conversion/mistral.py`.
//!
//! A Llama model read from Mistral's own names (`tok_embeddings`, `layers.N.attention.wq`,
//! `layers.N.feed_forward.w1`, …, which the shared name table maps as gguf-py's does) whose
//! q/k rows are already in GGML's rotary layout: no permutation. The architecture is `llama`,
//! or `mistral3` when params.json has a `llama_4_scaling` entry (Ministral 3 and later;
//! the reference switches back to `llama` "for compatibility" otherwise). The hparams are
//! the generic block read from params.json's own keys (`dim`, `n_layers`, `hidden_dim`,
//! `n_heads`, `n_kv_heads`, `norm_eps`, `rope_theta`, `head_dim`), no defaults filled in,
//! then the rope dimensions and Mistral's `yarn` and `llama_4_scaling` sections. The
//! vocabulary is Mistral's (Tekken or SentencePiece through mistral_common), written by
//! `crate::hf::mistral`, not by the HF tokenizer paths.
//!
//! These descriptions have no HF architecture name: a config.json never selects them, only
//! `--mistral-format` does.

use ggufkit::gguf::keys::{extra, rope};
use serde_json::Value as Json;

use super::{deepseek2, llama, no_extra, Arch, Hooks, QkPermute, Rules};
use crate::hf::config::Hparams;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::json_truthy as truthy;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// `MistralModel` written as `llama` (params.json without `llama_4_scaling`).
pub const MISTRAL_NATIVE: Arch = Arch {
    hf_names: &[],
    model_types: &[],
    composites: &[],
    gguf: "llama",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        DECODER,
        &[
            Tensor::FfnGateInp,
            Tensor::FfnGateExp,
            Tensor::FfnUpExp,
            Tensor::FfnDownExp,
        ],
    ],
    tensor_overrides: &[],
    filter: llama::filter,
    rules: Rules {
        permute_qk: QkPermute::No,
        experts: &[llama::MIXTRAL_EXPERTS],
        ..Rules::NONE
    },
    params,
    extra: llama::rope_freqs,
    hooks: Hooks::NONE,
};

/// `MistralModel` written as `mistral3` (params.json with `llama_4_scaling`).
pub const MISTRAL_NATIVE_3: Arch = Arch {
    gguf: "mistral3",
    tensors: &[DECODER],
    ..MISTRAL_NATIVE
};

/// `MistralMoeModel` (params.json with a `moe` section, Mistral Large 3's layout): written as
/// DeepSeek-V2 (`deepseek2`: MLA attention, routed and shared experts), its params.json keys
/// renamed to the HF ones by [`crate::hf::mistral::load_params`], its tensors renamed by
/// [`moe_filter`] to the names DeepSeek-V2's steps expect (`kv_b_proj` split into `k_b` /
/// `v_b`, experts stacked down, gate, up).
pub const MISTRAL_NATIVE_MOE: Arch = Arch {
    hf_names: &[],
    model_types: &[],
    composites: &[],
    gguf: "deepseek2",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        DECODER,
        deepseek2::MLA_TENSORS,
        deepseek2::MOE_NEXTN_TENSORS,
    ],
    tensor_overrides: &[],
    filter: moe_filter,
    rules: Rules {
        experts: &[deepseek2::DEEPSEEK_EXPERTS],
        hook: Some(deepseek2::hook),
        ..Rules::NONE
    },
    params: moe_params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `MistralMoeModel.filter_tensors`: `qscale_act` / `qscale_weight` → `input_scale` /
/// `weight_scale`, `.wkv_b.` → `.kv_b_proj.`, and an expert `layers.N.experts.E.wK` →
/// `model.layers.N.mlp.experts.E.{gate,down,up}_proj` (w1, w2, w3).
fn moe_filter(name: &str) -> Option<String> {
    let mut name = name.to_string();
    if let Some(b) = name.strip_suffix(".qscale_act") {
        name = format!("{b}.input_scale");
    }
    if let Some(b) = name.strip_suffix(".qscale_weight") {
        name = format!("{b}.weight_scale");
    }
    name = name.replace(".wkv_b.", ".kv_b_proj.");
    if name.contains(".experts.") {
        name = name
            .replace(".experts.", ".mlp.experts.")
            .replace(".w1.", ".gate_proj.")
            .replace(".w2.", ".down_proj.")
            .replace(".w3.", ".up_proj.");
        name = format!("model.{name}");
    }
    Some(name)
}

/// `MistralMoeModel.set_gguf_parameters`: DeepSeek-V2's (generic block with one KV head, MLA
/// and expert keys), `set_mistral_config`, the attention temperature length (yarn's
/// `original_max_position_embeddings`, which must be there) and the YaRN log multiplier
/// overwritten with 0.1.
fn moe_params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    deepseek2::mla_params(p)?;
    mistral_config(p)?;
    let hp = p.hp;
    let orig = entry(hp, "yarn", "original_max_position_embeddings")?;
    let orig = crate::hf::config::json_u64(orig).ok_or_else(|| {
        ConvertError::wrong_type(
            &hp.path,
            "yarn.original_max_position_embeddings",
            "a non-negative integer",
            orig,
        )
    })?;
    p.u32(extra::ATTN_TEMPERATURE_LENGTH, orig)?;
    p.f32(extra::ROPE_SCALING_YARN_LOG_MUL, 0.1);
    Ok(())
}

/// The description for these hparams (the class's constructor choice).
pub fn for_params(hp: &Hparams) -> &'static Arch {
    if hp.get("moe").is_some_and(|m| !m.is_null()) {
        &MISTRAL_NATIVE_MOE
    } else if hp.map.contains_key("llama_4_scaling") {
        &MISTRAL_NATIVE_3
    } else {
        &MISTRAL_NATIVE
    }
}

/// A required entry of a params.json section.
fn entry<'a>(hp: &'a Hparams, section: &str, key: &str) -> Result<&'a Json, ConvertError> {
    hp.get(section)
        .and_then(|s| s.get(key))
        .ok_or_else(|| hp.missing(&[&format!("{section}.{key}")]))
}

/// A required number of a params.json section.
fn number(hp: &Hparams, section: &str, key: &str) -> Result<f64, ConvertError> {
    let v = entry(hp, section, key)?;
    v.as_f64().ok_or_else(|| {
        ConvertError::wrong_type(&hp.path, format!("{section}.{key}"), "a number", v)
    })
}

/// `LlamaModel.set_gguf_parameters` for the native format (the generic block and the rope
/// dimensions; the vocabulary size is the tokenizer's), then
/// `MistralModel.set_mistral_config`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.u32(rope::DIMENSION_COUNT, llama::rope_dim(p.hp)?)?;
    mistral_config(p)
}

/// `MistralModel.set_mistral_config`: the `yarn` section as YaRN rope scaling (log
/// multiplier 0 with `apply_scale`, else 1) and `llama_4_scaling.beta` as the attention
/// temperature scale.
fn mistral_config(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    for section in ["yarn", "llama_4_scaling"] {
        if let Some(v) = hp.get(section).filter(|v| !v.is_object() && !v.is_null()) {
            return Err(ConvertError::wrong_type(&hp.path, section, "an object", v));
        }
    }
    if hp.get("yarn").is_some() {
        let factor = number(hp, "yarn", "factor")?;
        let beta = number(hp, "yarn", "beta")?;
        let alpha = number(hp, "yarn", "alpha")?;
        let log_mul = if truthy(entry(hp, "yarn", "apply_scale")?) {
            0.0
        } else {
            1.0
        };
        let orig = entry(hp, "yarn", "original_max_position_embeddings")?;
        let orig = crate::hf::config::json_u64(orig).ok_or_else(|| {
            ConvertError::wrong_type(
                &hp.path,
                "yarn.original_max_position_embeddings",
                "a non-negative integer",
                orig,
            )
        })?;
        p.string(rope::SCALING_TYPE, "yarn");
        p.f32(rope::SCALING_FACTOR, factor);
        p.f32(rope::SCALING_YARN_BETA_FAST, beta);
        p.f32(rope::SCALING_YARN_BETA_SLOW, alpha);
        p.f32(extra::ROPE_SCALING_YARN_LOG_MUL, log_mul);
        p.u32(rope::SCALING_ORIG_CTX_LEN, orig)?;
    }
    if hp.get("llama_4_scaling").is_some_and(|v| !v.is_null()) {
        p.f32(
            extra::ATTN_TEMPERATURE_SCALE,
            number(hp, "llama_4_scaling", "beta")?,
        );
    }
    Ok(())
}
