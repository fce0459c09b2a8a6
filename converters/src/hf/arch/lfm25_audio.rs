//! LFM2.5-Audio's detokenizer (`Lfm25AudioTokenizer`; arch `lfm2`): an LFM2 backbone
//! ([`super::lfm2`]) that turns audio codes into spectrogram frames.
//!
//! The checkpoint holds the backbone under `lfm.` (the text model's `model.`), the code
//! embedding `emb.emb` and the ISTFT window (both dropped: the runtime has its own) and
//! the output projection `lin`, written as `dense_2` (`dense_2_out`). Beyond LFM2's keys it
//! writes the sliding window and the output width (`output_size` as
//! `embedding_length_out`); it has no vocabulary (`tokenizer.ggml.model` is "none").

use ggufkit::gguf::keys::{attention, layered};

use super::{lfm2, no_extra, Arch, Hooks, Rules};
use crate::hf::names::Tensor;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// `Lfm25AudioTokenizer` (the reference's `LFM25AudioTokenizer`, an LFM2 subclass).
pub const LFM25_AUDIO: Arch = Arch {
    hf_names: &["Lfm25AudioTokenizer"],
    // The `lfm2` config class (its defaults) is LFM2's.
    model_types: &[],
    composites: &[],
    gguf: "lfm2",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[lfm2::LFM2_TENSORS, &[Tensor::Dense2Out]],
    tensor_overrides: &[],
    filter,
    rules: Rules {
        hook: Some(lfm2::hook),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `_set_vocab_none`: codes, not tokens.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    Ok(b.no_vocabulary())
}

/// The ISTFT window and the code embedding go; `lin` (the output projection) is
/// `dense_2_out` (every `lin` of a name that starts with it, as the reference's `replace`);
/// then LFM2's filter.
fn filter(name: &str) -> Option<String> {
    if name == "istft.window" || name.starts_with("emb.emb") {
        return None;
    }
    if name.starts_with("lin") {
        return lfm2::filter(&name.replace("lin", "dense_2_out"));
    }
    lfm2::filter(name)
}

/// LFM2's keys, then the sliding window and the output width.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    lfm2::params(p)?;
    p.req_u32(attention::SLIDING_WINDOW, &["sliding_window"])?;
    p.req_u32(layered::EMBEDDING_LENGTH_OUT, &["output_size"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decoder_keeps_its_backbone_and_projection_only() {
        assert_eq!(filter("istft.window"), None);
        assert_eq!(filter("emb.emb.weight"), None);
        assert_eq!(filter("lin.bias").as_deref(), Some("dense_2_out.bias"));
        assert_eq!(
            filter("lfm.layers.0.operator_norm.weight").as_deref(),
            Some("model.layers.0.operator_norm.weight")
        );
    }
}
