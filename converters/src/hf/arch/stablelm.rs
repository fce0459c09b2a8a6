//! `StableLmForCausalLM` (arch `stablelm`, `conversion/stablelm.py`; also registered for
//! `StableLMEpochForCausalLM` and the text model of StableLM-based LLaVA checkpoints,
//! `LlavaStableLMEpochForCausalLM`).
//!
//! Its own hparam list: partial rotary dimensions from the rope `partial_rotary_factor`,
//! `use_parallel_residual` (true when absent), LayerNorm epsilon. Optional q/k/v biases.
//! StableLM 2 12B's per-head q/k layer norms (`q_layernorm.norms.{h}`, `qk_layernorm`) are
//! refused: at the pinned commit llama.cpp's converter collects them but never writes them
//! (its stacking generator is returned, not run) and then fails with "Unprocessed norms".

use ggufkit::gguf::keys::{attention, llm};
use serde_json::Value as Json;

use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The StableLM class.
pub const STABLELM: Arch = Arch {
    hf_names: &[
        "StableLmForCausalLM",
        "StableLMEpochForCausalLM",
        "LlavaStableLMEpochForCausalLM",
    ],
    model_types: &[ModelType {
        name: "stablelm",
        hf_classes: &["StableLmForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 50304,
            "intermediate_size" => 6912,
            "hidden_size" => 2560,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 32,
            "max_position_embeddings" => 4096,
            "layer_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
            "partial_rotary_factor" => 0.25,
            "use_qkv_bias" => false,
            "qk_layernorm" => false,
            "use_parallel_residual" => false,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: None,
        prepare: None,
    }],
    composites: &[],
    gguf: "stablelm",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, &[Tensor::AttnQNorm, Tensor::AttnKNorm]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules {
        hook: Some(refuse_per_head_norms),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

fn refuse_per_head_norms(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name.contains("q_layernorm.norms") || name.contains("k_layernorm.norms") {
        return Err(ConvertError::UnsupportedFeature {
            arch: hp.arch.clone(),
            feature: format!(
                "per-head q/k layer norms (qk_layernorm, tensor {name}) cannot be converted: \
             llama.cpp's converter fails on them too (\"Unprocessed norms\")"
            ),
        });
    }
    Ok(Modified::Pass(name, expr))
}

fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    p.req_u32(llm::CONTEXT_LENGTH, &["max_position_embeddings"])?;
    let hidden = hp.req_u64(&["hidden_size"])?;
    p.u32(llm::EMBEDDING_LENGTH, hidden)?;
    let n = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, n)?;
    p.req_u32(llm::FEED_FORWARD_LENGTH, &["intermediate_size"])?;
    let pct = hp
        .rope
        .get("partial_rotary_factor")
        .and_then(Json::as_f64)
        .ok_or_else(|| hp.missing(&["partial_rotary_factor"]))?;
    p.partial_rope_dims(pct)?;
    p.req_u32(attention::HEAD_COUNT, &["num_attention_heads"])?;
    p.req_u32(attention::HEAD_COUNT_KV, &["num_key_value_heads"])?;
    p.parallel_residual()?;
    let eps = hp.req_f64(&["layer_norm_eps", "norm_eps"])?;
    p.f32(attention::LAYERNORM_EPS, eps);
    p.file_type();
    Ok(())
}
