//! `ArceeForCausalLM` (arch `arcee`, `ArceeModel(LlamaModel)` in `conversion/llama.py`).
//!
//! Llama's conversion (ReLU² MLP: `up_proj` and `down_proj` only) plus the
//! sentence-transformers pooling type when the directory has one.

use super::{llama, Arch, HeadDim, Hooks, ModelType, QkPermute, Rules};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The Arcee class.
pub const ARCEE: Arch = Arch {
    hf_names: &["ArceeForCausalLM"],
    model_types: &[ModelType {
        name: "arcee",
        hf_classes: &["ArceeForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 32000,
            "hidden_size" => 2560,
            "intermediate_size" => 18432,
            "num_hidden_layers" => 32,
            "num_attention_heads" => 32,
            "max_position_embeddings" => 4096,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "arcee",
    vocab: VocabKind::Llama,
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
        Tensor::FfnUp,
        Tensor::FfnDown,
    ]],
    tensor_overrides: &[],
    filter: llama::filter,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        ..Rules::NONE
    },
    params,
    extra: llama::rope_freqs,
    hooks: Hooks::NONE,
};

fn params(p: &mut Params) -> Result<(), ConvertError> {
    llama::params(p)?;
    p.pooling()
}
