//! `SeedOssForCausalLM` (arch `seed_oss`, `SeedOssModel` in `conversion/olmo.py`).
//!
//! The generic hparams and Llama's tensor names, except that the norm after attention is
//! `post_attention_norm` (there is no `ffn_norm`); q/k/v biases are optional.

use super::{keep, no_extra, Arch, HeadDim, Hooks, ModelType, Rules};
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The Seed-OSS class.
pub const SEED_OSS: Arch = Arch {
    hf_names: &["SeedOssForCausalLM"],
    model_types: &[ModelType {
        name: "seed_oss",
        hf_classes: &["SeedOssForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 155136,
            "hidden_size" => 4096,
            "intermediate_size" => 27648,
            "num_hidden_layers" => 64,
            "num_attention_heads" => 80,
            "num_key_value_heads" => 8,
            "max_position_embeddings" => 524288,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 10000.0,
            "head_dim" => 128,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "seed_oss",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, &[Tensor::AttnPostNorm]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules::NONE,
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()
}
