//! `Phi3ForCausalLM` and `Phi4ForCausalLMV` (arch `phi3`, `Phi3MiniModel` in
//! `conversion/phi.py`) and `PhiMoEForCausalLM` (arch `phimoe`, its `PhiMoeModel` subclass).
//!
//! Phi-4-reasoning-vision's text half (`Phi4ForCausalLMV`) is a Phi-3 model whose hub config
//! has the `model_type` `phi4-siglip`, which transformers has no class for: the reference
//! reads that config.json as written (no Phi-3 defaults), and its GPT-2 tokenizer step, which
//! loads the tokenizer with `AutoTokenizer`, builds a generic config from it (see
//! [`set_vocab`]). The vision tower and projector are left out by the text model's filter.
//!
//! Fused `qkv_proj` and `gate_up_proj` are kept fused; the hparams are Phi-3's own list;
//! 128k models get generated `rope_factors_long/short` tensors and an attention factor KV
//! that is written while tensors are processed (so before `general.type`). Phi-3.5-MoE adds
//! the expert counts and stacks its per-expert `w1`/`w2`/`w3` like Mixtral.

use ggufkit::gguf::keys::{self, attention, llm, rope};
use ggufkit::gguf::Value;
use serde_json::{Map, Value as Json};

use super::{keep, Arch, Experts, Extra, HeadDim, Hooks, ModelType, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, MOE_DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The Phi-3 class.
pub const PHI3: Arch = Arch {
    hf_names: &["Phi3ForCausalLM"],
    model_types: &[ModelType {
        name: "phi3",
        hf_classes: &["Phi3ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 32064,
            "hidden_size" => 3072,
            "intermediate_size" => 8192,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "max_position_embeddings" => 4096,
            "original_max_position_embeddings" => 4096,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: Some(phi3_rope_is_valid),
    }],
    composites: &[],
    gguf: "phi3",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::Output,
        Tensor::OutputNorm,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnUp,
        Tensor::FfnDown,
    ]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules::NONE,
    params,
    extra,
    hooks: Hooks::NONE,
};

/// Phi-4-reasoning-vision's text half: Phi-3's tensors, hparams and vocabulary. Its hub
/// `model_type` (`phi4-siglip`) names no transformers class, so no defaults are filled in; a
/// config that says `phi3` gets Phi-3's (the model type is Phi-3's own).
pub const PHI4V: Arch = Arch {
    hf_names: &["Phi4ForCausalLMV"],
    model_types: &[],
    ..PHI3
};

/// `Phi3MiniModel.set_vocab`. Its GPT-2 branch loads the tokenizer with `AutoTokenizer`,
/// which builds the config from config.json first: Phi3Config for the `phi3` model type (a
/// config it rejects raises an error that is not a `ValueError`, so the reference fails),
/// the model type's own class for another type transformers has, and a generic
/// `PreTrainedConfig` for one it has not (`phi4-siglip`) or none, which fails on transformers
/// 4's `rope_scaling` of a scaled type (and, without `model_type`, on unknown layer kinds).
/// The SentencePiece branch reads no config.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let gpt2 = b
        .tokenizer_config()
        .and_then(|t| t.get("tokenizer_class"))
        .and_then(Json::as_str)
        == Some("GPT2Tokenizer");
    if gpt2 {
        auto_tokenizer_config_refusal(b.dir())?;
    }
    b.phi3()
}

/// Where `AutoTokenizer`'s config loading fails on config.json (see [`set_vocab`]).
fn auto_tokenizer_config_refusal(dir: &crate::hf::ModelDir) -> Result<(), ConvertError> {
    let raw = dir.config()?;
    let path = dir.config_path();
    let refused = |why: &str| {
        Err(ConvertError::format(
            &path,
            None,
            format!(
                "{why}; the class loads its GPT-2 tokenizer with AutoTokenizer, which builds \
                 this config first, so the reference refuses the model"
            ),
        ))
    };
    let Some(obj) = raw.as_object() else {
        return Ok(());
    };
    match obj.get("model_type").and_then(Json::as_str) {
        Some("phi3") => {
            let mut cfg = obj.clone();
            if !phi3_rope_is_valid(&mut cfg) {
                return refused("Phi3Config rejects this config's rope scaling");
            }
            Ok(())
        }
        Some(t) if super::model_type(t).is_some() => Ok(()),
        _ => {
            crate::hf::generic_config::check_layer_lists_of(raw, &path)?;
            if crate::hf::generic_config::scaled_rope_scaling_fails(obj) {
                return refused(
                    "transformers reads this config as a generic PreTrainedConfig (its \
                     model_type has no config class), whose rope_scaling standardization needs \
                     max_position_embeddings before it is set",
                );
            }
            Ok(())
        }
    }
}

