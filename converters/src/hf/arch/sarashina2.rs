//! `Sarashina2VisionForCausalLM`'s text half (arch `llama`, `Sarashina2VLTextModel(LlamaModel)`
//! in `conversion/sarashina2.py`; a remote-code class read from config.json as written).
//!
//! Llama's conversion of the Llama `text_config`, which the reference routes on the root
//! class whatever `text_config.architectures` says. The text model is stored under `llm.`
//! (the prefix is stripped); a top-level `norm.` belongs to the vision side and is dropped,
//! as is the vision tower (`visual.`) by the shared multimodal filter. As for every
//! `LlamaModel` read from config.json as written, the key/value head count is required.

use super::{llama, Arch, Hooks, QkPermute, Rules};
use crate::hf::names::DECODER;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};

/// The Sarashina2-Vision class.
pub const SARASHINA2: Arch = Arch {
    hf_names: &["Sarashina2VisionForCausalLM"],
    model_types: &[],
    composites: &[],
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
    params: llama::remote_params,
    extra: llama::rope_freqs,
    hooks: Hooks {
        adjust: Some(llama::require_head_counts),
        routes_on_root: true,
        ..Hooks::NONE
    },
};

/// `llm.` stripped (once, at the start); a name starting `norm.` dropped; then Llama's.
fn filter(name: &str) -> Option<String> {
    if let Some(rest) = name.strip_prefix("llm.") {
        return llama::filter(rest);
    }
    if name.starts_with("norm.") {
        return None;
    }
    llama::filter(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_model_is_under_llm() {
        assert_eq!(
            filter("llm.model.layers.0.self_attn.q_proj.weight").as_deref(),
            Some("model.layers.0.self_attn.q_proj.weight")
        );
        assert_eq!(
            filter("llm.lm_head.weight").as_deref(),
            Some("lm_head.weight")
        );
        // only the leading prefix is stripped, and only a leading `norm.` is dropped
        assert_eq!(filter("llm.llm.x").as_deref(), Some("llm.x"));
        assert_eq!(filter("norm.weight"), None);
        assert_eq!(filter("llm.norm.weight").as_deref(), Some("norm.weight"));
        assert_eq!(
            filter("model.norm.weight").as_deref(),
            Some("model.norm.weight")
        );
    }
}
