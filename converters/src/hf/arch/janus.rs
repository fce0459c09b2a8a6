//! The text model of `JanusForConditionalGeneration` (Janus-Pro; arch `llama`,
//! `JanusProModel(LlamaModel)` in `conversion/januspro.py`).
//!
//! Llama's conversion of the composite's Llama `text_config` (`model.language_model.`), with
//! the image-understanding tower and aligner and the image-generation parts (the VQ model,
//! the generation embeddings, aligner and head) dropped by their prefixes.

use super::{llama, Arch, Hooks, QkPermute, Rules, TextType};
use crate::hf::names::DECODER;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};

/// The Janus class.
pub const JANUS: Arch = Arch {
    hf_names: &["JanusForConditionalGeneration"],
    model_types: &[],
    composites: &[("janus", TextType::Named("llama"))],
    gguf: "llama",
    vocab: VocabKind::Llama,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        permute_qk: QkPermute::WeightsAndBiases,
        ..Rules::NONE
    },
    params: llama::params,
    extra: llama::rope_freqs,
    hooks: Hooks::NONE,
};

/// The prefixes of the parts that are not the text model.
const NOT_TEXT: &[&str] = &[
    "model.vision_model.",
    "model.aligner.",
    "model.vqmodel.",
    "model.generation_embeddings.",
    "model.generation_aligner.",
    "model.generation_head.",
];

/// The text model's tensors, then Llama's filter.
fn filter(name: &str) -> Option<String> {
    if NOT_TEXT.iter().any(|p| name.starts_with(p)) {
        return None;
    }
    llama::filter(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_text_model_is_kept() {
        for name in [
            "model.aligner.fc1.weight",
            "model.vqmodel.encoder.conv_in.weight",
            "model.generation_embeddings.weight",
            "model.generation_aligner.fc1.bias",
            "model.generation_head.proj_out.weight",
            "model.vision_model.post_layernorm.weight",
        ] {
            assert_eq!(filter(name), None, "{name}");
        }
        assert_eq!(
            filter("model.language_model.norm.weight").as_deref(),
            Some("model.language_model.norm.weight")
        );
    }
}
