//! The text half of `DotsOCRForCausalLM` (dots.ocr; `Qwen2Model`, arch `qwen2`).
//!
//! Remote code (transformers has no config class for `model_type` "dots_ocr", so the config
//! is read as written: the text hparams at its root beside `vision_config`); the reference
//! converts the text model with every rule of Qwen2 ([`super::qwen::QWEN2`]): the generic
//! hparams and pooling, SentencePiece when there is a `tokenizer.model`, else GPT-2 BPE. The
//! vision tower (`vision_tower.*`) is left out by the generic filter; its projector is a
//! separate `--mmproj` conversion.

use super::{qwen, Arch};

/// The dots.ocr class: Qwen2's rules under its own HF name, without a config class.
pub const DOTS_OCR: Arch = Arch {
    hf_names: &["DotsOCRForCausalLM"],
    model_types: &[],
    composites: &[],
    ..qwen::QWEN2
};
