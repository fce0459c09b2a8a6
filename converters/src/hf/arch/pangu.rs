//! `PanguEmbeddedForCausalLM` (arch `pangu-embedded`, `PanguEmbeddedModel` in
//! `conversion/pangu.py`).
//!
//! Remote code (no transformers config class: the config is read as written). A Llama
//! layout without the q/k permutation; the hparams are the generic block, `vocab_size`,
//! the rope dimensions (`head_dim`, else `hidden_size / num_attention_heads`) and, when the
//! config has no `head_dim`, that size as the key and value lengths. A tied model's
//! `lm_head.weight` is dropped. The vocabulary is SentencePiece, then `add_space_prefix`
//! from tokenizer_config.json's `add_prefix_space` when it has the key.

use ggufkit::gguf::keys::{attention, llm, rope};

use super::deepseek2::truthy;
use super::{llama, no_extra, Arch, Hooks, Modified, Rules};
use crate::hf::config::Hparams;
use crate::hf::expr::Expr;
use crate::hf::names::DECODER;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The openPangu-Embedded class.
pub const PANGU_EMBEDDED: Arch = Arch {
    hf_names: &["PanguEmbeddedForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "pangu-embedded",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: super::keep,
    rules: Rules {
        hook: Some(drop_tied_head),
        ..Rules::NONE
    },
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// `PanguEmbeddedModel.set_vocab`: SentencePiece (required), then the space prefix flag.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let model = b.require_spm_model("openPangu-Embedded's vocabulary is SentencePiece")?;
    let path = b.sentencepiece(model)?;
    b.space_prefix_from_config();
    Ok((path, None))
}

/// `PanguEmbeddedModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    p.generic()?;
    p.req_u32(llm::VOCAB_SIZE, &["vocab_size"])?;
    let rope_dim = llama::rope_dim(p.hp)?;
    p.u32(rope::DIMENSION_COUNT, rope_dim)?;
    if p.hp.find_u64(&["head_dim"])?.is_none() {
        p.u32(attention::KEY_LENGTH, rope_dim)?;
        p.u32(attention::VALUE_LENGTH, rope_dim)?;
    }
    Ok(())
}

/// `PanguEmbeddedModel.modify_tensors`: `lm_head.weight` is not written when
/// `tie_word_embeddings` is true.
fn drop_tied_head(hp: &Hparams, name: String, expr: Expr) -> Result<Modified, ConvertError> {
    if name == "lm_head.weight" && truthy(hp.find(&["tie_word_embeddings"])) {
        return Ok(Modified::Drop);
    }
    Ok(Modified::Pass(name, expr))
}
