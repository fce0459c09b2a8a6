//! `Glm4ForCausalLM` (arch `glm4`, `Glm4Model` in `conversion/glm.py`).
//!
//! GLM-4-0414: fused `gate_up_proj` kept as `ffn_up`, four norms per block, q/k/v biases,
//! the generic hparams plus rotary dimensions `head_dim * partial_rotary_factor` (default
//! 0.5). The vocabulary is GPT-2 BPE with GLM's special tokens. M-RoPE checkpoints (whose
//! q/k rows need a NeoX regrouping) and multi-token-prediction layers are refused.

use ggufkit::gguf::keys::rope;
use serde_json::Value as Json;

use super::{keep, Arch, Extra, HeadDim, Hooks, ModelType, Rules};
use crate::hf::config::Hparams;
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The GLM-4 class.
pub const GLM4: Arch = Arch {
    hf_names: &["Glm4ForCausalLM"],
    model_types: &[ModelType {
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
    }],
    composites: &[],
    gguf: "glm4",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
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
    ]],
    tensor_overrides: &[(
        Tensor::FfnNorm,
        &["model.layers.{bid}.post_attention_layernorm"],
    )],
    filter: keep,
    rules: Rules::NONE,
    params,
    extra: refuse_unsupported,
    hooks: Hooks::NONE,
};

fn partial_rotary_factor(hp: &Hparams) -> f64 {
    hp.rope
        .get("partial_rotary_factor")
        .and_then(Json::as_f64)
        .unwrap_or(0.5)
}

fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    let hp = p.hp;
    let head_dim = match hp.find_u64(&["head_dim"])? {
        Some(d) => d,
        None => {
            let heads = hp.req_u64(&["num_attention_heads"])?;
            if heads == 0 {
                return Err(hp.missing(&["num_attention_heads"]));
            }
            hp.req_u64(&["hidden_size"])? / heads
        }
    };
    p.u32(
        rope::DIMENSION_COUNT,
        (head_dim as f64 * partial_rotary_factor(hp)) as u64,
    )
}

fn refuse_unsupported(hp: &Hparams) -> Result<Extra, ConvertError> {
    if hp.rope.contains_key("mrope_section") {
        return Err(ConvertError::UnsupportedFeature {
            arch: hp.arch.clone(),
            feature:
                "M-RoPE (rope mrope_section) needs the q/k NeoX regrouping, which is not supported"
                    .into(),
        });
    }
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