/// Phi3Config's rope validation: `su` and `yarn` become `longrope`; any other type than
/// `default` and `longrope`, a `longrope` without both factor lists, or factor lists not of
/// half the rotary dimensions make AutoConfig raise, so the reference reads config.json as
/// written (`false`).
fn phi3_rope_is_valid(cfg: &mut Map<String, Json>) -> bool {
    let rope = match (cfg.get("rope_parameters"), cfg.get("rope_scaling")) {
        (Some(Json::Object(m)), _) | (_, Some(Json::Object(m))) => m,
        _ => return true,
    };
    let ty = rope
        .get("rope_type")
        .or_else(|| rope.get("type"))
        .and_then(Json::as_str)
        .unwrap_or("default");
    let ty = if matches!(ty, "su" | "yarn") {
        "longrope"
    } else {
        ty
    };
    match ty {
        "default" => true,
        "longrope" => {
            let num = |k: &str, d: f64| cfg.get(k).and_then(Json::as_f64).unwrap_or(d);
            let (hidden, heads) = (num("hidden_size", 3072.0), num("num_attention_heads", 32.0));
            let pct = rope
                .get("partial_rotary_factor")
                .and_then(Json::as_f64)
                .unwrap_or_else(|| num("partial_rotary_factor", 1.0));
            if heads == 0.0 {
                return false;
            }
            let rotary = ((hidden / heads).floor() * pct).trunc() as usize;
            ["long_factor", "short_factor"].iter().all(|k| {
                matches!(rope.get(*k), Some(Json::Array(a))
                    if a.len() == rotary / 2 && a.iter().all(Json::is_number))
            })
        }
        _ => false,
    }
}

