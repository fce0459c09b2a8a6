//! `SeedOssForCausalLM` (arch `seed_oss`, `SeedOssModel` in `conversion/olmo.py`).
//!
//! The generic hparams and Llama's tensor names, except that the norm after attention is
//! `post_attention_norm` (there is no `ffn_norm`); q/k/v biases are optional.

use super::{keep, no_extra, Arch, Rules, LLAMA_LIKE};
use crate::hf::params::Params;
use crate::hf::tokenizer::VocabKind;
use crate::ConvertError;

/// The Seed-OSS class.
pub const SEED_OSS: Arch = Arch {
    hf_names: &["SeedOssForCausalLM"],
    gguf: "seed_oss",
    vocab: VocabKind::Gpt2,
    tensors: &[LLAMA_LIKE, NORMS],
    filter: keep,
    rules: Rules::NONE,
    params,
    extra: no_extra,
};

const NORMS: &[(&str, &str)] = &[(
    "model.layers.{bid}.post_attention_layernorm",
    "blk.{bid}.post_attention_norm",
)];

fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()
}
