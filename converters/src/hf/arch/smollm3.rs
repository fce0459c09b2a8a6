//! `SmolLM3ForCausalLM` (arch `smollm3`, `SmolLM3Model(LlamaModel)` in `conversion/llama.py`).
//!
//! Everything is Llama's: vocabulary path, q/k permutation, hparams (`vocab_size`, rope
//! dimensions) and the Llama-3 `rope_freqs` tensor; the NoPE layer list is not written.

use super::{llama, Arch, QkPermute, Rules, LLAMA_LIKE};
use crate::hf::tokenizer::VocabKind;

/// The SmolLM3 class.
pub const SMOLLM3: Arch = Arch {
    hf_names: &["SmolLM3ForCausalLM"],
    gguf: "smollm3",
    vocab: VocabKind::Llama,
    tensors: &[LLAMA_LIKE],
    filter: llama::filter,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        ..Rules::NONE
    },
    params: llama::params,
    extra: llama::rope_freqs,
};