/// `PhiMoEForCausalLM` (arch `phimoe`). The reference registers the remote-code class name
/// Phi-3.5-MoE's config gives; transformers' own `PhimoeForCausalLM` is not registered.
pub const PHIMOE: Arch = Arch {
    hf_names: &["PhiMoEForCausalLM"],
    model_types: &[ModelType {
        name: "phimoe",
        hf_classes: &["PhiMoEForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 32064,
            "hidden_size" => 4096,
            "intermediate_size" => 6400,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 8,
            "max_position_embeddings" => 131072,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 1e6,
            "sliding_window" => serde_json::Value::Null,
            "num_experts_per_tok" => 2,
            "num_local_experts" => 16,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "phimoe",
    vocab: VocabKind::Phi3,
    vocab_quirks: VocabQuirks::NONE,
    // gguf-py's phimoe list is the routed-experts decoder's.
    tensors: &[MOE_DECODER],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        experts: &[PHIMOE_EXPERTS],
        ..Rules::NONE
    },
    params: phimoe_params,
    extra: phimoe_extra,
    hooks: Hooks::NONE,
};

/// Phi-3.5-MoE's per-expert `w1`/`w2`/`w3` (gate, down, up), stacked in that order.
const PHIMOE_EXPERTS: Experts = Experts {
    marker: "block_sparse_moe.experts",
    count_keys: &["num_local_experts", "num_experts"],
    parts: &["w1", "w2", "w3"],
    expert_name: "model.layers.{bid}.block_sparse_moe.experts.{xid}.{w}.weight",
    merged_name: "model.layers.{bid}.block_sparse_moe.experts.{w}.weight",
};

struct Shape {
    n_embd: u64,
    max_pos: u64,
    orig_max_pos: u64,
    rope_dims: u64,
}

fn shape(hp: &Hparams) -> Result<Shape, ConvertError> {
    let n_embd = hp.req_u64(&["hidden_size", "n_embd"])?;
    let n_head = hp.req_u64(&["num_attention_heads", "n_head"])?;
    let max_pos = hp.req_u64(&["n_positions", "max_position_embeddings"])?;
    let orig_max_pos = hp
        .rope
        .get("original_max_position_embeddings")
        .and_then(crate::hf::config::json_u64)
        .ok_or_else(|| hp.missing(&["original_max_position_embeddings"]))?;
    let pct = hp
        .rope
        .get("partial_rotary_factor")
        .and_then(Json::as_f64)
        .unwrap_or(1.0);
    if n_head == 0 {
        return Err(hp.missing(&["num_attention_heads"]));
    }
    let rope_dims = (pct * n_embd as f64).trunc() as u64 / n_head;
    Ok(Shape {
        n_embd,
        max_pos,
        orig_max_pos,
        rope_dims,
    })
}

fn params(p: &mut Params) -> Result<(), ConvertError> {
    let s = shape(p.hp)?;
    let hp = p.hp;
    p.u32(llm::CONTEXT_LENGTH, s.max_pos)?;
    p.u32(rope::SCALING_ORIG_CTX_LEN, s.orig_max_pos)?;
    p.u32(llm::EMBEDDING_LENGTH, s.n_embd)?;
    p.req_u32(llm::FEED_FORWARD_LENGTH, &["intermediate_size"])?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.req_u32(attention::HEAD_COUNT, &["num_attention_heads", "n_head"])?;
    p.req_u32(
        attention::HEAD_COUNT_KV,
        &["num_key_value_heads", "n_head_kv"],
    )?;
    let eps = hp.req_f64(&["rms_norm_eps"])?;
    p.f32(attention::LAYERNORM_RMS_EPS, eps);
    p.u32(rope::DIMENSION_COUNT, s.rope_dims)?;
    let theta = hp
        .rope_full()
        .get("rope_theta")
        .and_then(Json::as_f64)
        .ok_or_else(|| hp.missing(&["rope_theta"]))?;
    p.f32(rope::FREQ_BASE, theta);
    p.file_type();
    let sw = hp.find_u64(&["sliding_window"])?.unwrap_or(0);
    p.u32(attention::SLIDING_WINDOW, sw)
}

/// Phi-3's hparams, then the expert counts (used count first, as `PhiMoeModel` adds them).
fn phimoe_params(p: &mut Params) -> Result<(), ConvertError> {
    params(p)?;
    let used =
        p.hp.find(&["num_experts_per_tok", "num_experts_per_token"])
            .cloned()
            .ok_or_else(|| {
                p.hp.missing(&["num_experts_per_tok", "num_experts_per_token"])
            })?;
    p.u32_or_list(llm::EXPERT_USED_COUNT, &used)?;
    p.req_u32(llm::EXPERT_COUNT, &["num_local_experts", "num_experts"])
}

fn factors(v: Option<&Json>) -> Option<Vec<f32>> {
    v?.as_array()?
        .iter()
        .map(|x| x.as_f64().map(|f| f as f32))
        .collect()
}

/// LongRoPE factors and the attention factor of 128k models.
fn extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    longrope_extra(hp, PHI3.gguf)
}

fn phimoe_extra(hp: &Hparams) -> Result<Extra, ConvertError> {
    longrope_extra(hp, PHIMOE.gguf)
}

/// The LongRoPE tensors and the attention factor KV of `arch`.
fn longrope_extra(hp: &Hparams, arch: &str) -> Result<Extra, ConvertError> {
    let long = factors(hp.rope.get("long_factor"));
    if long.as_ref().is_none_or(Vec::is_empty) {
        return Ok(Extra::default());
    }
    let s = shape(hp)?;
    let scale = s.max_pos as f64 / s.orig_max_pos as f64;
    let ty = hp
        .rope
        .get("rope_type")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_lowercase();
    let attn = match ty.as_str() {
        "" => return Err(hp.missing(&["rope_scaling.type"])),
        "su" | "longrope" if scale > 1.0 => {
            (1.0 + scale.ln() / (s.orig_max_pos as f64).ln()).sqrt()
        }
        "yarn" if scale > 1.0 => 0.1 * scale.ln() + 1.0,
        "su" | "longrope" | "yarn" => 1.0,
        t => {
            return Err(ConvertError::Unsupported(format!(
                "{arch}: rope scaling type {t:?} is not supported"
            )))
        }
    };
    let long = long.unwrap_or_default();
    let short = factors(hp.rope.get("short_factor"))
        .ok_or_else(|| hp.missing(&["rope_scaling.short_factor"]))?;
    if long.len() != short.len() || long.len() as f64 != s.rope_dims as f64 / 2.0 {
        return Err(ConvertError::format(
            &hp.path,
            None,
            format!(
                "rope long and short factors must have {} entries, found {} and {}",
                s.rope_dims as f64 / 2.0,
                long.len(),
                short.len()
            ),
        ));
    }
    let n = long.len() as u64;
    Ok(Extra {
        tensors: vec![
            (
                "rope_factors_long.weight".into(),
                Expr::constant(long, vec![n]),
            ),
            (
                "rope_factors_short.weight".into(),
                Expr::constant(short, vec![n]),
            ),
        ],
        early_kvs: vec![(
            keys::arch_key(arch, rope::SCALING_ATTN_FACTOR),
            Value::F32(attn as f32),
        )],
    })
}

#[cfg(test)]
mod tests {
    /// transformers' own class name is not registered (as in the reference), but the error
    /// points to the registered spelling.
    #[test]
    fn transformers_class_name_of_phimoe_points_to_the_registered_one() {
        assert!(crate::hf::arch::lookup("PhimoeForCausalLM").is_none());
        let near = crate::hf::nearest_architectures("PhimoeForCausalLM");
        assert_eq!(near.first(), Some(&"PhiMoEForCausalLM"));
    }
}
