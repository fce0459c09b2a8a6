//! `OrionForCausalLM` (arch `orion`, `OrionModel` in `conversion/orion.py`).
//!
//! Remote code (no transformers config class: the config is read as written). A Llama
//! layout whose norms are LayerNorms with biases under the RMSNorm names, no q/k
//! permutation, and a SentencePiece vocabulary. The class writes its own hparam block,
//! not the generic one: file type and tensor layout first, the context length from the
//! first present of `max_sequence_length`, `max_position_embeddings`, `model_max_length`
//! (refused when none is), and `rms_norm_eps` as the LayerNorm epsilon; no rope keys.

use ggufkit::gguf::keys::{attention, llm};

use super::{keep, no_extra, Arch, Hooks, Rules};
use crate::hf::names::DECODER;
use crate::hf::params::Params;
use crate::hf::tokenizer::{VocabBuild, VocabKind, VocabOutcome, VocabQuirks};
use crate::ConvertError;

/// The Orion class.
pub const ORION: Arch = Arch {
    hf_names: &["OrionForCausalLM"],
    model_types: &[],
    composites: &[],
    gguf: "orion",
    vocab: VocabKind::Own(set_vocab),
    vocab_quirks: VocabQuirks::NONE,
    tensors: &[DECODER],
    tensor_overrides: &[],
    filter: keep,
    rules: Rules::NONE,
    params,
    extra: no_extra,
    hooks: Hooks::NONE,
};

/// The context-length keys, the first present one winning (even when another follows).
const CONTEXT_KEYS: &[&str] = &[
    "max_sequence_length",
    "max_position_embeddings",
    "model_max_length",
];

/// `OrionModel.set_vocab`: SentencePiece, required.
fn set_vocab(b: &mut VocabBuild) -> Result<VocabOutcome, ConvertError> {
    let model = b.require_spm_model("Orion's vocabulary is SentencePiece")?;
    Ok((b.sentencepiece(model)?, None))
}

/// `OrionModel.set_gguf_parameters`.
fn params(p: &mut Params) -> Result<(), ConvertError> {
    let hp = p.hp;
    let heads = hp.req_u64(&["num_attention_heads"])?;
    let kv_heads = match hp.find(&["num_key_value_heads"]) {
        None => heads,
        Some(_) => hp.req_u64(&["num_key_value_heads"])?,
    };
    let ctx = hp.req_u64(CONTEXT_KEYS)?;
    p.file_type();
    p.string(llm::TENSOR_DATA_LAYOUT, "Meta AI original pth");
    p.u32(llm::CONTEXT_LENGTH, ctx)?;
    p.req_u32(llm::EMBEDDING_LENGTH, &["hidden_size"])?;
    let blocks = p.block_count()?;
    p.u32(llm::BLOCK_COUNT, blocks)?;
    p.req_u32(llm::FEED_FORWARD_LENGTH, &["intermediate_size"])?;
    p.u32(attention::HEAD_COUNT, heads)?;
    p.u32(attention::HEAD_COUNT_KV, kv_heads)?;
    let eps = hp.req_f64(&["rms_norm_eps"])?;
    p.f32(attention::LAYERNORM_EPS, eps);
    Ok(())
}
