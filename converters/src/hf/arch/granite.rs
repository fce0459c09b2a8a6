//! Granite and Granite-MoE (`conversion/granite.py`, both `LlamaModel` subclasses).
//!
//! Granite ignores `head_dim` (the rope dimensions are `hidden_size / num_attention_heads`,
//! no key/value lengths) and writes its four multipliers as scales when they are set and
//! non-zero. Granite-MoE splits the fused `input_linear` experts (and the shared expert's)
//! into gate and up halves and adds the shared FFN size.

use ggufkit::gguf::keys::{attention, llm};

use super::{llama, Arch, HeadDim, Hooks, ModelType, Modified, QkPermute, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::{Tensor, DECODER, MOE_DECODER};
use crate::hf::params::Params;
pub(super) use crate::hf::tokenizer::json_truthy as truthy;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// `GraniteForCausalLM` (arch `granite`).
pub const GRANITE: Arch = Arch {
    hf_names: &["GraniteForCausalLM"],
    model_types: &[ModelType {
        name: "granite",
        hf_classes: &["GraniteForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 32000,
            "hidden_size" => 4096,
            "intermediate_size" => 11008,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "max_position_embeddings" => 2048,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 10000.0,
            "embedding_multiplier" => 1.0,
            "logits_scaling" => 1.0,
            "residual_multiplier" => 1.0,
            "attention_multiplier" => 1.0,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "granite",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        ..Rules::NONE
    },
    params: granite_params,
    extra: llama::no_rope_freqs,
    hooks: Hooks::NONE,
};

/// `GraniteMoeForCausalLM`, `GraniteMoeSharedForCausalLM` (arch `granitemoe`).
pub const GRANITE_MOE: Arch = Arch {
    hf_names: &["GraniteMoeForCausalLM", "GraniteMoeSharedForCausalLM"],
    model_types: &[
        ModelType {
            name: "granitemoe",
            hf_classes: &["GraniteMoeForCausalLM"],
            defaults: defaults! {
                "vocab_size" => 32000,
                "hidden_size" => 4096,
                "intermediate_size" => 11008,
                "num_hidden_layers" => 32,
                "num_attention_heads" => 32,
                "max_position_embeddings" => 2048,
                "rms_norm_eps" => 1e-6,
                "rope_theta" => 10000.0,
                "embedding_multiplier" => 1.0,
                "logits_scaling" => 1.0,
                "residual_multiplier" => 1.0,
                "attention_multiplier" => 1.0,
                "num_local_experts" => 8,
                "num_experts_per_tok" => 2,
            },
            head_dim: HeadDim::Keep,
            kv_heads_key: Some("num_key_value_heads"),
            prepare: None,
        },
        ModelType {
            name: "granitemoeshared",
            hf_classes: &["GraniteMoeSharedForCausalLM"],
            defaults: defaults! {
                "vocab_size" => 32000,
                "hidden_size" => 4096,
                "intermediate_size" => 11008,
                "num_hidden_layers" => 32,
                "num_attention_heads" => 32,
                "max_position_embeddings" => 2048,
                "rms_norm_eps" => 1e-6,
                "rope_theta" => 10000.0,
                "embedding_multiplier" => 1.0,
                "logits_scaling" => 1.0,
                "residual_multiplier" => 1.0,
                "attention_multiplier" => 1.0,
                "num_local_experts" => 8,
                "num_experts_per_tok" => 2,
                "shared_intermediate_size" => 0,
            },
            head_dim: HeadDim::Keep,
            kv_heads_key: Some("num_key_value_heads"),
            prepare: None,
        },
    ],
    composites: &[],
    gguf: "granitemoe",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[
        MOE_DECODER,
        &[
            Tensor::FfnGateShexp,
            Tensor::FfnUpShexp,
            Tensor::FfnDownShexp,
        ],
    ],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        hook: Some(moe_hook),
        ..Rules::NONE
    },
    params: moe_params,
    extra: llama::no_rope_freqs,
    hooks: Hooks::NONE,
};

/// `GraniteModel.filter_tensors`: the vision parts of Granite-Vision checkpoints go, then
/// Llama's filter.
pub(super) fn filter(name: &str) -> Option<String> {
    if name.starts_with("encoder.")
        || name.contains("image_")
        || name.contains("layerwise_projectors")
        || name.contains("spatial_projectors")
    {
        return None;
    }
    llama::filter(name)
}

/// `GraniteModel.set_gguf_parameters`.
pub(super) fn granite_params(p: &mut Params) -> Result<(), ConvertError> {
    if p.hp.get("spatial_target_layers").is_some_and(truthy)
        || p.hp.get("deepstack_layer_map").is_some_and(truthy)
    {
        return Err(ConvertError::UnsupportedFeature {
            arch: p.hp.arch.clone(),
            feature: "Granite-Vision deepstack layers (spatial_target_layers / deepstack_layer_map) are not supported".into(),
        });
    }
    // `hparams.pop("head_dim")`: neither the key/value lengths nor the rope dimensions use it.
    let mut hp: Hparams = p.hp.clone();
    hp.map.remove("head_dim");
    let mut q = p.with_hparams(&hp);
    llama::params(&mut q)?;
    for (key, suffix) in [
        ("attention_multiplier", attention::SCALE),
        ("embedding_multiplier", llm::EMBEDDING_SCALE),
        ("residual_multiplier", llm::RESIDUAL_SCALE),
        ("logits_scaling", llm::LOGIT_SCALE),
    ] {
        if let Some(v) = hp.get(key).filter(|v| truthy(v)) {
            let f = v
                .as_f64()
                .ok_or_else(|| ConvertError::wrong_type(&hp.path, key, "a number", v))?;
            q.f32(suffix, f);
        }
    }
    Ok(())
}

pub(super) fn moe_params(p: &mut Params) -> Result<(), ConvertError> {
    granite_params(p)?;
    if let Some(v) = p.hp.get("shared_intermediate_size").filter(|v| truthy(v)) {
        let v = v.clone();
        p.u32_or_list(llm::EXPERT_SHARED_FEED_FORWARD_LENGTH, &v)?;
    }
    Ok(())
}

/// Splits `[.., 2 * n_ff, n_embd]` into its gate and up halves (`split(n_ff, dim=-2)`).
pub(super) fn split_gate_up(
    name: &str,
    expr: Expr,
    n_ff: u64,
) -> Result<(Expr, Expr), ConvertError> {
    let s = expr.shape().to_vec();
    if s.len() < 2 || s[s.len() - 2] != n_ff.saturating_mul(2) {
        return Err(ConvertError::Tensor {
            name: name.to_string(),
            problem: format!("merged FFN tensor of shape {s:?} is not 2 * {n_ff} rows"),
        });
    }
    let axis = s.len() - 2;
    let gate = expr.clone().narrow(name, axis, 0, n_ff)?;
    let up = expr.narrow(name, axis, n_ff, n_ff)?;
    Ok((gate, up))
}

/// `GraniteMoeModel.modify_tensors`.
fn moe_hook(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    let bid = crate::hf::names::block_id(&name);
    let blk = |base: &str| format!("blk.{}.{base}.weight", bid.unwrap_or(0));
    if name.ends_with("block_sparse_moe.input_linear.weight") {
        let n_ff = hp.req_u64(&["intermediate_size"])?;
        let (gate, up) = split_gate_up(&name, expr, n_ff)?;
        return Ok(Modified::Out(vec![
            (blk("ffn_gate_exps"), gate),
            (blk("ffn_up_exps"), up),
        ]));
    }
    let has_experts = hp.get("num_local_experts").is_some_and(truthy);
    if name.ends_with("shared_mlp.input_linear.weight") {
        let n_ff = hp.req_u64(&["shared_intermediate_size"])?;
        if !has_experts {
            return Err(ConvertError::UnsupportedFeature {
                arch: hp.arch.clone(),
                feature: "a shared MLP without experts (dense Granite-MoE layers) is not supported"
                    .into(),
            });
        }
        let (gate, up) = split_gate_up(&name, expr, n_ff)?;
        return Ok(Modified::Out(vec![
            (blk("ffn_gate_shexp"), gate),
            (blk("ffn_up_shexp"), up),
        ]));
    }
    if !has_experts && name.ends_with("shared_mlp.output_linear.weight") {
        return Err(ConvertError::UnsupportedFeature {
            arch: hp.arch.clone(),
            feature: "a shared MLP without experts (dense Granite-MoE layers) is not supported"
                .into(),
        });
    }
    Ok(Modified::Pass(name, expr))
}
