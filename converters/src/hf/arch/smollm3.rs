//! `SmolLM3ForCausalLM` (arch `smollm3`, `SmolLM3Model(LlamaModel)` in `conversion/llama.py`).
//!
//! Everything is Llama's: vocabulary path, q/k permutation, hparams (`vocab_size`, rope
//! dimensions) and the Llama-3 `rope_freqs` tensor; the NoPE layer list is not written.

use super::{llama, Arch, HeadDim, Hooks, ModelType, QkPermute, Rules};
use crate::hf::names::DECODER;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};

/// The SmolLM3 class.
pub const SMOLLM3: Arch = Arch {
    hf_names: &["SmolLM3ForCausalLM"],
    model_types: &[ModelType {
        name: "smollm3",
        hf_classes: &["SmolLM3ForCausalLM"],
        defaults: defaults! {
            "vocab_size" => 128256,
            "hidden_size" => 2048,
            "intermediate_size" => 11008,
            "num_hidden_layers" => 36,
            "num_attention_heads" => 16,
            "num_key_value_heads" => 4,
            "max_position_embeddings" => 32768,
            "rms_norm_eps" => 1e-6,
            "rope_theta" => 2000000.0,
            "sliding_window" => serde_json::Value::Null,
        },
        head_dim: HeadDim::Keep,
        kv_heads_key: Some("num_key_value_heads"),
        prepare: None,
    }],
    composites: &[],
    gguf: "smollm3",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: llama::filter,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        ..Rules::NONE
    },
    params: llama::params,
    extra: llama::rope_freqs,
    hooks: Hooks::NONE,
};
