//! `MaincoderForCausalLM` (arch `maincoder`, `MaincoderModel` in `conversion/maincoder.py`).
//!
//! Remote code (transformers has no config class for `model_type` "maincoder", so the
//! config is read as written): a Llama-layout decoder with per-head q/k norms and no q/k
//! permutation. The hparams are the generic block plus the rope dimension count, written
//! only when `head_dim` is given; the vocabulary is GPT-2 BPE.

use ggufkit::gguf::keys::rope;

use super::{keep, no_extra, Arch, Hooks, Rules};
use crate::hf::names::{Tensor, DECODER};
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabKind, VocabQuirks};
use crate::ConvertError;

/// The Maincoder class.
pub const MAINCODER: Arch = Arch {
    hf_names: &["MaincoderForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "maincoder",
    vocab: VocabKind::Gpt2,
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER, &[Tensor::AttnQNorm, Tensor::AttnKNorm]],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules::NONE,
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `MaincoderModel.set_gguf_parameters`: the generic block, then `head_dim` (when present
/// and not null) as the rope dimension count, after `general.file_type`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    if let Some(head_dim) = p.hp.find_u64(&["head_dim"])? {
        p.u32(rope::DIMENSION_COUNT, head_dim)?;
    }
    Ok(())
}
