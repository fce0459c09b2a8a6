//! `CogVLMForCausalLM`'s text model (arch `cogvlm`, `CogVLMModel(LlamaModel)` in
//! `conversion/cogvlm.py`; a remote-code class read from config.json).
//!
//! Llama's conversion under its own GGUF architecture: the language expert's fused
//! `language_expert_query_key_value` and `language_expert_dense` are the attention, the
//! `language_mlp` the FFN. The visual experts (`vision_expert_*`, `vision_mlp`) and the
//! tower (`model.vision.`) fall to the shared multimodal filter, as in the reference. Like
//! every `LlamaModel`, the conversion needs the key/value head count in the config
//! (`num_key_value_heads` or `n_kv_heads`) even though no q/k is permuted: the hub configs
//! have none, and the reference fails on them; so does this.

use super::{llama, Arch, Hooks, QkPermute, Rules};
use crate::hf::names::Tensor;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};

/// The CogVLM class.
pub const COGVLM: Arch = Arch {
    hf_names: &["CogVLMForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "cogvlm",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[&[
        Tensor::TokenEmbd,
        Tensor::OutputNorm,
        Tensor::Output,
        Tensor::AttnNorm,
        Tensor::AttnQkv,
        Tensor::AttnOut,
        Tensor::FfnNorm,
        Tensor::FfnGate,
        Tensor::FfnDown,
        Tensor::FfnUp,
    ]],
    tensor_overrides: &[],
    filter: llama::filter,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        ..Rules::NONE
    },
    params: llama::remote_params,
    // The architecture has no `rope_freqs` tensor: a Llama-3 rope is refused as the
    // reference fails to name the one it makes.
    extra: llama::no_rope_freqs,
    hooks: Hooks::NONE,
};
