//! `DreamModel` (arch `dream`, `DreamModel` in `conversion/dream.py`): Dream's
//! masked-diffusion language model (Dream-org's remote code).
//!
//! Qwen2's layout (q/k/v biases) converted by the base class: no q/k permutation, the
//! generic hparams, then non-causal attention and the config's `mask_token_id` when it has
//! one. The vocabulary is SentencePiece when `tokenizer.model` exists, else GPT-2 BPE over
//! the class's own `get_vocab_base` (added tokens kept as written, typed by
//! `added_tokens_decoder` alone).

use ggufkit::gguf::keys::{attention, tokenizer as tok};
use ggufkit::gguf::Value;

use super::{Arch, Hooks, Rules};
use crate::hf::names::DECODER;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// Dream.
pub const DREAM: Arch = Arch {
    hf_names: &["DreamModel"],
    // Remote code only: AutoConfig cannot type the config, which is read as written.
    model_types: &[],
    composites: &[],
    gguf: "dream",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules::NONE,
    params,
    extra: super::no_extra,
    hooks: Hooks::NONE,
};

/// `DreamModel.set_vocab`: SentencePiece, else (no `tokenizer.model`) GPT-2 BPE.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    match b.spm_model()? {
        Some(model) => Ok((b.sentencepiece(model)?, None)),
        None => b.gpt2_added_as_decoded(),
    }
}

/// `DreamModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.pooling()?;
    p.bool(attention::CAUSAL, false);
    mask_token_id(p)
}

/// The config's `mask_token_id`, when it has a non-null one (Dream, RND1).
pub(super) fn mask_token_id(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    match hp.get("mask_token_id") {
        Some(v) if !v.is_null() => {
            let id = hp.req_u64(&["mask_token_id"])?;
            let id = u32::try_from(id).map_err(|_| {
                ConvertError::out_of_range(
                    &hp.path,
                    "mask_token_id",
                    id,
                    "a UINT32 holds at most 4294967295",
                )
            })?;
            p.md.set(tok::MASK_ID, Value::U32(id));
            Ok(())
        }
        _ => Ok(()),
    }
}
