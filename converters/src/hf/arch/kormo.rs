//! `KORMoForCausalLM` (`Qwen2Model`, arch `qwen2`).
//!
//! Remote code (transformers has no config class for `model_type` "kormo", so the config is
//! read as written); the reference converts it with every rule of Qwen2
//! ([`super::qwen::QWEN2`]): the generic hparams and pooling, SentencePiece when there is a
//! `tokenizer.model`, else GPT-2 BPE.

use super::{qwen, Arch};

/// The KORMo class: Qwen2's rules under its own HF name, without a config class.
pub const KORMO: Arch = Arch {
    hf_names: &["KORMoForCausalLM"],
    model_types: &[],
    composites: &[],
    ..qwen::QWEN2
};
