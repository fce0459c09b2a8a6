//! `InternLM3ForCausalLM` (arch `llama`, `InternLM3Model` in `conversion/internlm.py`;
//! transformers 5 has its config class natively).
//!
//! A Llama layout converted by its own class: Llama's q/k permutation (weights and
//! biases) and hparams (`vocab_size`, rope dimensions), but no Llama-3 `rope_freqs` tensor,
//! vision tensors dropped, and its own SentencePiece vocabulary path.

use super::{llama, no_extra, Arch, HeadDim, ModelType, QkPermute, Rules};
use crate::hf::names::DECODER;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};

/// The InternLM3 class.
pub const INTERNLM3: Arch = Arch {
    hf_names: &["InternLM3ForCausalLM"],
    model_types: &[ModelType {
        name: "internlm3",
        hf_classes: &["InternLM3ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 128512,
            "hidden_size" => 4096,
            "intermediate_size" => 10240,
            "num_hidden_layers" => 48,
            "num_attention_heads" => 32,
            "num_key_value_heads" => 2,
            "max_position_embeddings" => 32768,
            "rms_norm_eps" => 1e-5,
            "rope_theta" => 10000.0,
            "head_dim" => 128,
        },
        head_dim: HeadDim::FillWhenNull,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "llama",
    vocab: VocabKind::InternLm3,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        ..Rules::NONE
    },
    params: llama::params,
    extra: no_extra,
};

/// `InternLM3Model.filter_tensors`: no vision tensors.
fn filter(name: &str) -> Option<String> {
    (!name.starts_with("mlp") && !name.starts_with("vision_model")).then(|| name.to_string())
}
